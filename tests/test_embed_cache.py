"""The embedding cache shared by run folders (config embed.cache_dir, workflow/rules/embed_cache.smk): a second
run folder with the same model and texts computes no embedding and gets the same bytes as a fresh run without
the cache; a finished run plans nothing; a model whose files live inside the run (tiny-bert) is not shared."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import pytest
import yaml
from conftest import DEMO_SOURCES, copy_project, run_snakemake

pytestmark = pytest.mark.workflow

DATASET = "TenKGnadClusteringS2S"
CONFIG = {
    "seed": 42,
    "sources": DEMO_SOURCES,
    "datasets": {DATASET: {"source": "million_posts", "text": "s2s"}},
    "models": {
        "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 32},
        "tiny-bert": {"name": "tiny BERT", "kind": "tiny-bert"},
    },
    "embed": {"batch_size": 16, "device": "cpu", "threads": 1, "cache_dir": "resources/embedding-cache"},
    "reductions": {},
    "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    "cluster": {"threads": 1},
}


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ran(proc) -> Counter:
    """The jobs a run started, by rule (from each job's header in the log: the plan printed first is made before
    the checkpoints have run)."""
    return Counter(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", proc.stdout, flags=re.M))


def _embed(work, run: str, *extra: str, configfile: str = "config/cache.yaml"):
    targets = [f"results/{run}/embeddings/{m}/{DATASET}.parquet" for m in CONFIG["models"]]
    return run_snakemake(work, "--configfile", configfile, "--config", f"run={run}", *extra, "--cores", "1",
                         *targets)  # fmt: skip


def test_second_run_folder_reuses_the_first_ones_embeddings(tmp_path):
    work = copy_project(tmp_path / "w")
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    no_cache = {**CONFIG, "embed": {**CONFIG["embed"], "cache_dir": None}}
    (work / "config" / "nocache.yaml").write_text(yaml.safe_dump(no_cache, sort_keys=False))

    first = _ran(_embed(work, "a"))
    assert first.get("embed_compute") == 2 and "embed" not in first, first  # both computed into the cache
    assert "Nothing to be done" in _embed(work, "a", "-n").stdout  # a finished run plans nothing

    second = _ran(_embed(work, "b"))
    # TF-IDF: same settings, seed and texts -> the same key: linked, not embedded. tiny-bert is built inside
    # each run folder (its path, recorded in the file, differs): a key of its own, embedded again.
    assert second.get("embed_compute") == 1 and second.get("embed_cached") == 2, second
    run_a, run_b = (work / "results" / r / "embeddings" for r in ("a", "b"))
    assert _sha(run_b / "tfidf" / f"{DATASET}.parquet") == _sha(run_a / "tfidf" / f"{DATASET}.parquet")
    keys = {r: yaml.safe_load((work / "results" / r / "embeddings" / "tfidf" / f"{DATASET}.key.json").read_text())
            for r in ("a", "b")}  # fmt: skip
    assert keys["a"]["key"] == keys["b"]["key"]
    entry = work / CONFIG["embed"]["cache_dir"] / f"{keys['a']['key']}.parquet"
    assert _sha(entry) == _sha(run_b / "tfidf" / f"{DATASET}.parquet")

    # the same bytes as a fresh run folder without the cache
    fresh = _ran(_embed(work, "c", configfile="config/nocache.yaml"))
    assert fresh.get("embed") == 2 and "embed_compute" not in fresh, fresh
    run_c = work / "results" / "c" / "embeddings"
    assert _sha(run_c / "tfidf" / f"{DATASET}.parquet") == _sha(run_b / "tfidf" / f"{DATASET}.parquet")


@pytest.mark.workflow
@pytest.mark.parametrize("shard_size", [None, 100])
def test_the_whole_demo_plans_with_the_cache(tmp_path, shard_size):
    """Every target of the demo (the report's runtimes included) plans with the cache on, sharded or not: the
    report does not ask for an embed job's benchmark file, which only the uncached embed rule would write."""
    work = copy_project(tmp_path / "p")
    # the demo batches its embedding (embed.batch), which the cache's per-dataset entries do not combine with
    embed = {"cache_dir": str(tmp_path / "cache"), "shard_size": shard_size, "batch": False}
    (work / "config" / "cached.yaml").write_text(yaml.safe_dump({"embed": embed}))
    proc = run_snakemake(
        work, "-n", "--configfile", "config/demo.yaml", "config/cached.yaml", "--cores", "2", "--resources", "gpu=1"
    )
    planned = dict(re.findall(r"^(\w+)\s+(\d+)$", proc.stdout, flags=re.M))
    assert planned.get("embed_cached") == "18" and "embed" not in planned, proc.stdout[-3000:]
    assert planned.get("report_extras") == "1"
