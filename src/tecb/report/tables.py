"""The paper's tables from the long scores table (design §4, §5).

- Table 1: dataset statistics.
- Table 2: k-means on raw embeddings, one row per model, one column per dataset, plus the average.
- Table 3: one row per (algorithm, reduction), each cell the mean over models.

Scores are V-measure x 100 with 2 decimals. Each table is written as Markdown, CSV and LaTeX.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from tecb.io import write_text

PAPER_DATASETS = [
    "BlurbsClusteringS2S",
    "BlurbsClusteringP2P",
    "TenKGnadClusteringS2S",
    "TenKGnadClusteringP2P",
    "RedditClusteringS2S",
    "RedditClusteringP2P",
]
KEYS = ["model", "dataset", "reduction", "algorithm"]
NA = "n/a"
NA_FOOTNOTE = (
    "n/a: no result (model or configuration not run, or dataset not built, e.g. Reddit without "
    "credentials); an average over datasets is n/a when one of its cells is."
)
_DATASET_RE = re.compile(r"^(?P<group>.+?)Clustering(?P<kind>S2S|P2P)$")


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


# --- the paper's numbers ----------------------------------------------------------------------

# The one cell of the printed Table 3 that the per-model results do not give (reference/README.md).
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


def comparability(names, splits_paths) -> dict[str, str]:
    """Per dataset, why it cannot be set beside the paper ("" = it can), from the provenance in its files."""
    from tecb.io import dataset_provenance

    out = {}
    for name, path in zip(names, splits_paths):
        prov = dataset_provenance(path)
        if not prov:
            out[name] = "no provenance recorded in its files (built by an older version: rebuild it)"
        else:
            out[name] = prov.get("not_comparable_because", "")
    return out


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


# The paper's Table 1 "Target" column (what is clustered) for its datasets; other datasets: the S2S/P2P kind.
TABLE1_TARGETS = {
    "BlurbsClusteringS2S": "book titles",
    "BlurbsClusteringP2P": "book titles + blurbs",
    "TenKGnadClusteringS2S": "news article titles",
    "TenKGnadClusteringP2P": "news article titles + texts",
    "RedditClusteringS2S": "submission titles",
    "RedditClusteringP2P": "submission titles + texts",
}


def table1(stats: list[dict]) -> pd.DataFrame:
    """Dataset statistics from :func:`dataset_stats` rows (machine-readable columns, as in ``table1.csv``),
    with the ``target`` column of the paper's Table 1."""
    df = pd.DataFrame(stats).set_index("dataset")
    df = df.reindex(dataset_order(df.index))
    df.insert(
        0,
        "target",
        [
            TABLE1_TARGETS.get(d)
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


# --- rendering ----------------------------------------------------------------------------


def _best(df: pd.DataFrame, decimals: int, mark_best: bool) -> set[tuple[int, int]]:
    """(row, column) positions holding the highest rounded value of their numeric column."""
    best = set()
    if not mark_best:
        return best
    for j, col in enumerate(df.columns):
        values = pd.to_numeric(df[col], errors="coerce").round(decimals)
        if values.notna().sum() >= 2:
            best |= {(i, j) for i, v in enumerate(values) if v == values.max()}
    return best


def _cells(
    df: pd.DataFrame,
    decimals: int,
    mark_best: bool = False,
    bold=lambda s: s,
    signed: tuple[str, ...] = ("Δ",),
    suffix: pd.DataFrame | None = None,
    escape=lambda s: s,
) -> list[list[str]]:
    """Formatted cells, the index first; ``suffix`` (same shape, strings) is appended after each (bold) value,
    e.g. a significance mark and an interval; ``escape`` is applied to every piece of text."""
    best = _best(df, decimals, mark_best)

    def fmt(v, col):
        if isinstance(v, (float, np.floating)):
            if np.isnan(v):
                return NA
            return f"{v:+.{decimals}f}" if col in signed else f"{v:.{decimals}f}"
        return str(v)

    def cell(i, j, v, c):
        text = escape(fmt(v, c))
        extra = suffix.iat[i, j] if suffix is not None else ""
        return (bold(text) if (i, j) in best else text) + (escape(extra) if isinstance(extra, str) else "")

    return [
        [escape(str(idx))] + [cell(i, j, v, c) for j, (v, c) in enumerate(zip(row, df.columns))]
        for i, (idx, row) in enumerate(zip(df.index, df.itertuples(index=False)))
    ]


def _has_na(df: pd.DataFrame) -> bool:
    return bool(df.isna().any().any())


def _notes(df: pd.DataFrame, mark_best: bool, footnotes, decimals: int = 2) -> list[str]:
    notes = list(footnotes)
    if _best(df, decimals, mark_best):
        notes.insert(0, "Bold: the best value of each column.")
    if _has_na(df):
        notes.append(NA_FOOTNOTE)
    return notes


def header_label(column) -> str:
    """``BlurbsClusteringS2S`` -> ``Blurbs S2S`` (the paper's grouped header in one line)."""
    group, kind = column_group(column)
    return f"{group} {kind}".strip()


def to_markdown(
    df: pd.DataFrame,
    decimals: int = 2,
    caption: str = "",
    mark_best: bool = False,
    footnotes=(),
    suffix: pd.DataFrame | None = None,
) -> str:
    """A Markdown table; dataset columns read ``Blurbs S2S`` etc.; best per column in bold; notes below."""
    header = [df.index.name or ""] + [header_label(c) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(df.columns)) + "|"]
    lines += [
        "| " + " | ".join(row) + " |" for row in _cells(df, decimals, mark_best, lambda s: f"**{s}**", suffix=suffix)
    ]
    text = "\n".join(lines) + "\n"
    notes = _notes(df, mark_best, footnotes, decimals)
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    return (f"{caption}\n\n" if caption else "") + text


def _tex(s: str) -> str:
    return (
        s.replace("\\", r"\textbackslash{}")
        .replace("&", r"\&")
        .replace("_", r"\_")
        .replace("%", r"\%")
        .replace("#", r"\#")
        .replace("Δ", r"$\Delta$")
        .replace("†", r"$^\dagger$")
    )


def to_latex(
    df: pd.DataFrame,
    decimals: int = 2,
    caption: str = "",
    mark_best: bool = False,
    footnotes=(),
    suffix: pd.DataFrame | None = None,
) -> str:
    """A booktabs table; dataset columns grouped (Blurbs / TenKGnad / Reddit over S2S / P2P)."""
    groups = [column_group(c) for c in df.columns]
    lines = [r"\begin{table}[ht]", r"\centering", r"\begin{tabular}{l" + "r" * len(df.columns) + "}", r"\toprule"]
    if any(kind for _, kind in groups):
        top, rules, j = [""], [], 0
        while j < len(groups):
            k = j
            while k + 1 < len(groups) and groups[k + 1][0] == groups[j][0] and groups[j][1]:
                k += 1
            span = k - j + 1
            top.append(
                rf"\multicolumn{{{span}}}{{c}}{{{_tex(groups[j][0])}}}"
                if span > 1
                else (_tex(groups[j][0]) if groups[j][1] else "")
            )
            if groups[j][1]:
                rules.append(rf"\cmidrule(lr){{{j + 2}-{k + 2}}}")
            j = k + 1
        lines.append(" & ".join(top) + r" \\")
        lines.append(" ".join(rules))
        second = [_tex(df.index.name or "")] + [_tex(kind or group) for group, kind in groups]
    else:
        second = [_tex(df.index.name or "")] + [_tex(str(c)) for c in df.columns]
    lines += [" & ".join(second) + r" \\", r"\midrule"]
    lines += [
        " & ".join(row) + r" \\"
        for row in _cells(df, decimals, mark_best, lambda s: rf"\textbf{{{s}}}", suffix=suffix, escape=_tex)
    ]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{_tex(caption)}}}")
    notes = _notes(df, mark_best, footnotes, decimals)
    if notes:
        lines.append(r"\par\footnotesize " + r" \\ ".join(_tex(n) for n in notes))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_csv(df: pd.DataFrame, decimals: int = 2) -> str:
    """Plain CSV: full dataset names, rounded numbers, "n/a" for missing cells."""
    return df.round(decimals).to_csv(na_rep=NA)


