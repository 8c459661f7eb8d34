"""A missing output always plans its writer, whatever the rerun triggers (issue 36): after a configuration, a
dataset or a model is added, or a file of a finished run deleted, the same command plans the job that writes it,
with `--rerun-triggers mtime` (a common cluster setting), without `.snakemake/` (its metadata lost) and in a copied
run folder; one job per unit or batches (`cluster.batch`, `embed.batch`, whose outputs are update() files)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import yaml
from conftest import DEMO_SOURCES, copy_project, run_snakemake
from helpers import job_counts

pytestmark = pytest.mark.workflow

DATASET = "TenKGnadClusteringS2S"
BASE = {
    "run": "m",
    "sources": {"million_posts": DEMO_SOURCES["million_posts"]},
    "datasets": {DATASET: {"source": "million_posts", "text": "s2s", "n_splits": 2}},
    "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 16}},
    "reductions": {"pca": {"method": "pca"}},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    "embed": {"threads": 1},
    "tables": {"reference": "", "statistics": {"enabled": False}, "chance": {"enabled": False}},
    "inspect": {"clusters": False, "truncation": False},
}
ADDED = {
    "configuration": {"configurations": [{"algorithm": "kmeans", "reduction": "none"},
                                         {"algorithm": "kmeans", "reduction": "pca"}]},
    "dataset": {"datasets": {**BASE["datasets"], "TenKGnadClusteringP2P": {"source": "million_posts", "text": "p2p",
                                                                         "n_splits": 2}}},
    "model": {"models": {**BASE["models"], "tfidf-8": {"name": "TF-IDF 8", "kind": "tfidf", "dim": 8}}},
}  # fmt: skip


def _config(work, batched: bool, **changes) -> None:
    cfg = {**BASE, **changes, "cluster": {"threads": 1, "batch": batched}}
    cfg["embed"] = {**cfg["embed"], "batch": batched}
    (work / "config" / "m.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def _snakemake(work, *args):
    return run_snakemake(work, "--configfile", "config/m.yaml", "--cores", "1", *args).stdout


@pytest.mark.parametrize("batched", [True, False], ids=["batch", "per-job"])
def test_a_missing_output_plans_its_writer_whatever_the_triggers(tmp_path, batched):
    work = copy_project(tmp_path / "w")
    _config(work, batched)
    _snakemake(work)
    assert job_counts(_snakemake(work, "-n", "--rerun-triggers", "mtime")) == {}  # a finished run plans nothing
    cluster_rule = "cluster_batch" if batched else "cluster"
    copied = tmp_path / "copy"  # the project with its results copied elsewhere, without .snakemake/
    shutil.copytree(work, copied, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))

    for what, change in ADDED.items():
        for where, args in [
            (work, ["--rerun-triggers", "mtime"]),
            (work, ["--rerun-triggers", "mtime", "input", "params"]),
            (copied, []),
        ]:
            _config(where, batched, **change)
            planned = job_counts(_snakemake(where, "-n", *args))
            assert planned.get(cluster_rule, 0) >= 1 and planned.get("collect_scores") == 1, (what, where, planned)
            if what != "configuration":
                assert planned.get("embed_batch" if batched else "embed", 0) >= 1, (what, planned)
        _config(work, batched)
        _config(copied, batched)

    # without .snakemake/ (its metadata lost): the added configuration is planned, and run, into every table
    shutil.rmtree(work / ".snakemake")
    _config(work, batched, **ADDED["configuration"])
    _snakemake(work, "--rerun-triggers", "mtime")
    scores = pd.read_parquet(work / "results" / "m" / "scores.parquet")
    assert set(scores.reduction) == {"none", "pca"}, scores.reduction.unique()
    assert job_counts(_snakemake(work, "-n", "--rerun-triggers", "mtime")) == {}

    # a deleted file of a finished run (a score file; a batch's keys file) is written again by the same command
    deleted = [work / "results" / "m" / "scores" / "tfidf" / DATASET / "pca" / "kmeans.parquet"]
    if batched:
        deleted += [work / "results" / "m" / "cluster_keys" / "tfidf" / f"{DATASET}.json"]
    before = deleted[0].read_bytes()
    for path in deleted:
        path.unlink()
    assert job_counts(_snakemake(work, "-n", "--rerun-triggers", "mtime")).get(cluster_rule) == 1
    _snakemake(work, "--rerun-triggers", "mtime")
    assert all(p.exists() for p in deleted) and deleted[0].read_bytes() == before
