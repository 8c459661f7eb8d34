"""Do the rules' declared memory requests hold? Every job's declared ``mem_mb`` >= 1.25 x its measured peak RSS.

Two sources of measured peaks:

1. a workflow run (``--run-dir DIR --configfile CFG``): the Snakemake benchmark files of its jobs (``max_rss``,
   MB) paired with each job's declared ``mem_mb`` as ``snakemake -n --forceall`` computes it in that directory
   (so the resource functions see the run's real input files);
2. the paper-size clustering benchmarks (``--paper FILE.md``, written by ``benchmarks/cluster_bench.py``: the peak
   RSS of one reduce or cluster job at n x dim): the declared value is what the workflow's resource functions
   (``tecb.cluster.reduce.job_memory_mb``, ``tecb.cluster.algorithms.job_memory_mb``) give at that shape, with
   the embeddings file taken as n x dim float32 (its size on disk, random vectors do not compress). Only the
   reduce rows and the clusterings of raw embeddings are compared: cluster_bench.py generates the n x dim data
   inside every child, so its rows for clusterings of reduced (n x 2) points measure data that job never loads.

    python benchmarks/check_resources.py --run-dir . --configfile config/demo.yaml \\
        --paper benchmarks/cluster_results.md benchmarks/cluster_results_26k.md --out benchmarks/resources_check.md

Snakemake samples ``max_rss`` every few seconds (a peak between two samples is missed), so the 1.25 margin is
also the allowance for that. Exits 1 if any job fails.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

MARGIN = 1.25
ROOT = Path(__file__).resolve().parent.parent


def declared_from_dry_run(run_dir: Path, configfile: str, snakemake: str, extra: list[str]) -> dict[str, tuple]:
    """``{benchmark file: (rule, declared mem_mb or None)}`` from ``snakemake -n --forceall`` in ``run_dir``."""
    proc = subprocess.run(
        [snakemake, "-n", "--forceall", "--configfile", configfile, "--cores", "1", *extra],
        cwd=run_dir,
        capture_output=True,
        text=True,
        check=True,
    )
    jobs, rule, bench, mem = {}, None, None, None
    for line in proc.stdout.splitlines() + ["rule end:"]:
        if re.match(r"^(local)?rule \w+:", line) or line.startswith("rule end:"):
            if rule and bench:
                jobs[bench] = (rule, mem)
            rule, bench, mem = line.split()[-1].rstrip(":"), None, None
        elif line.strip().startswith("benchmark: "):
            bench = line.split(": ", 1)[1].strip()
        elif line.strip().startswith("resources: "):
            found = re.search(r"\bmem_mb=(\d+)", line)
            mem = int(found.group(1)) if found else None
    return jobs


def run_rows(run_dir: Path, jobs: dict[str, tuple]) -> list[dict]:
    rows = []
    for bench, (rule, declared) in sorted(jobs.items()):
        path = run_dir / bench
        if not path.exists():
            continue
        with open(path) as f:
            record = next(csv.DictReader(f, delimiter="\t"))
        peak = float(record["max_rss"]) if record["max_rss"] not in ("", "NA", "-") else None
        rows.append({"source": "run", "rule": rule, "job": bench, "declared": declared, "peak": peak})
    return rows


def paper_rows(paths: list[str], dim: int) -> list[dict]:
    """Peaks of benchmarks/cluster_bench.py result files vs the declared memory at their n x dim."""
    sys.path.insert(0, str(ROOT / "src"))
    from tecb.cluster import algorithms, reduce
    from tecb.config import layered_config
    from tecb.configcheck import validated_config

    # the paper's config with the schema's defaults filled in (config/config.yaml holds only the paper's choices)
    config = validated_config(layered_config(ROOT, ROOT), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    reductions = config.get("reductions", {})
    algos = config.get("algorithms", {})
    rows = []
    for path in paths:
        text = Path(path).read_text()
        n = int(re.search(r"--n (\d+)", text).group(1))
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) < 5 or cells[0] not in ("reduce", "cluster"):
                continue
            step, reduction, algorithm, peak = cells[0], cells[1], cells[2], float(cells[4])
            if step == "cluster" and reduction != "none":
                continue  # that child also held the n x dim synthetic data, which a job on reduced points never loads
            embeddings_bytes = n * dim * 4
            if step == "reduce":
                spec = dict(reductions.get(reduction, {"method": reduction}))
                method = spec.pop("method")
                extra = reduce.memory_estimate(method, n, dim, **spec) + 2 * embeddings_bytes
                base = 500 + (reduce.UMAP_IMPORTS_MB if method != "pca" else 0)
                declared = int(algorithms.HEADROOM * (base + -(-extra // 1_000_000)))  # reduce.job_memory_mb
                job = f"reduce {reduction} at {n} x {dim}"
            else:
                spec = algos.get(algorithm, {"method": algorithm})
                points_dim = dim if reduction == "none" else 2
                points_bytes = embeddings_bytes if reduction == "none" else n * 2 * 4
                extra = algorithms.memory_estimate(spec["method"], n, points_dim, spec.get("params") or {})
                mb = algorithms.BASE_MB + -(-(extra + 2 * points_bytes) // 1_000_000)
                declared = int(algorithms.HEADROOM * mb)  # algorithms.job_memory_mb
                job = f"cluster {algorithm} on {reduction} at {n} x {points_dim}"
            rows.append({"source": Path(path).name, "rule": step, "job": job, "declared": declared, "peak": peak})
    return rows


def verdict(row: dict) -> str:
    if row["peak"] is None:
        return "no measurement"
    if row["declared"] is None:
        return "FAIL (no mem_mb declared)"
    return "ok" if row["declared"] >= MARGIN * row["peak"] else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", help="directory where the workflow ran (its results/ hold the benchmark files)")
    parser.add_argument("--configfile", help="the config of that run")
    parser.add_argument("--paper", nargs="*", default=[], help="benchmarks/cluster_bench.py result files")
    parser.add_argument("--dim", type=int, default=768, help="embedding dimension of the paper-size benchmarks")
    parser.add_argument("--snakemake", default=str(Path(sys.executable).parent / "snakemake"))
    parser.add_argument("--out", required=True)
    parser.add_argument("extra", nargs="*", help="further snakemake arguments for the dry run (e.g. targets)")
    args = parser.parse_args()

    rows = []
    if args.run_dir:
        jobs = declared_from_dry_run(Path(args.run_dir), args.configfile, args.snakemake, args.extra)
        rows += run_rows(Path(args.run_dir), jobs)
    rows += paper_rows(args.paper, args.dim)
    for row in rows:
        row["verdict"] = verdict(row)
        row["ratio"] = row["declared"] / row["peak"] if row["peak"] and row["declared"] else None

    # one line per (source, rule): the job with the smallest declared/peak ratio, and the count of failures
    worst: dict[tuple, dict] = {}
    counts: dict[tuple, list] = {}
    for row in rows:
        key = (row["source"], row["rule"])
        counts.setdefault(key, [0, 0])
        counts[key][0] += 1
        counts[key][1] += row["verdict"] != "ok"
        ratio = row["ratio"] if row["ratio"] is not None else -1
        if key not in worst or ratio < (worst[key]["ratio"] if worst[key]["ratio"] is not None else -1):
            worst[key] = row
    failed = sum(c[1] for c in counts.values())
    lines = [
        "# Declared memory vs measured peak (mem_mb >= 1.25 x max_rss)",
        "",
        "Command: `python benchmarks/check_resources.py " + " ".join(sys.argv[1:]) + "`",
        "",
        f"**{len(rows)} jobs checked, {failed} fail.** Per rule, the job with the least headroom:",
        "",
        "| source | rule | jobs | failing | tightest job | declared MB | peak MB | declared / peak |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for key, row in sorted(worst.items()):
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "—"
        peak = f"{row['peak']:.0f}" if row["peak"] is not None else "—"
        lines.append(
            f"| {key[0]} | {key[1]} | {counts[key][0]} | {counts[key][1]} | {row['job']} | "
            f"{row['declared'] if row['declared'] is not None else 'none'} | {peak} | {ratio} |"
        )
    failing = [r for r in rows if r["verdict"] != "ok"]
    if failing:
        lines += ["", "Failing jobs:", ""]
        lines += [
            f"- {r['source']}: {r['job']}: declared {r['declared']} MB, peak {r['peak']} MB ({r['verdict']})"
            for r in failing
        ]
    lines.append("")
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