def to_html(
    df: pd.DataFrame,
    decimals: int = 2,
    caption: str = "",
    mark_best: bool = False,
    footnotes=(),
    suffix: pd.DataFrame | None = None,
) -> str:
    """A standalone HTML table (for the Snakemake report): grouped dataset header, best per column in bold."""
    from html import escape

    groups = [column_group(c) for c in df.columns]
    head = ["<tr><th></th>"]
    j = 0
    while j < len(groups):
        k = j
        while k + 1 < len(groups) and groups[k + 1][0] == groups[j][0] and groups[j][1]:
            k += 1
        head.append(f'<th colspan="{k - j + 1}">{escape(groups[j][0]) if groups[j][1] else ""}</th>')
        j = k + 1
    head.append(
        "</tr>\n<tr><th>"
        + escape(df.index.name or "")
        + "</th>"
        + "".join(f"<th>{escape(kind or group)}</th>" for group, kind in groups)
        + "</tr>"
    )
    body = [
        "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
        for row in _cells(
            df.rename(index=lambda i: escape(str(i))).map(lambda v: escape(v) if isinstance(v, str) else v),
            decimals,
            mark_best,
            lambda s: f"<b>{s}</b>",
            suffix=None if suffix is None else suffix.map(lambda v: escape(v) if isinstance(v, str) else v),
        )
    ]
    notes = "".join(f"<li>{escape(n)}</li>" for n in _notes(df, mark_best, footnotes, decimals))
    style = (
        "<style>table{border-collapse:collapse;font-family:sans-serif;font-size:13px}"
        "td,th{padding:3px 8px;border-bottom:1px solid #ddd}td{text-align:right}"
        "td:first-child{text-align:left}</style>"
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>{style}</head><body>\n"
        + (f"<p>{escape(caption)}</p>\n" if caption else "")
        + "<table>\n"
        + "".join(head)
        + "\n"
        + "\n".join(body)
        + "\n</table>\n"
        + (f"<ul>{notes}</ul>\n" if notes else "")
        + "</body></html>\n"
    )


