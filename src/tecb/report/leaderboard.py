"""The leaderboard table (issue 37.4): MTEB's published German clustering scores beside the project's.

The published values come from a dated snapshot of mteb's results repository shipped in ``reference/``
(``mteb_published_de.csv``: one row per (model, revision, task) with ``main_score``, the spread of its per-split or
per-bootstrap V-measures, the dataset revision and mteb version it was made with, and the results repository's
commit and file path it was read from; reference/README.md). The project's scores are the paper protocol's mean
V-measure over splits (k-means on raw embeddings) on the datasets whose splits are mteb's legacy task's
(:func:`tecb.report.mteb_results.mteb_task_of`) and the v2 protocol's score on ``*.v2`` tasks
(:mod:`tecb.scoring.mteb_v2`, its own comparability).

A pair is *comparable* when the model runs the published revision, the project's data and protocol are the task's
and the published dataset revision is the task's current one; its difference (ours - published, x 100) is then
shown, and marked when it is larger than the published score's own spread (the standard error of its mean over
splits or bootstraps, ``v_measure_std / sqrt(n_measures)``): such a difference is reported, never hidden. Every
other pair says "not comparable: why".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from tecb.report.mteb_results import MTEB_TASKS

CAPTION = (
    "The leaderboard: MTEB's published German clustering scores (a dated snapshot) beside this run's, with whether "
    "each pair is comparable and why not."
)
COLUMNS = [
    "model",
    "task",
    "published",
    "ours",
    "difference",
    "spread",
    "comparable",
    "status",
    "published_revision",
    "revision",
    "published_mteb_version",
    "source",
]
#: mteb's German clustering tasks -> their dataset's current revision (the .v2 tasks load the same datasets)
TASK_REVISIONS = {task: revision for (_, revision), task in MTEB_TASKS.items()}


def read_published(path) -> pd.DataFrame:
    """The snapshot of published scores (reference/mteb_published_de.csv)."""
    return pd.read_csv(path, dtype={"model_revision": str, "dataset_revision": str, "source_commit": str})


def read_missing(path) -> dict[str, str]:
    """mteb name -> why it has no published German clustering score, from the file beside the snapshot
    (``{snapshot}_missing.csv``, :mod:`tecb.report.mteb_snapshot`); empty when there is none."""
    beside = Path(path).with_name(Path(path).stem + "_missing.csv")
    return dict(pd.read_csv(beside).itertuples(index=False)) if beside.exists() else {}


def ours_paper(summary: pd.DataFrame, tasks: Mapping[str, str | None]) -> pd.DataFrame:
    """The paper protocol's rows of the project's scores: ``summary`` (:func:`tecb.report.tables.summarize`) at
    k-means on raw embeddings, one row per (model, dataset) with the mteb task its splits are (``tasks``: dataset ->
    legacy task, or None when the dataset's splits, k-means or seed are not mteb's)."""
    sub = summary[(summary.algorithm == "kmeans") & (summary.reduction == "none")]
    rows = []
    for r in sub.itertuples():
        task = tasks.get(r.dataset)
        rows.append(
            {
                "model": r.model,
                "task": task or r.dataset,
                "score": float(r.v_measure),
                "comparable": task is not None,
                "why": ""
                if task
                else (
                    f"the paper protocol's {r.dataset} is not mteb's task data (splits built here or a local copy, "
                    "or k-means/seed other than mteb's: tecb.report.mteb_results.mteb_task_of)"
                ),
            }
        )
    return pd.DataFrame(rows, columns=["model", "task", "score", "comparable", "why"])


def ours_v2(long: pd.DataFrame) -> pd.DataFrame:
    """The v2 protocol's rows (table_mteb_v2_long.csv) in the same form as :func:`ours_paper`."""
    return pd.DataFrame(
        {
            "model": long.model,
            "task": long.mteb_task,
            "score": long.v_measure.astype(float),
            "comparable": long.comparable.astype(bool),
            "why": long.not_comparable_because.fillna(""),
        }
    )


