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
    """``(cost, corrected)``: ``cost(job wildcards) -> (job kind, projected CPU-s)`` (fixed + per-split work) from
    the projection's raw numbers as measured, ``corrected(kind, dataset, CPU-s)`` the same with the projection's
    corrections from a paper-scale run (``--corrections``: loading the raw points, a scale; None without them)."""
    import paper_run_projection as prj

    raw = json.loads(projection_md.read_text(encoding="utf-8").split("Raw numbers: ", 1)[1].strip())
    fits = {tuple(k.split(" | ", 1)): v for k, v in raw["fits"].items()}  # "step | variant"
    fixed = raw["fixed"]
    sizes = split_sizes()
    fix = raw.get("corrections")

    def corrected(kind: str, dataset: str, seconds: float) -> float:
        reads_raw = kind.startswith("reduce") or kind.endswith(" on none")
        return (seconds + (fix["load"][dataset] if reads_raw else 0.0)) * fix["scale"].get(kind, 1.0)

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

    return cost, (corrected if fix else None)


def job_kind(rule: str, w: dict) -> str:
    """A reduce or cluster job's kind, as the projection names it ("" for other rules)."""
    if rule == "reduce":
        return f"reduce {w['reduction']}"
    return f"cluster {w['algorithm']} on {w['reduction']}" if rule == "cluster" else ""


