"""cluster.batch: every reduction and configuration of one (model, dataset) in one process, with exact reruns
(issue 24)."""

import json

import numpy as np
import pyarrow as pa
import pytest
import yaml
from helpers import ALGORITHMS as SPECS
from helpers import blobs, job_counts, three_configurations_layer

from tecb import io
from tecb.cluster import batch
from tecb.cluster.algorithms import ClusterFiles, run_configuration
from tecb.cluster.reduce import ReduceFiles, run_reduction

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


def _run(tmp_path, data, specs, logs=None, reductions=(), embeddings=None):
    return batch.run_batch(
        batch.Batch(reductions=list(reductions), members=_members(tmp_path, data, specs)),
        files=batch.BatchFiles(embeddings=embeddings, splits=data["splits"], keys=tmp_path / "batch" / "keys.json"),
        seed=42,
        max_memory_gb=None,
        cache_umap=False,
        log=(logs.append if logs is not None else lambda m: None),
    )


def _state(tmp_path, name):
    reduction, algorithm = name.split("/")
    paths = [tmp_path / "batch" / k / reduction / f"{algorithm}.parquet" for k in KINDS]
    return [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths]


SPECS3 = {"a/kmeans": SPECS["kmeans"], "a/hdbscan": SPECS["hdbscan"], "b/agglomerative": SPECS["agglomerative"]}


@pytest.mark.slow
def test_batch_writes_the_per_configuration_bytes_and_recomputes_only_what_changed(tmp_path, data):
    # what one job per configuration writes (the function the cluster rule's script calls)
    solo = {}
    for name, spec in SPECS3.items():
        reduction, algorithm = name.split("/")
        # the batch's places under another folder: a score file records which configuration it is by its place's
        # last four parts (tecb.io.score_slot), as the workflow's scores/{model}/{dataset}/{reduction}/{algorithm}
        out = [tmp_path / "solo" / "batch" / k / reduction / f"{algorithm}.parquet" for k in KINDS]
        files = ClusterFiles(data["splits"], *out, reduced=data[reduction])
        run_configuration(spec, files=files, seed=42, threads=1, log=lambda m: None)
        solo[name] = (out[0].read_bytes(), out[2].read_bytes())

    assert _run(tmp_path, data, SPECS3) == list(SPECS3)
    for name in SPECS3:
        state = _state(tmp_path, name)
        assert (state[0][0], state[2][0]) == solo[name], name  # scores and labels: the same bytes
    keys = json.loads((tmp_path / "batch" / "keys.json").read_text())
    assert list(keys) == sorted(SPECS3) and len({entry["key"] for entry in keys.values()}) == 3  # canonical order

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


