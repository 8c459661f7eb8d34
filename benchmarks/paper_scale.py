"""The paper-scale dress rehearsal (config/paper-scale.yaml, issue 56) measured against the projection, per job.

Reads what the run left: Snakemake's log of it (each job's rule, log file, benchmark file, threads and the
``mem_mb`` it declared, as printed when the job started), the per-job records of
``benchmarks/paper_scale_monitor.py`` (the kernel's peak RSS, ``VmHWM``, and CPU seconds of each job's process)
and the jobs' Snakemake benchmark files (``max_rss`` sampled, ``cpu_time``). Sets every reduce and cluster job of
the 768-d model beside ``benchmarks/paper_run_projection.md``'s projection of that job at the same split sizes
(its fitted per-split costs and measured per-job fixed costs, the "now" variant, warm numba cache), and writes
the comparison (``--out``) and one record per job (``--records``, CSV).

    python benchmarks/paper_scale.py --log RUN.log --jobs JOBS.jsonl --out benchmarks/paper_scale.md \\
        --records benchmarks/paper_scale_jobs.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
MODEL = "tfidf-768"  # the model the projection's 768-d numbers apply to
RATIO_LIMIT = 1.3


def job_blocks(log_text: str) -> dict[str, dict]:
    """``{log file: job}`` from Snakemake's output: rule, benchmark, wildcards, threads, declared mem_mb, start
    time (the last start of a log file wins: a job restarted by a second invocation)."""
    jobs, current, stamp = {}, None, None
    for line in log_text.splitlines():
        if re.match(r"^\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]$", line):
            stamp = datetime.datetime.strptime(line.strip("[]"), "%a %b %d %H:%M:%S %Y")
        elif re.match(r"^(local)?rule \w+:$", line):
            current = {"rule": line.split()[-1].rstrip(":"), "started": stamp}
        elif current is not None and line.startswith("    "):
            key, _, value = line.strip().partition(": ")
            if key in ("log", "benchmark", "wildcards", "threads"):
                current[key] = value
            elif key == "resources":
                found = re.search(r"\bmem_mb=(\d+)", value)
                current["mem_mb"] = int(found.group(1)) if found else None
                if "log" in current:
                    jobs[current["log"].split(",")[0].strip()] = current
        elif not line.startswith("    "):
            current = None if not line.startswith(("rule", "localrule")) else current
    return jobs


def monitor_records(path: Path) -> dict[str, dict]:
    """The monitor's last record of each log file."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out[rec["log"]] = rec
    return out


def benchmark_row(path: Path) -> dict | None:
    if not path.exists():
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return rows[-1] if rows else None


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def split_sizes() -> dict[str, list[int]]:
    """Split sizes per dataset, as the generator writes them (:func:`tecb.data.paper_scale.split_plan`)."""
    from tecb.data import paper_scale

    table = paper_scale.table1()
    return {name: [s for s, _, _ in paper_scale.split_plan(table[name])] for name in paper_scale.DATASETS}


def projection(projection_md: Path):
    """``cost(job wildcards) -> projected CPU-s`` (fixed + per-split work) from the projection's raw numbers."""
    import paper_run_projection as prj

    raw = json.loads(projection_md.read_text(encoding="utf-8").split("Raw numbers: ", 1)[1].strip())
    fits = {tuple(k.split(" | ", 1)): v for k, v in raw["fits"].items()}  # "step | variant"
    fixed = raw["fixed"]
    sizes = split_sizes()

    def cost(w: dict, cold: bool = False) -> tuple[str, float]:
        n_list = sizes[w["dataset"]]
        if "reduction" in w and "algorithm" not in w:
            r = w["reduction"]
            work = sum(prj.step_cost(fits, f"reduce {r}", "after", n) for n in n_list)
            cache = "cold" if cold else "warm"
            kind = "reduce pca" if r == "pca" else f"reduce {r} | {prj.routes_of(n_list)} | {cache}"
            return f"reduce {r}", fixed[kind]["fixed"][0] + work
        a, r = w["algorithm"], w["reduction"]
        work = sum(prj.step_cost(fits, f"{a} on {r}", "after", n) for n in n_list)
        kind = f"cluster {prj.METHODS[a]} on {'none' if r == 'none' else '2-D'}"
        return f"cluster {a} on {r}", fixed[kind]["fixed"][0] + work

    return cost


