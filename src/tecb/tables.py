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
NA_FOOTNOTE = ("n/a: no result (model or configuration not run, or dataset not built, e.g. Reddit without "
               "credentials); an average over datasets is n/a when one of its cells is.")
_DATASET_RE = re.compile(r"^(?P<group>.+?)Clustering(?P<kind>S2S|P2P)$")


def dataset_order(datasets) -> list[str]:
    """The paper's six datasets first (in the paper's order), then any others by name."""
    present = set(datasets)
    return [d for d in PAPER_DATASETS if d in present] + sorted(present - set(PAPER_DATASETS))


def column_group(column: str) -> tuple[str, str]:
    """``BlurbsClusteringS2S`` -> ``("Blurbs", "S2S")``; other columns -> ``(column, "")``."""
    m = _DATASET_RE.match(str(column))
    return (m["group"], m["kind"]) if m else (str(column), "")


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of the V-measure over the splits of each (model, dataset, configuration)."""
    grouped = scores.groupby(KEYS, sort=False)["v_measure"]
    out = grouped.agg(v_measure="mean", v_measure_std="std", n_splits="count").reset_index()
    return out


def _wide(sub: pd.DataFrame, index: str, columns: list[str]) -> pd.DataFrame:
    """Pivot ``v_measure`` (x 100) to ``index`` x ``columns``; works on an empty frame too."""
    if sub.empty:
        return pd.DataFrame(index=pd.Index([], name=index), columns=columns, dtype=float)
    wide = sub.pivot_table(index=index, columns="dataset", values="v_measure", aggfunc="mean") * 100
    return wide.reindex(columns=columns).astype(float)


def table2(summary: pd.DataFrame, model_names: dict[str, str] | None = None,
           algorithm: str = "kmeans", reduction: str = "none", datasets=None) -> pd.DataFrame:
    """Models x datasets (V-measure x 100) for one configuration, with the average over datasets.

    Every model of ``model_names`` (config order) and every dataset of ``datasets`` gets a row/column,
    NaN (rendered "n/a") where it has no result.
    """
    columns = dataset_order(list(datasets or []) + list(summary.dataset.unique()))
    sub = summary[(summary.algorithm == algorithm) & (summary.reduction == reduction)]
    wide = _wide(sub, "model", columns)
    wide["Average"] = wide.mean(axis=1, skipna=False)
    model_order = list(model_names) if model_names else []
    model_order += sorted(m for m in wide.index if m not in model_order)
    wide = wide.reindex(model_order)
    wide.index = [model_names.get(m, m) if model_names else m for m in wide.index]
    wide.index.name = "Model"
    return wide


def config_label(algorithm: str, reduction: str) -> str:
    return f"{algorithm} / {reduction}"


def table3(summary: pd.DataFrame, configurations: list[tuple[str, str]] | None = None,
           datasets=None) -> tuple[pd.DataFrame, int]:
    """(algorithm, reduction) x datasets, each cell the mean over the models present (x 100); also the model count."""
    columns = dataset_order(list(datasets or []) + list(summary.dataset.unique()))
    sub = summary.assign(config=[config_label(a, r) for a, r in zip(summary.algorithm, summary.reduction)])
    wide = _wide(sub, "config", columns)
    wide["Average"] = wide.mean(axis=1, skipna=False)
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
    config_label(a, r) for a in ("hdbscan", "dbstream") for r in ("pca", "umap")]


def load_reference(path, in_paper_tables_only: bool = False) -> pd.DataFrame:
    """``paper_results.csv`` as a summary frame (model = the paper's name, v_measure in 0..1)."""
    path = Path(path)
    ref = pd.read_csv(path)
    missing = {"paper_name", "in_paper_tables", "algorithm", "reduction"} - set(ref.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
    if in_paper_tables_only:
        ref = ref[ref.in_paper_tables.astype(str).str.lower() == "yes"]
    datasets = [c for c in ref.columns if c not in {"paper_name", "hf_model", "in_paper_tables", "algorithm",
                                                    "reduction"}]
    long = ref.melt(id_vars=["paper_name", "algorithm", "reduction"], value_vars=datasets, var_name="dataset",
                    value_name="v_measure").rename(columns={"paper_name": "model"})
    bad = long[pd.to_numeric(long.v_measure, errors="coerce").isna() & long.v_measure.notna()]
    if not bad.empty:
        row = bad.iloc[0]
        raise ValueError(f"{path}: model {row.model!r}, {row.algorithm}/{row.reduction}, field {row.dataset!r}: "
                         f"not a number: {row.v_measure!r}")
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


def compare(ours: pd.DataFrame, paper: pd.DataFrame, decimals: int = 2, row_label: str | None = None,
            column_label: str = "Dataset") -> pd.DataFrame:
    """Long table of every cell of ``ours``: this run, the paper, and delta = this run - paper (rounded values).

    Rows of ``ours`` missing in ``paper`` (and the reverse cells) show NaN (rendered "n/a"); so does the paper's
    Average when this run covers other datasets than the paper's table.
    """
    paper = paper.copy()
    if "Average" in paper.columns and ({c for c in ours.columns if c != "Average"}
                                       != {c for c in paper.columns if c != "Average"}):
        paper["Average"] = np.nan  # an average over other datasets is not comparable
    rows = []
    for idx in ours.index:
        for col in ours.columns:
            mine = ours.at[idx, col]
            theirs = paper.at[idx, col] if idx in paper.index and col in paper.columns else np.nan
            mine = float(mine) if pd.notna(mine) else np.nan
            theirs = float(theirs) if pd.notna(theirs) else np.nan
            rows.append({row_label or ours.index.name or "": idx, column_label: col,
                         "This run": round(mine, decimals), "Paper": round(theirs, decimals),
                         "Δ": round(round(mine, decimals) - round(theirs, decimals), decimals)})
    out = pd.DataFrame(rows, columns=[row_label or ours.index.name or "", column_label, "This run", "Paper", "Δ"])
    return out.set_index(out.columns[0])


def table1(stats: list[dict]) -> pd.DataFrame:
    """Dataset statistics from :func:`dataset_stats` rows."""
    df = pd.DataFrame(stats).set_index("dataset")
    df = df.reindex(dataset_order(df.index))
    df.index.name = "Dataset"
    return df


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


def _cells(df: pd.DataFrame, decimals: int, mark_best: bool = False, bold=lambda s: s,
           signed: tuple[str, ...] = ("Δ",)) -> list[list[str]]:
    best = _best(df, decimals, mark_best)

    def fmt(v, col):
        if isinstance(v, (float, np.floating)):
            if np.isnan(v):
                return NA
            return f"{v:+.{decimals}f}" if col in signed else f"{v:.{decimals}f}"
        return str(v)

    return [[str(idx)] + [bold(fmt(v, c)) if (i, j) in best else fmt(v, c)
                          for j, (v, c) in enumerate(zip(row, df.columns))]
            for i, (idx, row) in enumerate(zip(df.index, df.itertuples(index=False)))]


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


def to_markdown(df: pd.DataFrame, decimals: int = 2, caption: str = "", mark_best: bool = False,
                footnotes=()) -> str:
    """A Markdown table; dataset columns read ``Blurbs S2S`` etc.; best per column in bold; notes below."""
    header = [df.index.name or ""] + [header_label(c) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(df.columns)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _cells(df, decimals, mark_best, lambda s: f"**{s}**")]
    text = "\n".join(lines) + "\n"
    notes = _notes(df, mark_best, footnotes, decimals)
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    return (f"{caption}\n\n" if caption else "") + text


def _tex(s: str) -> str:
    return (s.replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("_", r"\_").replace("%", r"\%")
            .replace("#", r"\#").replace("Δ", r"$\Delta$"))


def to_latex(df: pd.DataFrame, decimals: int = 2, caption: str = "", mark_best: bool = False,
             footnotes=()) -> str:
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
            top.append(rf"\multicolumn{{{span}}}{{c}}{{{_tex(groups[j][0])}}}" if span > 1 else
                       (_tex(groups[j][0]) if groups[j][1] else ""))
            if groups[j][1]:
                rules.append(rf"\cmidrule(lr){{{j + 2}-{k + 2}}}")
            j = k + 1
        lines.append(" & ".join(top) + r" \\")
        lines.append(" ".join(rules))
        second = [_tex(df.index.name or "")] + [_tex(kind or group) for group, kind in groups]
    else:
        second = [_tex(df.index.name or "")] + [_tex(str(c)) for c in df.columns]
    lines += [" & ".join(second) + r" \\", r"\midrule"]
    lines += [" & ".join(_tex(c) if not c.startswith(r"\textbf") else c for c in row) + r" \\"
              for row in _cells(df, decimals, mark_best, lambda s: rf"\textbf{{{s}}}")]
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


def to_html(df: pd.DataFrame, decimals: int = 2, caption: str = "", mark_best: bool = False, footnotes=()) -> str:
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
    head.append("</tr>\n<tr><th>" + escape(df.index.name or "") + "</th>"
                + "".join(f"<th>{escape(kind or group)}</th>" for group, kind in groups) + "</tr>")
    body = ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
            for row in _cells(df.rename(index=lambda i: escape(str(i))).map(
                lambda v: escape(v) if isinstance(v, str) else v), decimals, mark_best,
                              lambda s: f"<b>{s}</b>")]
    notes = "".join(f"<li>{escape(n)}</li>" for n in _notes(df, mark_best, footnotes, decimals))
    style = ("<style>table{border-collapse:collapse;font-family:sans-serif;font-size:13px}"
             "td,th{padding:3px 8px;border-bottom:1px solid #ddd}td{text-align:right}"
             "td:first-child{text-align:left}</style>")
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>{style}</head><body>\n"
            + (f"<p>{escape(caption)}</p>\n" if caption else "")
            + "<table>\n" + "".join(head) + "\n" + "\n".join(body) + "\n</table>\n"
            + (f"<ul>{notes}</ul>\n" if notes else "") + "</body></html>\n")


