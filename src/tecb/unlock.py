"""Stale Snakemake locks: removed when the run that left them is dead, never while a run is alive.

Snakemake locks its working directory (``.snakemake/locks/*.lock``) for the length of a run; a run killed with
``kill -9``, a lost allocation or a closed terminal leaves the locks behind, and every later start refuses to run
until ``snakemake --unlock``. Here a run is *live* when

- a run record ``.snakemake/tecb-runs/<host>-<pid>.json`` names a process that still exists on this host with the
  same start time, or names another host (whose processes cannot be seen from here: assumed alive). The run writes
  it itself at startup, before it looks for other runs and long before it takes its locks (the Snakefile's
  ``start_problem``), and removes it when its process exits; or
- a process on this machine other than the caller and its ancestors *is* a Snakemake run working in this
  directory: its program is ``snakemake`` (``snakemake ...``, ``python -m snakemake ...``, ``python
  .../bin/snakemake ...``) and not one that only looks (``-n``, ``--unlock``, ``--summary``, ...): a run of a
  Snakefile without the records, or an orphaned job of a killed run still writing. A ``tail -f``, ``less``, an
  editor, a ``watch`` or a Python session with ``.snakemake/...`` on its command line is no run.

Only when no run is live are the lock files removed (with the dead runs' records). The Snakefile calls
:func:`remove_stale_locks` at startup, so the README's command simply works again after a kill;
``python -m tecb.unlock`` does the same by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from pathlib import Path

LOCKS = Path(".snakemake") / "locks"
RUNS = Path(".snakemake") / "tecb-runs"
#: Snakemake options that only look (no job, no lock): allowed beside a live run, as a dry run (-n) is
LOOK_ONLY_FLAGS = frozenset(
    {"--lint", "--summary", "-S", "--detailed-summary", "-D", "--list-rules", "-l", "--list-target-rules", "--lt",
     "--dag", "--rulegraph", "--filegraph", "--d3dag", "--report", "--list-changes", "--lc", "--print-compilation"}
)  # fmt: skip
#: Snakemake options of a process that takes no lock: not a run, whatever its folder
NOT_A_RUN_FLAGS = LOOK_ONLY_FLAGS | {"-n", "--dry-run", "--dryrun", "--unlock", "--version", "-v", "--help", "-h"}


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, /proc/<pid>/stat field 22); ``None`` if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # a zombie (exited, not yet reaped) or dead: not running
        return None
    return int(fields[19])


def _alive(pid: int, ticks: int | None) -> bool:
    if Path("/proc").is_dir():
        now = _start_ticks(pid)
        return now is not None and (ticks is None or now == ticks)
    try:  # no /proc (macOS): the pid exists (a reused pid counts as alive: the safe side)
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run_record(workdir: Path, pid: int) -> Path:
    return workdir / RUNS / f"{socket.gethostname()}-{pid}.json"


def record_run(workdir=".", pid: int | None = None) -> Path:
    """Write the run record of process ``pid`` (default: this one); for the Snakefile's ``onstart``."""
    pid = os.getpid() if pid is None else pid
    path = _run_record(Path(workdir), pid)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"host": socket.gethostname(), "pid": pid, "start_ticks": _start_ticks(pid)}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)
    return path


def forget_run(workdir=".", pid: int | None = None) -> None:
    """Remove this run's record; for ``onsuccess``/``onerror``."""
    with contextlib.suppress(FileNotFoundError):
        _run_record(Path(workdir), os.getpid() if pid is None else pid).unlink()


def _ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def snakemake_arguments(argv: list[str]) -> list[str] | None:
    """The arguments of a command line whose program is Snakemake (``snakemake ARGS``, ``python [-X ...] -m
    snakemake ARGS``, ``python .../snakemake ARGS``: a console script run by its interpreter); ``None`` for any
    other program, whatever its arguments name (``tail -f .snakemake/log/...``, ``less``, ``vi``, ``watch``)."""
    if not argv:
        return None
    program = os.path.basename(argv[0])
    if program == "snakemake":
        return argv[1:]
    if not program.startswith("python"):
        return None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return argv[i + 2 :] if argv[i + 1 : i + 2] == ["snakemake"] else None
        if arg in ("-c", "-"):
            return None
        if arg in ("-X", "-W", "-Q"):  # options with a separate value
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return argv[i + 1 :] if os.path.basename(arg) == "snakemake" else None
    return None


def snakemake_processes(workdir=".") -> list[int]:
    """Pids of the Snakemake runs on this machine (not the caller or its ancestors) working in ``workdir``: processes
    whose program is Snakemake (:func:`snakemake_arguments`) with options that take locks, never a process that
    merely names a ``.snakemake/`` path."""
    here = os.path.realpath(workdir)
    mine = _ancestors()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            argv = os.fsdecode((entry / "cmdline").read_bytes()).split("\0")
            args = snakemake_arguments(argv[:-1] if argv and argv[-1] == "" else argv)
            if args is None or NOT_A_RUN_FLAGS & set(args):
                continue
            if os.path.realpath(entry / "cwd") == here:
                found.append(int(entry.name))
        except OSError:
            continue  # gone, or another user's process
    return sorted(found)


