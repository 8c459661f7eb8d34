"""Pieces of the Snakemake report that are not tables or figures: the run's configuration and the runtimes
recorded by the rules' ``benchmark:`` files."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from tecb.io import write_text

SECRET_KEY = re.compile(r"(secret|password|token|passwd|api[_-]?key|credential)", re.IGNORECASE)
REDACTED = "<redacted>"


def redact(obj):
    """A copy of a config with the values of secret-looking keys replaced (credentials never reach the report)."""
    if isinstance(obj, dict):
        return {k: REDACTED if SECRET_KEY.search(str(k)) else redact(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def write_config(config: dict, path) -> None:
    write_text(yaml.safe_dump(redact(dict(config)), sort_keys=False, allow_unicode=True), path)


def runtimes(benchmark_paths, root="results/benchmarks") -> pd.DataFrame:
    """One row per benchmark file: step (embed/reduce/cluster/...), the job's wildcards, seconds, max RSS (MB).

    ``benchmark_paths`` look like ``{root}/{step}/{model}/{dataset}.tsv``; with ``repeat`` the rows are averaged.
    """
    rows = []
    for path in map(Path, benchmark_paths):
        try:
            bench = pd.read_csv(path, sep="\t")
        except (pd.errors.EmptyDataError, pd.errors.ParserError) as err:
            raise ValueError(f"{path}: not a Snakemake benchmark file ({err})") from err
        for col in ("s", "max_rss"):
            if col not in bench.columns:
                raise ValueError(f"{path}: benchmark file lacks the column {col!r}")
        rel = path.relative_to(root).with_suffix("") if path.is_relative_to(root) else path.with_suffix("")
        parts = rel.parts
        rows.append({"step": parts[0], "job": "/".join(parts[1:]),
                     "seconds": round(float(pd.to_numeric(bench["s"], errors="coerce").mean()), 2),
                     "max_rss_mb": round(float(pd.to_numeric(bench["max_rss"], errors="coerce").mean()), 1)})
    out = pd.DataFrame(rows, columns=["step", "job", "seconds", "max_rss_mb"])
    return out.sort_values(["step", "job"]).reset_index(drop=True)


def runtime_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Jobs, total and maximum seconds per step."""
    return table.groupby("step").agg(jobs=("job", "count"), total_seconds=("seconds", "sum"),
                                     max_seconds=("seconds", "max"), max_rss_mb=("max_rss_mb", "max")).round(2)
