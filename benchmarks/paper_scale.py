"""The paper-scale dress rehearsal (config/paper-scale.yaml, issue 56) measured against the projection, per job.

Reads what the run left, over its sittings (a run stopped and resumed: each sitting's Snakemake log, monitor
records and commit; a job recorded in two takes the sitting that finished it): Snakemake's log (each job's rule,
log file, benchmark file, threads, jobid and the ``mem_mb`` it declared, as printed when the job started; "Finished
jobid"), the per-job records of ``benchmarks/paper_scale_monitor.py`` (the kernel's peak RSS, ``VmHWM``, and CPU
seconds of each job's process) and the jobs' Snakemake benchmark files (``max_rss`` sampled, ``cpu_time``). Sets
every reduce and cluster job of the 768-d model beside ``benchmarks/paper_run_projection.md``'s projection of that
job at the same split sizes (its fitted per-split costs and measured per-job fixed costs, the "now" variant, warm
numba cache) and each build_dataset and embed job's declared memory beside what its rule declares now for the
same files; writes the comparison (``--out``), one record per job (``--records``, CSV) and, once the run has
written them, a copy of its Tables 1-3 (``--tables-out``).

    python benchmarks/paper_scale.py --run-dir RUN_DIR --sitting RUN2.log RUN2.jsonl 4689453 \
        --sitting RUN3.log RUN3.jsonl b4dffb9 --out benchmarks/paper_scale.md \
        --records benchmarks/paper_scale_jobs.csv --tables-out benchmarks/paper_scale_tables
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
    time, jobid and whether Snakemake reported it finished (the last start of a log file wins: a job restarted by a
    second invocation)."""
    jobs, current, stamp, done = {}, None, None, set()
    for line in log_text.splitlines():
        if re.match(r"^\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]$", line):
            stamp = datetime.datetime.strptime(line.strip("[]"), "%a %b %d %H:%M:%S %Y")
        elif line.startswith("Finished jobid: "):
            done.add(line.split()[2])
        elif re.match(r"^(local)?rule \w+:$", line):
            current = {"rule": line.split()[-1].rstrip(":"), "started": stamp}
        elif current is not None and line.startswith("    "):
            key, _, value = line.strip().partition(": ")
            if key in ("log", "benchmark", "wildcards", "threads", "jobid"):
                current[key] = value
            elif key == "resources":
                found = re.search(r"\bmem_mb=(\d+)", value)
                current["mem_mb"] = int(found.group(1)) if found else None
                if "log" in current:
                    jobs[current["log"].split(",")[0].strip()] = current
        elif not line.startswith("    "):
            current = None if not line.startswith(("rule", "localrule")) else current
    for job in jobs.values():
        job["finished"] = job.get("jobid") in done
    return jobs