FORMATS = ("md", "csv", "tex", "html")


def write_formats(
    df: pd.DataFrame,
    paths,
    caption: str = "",
    decimals: int = 2,
    mark_best: bool = False,
    footnotes=(),
    suffix: pd.DataFrame | None = None,
) -> list[Path]:
    """Write ``df`` to each of ``paths``, a mapping format -> path (formats of :data:`FORMATS`); return the paths."""
    unknown = sorted(set(paths) - set(FORMATS))
    if unknown:
        raise ValueError(f"a table is written as {', '.join(FORMATS)}, not {', '.join(unknown)}")
    render = {
        "md": lambda: to_markdown(df, decimals, caption, mark_best, footnotes, suffix),
        "csv": lambda: to_csv(df, decimals),
        "tex": lambda: to_latex(df, decimals, caption, mark_best, footnotes, suffix),
        "html": lambda: to_html(df, decimals, caption, mark_best, footnotes, suffix),
    }
    written = []
    for ext, path in paths.items():
        write_text(render[ext](), path)
        written.append(Path(path))
    return written


def stem_paths(stem: str | Path, formats=FORMATS) -> dict[str, Path]:
    """``{format: stem.format}``: the paths of one table for callers without a workflow (the rules name theirs)."""
    stem = Path(stem)
    return {ext: stem.with_name(f"{stem.name}.{ext}") for ext in formats}


def write_all_formats(
    df: pd.DataFrame,
    stem: str | Path,
    caption: str = "",
    decimals: int = 2,
    mark_best: bool = False,
    footnotes=(),
    suffix: pd.DataFrame | None = None,
) -> list[Path]:
    """Write ``stem.md``, ``stem.csv``, ``stem.tex`` and ``stem.html``; return the paths."""
    return write_formats(df, stem_paths(stem), caption, decimals, mark_best, footnotes, suffix)


# --- workflow entry points ------------------------------------------------------------------


