"""The paper's tables computed from the long scores table (design §4, §5): the frames, not the files.

- Table 1: dataset statistics.
- Table 2: k-means on raw embeddings, one row per model, one column per dataset, plus the average.
- Table 3: one row per (algorithm, reduction), each cell the mean over models.

Scores are V-measure x 100. The paper's numbers and comparability: :mod:`tecb.report.paper`; Markdown, CSV,
LaTeX and HTML: :mod:`tecb.report.render`; the tables rule's files: :mod:`tecb.report.table_files`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

PAPER_DATASETS = [
    "BlurbsClusteringS2S",
    "BlurbsClusteringP2P",
    "TenKGnadClusteringS2S",
    "TenKGnadClusteringP2P",
    "RedditClusteringS2S",
    "RedditClusteringP2P",
]
KEYS = ["model", "dataset", "reduction", "algorithm"]
_DATASET_RE = re.compile(r"^(?P<group>.+?)Clustering(?P<kind>S2S|P2P)$")


def read_keyed(paths, keys, names, required=()) -> list[pd.DataFrame]:
    """Each file of ``paths`` (parquet) with its key's parts as leading columns ``names``: ``keys`` gives each
    file's key in the order of ``paths`` (the rule names them; no path parsing). A file without one of the
    ``required`` columns is a ValueError."""
    paths, keys = list(paths), [tuple(k) for k in keys]
    if len(paths) != len(keys):
        raise ValueError(f"{len(paths)} score files but {len(keys)} keys")
    frames = []
    for path, key in zip(map(str, paths), keys):
        df = pd.read_parquet(path)
        for col in required:
            if col not in df.columns:
                raise ValueError(f"{path}: missing column {col!r}")
        for name, value in reversed(list(zip(names, key))):
            df.insert(0, name, value)
        frames.append(df)
    return frames


def dataset_order(datasets) -> list[str]:
    """The paper's six datasets first (in the paper's order), then any others by name."""
    present = set(datasets)
    return [d for d in PAPER_DATASETS if d in present] + sorted(present - set(PAPER_DATASETS))


def column_group(column: str) -> tuple[str, str]:
    """``BlurbsClusteringS2S`` -> ``("Blurbs", "S2S")``; other columns -> ``(column, "")``."""
    m = _DATASET_RE.match(str(column))
    return (m["group"], m["kind"]) if m else (str(column), "")


def summarize(scores: pd.DataFrame, metric: str = "v_measure") -> pd.DataFrame:
    """Mean and standard deviation of ``metric`` (default the V-measure) over the splits of each (model, dataset,
    configuration); columns ``{metric}``, ``{metric}_std``, ``n_splits``."""
    grouped = scores.groupby(KEYS, sort=False)[metric]
    out = grouped.agg(**{metric: "mean", f"{metric}_std": "std", "n_splits": "count"}).reset_index()
    return out


def _wide(sub: pd.DataFrame, index: str, columns: list[str], metric: str = "v_measure") -> pd.DataFrame:
    """Pivot ``metric`` (x 100) to ``index`` x ``columns``; works on an empty frame too."""
    if sub.empty:
        return pd.DataFrame(index=pd.Index([], name=index), columns=columns, dtype=float)
    wide = sub.pivot_table(index=index, columns="dataset", values=metric, aggfunc="mean") * 100
    return wide.reindex(columns=columns).astype(float)


OTHER_AVERAGE = "Average (other datasets)"
CHANCE_ROW = "Random partition (chance)"


def add_averages(wide: pd.DataFrame) -> pd.DataFrame:
    """Append the average columns: ``Average`` over the paper's datasets present (the paper's Table 2 average),
    then the other datasets and their own ``Average (other datasets)``; with none of the paper's datasets,
    one ``Average`` over all. An average is NaN ("n/a") when one of its cells is."""
    paper = [c for c in wide.columns if c in PAPER_DATASETS]
    other = [c for c in wide.columns if c not in PAPER_DATASETS]
    out = wide[paper].copy()
    if paper:
        out["Average"] = wide[paper].mean(axis=1, skipna=False)
    for c in other:
        out[c] = wide[c]
    if other:
        out[OTHER_AVERAGE if paper else "Average"] = wide[other].mean(axis=1, skipna=False)
    if not paper and not other:
        out["Average"] = np.nan
    return out


def average_groups(columns) -> dict[str, list[str]]:
    """The average columns :func:`add_averages` appends to ``columns`` (datasets), each with the datasets it
    averages."""
    paper, other = [c for c in columns if c in PAPER_DATASETS], [c for c in columns if c not in PAPER_DATASETS]
    return {"Average": paper} | ({OTHER_AVERAGE: other} if other else {}) if paper else {"Average": other}


def average_label(columns) -> str:
    """The heading of the ``Average`` column: ``Average`` when it averages all six of the paper's datasets (or
    none of them: then it averages the run's own), else ``Average (k of the paper's 6)``, so that it is not
    read as the paper's average."""
    k = len(set(columns) & set(PAPER_DATASETS))
    return "Average" if k in (0, len(PAPER_DATASETS)) else f"Average ({k} of the paper's {len(PAPER_DATASETS)})"


