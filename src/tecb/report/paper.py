"""The paper's published numbers and whether this run can be set beside them (design §4, issue 13.2).

:func:`comparability` decides, per dataset, from the provenance in its files; :func:`compare` puts this run's
tables beside the paper's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from tecb.report.tables import KEYS, PAPER_DATASETS, config_label, table2, table3

PRINTED_TABLE3_MISPRINTS = {("kmeans / umap", "BlurbsClusteringP2P"): 29.58, ("kmeans / umap", "Average"): 28.93}
# The configurations printed in the paper's Table 3 (no pca_umap; hdbscan/dbstream not on raw embeddings).
PRINTED_TABLE3_ROWS = [config_label(a, r) for a in ("kmeans", "agglomerative") for r in ("none", "pca", "umap")] + [
    config_label(a, r) for a in ("hdbscan", "dbstream") for r in ("pca", "umap")
]


def load_reference(path, in_paper_tables_only: bool = False) -> pd.DataFrame:
    """``paper_results.csv`` as a summary frame (model = the paper's name, v_measure in 0..1)."""
    path = Path(path)
    ref = pd.read_csv(path)
    missing = {"paper_name", "in_paper_tables", "algorithm", "reduction"} - set(ref.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
    if in_paper_tables_only:
        ref = ref[ref.in_paper_tables.astype(str).str.lower() == "yes"]
    datasets = [
        c for c in ref.columns if c not in {"paper_name", "hf_model", "in_paper_tables", "algorithm", "reduction"}
    ]
    long = ref.melt(
        id_vars=["paper_name", "algorithm", "reduction"],
        value_vars=datasets,
        var_name="dataset",
        value_name="v_measure",
    ).rename(columns={"paper_name": "model"})
    bad = long[pd.to_numeric(long.v_measure, errors="coerce").isna() & long.v_measure.notna()]
    if not bad.empty:
        row = bad.iloc[0]
        raise ValueError(
            f"{path}: model {row.model!r}, {row.algorithm}/{row.reduction}, field {row.dataset!r}: "
            f"not a number: {row.v_measure!r}"
        )
    long["v_measure"] = long.v_measure.astype(float)
    return long.dropna(subset=["v_measure"])[KEYS + ["v_measure"]]


def paper_table2(reference_path) -> pd.DataFrame:
    """The paper's Table 2 (k-means on raw embeddings) from its per-model results, all models of the file."""
    return table2(load_reference(reference_path))


def paper_table3(reference_path, printed: bool = True) -> tuple[pd.DataFrame, int]:
    """The paper's Table 3: mean over the 12 in-paper models; ``printed`` applies the printed misprint and
    keeps only the printed rows."""
    t3, n = table3(load_reference(reference_path, in_paper_tables_only=True))
    if printed:
        t3 = t3.reindex(PRINTED_TABLE3_ROWS)
        for (row, col), value in PRINTED_TABLE3_MISPRINTS.items():
            t3.loc[row, col] = value
    return t3, n


def paper_table1(path) -> pd.DataFrame:
    """``paper_table1.csv`` indexed by dataset (numeric columns only)."""
    df = pd.read_csv(path).set_index("dataset")
    df.index.name = "Dataset"
    return df.select_dtypes("number")


NOT_COMPARABLE = "not comparable"
_SHORT_REASONS = (
    ("built from part of the source", "partial source"),
    ("split recipe", "other split recipe"),
    ("published splits other", "other published splits"),
    ("built from the 10kGNAD csv", "no titles"),
    ("not one of the paper's datasets", "not a paper dataset"),
    ("no provenance", "no provenance"),
    ("text variant", "other text variant"),
)


def short_reason(reason: str) -> str:
    """A few words for a table cell from :func:`tecb.data.datasets.paper_comparison`'s reason."""
    return next((short for prefix, short in _SHORT_REASONS if reason.startswith(prefix)), "other source")


COMPARABLE = "comparable"
NO_PROVENANCE = "no provenance recorded in its files (built by an older version: rebuild it)"


def comparability_status(dataset: str, provenance: Mapping | None, *, protocol_reason: str = "") -> str:
    """Whether ``dataset``'s numbers may be set beside the published ones: :data:`COMPARABLE`, or the reason.

    The one place that decides it (issue 21.4), for every table that compares (Tables 2 and 3 with the paper,
    their AMI forms, the MTEB v2 table with MTEB's leaderboard, Table 5): comparable only when the dataset is the
    published one (its ``provenance``: the paper's published splits, or a build from the full source by the
    paper's rules, :func:`tecb.data.datasets.paper_comparison`, recorded when it was built) and, for a protocol
    other than the paper's, that protocol's own pool is the published one (``protocol_reason`` says why not).
    """
    if not provenance:
        return NO_PROVENANCE
    if "not_comparable_because" in provenance:
        why = provenance["not_comparable_because"]
    else:
        from tecb.data.datasets import paper_comparison

        why = paper_comparison(dataset, dict(provenance))
    why = why or protocol_reason
    return why if why else COMPARABLE


def comparability(names, splits_paths) -> dict[str, str]:
    """Per dataset, why it cannot be set beside the paper ("" = it can), from the provenance in its files
    (:func:`comparability_status`)."""
    from tecb.io import dataset_provenance

    out = {}
    for name, path in zip(names, splits_paths):
        status = comparability_status(name, dataset_provenance(path))
        out[name] = "" if status == COMPARABLE else status
    return out


def comparability_line(not_comparable: Mapping[str, str], columns, published: str = "the paper's") -> str:
    """One footnote saying, for each dataset of ``columns`` in ``not_comparable`` (dataset -> reason, "" =
    comparable), "comparable" or why not, with ``published`` numbers."""
    parts = [
        f"{d}: {COMPARABLE if not not_comparable[d] else 'not comparable (' + short_reason(not_comparable[d]) + ')'}"
        for d in columns
        if d in not_comparable
    ]
    return f"Comparability with {published} published numbers: {'; '.join(parts)}." if parts else ""


def comparability_notes(not_comparable: dict[str, str], columns) -> list[str]:
    """Footnotes naming each dataset of ``columns`` that is not comparable and why."""
    bad = [(d, r) for d, r in not_comparable.items() if r and d in set(columns)]
    if not bad:
        return []
    return [f"{NOT_COMPARABLE.capitalize()} with the paper's dataset, so no Δ: {d}: {r}." for d, r in bad]


def paper_average_not_comparable(datasets, not_comparable: dict[str, str] | None = None) -> str:
    """Why this run's Table 2 average cannot be set beside the paper's ("" = it can): the paper averages its six
    datasets, so all six must be in the run and comparable (:func:`comparability`)."""
    missing = [d for d in PAPER_DATASETS if d not in set(datasets)]
    if missing:
        k = len(PAPER_DATASETS) - len(missing)
        return f"this run has {k} of the paper's {len(PAPER_DATASETS)} datasets"
    bad = [d for d in PAPER_DATASETS if (not_comparable or {}).get(d)]
    if bad:
        return (
            f"{bad[0]}{f' (and {len(bad) - 1} more)' if len(bad) > 1 else ''} is not comparable "
            f"({short_reason(not_comparable[bad[0]])})"
        )
    return ""


def compare(
    ours: pd.DataFrame,
    paper: pd.DataFrame,
    decimals: int = 2,
    row_label: str | None = None,
    column_label: str = "Dataset",
    not_comparable: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Long table of every cell of ``ours``: this run, the paper, and delta = this run - paper (rounded values).

    Rows of ``ours`` missing in ``paper`` (and the reverse cells) show NaN (rendered "n/a"); so does the paper's
    Average when this run covers other datasets than the paper's table. A dataset (row or column) named in
    ``not_comparable`` with a reason gets no delta: its cell says "not comparable (short reason)"; so does the
    Average when one of the paper's datasets it averages is not comparable.
    """
    paper = paper.copy()
    not_comparable = {k: v for k, v in (not_comparable or {}).items() if v}
    ours_paper = {c for c in ours.columns if c in PAPER_DATASETS}
    if "Average" in paper.columns and ours_paper != {c for c in paper.columns if c != "Average"}:
        paper["Average"] = np.nan  # an average over other datasets is not comparable
    bad_in_average = [c for c in ours.columns if c in ours_paper and c in not_comparable]
    rows = []
    for idx in ours.index:
        for col in ours.columns:
            mine = ours.at[idx, col]
            theirs = paper.at[idx, col] if idx in paper.index and col in paper.columns else np.nan
            mine = float(mine) if pd.notna(mine) else np.nan
            theirs = float(theirs) if pd.notna(theirs) else np.nan
            delta = round(round(mine, decimals) - round(theirs, decimals), decimals)
            reason = not_comparable.get(idx) or not_comparable.get(col)
            if reason is None and col == "Average" and bad_in_average:
                reason = not_comparable[bad_in_average[0]]
            if reason and not np.isnan(theirs):
                delta = f"{NOT_COMPARABLE} ({short_reason(reason)})"
            rows.append(
                {
                    row_label or ours.index.name or "": idx,
                    column_label: col,
                    "This run": round(mine, decimals),
                    "Paper": round(theirs, decimals),
                    "Δ": delta,
                }
            )
    out = pd.DataFrame(rows, columns=[row_label or ours.index.name or "", column_label, "This run", "Paper", "Δ"])
    return out.set_index(out.columns[0])
