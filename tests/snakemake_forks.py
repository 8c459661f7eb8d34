"""``python -m snakemake`` runs as forks of one interpreter (tests only: conftest.run_snakemake's runs in the
test's own environment).

The parent imports snakemake's command line once, with its plugins (the parser that ``snakemake.cli.main`` builds
loads every installed executor, storage, logger, report and scheduler plugin; the project's logger plugin imports
``tecb``), then forks one child per run: the child changes to the run's folder, takes the run's environment, sends
its stdout and stderr to the run's log file (stdin from /dev/null) and calls ``snakemake.cli.main`` with the run's
arguments, the function ``python -m snakemake`` calls (with the one value snakemake takes from the working folder
when it is imported, ``Workflow._rundir``, taken again); at its end it runs the exit handlers the interpreter would.
So each run pays only its own work, not Python's start and snakemake's imports (~2 CPU-s a process). The children
run one after the other.

``python snakemake_forks.py``: reads a JSON list of ``{"cwd": ..., "args": [...], "log": ..., "env": {...}}`` on
stdin, prints the JSON list of exit codes. ``python snakemake_forks.py --serve``: one such run per line of stdin,
its exit code a line on stdout, until stdin closes.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import traceback
from pathlib import Path


def _child(run: dict, entry: str) -> int:
    from snakemake.cli import main

    os.chdir(run["cwd"])
    sys.path[0] = os.getcwd()  # `python -m` puts the starting folder first
    # snakemake.workflow.Workflow takes its run directory (the log's "Run directory") when it is imported
    from snakemake.workflow import Workflow

    Workflow._rundir = str(Path.cwd().absolute())
    if "env" in run:
        os.environ.clear()
        os.environ.update(run["env"])
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    fd = os.open(run["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = [entry, *run["args"]]  # as `python -m snakemake` sets it
    try:
        main()
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _entry() -> str:
    """snakemake/__main__.py (sys.argv[0] under ``python -m snakemake``), after every plugin registry is filled."""
    from importlib.util import find_spec

    from snakemake.cli import get_argument_parser

    get_argument_parser()  # what main() does first
    return find_spec("snakemake.__main__").origin


def run_forked(run: dict, entry: str) -> int:
    """One run in a forked child; its exit code."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = _child(run, entry)
            atexit._run_exitfuncs()  # what the interpreter runs when `python -m snakemake` exits
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def serve() -> None:
    entry = _entry()
    for line in sys.stdin:
        print(run_forked(json.loads(line), entry), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        entry = _entry()
        json.dump([run_forked(run, entry) for run in json.load(sys.stdin)], sys.stdout)
