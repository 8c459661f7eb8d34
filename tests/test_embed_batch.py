"""embed.batch: every dataset of one model in one process, the same bytes as one embed job per dataset, with
exact reruns (issue 24)."""

import json

import pytest
from helpers import EMBED_TEXTS as TEXTS
from helpers import write_texts

from tecb.embed import encode
from tecb.embed.batch import run_embed_batch
from tecb.embed.cache import ModelFiles, embedding_key
from tecb.embed.spec import encoder_settings
from tecb.embed.tiny_bert import create_tiny_bert

OPTIONS = {"batch_size": 8, "device": "cpu", "dtype": "float32", "threads": 1, "chunk_size": 4096}
DATASETS = {"A": TEXTS[:30], "B": TEXTS[20:] + ["noch ein Text über Bücher"]}


def _members(tmp_path, spec, datasets=DATASETS):
    members = []
    for name, texts in datasets.items():
        path = tmp_path / "texts" / f"{name}.parquet"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_texts(path, texts)
        members.append(
            {
                "dataset": name,
                "settings": encoder_settings(spec, OPTIONS, name),
                "texts": path,
                "embeddings": tmp_path / "batch" / f"{name}.parquet",
                "timings": tmp_path / "batch" / f"{name}.timings.json",
            }
        )
    return members


def _run(tmp_path, spec, *, seed, model_path=None, datasets=DATASETS, logs=None):
    return run_embed_batch(
        _members(tmp_path, spec, datasets),
        embed_options=OPTIONS,
        seed=seed,
        model=ModelFiles(spec["kind"], path=model_path),
        keys_path=tmp_path / "batch" / "keys.json",
        log=logs.append if logs is not None else lambda m: None,
    )


def _state(tmp_path, name):
    path = tmp_path / "batch" / f"{name}.parquet"
    return path.read_bytes(), path.stat().st_mtime_ns


def _solo(tmp_path, spec, name, *, seed, model_path=None):
    """What one embed job writes for dataset ``name`` (the functions the embed rule's script calls)."""
    member = next(m for m in _members(tmp_path, spec) if m["dataset"] == name)
    out = tmp_path / "solo" / f"{name}.parquet"
    key = embedding_key(settings=member["settings"], seed=seed, texts=member["texts"],
                        model=ModelFiles(spec["kind"], path=model_path))  # fmt: skip
    encode.embed_dataset(
        encode.EmbedJob(
            member["texts"], out, member["settings"], OPTIONS, seed=seed, dataset=name,
            timings=tmp_path / "solo" / f"{name}.timings.json", cache_key=key,
        ),
        log=lambda m: None,
    )  # fmt: skip
    return out.read_bytes()


def test_tfidf_batch_writes_each_jobs_bytes_and_reruns_only_what_changed(tmp_path):
    spec = {"kind": "tfidf", "dim": 4}
    assert _run(tmp_path, spec, seed=42) == ["A", "B"]
    for name in DATASETS:
        assert _state(tmp_path, name)[0] == _solo(tmp_path, spec, name, seed=42), name
        assert json.loads((tmp_path / "batch" / f"{name}.timings.json").read_text())["n_texts"] > 0
    before = {name: _state(tmp_path, name) for name in DATASETS}

    logs = []
    assert _run(tmp_path, spec, seed=42, logs=logs) == []  # unchanged: nothing embedded, files untouched
    assert {name: _state(tmp_path, name) for name in DATASETS} == before
    assert "0 of 2 datasets embedded, 2 kept" in logs

    # B's texts change: only B is embedded again; A keeps its bytes and its file
    write_texts(tmp_path / "texts" / "B.parquet", DATASETS["B"] + ["ein weiterer Text über Sport"])
    assert _run(tmp_path, spec, seed=42) == ["B"]
    assert _state(tmp_path, "A") == before["A"]
    assert _state(tmp_path, "B")[0] != before["B"][0]

    # a deleted file is embedded again, to the same bytes
    (tmp_path / "batch" / "A.parquet").unlink()
    assert _run(tmp_path, spec, seed=42) == ["A"]
    assert _state(tmp_path, "A")[0] == before["A"][0]
    # another dataset's file copied over A's (key intact): the keys file vouches by the bytes, not the name
    (tmp_path / "batch" / "A.parquet").write_bytes((tmp_path / "batch" / "B.parquet").read_bytes())
    logs = []
    assert _run(tmp_path, spec, seed=42, logs=logs) == ["A"]
    assert any(m.startswith("WARNING A:") and str(tmp_path / "batch" / "A.parquet") in m for m in logs), logs
    assert _state(tmp_path, "A")[0] == before["A"][0]

    # what decides the vectors: the TF-IDF seed and the settings re-embed every dataset
    assert _run(tmp_path, spec, seed=7) == ["A", "B"]
    assert _run(tmp_path, {"kind": "tfidf", "dim": 3}, seed=7) == ["A", "B"]

    # a dataset left out of the batch leaves the keys file
    assert _run(tmp_path, {"kind": "tfidf", "dim": 3}, seed=7, datasets={"A": DATASETS["A"]}) == []
    assert list(json.loads((tmp_path / "batch" / "keys.json").read_text())) == ["A"]


