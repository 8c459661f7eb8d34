"""Many ``python -m snakemake`` runs from one interpreter (tests only, through conftest.run_snakemake_many).

The parent imports snakemake's command line once, with its plugins (the parser that ``snakemake.cli.main`` builds
loads every installed executor, storage, logger, report and scheduler plugin; the project's logger plugin imports
``tecb``), then forks one child per run: the child changes to the run's folder, sends its stdout and stderr to the
run's log file and calls ``snakemake.cli.main`` with the run's arguments, the function ``python -m snakemake``
calls, in the same environment. So each run pays only its own work, not Python's start and snakemake's imports
(~1.5-2 CPU-s a process). The children run one after the other.

Reads a JSON list of ``{"cwd": ..., "args": [...], "log": ...}`` on stdin; prints the JSON list of exit codes.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import traceback


def _child(run: dict, entry: str) -> int:
    from snakemake.cli import main

    os.chdir(run["cwd"])
    sys.path[0] = os.getcwd()  # `python -m` puts the starting folder first
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


def _run_all(runs: list[dict]) -> list[int]:
    from importlib.util import find_spec

    from snakemake.cli import get_argument_parser

    entry = find_spec("snakemake.__main__").origin
    get_argument_parser()  # every plugin registry filled, as main() does first
    codes = []
    for run in runs:
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
        codes.append(os.waitstatus_to_exitcode(status))
    return codes


if __name__ == "__main__":
    json.dump(_run_all(json.load(sys.stdin)), sys.stdout)