def label_average(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """``df`` with its ``Average`` column headed by :func:`average_label` (for rendering)."""
    if df is None or "Average" not in df.columns:
        return df
    return df.rename(columns={"Average": average_label(df.columns)})


def table2(
    summary: pd.DataFrame,
    model_names: dict[str, str] | None = None,
    algorithm: str = "kmeans",
    reduction: str = "none",
    datasets=None,
    metric: str = "v_measure",
) -> pd.DataFrame:
    """Models x datasets (V-measure x 100) for one configuration, with the average over datasets.

    Every model of ``model_names`` (config order) and every dataset of ``datasets`` gets a row/column,
    NaN (rendered "n/a") where it has no result.
    """
    columns = dataset_order(list(datasets or []) + list(summary.dataset.unique()))
    sub = summary[(summary.algorithm == algorithm) & (summary.reduction == reduction)]
    wide = add_averages(_wide(sub, "model", columns, metric))
    model_order = list(model_names) if model_names else []
    model_order += sorted(m for m in wide.index if m not in model_order)
    wide = wide.reindex(model_order)
    wide.index = [model_names.get(m, m) if model_names else m for m in wide.index]
    wide.index.name = "Model"
    return wide


def config_label(algorithm: str, reduction: str) -> str:
    return f"{algorithm} / {reduction}"


def table3(
    summary: pd.DataFrame, configurations: list[tuple[str, str]] | None = None, datasets=None, metric: str = "v_measure"
) -> tuple[pd.DataFrame, int]:
    """(algorithm, reduction) x datasets, each cell the mean over the models present (x 100); also the model count."""
    columns = dataset_order(list(datasets or []) + list(summary.dataset.unique()))
    sub = summary.assign(config=[config_label(a, r) for a, r in zip(summary.algorithm, summary.reduction)])
    wide = add_averages(_wide(sub, "config", columns, metric))
    order = [config_label(*c) for c in configurations] if configurations else []
    order += sorted(c for c in wide.index if c not in order)
    wide = wide.reindex(order)
    wide.index.name = "Algorithm / reduction"
    return wide, int(summary.model.nunique())


TABLE1_TARGETS = {
    "BlurbsClusteringS2S": "book titles",
    "BlurbsClusteringP2P": "book titles + blurbs",
    "TenKGnadClusteringS2S": "news article titles",
    "TenKGnadClusteringP2P": "news article titles + texts",
    "RedditClusteringS2S": "submission titles",
    "RedditClusteringP2P": "submission titles + texts",
}


def table1(stats: list[dict], targets: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """Dataset statistics from :func:`dataset_stats` rows (machine-readable columns, as in ``table1.csv``),
    with the ``target`` column of the paper's Table 1: ``targets[dataset]`` (what its builder read,
    ``tecb.data.datasets.target_text``) where given, else the paper's words for its datasets' names."""
    targets = targets or {}
    df = pd.DataFrame(stats).set_index("dataset")
    df = df.reindex(dataset_order(df.index))
    df.insert(
        0,
        "target",
        [
            targets.get(d)
            or TABLE1_TARGETS.get(d)
            or {"S2S": "titles (S2S)", "P2P": "titles + texts (P2P)"}.get(column_group(d)[1], "n/a")
            for d in df.index
        ],
    )
    df.index.name = "Dataset"
    return df


# Table 1's columns as its rendered headers say them (one number each: the ranges' ends get "min"/"max").
TABLE1_LABELS = {
    "unique_samples": "Unique samples",
    "splits": "Splits",
    "split_size_min": "Split size (min)",
    "split_size_max": "Split size (max)",
    "classes_min": "Classes (min)",
    "classes_max": "Classes (max)",
    "avg_chars": "Avg. chars",
}


def table1_display(t1: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as the paper prints it: readable headers, split sizes and classes as ``min–max`` ranges."""

    def span(lo, hi):
        return f"{int(lo):,}" if lo == hi else f"{int(lo):,}–{int(hi):,}"

    return pd.DataFrame(
        {
            "Target": t1["target"],
            "Unique samples": [f"{int(v):,}" for v in t1["unique_samples"]],
            "Splits": t1["splits"].astype(int),
            "Split size": [span(a, b) for a, b in zip(t1["split_size_min"], t1["split_size_max"])],
            "Classes": [span(a, b) for a, b in zip(t1["classes_min"], t1["classes_max"])],
            "Avg. chars": t1["avg_chars"].astype(int),
        },
        index=t1.index,
    )


def dataset_stats(name: str, texts: pd.DataFrame, splits: pd.DataFrame) -> dict:
    """Unique samples, splits, split size range, classes range, average characters (Table 1 columns)."""
    sizes = splits.groupby("split").size()
    classes = splits.groupby("split")["label"].nunique()
    return {
        "dataset": name,
        "unique_samples": int(len(texts)),
        "splits": int(sizes.size),
        "split_size_min": int(sizes.min()),
        "split_size_max": int(sizes.max()),
        "classes_min": int(classes.min()),
        "classes_max": int(classes.max()),
        "avg_chars": int(round(texts["text"].str.len().mean())),
    }


METRIC_LABELS = {
    "v_measure": "V-measure",
    "ami": "AMI",
    "ari": "ARI",
    "homogeneity": "homogeneity",
    "completeness": "completeness",
}
STATISTICS_DEFAULTS = {
    "enabled": True,
    "test": "mean",
    "alpha": 0.05,
    "confidence": 0.95,
    "n_resamples": 10_000,
    "intervals": True,
}


def table2_statistics(
    scores: pd.DataFrame,
    t2: pd.DataFrame,
    model_names,
    table2_config,
    statistics,
    *,
    intervals: bool,
    metric: str = "v_measure",
    split_kinds: dict | None = None,
):
    """Intervals and significance marks for Table 2 (see :mod:`tecb.report.stats`): ``(suffix, footnotes, long)``;
    ``(None, [], None)`` when ``statistics`` (a :class:`tecb.report.stats.Statistics`) is None (off).
    ``intervals``: show the intervals in the cells (the config's ``tables.statistics.intervals``). ``split_kinds``
    (dataset -> split -> kind, :func:`split_kinds`): those datasets' intervals and tests are stratified by split
    kind."""
    from tecb.report import stats as S

    if statistics is None:
        return None, [], None
    keep = scores[scores.model.isin(list(model_names))] if model_names else scores
    columns = [c for c in t2.columns if c not in ("Average", OTHER_AVERAGE)]
    averages = average_groups(columns)
    long = S.table_statistics(
        keep,
        algorithm=table2_config["algorithm"],
        reduction=table2_config["reduction"],
        datasets=columns,
        metric=metric,
        statistics=statistics,
        averages=averages,
        split_kinds=split_kinds,
    )  # the averages as add_averages() forms them
    suffix = S.table_marks(t2, long, model_names, show_intervals=intervals)
    stratified = [d for d in columns if (split_kinds or {}).get(d)]
    note = S.describe_test(
        statistics.test, statistics.alpha, statistics.confidence, intervals, stratified, S.rests_on(long)
    )
    if statistics.pairs is not None:  # without saved predictions the note stays as it was (the analytic test)
        note += (
            " Differences, their intervals, p and detectable Δ: the paired text-level bootstrap over the saved "
            "predictions (the same resampled texts for both models; docs/statistics.md), where every model of a "
            "comparison has them."
        )
    return suffix, [note], long


def split_kinds(datasets, splits_paths) -> dict[str, dict[int, str]]:
    """Dataset -> split id -> split kind, for the datasets whose builder recorded ``split_kinds`` (Blurbs:
    coarse, fine, within-genre) in their files' provenance; the others are left out (one design)."""
    from tecb.io import dataset_provenance

    out = {}
    for name, path in zip(datasets, splits_paths):
        kinds = dataset_provenance(path).get("split_kinds")
        if kinds and len(set(kinds)) > 1:
            out[name] = {i: str(k) for i, k in enumerate(kinds)}
    return out


def split_overlaps(datasets, splits_paths, kinds: dict | None = None) -> dict:
    """Dataset -> the :class:`tecb.report.stats.Overlap` of its splits (:func:`tecb.report.stats.split_overlap`,
    stratified by ``kinds``, :func:`split_kinds`), read from each dataset's splits file (``split``, ``text_id``):
    how much wider the mean test's interval must be because the splits are subsamples of one pool; and
    ``dataset/kind`` for each split kind's splits alone."""
    from tecb.report.stats import split_overlap

    out = {}
    for name, path in zip(datasets, splits_paths):
        splits = pd.read_parquet(path, columns=["split", "text_id"])
        members = {int(s): g.text_id.to_numpy() for s, g in splits.groupby("split", sort=True)}
        known = (kinds or {}).get(name)
        strata = [known.get(s) for s in members] if known else None
        out[name] = split_overlap(list(members.values()), strata)
        for kind in dict.fromkeys(strata or []):  # each design alone, as the contrasts' per-design rows use it
            out[f"{name}/{kind}"] = split_overlap([m for m, k in zip(members.values(), strata) if k == kind])
    return out
