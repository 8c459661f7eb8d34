"""Issue 12 item 2: two clean runs of the same config give byte-identical results.

A reduced demo (one TF-IDF model, two datasets with duplicate texts, UMAP and PCA+UMAP reductions,
k-means, HDBSCAN and Ward) runs twice, in two fresh project copies, each its own snakemake process;
every file under results/ must have the same SHA-256, except what records time by design: logs,
benchmarks, timings and the runtime summary built from them.
"""

from __future__ import annotations

import hashlib

import pytest
import yaml

from conftest import copy_project, run_snakemake

CONFIG = {
    "run": "repro",
    "datasets": {
        "TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s", "n_splits": 3},
        "RedditClusteringS2S": {"source": "reddit", "text": "s2s", "n_splits": 3,
                                "min_subreddits": 4, "max_subreddits": 8},
    },
    "models": {"tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 64}},
    "configurations": [
        {"algorithm": "kmeans", "reduction": "none"},
        {"algorithm": "kmeans", "reduction": "umap"},
        {"algorithm": "hdbscan", "reduction": "pca_umap"},
        {"algorithm": "agglomerative", "reduction": "pca"},
    ],
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


def _run(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("repro"))
    (work / "config" / "repro.yaml").write_text(yaml.safe_dump(CONFIG))
    run_snakemake(work, "--configfile", "config/demo.yaml", "config/repro.yaml", "--cores", "2",
                  "--resources", "gpu=1")
    return work / "results" / "repro"


@pytest.mark.workflow
def test_two_clean_runs_are_byte_identical(tmp_path_factory):
    first, second = _run(tmp_path_factory), _run(tmp_path_factory)
    a, b = _hashes(first), _hashes(second)
    # what must be covered: scores, the long table, tables, reduced files, labels
    for needle in ("scores.parquet", "tables/table2.csv", "tables/table3.md",
                   "reduced/tfidf/TenKGnadClusteringS2S/umap.parquet",
                   "reduced/tfidf/RedditClusteringS2S/pca_umap.parquet",
                   "scores/tfidf/TenKGnadClusteringS2S/pca_umap/hdbscan.parquet"):
        assert needle in a, (needle, sorted(a)[:50])
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    differing = sorted(k for k in a if a[k] != b[k])
    assert not differing, f"files that differ between two clean runs: {differing}"
    assert any((first / "timings").rglob("*.parquet"))  # durations live apart from the scores
