"""The embedding cache shared by run folders (config embed.cache_dir, workflow/rules/embed_cache.smk): a second
run folder with the same model files and texts computes no embedding (a model built inside each run folder,
tiny-bert, included: the key is content, never a path) and gets the same bytes as a fresh run without the cache;
a finished run plans nothing; a damaged entry is never linked; runs sharing a cache compute each entry once."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter

import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import job_counts, small_embed_config

from tecb.embed.encode import EmbedJob, embed_dataset
from tecb.io import read_embeddings

pytestmark = pytest.mark.workflow

DATASET = "TenKGnadClusteringS2S"
CONFIG = small_embed_config(DATASET, cache_dir="resources/embedding-cache")


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
    # the same settings, seed, model files and texts -> the same key: linked, not embedded. tiny-bert is built
    # inside each run folder (results/{run}/models/tiny-bert), byte for byte the same: its path is not in the key.
    assert "embed_compute" not in second and second.get("embed_cached") == 2, second
    run_a, run_b = (work / "results" / r / "embeddings" for r in ("a", "b"))
    for model in CONFIG["models"]:
        assert _sha(run_b / model / f"{DATASET}.parquet") == _sha(run_a / model / f"{DATASET}.parquet"), model
        keys = {r: json.loads((work / "results" / r / "embeddings" / model / f"{DATASET}.key.json").read_text())
                for r in ("a", "b")}  # fmt: skip
        assert keys["a"]["key"] == keys["b"]["key"], model
        entry = work / CONFIG["embed"]["cache_dir"] / f"{keys['a']['key']}.parquet"
        assert _sha(entry) == _sha(run_b / model / f"{DATASET}.parquet")

        # the entry names its key and no run's folder (tiny-bert was read from results/a/models/tiny-bert): it
        # has the same bytes whichever run computed it
        meta = read_embeddings(entry)[1]
        assert meta["cache_key"] == keys["a"]["key"] and "results/" not in json.dumps(meta), meta

    # the same bytes as a fresh run folder without the cache: every embeddings file names its key and no model
    # folder (tiny-bert is read from results/c/models/tiny-bert there)
    fresh = _ran(_embed(work, "c", configfile="config/nocache.yaml"))
    assert fresh.get("embed") == 2 and "embed_compute" not in fresh, fresh
    run_c = work / "results" / "c" / "embeddings"
    for model in CONFIG["models"]:
        assert _sha(run_c / model / f"{DATASET}.parquet") == _sha(run_b / model / f"{DATASET}.parquet"), model


@pytest.mark.workflow
@pytest.mark.parametrize("shard_size", [None, 100])
def test_the_whole_demo_plans_with_the_cache(tmp_path, shard_size):
    """Every target of the demo (the report's runtimes included) plans with the cache on, sharded or not: the
    report does not ask for an embed job's benchmark file, which only the uncached embed rule would write."""
    work = copy_project(tmp_path / "p")
    # per-dataset jobs here (the demo's embed.batch with the cache: tests/test_embed_switches.py)
    embed = {"cache_dir": str(tmp_path / "cache"), "shard_size": shard_size, "batch": False}
    (work / "config" / "cached.yaml").write_text(yaml.safe_dump({"embed": embed}))
    proc = run_snakemake(
        work, "-n", "--configfile", "config/demo.yaml", "config/cached.yaml", "--cores", "2", "--resources", "gpu=1"
    )
    planned = job_counts(proc.stdout)
    assert planned.get("embed_cached") == 18 and "embed" not in planned, proc.stdout[-3000:]
    assert planned.get("report_extras") == 1


def _key(work, run, model="tfidf") -> str:
    return json.loads((work / "results" / run / "embeddings" / model / f"{DATASET}.key.json").read_text())["key"]


def test_a_damaged_cache_entry_is_never_linked_and_is_computed_again_to_the_same_bytes(tmp_path):
    work = copy_project(tmp_path / "w")
    tfidf_only = {**CONFIG, "models": {"tfidf": CONFIG["models"]["tfidf"]}}
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(tfidf_only, sort_keys=False))
    target = f"results/{{}}/embeddings/tfidf/{DATASET}.parquet"
    run = lambda name, *extra: run_snakemake(  # noqa: E731
        work, "--configfile", "config/cache.yaml", "--config", f"run={name}", *extra, "--cores", "1",
        target.format(name), check=False,
    )  # fmt: skip
    assert run("a").returncode == 0
    good = (work / target.format("a")).read_bytes()
    entry = work / CONFIG["embed"]["cache_dir"] / f"{_key(work, 'a')}.parquet"
    os.unlink(work / target.format("a"))  # the run's hard link: damaging the entry must not damage run a's copy
    (work / target.format("a")).write_bytes(good)

    # damaged in place (one byte flipped; a cut-short or unfinished entry goes the same way): the link job refuses
    # it, names it and moves it aside
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    failed = run("b")
    assert failed.returncode != 0
    named = f"embedding cache entry {entry.relative_to(work)} is damaged"
    assert named in failed.stdout, failed.stdout[-3000:]
    assert "Run the same command again" in failed.stdout
    assert not (work / target.format("b")).exists() and not entry.exists()
    assert (entry.parent / (entry.name + ".damaged")).exists()
    # the same command: the entry is computed again, the same bytes, and linked
    again = run("b")
    assert again.returncode == 0 and _ran(again).get("embed_compute") == 1, again.stdout[-3000:]
    assert (work / target.format("b")).read_bytes() == good == entry.read_bytes()

    # replaced by another model's vectors of the same texts (here TF-IDF of 8 dimensions, as a run without the
    # cache writes them) with its record rewritten to match: the file does not name the entry's key, so it is
    # refused and named, never linked; the same command then computes it again
    other = tmp_path / "other.parquet"
    texts = work / "results" / "b" / "datasets" / DATASET / "texts.parquet"
    embed_dataset(EmbedJob(texts, other, {"kind": "tfidf", "dim": 8}, {}, seed=1), log=lambda m: None)
    os.unlink(entry)
    entry.write_bytes(other.read_bytes())
    record_file = entry.with_suffix(".json")
    record = json.loads(record_file.read_text())
    record["embeddings"] = {"bytes": entry.stat().st_size, "sha256": _sha(entry)}
    record_file.write_text(json.dumps(record))
    failed = run("c")
    assert failed.returncode != 0 and named in failed.stdout, failed.stdout[-3000:]
    assert f"is the embedding of cache key None (from its metadata), not of {entry.stem}" in failed.stdout
    assert not (work / target.format("c")).exists()
    again = run("c")
    assert again.returncode == 0 and _ran(again).get("embed_compute") == 1, again.stdout[-3000:]
    assert (work / target.format("c")).read_bytes() == good


