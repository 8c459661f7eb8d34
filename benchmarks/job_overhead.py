"""Work vs per-process overhead of a workflow run, per rule, in CPU seconds (not wall time).

Runs snakemake on a config from scratch (its own run name, so no existing results are touched) with
``benchmarks/cpu_profile/sitecustomize.py`` on PYTHONPATH: every Python process writes its CPU seconds split
into interpreter start, imports, numba compilation (or loading compiled code from numba's cache) and the rest
(the work). This script sums them per rule and writes a Markdown table.

    nice python benchmarks/job_overhead.py --configfile config/quickstart.yaml --run bench-quickstart \
        --out benchmarks/job_overhead_quickstart.md [--cores 2] [TARGET ...]

CPU seconds are used because wall time on a shared machine measures the neighbours. The total is also taken
from outside (``getrusage(RUSAGE_CHILDREN)`` of this script: snakemake and every job it waited for), so CPU
that no profile saw (a process ending without atexit, interpreter teardown) shows as "unattributed".
"""

from __future__ import annotations

import argparse
import collections
import datetime
import glob
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILE_HOOK = ROOT / "benchmarks" / "cpu_profile"


def rule_of(argv0: str) -> str:
    """The rule a process ran: snakemake copies ``workflow/scripts/NAME.py`` to ``.snakemake/scripts/tmpXXXX.NAME.py``."""
    name = os.path.basename(argv0)
    if name in ("snakemake", "__main__.py") or argv0.endswith("snakemake/__main__.py"):
        return "(snakemake: scheduler)"
    match = re.fullmatch(r"tmp[^.]+\.(.+)\.py", name)
    if match:
        return match.group(1)
    return f"(other: {name or '?'})"


def summarize(records: list[dict]) -> dict[str, dict]:
    rows: dict[str, dict] = collections.defaultdict(lambda: collections.Counter())
    for r in records:
        row = rows[rule_of(r["argv0"])]
        row["processes"] += 1
        row["total"] += r["total"]
        row["startup"] += r["startup"]
        row["imports"] += r["imports"]
        row["compile"] += r["compile"]
    for row in rows.values():
        row["work"] = row["total"] - row["startup"] - row["imports"] - row["compile"]
    return rows


def table(rows: dict[str, dict], outside_total: float) -> list[str]:
    lines = [
        "| rule | processes | CPU s | start | imports | numba compile/load | work | overhead % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    sums = collections.Counter()
    for name in sorted(rows, key=lambda n: -rows[n]["total"]):
        r = rows[name]
        overhead = r["startup"] + r["imports"] + r["compile"]
        lines.append(
            f"| {name} | {r['processes']} | {r['total']:.1f} | {r['startup']:.1f} | {r['imports']:.1f} | "
            f"{r['compile']:.1f} | {r['work']:.1f} | {100 * overhead / max(r['total'], 1e-9):.0f} |"
        )
        for key in ("processes", "total", "startup", "imports", "compile", "work"):
            sums[key] += r[key]
    overhead = sums["startup"] + sums["imports"] + sums["compile"]
    lines.append(
        f"| **all profiled** | {sums['processes']} | {sums['total']:.1f} | {sums['startup']:.1f} | "
        f"{sums['imports']:.1f} | {sums['compile']:.1f} | {sums['work']:.1f} | "
        f"{100 * overhead / max(sums['total'], 1e-9):.0f} |"
    )
    lines.append(
        f"| unattributed (teardown, processes without atexit) | | {outside_total - sums['total']:.1f} | | | | | |"
    )
    lines.append(f"| **total (getrusage of the run)** | | {outside_total:.1f} | | | | | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile")
    parser.add_argument("--run", help="run name for this measurement (its results are removed first)")
    parser.add_argument("--out", required=True, help="Markdown file to write")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--snakemake", default=str(Path(sys.executable).parent / "snakemake"))
    parser.add_argument("--label", default="", help="a line saying what was measured (e.g. the commit)")
    parser.add_argument("targets", nargs="*", help="targets (default: the config's `all`); {run} is replaced")
    parser.add_argument(
        "--from-dir",
        help="summarize the records already written to this TECB_CPU_PROFILE_DIR (a run made elsewhere, e.g. the "
        "test suite's demo fixture) instead of running snakemake; --total-cpu gives that run's outside total",
    )
    parser.add_argument("--total-cpu", type=float, default=None)
    args = parser.parse_args()
    if args.from_dir:
        records = [json.loads(Path(f).read_text()) for f in glob.glob(os.path.join(args.from_dir, "*.json"))]
        rows = summarize(records)
        outside = args.total_cpu if args.total_cpu is not None else sum(r["total"] for r in rows.values())
        intro = [
            f"Summarized by `python benchmarks/job_overhead.py --from-dir DIR ...` from the per-process records of "
            f"a run made with `benchmarks/cpu_profile` on PYTHONPATH and TECB_CPU_PROFILE_DIR=DIR "
            f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
            f"{os.cpu_count()} CPUs). CPU seconds, as below."
        ]
        _publish(args.out, args.label or args.from_dir, intro, rows, outside)
        return

    for folder in (ROOT / "results" / args.run, ROOT / "logs" / args.run):
        shutil.rmtree(folder, ignore_errors=True)
    profile_dir = tempfile.mkdtemp(prefix="tecb-cpu-profile-")
    env = dict(os.environ, TECB_CPU_PROFILE_DIR=profile_dir)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROFILE_HOOK), env.get("PYTHONPATH", "")) if p)
    targets = [t.replace("{run}", args.run) for t in args.targets]
    cmd = [
        args.snakemake,
        *targets,
        "--configfile",
        args.configfile,
        "--config",
        f"run={args.run}",
        "--cores",
        str(args.cores),
        "--resources",
        "gpu=1",
        "--quiet",
        "rules",
    ]
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - start
    outside = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    records = [json.loads(Path(f).read_text()) for f in glob.glob(os.path.join(profile_dir, "*.json"))]
    shutil.rmtree(profile_dir)
    intro = [
        f"Command: `python benchmarks/job_overhead.py --configfile {args.configfile} --run {args.run} "
        f"--cores {args.cores} --out {args.out}{' ' + ' '.join(args.targets) if args.targets else ''}` "
        f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} CPUs{', ' + args.label if args.label else ''}).",
        "CPU seconds (user + system, every thread; `resource.getrusage`), not wall time: the machine may be shared "
        f"(this run's wall time, {wall:.0f} s, is not a measure of the workflow). Per process: **start** = the "
        "interpreter up to `sitecustomize`; **imports** = inside `import` statements (lazy ones in library "
        "functions included); **numba compile/load** = numba compiling a function or loading it from its "
        "on-disk cache; **work** = the rest. Overhead = start + imports + compile/load.",
    ]
    _publish(args.out, f"`{args.configfile}`", intro, summarize(records), outside)


def _publish(out: str, title: str, intro: list[str], rows: dict, outside: float) -> None:
    """The summary (title, ``intro`` paragraphs, the table of :func:`table`) written to ``out`` and printed."""
    jobs = sum(r["processes"] for name, r in rows.items() if not name.startswith("("))
    head = [f"# Work vs process overhead: {title} ({jobs} job processes)", ""]
    text = "\n".join([*head, *[line for para in intro for line in (para, "")], *table(rows, outside), ""])
    Path(out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