def test_a_damaged_keys_file_is_named_and_every_member_computed_again_to_the_same_bytes(tmp_path, data):
    """Never a bare JSONDecodeError: the damaged file is named in the log, ignored, and rewritten."""
    assert _run(tmp_path, data, SPECS3) == list(SPECS3)
    before = {n: [b for b, _ in _state(tmp_path, n)][::2] for n in SPECS3}  # scores and labels
    keys_path = tmp_path / "batch" / "keys.json"
    good_keys = keys_path.read_bytes()
    keys_path.write_bytes(good_keys[: len(good_keys) // 2])  # a half-written copy, as a full disk leaves it
    logs = []
    assert _run(tmp_path, data, SPECS3, logs) == list(SPECS3)
    warning = next(m for m in logs if "damaged keys file" in m)
    assert str(keys_path) in warning
    assert {n: [b for b, _ in _state(tmp_path, n)][::2] for n in SPECS3} == before
    assert keys_path.read_bytes() == good_keys


def test_a_kept_members_file_replaced_by_another_ones_is_named_and_computed_again(tmp_path, data):
    """The keys file vouches for a member's outputs by their sha256 taken when they were written, not by their
    names: another member's scores copied over a kept member's (key intact) are named and computed again, to the
    same bytes; the file is then written in the same canonical order as before, not with the member last."""
    assert _run(tmp_path, data, SPECS3) == list(SPECS3)
    keys_path = tmp_path / "batch" / "keys.json"
    good_keys = keys_path.read_bytes()
    before = {n: [b for b, _ in _state(tmp_path, n)][::2] for n in SPECS3}
    victim = tmp_path / "batch" / "scores" / "a" / "kmeans.parquet"
    victim.write_bytes((tmp_path / "batch" / "scores" / "b" / "agglomerative.parquet").read_bytes())
    logs = []
    assert _run(tmp_path, data, SPECS3, logs) == ["a/kmeans"]
    warning = next(m for m in logs if m.startswith("WARNING a/kmeans"))
    assert str(victim) in warning and str(keys_path) in warning
    assert {n: [b for b, _ in _state(tmp_path, n)][::2] for n in SPECS3} == before
    assert keys_path.read_bytes() == good_keys  # same entries, same order
    # a keys file of the older format (member -> key, no file hashes) vouches for nothing: computed again
    keys_path.write_text(json.dumps({n: e["key"] for n, e in json.loads(good_keys).items()}))
    logs = []
    assert _run(tmp_path, data, SPECS3, logs) == list(SPECS3)
    assert any("damaged keys file" in m and str(keys_path) in m for m in logs)
    assert keys_path.read_bytes() == good_keys


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
    assert {"umap-learn", "pynndescent", "numba"} <= set(batch.library_versions(batch.REDUCE_LIBRARIES))


def _embeddings(path, x):
    schema = io.embedding_schema(x.shape[1], {"n_texts": len(x), io.VECTORS_SHA256: io.vectors_sha256(x)})
    io.write_table(pa.Table.from_batches([io.embedding_batch(schema, 0, x)]), path)
    return path


def test_reductions_run_first_with_the_reduce_jobs_bytes_and_rerun_exactly(tmp_path, data):
    """The batch's reductions write what a reduce job writes; their clusterings are keyed by the reduced bytes:
    a changed reduction recomputes itself and the clusterings on it, one recomputed to the same bytes keeps them."""
    x = np.hstack([data["x"], np.sin(data["x"]), data["x"] ** 2]).astype(np.float32)  # 160 x 6
    emb = _embeddings(tmp_path / "emb.parquet", x)
    pca = {"a": {"method": "pca", "n_components": 2}, "b": {"method": "pca", "n_components": 3}}

    def reductions(specs):
        return [{"name": r, "spec": spec, "out": data[r]} for r, spec in specs.items()]  # rewrites a.parquet, ...

    solo = {}
    for r, spec in pca.items():
        out = tmp_path / f"solo-{r}.parquet"
        files = ReduceFiles(embeddings=emb, splits=data["splits"], reduced=out)
        run_reduction(spec, files=files, reduction=r, seed=42, threads=1, cache_umap=False, log=lambda m: None)
        solo[r] = out.read_bytes()
    logs = []
    assert _run(tmp_path, data, SPECS3, logs, reductions(pca), emb) == ["reduce:a", "reduce:b", *SPECS3]
    assert {r: data[r].read_bytes() for r in pca} == solo  # a reduce job's bytes
    assert "2 of 2 reductions computed, 0 kept" in logs[-2]
    keys = json.loads((tmp_path / "batch" / "keys.json").read_text())
    assert sorted(keys) == sorted(["reduce:a", "reduce:b", *SPECS3])

    # nothing changed: nothing computed
    before = {n: _state(tmp_path, n) for n in SPECS3}
    assert _run(tmp_path, data, SPECS3, None, reductions(pca), emb) == []
    # reduction b changes: it and the clusterings of b are recomputed, a's kept untouched
    changed = {**pca, "b": {"method": "pca", "n_components": 2}}
    assert _run(tmp_path, data, SPECS3, None, reductions(changed), emb) == ["reduce:b", "b/agglomerative"]
    after = {n: _state(tmp_path, n) for n in SPECS3}
    assert after["a/kmeans"] == before["a/kmeans"] and after["a/hdbscan"] == before["a/hdbscan"]
    # a reduced file lost: computed again, to the same bytes, so its clusterings are kept
    mtime = data["a"].stat().st_mtime_ns
    data["a"].unlink()
    assert _run(tmp_path, data, SPECS3, None, reductions(changed), emb) == ["reduce:a"]
    assert data["a"].read_bytes() == solo["a"] and data["a"].stat().st_mtime_ns != mtime
    assert {n: _state(tmp_path, n) for n in ("a/kmeans", "a/hdbscan")} == {
        n: after[n] for n in ("a/kmeans", "a/hdbscan")
    }
    # other embeddings: every reduction and every clustering recomputed
    _embeddings(emb, x[:, ::-1].copy())
    assert _run(tmp_path, data, SPECS3, None, reductions(changed), emb) == ["reduce:a", "reduce:b", *SPECS3]


@pytest.mark.workflow
def test_batched_run_writes_the_per_configuration_bytes_and_reruns_exactly(tmp_path):
    """cluster.batch: the same reduced, score and label files, MTEB v2 score and cluster view as one job per
    reduction, configuration, score and view; a changed algorithm reruns its batch, which recomputes that
    configuration only; a changed reduction, it and the configurations on it; a changed view setting, the view
    only."""
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    layer = {
        **three_configurations_layer(),
        # the steps after clustering: MTEB v2's score and the cluster view (of kmeans on raw embeddings)
        "scoring": {"protocols": ["paper", "mteb_v2"], "mteb_v2": {"sample_size": 100, "n_bootstraps": 3}},
    }
    where = "{kind}/tfidf/TenKGnadClusteringS2S/{r}/{a}.parquet"
    steps = ["mteb_v2/tfidf/TenKGnadClusteringS2S.parquet", "report/clusters/tfidf/TenKGnadClusteringS2S.html"]

    def run(name, batched, *args, threads=1, **changes):
        cfg = {**layer, "run": name, "cluster": {"threads": threads, "batch": batched}, **changes}
        cfg["embed"] = {"batch": batched}  # embed.batch too: one embed_batch job per model, or one embed job
        (work / f"config/{name}.yaml").write_text(yaml.safe_dump(cfg))
        on = [s for s in steps if not s.startswith("mteb_v2/") or "mteb_v2" in cfg["scoring"]["protocols"]]
        targets = [
            f"results/{name}/" + where.format(kind="scores", r=c["reduction"], a=c["algorithm"])
            for c in layer["configurations"]
        ] + [f"results/{name}/{step}" for step in on]
        return run_snakemake(
            work, "--configfile", "config/demo.yaml", f"config/{name}.yaml", "--cores", "2", *args, *targets
        ).stdout

    run("perjob", False)
    run("batched", True)
    rels = (
        ["embeddings/tfidf/TenKGnadClusteringS2S.parquet", "reduced/tfidf/TenKGnadClusteringS2S/pca.parquet"]
        + [
            where.format(kind=kind, r=c["reduction"], a=c["algorithm"])
            for c in layer["configurations"]
            for kind in ("scores", "labels")
        ]
        + steps
    )
    for rel in rels:
        assert (work / "results/batched" / rel).read_bytes() == (work / "results/perjob" / rel).read_bytes(), rel
    # the batch reduced, scored and wrote the view: no reduce, mteb_v2 or cluster_view job ran; the model's
    # embed_batch job embedded its one dataset
    assert not any((work / "logs/batched" / rule).exists() for rule in ("reduce", "mteb_v2", "cluster_view"))
    embed_log = (work / "logs/batched/embed/tfidf/batch.log").read_text()
    assert "1 of 1 datasets embedded, 0 kept" in embed_log
    assert (work / "logs/perjob/embed/tfidf/TenKGnadClusteringS2S.log").is_file()
    assert all((work / "logs/perjob" / rule).is_dir() for rule in ("reduce", "mteb_v2", "cluster_view"))
    log = work / "logs/batched/cluster/tfidf/TenKGnadClusteringS2S/batch.log"
    assert "1 of 1 reductions computed" in log.read_text()
    assert "3 of 3 configurations computed" in log.read_text()
    assert "2 of 2 other steps computed (mteb_v2, cluster_view)" in log.read_text()
    assert job_counts(run("batched", True, "-n")) == {}

    # one algorithm changes: its batch reruns and computes only that configuration
    changed = {"algorithms": {"dbstream": {"method": "dbstream", "params": {"clustering_threshold": 2.0}}}}
    assert job_counts(run("batched", True, "-n", **changed)) == {"cluster_batch": 1}
    kept = work / "results/batched" / where.format(kind="labels", r="pca", a="agglomerative")
    before = kept.read_bytes()
    run("batched", True, **changed)
    assert "1 of 3 configurations computed, 2 kept" in log.read_text()
    assert "0 of 2 other steps computed" in log.read_text()  # kmeans on raw (the view's labels) unchanged
    assert kept.read_bytes() == before
    # a view setting changes: the batch reruns and rewrites the view only
    v2_before = (work / "results/batched" / steps[0]).read_bytes()
    changed["inspect"] = {"top_terms": 3}
    assert job_counts(run("batched", True, "-n", **changed)) == {"cluster_batch": 1}
    run("batched", True, **changed)
    assert "0 of 3 configurations computed, 3 kept" in log.read_text()
    assert "1 of 2 other steps computed (mteb_v2, cluster_view)" in log.read_text()
    assert "cluster_view: up to date" not in log.read_text() and "mteb_v2: up to date" in log.read_text()
    assert (work / "results/batched" / steps[0]).read_bytes() == v2_before
    # the cores change no result: nothing to do (as with one job per configuration)
    assert job_counts(run("batched", True, "-n", threads=2, **changed)) == {}
    # the reduction changes: it and the two clusterings on it are recomputed, k-means on raw embeddings kept
    # (Snakemake touches a job's outputs after it, kept ones too: the log says which were kept)
    run("batched", True, reductions={"pca": {"method": "pca", "n_components": 3}}, **changed)
    text = log.read_text()
    assert "1 of 1 reductions computed" in text and "none/kmeans: up to date" in text
    assert "2 of 3 configurations computed, 1 kept" in text
    # a step turned off (the mteb_v2 protocol) reruns the batch once, computing nothing; then its settings rerun
    # nothing
    off = {"reductions": {"pca": {"method": "pca", "n_components": 3}}, **changed, "scoring": {"protocols": ["paper"]}}
    run("batched", True, **off)
    assert "0 of 3 configurations computed, 3 kept" in log.read_text()
    off["scoring"]["mteb_v2"] = {"n_bootstraps": 5}
    assert job_counts(run("batched", True, "-n", **off)) == {}
