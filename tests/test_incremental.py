"""Incremental by construction: after a complete run, each kind of config (or model) change plans exactly the jobs
it affects, read from `snakemake -n` (rule + wildcards of every planned job). Also: config overlays and runs
(`run:`), and that every file a run writes is a declared output.

One small run (one dataset, TF-IDF + a tiny *local* model, k-means on raw and PCA-reduced embeddings) is made
once per module; every test then dry-runs a modified config against it.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import copy_of, expensive, planned_jobs

pytestmark = pytest.mark.workflow

RUN = "inc"
RESULTS = f"results/{RUN}"
DATASET = "TenKGnadClusteringS2S"
MODELS = ("tfidf", "tiny")

BASE = {
    "run": RUN,
    "seed": 42,
    "sources": {
        "million_posts": {"path": "resources/demo/corpus.sqlite3"},
        "reddit": {"path": "resources/demo/submissions.parquet"},
    },
    "datasets": {DATASET: {"source": "million_posts", "text": "s2s"}},
    "models": {
        "tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 32},
        "tiny": {"name": "tiny local", "kind": "local", "path": "models/tiny"},
    },
    "embed": {"device": "cpu"},
    "reductions": {"pca": {"method": "pca", "n_components": 2}},
    "algorithms": {
        "kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}},
        "hdbscan": {"method": "hdbscan"},
    },
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}, {"algorithm": "kmeans", "reduction": "pca"}],
    "cluster": {"threads": 1, "batch": False},  # one job per configuration (test_cluster_batch.py: batched)
    "tables": {"chance": {"n_draws": 10}},  # the chance floor with the fewest draws the schema allows
}


def write_config(workdir: Path, cfg: dict, name: str = "inc.yaml") -> str:
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return f"config/{name}"


def planned(workdir: Path, cfg: dict, *extra: str) -> set[tuple]:
    """``{(rule, frozenset(wildcards))}`` of every job `snakemake -n` plans for ``cfg``."""
    proc = run_snakemake(
        workdir, "-n", "--configfile", write_config(workdir, cfg, "changed.yaml"), "--cores", "1", *extra
    )
    return planned_jobs(proc.stdout)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A complete run of BASE (with its tiny local model); tests get a fresh copy of it each."""
    from tecb.embed.tiny_bert import create_tiny_bert

    work = copy_project(tmp_path_factory.mktemp("incremental") / "proj")
    corpus = [f"Nachricht Nummer {i} über Sport, Politik und Kultur in Wien" for i in range(60)]
    create_tiny_bert(work / "models" / "tiny", corpus, seed=1)
    run_snakemake(work, "--configfile", write_config(work, BASE), "--cores", "2")
    return work


@pytest.fixture()
def work(project, tmp_path) -> Path:
    return copy_of(project, tmp_path)


def variant(**changes) -> dict:
    cfg = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = cfg
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return cfg


def test_unchanged_config_plans_nothing(work):
    proc = run_snakemake(work, "-n", "--configfile", write_config(work, BASE, "same.yaml"), "--cores", "1")
    assert "Nothing to be done" in proc.stdout, proc.stdout[-3000:]


def test_adding_a_configuration_runs_only_its_cluster_jobs(work):
    cfg = variant()
    cfg["configurations"].append({"algorithm": "hdbscan", "reduction": "pca"})
    jobs = planned(work, cfg)
    assert expensive(jobs) == {("cluster", m, DATASET, "pca", "hdbscan") for m in MODELS}
    assert ("collect_scores", frozenset()) in jobs  # the aggregations follow


def test_removing_a_configuration_reruns_no_expensive_job(work):
    cfg = variant()
    cfg["configurations"] = cfg["configurations"][:1]
    assert expensive(planned(work, cfg)) == set()


def test_display_name_is_not_an_embedding_input(work):
    cfg = variant()
    cfg["models"]["tiny"]["name"] = "a new display name"
    cfg["models"]["tfidf"]["name"] = "TF-IDF (renamed)"
    jobs = planned(work, cfg)
    assert expensive(jobs) == set()
    assert any(rule == "tables" for rule, _ in jobs)  # the tables show the new name


def test_algorithm_parameters_rerun_only_that_algorithm(work):
    cfg = variant()
    cfg["algorithms"]["kmeans"]["params"]["batch_size"] = 100
    cfg["algorithms"]["hdbscan"]["params"] = {"min_cluster_size": 3}  # configured nowhere: reruns nothing
    assert expensive(planned(work, cfg)) == {
        ("cluster", m, DATASET, r, "kmeans") for m in MODELS for r in ("none", "pca")
    }


def test_reduction_parameters_rerun_the_reduction_and_its_clusterings(work):
    cfg = variant()
    cfg["reductions"]["pca"]["n_components"] = 3
    assert expensive(planned(work, cfg)) == (
        {("reduce", m, DATASET, "pca", None) for m in MODELS}
        | {("cluster", m, DATASET, "pca", "kmeans") for m in MODELS}
    )