def merged_sittings(sittings: list[dict]) -> dict[str, dict]:
    """``{log file: job}`` over the run's sittings (each ``{"log_text", "records", "commit", "name"}``, in order):
    a job started in several takes the latest sitting that finished it (else its latest start), with that sitting's
    monitor record (``record``), commit and name."""
    merged = {}
    for sitting in sittings:
        for log, job in job_blocks(sitting["log_text"]).items():
            if merged.get(log, {}).get("finished") and not job["finished"]:
                continue
            rec = sitting["records"].get(log)
            merged[log] = {**job, "record": rec, "commit": sitting["commit"], "sitting": sitting["name"]}
    return merged


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
    """``(start, end, hours)`` of a sitting: the driver's ``start``/``snakemake end`` lines (ISO UTC; stopped
    before its end: Snakemake's last time stamp), else the first and last of Snakemake's time stamps."""
    found = dict(re.findall(r"^(start|snakemake end) (\d{4}-\d\d-\d\dT[\d:]+)Z$", log_text, re.M))
    stamps = re.findall(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", log_text, re.M)
    if not stamps and not ("start" in found and "snakemake end" in found):
        return None
    first, last = (datetime.datetime.strptime(stamps[i], "%a %b %d %H:%M:%S %Y") for i in (0, -1)) if stamps else (0, 0)
    start, end = first, last  # Snakemake's own stamps, without the driver's start line
    if "start" in found:  # the driver's; a sitting stopped before Snakemake's end: its last stamp
        start = datetime.datetime.fromisoformat(found["start"])
        end = datetime.datetime.fromisoformat(found["snakemake end"]) if "snakemake end" in found else last
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


def declared_now(rule: str, wildcards: dict, run_dir: Path, config: dict) -> int | None:
    """What a build_dataset, embed or embed_batch job declares now (``tecb.data.datasets.build_memory_mb``,
    ``tecb.embed.job.job_memory_mb``, issue 56) for the run's files; None for the other rules (unchanged)."""
    results = run_dir / "results" / config.get("run", "paper-scale")
    if rule == "build_dataset":
        from tecb.data.datasets import build_memory_mb

        source = config["sources"][config["datasets"][wildcards["dataset"]]["source"]]
        return build_memory_mb(run_dir / source["path"]) if source.get("path") else None
    if rule not in ("embed", "embed_batch"):
        return None
    from tecb.embed.job import job_memory_mb

    spec = config["models"][wildcards["model"]]
    settings = {"kind": spec.get("kind", "huggingface"), "dim": spec.get("dim", 256)}
    names = [wildcards["dataset"]] if rule == "embed" else list(config["datasets"])
    texts = [results / "datasets" / d / "texts.parquet" for d in names]
    model = results / "models" / wildcards["model"]
    return job_memory_mb(settings, texts=texts, model=[model] if model.exists() else [])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sitting", nargs=3, action="append", required=True, metavar=("LOG", "JOBS", "COMMIT"),
                    help="one sitting of the run, in order: Snakemake's output, paper_scale_monitor.py's records, "
                    "the commit it ran at")  # fmt: skip
    ap.add_argument("--run-dir", default=str(ROOT))
    ap.add_argument("--config", default="config/paper-scale.yaml", help="the run's config, in --run-dir")
    ap.add_argument("--projection", default=str(ROOT / "benchmarks" / "paper_run_projection.md"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "paper_scale.md"))
    ap.add_argument("--records", default=str(ROOT / "benchmarks" / "paper_scale_jobs.csv"))
    ap.add_argument("--tables-out", default=str(ROOT / "benchmarks" / "paper_scale_tables"))
    ap.add_argument("--note", default="", help="a sentence on the run (machine load, how far it got)")
    args = ap.parse_args(argv)
    import yaml

    run_dir = Path(args.run_dir)
    config = yaml.safe_load((run_dir / args.config).read_text(encoding="utf-8"))
    sittings = [
        {"name": f"sitting {i}", "log_text": Path(log).read_text(encoding="utf-8"),
         "records": monitor_records(Path(jobs)), "commit": commit}
        for i, (log, jobs, commit) in enumerate(args.sitting, 1)
    ]  # fmt: skip
    cost, corrected = projection(Path(args.projection))
    blocks = merged_sittings(sittings)
    # a UMAP reduce job that started before the first one had ended compiled umap's code itself (cold cache)
    umap_ends = [
        r["last_seen"] for s in sittings for log, r in s["records"].items()
        if "/reduce/" in log and "umap" in Path(log).name
    ]  # fmt: skip
    cache_filled = min(umap_ends, default=float("inf"))
    records = []
    for log, job in sorted(blocks.items()):
        rec = job["record"]
        bench = benchmark_row(run_dir / job["benchmark"]) if job.get("benchmark") else None
        if rec is None and bench is None:
            continue  # not run (yet)
        wildcards = dict(kv.split("=", 1) for kv in job.get("wildcards", "").split(", ") if "=" in kv)
        peak = max(filter(None, [rec and rec.get("peak_rss_mb"), bench and _float(bench.get("max_rss"))]), default=None)
        now = declared_now(job["rule"], wildcards, run_dir, config)
        row = {
            "rule": job["rule"],
            "log": log,
            "sitting": job["sitting"],
            "commit": job["commit"],
            "model": wildcards.get("model", ""),
            "dataset": wildcards.get("dataset", ""),
            "reduction": wildcards.get("reduction", ""),
            "algorithm": wildcards.get("algorithm", ""),
            "threads": int(job.get("threads", 1)),
            "mem_mb_declared": job.get("mem_mb"),
            "mem_mb_declared_now": now if now != job.get("mem_mb") else None,
            "peak_rss_mb": round(peak, 1) if peak else None,
            "cpu_s": round(rec["cpu_s"], 2) if rec else _float(bench.get("cpu_time")),
            "cpu_s_snakemake": _float(bench.get("cpu_time")) if bench else None,
            "wall_s": _float(bench.get("s")) if bench else round(rec["last_seen"] - rec["first_seen"], 1),
            "kind": job_kind(job["rule"], wildcards),
            "projected_cpu_s": None,
            "projected_corrected_cpu_s": None,
            "cold_cache": False,
            "finished": bool(job["finished"]),
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
    tables = copy_tables(run_dir / "results" / config.get("run", "paper-scale") / "tables", Path(args.tables_out))
    spans = [(s, run_span(s["log_text"])) for s in sittings]
    text = render(records, args, spans, tables).replace("<!-- datasets -->", "\n".join(dataset_rows(run_dir)))
    text = text.replace("<!-- whole -->", whole)
    Path(args.out).write_text(text, encoding="utf-8")
    print(Path(args.out).read_text(encoding="utf-8"))


#: Tables 1-3 of the run, copied beside this report
TABLES = [f"table{i}.{ext}" for i in (1, 2, 3) for ext in ("md", "csv")]


def copy_tables(source: Path, dest: Path) -> list[str]:
    """Tables 1-3 (md and csv) of a finished run's ``tables`` folder copied into ``dest``; [] before the run wrote
    them (a partial run)."""
    import shutil

    if not all((source / name).exists() for name in TABLES):
        return []
    dest.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        shutil.copyfile(source / name, dest / name)
    return TABLES


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
    """Peak RSS vs declared mem_mb: per rule, then the tightest and the most generous jobs; where a rule declares
    otherwise now than when the job ran (``mem_mb_declared_now``), both."""
    with_mem = [r for r in records if r["mem_mb_declared"] and r["peak_rss_mb"]]
    over = [r for r in with_mem if r["peak_rss_mb"] > r["mem_mb_declared"]]
    by_margin = sorted(with_mem, key=lambda r: r["mem_mb_declared"] / r["peak_rss_mb"])
    unmeasured = [r["log"] for r in records if not (r["mem_mb_declared"] and r["peak_rss_mb"])]

    def now(r):
        return r.get("mem_mb_declared_now") or r["mem_mb_declared"]

    def cell(r):
        return f"{now(r)} MB: {now(r) / r['peak_rss_mb']:.2f}" if r.get("mem_mb_declared_now") else ""

    changed = [r for r in with_mem if r.get("mem_mb_declared_now")]
    over_now = [r for r in with_mem if r["peak_rss_mb"] > now(r)]
    lines = [
        f"{len(with_mem)} jobs with a declared `mem_mb` and a measured peak; **{len(over)} over** their "
        "declaration" + (f" ({', '.join(r['log'] for r in over)})" if over else "") + ". Peak = the larger of the "
        "kernel's `VmHWM` of the job's process (the monitor) and Snakemake's sampled `max_rss`."
        + (f" Without a peak or a declaration: {', '.join(unmeasured)}." if unmeasured else "")
        + (f" Declared now: what the rule declares for the same files after the job ran (issue 56: "
           f"{', '.join(sorted({r['rule'] for r in changed}))}), {len(over_now)} over." if changed else ""),
        "",
        "| rule | jobs | declared MB | largest peak MB | smallest declared / peak | over | declared now MB "
        "| smallest now / peak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    rules = defaultdict(list)
    for r in with_mem:
        rules[r["rule"]].append(r)
    for rule, rows in sorted(rules.items()):
        declared = [r["mem_mb_declared"] for r in rows]
        tight = min(r["mem_mb_declared"] / r["peak_rss_mb"] for r in rows)
        n_over = sum(r["peak_rss_mb"] > r["mem_mb_declared"] for r in rows)
        later = ""
        if any(r.get("mem_mb_declared_now") for r in rows):
            nows = [now(r) for r in rows]
            later = f"{min(nows)}..{max(nows)} | {min(now(r) / r['peak_rss_mb'] for r in rows):.2f}"
        lines.append(
            f"| {rule} | {len(rows)} | {min(declared)}..{max(declared)} | "
            f"{max(r['peak_rss_mb'] for r in rows):.0f} | {tight:.2f} | {n_over} | {later or ' |'} |"
        )
    for title, chosen in (("Tightest (declared / peak smallest)", by_margin[:8]),
                          ("Most generous (declared / peak largest)", by_margin[::-1][:8])):  # fmt: skip
        lines += ["", f"{title}:", "", "| job | declared MB | peak MB | declared / peak | declared now / peak |",
                  "|---|---:|---:|---:|---:|"]  # fmt: skip
        lines += [f"| {r['log']} | {r['mem_mb_declared']} | {r['peak_rss_mb']:.0f} "
                  f"| {r['mem_mb_declared'] / r['peak_rss_mb']:.2f} "
                  f"| {cell(r)} |"
                  for r in chosen]  # fmt: skip
    return lines


def sittings_lines(spans: list[tuple[dict, tuple | None]], records: list[dict]) -> list[str]:
    """The run's sittings: each one's commit, start, end, wall time and the jobs it finished, and the total."""
    lines = ["| sitting | commit | start (UTC) | end (UTC) | wall h | jobs recorded |", "|---|---|---|---|---:|---:|"]
    total = 0.0
    for sitting, span in spans:
        jobs = sum(r["sitting"] == sitting["name"] for r in records)
        start, end, hours = span or ("", "", 0.0)
        total += hours
        lines.append(f"| {sitting['name']} | {sitting['commit']} | {start} | {end} | {hours:.2f} | {jobs} |")
    lines.append(f"| **all** | | | | **{total:.2f}** | {len(records)} |")
    return lines


def render(records: list[dict], args, spans, tables: list[str]) -> str:
    timed = [r for r in records if r["cpu_s"] is not None]
    longest = max(timed, key=lambda r: r["cpu_s"])
    longest_wall = max(timed, key=lambda r: r["wall_s"] or 0)
    cpu_all = sum(r["cpu_s"] for r in timed)
    hours = sum(span[2] for _, span in spans if span)
    state = (
        f"**Complete**: Tables 1-3 written (copied to `{Path(args.tables_out).name}/`: {', '.join(tables)})."
        if tables
        else "**Partial**: the run has not written Tables 1-3 yet."
    )
    wall = (
        f"The run: {len(spans)} sitting(s), **{hours:.2f} h wall** in all on 2 cores for {len(records)} jobs "
        f"({cpu_all / 3600:.2f} CPU core-hours recorded in the jobs' own processes); a job recorded in two sittings "
        "(stopped in one, run again in the next) counts once, with the sitting that finished it."
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
        "`python benchmarks/paper_scale.py`. " + state + " " + args.note,
        "",
        wall,
        "",
        *sittings_lines(spans, records),
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
