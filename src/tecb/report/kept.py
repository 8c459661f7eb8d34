"""Runs the repository keeps (``runs/{run}/``): what the README and the docs quote, copied from a run's outputs.

A number in the README or a doc comes from a file code generated and the repository keeps: :func:`keep_run`
copies a finished run's tables (md, csv, tex), its long scores table and chance draws, with the configs it ran
and the commit of the code, into ``runs/{run}/``. A kept run has parts (:data:`PARTS`: the benchmark's tables,
pre-training's Table 5, training's Table 6), made by different targets into one results folder (``make real``,
``make real-adapt``): a keep replaces only the parts its results hold and keeps the others as they were, with
their configs and provenance. A document quotes a kept file whole between
``<!-- kept: PATH -->`` and ``<!-- /kept -->`` (:func:`tecb.report.quotes.kept_blocks`), which
``tests/test_kept_runs.py`` holds equal to the file, so a quote cannot drift from the run it came from.

    python -m tecb.report.kept results/real-e5 runs/real-e5 config/real.yaml config/real-e5.yaml

:func:`rerender_tables` renders a kept run's Tables 1-3 (and their statistics) again from its kept scores and
chance draws with today's code, so a change of the statistics needs no re-run (``make rerender``):

    python -m tecb.report.kept --rerender runs/real
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tecb.io import atomic_dir, write_json

#: what a kept run holds, relative to the run's results folder
KEPT_PATTERNS = (
    "tables/*.md",
    "tables/*.csv",
    "tables/*.tex",
    "scores.parquet",
    "chance/*.parquet",
    # pre-training (Table 5): its tables, long scores, figure and each job's measured time
    "pretrain/*.md",
    "pretrain/*.csv",
    "pretrain/*.tex",
    "pretrain/scores.parquet",
    "pretrain/figure2.png",
    "timings/pretrain/**/*.json",
    # training for clustering (Table 6): its tables, contrasts, long scores, training curves and costs
    "adapt/*.md",
    "adapt/*.csv",
    "adapt/*.tex",
    "adapt/scores.parquet",
    "adapt/figure_training.png",
    "timings/adapt/costs.*",
    "timings/adapt/**/*.json",
    # what each job cost (Snakemake's benchmark: files; benchmarks/real_run_cost.py sums them)
    "benchmarks/**/*.tsv",
)


#: the parts of a kept run other than the benchmark's own (``run``): a file is in the part of its first folders
PARTS = {
    "pretrain": ("pretrain/", "timings/pretrain/", "benchmarks/pretrain/"),
    "adapt": ("adapt/", "timings/adapt/", "benchmarks/adapt/"),
}


def part_of(relative: str | Path) -> str:
    """The part (:data:`PARTS`, else ``"run"``) of a kept file, by its path relative to the run's folder."""
    relative = Path(relative).as_posix()
    return next((part for part, prefixes in PARTS.items() if relative.startswith(prefixes)), "run")


def _previous(dest: Path) -> tuple[dict, list[Path]]:
    """The provenance of each part kept in ``dest`` (an older provenance.json without ``parts``: its own for every
    part) and its files (besides provenance.json)."""
    if not dest.is_dir():
        return {}, []
    try:
        provenance = json.loads((dest / "provenance.json").read_text())
    except (OSError, ValueError):
        provenance = {}
    own = {k: v for k, v in provenance.items() if k != "parts"}
    files = sorted(p for p in dest.rglob("*") if p.is_file() and p.name != "provenance.json")
    parts = {part_of(p.relative_to(dest)) for p in files if p.parent != dest / "config"}
    return {part: provenance.get("parts", {}).get(part, own) for part in parts}, files


def table2_labels(configs: list[str | Path]) -> str:
    """The pattern of the labels files of Table 2's configuration (``tables.table2`` of the ``configs`` merged in
    order, default k-means on raw vectors): every text's predicted cluster per split (and per restart state at
    ``scoring.restarts`` > 1), so a statistic recomputed from the texts can be rendered again from a kept run.
    Their size at the real run's scale: ~160 KB per model at R = 1, ~1.2 MB at R = 10."""
    from tecb.config import load_yaml, merge

    settings = {"algorithm": "kmeans", "reduction": "none"}
    for config in configs:
        settings = merge(settings, (load_yaml(config).get("tables") or {}).get("table2") or {})
    return f"labels/*/*/{settings['reduction']}/{settings['algorithm']}.parquet"