TWO_DATASETS = {
    DATASET: CONFIG["datasets"][DATASET],
    "TenKGnadClusteringP2P": {"source": "million_posts", "text": "p2p"},
}


def _two_dataset_project(work, cache):
    """A TF-IDF project of two datasets with its cache at ``cache``; the keys computed (cheap local jobs)."""
    cfg = {**CONFIG, "models": {"tfidf": CONFIG["models"]["tfidf"]}, "datasets": TWO_DATASETS,
           "embed": {**CONFIG["embed"], "cache_dir": str(cache)}}  # fmt: skip
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    targets = [f"results/r/embeddings/tfidf/{d}.parquet" for d in TWO_DATASETS]
    run_snakemake(work, "--configfile", "config/cache.yaml", "--config", "run=r", "--cores", "1",
                  *[t.replace(".parquet", ".key.json") for t in targets])  # fmt: skip
    keys = [json.loads((work / t.replace(".parquet", ".key.json")).read_text())["key"] for t in targets]
    return targets, keys


def _start(work, targets, cores=1):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    command = [sys.executable, "-m", "snakemake", "--configfile", "config/cache.yaml", "--config", "run=r",
               "--cores", str(cores), *targets]  # fmt: skip
    return subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _hold(cache, keys):
    cache.mkdir(parents=True, exist_ok=True)
    held = [open(cache / f"{k}.lock", "a") for k in keys]  # noqa: SIM115
    for handle in held:
        fcntl.flock(handle, fcntl.LOCK_EX)
    return held


