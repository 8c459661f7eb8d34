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
