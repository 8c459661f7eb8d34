"""Where a whole test run's CPU goes: per rule and per test file, from every Python process's own record.

Run the suite with ``benchmarks/cpu_profile`` first on PYTHONPATH and TECB_CPU_PROFILE_DIR set (each Python
process, the pytest workers, snakemake and every job, writes its CPU seconds split into start, imports, numba
compile/load and the rest, and the test that started it), then

    python benchmarks/suite_cpu.py --from-dir DIR --keep benchmarks/suite_cpu_X.jsonl.gz --title T --out X.md

keeps the records (one JSON line each: the rule or kind of process, the test file, the seconds) and writes the
tables; ``--records FILE.jsonl.gz`` renders them again from the kept file (tests/test_benchmark_durations.py holds
the kept table to that render).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
from pathlib import Path

from job_overhead import rule_of  # this folder is first on sys.path when the script runs

WORKER = "(python -c: the pytest workers, the tests' own python -c)"
FIELDS = ("total", "startup", "imports", "compile")


def reduce_record(record: dict) -> dict:
    """A process's record as kept: what ran (a rule, snakemake's scheduler, a pytest worker), under which test file."""
    kind = rule_of(record["argv0"])
    if record["argv0"] == "-c":  # pytest-xdist starts its workers with `python -c ...`
        kind = WORKER
    test = record.get("test", "")
    return {"kind": kind, "file": test.split("::", 1)[0] if test else ""} | {k: round(record[k], 3) for k in FIELDS}


def read_dir(folder: str) -> list[dict]:
    records = [reduce_record(json.loads(Path(f).read_text())) for f in glob.glob(os.path.join(folder, "*.json"))]
    return sorted(records, key=lambda r: (r["file"], r["kind"], r["total"]))


def render(records: list[dict], *, title: str, top: int = 25) -> str:
    """The Markdown page: totals, then CPU per kind of process and per test file (the setup's pip excluded)."""
    records = [r for r in records if r["file"] or r["kind"] == WORKER]  # pip and the like: the setup, not a test
    total = sum(r["total"] for r in records)
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in records:
        row = kinds[r["kind"]]
        row["processes"] += 1
        for key in FIELDS:
            row[key] += r[key]
        files[r["file"] or "(pytest workers)"][r["kind"]] += r["total"]
    jobs = [r for r in records if not r["kind"].startswith("(")]
    job_cpu = sum(r["total"] for r in jobs)
    job_overhead = sum(r["startup"] + r["imports"] + r["compile"] for r in jobs)
    lines = [
        f"# {title}",
        "",
        f"CPU seconds of every profiled Python process of the test run: {total:.0f} s ({total / 60:.1f} min) in "
        f"{len(records)} processes.",
        "",
        f"Workflow jobs: {len(jobs)} processes, {job_cpu:.0f} s ({job_cpu / 60:.1f} min), {job_overhead:.0f} s of it "
        f"overhead ({100 * job_overhead / max(job_cpu, 1e-9):.0f} %).",
        "",
        "Overhead = the interpreter's start, imports and numba compiling or loading (benchmarks/cpu_profile).",
        "",
        "| process | processes | CPU s | share | overhead s | overhead % |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    order = sorted(kinds, key=lambda n: (-kinds[n]["total"], n))
    for name in order[:top]:
        row = kinds[name]
        overhead = row["startup"] + row["imports"] + row["compile"]
        lines.append(
            f"| {name} | {row['processes']} | {row['total']:.1f} | {100 * row['total'] / total:.1f}% | "
            f"{overhead:.1f} | {100 * overhead / max(row['total'], 1e-9):.0f} |"
        )
    if order[top:]:
        lines.append(f"| {len(order[top:])} other kinds | | {sum(kinds[n]['total'] for n in order[top:]):.1f} | | | |")
    lines += ["", "| test file | CPU s | share | largest parts |", "|---|---:|---:|---|"]
    order = sorted(files, key=lambda n: (-sum(files[n].values()), n))
    for name in order[:top]:
        cpu = sum(files[name].values())
        parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(files[name].items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        lines.append(f"| `{name}` | {cpu:.1f} | {100 * cpu / total:.1f}% | {parts} |")
    if order[top:]:
        lines.append(f"| {len(order[top:])} other files | {sum(sum(files[n].values()) for n in order[top:]):.1f} | | |")
    return "\n".join(lines) + "\n"


def write_records(path: str, records: list[dict]) -> None:
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode())


def read_records(path: str) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-dir", help="a TECB_CPU_PROFILE_DIR of a test run")
    source.add_argument("--records", help="a kept .jsonl.gz of records")
    parser.add_argument("--keep", help="with --from-dir: write the records here (.jsonl.gz)")
    parser.add_argument("--title", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    records = read_dir(args.from_dir) if args.from_dir else read_records(args.records)
    if args.keep:
        write_records(args.keep, records)
    text = render(records, title=args.title)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