def test_a_models_settings_rerun_only_that_model(work):
    cfg = variant()
    cfg["models"]["tfidf"]["dim"] = 16
    assert expensive(planned(work, cfg)) == (
        {("embed", "tfidf", DATASET, None, None), ("reduce", "tfidf", DATASET, "pca", None)}
        | {("cluster", "tfidf", DATASET, r, "kmeans") for r in ("none", "pca")}
    )


def test_overwritten_local_weights_rerun_that_models_embeddings(work):
    weights = sorted((work / "models" / "tiny").glob("*.safetensors")) or sorted(
        (work / "models" / "tiny").glob("*.bin")
    )
    assert weights, list((work / "models" / "tiny").iterdir())
    data = bytearray(weights[0].read_bytes())
    data[-1] ^= 0xFF  # new content, same size
    weights[0].write_bytes(bytes(data))
    got = expensive(planned(work, BASE))
    assert ("embed", "tiny", DATASET, None, None) in got
    assert {rule for rule, model, *_ in got if model == "tfidf"} == set(), got


def test_adding_a_dataset_runs_only_that_dataset(work):
    cfg = variant()
    cfg["datasets"]["RedditClusteringS2S"] = {
        "source": "reddit",
        "text": "s2s",
        "min_subreddits": 4,
        "max_subreddits": 8,
    }
    got = expensive(planned(work, cfg))
    assert {d for _, _, d, _, _ in got} == {"RedditClusteringS2S"}, got
    assert ("build_dataset", None, "RedditClusteringS2S", None, None) in got
    assert {("embed", m, "RedditClusteringS2S", None, None) for m in MODELS} <= got


def test_adding_a_model_runs_only_that_model(work):
    cfg = variant()
    cfg["models"]["tfidf8"] = {"name": "TF-IDF 8", "kind": "tfidf", "dim": 8}
    got = expensive(planned(work, cfg))
    assert {m for _, m, _, _, _ in got} == {"tfidf8"}, got
    assert ("embed", "tfidf8", DATASET, None, None) in got


def test_the_seed_reruns_the_seeded_steps(work):
    """The seed draws the splits, TF-IDF's SVD, PCA and k-means: each of those jobs reruns, for every model."""
    got = expensive(planned(work, BASE, "--config", "seed=1"))
    seeded = {("build_dataset", None, DATASET, None, None), ("embed", "tfidf", DATASET, None, None)}
    seeded |= {("reduce", m, DATASET, "pca", None) for m in MODELS}
    seeded |= {("cluster", m, DATASET, r, "kmeans") for m in MODELS for r in ("none", "pca")}
    assert seeded <= got, seeded - got
    assert not {job for job in got if job[0] in ("tiny_bert", "model_digest")}  # the local model is not seeded


def test_a_second_run_writes_beside_the_first(work):
    """`--config run=other`: everything planned under results/other/; the first run stays complete."""
    proc = run_snakemake(
        work, "-n", "--configfile", write_config(work, BASE, "same.yaml"), "--config", "run=other", "--cores", "1"
    )
    assert "results/other/scores.parquet" in proc.stdout and f"{RESULTS}/" not in proc.stdout.replace(
        "results/other/", ""
    )
    proc = run_snakemake(work, "-n", "--configfile", "config/same.yaml", "--cores", "1")
    assert "Nothing to be done" in proc.stdout


def test_every_file_a_run_writes_is_declared(work):
    """Files under results/{run}/, logs/ and resources/ = the declared outputs, logs and benchmarks of the DAG
    (the user's own model folder, models/tiny, is an input, not written by the run)."""
    proc = run_snakemake(work, "--summary", "--configfile", write_config(work, BASE, "same.yaml"), "--cores", "1")
    declared = set()
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 4 and parts[0].startswith(("results/", "logs/", "resources/")):
            declared.add(parts[0])
            declared |= {p.strip() for p in parts[3].split(",") if p.strip()}
    on_disk = {
        p.relative_to(work).as_posix()
        for root in (RESULTS, "logs", "resources")
        for p in (work / root).rglob("*")
        if p.is_file()
    }
    assert any(p.startswith("resources/") for p in on_disk)  # the demo inputs this run reads are built by it
    benchmarks = {p for p in on_disk if p.startswith(f"{RESULTS}/benchmarks/")}  # declared by `benchmark:`
    directories = [d for d in declared if (work / d).is_dir()]
    inside_dirs = {p for p in on_disk if any(p.startswith(d + "/") for d in directories)}
    assert f"{RESULTS}/scores.parquet" in declared and f"{RESULTS}/scores.parquet" in on_disk
    undeclared = on_disk - declared - benchmarks - inside_dirs
    assert not undeclared, sorted(undeclared)
