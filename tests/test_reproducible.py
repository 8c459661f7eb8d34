"""Issue 12 item 2: two clean runs of the same config give byte-identical results.

A reduced demo (a TF-IDF model and the tiny BERT, two datasets with duplicate texts, UMAP and PCA+UMAP
reductions, k-means, HDBSCAN and Ward, a short adaptive pre-training) runs twice, in two fresh project copies,
each its own snakemake process with its own PYTHONHASHSEED (so set and dict orders differ); every file under
results/ must have the same SHA-256, except what records time by design: logs, benchmarks, timings
(results/{run}/timings/: clustering, embed and pretrain jobs) and the runtime summary built from them.
"""

from __future__ import annotations

import hashlib

import pytest
import yaml
from conftest import copy_project, run_snakemake

from tecb import io

CONFIG = {
    "run": "repro",
    "datasets": {
        "TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s", "n_splits": 3},
        "RedditClusteringS2S": {
            "source": "reddit",
            "text": "s2s",
            "n_splits": 3,
            "min_subreddits": 4,
            "max_subreddits": 8,
        },
    },
    "models": {
        "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 64},
        "tiny-bert": {"name": "tiny BERT (random init)", "kind": "tiny-bert"},
    },
    # a short adaptive pre-training (the demo's two methods, two epochs each): its scores and checkpoints too
    "pretrain": {"enabled": True, "models": ["tiny-bert"], "datasets": ["TenKGnadClusteringS2S"]},
    "configurations": [
        {"algorithm": "kmeans", "reduction": "none"},
        {"algorithm": "kmeans", "reduction": "umap"},
        {"algorithm": "hdbscan", "reduction": "pca_umap"},
        {"algorithm": "agglomerative", "reduction": "pca"},
    ],
    # the chance floor with the schema's fewest draws (the demo: 100): the same code, a tenth of the work
    "tables": {"chance": {"n_draws": 10}},
    # the paper's protocol only: MTEB v2's score is repeated across processes with two hash seeds by
    # tests/test_mteb_v2.py::test_run_writes_identical_bytes_in_separate_processes (here: 5 more jobs a run)
    "scoring": {"protocols": ["paper"]},
}
#: Folders and files that record durations by design (lead's decision: results/timings/, benchmarks/).
TIMED = ("benchmarks", "timings", "logs")


def _timed(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in TIMED for p in parts) or "runtime" in parts[-1]


def _hashes(results) -> dict[str, str]:
    out = {}
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results).as_posix()
        if path.is_file() and not _timed(rel):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _run(tmp_path_factory, hash_seed: str):
    work = copy_project(tmp_path_factory.mktemp("repro"))
    (work / "config" / "repro.yaml").write_text(yaml.safe_dump(CONFIG))
    run_snakemake(
        work,
        "--configfile",
        "config/demo.yaml",
        "config/repro.yaml",
        "--cores",
        "2",
        "--resources",
        "gpu=1",
        env={"PYTHONHASHSEED": hash_seed},
    )
    return work / "results" / "repro"


@pytest.mark.workflow
def test_two_clean_runs_are_byte_identical(tmp_path_factory):
    first, second = _run(tmp_path_factory, "0"), _run(tmp_path_factory, "4242")
    a, b = _hashes(first), _hashes(second)
    # what must be covered: scores, the long table, tables, embeddings, reduced files, labels, pre-training
    for needle in (
        "scores.parquet",
        "tables/table2.csv",
        "tables/table3.md",
        "embeddings/tfidf/TenKGnadClusteringS2S.parquet",
        "embeddings/tiny-bert/RedditClusteringS2S.parquet",
        "reduced/tfidf/TenKGnadClusteringS2S/umap.parquet",
        "reduced/tfidf/RedditClusteringS2S/pca_umap.parquet",
        "scores/tfidf/TenKGnadClusteringS2S/pca_umap/hdbscan.parquet",
        "pretrain/tiny-bert/wwm/TenKGnadClusteringS2S/seed42.parquet",
        "pretrain/tiny-bert/tsdae/TenKGnadClusteringS2S/seed42.parquet",
        "pretrain/scores.parquet",
        "pretrain/table5.csv",
        "checkpoints/tiny-bert/wwm/TenKGnadClusteringS2S/seed42/provenance.json",
    ):
        assert needle in a, (needle, sorted(a)[:50])
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    differing = sorted(k for k in a if a[k] != b[k])
    assert not differing, f"files that differ between two clean runs: {differing}"
    assert any((first / "timings").rglob("*.parquet"))  # durations live apart from the scores
    for timed in (
        "timings/embed/tiny-bert/TenKGnadClusteringS2S.json",
        "timings/pretrain/tiny-bert/wwm/TenKGnadClusteringS2S/seed42.json",
    ):
        assert (first / timed).is_file(), timed
    assert not [p for p in first.rglob("*") if io.TEMP_NAME.match(p.name)]  # no scratch or temporary left
