"""cluster.batch: every configuration of one (model, dataset) in one process, with exact reruns (issue 24)."""

import json

import numpy as np
import pytest
import yaml
from test_cluster import SPECS, _planned_jobs, blobs

from tecb import io
from tecb.cluster import batch
from tecb.cluster.algorithms import run_configuration

KINDS = ("scores", "timings", "labels")


def _points(tmp_path, name, x, ids):
    path = tmp_path / f"{name}.parquet"
    io.write_table(io.reduced_table([(s, i, x[i]) for s, i in enumerate(ids)], {"reduction": name}), path)
    return path


@pytest.fixture
def data(tmp_path):
    x, y = blobs(n=160, seed=3)
    x[150:] = x[:10]  # duplicate rows
    ids = [np.arange(0, 100), np.arange(60, 160)]
    _, splits = io.dataset_tables([f"t{i}" for i in range(160)], [(i, list(y[i])) for i in ids])
    io.write_table(splits, tmp_path / "splits.parquet")
    return {
        "splits": tmp_path / "splits.parquet",
        "a": _points(tmp_path, "a", x, ids),
        "b": _points(tmp_path, "b", x * 0.5, ids),
        "x": x,
        "ids": ids,
    }


def _members(tmp_path, data, specs):
    """Members named `reduction/algorithm` on the reduced files a and b, writing under tmp_path/batch."""
    members = []
    for name, spec in specs.items():
        reduction, algorithm = name.split("/")
        out = {k: tmp_path / "batch" / k / reduction / f"{algorithm}.parquet" for k in KINDS}
        members.append({"name": name, "spec": spec, "threads": 1, "reduced_path": data[reduction], **out})
    return members


def _run(tmp_path, data, specs, logs=None):
    return batch.run_batch(
        _members(tmp_path, data, specs),
        splits_path=data["splits"],
        keys_path=tmp_path / "batch" / "keys.json",
        seed=42,
        max_memory_gb=None,
        log=(logs.append if logs is not None else lambda m: None),
    )


def _state(tmp_path, name):
    reduction, algorithm = name.split("/")
    paths = [tmp_path / "batch" / k / reduction / f"{algorithm}.parquet" for k in KINDS]
    return [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths]


SPECS3 = {"a/kmeans": SPECS["kmeans"], "a/hdbscan": SPECS["hdbscan"], "b/agglomerative": SPECS["agglomerative"]}


