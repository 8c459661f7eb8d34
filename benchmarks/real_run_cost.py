"""What a kept run cost, per rule, from the ``benchmark:`` files its jobs wrote (Snakemake's own measurements).

Reads ``runs/{run}/benchmarks/**/*.tsv`` (one per job of a rule with ``benchmark:``: wall seconds ``s`` and
``cpu_time``, user + system seconds of the job's processes) and writes per rule the jobs, the job-minutes of wall
time and the CPU-minutes, and their sums, as markdown and CSV (the README quotes the CSV). A job's wall time
depends on what else ran beside it; its CPU time much less.

    python benchmarks/real_run_cost.py runs/real --out benchmarks/real_run_cost.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def job_costs(run: Path) -> pd.DataFrame:
    """One row per benchmarked job: its rule (the folder under ``benchmarks/``), wall and CPU seconds."""
    rows = []
    for path in sorted((run / "benchmarks").rglob("*.tsv")):
        measured = pd.read_csv(path, sep="\t")
        rule = path.relative_to(run / "benchmarks").parts[0]
        rows.append({"rule": rule, "wall_s": float(measured["s"].sum()), "cpu_s": float(measured["cpu_time"].sum())})
    if not rows:
        raise FileNotFoundError(f"{run}/benchmarks: no benchmark files (keep the run with tecb.report.kept)")
    return pd.DataFrame(rows)


def per_rule(jobs: pd.DataFrame, run_name: str) -> pd.DataFrame:
    """Jobs, job-minutes and CPU-minutes per rule, largest first, with the run's total as the last row."""
    table = jobs.groupby("rule").agg(jobs=("rule", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"))
    table = table.sort_values("cpu_s", ascending=False)
    table.loc["all benchmarked jobs"] = [len(jobs), jobs.wall_s.sum(), jobs.cpu_s.sum()]
    out = pd.DataFrame(
        {
            "jobs": table.jobs.astype(int),
            "job_minutes": (table.wall_s / 60).round(1),
            "cpu_minutes": (table.cpu_s / 60).round(1),
        }
    )
    out.index = [f"{run_name} · {rule}" for rule in out.index]
    out.index.name = "run · rule"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a kept run (runs/real)")
    parser.add_argument("--out", default="benchmarks/real_run_cost.md")
    args = parser.parse_args()
    run = Path(args.run)
    table = per_rule(job_costs(run), run.as_posix())
    out = Path(args.out)
    table.to_csv(out.with_suffix(".csv"))
    lines = [
        f"# What `{run.as_posix()}` cost, per rule",
        "",
        f"Written by `benchmarks/real_run_cost.py {run.as_posix()}` from the `benchmark:` files Snakemake wrote for "
        "each job (kept with the run). Job-minutes: each job's wall time, summed (jobs ran side by side on shared "
        "cores, so this is not the run's wall time); CPU-minutes: user + system time of each job's processes. A job "
        "that found its result in the embedding cache (a run resumed after an interruption) counts what the reuse cost.",
        "",
        "| rule | jobs | job-minutes | CPU-minutes |",
        "|---|---:|---:|---:|",
        *(
            f"| {row.Index.split(' · ', 1)[1]} | {row.jobs} | {row.job_minutes:.1f} | {row.cpu_minutes:.1f} |"
            for row in table.itertuples()
        ),
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(out)


if __name__ == "__main__":
    main()
