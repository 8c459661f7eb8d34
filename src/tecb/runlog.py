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