def collect_scores(score_paths, keys, out_path, log=print) -> pd.DataFrame:
    """Concatenate per-configuration score files into one long table; ``keys`` gives each file's
    ``(model, dataset, reduction, algorithm)`` in the order of ``score_paths`` (the rule names them)."""
    import pyarrow as pa

    from tecb.io import write_table

    score_paths, keys = list(score_paths), [tuple(k) for k in keys]
    if len(score_paths) != len(keys):
        raise ValueError(f"{len(score_paths)} score files but {len(keys)} keys")
    frames = []
    for path, (model, dataset, reduction, algorithm) in zip(map(str, score_paths), keys):
        df = pd.read_parquet(path)
        df.insert(0, "algorithm", algorithm)
        df.insert(0, "reduction", reduction)
        df.insert(0, "dataset", dataset)
        df.insert(0, "model", model)
        frames.append(df)
    scores = pd.concat(frames, ignore_index=True)
    write_table(pa.Table.from_pandas(scores, preserve_index=False), out_path)
    log(f"{len(frames)} score files, {len(scores)} rows -> {out_path}")
    return scores


METRIC_LABELS = {
    "v_measure": "V-measure",
    "ami": "AMI",
    "ari": "ARI",
    "homogeneity": "homogeneity",
    "completeness": "completeness",
}
STATISTICS_DEFAULTS = {
    "enabled": True,
    "test": "wilcoxon",
    "alpha": 0.05,
    "confidence": 0.95,
    "n_resamples": 10_000,
    "intervals": True,
}


def table2_statistics(
    scores: pd.DataFrame,
    t2: pd.DataFrame,
    model_names,
    datasets,
    table2_config,
    statistics: dict | None,
    *,
    seed: int,
    metric: str = "v_measure",
):
    """Intervals and significance marks for Table 2 (see :mod:`tecb.report.stats`): ``(suffix, footnotes, long)``;
    ``(None, [], None)`` when ``statistics`` is off."""
    from tecb.report import stats as S

    opts = {**STATISTICS_DEFAULTS, **(statistics or {})}
    if statistics is None or not opts["enabled"]:
        return None, [], None
    keep = scores[scores.model.isin(list(model_names))] if model_names else scores
    columns = [c for c in t2.columns if c not in ("Average", OTHER_AVERAGE)]
    paper, other = [c for c in columns if c in PAPER_DATASETS], [c for c in columns if c not in PAPER_DATASETS]
    averages = {"Average": paper} | ({OTHER_AVERAGE: other} if other else {}) if paper else {"Average": other}
    long = S.table_statistics(
        keep,
        algorithm=table2_config["algorithm"],
        reduction=table2_config["reduction"],
        datasets=columns,
        metric=metric,
        test=opts["test"],
        alpha=opts["alpha"],
        confidence=opts["confidence"],
        n_resamples=opts["n_resamples"],
        seed=seed,
        averages=averages,
    )  # the averages as add_averages() forms them
    suffix = S.table_marks(t2, long, model_names, show_intervals=opts["intervals"])
    return suffix, [S.describe_test(opts["test"], opts["alpha"], opts["confidence"], opts["intervals"])], long


def table_keys(reference: bool, metrics=("v_measure",), statistics: bool = False) -> list[str]:
    """The keys of the ``outputs`` :func:`render_tables` writes: ``table1``-``table3``, with a reference
    ``table{1,2,3}_vs_paper``, ``table{2,3}_{metric}`` per further metric (each format -> path), and with
    statistics ``table2_statistics`` and ``intervals`` (``{"csv": path}``)."""
    keys = ["table1", "table2", "table3"]
    keys += ["table1_vs_paper", "table2_vs_paper", "table3_vs_paper"] if reference else []
    keys += [f"table{n}_{m}" for m in metrics if m != "v_measure" for n in (2, 3)]
    keys += ["table2_statistics", "intervals"] if statistics else []
    return keys


def outputs_in(directory, keys) -> dict[str, dict[str, Path]]:
    """``{key: {format: directory/key.format}}`` for :func:`render_tables` called outside the workflow (the
    tables rule passes its declared outputs); the statistics files are CSV only."""
    csv_only = {"table2_statistics", "intervals"}
    return {k: stem_paths(Path(directory) / k, ("csv",) if k in csv_only else FORMATS) for k in keys}


