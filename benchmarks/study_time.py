"""What the training study cost, from the times its jobs measured themselves (issue 42 item 5).

Reads a kept study run's job timings (``runs/{run}/timings/pretrain/{model}/{method}/{dataset}/seed{seed}.json``,
written by each pre-training job: training seconds without the scoring, scoring seconds, the job's total) and its
Table 5 rows' optimizer steps (``pretrain/scores.parquet``), and writes per (model, method) the seconds per step,
the job minutes and the sum, with the run's wall time from its Snakemake log when given (``--logs``: the jobs ran side by side).
Where the run also has Table 6 (``timings/adapt/{model}/{method}/{variant}/{dataset}/seed{seed}.json``, with each
job's steps), the same per (model, method, variant), as the row ``{run} · Table 6`` of the csv.

    python benchmarks/study_time.py runs/real-study-s2s --logs .snakemake/log/...snakemake.log \
        --out benchmarks/study_time.md
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pandas as pd


def job_times(run: Path) -> pd.DataFrame:
    """One row per job: model, method, dataset, seed, train/eval/total seconds and optimizer steps."""
    steps = pd.read_parquet(run / "pretrain" / "scores.parquet")
    steps = steps.groupby(["model", "method", "dataset", "seed"]).optimizer_steps.max()
    rows = []
    for path in sorted((run / "timings" / "pretrain").glob("*/*/*/seed*.json")):
        model, method, dataset = path.parts[-4:-1]
        timing = json.loads(path.read_text())
        seed = int(timing["seed"])
        rows.append(
            {"model": model, "method": method, "dataset": dataset, "seed": seed}
            | {"train_s": sum(e["train_seconds"] for e in timing["epochs"])}
            | {"eval_s": sum(e["eval_seconds"] for e in timing["epochs"]), "total_s": timing["total_seconds"]}
            | {"steps": int(steps[(model, method, dataset, seed)])}
        )
    return pd.DataFrame(rows)


def adapt_job_times(run: Path) -> pd.DataFrame:
    """One row per Table 6 job (its timing file holds its steps): model, method (``method · variant``), dataset,
    seed, train/eval/total seconds and optimizer steps; empty where the run has no Table 6."""
    rows = []
    for path in sorted((run / "timings" / "adapt").glob("*/*/*/*/seed*.json")):
        model, _, _, dataset = path.parts[-5:-1]
        timing = json.loads(path.read_text())
        rows.append(
            {"model": model, "method": f"{timing['method']} · {timing['variant']}", "dataset": dataset}
            | {"seed": int(timing["seed"]), "train_s": timing["train_seconds"], "eval_s": timing["eval_seconds"]}
            | {"total_s": timing["total_seconds"], "steps": int(timing["steps"])}
        )
    return pd.DataFrame(rows)


def per_arm_lines(jobs: pd.DataFrame) -> list[str]:
    """The table of a run's jobs per (model, method, dataset): jobs, steps, median seconds per step, job-minutes."""
    per = jobs.groupby(["model", "method", "dataset"]).agg(
        jobs=("seed", "size"), steps=("steps", "median"), train_s=("train_s", "median"), total_s=("total_s", "sum")
    )
    lines = ["| model | method | dataset | jobs | steps/job | s/step (median) | job-minutes |"]
    lines.append("|---|---|---|---:|---:|---:|---:|")
    for (model, method, dataset), r in per.iterrows():
        per_step = f"{r.train_s / r.steps:.2f}" if r.steps else "n/a"
        lines.append(
            f"| {model} | {method} | {dataset} | {int(r.jobs)} | {int(r.steps)} | {per_step} | {r.total_s / 60:.1f} |"
        )
    return lines


def elapsed_minutes(log) -> float:
    """The run's wall time from Snakemake's log: its ``Elapsed time: H:MM:SS`` line."""
    h, m, sec = re.search(r"Elapsed time: (\d+):(\d+):([\d.]+)", Path(log).read_text()).groups()
    return int(h) * 60 + int(m) + float(sec) / 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="kept study runs (runs/real-study-s2s ...)")
    parser.add_argument("--logs", nargs="*", default=[], help="each run's Snakemake log (its 'Elapsed time' line)")
    parser.add_argument("--out", default="benchmarks/study_time.md")
    args = parser.parse_args()
    lines = [
        "# The training study's cost, measured by its jobs",
        "",
        "Written by `benchmarks/study_time.py` from each kept run's job timings (`timings/pretrain/`: training "
        "without the scoring, the scoring of the checkpoint, the job's total) and Table 5's optimizer steps. "
        "Jobs ran two at a time on 2 CPU cores, one thread each, beside other work on the machine.",
    ]
    totals = []
    for i, run in enumerate(map(Path, args.runs)):
        jobs = job_times(run)
        lines += ["", f"## `{run}`", "", *per_arm_lines(jobs)]
        minutes = round(elapsed_minutes(args.logs[i])) if i < len(args.logs) else None
        wall = f"; wall {minutes} min (Snakemake)" if minutes is not None else ""
        lines += ["", f"Total: {len(jobs)} jobs, {jobs.total_s.sum() / 60:.0f} job-minutes{wall}."]
        totals.append({"run": str(run), "jobs": len(jobs), "job_minutes": round(jobs.total_s.sum() / 60)})
        totals[-1]["wall_minutes"] = minutes
        adapt = adapt_job_times(run)
        if len(adapt):
            lines += ["", f"### `{run}`: Table 6", "", *per_arm_lines(adapt)]
            lines += ["", f"Total: {len(adapt)} jobs, {adapt.total_s.sum() / 60:.0f} job-minutes."]
            totals.append(
                {"run": f"{run} · Table 6", "jobs": len(adapt), "job_minutes": round(adapt.total_s.sum() / 60)}
            )
    Path(args.out).write_text("\n".join(lines) + "\n")
    totals = pd.DataFrame(totals).astype({"wall_minutes": "Int64"})  # Table 6's rows: no wall time of their own
    totals.to_csv(Path(args.out).with_suffix(".csv"), index=False)  # for tagged quotes (README)
    print(Path(args.out).read_text())


if __name__ == "__main__":
    main()
