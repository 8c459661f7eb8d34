"""Where chance lies in the tables (issue 21.3): the random-partition floor that :mod:`tecb.scoring.chance` scores,
summarised per table column and drawn as a row under a table.

:func:`chance_summary` gives, per dataset (and per split kind), the expected score of a random partition (the mean
over draws of the mean over splits, as a table cell averages splits) and the percentile interval of that cell over
the draws: a real model whose cell is not above the interval's upper end is not distinguishable from a random
partition. :func:`mteb_v2_chance_cells` does the same for MTEB v2's protocol; :func:`add_chance_row` draws the row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


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

    ``chance``: dataset -> :func:`tecb.scoring.chance.chance_scores` rows. Columns are the datasets, the average columns of
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
    """Per dataset of ``chance`` (dataset -> :func:`tecb.scoring.chance.mteb_v2_chance` rows) and per average column of ``averages``
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