def _check_outputs(outputs, keys) -> None:
    missing, extra = [k for k in keys if k not in outputs], sorted(set(outputs) - set(keys))
    if missing or extra:
        raise ValueError(
            "tables: the outputs given do not match the tables to write: "
            + "; ".join(
                p for p in (f"missing {missing}" if missing else "", f"not written {extra}" if extra else "") if p
            )
        )
    for key in ("table2_statistics", "intervals"):
        if key in outputs and set(outputs[key]) != {"csv"}:
            raise ValueError(f"tables: {key} is written as CSV only, not {sorted(outputs[key])}")


def render_tables(
    scores_path,
    datasets,
    texts_paths,
    splits_paths,
    model_names,
    configurations,
    table2_config,
    outputs,
    reference=None,
    reference_table1=None,
    log=print,
    statistics: dict | None = None,
    metrics=("v_measure",),
    *,
    seed: int,
) -> None:
    """Write Tables 1-3 and, with a reference, ``table{1,2,3}_vs_paper`` to exactly the files of ``outputs``.

    ``outputs`` maps each key of :func:`table_keys` to ``{format: path}`` (formats of :data:`FORMATS`; the tables
    rule passes its declared outputs; :func:`outputs_in` names them in a folder); a directory is accepted as
    ``outputs_in(directory, table_keys(...))``. ``statistics`` (keys of :data:`STATISTICS_DEFAULTS`; None = off)
    adds bootstrap intervals and significance marks to Table 2 and writes ``table2_statistics`` and
    ``intervals``; each further metric of ``metrics`` (``ami``, ...) adds ``table2_{metric}`` and
    ``table3_{metric}``. An ``Average`` over fewer than the paper's six datasets is headed
    ``Average (k of the paper's 6)``.
    """
    statistics_on = statistics is not None and {**STATISTICS_DEFAULTS, **statistics}["enabled"]
    keys = table_keys(reference is not None, metrics, statistics_on)
    if isinstance(outputs, (str, Path)):
        outputs = outputs_in(outputs, keys)
    _check_outputs(outputs, keys)
    stats = [
        dataset_stats(name, pd.read_parquet(t), pd.read_parquet(s))
        for name, t, s in zip(datasets, texts_paths, splits_paths)
    ]
    not_comparable = comparability(datasets, splits_paths)
    nc_notes = comparability_notes({d: r for d, r in not_comparable.items() if d in PAPER_DATASETS}, datasets)
    nc_plain = [n.replace(", so no Δ", "") for n in nc_notes]
    t1 = table1(stats)
    # Markdown / LaTeX / HTML read like the paper's Table 1; the CSV keeps one number per column
    write_formats(
        table1_display(t1),
        {k: v for k, v in outputs["table1"].items() if k != "csv"},
        "Table 1: dataset statistics (split size and classes: min–max over the splits; avg. chars: mean text length).",
        decimals=0,
        footnotes=nc_plain,
    )
    if "csv" in outputs["table1"]:
        write_text(to_csv(t1, 0), outputs["table1"]["csv"])
    scores = pd.read_parquet(scores_path)
    summary = summarize(scores)
    t2 = table2(summary, model_names, datasets=datasets, **table2_config)
    red = table2_config["reduction"]
    cfg = f"{table2_config['algorithm']} on {'raw' if red == 'none' else red + '-reduced'} embeddings"
    marks, notes2, long = table2_statistics(scores, t2, model_names, datasets, table2_config, statistics, seed=seed)
    write_formats(
        label_average(t2),
        outputs["table2"],
        f"Table 2: V-measure x 100, {cfg}, mean over splits.",
        mark_best=True,
        footnotes=notes2 + nc_plain,
        suffix=label_average(marks),
    )
    configurations = [tuple(c) for c in configurations]
    present = summary[summary.model.isin(list(model_names))] if model_names else summary
    t3, n_models = table3(present, configurations, datasets=datasets)
    per_cell = present.groupby(["algorithm", "reduction", "dataset"]).model.nunique()
    notes = (
        [f"Some cells average fewer models (as few as {per_cell.min()}): those without a result are left out."]
        if len(per_cell) and per_cell.min() < n_models
        else []
    )
    write_formats(
        label_average(t3),
        outputs["table3"],
        f"Table 3: V-measure x 100 per (algorithm, reduction), mean over the {n_models} model(s) present.",
        mark_best=True,
        footnotes=notes + nc_plain,
    )
    log(to_markdown(label_average(t2), mark_best=True, suffix=label_average(marks)))
    log(to_markdown(label_average(t3), mark_best=True))
    _extra_tables(
        scores, long, model_names, datasets, configurations, table2_config, statistics, seed, metrics, cfg, outputs, log
    )
    if reference is None:
        return
    p1 = (
        paper_table1(reference_table1)
        if reference_table1 and Path(reference_table1).exists()
        else pd.DataFrame(index=t1.index)
    )
    ours1 = t1.select_dtypes("number")
    t1_vs = compare(
        ours1.rename(columns=TABLE1_LABELS),
        p1.rename(columns=TABLE1_LABELS),
        decimals=0,
        column_label="Statistic",
        not_comparable=not_comparable,
    )
    write_formats(
        t1_vs,
        outputs["table1_vs_paper"],
        "Table 1 beside the paper's: this run, paper, delta.",
        decimals=0,
        footnotes=nc_notes,
    )
    write_formats(
        compare(label_average(t2), paper_table2(reference), not_comparable=not_comparable),
        outputs["table2_vs_paper"],
        f"Table 2 ({cfg}) beside the paper's per-model results: V-measure x "
        "100, delta = this run - paper. Models are matched by their config `name`.",
        footnotes=nc_notes,
    )
    p3, n_paper = paper_table3(reference)
    write_formats(
        compare(label_average(t3), p3, not_comparable=not_comparable),
        outputs["table3_vs_paper"],
        f"Table 3 beside the paper's printed Table 3 (mean over its {n_paper} models); this run "
        f"averages {n_models} model(s).",
        footnotes=[
            "The paper prints k-means / umap on BlurbsClusteringP2P as 29.58 (average 28.93); "
            "its per-model results give 32.93 (29.49). Paper rows it does not print are n/a."
        ]
        + nc_notes,
    )