def run_span(log_text: str) -> tuple[str, str, float] | None:
    """``(start, end, hours)`` of the run: the driver's ``start``/``snakemake end`` lines (ISO UTC), else the first
    and last of Snakemake's time stamps."""
    found = dict(re.findall(r"^(start|snakemake end) (\d{4}-\d\d-\d\dT[\d:]+)Z$", log_text, re.M))
    if "start" in found and "snakemake end" in found:
        start, end = (datetime.datetime.fromisoformat(found[k]) for k in ("start", "snakemake end"))
    else:
        stamps = re.findall(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", log_text, re.M)
        if not stamps:
            return None
        start, end = (datetime.datetime.strptime(stamps[i], "%a %b %d %H:%M:%S %Y") for i in (0, -1))
    return f"{start:%Y-%m-%d %H:%M:%S}", f"{end:%H:%M:%S}", (end - start).total_seconds() / 3600


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
    seen = monitor_records(Path(args.jobs))
    log_text = Path(args.log).read_text(encoding="utf-8")
    cost, corrected = projection(Path(args.projection))
    blocks = job_blocks(log_text)
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
            "kind": job_kind(job["rule"], wildcards),
            "projected_cpu_s": None,
            "projected_corrected_cpu_s": None,
            "cold_cache": False,
            "finished": bool(finished),
        }
        if row["model"] == MODEL and job["rule"] in ("reduce", "cluster"):
            cold = job["rule"] == "reduce" and rec is not None and rec["first_seen"] < cache_filled
            row["kind"], projected = cost(wildcards, cold=cold and "umap" in wildcards.get("reduction", ""))
            row["cold_cache"] = bool(cold and "umap" in wildcards.get("reduction", ""))
            row["projected_cpu_s"] = round(projected, 2)
            if corrected:
                row["projected_corrected_cpu_s"] = round(corrected(row["kind"], row["dataset"], projected), 2)
        records.append(row)
    with open(args.records, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    import paper_run_projection as prj

    from tecb.data.paper_scale import DATASETS

    planned = [{"dataset": d, "reduction": r} for d in DATASETS for r in prj.REDUCTIONS]
    planned += [{"dataset": d, "reduction": r, "algorithm": a} for d in DATASETS for a, r in prj.CONFIGURATIONS]
    measured = [r for r in records if r["projected_cpu_s"] is not None and r["cpu_s"] is not None]
    whole = (
        f"The projection for all {len(planned)} reduce and cluster jobs of {MODEL} (warm cache): "
        f"{sum(cost(w)[1] for w in planned):.0f} CPU-s; {len(measured)} of them ran and are compared here."
    )
    text = render(records, args, run_span(log_text)).replace("<!-- datasets -->", "\n".join(dataset_rows(run_dir)))
    text = text.replace("<!-- whole -->", whole)
    Path(args.out).write_text(text, encoding="utf-8")
    print(Path(args.out).read_text(encoding="utf-8"))


def _kind_rows(records: list[dict]) -> list[str]:
    """Measured vs projected CPU per job kind: the 768-d model against the projection (as measured, and with its
    corrections), the other models' measured CPU beside it (the projection is for 768-d vectors)."""
    others = sorted({r["model"] for r in records if r["kind"] and r["model"] != MODEL})
    kinds = defaultdict(lambda: defaultdict(float))
    for r in records:
        if not r["kind"] or r["cpu_s"] is None:
            continue
        k = kinds[r["kind"]]
        k[f"cpu {r['model']}"] += r["cpu_s"]
        k[f"jobs {r['model']}"] += 1
        if r["model"] == MODEL and r["projected_cpu_s"] is not None:
            k["projected"] += r["projected_cpu_s"]
            k["corrected"] += r["projected_corrected_cpu_s"] or 0.0
    corrected = any(k["corrected"] for k in kinds.values())

    def ratio(m: float, p: float) -> str:
        if not p:
            return "| |"
        ok = "" if 1 / RATIO_LIMIT <= m / p <= RATIO_LIMIT else " **off by > 30 %**"
        return f"| {m / p:.2f}{ok} |"

    head = f"| job kind | {MODEL} jobs | measured CPU-s | projected | measured / projected |"
    head += " corrected projection | measured / corrected |" if corrected else ""
    head += "".join(f" {m} jobs | {m} CPU-s |" for m in others)
    lines = [head, "|---|" + "---:|" * (head.count("|") - 2)]
    total = defaultdict(float)
    for name in sorted(kinds, key=lambda n: -kinds[n][f"cpu {MODEL}"]):
        k = kinds[name]
        for key, value in k.items():
            total[key] += value
        row = f"| {name} | {k[f'jobs {MODEL}']:.0f} | {k[f'cpu {MODEL}']:.1f} | {k['projected']:.1f} "
        row += ratio(k[f"cpu {MODEL}"], k["projected"])
        if corrected:
            row += f" {k['corrected']:.1f} " + ratio(k[f"cpu {MODEL}"], k["corrected"])
        row += "".join(f" {k[f'jobs {m}']:.0f} | {k[f'cpu {m}']:.1f} |" for m in others)
        lines.append(row)
    row = f"| **all** | {total[f'jobs {MODEL}']:.0f} | {total[f'cpu {MODEL}']:.1f} | {total['projected']:.1f} "
    row += ratio(total[f"cpu {MODEL}"], total["projected"])
    if corrected:
        row += f" {total['corrected']:.1f} " + ratio(total[f"cpu {MODEL}"], total["corrected"])
    row += "".join(f" {total[f'jobs {m}']:.0f} | {total[f'cpu {m}']:.1f} |" for m in others)
    return [*lines, row]


def _memory_rows(records: list[dict]) -> list[str]:
    """Peak RSS vs declared mem_mb: per rule, then the tightest and the most generous jobs."""
    with_mem = [r for r in records if r["mem_mb_declared"] and r["peak_rss_mb"]]
    over = [r for r in with_mem if r["peak_rss_mb"] > r["mem_mb_declared"]]
    by_margin = sorted(with_mem, key=lambda r: r["mem_mb_declared"] / r["peak_rss_mb"])
    unmeasured = [r["log"] for r in records if not (r["mem_mb_declared"] and r["peak_rss_mb"])]
    lines = [
        f"{len(with_mem)} jobs with a declared `mem_mb` and a measured peak; **{len(over)} over** their "
        "declaration" + (f" ({', '.join(r['log'] for r in over)})" if over else "") + ". Peak = the larger of the "
        "kernel's `VmHWM` of the job's process (the monitor) and Snakemake's sampled `max_rss`."
        + (f" Without a peak or a declaration: {', '.join(unmeasured)}." if unmeasured else ""),
        "",
        "| rule | jobs | declared MB | largest peak MB | smallest declared / peak | over |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rules = defaultdict(list)
    for r in with_mem:
        rules[r["rule"]].append(r)
    for rule, rows in sorted(rules.items()):
        declared = [r["mem_mb_declared"] for r in rows]
        tight = min(r["mem_mb_declared"] / r["peak_rss_mb"] for r in rows)
        n_over = sum(r["peak_rss_mb"] > r["mem_mb_declared"] for r in rows)
        lines.append(
            f"| {rule} | {len(rows)} | {min(declared)}..{max(declared)} | "
            f"{max(r['peak_rss_mb'] for r in rows):.0f} | {tight:.2f} | {n_over} |"
        )
    for title, chosen in (("Tightest (declared / peak smallest)", by_margin[:8]),
                          ("Most generous (declared / peak largest)", by_margin[::-1][:8])):  # fmt: skip
        lines += ["", f"{title}:", "", "| job | declared MB | peak MB | declared / peak |", "|---|---:|---:|---:|"]
        lines += [f"| {r['log']} | {r['mem_mb_declared']} | {r['peak_rss_mb']:.0f} "
                  f"| {r['mem_mb_declared'] / r['peak_rss_mb']:.2f} |" for r in chosen]  # fmt: skip
    return lines


def render(records: list[dict], args, span) -> str:
    timed = [r for r in records if r["cpu_s"] is not None]
    longest = max(timed, key=lambda r: r["cpu_s"])
    longest_wall = max(timed, key=lambda r: r["wall_s"] or 0)
    cpu_all = sum(r["cpu_s"] for r in timed)
    wall = (
        f"The run: {span[0]} to {span[1]} UTC, **{span[2]:.2f} h wall** on 2 cores for {len(records)} jobs "
        f"({cpu_all / 3600:.2f} CPU core-hours recorded in the jobs' own processes)."
        if span
        else ""
    )
    by_model = defaultdict(float)
    for r in timed:
        by_model[r["model"] or "(no model)"] += r["cpu_s"]
    lines = [
        "# The paper's CPU side at the paper's sizes: measured against the projection (issue 56)",
        "",
        "Run: `make paper-scale`'s steps (config/paper-scale.yaml: six generated datasets in the shape of the "
        "paper's Table 1, TF-IDF to 768 dimensions and a tiny random BERT (64-d), the 14 configurations, the "
        "chance floor, Tables 1-3, the report) with `--cores 2`, every job's peak RSS and CPU seconds recorded by "
        f"`benchmarks/paper_scale_monitor.py`; this file and `{Path(args.records).name}` (one row per job) by "
        "`python benchmarks/paper_scale.py`. " + args.note,
        "",
        wall,
        "",
        "## The datasets as built by the workflow (the paper's Table 1 in brackets)",
        "",
        "<!-- datasets -->",
        "",
        "## CPU seconds per job kind: measured vs projected",
        "",
        "Projected = `benchmarks/paper_run_projection.md`'s fitted per-split costs summed over the same split "
        "sizes + its measured fixed cost of the job kind (a UMAP reduce job that started before the first one ended: "
        f"cold numba cache, else warm), i.e. this model's share of its core-hours, for the 768-d {MODEL}; "
        "corrected = with that file's corrections (loading the raw points; a scale where a kind was off by more "
        f"than 30 %). The other model's jobs, beside it, are not projected (the projection is for 768-d vectors). "
        "Ratio = measured / projected.",
        "",
        "<!-- whole -->",
        "",
        *_kind_rows(records),
        "",
        "## Peak RSS vs declared memory, every job",
        "",
        *_memory_rows(records),
        "",
        "## Longest jobs",
        "",
        f"- by CPU: {longest['log']}: {longest['cpu_s']:.1f} CPU-s ({longest['wall_s']:.0f} s wall)",
        f"- by wall time: {longest_wall['log']}: {longest_wall['wall_s']:.0f} s wall ({longest_wall['cpu_s']:.1f} "
        "CPU-s; on a shared machine the wall time includes waiting)",
        f"- jobs recorded: {len(records)}; CPU-s of all of them: {cpu_all:.0f} ("
        + ", ".join(f"{m} {c:.0f}" for m, c in sorted(by_model.items()))
        + ")",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
