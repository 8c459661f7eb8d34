import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb import io


def test_write_dataset_round_trip(tmp_path):
    texts = ["a", "b", "c"]
    splits = [([0, 1, 2], ["x", "y", "x"]), ([2, 0], ["x", "y"])]
    io.write_dataset(texts, splits, tmp_path / "t.parquet", tmp_path / "s.parquet", "Demo")
    t, s = io.read_dataset(tmp_path / "t.parquet", tmp_path / "s.parquet")
    assert t.column("text").to_pylist() == texts
    got = [(int(k), ids.tolist(), labels.tolist()) for k, ids, labels in io.iter_splits(s)]
    assert got == [(0, [0, 1, 2], ["x", "y", "x"]), (1, [2, 0], ["x", "y"])]


def test_single_class_split_is_an_error_naming_dataset_and_split(tmp_path):
    with pytest.raises(io.ContractError, match=r"Demo: split 1 .*1 label"):
        io.write_dataset(
            ["a", "b"],
            [([0, 1], ["x", "y"]), ([0, 1], ["x", "x"])],
            tmp_path / "t.parquet",
            tmp_path / "s.parquet",
            "Demo",
        )
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_embeddings_round_trip_with_metadata(tmp_path):
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    schema = io.embedding_schema(3, {"model": "m"})
    table = io.embedding_batch(schema, 0, vectors)
    pq.write_table(pa.Table.from_batches([table]), tmp_path / "e.parquet")
    matrix, meta = io.read_embeddings(tmp_path / "e.parquet")
    np.testing.assert_array_equal(matrix, vectors)
    assert meta == {"model": "m"}


def test_reduced_round_trip(tmp_path):
    """What reduced_table stores, read_reduced gives back: per split, its text ids in split order and each
    text's own coordinates (distinct values written here by hand), float32, the metadata kept."""
    parts = [
        (0, np.array([2, 0]), np.array([[0.5, -1.25], [3.0, 4.0]])),
        (1, np.array([1, 2]), np.array([[7.5, 0.125], [-2.0, 6.25]])),
    ]
    table = io.reduced_table(parts, {"reduction": "pca"})
    assert table.num_rows == 4 and table.column("split").to_pylist() == [0, 0, 1, 1]
    pq.write_table(table, tmp_path / "r.parquet")
    back = io.read_reduced(tmp_path / "r.parquet")
    assert sorted(back) == [0, 1]
    assert back[0][0].tolist() == [2, 0] and back[1][0].tolist() == [1, 2]
    assert back[0][1].tolist() == [[0.5, -1.25], [3.0, 4.0]] and back[1][1].tolist() == [[7.5, 0.125], [-2.0, 6.25]]
    assert back[0][1].dtype == np.float32
    meta = io.read_tecb_metadata(pq.read_schema(tmp_path / "r.parquet"), tmp_path / "r.parquet")
    assert meta["reduction"] == "pca"


def test_a_score_file_records_its_sha256_and_configuration(tmp_path):
    """Score files are verified where the tables read them, as embeddings are: an edited value, a damaged file and
    another configuration's file are named; a file without the record (older) is read; the concatenated table has
    the same bytes with and without the records (the demo's scores.parquet is unchanged)."""
    from tecb.report.table_files import collect_scores

    rows = [{"split": 0, "v_measure": 0.123456789, "n_clusters": 3}, {"split": 1, "v_measure": 0.5, "n_clusters": 4}]
    keys = [("m", "D", "none", "kmeans"), ("m", "D", "pca", "ward")]
    collected = []
    for recorded in (False, True):
        paths = [tmp_path / str(recorded) / "scores" / m / d / r / f"{a}.parquet" for m, d, r, a in keys]
        for path in paths:
            path.parent.mkdir(parents=True)
            io.write_table(io.score_table(rows, path) if recorded else pa.Table.from_pylist(rows), path)
        collect_scores(paths, keys, tmp_path / f"{recorded}.parquet", log=lambda m: None)
        collected.append((tmp_path / f"{recorded}.parquet").read_bytes())
    assert collected[0] == collected[1]
    kmeans, ward = paths
    io.check_scores(kmeans, "m/D/none/kmeans")
    cache, files = tmp_path / "cache" / "scores.json", {kmeans: "m/D/none/kmeans", ward: "m/D/pca/ward"}
    assert io.remove_wrong_scores(files, cache=cache) == [] and len(json.loads(cache.read_text())) == 2
    shutil.copy2(ward, kmeans)  # `cp -p`: the old modification time too; the cache of passed files does not hide it
    assert io.remove_wrong_scores(files, log=lambda m: None, cache=cache) == [str(kmeans)]
    shutil.copy2(ward, kmeans)
    with pytest.raises(io.ContractError, match="holds the scores of m/D/pca/ward, not of m/D/none/kmeans"):
        collect_scores(paths, keys, tmp_path / "x.parquet", log=lambda m: None)
    logged = []
    assert io.remove_wrong_scores({kmeans: "m/D/none/kmeans", ward: "m/D/pca/ward"}, log=logged.append) == [str(kmeans)]
    assert not kmeans.exists() and ward.exists() and "removed: this run computes it again" in logged[0]
    table = pq.read_table(ward)
    edited = table.set_column(1, "v_measure", [[0.9, 0.5]])
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), ward)
    with pytest.raises(io.ContractError, match="its scores are not the ones written"):
        io.check_scores(ward, "m/D/pca/ward")
    ward.write_bytes(ward.read_bytes()[:50])
    with pytest.raises(io.ContractError, match="cannot read the scores file"):
        io.check_scores(ward, "m/D/pca/ward")
