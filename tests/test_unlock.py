"""Stale Snakemake locks (tecb.unlock): removed when the run that left them is dead, kept while a run lives.

Real processes: a live one (a sleeping child), a dead one (killed and reaped), a zombie (killed, not reaped), a
live process whose program is Snakemake working in the directory, and what people leave open beside a run (``tail
-f``, ``less``, ``vi``, ``watch``, a Python session holding a ``.snakemake/`` file): no run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
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


def _reap(procs) -> None:
    """Kill the processes a fixture started that still run, and wait for every one."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture()
def sleeper():
    procs = []

    def start(args=SLEEP, cwd=None, env=None):
        proc = subprocess.Popen(args, cwd=cwd, env=env)
        procs.append(proc)
        return proc

    yield start
    _reap(procs)


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


def fake_snakemake(folder: Path) -> Path:
    """A program named ``snakemake`` that only sleeps (a console script, run by its interpreter as the real one)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "snakemake"
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    script.chmod(0o755)
    return script


def started(proc, program: str) -> None:
    """Wait until ``proc`` runs ``program`` (exec done: its /proc command line is the program's)."""
    while proc.poll() is None:
        with contextlib.suppress(OSError):
            if program in Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace"):
                return
        time.sleep(0.01)
    raise AssertionError(f"{program} ended at once")


@pytest.mark.parametrize(
    "how", ["script", "module", "dry_run"], ids=["snakemake ARGS", "python -m snakemake ARGS", "snakemake -n"]
)
def test_a_snakemake_process_in_the_directory_keeps_the_locks(tmp_path, sleeper, how):
    """A run that has not written its record yet (or of a Snakefile without records, or an orphaned job): a process
    whose program is Snakemake, working here. A dry run takes no lock: not a run."""
    work = tmp_path / "work"
    lock = locked(work)
    bin_ = tmp_path / "bin"
    if how == "module":
        (bin_ / "snakemake").mkdir(parents=True)
        (bin_ / "snakemake" / "__main__.py").write_text("import time\ntime.sleep(600)\n")
        env = {**os.environ, "PYTHONPATH": str(bin_)}
        proc = sleeper([sys.executable, "-m", "snakemake", "--cores", "1"], cwd=work, env=env)
    else:
        proc = sleeper([str(fake_snakemake(bin_)), "--cores", "1"] + (["-n"] if how == "dry_run" else []), cwd=work)
    started(proc, "snakemake")
    if how == "dry_run":
        assert unlock.snakemake_processes(work) == []
        assert unlock.remove_stale_locks(work) == [lock]
        return
    assert unlock.snakemake_processes(work) == [proc.pid]
    assert unlock.remove_stale_locks(work) == []
    assert lock.exists()
    other = tmp_path / "elsewhere"
    locked(other)
    assert unlock.snakemake_processes(other) == []  # another directory's run does not count


def test_snakemake_arguments():
    """A program is Snakemake by its own name or module, never by a path among its arguments."""
    got = unlock.snakemake_arguments
    assert got(["snakemake", "--cores", "1"]) == ["--cores", "1"]
    assert got(["/x/.venv/bin/snakemake", "-n"]) == ["-n"]
    assert got(["python3", "-m", "snakemake", "--cores", "1"]) == ["--cores", "1"]
    assert got(["/usr/bin/python3.12", "-X", "utf8", "-u", "-m", "snakemake"]) == []
    assert got(["python3", "/x/.venv/bin/snakemake", "all"]) == ["all"]
    for other in (
        ["tail", "-f", ".snakemake/log/2026-01-01T000000.000000.snakemake.log"],
        ["less", ".snakemake/log/a.snakemake.log"],
        ["vi", ".snakemake/locks/0.output.lock"],
        ["watch", "ls", ".snakemake/locks"],
        ["watch", "snakemake", "--summary"],
        ["python3", "-c", "import snakemake", "snakemake"],
        ["python3", "-m", "tecb.unlock", ".snakemake"],
        ["python3", "tests/snakemake_forks.py", "--serve"],
        ["bash", "-c", "snakemake --cores 1"],
        [],
    ):
        assert got(other) is None, other


LOG = ".snakemake/log/2026-11-29T050000.000000.snakemake.log"
#: what people leave open in the project folder during and after a run: none of them is a run
VIEWERS = {
    "tail -f": ["tail", "-f", LOG],
    "less": ["less", LOG],
    "vi": ["vi", "-n", LOG],
    "watch": ["watch", "-n", "60", "cat", LOG],
    "python holding the log": [sys.executable, "-c", "import sys, time; f = open(sys.argv[1]); time.sleep(600)", LOG],
}


@pytest.fixture()
def viewer():
    """Start a program as a person would, in a terminal of its own (a pty: a pager or an editor stays open only in
    one), in ``cwd``; killed at the end."""
    procs, fds = [], []

    def start(args, cwd):
        main, side = os.openpty()
        fds.extend([main, side])
        env = {**os.environ, "TERM": "xterm", "LESS": "", "PAGER": "less"}
        proc = subprocess.Popen(args, cwd=cwd, stdin=side, stdout=side, stderr=side, env=env, start_new_session=True)
        procs.append(proc)
        started(proc, args[0] if args[0] != sys.executable else "sleep(600)")
        return proc

    yield start
    _reap(procs)
    for fd in fds:
        os.close(fd)


@pytest.mark.parametrize("name", VIEWERS)
def test_a_viewer_of_snakemake_files_is_no_run(tmp_path, viewer, name):
    """`tail -f .snakemake/log/...` left open blocked every start and kept a killed run's locks: its command line
    contains "snakemake". Neither it nor a pager, an editor, a `watch` or a Python session is a run; the report of
    `python -m tecb.unlock` is true with each of them open (no run: locks removed; then nothing to do)."""
    lock = locked(tmp_path)
    (tmp_path / LOG).parent.mkdir(parents=True)
    (tmp_path / LOG).write_text("Building DAG of jobs...\n")
    proc = viewer(VIEWERS[name], cwd=tmp_path)
    time.sleep(0.2)  # let it open the file
    assert proc.poll() is None, f"{name} is not open"
    assert os.path.realpath(f"/proc/{proc.pid}/cwd") == os.path.realpath(tmp_path)
    assert unlock.snakemake_processes(tmp_path) == []
    assert unlock.live_runs(tmp_path) == []
    assert unlock.start_refusal(tmp_path, unlocking=False) == ""
    assert unlock.main([str(tmp_path)]) == 0 and not lock.exists()  # the killed run's locks removed
    assert unlock.main([str(tmp_path)]) == 0  # "no lock files and no live run"
    assert proc.poll() is None


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
