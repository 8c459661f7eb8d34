"""Where chance lies (issue 21.3): the scores of a random partition on a dataset's own splits.

For each split, ``n_draws`` seeded random partitions of its texts into as many clusters as the split has gold
labels (each text drawn uniformly into one of the k clusters: a clusterer that sees no text, given the k that
k-means is given) are scored with the same metrics as the real clusterings (:func:`tecb.cluster.metrics.score`).
:func:`chance_scores` writes one row per (split, draw); :func:`chance_summary` gives, per dataset (and per split
kind), the expected score (the mean over draws of the mean over splits, as a table cell averages splits) and the
percentile interval of that cell over the draws: a real model whose cell is not above the interval's upper end is
not distinguishable from a random partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tecb.cluster.metrics import score

METRICS = ("v_measure", "ami", "ari", "homogeneity", "completeness")


def chance_scores(splits: pd.DataFrame, *, n_draws: int, seed: int) -> pd.DataFrame:
    """One row per (split, draw): ``split, draw, n_texts, n_labels`` and the :data:`METRICS` of a uniformly random
    partition of the split's rows into as many clusters as it has labels. Seeded: one generator from ``seed``,
    consumed split by split in ascending order."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    rng = np.random.default_rng(seed)
    rows = []
    for split in sorted(splits["split"].unique()):
        gold = splits.loc[splits["split"] == split, "label"].to_numpy()
        k = len(pd.unique(gold))
        for draw in range(n_draws):
            s = score(gold, rng.integers(0, k, size=gold.size))
            rows.append(
                {"split": int(split), "draw": draw, "n_texts": s["n_texts"], "n_labels": s["n_labels"]}
                | {m: s[m] for m in METRICS}
            )
    return pd.DataFrame(rows, columns=["split", "draw", "n_texts", "n_labels", *METRICS])


def run(splits_path, out_path, *, n_draws: int, seed: int, log=print) -> pd.DataFrame:
    """:func:`chance_scores` of the dataset at ``splits_path`` to the Parquet file ``out_path``."""
    import pyarrow as pa

    from tecb.io import write_table

    rows = chance_scores(pd.read_parquet(splits_path), n_draws=n_draws, seed=seed)
    rows = rows.astype({"split": "int32", "draw": "int32", "n_texts": "int32", "n_labels": "int32"})
    write_table(pa.Table.from_pandas(rows, preserve_index=False).replace_schema_metadata(None), out_path)
    per_draw = rows.groupby("draw").v_measure.mean()
    log(f"{splits_path}: random partition V-measure {per_draw.mean():.4f} over {n_draws} draws")
    return rows


def _cell(per_draw: pd.Series, confidence: float) -> dict:
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(per_draw.to_numpy(float), [tail, 1 - tail])
    return {"mean": float(per_draw.mean()), "ci_low": float(lo), "ci_high": float(hi)}


def chance_summary(
    chance: Mapping[str, pd.DataFrame],
    *,
    metric: str,
    confidence: float,
    averages: Mapping[str, Sequence[str]] | None = None,
    split_kinds: Mapping[str, Mapping[int, str]] | None = None,
) -> pd.DataFrame:
    """Per column: a random partition's expected cell and its interval over the draws (``metric`` in 0..1).

    ``chance``: dataset -> :func:`chance_scores` rows. Columns are the datasets, the average columns of
    ``averages`` (name -> datasets; per draw the mean over them of each dataset's mean) and, with
    ``split_kinds``, ``(dataset, kind)`` pairs. Returns ``column, kind, mean, ci_low, ci_high`` (``kind`` "" for
    a whole dataset or an average).
    """
    per_draw = {d: rows.groupby("draw")[metric].mean() for d, rows in chance.items()}
    out = [{"column": d, "kind": ""} | _cell(s, confidence) for d, s in per_draw.items()]
    for name, group in (averages or {}).items():
        if group and all(d in per_draw for d in group):
            both = pd.concat([per_draw[d] for d in group], axis=1, join="inner")
            out.append({"column": name, "kind": ""} | _cell(both.mean(axis=1), confidence))
    for dataset, kinds in (split_kinds or {}).items():
        if dataset not in chance or not kinds:
            continue
        rows = chance[dataset].assign(kind=chance[dataset].split.map(dict(kinds)))
        for kind in dict.fromkeys(kinds.values()):
            sub = rows[rows.kind == kind]
            if not sub.empty:
                out.append({"column": dataset, "kind": kind} | _cell(sub.groupby("draw")[metric].mean(), confidence))
    return pd.DataFrame(out, columns=["column", "kind", "mean", "ci_low", "ci_high"])


def mteb_v2_chance_cells(
    chance: Mapping[str, pd.DataFrame],
    *,
    metric: str,
    confidence: float,
    averages: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Per dataset of ``chance`` (dataset -> :func:`tecb.report.chance_v2.mteb_v2_chance` rows) and per average column of ``averages``
    (name -> datasets; per draw the mean over them): ``column, mean, ci_low, ci_high``."""
    per_draw = {d: r.groupby("draw")[metric].mean() for d, r in chance.items()}
    rows = [{"column": d} | _cell(s, confidence) for d, s in per_draw.items()]
    for name, group in (averages or {}).items():
        if group and all(d in per_draw for d in group):
            both = pd.concat([per_draw[d] for d in group], axis=1, join="inner")
            rows.append({"column": name} | _cell(both.mean(axis=1), confidence))
    return pd.DataFrame(rows, columns=["column", "mean", "ci_low", "ci_high"])


def add_chance_row(
    table: pd.DataFrame, suffix: pd.DataFrame | None, cells: pd.DataFrame, keys: Sequence[tuple[str, str]] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``table`` (x 100) with the chance row appended, and its suffix with "‡" before every cell that is not above
    the chance range's upper end (compared as printed, 2 decimals) and the range in the chance row.

    ``cells``: ``column``, ``mean``, ``ci_low``, ``ci_high`` (0..1) and optionally ``kind``; ``keys``: the
    (column, kind) of each table column (default: the column itself, kind "")."""
    from tecb.report.tables import CHANCE_ROW

    cells = cells if "kind" in cells.columns else cells.assign(kind="")
    lookup = {(r["column"], r["kind"]): r for r in cells.to_dict("records")}
    found = [lookup.get(k) for k in (keys or [(c, "") for c in table.columns])]
    row = pd.DataFrame([[c["mean"] * 100 if c else np.nan for c in found]], index=[CHANCE_ROW], columns=table.columns)
    out = pd.concat([table, row])
    out.index.name = table.index.name
    marks = pd.DataFrame("", index=out.index, columns=out.columns, dtype=object)
    if suffix is not None:
        marks.loc[suffix.index, suffix.columns] = suffix
    for j, (col, c) in enumerate(zip(out.columns, found)):
        if c is None:
            continue
        for name in table.index:
            v = table.at[name, col]
            if pd.notna(v) and round(float(v), 2) <= round(c["ci_high"] * 100, 2):
                marks.at[name, col] = "‡" + marks.at[name, col]
        marks.iat[len(out) - 1, j] = f" [{c['ci_low'] * 100:.2f}, {c['ci_high'] * 100:.2f}]"
    return out, marks
