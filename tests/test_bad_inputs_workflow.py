"""Bad inputs that need a Snakemake run to show (the rest: tests/test_bad_inputs.py, library calls only).

One tiny run (two custom TSV datasets, TF-IDF, k-means on raw embeddings; only the score files as targets) is
made once per module; every test works on a fresh copy of it:

- a source path to a missing file stops the run before any job, naming the key and the path, although the
  dataset built from the old path exists;
- a source file replaced in place (even with an older modification time) or a source path edited rebuilds exactly
  that dataset and what depends on it; an unchanged config plans nothing;
- a corrupt embeddings file is named, with "delete it and re-run", where it is first read: the cluster rule's
  memory estimate;
- a run killed with SIGKILL restarts with the same command: its stale locks are removed; a live run's are not;
  a `tail -f` of the run's log, a pager and an editor left open in the folder block nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import test_unlock
import yaml
from conftest import copy_project, run_snakemake
from helpers import copy_of, expensive, planned_jobs
from test_unlock import VIEWERS, fake_snakemake, started

from tecb import unlock

pytestmark = pytest.mark.workflow
viewer = test_unlock.viewer  # the fixture: programs open in a terminal of their own

RUN = "bw"
DATASETS = ("Alpha", "Beta")
TARGETS = [f"results/{RUN}/scores/tfidf/{d}/none/kmeans.parquet" for d in DATASETS]
TOPICS = {
    "sport": "Tor Spiel Mannschaft Trainer Liga",
    "kultur": "Theater Oper Bühne Roman Museum",
    "wetter": "Regen Sonne Wolken Sturm Schnee",
}


def tsv(seed: int) -> str:
    rows = ["text\tlabel"]
    for i in range(12):
        for label, words in TOPICS.items():
            w = words.split()
            rows.append(f"{w[(i + seed) % 5]} {w[(i * 3 + seed) % 5]} Nummer {i} {seed}\t{label}")
    return "\n".join(rows) + "\n"


def config(**paths) -> dict:
    paths = {"alpha": "data/alpha.tsv", "beta": "data/beta.tsv", **paths}
    return {
        "run": RUN,
        "seed": 42,
        "sources": {name: {"builder": "custom", "path": path} for name, path in paths.items()},
        "datasets": {
            "Alpha": {"source": "alpha", "text_column": "text", "label_column": "label", "n_splits": 2},
            "Beta": {"source": "beta", "text_column": "text", "label_column": "label", "n_splits": 2},
        },
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 4}},
        "embed": {"device": "cpu"},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "cluster": {"threads": 1},
    }


def write_config(work: Path, cfg: dict) -> str:
    (work / "config" / "bw.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return "config/bw.yaml"


def snakemake(work: Path, *args: str, check: bool = True):
    return run_snakemake(work, *args, check=check)


def plan(work: Path, cfg: dict) -> set[tuple]:
    proc = snakemake(work, "-n", "--configfile", write_config(work, cfg), "--cores", "1", *TARGETS)
    return expensive(planned_jobs(proc.stdout))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    work = copy_project(tmp_path_factory.mktemp("bad_inputs") / "proj")
    (work / "data").mkdir()
    (work / "data" / "alpha.tsv").write_text(tsv(1))
    (work / "data" / "beta.tsv").write_text(tsv(2))
    snakemake(work, "--configfile", write_config(work, config()), "--cores", "1", *TARGETS)
    return work


@pytest.fixture()
def work(project, tmp_path) -> Path:
    return copy_of(project, tmp_path)


def test_unchanged_plans_nothing(work):
    proc = snakemake(work, "-n", "--configfile", write_config(work, config()), "--cores", "1", *TARGETS)
    assert "Nothing to be done" in proc.stdout, proc.stdout[-3000:]


def test_missing_source_file_stops_before_any_job(work):
    """The dataset built from data/alpha.tsv exists; a typo in the path is an error, not a silent reuse."""
    cfg = config(alpha="data/alpha.csv")
    proc = snakemake(work, "-n", "--configfile", write_config(work, cfg), "--cores", "1", *TARGETS, check=False)
    assert proc.returncode != 0
    assert "sources.alpha.path" in proc.stdout and "data/alpha.csv does not exist" in proc.stdout, proc.stdout[-3000:]
    assert "Job stats" not in proc.stdout  # no job planned, let alone run


def test_replaced_source_rebuilds_exactly_its_dataset(work):
    """New content with the old modification time (`cp -p` of another file): the content fingerprint notices."""
    src = work / "data" / "alpha.tsv"
    st = src.stat()
    src.write_text(tsv(3))
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns - 10**12))  # older than before
    got = plan(work, config())
    assert got == {
        ("build_dataset", None, "Alpha", None, None),
        ("embed", "tfidf", "Alpha", None, None),
        ("cluster", "tfidf", "Alpha", "none", "kmeans"),
    }, got


def test_edited_path_rebuilds_exactly_its_dataset(work):
    shutil.copy2(work / "data" / "beta.tsv", work / "data" / "beta2.tsv")
    got = plan(work, config(beta="data/beta2.tsv"))
    assert {d for _, _, d, _, _ in got} == {"Beta"}, got
    assert ("build_dataset", None, "Beta", None, None) in got


def test_corrupt_embeddings_named_where_first_read(work):
    emb = work / "results" / RUN / "embeddings" / "tfidf" / "Alpha.parquet"
    emb.write_bytes(emb.read_bytes()[:100])  # truncated (and newer than the scores: the cluster job reruns)
    proc = snakemake(work, "--configfile", write_config(work, config()), "--cores", "1", *TARGETS, check=False)
    assert proc.returncode != 0
    assert str(emb.relative_to(work)) in proc.stdout, proc.stdout[-3000:]
    assert "delete it and re-run" in proc.stdout


def test_a_killed_run_restarts_with_the_same_command(work):
    """SIGKILL to the whole run once it holds its locks; the same command then runs (and finishes) the work."""
    (work / "data" / "alpha.tsv").write_text(tsv(4))
    args = ["--configfile", write_config(work, config()), "--cores", "1", *TARGETS]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", *args],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    locks, records = work / ".snakemake" / "locks", work / ".snakemake" / "tecb-runs"
    while proc.poll() is None and not (locks.is_dir() and any(locks.glob("*.lock"))):
        time.sleep(0.02)
    assert any(records.glob("*.json"))  # written at startup, before the locks
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert any((work / ".snakemake" / "locks").glob("*.lock"))  # what a killed run leaves
    out = snakemake(work, *args)
    assert "stale lock" in out.stdout, out.stdout[-3000:]
    again = snakemake(work, "-n", *args)
    assert "Nothing to be done" in again.stdout


def test_a_live_runs_locks_are_kept(work):
    lock = work / ".snakemake" / "locks" / "0.output.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("\n".join(TARGETS) + "\n")
    # a run that has not written its record: a process whose program is snakemake, working in the folder
    live = subprocess.Popen([str(fake_snakemake(work.parent / "bin")), "--cores", "1"], cwd=work)
    started(live, "snakemake")
    try:
        (work / "data" / "alpha.tsv").write_text(tsv(5))
        proc = snakemake(work, "--configfile", write_config(work, config()), "--cores", "1", *TARGETS, check=False)
        assert proc.returncode != 0 and lock.exists()
        # refused at startup, naming the live run, before Snakemake's own lock message (which advises --unlock)
        assert "a run is alive in" in proc.stdout and "refused a second run" in proc.stdout, proc.stdout[-3000:]
        assert f"pid {live.pid}" in proc.stdout and "cannot be locked" not in proc.stdout
    finally:
        live.kill()
        live.wait()


def test_viewers_of_the_log_block_nothing(work, viewer):
    """`tail -f` of the last run's log, `less` and `vi` on it and a `watch` of the locks left open in the folder (as
    people do while a long run goes on, and after it): a killed run's stale locks are removed, the run starts and
    finishes, and `python -m tecb.unlock` reports no live run, while all of them stay open."""
    logs = sorted((work / ".snakemake" / "log").glob("*.snakemake.log"))
    assert logs, "the module's run left no log"
    log = str(logs[-1].relative_to(work))
    lock = work / ".snakemake" / "locks" / "0.output.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("\n".join(TARGETS) + "\n")  # a killed run's
    open_ = [
        viewer([log if a == VIEWERS[n][-1] else a for a in VIEWERS[n]], cwd=work) for n in ("tail -f", "less", "vi")
    ]
    open_.append(viewer(["watch", "-n", "60", "ls", ".snakemake/locks"], cwd=work))
    (work / "data" / "alpha.tsv").write_text(tsv(6))
    proc = snakemake(work, "--configfile", write_config(work, config()), "--cores", "1", *TARGETS, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "stale lock" in proc.stdout and "a run is alive" not in proc.stdout, proc.stdout[-3000:]
    assert unlock.live_runs(work) == [] and unlock.main([str(work)]) == 0
    assert all(p.poll() is None for p in open_)  # still open throughout


@pytest.mark.parametrize("batch", [False, True], ids=["default", "cluster-batch"])
def test_a_replaced_or_edited_score_is_named_and_recomputed(work, batch):
    """A score file replaced by another configuration's (`cp -p`: its old modification time too) or edited in place
    was put into the tables with rc 0. Each score file records its content's sha256 and which configuration it is
    (tecb.io.score_table); the same command names it, computes it again and writes the same tables."""
    cfg = {**config(), "cluster": {"threads": 1, "batch": batch}}
    args = ["--configfile", write_config(work, cfg), "--cores", "1", *TARGETS, f"results/{RUN}/scores.parquet"]
    snakemake(work, *args)
    scores = work / "results" / RUN / "scores.parquet"
    alpha, beta = (work / t for t in TARGETS)
    kept = {p: p.read_bytes() for p in (scores, alpha, beta)}
    shutil.copy2(alpha, beta)  # Alpha's scores, with Alpha's (older) modification time, in Beta's place
    out = snakemake(work, *args)
    assert f"{TARGETS[1]}: holds the scores of tfidf/Alpha/none/kmeans, not of tfidf/Beta/none/kmeans" in out.stdout
    assert {p: p.read_bytes() for p in kept} == kept, out.stdout[-3000:]  # recomputed: the same bytes, same table
    assert ("rule cluster_batch:" if batch else "rule cluster:") in out.stdout  # the job that writes it
    # an edited number (a valid file, its record kept)
    table = pq.read_table(beta)
    edited = table.set_column(1, table.column_names[1], [[0.999] * len(table)])
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), beta)
    out = snakemake(work, *args)
    assert f"{TARGETS[1]}: its scores are not the ones written" in out.stdout, out.stdout[-3000:]
    assert {p: p.read_bytes() for p in kept} == kept
