"""The fast lanes' times: `make test-fast` and `make test-plan` (their pytest commands, from the Makefile) run once
each; wall seconds, the CPU seconds of pytest and its processes, and the machine's load average before each run
(the lanes' aims, 60 s and 150 s, are for 2 otherwise idle cores). Writes benchmarks/lane_times.md.

    python benchmarks/lane_times.py [--out benchmarks/lane_times.md]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANES = ("test-fast", "test-plan")


def lane_command(lane: str) -> list[str]:
    """The pytest arguments of a Makefile target (its one `$(BIN)/python -m pytest ...` line)."""
    text = (ROOT / "Makefile").read_text()
    body = re.search(rf"^{re.escape(lane)}:.*\n((?:\t.*\n)+)", text, flags=re.M).group(1)
    line = next(line for line in body.splitlines() if "-m pytest" in line)
    args = line.split("-m pytest", 1)[1].split()
    return [a.strip('"') for a in _joined(args)]


def _joined(args: list[str]) -> list[str]:
    """Shell words of a Makefile line: a double-quoted argument with spaces kept as one."""
    out, open_ = [], None
    for a in args:
        if open_ is not None:
            open_ += " " + a
            if a.endswith('"'):
                out.append(open_)
                open_ = None
        elif a.startswith('"') and not (a.endswith('"') and len(a) > 1):
            open_ = a
        else:
            out.append(a)
    return out


def measure(lane: str) -> dict:
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *lane_command(lane)], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else f"exit {proc.returncode}"
    return {"lane": lane, "summary": summary, "wall": wall, "cpu": cpu, "load": load, "rc": proc.returncode}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "lane_times.md")
    args = parser.parse_args(argv)
    rows = [measure(lane) for lane in LANES]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [
        f"# The fast lanes on {os.cpu_count()} cores at {commit.stdout.strip()} (benchmarks/lane_times.py)",
        "",
        "| lane | pytest's summary | wall s | CPU s | load average before |",
        "|---|---|---:|---:|---:|",
        *(f"| make {r['lane']} | {r['summary']} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['load']:.1f} |" for r in rows),
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(max(r["rc"] for r in rows))


if __name__ == "__main__":
    main()
