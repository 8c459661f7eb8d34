"""The embedding store shared by run folders (config embed.cache_dir): the embed jobs use it themselves
(tecb.embed.cache.serve_from_entry), whatever their granularity, and no rule declares an entry. A second run folder
with the same model files and texts reuses the first one's entries (a model built inside each run folder, tiny-bert,
included: the key is content, never a path) and gets the same bytes as a fresh run without the store; a finished
run plans nothing; a damaged entry is named and computed again; a finished entry is never deleted; runs sharing a
store compute each entry once."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import job_counts, small_embed_config

from tecb.embed.cache import ModelFiles, embedding_key, entry_paths, record_path, serve_from_entry, verify_entry
from tecb.embed.encode import EmbedJob, embed_dataset, read_texts
from tecb.io import read_embeddings, write_texts

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


def _key(path) -> str:
    """The key an embeddings file records (every embeddings file names the key of what decides it)."""
    return read_embeddings(path)[1]["cache_key"]


def _stat(path) -> tuple[int, int]:
    return path.stat().st_ino, path.stat().st_mtime_ns


def _log(work, run, model, dataset=DATASET):
    return (work / "logs" / run / "embed" / model / f"{dataset}.log").read_text()


# --- the library: serve_from_entry ----------------------------------------------------------------------------


def _texts(tmp_path, texts=None, name="texts.parquet"):
    path = tmp_path / name
    texts = texts or [f"Text Nummer {i} über Fußball und Politik {i % 7}" for i in range(40)]
    write_texts(texts, path, provenance={})
    return path


def _computer(texts, key, calls):
    def compute(paths):
        calls.append(paths)
        job = EmbedJob.from_spec(texts, paths["embeddings"], {"kind": "tfidf", "dim": 8}, {}, seed=1, timings=paths["timings"],
                       cache_key=key)  # fmt: skip
        embed_dataset(job, log=lambda m: None)

    return compute


def test_the_key_is_the_content_never_the_path(tmp_path):
    texts = _texts(tmp_path)
    moved = tmp_path / "elsewhere" / "texts.parquet"
    moved.parent.mkdir()
    shutil.copy(texts, moved)
    key = lambda path, **settings: embedding_key(  # noqa: E731
        settings={"kind": "tfidf", "dim": 8, **settings}, seed=1, texts=path, model=ModelFiles(kind="tfidf")
    )
    assert key(texts) == key(moved)  # the same texts at another path: the same key
    assert key(texts) != key(texts, dim=16)  # another setting: another key
    assert key(texts) != key(_texts(tmp_path, ["ein anderer Text", "noch einer"], "changed.parquet"))


def test_an_entry_is_computed_once_linked_to_its_run_and_copied_to_the_next(tmp_path):
    texts, store, calls = _texts(tmp_path), tmp_path / "store", []
    key = "a" * 64
    runs = {r: {"embeddings": tmp_path / r / "e.parquet", "timings": tmp_path / r / "t.json"} for r in "abc"}
    logs = []
    assert serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=runs["a"], log=logs.append)
    entry = {name: tmp_path / p for name, p in entry_paths(store, key).items()}
    assert len(calls) == 1 and verify_entry(store, key) == "" and "computed into the cache" in logs[-3]
    # the run that computed it holds the entry as a hard link
    assert runs["a"]["embeddings"].stat().st_ino == entry["embeddings"].stat().st_ino
    before = _stat(entry["embeddings"])
    # the next run reuses it: nothing computed, a copy of its own (Snakemake then sets the copy's mtime, never the
    # entry's), the entry untouched
    assert not serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=runs["b"], log=logs.append)
    assert len(calls) == 1 and "already in the cache (finished, verified), reused" in logs[-3]
    assert runs["b"]["embeddings"].read_bytes() == entry["embeddings"].read_bytes()
    assert runs["b"]["embeddings"].stat().st_ino != entry["embeddings"].stat().st_ino
    assert _stat(entry["embeddings"]) == before
    # determinism: another store computes the same bytes
    serve_from_entry(tmp_path / "other", key, compute=_computer(texts, key, calls), outputs=runs["c"], log=print)
    assert runs["c"]["embeddings"].read_bytes() == runs["a"]["embeddings"].read_bytes()


def test_a_failing_job_never_deletes_a_finished_entry(tmp_path):
    texts, store, calls = _texts(tmp_path), tmp_path / "store", []
    key = "b" * 64
    out = {"embeddings": tmp_path / "a" / "e.parquet", "timings": tmp_path / "a" / "t.json"}
    serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=out, log=print)
    files = {p: (p.read_bytes(), _stat(p)) for p in store.iterdir() if not p.name.endswith(".lock")}
    (tmp_path / "blocked").write_text("a file where the run's folder should be")
    blocked = {"embeddings": tmp_path / "blocked" / "e.parquet", "timings": tmp_path / "blocked" / "t.json"}
    with pytest.raises(OSError):  # the job fails while putting the entry at its outputs
        serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=blocked, log=print)

    def fails(paths):
        raise RuntimeError("the GPU fell over")

    serve_from_entry(store, key, compute=fails, outputs=out, log=print)  # finished: never computed again
    assert {p: (p.read_bytes(), _stat(p)) for p in store.iterdir() if not p.name.endswith(".lock")} == files
    assert verify_entry(store, key) == "" and len(calls) == 1
    # a job that fails computing a missing entry leaves no finished entry behind, and the next one computes it
    with pytest.raises(RuntimeError):
        serve_from_entry(store, "c" * 64, compute=fails, outputs=out, log=print)
    assert not os.path.exists(record_path(store, "c" * 64))


def test_a_damaged_entry_is_named_moved_aside_and_computed_again(tmp_path):
    texts, store, calls = _texts(tmp_path), tmp_path / "store", []
    key = "d" * 64
    out = {r: {"embeddings": tmp_path / r / "e.parquet", "timings": tmp_path / r / "t.json"} for r in "abc"}
    serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=out["a"], log=print)
    entry = tmp_path / entry_paths(store, key)["embeddings"]
    good = entry.read_bytes()
    os.unlink(entry)  # run a's hard link keeps the good bytes
    entry.write_bytes(good[: len(good) // 2])  # cut short
    logs = []
    assert serve_from_entry(store, key, compute=_computer(texts, key, calls), outputs=out["b"], log=logs.append)
    named = f"embedding cache entry {entry} is damaged"
    assert any(named in m and m.startswith("WARNING") for m in logs), logs
    assert (entry.parent / f"{entry.name}.damaged").read_bytes() == good[: len(good) // 2]
    assert entry.read_bytes() == good == out["b"]["embeddings"].read_bytes() and len(calls) == 2


# --- the workflow --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "tfidf"])
def test_one_entry_has_the_same_bytes_whoever_computes_it(tmp_path, kind):
    """A `kind: local` model in a folder of another name (`tb`, `tbcopy`) and another embed.batch_size gave an entry
    whose vectors were the same but whose metadata differed. Two differently set-up runs compute the same key into
    stores of their own: the entries have the same bytes; the batch size each used is in its timings file."""
    from tecb.embed.spec import directory_digest
    from tecb.embed.tiny_bert import create_tiny_bert

    texts = _texts(tmp_path)
    runs = {}
    for run, folder, batch_size in (("a", "tb", 2), ("b", "tbcopy", 16)):
        settings, model, digest = {"kind": "tfidf", "dim": 8}, ModelFiles(kind="tfidf"), None
        if kind == "local":
            path = tmp_path / run / "models" / folder
            if run == "a":
                create_tiny_bert(path, read_texts(texts), seed=1)
            else:
                shutil.copytree(runs["a"]["path"], path)
            digest = directory_digest(path)["sha256"]
            (tmp_path / run / "digest.json").write_text(json.dumps({"sha256": digest}))
            settings, model = (
                {"kind": "local", "path": str(path)},
                ModelFiles("local", path, tmp_path / run / "digest.json"),
            )
        key = embedding_key(settings=settings, seed=1 if kind == "tfidf" else None, texts=texts, model=model)
        store = tmp_path / run / "store"

        def compute(paths, settings=settings, batch_size=batch_size, digest=digest, key=key):
            options = {"device": "cpu", "batch_size": batch_size}
            job = EmbedJob.from_spec(texts, paths["embeddings"], settings, options, seed=1 if kind == "tfidf" else None,
                           model_digest=digest, timings=paths["timings"], cache_key=key)  # fmt: skip
            embed_dataset(job, log=lambda m: None)

        outputs = {"embeddings": tmp_path / run / "e.parquet", "timings": tmp_path / run / "t.json"}
        assert serve_from_entry(store, key, compute=compute, outputs=outputs, log=lambda m: None)
        runs[run] = {"key": key, "entry": entry_paths(store, key), "path": settings.get("path")}
    a, b = runs["a"], runs["b"]
    assert a["key"] == b["key"]  # the content key: the same
    assert _sha(Path(a["entry"]["embeddings"])) == _sha(Path(b["entry"]["embeddings"]))
    meta = read_embeddings(a["entry"]["embeddings"])[1]
    assert "batch_size" not in meta and "tb" not in json.dumps(meta), meta
    if kind == "local":
        timings = [json.loads(Path(r["entry"]["timings"]).read_text()) for r in (a, b)]
        assert [t["batch_size"] for t in timings] == [2, 16]  # how each ran: outside the embeddings file


@pytest.mark.workflow
def test_second_run_folder_reuses_the_first_ones_embeddings(tmp_path):
    work = copy_project(tmp_path / "w")
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    no_cache = {**CONFIG, "embed": {**CONFIG["embed"], "cache_dir": None}}
    (work / "config" / "nocache.yaml").write_text(yaml.safe_dump(no_cache, sort_keys=False))
    store = work / CONFIG["embed"]["cache_dir"]

    first = _ran(_embed(work, "a"))
    assert first.get("embed") == 2, first  # the ordinary embed jobs, computing into the store
    for model in CONFIG["models"]:
        assert "computed into the cache" in _log(work, "a", model), model
    assert "Nothing to be done" in _embed(work, "a", "-n").stdout  # a finished run plans nothing
    entries = {m: store / f"{_key(work / 'results/a/embeddings' / m / f'{DATASET}.parquet')}.parquet"
               for m in CONFIG["models"]}  # fmt: skip
    before = {m: _stat(entry) for m, entry in entries.items()}

    second = _ran(_embed(work, "b"))
    # the same settings, seed, model files and texts -> the same key: the embed jobs reuse the entries. tiny-bert is
    # built inside each run folder (results/{run}/models/tiny-bert), byte for byte the same: its path is not in the key.
    assert second.get("embed") == 2, second
    run_a, run_b = (work / "results" / r / "embeddings" for r in ("a", "b"))
    for model, entry in entries.items():
        assert "already in the cache (finished, verified), reused" in _log(work, "b", model), model
        assert "computed into the cache" not in _log(work, "b", model), model
        assert _stat(entry) == before[model], model  # neither rewritten nor touched: the same inode and mtime
        assert _sha(run_b / model / f"{DATASET}.parquet") == _sha(run_a / model / f"{DATASET}.parquet") == _sha(entry)
        assert _key(run_b / model / f"{DATASET}.parquet") == entry.stem
        # the entry names its key and no run's folder (tiny-bert was read from results/a/models/tiny-bert): it
        # has the same bytes whichever run computed it
        meta = read_embeddings(entry)[1]
        assert meta["cache_key"] == entry.stem and "results/" not in json.dumps(meta), meta
    # both runs are finished: reusing an entry did not make run a's files look newer than its later jobs
    assert "Nothing to be done" in _embed(work, "b", "-n").stdout
    assert "Nothing to be done" in _embed(work, "a", "-n").stdout

    # the same bytes as a fresh run folder without the store: every embeddings file names its key and no model
    # folder (tiny-bert is read from results/c/models/tiny-bert there)
    fresh = _ran(_embed(work, "c", configfile="config/nocache.yaml"))
    assert fresh.get("embed") == 2, fresh
    run_c = work / "results" / "c" / "embeddings"
    for model in CONFIG["models"]:
        assert _sha(run_c / model / f"{DATASET}.parquet") == _sha(run_b / model / f"{DATASET}.parquet"), model
        assert "cache entry" not in _log(work, "c", model)


@pytest.mark.workflow
@pytest.mark.parametrize("shard_size", [None, 100])
def test_the_store_changes_no_rule_of_the_demos_plan(tmp_path, shard_size):
    """Every target of the demo (the report's runtimes included) plans with the store on, sharded or not, the same
    jobs as without it: the embed jobs use the store themselves."""
    work = copy_project(tmp_path / "p")
    plans = {}
    for cache_dir in (None, str(tmp_path / "cache")):
        # per-dataset jobs here (the demo's embed.batch with the store: tests/test_embed_switches.py)
        embed = {"cache_dir": cache_dir, "shard_size": shard_size, "batch": False}
        (work / "config" / "switches.yaml").write_text(yaml.safe_dump({"embed": embed}))
        proc = run_snakemake(
            work, "-n", "--configfile", "config/demo.yaml", "config/switches.yaml", "--cores", "2", "--resources",
            "gpu=1",
        )  # fmt: skip
        plans[cache_dir is not None] = job_counts(proc.stdout)
    assert plans[True] == plans[False], plans
    writers = plans[True].get("embed", 0) + plans[True].get("embed_merge", 0)
    assert writers == 18 and plans[True].get("report_extras") == 1, plans[True]
    assert bool(plans[True].get("embed_merge")) == bool(shard_size), plans[True]


@pytest.mark.workflow
def test_a_damaged_entry_is_named_and_computed_again_to_the_same_bytes(tmp_path):
    work = copy_project(tmp_path / "w")
    tfidf_only = {**CONFIG, "models": {"tfidf": CONFIG["models"]["tfidf"]}}
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(tfidf_only, sort_keys=False))
    target = f"results/{{}}/embeddings/tfidf/{DATASET}.parquet"
    run = lambda name: run_snakemake(  # noqa: E731
        work, "--configfile", "config/cache.yaml", "--config", f"run={name}", "--cores", "1", target.format(name)
    )
    run("a")
    good = (work / target.format("a")).read_bytes()
    entry = work / CONFIG["embed"]["cache_dir"] / f"{_key(work / target.format('a'))}.parquet"
    os.unlink(work / target.format("a"))  # the run's hard link: damaging the entry must not damage run a's copy
    (work / target.format("a")).write_bytes(good)

    # cut short in place: run b's embed job names it, moves it aside and computes it again, the same bytes
    entry.write_bytes(good[: len(good) // 2])
    assert _ran(run("b")).get("embed") == 1
    named = f"embedding cache entry {entry.relative_to(work)} is damaged"
    assert named in _log(work, "b", "tfidf") and "computed into the cache" in _log(work, "b", "tfidf")
    assert (entry.parent / (entry.name + ".damaged")).exists()
    assert (work / target.format("b")).read_bytes() == good == entry.read_bytes()

    # replaced by another model's vectors of the same texts (TF-IDF of 8 dimensions, as a run without the store
    # writes them: the wrong rows) with its record rewritten to match: the file does not name the entry's key, so
    # it is named and computed again, never used
    other = tmp_path / "other.parquet"
    texts = work / "results" / "b" / "datasets" / DATASET / "texts.parquet"
    embed_dataset(EmbedJob.from_spec(texts, other, {"kind": "tfidf", "dim": 8}, {}, seed=1), log=lambda m: None)
    os.unlink(entry)
    entry.write_bytes(other.read_bytes())
    record_file = entry.with_suffix(".json")
    record = json.loads(record_file.read_text())
    record["embeddings"] = {"bytes": entry.stat().st_size, "sha256": _sha(entry)}
    record_file.write_text(json.dumps(record))
    assert _ran(run("c")).get("embed") == 1
    log = _log(work, "c", "tfidf")
    assert named in log and f"is the embedding of cache key None (from its metadata), not of {entry.stem}" in log
    assert (work / target.format("c")).read_bytes() == good == entry.read_bytes()


TWO_DATASETS = {
    DATASET: CONFIG["datasets"][DATASET],
    "TenKGnadClusteringP2P": {"source": "million_posts", "text": "p2p"},
}


def _two_dataset_project(work, cache):
    """A TF-IDF project of two datasets with its store at ``cache``, its datasets built; its run files' targets
    and their keys (from a first run whose run files and entries are then removed)."""
    cfg = {**CONFIG, "models": {"tfidf": CONFIG["models"]["tfidf"]}, "datasets": TWO_DATASETS,
           "embed": {**CONFIG["embed"], "cache_dir": str(cache)}}  # fmt: skip
    (work / "config" / "cache.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    targets = [f"results/r/embeddings/tfidf/{d}.parquet" for d in TWO_DATASETS]
    run_snakemake(work, "--configfile", "config/cache.yaml", "--config", "run=r", "--cores", "1", *targets)
    keys = [_key(work / t) for t in targets]
    for target, key in zip(targets, keys, strict=True):
        os.unlink(work / target)
        for path in cache.glob(f"{key}.*"):
            if path.suffix != ".lock":
                path.unlink()
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


def _embed_logs(work):
    return [work / "logs" / "r" / "embed" / "tfidf" / f"{d}.log" for d in TWO_DATASETS]


@pytest.mark.workflow
def test_a_finished_entry_is_never_deleted_by_a_job_started_before_it_was_finished(tmp_path):
    """Another run finishes an entry while this run's job waits on its lock: the job reuses it (same inode)."""
    cache = tmp_path / "cache"
    other, work = copy_project(tmp_path / "other"), copy_project(tmp_path / "w")
    targets, keys = _two_dataset_project(other, cache)
    run_snakemake(other, "--configfile", "config/cache.yaml", "--config", "run=r", "--cores", "1", *targets)
    finished = {k: {p: p.read_bytes() for p in cache.glob(f"{k}.*") if p.suffix in (".parquet", ".json")}
                for k in keys}  # fmt: skip
    assert all(len(files) == 3 for files in finished.values()), finished  # entry, timings, record
    assert _two_dataset_project(work, cache)[1] == keys  # (removes the entries)
    # both entries missing: this run's embed jobs run one at a time (--cores 1), the first waits on its lock
    held = _hold(cache, keys)
    proc = _start(work, targets)
    logs = _embed_logs(work)
    first = _wait_for(logs, [proc])
    later = keys[1 - logs.index(first)]
    for p, data in finished[later].items():  # "the other run" finishes the entry the later job will compute
        p.write_bytes(data)
    inode = (cache / f"{later}.parquet").stat().st_ino
    _release(held)
    output = proc.communicate()[0]
    assert proc.returncode == 0, output[-3000:]
    assert "already in the cache" in logs[keys.index(later)].read_text(), output[-3000:]
    assert (cache / f"{later}.parquet").stat().st_ino == inode
    assert {p: p.read_bytes() for p in finished[later]} == finished[later]


@pytest.mark.workflow
def test_two_concurrent_runs_sharing_a_store_compute_each_entry_once(tmp_path):
    """Two project folders (two Snakemake processes, two lock directories) share one store: both start every
    embed job (no entry exists when they start), each entry is computed by one of them, the other reuses it; the
    same bytes."""
    cache = tmp_path / "shared-cache"
    works = [copy_project(tmp_path / name) for name in ("one", "two")]
    targets, keys = _two_dataset_project(works[0], cache)
    assert _two_dataset_project(works[1], cache)[1] == keys
    held = _hold(cache, keys)  # while both runs start their jobs: every job must start and wait
    procs = [_start(w, targets, cores=2) for w in works]
    for log in [log for w in works for log in _embed_logs(w)]:
        _wait_for([log], procs)
    _release(held)
    outputs = [p.communicate()[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    for i, key in enumerate(keys):
        texts = [_embed_logs(w)[i].read_text() for w in works]
        assert sum("computed into the cache" in t for t in texts) == 1, texts
        assert sum("already in the cache" in t for t in texts) == 1, texts
        assert (cache / f"{key}.json").exists()
    for target in targets:
        assert _sha(works[0] / target) == _sha(works[1] / target)