def dataset_rows(run_dir: Path) -> list[str]:
    """Table 1 of the built datasets (``results/paper-scale/datasets``) beside the paper's."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from tecb.data import paper_scale

    table = paper_scale.table1()
    lines = [
        "| dataset | unique texts (paper) | splits (paper) | split sizes (paper) | classes (paper) "
        "| mean chars (paper) | split items |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in paper_scale.DATASETS:
        folder = run_dir / "results" / "paper-scale" / "datasets" / name
        if not (folder / "splits.parquet").exists():
            continue
        splits, texts = pq.read_table(folder / "splits.parquet"), pq.read_table(folder / "texts.parquet")
        sizes, classes = [], []
        for split in pc.unique(splits["split"]).to_pylist():
            rows = splits.filter(pc.equal(splits["split"], split))
            sizes.append(rows.num_rows)
            classes.append(len(pc.unique(rows["label"])))
        chars = pc.mean(pc.utf8_length(texts["text"])).as_py()
        r = table[name]
        lines.append(
            f"| {name} | {texts.num_rows:,} ({r['unique_samples']:,}) | {len(sizes)} ({r['splits']}) "
            f"| {min(sizes):,}..{max(sizes):,} ({r['split_size_min']:,}..{r['split_size_max']:,}) "
            f"| {min(classes)}..{max(classes)} ({r['classes_min']}..{r['classes_max']}) | {chars:.0f} "
            f"({r['avg_chars']}) | {splits.num_rows:,} |"
        )
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", required=True, help="Snakemake's output of the run")
    ap.add_argument("--jobs", required=True, help="paper_scale_monitor.py's records")
    ap.add_argument("--run-dir", default=str(ROOT))
    ap.add_argument("--projection", default=str(ROOT / "benchmarks" / "paper_run_projection.md"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "paper_scale.md"))
    ap.add_argument("--records", default=str(ROOT / "benchmarks" / "paper_scale_jobs.csv"))
    ap.add_argument("--note", default="", help="a sentence on the run (machine load, how far it got)")
    args = ap.parse_args(argv)
    run_dir = Path(args.run_dir)
    blocks = job_blocks(Path(args.log).read_text(encoding="utf-8"))
    seen = monitor_records(Path(args.jobs))
    cost = projection(Path(args.projection))
    # a UMAP reduce job that started before the first one had ended compiled umap's code itself (cold cache)
    umap_ends = [r["last_seen"] for log, r in seen.items() if "/reduce/" in log and "umap" in Path(log).name]
    cache_filled = min(umap_ends, default=float("inf"))
    records = []
    for log, job in sorted(blocks.items()):
        rec = seen.get(log)
        bench = benchmark_row(run_dir / job["benchmark"]) if job.get("benchmark") else None
        if rec is None and bench is None:
            continue  # not run (yet)
        finished = (run_dir / log).exists() and bench is not None or rec is not None
        wildcards = dict(kv.split("=", 1) for kv in job.get("wildcards", "").split(", ") if "=" in kv)
        peak = max(filter(None, [rec and rec.get("peak_rss_mb"), bench and _float(bench.get("max_rss"))]), default=None)
        row = {
            "rule": job["rule"],
            "log": log,
            "model": wildcards.get("model", ""),
            "dataset": wildcards.get("dataset", ""),
            "reduction": wildcards.get("reduction", ""),
            "algorithm": wildcards.get("algorithm", ""),
            "threads": int(job.get("threads", 1)),
            "mem_mb_declared": job.get("mem_mb"),
            "peak_rss_mb": round(peak, 1) if peak else None,
            "cpu_s": round(rec["cpu_s"], 2) if rec else _float(bench.get("cpu_time")),
            "cpu_s_snakemake": _float(bench.get("cpu_time")) if bench else None,
            "wall_s": _float(bench.get("s")) if bench else round(rec["last_seen"] - rec["first_seen"], 1),
            "kind": "",
            "projected_cpu_s": None,
            "cold_cache": False,
            "finished": bool(finished),
        }
        if row["model"] == MODEL and job["rule"] in ("reduce", "cluster"):
            cold = job["rule"] == "reduce" and rec is not None and rec["first_seen"] < cache_filled
            row["kind"], projected = cost(wildcards, cold=cold and "umap" in wildcards.get("reduction", ""))
            row["cold_cache"] = bool(cold and "umap" in wildcards.get("reduction", ""))
            row["projected_cpu_s"] = round(projected, 2)
        records.append(row)
    with open(args.records, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    import paper_run_projection as prj

    from tecb.data.paper_scale import DATASETS

    planned = [{"dataset": d, "reduction": r} for d in DATASETS for r in prj.REDUCTIONS]
    planned += [{"dataset": d, "reduction": r, "algorithm": a} for d in DATASETS for a, r in prj.CONFIGURATIONS]
    measured = [r for r in records if r["kind"] and r["cpu_s"] is not None]
    whole = (
        f"The projection for all {len(planned)} reduce and cluster jobs of {MODEL} (warm cache): "
        f"{sum(cost(w)[1] for w in planned):.0f} CPU-s; {len(measured)} of them ran and are compared here."
    )
    text = render(records, args).replace("<!-- datasets -->", "\n".join(dataset_rows(run_dir)))
    text = text.replace("<!-- whole -->", whole)
    Path(args.out).write_text(text, encoding="utf-8")
    print(Path(args.out).read_text(encoding="utf-8"))


def render(records: list[dict], args) -> str:
    kinds = defaultdict(lambda: {"jobs": 0, "cpu": 0.0, "projected": 0.0})
    for r in records:
        if r["kind"] and r["cpu_s"] is not None:
            k = kinds[r["kind"]]
            k["jobs"] += 1
            k["cpu"] += r["cpu_s"]
            k["projected"] += r["projected_cpu_s"]
    lines = [
        "# The paper's CPU side at the paper's sizes: measured against the projection (issue 56)",
        "",
        "Run: `make paper-scale` (config/paper-scale.yaml: six generated datasets in the shape of the paper's "
        "Table 1, TF-IDF to 768 dimensions and a tiny random BERT, the 14 configurations) with `--cores 2` under "
        "`nice -n 15`, every job's peak RSS and CPU seconds recorded by `benchmarks/paper_scale_monitor.py`; this "
        f"file and `{Path(args.records).name}` (one row per job) by `python benchmarks/paper_scale.py`. " + args.note,
        "",
        "## The datasets as built by the workflow (the paper's Table 1 in brackets)",
        "",
        "<!-- datasets -->",
        "",
        f"## CPU seconds per job kind: measured vs projected ({MODEL}, the jobs that ran)",
        "",
        "Projected = `benchmarks/paper_run_projection.md`'s fitted per-split costs summed over the same split "
        "sizes + its measured fixed cost of the job kind (a UMAP reduce job that started before the first one ended: "
        "cold numba cache, else warm), i.e. this model's share of its "
        "core-hours. Ratio = measured / projected; beyond 1.3 or under 1/1.3 the projection is off by more than "
        "30 %.",
        "",
        "<!-- whole -->",
        "",
        "| job kind | jobs | measured CPU-s | projected CPU-s | ratio | within 30 % |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name in sorted(kinds, key=lambda k: -kinds[k]["cpu"]):
        k = kinds[name]
        ratio = k["cpu"] / k["projected"] if k["projected"] else float("nan")
        ok = "yes" if 1 / RATIO_LIMIT <= ratio <= RATIO_LIMIT else "**no**"
        lines.append(f"| {name} | {k['jobs']} | {k['cpu']:.1f} | {k['projected']:.1f} | {ratio:.2f} | {ok} |")
    total_m = sum(k["cpu"] for k in kinds.values())
    total_p = sum(k["projected"] for k in kinds.values())
    if total_p:
        lines.append(f"| **all** | {sum(k['jobs'] for k in kinds.values())} | {total_m:.1f} | {total_p:.1f} "
                     f"| {total_m / total_p:.2f} | |")  # fmt: skip
    with_mem = [r for r in records if r["mem_mb_declared"] and r["peak_rss_mb"]]
    over = [r for r in with_mem if r["peak_rss_mb"] > r["mem_mb_declared"]]
    by_margin = sorted(with_mem, key=lambda r: r["mem_mb_declared"] / r["peak_rss_mb"])
    lines += [
        "",
        "## Peak RSS vs declared memory, every job",
        "",
        f"{len(with_mem)} jobs with a declared `mem_mb` and a measured peak; **{len(over)} over** their "
        "declaration. Peak = the larger of the kernel's `VmHWM` of the job's process (the monitor) and "
        "Snakemake's sampled `max_rss`.",
        "",
        "Tightest (declared / peak smallest):",
        "",
        "| job | declared MB | peak MB | declared / peak |",
        "|---|---:|---:|---:|",
    ]
    for r in by_margin[:8]:
        lines.append(f"| {r['log']} | {r['mem_mb_declared']} | {r['peak_rss_mb']:.0f} "
                     f"| {r['mem_mb_declared'] / r['peak_rss_mb']:.2f} |")  # fmt: skip
    lines += ["", "Most generous (declared / peak largest):", "", "| job | declared MB | peak MB | declared / peak |",
              "|---|---:|---:|---:|"]  # fmt: skip
    for r in by_margin[::-1][:8]:
        lines.append(f"| {r['log']} | {r['mem_mb_declared']} | {r['peak_rss_mb']:.0f} "
                     f"| {r['mem_mb_declared'] / r['peak_rss_mb']:.2f} |")  # fmt: skip
    timed = [r for r in records if r["cpu_s"] is not None]
    longest = max(timed, key=lambda r: r["cpu_s"])
    longest_wall = max(timed, key=lambda r: r["wall_s"] or 0)
    lines += [
        "",
        "## Longest jobs",
        "",
        f"- by CPU: {longest['log']}: {longest['cpu_s']:.1f} CPU-s ({longest['wall_s']:.0f} s wall)",
        f"- by wall time: {longest_wall['log']}: {longest_wall['wall_s']:.0f} s wall ({longest_wall['cpu_s']:.1f} "
        "CPU-s; the wall time on a loaded machine is mostly waiting)",
        f"- jobs recorded: {len(records)}; CPU-s of all of them: {sum(r['cpu_s'] for r in timed):.0f}",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