def live_runs(workdir=".") -> list[str]:
    """What keeps the locks of ``workdir`` alive: ``["pid 123 on host", ...]`` (empty: no live run)."""
    workdir = Path(workdir)
    live = []
    host = socket.gethostname()
    mine = _ancestors()
    for record in sorted((workdir / RUNS).glob("*.json")):
        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if data.get("host") == host and data.get("pid") in mine:
            continue  # this run's own record (the caller is the run, or started by it)
        if data.get("host") != host:
            live.append(f"pid {data.get('pid')} on host {data.get('host')} (another machine: assumed running)")
        elif _alive(int(data["pid"]), data.get("start_ticks")):
            live.append(f"pid {data['pid']} on {host}")
    live += [f"pid {pid} on {host} (snakemake in this directory)" for pid in snakemake_processes(workdir)]
    return list(dict.fromkeys(live))


def live_run_message(workdir, live: list[str]) -> str:
    """What to do while a live run holds the locks: wait for it or stop it, never ``--unlock`` (Snakemake's own
    message, printed next, suggests it; it would let two runs write the same files)."""
    return (
        f"tecb: {Path(workdir) / LOCKS} is held by a live run ({'; '.join(live)}): locks kept. Do NOT run "
        "`snakemake --unlock` (Snakemake's message below suggests it; this workflow refuses it while the run lives): "
        "it would remove the live run's locks and let two runs write the same files. Wait for that run to finish, or "
        "stop it (Ctrl-C in its terminal, `kill PID`; on SLURM also `scancel` its jobs), then start the same command "
        "again: a killed run's locks are removed at startup."
    )


def start_refusal(workdir=".", *, unlocking: bool) -> str:
    """Why a Snakemake start in ``workdir`` must not go on (``""``: it may), for the Snakefile's startup: a run is
    alive there (:func:`live_runs`). A second run is refused whatever its run name: Snakemake locks only the files
    a run writes, so it would start beside the live one, and when it ended it would remove the whole
    ``.snakemake/locks/`` folder, the live run's locks with its own. ``unlocking`` (``snakemake --unlock``): it
    would remove them at once."""
    live = live_runs(workdir)
    if not live:
        return ""
    what = (
        "refused `snakemake --unlock`: it would remove the live run's locks and let two runs write the same files"
        if unlocking
        else "refused a second run in this folder, whatever its run name: when it ended, Snakemake would remove the "
        "live run's locks with its own (a dry run, -n, is allowed)"
    )
    return (
        f"tecb: a run is alive in {Path(workdir).resolve()} ({'; '.join(live)}): {what}. Wait for that run to "
        "finish, or stop it (Ctrl-C in its terminal, `kill PID`; on SLURM also `scancel` its jobs) and start the "
        "same command again (a killed run's locks are removed at startup), or run in another project folder."
    )


def remove_stale_locks(workdir=".", log=None) -> list[Path]:
    """Remove Snakemake's lock files in ``workdir`` when no run is live (see the module docstring); return them.

    With a live run nothing is removed (Snakemake then refuses to start, as it should).
    """
    workdir = Path(workdir)
    locks = sorted(p for p in (workdir / LOCKS).glob("*.lock")) if (workdir / LOCKS).is_dir() else []
    if not locks:
        return []
    live = live_runs(workdir)
    if live:
        if log:
            log(live_run_message(workdir, live))
        return []
    for lock in locks:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
    mine = {_run_record(workdir, pid).name for pid in _ancestors()}
    for record in (workdir / RUNS).glob("*.json") if (workdir / RUNS).is_dir() else []:
        if record.name not in mine:  # dead runs' records (a live one would have kept the locks), not this run's
            with contextlib.suppress(FileNotFoundError):
                record.unlink()
    if log:
        log(f"tecb: removed {len(locks)} stale lock file(s) of a killed run in {workdir / LOCKS} (no live run)")
    return locks


def main(argv=None) -> int:
    """``python -m tecb.unlock [DIR]``: remove DIR's (default: here) stale Snakemake locks and say what it found;
    exit 1 if a run is alive there (its locks are kept, or were removed by someone else: it runs unprotected)."""
    args = list(sys.argv[1:] if argv is None else argv)
    workdir = Path(args[0]) if args else Path(".")
    locks_dir = workdir / LOCKS
    had = locks_dir.is_dir() and any(locks_dir.glob("*.lock"))

    def say(message):
        print(message, file=sys.stderr)

    removed = remove_stale_locks(workdir, log=say)
    if had:
        return 0 if removed else 1
    live = live_runs(workdir)
    if live:
        say(
            f"tecb: no lock files in {locks_dir}, but a run is alive ({'; '.join(live)}): its locks are gone (removed "
            "by hand or by another run's end), so nothing stops a second run beside it; start none in this folder "
            "until it ends (this workflow refuses one while it lives)"
        )
        return 1
    say(f"tecb: no lock files in {locks_dir} and no live run: nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
