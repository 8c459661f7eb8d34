"""Issue 12 item 4: embeddings and reduced files carry a checksum of their vectors; readers verify it.

A flipped bit, a wrong row count or NaN/inf vectors is a ContractError naming the file (and the text_id
where there is one), never a bare IndexError or a scikit-learn message.
"""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb import io
from tecb.cluster import algorithms as cluster
from tecb.embed import encode as embed


@pytest.fixture
def vectors():
    return np.random.default_rng(0).normal(size=(20, 8)).astype(np.float32)


@pytest.fixture
def emb_file(tmp_path, vectors):
    path = tmp_path / "emb.parquet"
    embed.write_embeddings(path, [(0, vectors[:10]), (10, vectors[10:])], 20, {"model": "m"})
    return path


@pytest.fixture
def red_file(tmp_path, vectors):
    path = tmp_path / "red.parquet"
    parts = [(0, np.arange(12), vectors[:12, :2]), (1, np.arange(5, 20), vectors[5:, 2:4])]
    io.write_table(io.reduced_table(parts, {"reduction": "pca"}), path)
    return path


def _meta(path):
    return json.loads(pq.read_schema(path).metadata[b"tecb"])


def test_checksums_are_recorded_and_verified(emb_file, red_file, vectors):
    assert _meta(emb_file)["vectors_sha256"] == io.vectors_sha256(vectors)
    assert _meta(red_file)["vectors_sha256"] and _meta(red_file)["ids_sha256"]
    matrix, meta = io.read_embeddings(emb_file)
    assert np.array_equal(matrix, vectors) and meta["n_texts"] == 20
    reduced = io.read_reduced(red_file)
    assert np.array_equal(reduced[1][1], vectors[5:, 2:4])


def _flip(path, offset, bit=3):
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("which", ["emb", "red"])
def test_a_flipped_bit_in_a_vector_is_an_error_naming_the_file(which, emb_file, red_file, vectors):
    path, value, reader = (
        (emb_file, vectors[7], io.read_embeddings) if which == "emb" else (red_file, vectors[3, :2], io.read_reduced)
    )
    offset = path.read_bytes().find(value.tobytes())
    assert offset > 0  # random floats do not compress: the value is stored as is
    _flip(path, offset + 2)
    with pytest.raises(io.ContractError, match=f"{path}: .* checksum .* corrupt"):
        reader(path)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["emb", "red"])
def test_any_flipped_bit_gives_the_right_vectors_or_an_error_naming_the_file(which, emb_file, red_file):
    """Every byte of the file, one bit each: never silently different numbers, never another exception type."""
    path, reader = (emb_file, io.read_embeddings) if which == "emb" else (red_file, io.read_reduced)
    original = path.read_bytes()
    good = reader(path)
    wrong, errors = [], 0
    for offset in range(len(original)):
        data = bytearray(original)
        data[offset] ^= 1 << (offset % 8)
        path.write_bytes(bytes(data))
        try:
            got = reader(path)
        except io.ContractError as exc:
            assert str(exc).startswith(f"{path}: "), exc
            errors += 1
            continue
        same = (
            np.array_equal(got[0], good[0])
            if which == "emb"
            else got.keys() == good.keys()
            and all(np.array_equal(got[s][1], good[s][1]) and np.array_equal(got[s][0], good[s][0]) for s in good)
        )
        if not same:
            wrong.append(offset)
    assert not wrong, f"bit flips at {wrong[:10]} gave different vectors without an error"
    assert errors > len(original) // 3


def test_nan_vectors_are_an_error_naming_file_and_text_id(tmp_path, vectors):
    vectors = vectors.copy()
    vectors[13, 2] = np.nan
    path = tmp_path / "nan.parquet"
    schema = io.embedding_schema(8, {"model": "m"})  # hand-made file, no checksum
    pq.write_table(pa.Table.from_batches([io.embedding_batch(schema, 0, vectors)]), path)
    with pytest.raises(io.ContractError, match=f"{path}: 1 of 20 embedding vectors contain NaN .*text_id 13"):
        io.read_embeddings(path)
    with pytest.raises(ValueError, match=r"nan2.parquet: the model gave NaN/inf vectors .* first text_id 13"):
        embed.write_embeddings(tmp_path / "nan2.parquet", [(0, vectors)], 20, {})
    assert not (tmp_path / "nan2.parquet").exists()


def test_inf_reduced_coordinates_are_refused_naming_file_split_and_text_id(tmp_path, vectors):
    coords = vectors[:6, :2].copy()
    coords[4, 1] = np.inf
    out = tmp_path / "reduced" / "umap.parquet"
    with pytest.raises(io.ContractError, match=f"^{out}: 1 reduced coordinates .*split 3, text_id 14"):
        io.reduced_table([(3, np.arange(10, 16), coords)], {}, path=out)
    with pytest.raises(io.ContractError, match="^1 reduced coordinates .*split 3, text_id 14"):
        io.reduced_table([(3, np.arange(10, 16), coords)], {})  # no file given: the message says so by omission
    # a hand-made reduced file with inf is caught by the reader
    path = tmp_path / "red.parquet"
    table = pa.table(
        {
            "split": pa.array(np.full(6, 3, np.int16)),
            "text_id": pa.array(np.arange(10, 16, dtype=np.int32)),
            "x": pa.FixedSizeListArray.from_arrays(pa.array(coords.reshape(-1)), 2),
        }
    )
    pq.write_table(table, path)
    with pytest.raises(io.ContractError, match=f"{path}: .*split 3, text_id 14"):
        io.read_reduced(path)