def _release(held):
    for handle in held:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _wait_for(paths, procs, text="waiting"):
    deadline = time.monotonic() + 600
    while not any(p.exists() and text in p.read_text() for p in paths):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.poll() for p in procs]
        time.sleep(0.3)
    return next(p for p in paths if p.exists() and text in p.read_text())


def test_a_finished_entry_is_never_deleted_by_a_job_planned_before_it_was_finished(tmp_path):
    """Another run finishes an entry after this run planned its compute job: the job keeps it (same inode)."""
    cache = tmp_path / "cache"
    other, work = copy_project(tmp_path / "other"), copy_project(tmp_path / "w")
    targets, keys = _two_dataset_project(other, cache)
    run_snakemake(other, "--configfile", "config/cache.yaml", "--config", "run=r", "--cores", "1", *targets)
    finished = {k: {p: p.read_bytes() for p in cache.glob(f"{k}.*") if p.suffix in (".parquet", ".json")}
                for k in keys}  # fmt: skip
    assert all(len(files) == 3 for files in finished.values()), finished  # entry, timings, record
    for files in finished.values():
        for p in files:
            p.unlink()
    assert _two_dataset_project(work, cache)[1] == keys
    # both entries missing: this run plans both compute jobs and runs them one at a time (--cores 1)
    held = _hold(cache, keys)
    proc = _start(work, targets)
    logs = [work / "logs" / "embed_compute" / f"{k}.log" for k in keys]
    first = _wait_for(logs, [proc])
    later = keys[1 - logs.index(first)]
    for p, data in finished[later].items():  # "the other run" finishes the entry the later job will compute
        p.write_bytes(data)
    inode = (cache / f"{later}.parquet").stat().st_ino
    _release(held)
    output = proc.communicate()[0]
    assert proc.returncode == 0, output[-3000:]
    assert "already in the cache" in (work / "logs" / "embed_compute" / f"{later}.log").read_text(), output[-3000:]
    assert (cache / f"{later}.parquet").stat().st_ino == inode
    assert {p: p.read_bytes() for p in finished[later]} == finished[later]


def test_two_concurrent_runs_sharing_a_cache_compute_each_entry_once(tmp_path):
    """Two project folders (two Snakemake processes, two lock directories) share one cache: both plan every
    entry (none exists when they plan), each entry is computed by one of them, the other keeps it; the same bytes."""
    cache = tmp_path / "shared-cache"
    works = [copy_project(tmp_path / name) for name in ("one", "two")]
    targets, keys = _two_dataset_project(works[0], cache)
    assert _two_dataset_project(works[1], cache)[1] == keys
    held = _hold(cache, keys)  # while both runs plan and start their jobs: both must plan and start the compute
    procs = [_start(w, targets, cores=2) for w in works]
    logs = [w / "logs" / "embed_compute" / f"{k}.log" for w in works for k in keys]
    for log in logs:
        _wait_for([log], procs)
    _release(held)
    outputs = [p.communicate()[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    for key in keys:
        texts = [(w / "logs" / "embed_compute" / f"{key}.log").read_text() for w in works]
        assert sum("computed into the cache" in t for t in texts) == 1, texts
        assert sum("already in the cache" in t for t in texts) == 1, texts
        assert (cache / f"{key}.json").exists()
    for target in targets:
        assert _sha(works[0] / target) == _sha(works[1] / target)