def leaderboard(
    published: pd.DataFrame,
    ours: pd.DataFrame,
    identities: Mapping[str, tuple[str, str]],
    names: Mapping[str, str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per (configured model, published task): the published value and ours (x 100), the difference where
    comparable, else "not comparable: why" (see the module docstring); a model the snapshot has no value for gets
    one row saying why (``missing``: mteb name -> reason, :func:`read_missing`). ``identities``: model key ->
    (mteb name, revision it runs); ``names``: model key -> display name."""
    names, missing = names or {}, missing or {}
    rows = []
    for key, (name, revision) in identities.items():
        if not (published.model == name).any():
            reason = missing.get(name, "no published score in the snapshot (reference/mteb_published_de.csv)")
            rows.append(_unpublished_row(names.get(key, key), revision, reason))
        for pub in published[published.model == name].itertuples():
            mine = ours[(ours.model == key) & (ours.task == pub.task)]
            score = float(mine.score.iloc[0]) if len(mine) else math.nan
            n = int(pub.n_measures)  # 0: the results file lists no per-split values (its spread is unknown)
            spread = 100 * float(pub.v_measure_std) / math.sqrt(n) if n else math.nan
            why = _not_comparable_because(pub, revision, mine)
            published_value = 100 * float(pub.main_score)
            ok = not why
            difference = 100 * score - published_value if ok else math.nan
            if ok:
                status = "comparable"
                if abs(difference) > spread:
                    status += f"; differs by more than the published spread (|{difference:+.2f}| > {spread:.2f})"
            else:
                status = "not comparable: " + "; ".join(why)
            rows.append(
                {
                    "model": names.get(key, key),
                    "task": pub.task,
                    "published": published_value,
                    "ours": 100 * score,
                    "difference": difference,
                    "spread": spread,
                    "comparable": ok,
                    "status": status,
                    "published_revision": pub.model_revision,
                    "revision": revision,
                    "published_mteb_version": pub.mteb_version,
                    "source": f"embeddings-benchmark/results@{pub.source_commit}:{pub.source_path}",
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def _unpublished_row(model: str, revision: str, reason: str) -> dict:
    row = dict.fromkeys(COLUMNS, "")
    row.update(model=model, published=math.nan, ours=math.nan, difference=math.nan, spread=math.nan)
    row.update(comparable=False, status=reason, revision=revision)
    return row


def _not_comparable_because(pub, revision: str, mine: pd.DataFrame) -> list[str]:
    """Why a published value (``pub``, a row of the snapshot) and the project's score (``mine``, its row or none) of
    a model run at ``revision`` cannot be compared; empty: they can."""
    why = []
    if str(pub.model_revision) != str(revision):
        why.append(f"published for revision {pub.model_revision}, run with {revision}")
    base = pub.task.removesuffix(".v2")
    if base in TASK_REVISIONS and str(pub.dataset_revision) != TASK_REVISIONS[base]:
        why.append(f"published on dataset revision {pub.dataset_revision}, mteb's task now {TASK_REVISIONS[base]}")
    if not len(mine):
        why.append("no project score on this task (dataset or protocol not in this run)")
    elif not bool(mine.comparable.iloc[0]):
        why.append(str(mine.why.iloc[0]))
    return why


def to_markdown(table: pd.DataFrame) -> str:
    """The leaderboard table as Markdown (scores x 100, 2 decimals; n/a where there is no value)."""

    def cell(v):
        if isinstance(v, float):
            return "n/a" if math.isnan(v) else f"{v:.2f}"
        return str(v)

    shown = ["model", "task", "published", "ours", "difference", "spread", "status"]
    lines = ["| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    lines += ["| " + " | ".join(cell(r[c]) for c in shown) + " |" for _, r in table.iterrows()]
    sources = sorted(set(table.source) - {""})
    notes = ["", "Published values: MTEB results repository snapshot (reference/mteb_published_de.csv):"]
    return "\n".join(lines + notes + [f"- {s}" for s in sources]) + "\n"
