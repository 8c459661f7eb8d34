"""The MTEB v2 table (issue 15.4, 21.1): the scores :func:`tecb.scoring.mteb_v2.run` writes per (model, dataset),
collected (:func:`collect`) and rendered beside their comparability and the protocol's chance row
(:func:`render_table`). The protocol itself is :mod:`tecb.scoring.mteb_v2`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tecb.scoring import mteb_v2 as protocol

LONG_COLUMNS = [
    "model",
    "dataset",
    "v_measure",
    "v_measure_std",
    "ami",
    "ami_std",
    "n_texts",
    "n_bootstraps",
    "mteb_task",
    "comparable",
    "not_comparable_because",
]


def collect(files) -> pd.DataFrame:
    """``{(model, dataset): path}`` of :func:`tecb.scoring.mteb_v2.run` files -> one row per (model, dataset): mean and SD of V-measure
    and AMI over the bootstraps (MTEB's ``v_measure``, ``v_measure_std``, ...), ``n_texts``, ``n_bootstraps``, and
    the comparability it recorded (``mteb_task``, ``comparable``, ``not_comparable_because``)."""
    rows = []
    for (model, dataset), path in files.items():
        df = pd.read_parquet(path)
        info = protocol.file_info(path)
        rows.append(
            {
                "model": model,
                "dataset": dataset,
                **protocol.summary(df),
                "n_texts": int(df.n_texts.iloc[0]),
                "n_bootstraps": len(df),
                "mteb_task": info.get("mteb_task"),
                "comparable": bool(info.get("comparable", False)),
                "not_comparable_because": info.get("not_comparable_because", "written without comparability"),
            }
        )
    return pd.DataFrame(rows, columns=LONG_COLUMNS)


def comparability_notes(long: pd.DataFrame) -> list[str]:
    """One note per dataset: the mteb task class whose protocol it follows and whether its scores are
    comparable with that task on mteb's leaderboard (and why not)."""
    notes = []
    for dataset, g in long.groupby("dataset", sort=False):
        task = g.mteb_task.iloc[0]
        whys = sorted(set(g.not_comparable_because[~g.comparable]))
        if not whys:
            notes.append(f"{dataset}: comparable with mteb's {task} (same published pool, seed and options).")
        else:
            notes.append(f"{dataset}: {task} protocol; not comparable with mteb's leaderboard: {'; '.join(whys)}.")
    return notes


def _sd_suffix(table: pd.DataFrame, summary: pd.DataFrame, model_names, metric: str) -> pd.DataFrame:
    """The table's cell suffixes: `` ± SD`` over the bootstraps (x 100) where the cell has a value."""
    sd = summary.pivot_table(index="model", columns="dataset", values=f"{metric}_std", aggfunc="mean") * 100
    suffix = pd.DataFrame("", index=table.index, columns=table.columns, dtype=object)
    names = dict(model_names or {})
    for model in sd.index:
        for dataset in sd.columns:
            name = names.get(model, model)
            if name in suffix.index and dataset in suffix.columns and pd.notna(table.at[name, dataset]):
                suffix.at[name, dataset] = f" ± {sd.at[model, dataset]:.2f}"
    return suffix


def _add_chance(table, suffix, chance: dict, datasets, metric: str, confidence: float):
    """``(table, suffix)`` with the chance row of this protocol (:func:`tecb.scoring.chance.mteb_v2_chance` files) appended and
    the cells not above its range marked ‡."""
    from tecb.report import tables as T
    from tecb.report.chance import add_chance_row, mteb_v2_chance_cells

    cells = mteb_v2_chance_cells(
        {d: pd.read_parquet(p) for d, p in chance.items()},
        metric=metric,
        confidence=confidence,
        averages=T.average_groups([c for c in datasets if c in chance]),
    )
    return add_chance_row(table, suffix, cells)


@dataclass(frozen=True, kw_only=True)
class TableFiles:
    """The files of :func:`render_table`. Inputs: ``results`` ((model, dataset) -> :func:`tecb.scoring.mteb_v2.run`'s file, as for
    :func:`collect`) and ``chance`` (dataset -> :func:`tecb.scoring.chance.mteb_v2_chance`'s file; None: no
    chance row). Outputs (the rule's declared ones): ``table`` (format -> path: ``md``, ``csv``, ``tex``, ``html``)
    and ``long`` (the CSV of one row per (model, dataset))."""

    results: Mapping
    table: Mapping
    long: str | Path
    chance: Mapping | None = None


def render_table(
    files: TableFiles,
    model_names,
    datasets,
    *,
    metric: str = "v_measure",
    confidence: float = 0.95,
    log=print,
) -> pd.DataFrame:
    """The MTEB v2 table (models x datasets, ``metric`` x 100, "± SD over bootstraps") and its long CSV to the
    outputs of ``files`` (:class:`TableFiles`). Its ``chance`` files add the chance row (not in the CSV) and mark ‡
    the cells not above its ``confidence`` range."""
    from tecb.io import write_text
    from tecb.report import render as R
    from tecb.report import tables as T

    chance, table_paths = files.chance, files.table
    long = collect(files.results)
    summary = long.assign(reduction="none", algorithm="mteb_v2")
    table = T.table2(summary, model_names, algorithm="mteb_v2", reduction="none", datasets=datasets, metric=metric)
    suffix = _sd_suffix(table, summary, model_names, metric)
    label = "V-measure" if metric == "v_measure" else metric.upper()
    notes = [
        f"MTEB v2 protocol of mteb {protocol.MTEB_VERSION} (src/tecb/report/mteb_v2.py): each dataset pooled and "
        "sub-sampled as the mteb task class of its kind does, then k-means on bootstrap samples drawn with "
        "replacement; mean ± SD over the bootstraps, as MTEB reports it. Not comparable with Table 2 (another "
        "protocol).",
        *comparability_notes(long),
    ]
    plain = table
    if chance:
        table, suffix = _add_chance(table, suffix, chance, datasets, metric, confidence)
        notes.append(
            f"{T.CHANCE_ROW}: this protocol run on seeded random vectors (each k-means partition then a random "
            f"partition with the level's number of clusters): mean and the range over the draws; ‡: not above "
            "that range's upper end."
        )
    R.write_formats(
        table,
        {k: v for k, v in table_paths.items() if k != "csv"},
        f"MTEB v2 clustering: {label} x 100 per model and dataset.",
        mark_best=True,
        footnotes=notes,
        suffix=suffix,
    )
    if "csv" in table_paths:
        write_text(R.to_csv(plain), table_paths["csv"])
    write_text(long.round(6).to_csv(index=False), files.long)
    log(R.to_markdown(table, mark_best=True, suffix=suffix))
    return table
