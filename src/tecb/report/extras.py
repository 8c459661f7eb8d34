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


def runtimes(benchmark_paths, keys) -> pd.DataFrame:
    """One row per benchmark file: step (embed/reduce/cluster/...), the job's wildcards, seconds, max RSS (MB).

    ``keys`` gives each file's ``(step, job)``, e.g. ``("embed", "tfidf/TenKGnadClusteringS2S")``, in the order
    of ``benchmark_paths``; with ``repeat`` the rows are averaged.
    """
    benchmark_paths = list(benchmark_paths)
    keys = [tuple(k) for k in keys]
    if len(keys) != len(benchmark_paths):
        raise ValueError(f"{len(benchmark_paths)} benchmark files but {len(keys)} keys")
    rows = []
    for path, (step, job) in zip(map(Path, benchmark_paths), keys):
        try:
            bench = pd.read_csv(path, sep="\t")
        except (pd.errors.EmptyDataError, pd.errors.ParserError) as err:
            raise ValueError(f"{path}: not a Snakemake benchmark file ({err})") from err
        for col in ("s", "max_rss"):
            if col not in bench.columns:
                raise ValueError(f"{path}: benchmark file lacks the column {col!r}")
        rows.append(
            {
                "step": step,
                "job": job,
                "seconds": round(float(pd.to_numeric(bench["s"], errors="coerce").mean()), 2),
                "max_rss_mb": round(float(pd.to_numeric(bench["max_rss"], errors="coerce").mean()), 1),
            }
        )
    out = pd.DataFrame(rows, columns=["step", "job", "seconds", "max_rss_mb"])
    return out.sort_values(["step", "job"]).reset_index(drop=True)


def runtime_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Jobs, total and maximum seconds per step."""
    return (
        table.groupby("step")
        .agg(
            jobs=("job", "count"),
            total_seconds=("seconds", "sum"),
            max_seconds=("seconds", "max"),
            max_rss_mb=("max_rss_mb", "max"),
        )
        .round(2)
    )


def truncation_table(embedding_paths, model_names=None, datasets=None) -> pd.DataFrame:
    """Long texts (issue 15.5) per model (rows) and dataset (columns): "share of texts truncated at max_seq_length
    (token coverage)" in percent, from the ``tecb`` schema metadata of ``{(model, dataset): embeddings path}``;
    "n/a" where the embedding recorded none (TF-IDF, older files)."""
    import pyarrow.parquet as pq

    from tecb.io import read_tecb_metadata
    from tecb.report.tables import dataset_order

    cells = {}
    for (model, dataset), path in dict(embedding_paths).items():
        meta = read_tecb_metadata(pq.read_schema(path), path)
        frac, cov = meta.get("truncated_fraction"), meta.get("token_coverage")
        cells[(model, dataset)] = (
            "n/a"
            if frac is None
            else (f"{100 * frac:.1f}% ({100 * cov:.1f}%)" if cov is not None else f"{100 * frac:.1f}%")
        )
    models = list(dict.fromkeys([*(model_names or {}), *(m for m, _ in cells)]))
    models = [m for m in models if any(k[0] == m for k in cells)]
    columns = dataset_order(list(datasets or []) + [d for _, d in cells])
    table = pd.DataFrame(
        [[cells.get((m, d), "n/a") for d in columns] for m in models],
        columns=columns,
        index=pd.Index([(model_names or {}).get(m, m) for m in models], name="Model"),
    )
    return table