def test_a_failing_dataset_is_never_vouched_for_and_is_embedded_next_time(tmp_path):
    spec = {"kind": "tfidf", "dim": 4}
    _run(tmp_path, spec, seed=42)
    keys_path = tmp_path / "batch" / "keys.json"
    # B's texts become unreadable: the batch fails there, A stays as it was, B's key is gone
    good = (tmp_path / "texts" / "B.parquet").read_bytes()
    (tmp_path / "texts" / "B.parquet").write_bytes(b"not parquet")
    with pytest.raises(Exception, match="B.parquet|Parquet|parquet"):
        _run(tmp_path, spec, seed=42)
    assert list(json.loads(keys_path.read_text())) == ["A"]
    (tmp_path / "texts" / "B.parquet").write_bytes(good)
    assert _run(tmp_path, spec, seed=42) == ["B"]


@pytest.mark.slow
def test_transformer_batch_equals_each_job_and_follows_the_model_files(tmp_path):
    model = create_tiny_bert(tmp_path / "tiny", TEXTS, seed=1)
    spec = {"kind": "tiny-bert", "path": str(model)}
    assert _run(tmp_path, spec, seed=None, model_path=model) == ["A", "B"]
    for name in DATASETS:
        assert _state(tmp_path, name)[0] == _solo(tmp_path, spec, name, seed=None, model_path=model), name
    assert _run(tmp_path, spec, seed=None, model_path=model) == []
    # other weights in the same folder: every dataset is embedded again
    create_tiny_bert(tmp_path / "tiny2", TEXTS, seed=2)
    for f in (tmp_path / "tiny2").rglob("*"):
        if f.is_file():
            target = model / f.relative_to(tmp_path / "tiny2")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())
    assert _run(tmp_path, spec, seed=None, model_path=model) == ["A", "B"]
    # a per-dataset prompt changes only that dataset's settings, so only it is embedded again
    prompted = dict(spec, prompt={"B": "Cluster: "})
    assert _run(tmp_path, prompted, seed=None, model_path=model) == ["B"]


@pytest.mark.parametrize(
    "damage",
    [b'{"A": "12', b"\xff\xfe garbage", b'["A", "B"]', b'{"A": 3, "B": null}'],
    ids=["truncated", "not-utf8", "a-list", "not-keys"],
)
def test_a_damaged_keys_file_is_named_and_every_dataset_embedded_again_to_the_same_bytes(tmp_path, damage):
    """Never a bare JSONDecodeError: the damaged file is named in the log, ignored, and rewritten."""
    spec = {"kind": "tfidf", "dim": 4}
    assert _run(tmp_path, spec, seed=42) == ["A", "B"]
    before = {name: _state(tmp_path, name)[0] for name in DATASETS}
    keys_path = tmp_path / "batch" / "keys.json"
    good_keys = keys_path.read_bytes()
    keys_path.write_bytes(damage)
    logs = []
    assert _run(tmp_path, spec, seed=42, logs=logs) == ["A", "B"]
    warning = next(m for m in logs if "damaged keys file" in m)
    assert str(keys_path) in warning
    assert {name: _state(tmp_path, name)[0] for name in DATASETS} == before
    assert keys_path.read_bytes() == good_keys