def write_all_formats(df: pd.DataFrame, stem: str | Path, caption: str = "", decimals: int = 2,
                      mark_best: bool = False, footnotes=()) -> list[Path]:
    """Write ``stem.md``, ``stem.csv``, ``stem.tex`` and ``stem.html``; return the paths."""
    stem = Path(stem)
    paths = [stem.with_name(f"{stem.name}.{ext}") for ext in ("md", "csv", "tex", "html")]
    write_text(to_markdown(df, decimals, caption, mark_best, footnotes), paths[0])
    write_text(to_csv(df, decimals), paths[1])
    write_text(to_latex(df, decimals, caption, mark_best, footnotes), paths[2])
    write_text(to_html(df, decimals, caption, mark_best, footnotes), paths[3])
    return paths


# --- workflow entry points ------------------------------------------------------------------


def collect_scores(score_paths, out_path, log=print) -> pd.DataFrame:
    """Concatenate ``results/scores/{model}/{dataset}/{reduction}/{algorithm}.parquet`` files into one long table."""
    import pyarrow as pa

    from tecb.io import write_table

    frames = []
    for path in map(str, score_paths):
        model, dataset, reduction, algorithm = Path(path).with_suffix("").parts[-4:]
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


def render_tables(scores_path, datasets, texts_paths, splits_paths, model_names, configurations, table2_config,
                  outdir, reference=None, reference_table1=None, log=print) -> None:
    """Write Tables 1-3 and, with a reference, ``table{1,2,3}_vs_paper`` (Markdown, CSV, LaTeX) into ``outdir``."""
    outdir = Path(outdir)
    stats = [dataset_stats(name, pd.read_parquet(t), pd.read_parquet(s))
             for name, t, s in zip(datasets, texts_paths, splits_paths)]
    t1 = table1(stats)
    write_all_formats(t1, outdir / "table1", "Table 1: dataset statistics.", decimals=0)
    summary = summarize(pd.read_parquet(scores_path))
    t2 = table2(summary, model_names, datasets=datasets, **table2_config)
    red = table2_config["reduction"]
    cfg = f"{table2_config['algorithm']} on {'raw' if red == 'none' else red + '-reduced'} embeddings"
    write_all_formats(t2, outdir / "table2", f"Table 2: V-measure x 100, {cfg}, mean over splits.", mark_best=True)
    configurations = [tuple(c) for c in configurations]
    present = summary[summary.model.isin(list(model_names))] if model_names else summary
    t3, n_models = table3(present, configurations, datasets=datasets)
    per_cell = present.groupby(["algorithm", "reduction", "dataset"]).model.nunique()
    notes = [f"Some cells average fewer models (as few as {per_cell.min()}): those without a result are left out."] \
        if len(per_cell) and per_cell.min() < n_models else []
    write_all_formats(t3, outdir / "table3", f"Table 3: V-measure x 100 per (algorithm, reduction), "
                      f"mean over the {n_models} model(s) present.", mark_best=True, footnotes=notes)
    log(to_markdown(t2, mark_best=True))
    log(to_markdown(t3, mark_best=True))
    if reference is None:
        return
    p1 = paper_table1(reference_table1) if reference_table1 and Path(reference_table1).exists() else \
        pd.DataFrame(index=t1.index)
    write_all_formats(compare(t1.select_dtypes("number"), p1, decimals=0, column_label="Statistic"),
                      outdir / "table1_vs_paper", "Table 1 beside the paper's: this run, paper, delta.", decimals=0)
    write_all_formats(compare(t2, paper_table2(reference)), outdir / "table2_vs_paper",
                      f"Table 2 ({cfg}) beside the paper's per-model results: V-measure x 100, delta = this run - "
                      "paper. Models are matched by their config `name`.")
    p3, n_paper = paper_table3(reference)
    write_all_formats(compare(t3, p3), outdir / "table3_vs_paper",
                      f"Table 3 beside the paper's printed Table 3 (mean over its {n_paper} models); this run "
                      f"averages {n_models} model(s).",
                      footnotes=["The paper prints k-means / umap on BlurbsClusteringP2P as 29.58 (average 28.93); "
                                 "its per-model results give 32.93 (29.49). Paper rows it does not print are n/a."])