def _extra_tables(
    scores, long, model_names, datasets, configurations, table2_config, statistics, seed, metrics, cfg, outputs, log
) -> None:
    """The statistics files and Tables 2 and 3 for each metric of ``metrics`` other than the V-measure."""
    from tecb.report import stats as S

    keep = scores[scores.model.isin(list(model_names))] if model_names else scores
    if long is not None:
        opts = {**STATISTICS_DEFAULTS, **(statistics or {})}
        write_text(long.round(6).to_csv(index=False), outputs["table2_statistics"]["csv"])
        frames = [
            S.intervals(keep, m, confidence=opts["confidence"], n_resamples=opts["n_resamples"], seed=seed)
            for m in dict.fromkeys(["v_measure", *metrics])
        ]
        write_text(pd.concat(frames, ignore_index=True).round(6).to_csv(index=False), outputs["intervals"]["csv"])
    for metric in metrics:
        if metric == "v_measure":
            continue
        if metric not in scores.columns:
            raise ValueError(f"tables.metrics: {metric!r} is not a column of the scores")
        label = METRIC_LABELS.get(metric, metric)
        summary = summarize(keep, metric)
        t2 = table2(summary, model_names, datasets=datasets, metric=metric, **table2_config)
        marks, notes, _ = table2_statistics(
            keep, t2, model_names, datasets, table2_config, statistics, seed=seed, metric=metric
        )
        write_formats(
            label_average(t2),
            outputs[f"table2_{metric}"],
            f"Table 2: {label} x 100, {cfg}, mean over splits.",
            mark_best=True,
            footnotes=notes,
            suffix=label_average(marks),
        )
        t3, n_models = table3(summary, [tuple(c) for c in configurations], datasets=datasets, metric=metric)
        write_formats(
            label_average(t3),
            outputs[f"table3_{metric}"],
            f"Table 3: {label} x 100 per (algorithm, reduction), mean over the {n_models} model(s) present.",
            mark_best=True,
        )
        log(to_markdown(label_average(t2), mark_best=True, suffix=label_average(marks)))
