"""Logging for workflow scripts: everything a job prints goes to its rule's ``log:`` file."""

from __future__ import annotations

import sys
from pathlib import Path


def open_log(path: str | Path):
    """Send stdout and stderr to ``path`` (line-buffered) and return a ``log(message)`` function."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr = handle

    def log(message: str) -> None:
        print(message, file=handle, flush=True)

    return log


def finish() -> None:
    """End a workflow script's process at once, skipping the interpreter's teardown; call it as the last line.

    Freeing every module and object at exit costs a job that loaded scikit-learn ~0.3-0.4 CPU-s (measured with
    benchmarks/job_overhead.py), over a tenth of a small cluster job. The exit handlers registered with
    :mod:`atexit` still run and stdout/stderr (the log) are flushed; every output is already written and closed
    by then (tecb.io's atomic writers). Only reached when the script succeeded: an exception exits as usual.
    """
    import atexit
    import os

    atexit._run_exitfuncs()  # the documented handlers (atexit.register), as a normal exit runs them
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    os._exit(0)