def keep_run(results: str | Path, dest: str | Path, *, configs: list[str | Path]) -> Path:
    """Copy :data:`KEPT_PATTERNS` and :func:`table2_labels` of ``results`` and the ``configs`` into ``dest``
    (replaced atomically), with ``provenance.json`` (the commit, whether the work tree had changes, the configs'
    names, the BLAS kernels).

    Only the parts (:func:`part_of`) ``results`` holds are replaced: the other parts ``dest`` holds are carried
    over as they are (``make real`` after ``make real-adapt`` keeps Table 6), with their configs and their
    provenance (``provenance.json``'s ``parts``: each part's own)."""
    results, dest = Path(results), Path(dest)
    files = sorted(p for pattern in (*KEPT_PATTERNS, table2_labels(configs)) for p in results.glob(pattern))
    if not any(p.parent.name in ("tables", "pretrain", "adapt") and p.suffix == ".md" for p in files):
        raise FileNotFoundError(f"{results}: no tables/, pretrain/ or adapt/ tables to keep (is the run finished?)")
    made = {part_of(p.relative_to(results)) for p in files}
    previous, previous_files = _previous(dest)
    provenance = {"commit": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain", "src"))}
    provenance |= {"configs": [Path(c).name for c in configs], "blas": _blas_kernels()}
    parts = {part: info for part, info in previous.items() if part not in made} | {part: provenance for part in made}
    with atomic_dir(dest) as tmp:
        carried = [
            p for p in previous_files if p.parent != dest / "config" and part_of(p.relative_to(dest)) not in made
        ]
        carried_configs = {c for part in parts.keys() - made for c in parts[part].get("configs", [])}
        carried += [dest / "config" / name for name in sorted(carried_configs) if (dest / "config" / name).is_file()]
        for path, relative in [(p, p.relative_to(dest)) for p in carried] + [
            (p, p.relative_to(results)) for p in files
        ]:
            target = Path(tmp) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        (Path(tmp) / "config").mkdir(exist_ok=True)
        for config in configs:
            shutil.copy2(config, Path(tmp) / "config" / Path(config).name)
        write_json(provenance | {"parts": dict(sorted(parts.items()))}, Path(tmp) / "provenance.json")
    return dest


#: what :func:`rerender_tables` copies from a kept run into its scratch results: the inputs of the tables rule
#: that the run's clusterings made, and the kept labels (the datasets are built again from the kept configs and
#: the raw data)
RERENDER_INPUTS = ("scores.parquet", "chance/*.parquet", "labels/**/*.parquet")
#: the rules a re-render may run: the demo's generated raw data, the datasets, the tables
RERENDER_RULES = ("demo_data", "build_dataset", "tables")


def rerender_tables(
    kept: str | Path, *, configs: list[str | Path] | None = None, workdir: str | Path = ".", cores: int = 1, log=print
) -> list[Path]:
    """Render the Tables 1-3 of the kept run ``kept`` (``runs/{run}``) again from its kept ``scores.parquet`` and
    chance draws with the code of this checkout, and write them over its ``tables/`` files.

    The kept configs (``configs``; default: those its provenance names for the benchmark's part) run
    Snakemake's :data:`RERENDER_RULES` only (``--allowed-rules``) in ``workdir`` (the project's root), in the
    scratch run ``rerender-{run}`` (``results/rerender-{run}/``, the kept inputs copied in): no model embeds and
    nothing is clustered; the raw data the configs name must be there (``make real-data`` for the real runs). The
    table files the rule writes replace the kept ones; the others (MTEB v2's table, Tables 5 and 6) stay as they
    were. ``provenance.json`` records the commit under ``parts.run.rendered``. Returns the files written."""
    kept, workdir = Path(kept).resolve(), Path(workdir)
    if not (kept / "scores.parquet").is_file() or not (kept / "tables").is_dir():
        raise FileNotFoundError(f"{kept}: no scores.parquet and tables/ to render again (not a benchmark's run)")
    provenance = json.loads((kept / "provenance.json").read_text())
    run = provenance.get("parts", {}).get("run", provenance)
    configs = [Path(c).resolve() for c in configs] if configs else [kept / "config" / c for c in run["configs"]]
    missing = [str(c) for c in configs if not c.is_file()]
    if missing:
        raise FileNotFoundError(f"{kept}: the config(s) {', '.join(missing)} are missing")
    name = f"rerender-{kept.name}"
    results = workdir / "results" / name
    _copy_inputs(kept, results)
    if not (results / "labels").is_dir():  # kept without the predictions: the analytic test, as it was rendered
        overlay = results / "no-labels.yaml"
        overlay.write_text("tables: {statistics: {labels: false}}\n")
        configs = [*configs, overlay]
    command = [sys.executable, "-m", "snakemake", "tables", "--configfile", *map(str, configs)]
    command += ["--config", f"run={name}", "--allowed-rules", *RERENDER_RULES, "--cores", str(cores)]
    log(f"rerender {kept}: {' '.join(command[1:])}")
    subprocess.run(command, check=True, cwd=workdir)
    written = []
    for path in sorted(p for p in (results / "tables").glob("*") if p.suffix in (".md", ".csv", ".tex")):
        shutil.copy2(path, kept / "tables" / path.name)
        written.append(kept / "tables" / path.name)
    own = {k: v for k, v in provenance.items() if k != "parts"}
    provenance.setdefault("parts", {}).setdefault("run", own)["rendered"] = {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "src")),
    }
    write_json(provenance, kept / "provenance.json")
    log(f"rerender {kept}: {len(written)} table files written")
    return written


def _copy_inputs(kept: Path, results: Path) -> None:
    """:data:`RERENDER_INPUTS` of ``kept`` into a fresh ``results`` folder."""
    shutil.rmtree(results, ignore_errors=True)
    for pattern in RERENDER_INPUTS:
        for path in kept.glob(pattern):
            target = results / path.relative_to(kept)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def _blas_kernels() -> list[str]:
    """The BLAS libraries and CPU kernels of the keeping machine (e.g. ``openblas Haswell``): kernels move a few
    scores in the last decimals (benchmarks/blas_kernels.md), so a kept run says which it was made with."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)
    from threadpoolctl import threadpool_info

    return sorted({f"{i.get('internal_api')} {i.get('architecture', '')}".strip() for i in threadpool_info()})


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


USAGE = "usage: python -m tecb.report.kept RESULTS_DIR DEST CONFIG [CONFIG ...] | --rerender KEPT [KEPT ...]"

if __name__ == "__main__":
    if sys.argv[1:2] == ["--rerender"] and len(sys.argv) > 2:
        for path in sys.argv[2:]:
            rerender_tables(path)
    elif len(sys.argv) < 4:
        sys.exit(USAGE)
    else:
        print(keep_run(sys.argv[1], sys.argv[2], configs=sys.argv[3:]))
