"""Stale Snakemake locks (tecb.unlock): removed when the run that left them is dead, kept while a run lives.

Real processes: a live one (a sleeping child), a dead one (killed and reaped), a zombie (killed, not reaped), and
a live process with ``snakemake`` in its command line working in the directory.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import small_embed_config

from tecb import unlock

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]


def locked(workdir: Path) -> Path:
    lock = workdir / ".snakemake" / "locks" / "0.output.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("results/x/scores.parquet\n")
    return lock


@pytest.fixture()
def sleeper():
    procs = []

    def start(args=SLEEP, cwd=None):
        proc = subprocess.Popen(args, cwd=cwd)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_no_locks_nothing_to_do(tmp_path):
    assert unlock.remove_stale_locks(tmp_path) == []
    assert unlock.main([str(tmp_path)]) == 0


def test_locks_of_a_dead_run_are_removed(tmp_path, sleeper):
    lock = locked(tmp_path)
    proc = sleeper()
    record = unlock.record_run(tmp_path, pid=proc.pid)
    proc.kill()
    proc.wait()  # dead and reaped
    assert unlock.live_runs(tmp_path) == []
    assert unlock.remove_stale_locks(tmp_path) == [lock]
    assert not lock.exists() and not record.exists()


def test_locks_of_a_live_run_are_kept(tmp_path, sleeper):
    lock = locked(tmp_path)
    proc = sleeper()
    unlock.record_run(tmp_path, pid=proc.pid)
    assert unlock.live_runs(tmp_path) == [f"pid {proc.pid} on {socket.gethostname()}"]
    logged = []
    assert unlock.remove_stale_locks(tmp_path, log=logged.append) == []
    assert lock.exists()
    # the message names the live run and warns against --unlock, which would break it; it never advises it
    assert f"pid {proc.pid}" in logged[0] and "Do NOT run `snakemake --unlock`" in logged[0]
    assert "wait for that run to finish" in logged[0].lower()
    assert unlock.main([str(tmp_path)]) == 1  # the wrapper says so
    proc.kill()
    proc.wait()
    assert unlock.remove_stale_locks(tmp_path) == [lock]


def test_a_zombie_is_dead(tmp_path, sleeper):
    lock = locked(tmp_path)
    proc = sleeper()
    unlock.record_run(tmp_path, pid=proc.pid)
    proc.send_signal(signal.SIGKILL)
    for _ in range(200):  # killed, not reaped: /proc/<pid> stays until wait()
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            break
        import time

        time.sleep(0.05)
    assert unlock.remove_stale_locks(tmp_path) == [lock]


def test_a_reused_pid_is_not_the_run(tmp_path, sleeper):
    """A record whose pid now belongs to another process (another start time) is a dead run."""
    lock = locked(tmp_path)
    proc = sleeper()
    record = unlock.record_run(tmp_path, pid=proc.pid)
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "start_ticks": data["start_ticks"] - 1}))
    assert unlock.remove_stale_locks(tmp_path) == [lock]


def test_a_snakemake_process_in_the_directory_keeps_the_locks(tmp_path, sleeper):
    """A run that has not written its record yet: a process with snakemake in its command line, working here."""
    lock = locked(tmp_path)
    proc = sleeper([sys.executable, "-c", "import time; time.sleep(600)", "snakemake", "--cores", "1"], cwd=tmp_path)
    for _ in range(100):
        if b"snakemake" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
            break
    assert proc.pid in unlock.snakemake_processes(tmp_path)
    assert unlock.remove_stale_locks(tmp_path) == []
    assert lock.exists()
    other = tmp_path / "elsewhere"
    other.mkdir()
    locked(other)
    assert unlock.snakemake_processes(other) == []  # another directory's run does not count


def test_a_record_from_another_host_is_assumed_alive(tmp_path):
    lock = locked(tmp_path)
    runs = tmp_path / unlock.RUNS
    runs.mkdir(parents=True)
    (runs / "login2-99.json").write_text(json.dumps({"host": "login2-not-this-one", "pid": 99, "start_ticks": 1}))
    assert "another machine" in unlock.live_runs(tmp_path)[0]
    assert unlock.remove_stale_locks(tmp_path) == [] and lock.exists()


def test_forget_run(tmp_path):
    record = unlock.record_run(tmp_path)
    assert json.loads(record.read_text())["pid"] > 0
    unlock.forget_run(tmp_path)
    assert not record.exists()


def test_unlock_says_what_it_found(tmp_path, sleeper, capsys):
    """`python -m tecb.unlock` never prints nothing: no locks and no run; a live run whose locks are gone."""
    assert unlock.main([str(tmp_path)]) == 0
    assert "no lock files" in capsys.readouterr().err
    proc = sleeper()
    unlock.record_run(tmp_path, pid=proc.pid)
    assert unlock.main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"pid {proc.pid}" in err and "its locks are gone" in err


def test_a_second_start_beside_a_live_run_is_refused_whatever_it_is(tmp_path, sleeper):
    assert unlock.start_refusal(tmp_path, unlocking=False) == ""  # no live run: any start may go on
    proc = sleeper()
    unlock.record_run(tmp_path, pid=proc.pid)
    second, unlocking = (unlock.start_refusal(tmp_path, unlocking=u) for u in (False, True))
    assert f"pid {proc.pid}" in second and "refused a second run in this folder, whatever its run name" in second
    assert "refused `snakemake --unlock`" in unlocking
    for message in (second, unlocking):  # never advice that breaks the live run
        assert "run `snakemake --unlock`" not in message and "wait for that run to finish" in message.lower()


@pytest.mark.workflow
def test_the_workflow_refuses_unlock_and_a_second_run_beside_a_live_one(tmp_path, sleeper):
    """Snakemake locks only a run's own files, so a run under another run name started beside a live one, and when
    it ended removed the whole lock folder; `snakemake --unlock` printed "Unlocked working directory." right after
    the project's warning. Both are refused at startup while a run lives; a dry run may look."""
    work = copy_project(tmp_path / "w")
    cfg = small_embed_config("TenKGnadClusteringS2S")
    cfg["models"] = {"tfidf": cfg["models"]["tfidf"]}
    (work / "config" / "u.yaml").write_text(yaml.safe_dump({**cfg, "run": "live"}, sort_keys=False))
    lock = locked(work)
    # the live run: a process with snakemake in its command line working in the folder, with its record
    proc = sleeper([sys.executable, "-c", "import time; time.sleep(600)", "snakemake", "--cores", "1"], cwd=work)
    unlock.record_run(work, pid=proc.pid)
    snakemake = ["--configfile", "config/u.yaml", "--cores", "1"]
    unlocked = run_snakemake(work, *snakemake, "--unlock", check=False)
    assert unlocked.returncode != 0 and "refused `snakemake --unlock`" in unlocked.stdout, unlocked.stdout[-3000:]
    assert "Unlocked working directory" not in unlocked.stdout and lock.exists()
    second = run_snakemake(work, *snakemake, "--config", "run=another", check=False)
    assert second.returncode != 0 and "refused a second run in this folder" in second.stdout, second.stdout[-3000:]
    assert lock.exists() and not (work / "results" / "another").exists()
    looked = run_snakemake(work, *snakemake, "-n", check=False)
    assert looked.returncode == 0 and "refused" not in looked.stdout, looked.stdout[-3000:]
    proc.kill()
    proc.wait()
    # the run has ended (killed): the same command starts, its stale locks removed
    assert run_snakemake(work, *snakemake, "-n", check=False).returncode == 0
    assert not lock.exists()