def test_batch_writes_the_per_configuration_bytes_and_recomputes_only_what_changed(tmp_path, data):
    # what one job per configuration writes (the function the cluster rule's script calls)
    solo = {}
    for name, spec in SPECS3.items():
        reduction, algorithm = name.split("/")
        out = [tmp_path / "solo" / f"{reduction}-{algorithm}-{k}.parquet" for k in KINDS]
        run_configuration(
            data["splits"], spec, *out, reduced_path=data[reduction], seed=42, threads=1, log=lambda m: None
        )
        solo[name] = (out[0].read_bytes(), out[2].read_bytes())

    assert _run(tmp_path, data, SPECS3) == list(SPECS3)
    for name in SPECS3:
        state = _state(tmp_path, name)
        assert (state[0][0], state[2][0]) == solo[name], name  # scores and labels: the same bytes
    keys = json.loads((tmp_path / "batch" / "keys.json").read_text())
    assert sorted(keys) == sorted(SPECS3) and len(set(keys.values())) == 3

    # the same batch again: nothing computed, every file untouched
    before = {n: _state(tmp_path, n) for n in SPECS3}
    logs = []
    assert _run(tmp_path, data, SPECS3, logs) == []
    assert {n: _state(tmp_path, n) for n in SPECS3} == before
    assert "0 of 3 configurations computed, 3 kept" in logs[-1]

    # one algorithm's params change: only that configuration is computed
    changed = {**SPECS3, "a/kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 50, "n_init": 3}}}
    assert _run(tmp_path, data, changed) == ["a/kmeans"]
    after = {n: _state(tmp_path, n) for n in SPECS3}
    assert after["a/hdbscan"] == before["a/hdbscan"] and after["b/agglomerative"] == before["b/agglomerative"]
    assert after["a/kmeans"][2][1] != before["a/kmeans"][2][1]

    # the points it reads change (other bytes): only the configurations on that file
    _points(tmp_path, "b", data["x"] * 0.25, data["ids"])
    assert _run(tmp_path, data, changed) == ["b/agglomerative"]
    # a missing output file is computed again although its key is there
    (tmp_path / "batch" / "labels" / "a" / "hdbscan.parquet").unlink()
    assert _run(tmp_path, data, changed) == ["a/hdbscan"]
    # a configuration left out of the batch is dropped from the keys
    _run(tmp_path, data, {k: v for k, v in changed.items() if k != "a/hdbscan"})
    assert sorted(json.loads((tmp_path / "batch" / "keys.json").read_text())) == ["a/kmeans", "b/agglomerative"]


def test_a_failing_configuration_is_never_named_by_the_keys_file(tmp_path, data):
    """Its entry is removed before its files are rewritten: a rerun computes it, whatever it held before."""
    assert _run(tmp_path, data, SPECS3) == list(SPECS3)
    good = _state(tmp_path, "a/hdbscan")
    broken = {**SPECS3, "a/hdbscan": {"method": "minibatch_kmeans", "params": {"no_such_parameter": 1}}}
    with pytest.raises(TypeError, match="no_such_parameter"):
        _run(tmp_path, data, broken)
    keys = json.loads((tmp_path / "batch" / "keys.json").read_text())
    assert sorted(keys) == ["a/kmeans", "b/agglomerative"]  # computed before it and kept; it is not there
    # back to the old spec: computed again (its key was removed), the same bytes as the first time
    assert _run(tmp_path, data, SPECS3) == ["a/hdbscan"]
    assert [b for b, _ in _state(tmp_path, "a/hdbscan")][::2] == [b for b, _ in good][::2]


def test_the_key_covers_spec_seed_inputs_and_library_versions():
    base = dict(spec={"method": "hdbscan"}, seed=1, points_sha256="p", splits_sha256="s", versions={"numpy": "2"})
    key = batch.member_key(**base)
    for change in (
        {"spec": {"method": "hdbscan", "params": {"min_cluster_size": 3}}},
        {"seed": 2},
        {"points_sha256": "q"},
        {"splits_sha256": "t"},
        {"versions": {"numpy": "3"}},
    ):
        assert batch.member_key(**{**base, **change}) != key, change
    assert batch.member_key(**dict(base)) == key
    assert set(batch.library_versions()) == set(batch.LIBRARIES)


@pytest.mark.workflow
def test_batched_run_writes_the_per_configuration_bytes_and_reruns_exactly(tmp_path):
    """cluster.batch: the same score and label files as one job per configuration; a changed algorithm reruns
    its batch, which recomputes that configuration only."""
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    layer = {
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 32}},
        "datasets": {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s", "n_splits": 2}},
        "configurations": [
            {"algorithm": "kmeans", "reduction": "none"},
            {"algorithm": "agglomerative", "reduction": "pca"},
            {"algorithm": "dbstream", "reduction": "pca"},
        ],
    }
    where = "{kind}/tfidf/TenKGnadClusteringS2S/{r}/{a}.parquet"

    def run(name, batched, *args, threads=1, **changes):
        (work / f"config/{name}.yaml").write_text(
            yaml.safe_dump({**layer, "run": name, "cluster": {"threads": threads, "batch": batched}, **changes})
        )
        targets = [
            f"results/{name}/" + where.format(kind="scores", r=c["reduction"], a=c["algorithm"])
            for c in layer["configurations"]
        ]
        return run_snakemake(
            work, "--configfile", "config/demo.yaml", f"config/{name}.yaml", "--cores", "2", *args, *targets
        ).stdout

    run("perjob", False)
    run("batched", True)
    for c in layer["configurations"]:
        for kind in ("scores", "labels"):
            rel = where.format(kind=kind, r=c["reduction"], a=c["algorithm"])
            assert (work / "results/batched" / rel).read_bytes() == (work / "results/perjob" / rel).read_bytes(), rel
    log = work / "logs/batched/cluster/tfidf/TenKGnadClusteringS2S/batch.log"
    assert "3 of 3 configurations computed" in log.read_text()
    assert _planned_jobs(run("batched", True, "-n")) == {}

    # one algorithm changes: its batch reruns and computes only that configuration
    changed = {"algorithms": {"dbstream": {"method": "dbstream", "params": {"clustering_threshold": 2.0}}}}
    assert _planned_jobs(run("batched", True, "-n", **changed)) == {"cluster_batch": 1}
    kept = work / "results/batched" / where.format(kind="labels", r="pca", a="agglomerative")
    before = kept.read_bytes()
    run("batched", True, **changed)
    assert "1 of 3 configurations computed, 2 kept" in log.read_text()
    assert kept.read_bytes() == before
    # the cores change no result: nothing to do (as with one job per configuration)
    assert _planned_jobs(run("batched", True, "-n", threads=2, **changed)) == {}
