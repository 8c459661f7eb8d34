"""Where a test run's time goes, per test file: the sum of pytest's ``--durations`` pieces (setup, call, teardown).

    python benchmarks/test_durations.py LOG --title "..." --out benchmarks/test_durations_by_file_4e44832.md

LOG is the output of ``pytest --durations=0`` (or ``--durations=N``: then only the N longest pieces are summed,
which the table says). The pieces are wall seconds on a pytest-xdist worker: two workers share two cores, so a
file's sum is its share of the run's wall time on one worker, not CPU seconds.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

PIECE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+)")
SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed).*) in ([\d.]+)s")
TIME_V = re.compile(r"^\s*(User time|System time) \(seconds\): ([\d.]+)")


def per_file(lines) -> tuple[dict[str, float], dict[str, int], list[tuple[float, str, str]]]:
    """Seconds and test pieces per file, and every piece (seconds, phase, node id)."""
    seconds: dict[str, float] = collections.Counter()
    pieces: dict[str, int] = collections.Counter()
    every = []
    for line in lines:
        match = PIECE.match(line)
        if match:
            value, phase, node = float(match.group(1)), match.group(2), match.group(3)
            name = node.split("::", 1)[0]
            seconds[name] += value
            pieces[name] += 1
            every.append((value, phase, node))
    return dict(seconds), dict(pieces), every


def render(log: Path, *, title: str, top: int) -> str:
    lines = log.read_text().splitlines()
    seconds, pieces, every = per_file(lines)
    summary = next((f"{m.group(1)} in {m.group(3)} s" for m in map(SUMMARY.match, lines) if m), "no summary line")
    total = sum(seconds.values())
    out = [f"# {title}", "", f"From `{log.name}` (`pytest --durations`): {summary}.", ""]
    cpu = dict(m.groups() for m in map(TIME_V.match, lines) if m)
    if len(cpu) == 2:
        total_cpu = float(cpu["User time"]) + float(cpu["System time"])
        out += [f"CPU of pytest and every process it waited for (`/usr/bin/time -v`): {total_cpu / 60:.1f} min.", ""]
    if not every:  # a log without --durations: its summary and CPU only
        return "\n".join(out) + "\n"
    out += [
        f"Sum of all {len(every)} pieces listed: {total / 60:.1f} worker-minutes (wall seconds on a pytest-xdist "
        "worker, two workers sharing two cores).",
        "",
        "| file | pieces | seconds | share | cumulative share |",
        "|---|---:|---:|---:|---:|",
    ]
    running = 0.0
    for name, value in sorted(seconds.items(), key=lambda kv: -kv[1])[:top]:
        running += value
        out.append(f"| `{name}` | {pieces[name]} | {value:.1f} | {value / total:.1%} | {running / total:.1%} |")
    rest = total - running
    if rest > 0:
        out.append(f"| {len(seconds) - top} other files | | {rest:.1f} | {rest / total:.1%} | 100.0% |")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--title", required=True)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.write_text(render(args.log, title=args.title, top=args.top))


if __name__ == "__main__":
    main()