def test_too_few_rows_is_an_error_naming_file_and_text_id(tmp_path, vectors):
    path = tmp_path / "short.parquet"
    schema = io.embedding_schema(8, {"model": "m"})
    pq.write_table(pa.Table.from_batches([io.embedding_batch(schema, 0, vectors[:15])]), path)
    with pytest.raises(io.ContractError, match=f"{path}: no vector for text_id 15"):
        io.read_embeddings(path, text_ids=[0, 3, 15, 19])
    # the metadata's n_texts disagrees with the rows
    meta_path = tmp_path / "meta.parquet"
    schema = io.embedding_schema(8, {"n_texts": 20})
    pq.write_table(pa.Table.from_batches([io.embedding_batch(schema, 0, vectors[:15])]), meta_path)
    with pytest.raises(io.ContractError, match=f"{meta_path}: 15 vectors but the file records n_texts=20"):
        io.read_embeddings(meta_path)


def test_clustering_on_a_short_embeddings_file_names_the_file(tmp_path, vectors):
    """The cluster step reads the embeddings for a dataset with more texts than rows: no bare IndexError."""
    splits_path = tmp_path / "splits.parquet"
    io.write_dataset(
        [f"t{i}" for i in range(25)],
        [(list(range(25)), ["a", "b"] * 12 + ["a"])],
        tmp_path / "texts.parquet",
        splits_path,
        "Demo",
    )
    emb = tmp_path / "emb.parquet"
    embed.write_embeddings(emb, [(0, vectors)], 20, {})
    with pytest.raises(io.ContractError, match=f"{emb}: no vector for text_id 20"):
        cluster.load_points(splits_path, embeddings_path=emb)


def test_reduced_rows_not_matching_the_split_name_the_file(tmp_path, vectors):
    splits_path = tmp_path / "splits.parquet"
    io.write_dataset(
        [f"t{i}" for i in range(20)],
        [(list(range(20)), ["a", "b"] * 10)],
        tmp_path / "texts.parquet",
        splits_path,
        "Demo",
    )
    red = tmp_path / "red.parquet"
    io.write_table(io.reduced_table([(0, np.arange(18), vectors[:18, :2])], {}), red)
    with pytest.raises(ValueError, match=f"{red}: split 0 .*18 rows for the split's 20 texts"):
        cluster.load_points(splits_path, reduced_path=red)


def test_reductions_name_their_output_in_the_nan_message():
    """tecb.cluster.reduce.run_reduction (what a reduce job and a batch run) passes the file it writes to
    io.reduced_table (the message names it)."""
    import inspect

    from tecb.cluster.reduce import run_reduction

    assert 'io.reduced_table(parts, {"reduction": reduction, **spec, "seed": seed}, path=out)' in inspect.getsource(
        run_reduction
    )


# --- leftovers of killed jobs (issue 12 item 7) ---------------------------------------------------------------


def _age(path, hours):
    import os
    import time

    then = time.time() - hours * 3600
    os.utime(path, (then, then))


def test_remove_orphans_removes_only_old_temporaries(tmp_path):
    folder = tmp_path / "results" / "embeddings" / "m"
    folder.mkdir(parents=True)
    old = folder / ".D.parquet.ab12cd34.tmp"
    fresh = folder / ".E.parquet.zz99yy88.tmp"
    old_dir = tmp_path / "results" / "checkpoints" / ".seed42.k3j4h5g6.tmp"
    old_dir.mkdir(parents=True)
    (old_dir / "model.safetensors").write_bytes(b"x")
    done = folder / "D.parquet"
    for p in (old, fresh, done):
        p.write_bytes(b"x")
    for p in (old, old_dir, done):
        _age(p, 3)
    removed = io.remove_orphans([tmp_path / "results"], min_age_seconds=7200)
    assert sorted(removed) == sorted([old, old_dir])
    assert not old.exists() and not old_dir.exists()
    assert fresh.exists() and done.exists()  # a running job's temporary and a finished output stay


def test_scratch_dir_is_a_temporary_that_remove_orphans_cleans(tmp_path):
    target = tmp_path / "checkpoints" / "seed42"
    with io.scratch_dir(target) as scratch:
        assert io.TEMP_NAME.match(scratch.name) and scratch.parent == target.parent
        (scratch / "weights.bin").write_bytes(b"x")
        _age(scratch, 3)
        assert io.remove_orphans([tmp_path]) == [scratch]  # what a killed job leaves is found
    assert not scratch.exists()
    with pytest.raises(RuntimeError):
        with io.scratch_dir(target) as scratch:
            raise RuntimeError("killed")
    assert not scratch.exists() and list(target.parent.iterdir()) == []
