"""The paper's tables from the long scores table (design §4, §5).

- Table 1: dataset statistics.
- Table 2: k-means on raw embeddings, one row per model, one column per dataset, plus the average.
- Table 3: one row per (algorithm, reduction), each cell the mean over models.

Scores are V-measure x 100 with 2 decimals. Each table is written as Markdown, CSV and LaTeX.
"""

from __future__ import annotations

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


def dataset_order(datasets) -> list[str]:
    """The paper's six datasets first (in the paper's order), then any others by name."""
    present = set(datasets)
    return [d for d in PAPER_DATASETS if d in present] + sorted(present - set(PAPER_DATASETS))


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of the V-measure over the splits of each (model, dataset, configuration)."""
    grouped = scores.groupby(KEYS, sort=False)["v_measure"]
    out = grouped.agg(v_measure="mean", v_measure_std="std", n_splits="count").reset_index()
    return out


def table2(summary: pd.DataFrame, model_names: dict[str, str] | None = None,
           algorithm: str = "kmeans", reduction: str = "none") -> pd.DataFrame:
    """Models x datasets (V-measure x 100) for one configuration, with the average over datasets."""
    sub = summary[(summary.algorithm == algorithm) & (summary.reduction == reduction)]
    wide = sub.pivot(index="model", columns="dataset", values="v_measure") * 100
    wide = wide.reindex(columns=dataset_order(summary.dataset.unique()))
    wide["Average"] = wide.mean(axis=1, skipna=False)
    model_order = list(model_names) if model_names else sorted(wide.index)
    wide = wide.reindex([m for m in model_order if m in wide.index])
    wide.index = [model_names.get(m, m) if model_names else m for m in wide.index]
    wide.index.name = "Model"
    return wide


def table3(summary: pd.DataFrame, configurations: list[tuple[str, str]] | None = None) -> tuple[pd.DataFrame, int]:
    """(algorithm, reduction) x datasets, each cell the mean over models (x 100); also returns the model count."""
    per_cell = summary.groupby(["algorithm", "reduction", "dataset"])["v_measure"].mean().mul(100)
    wide = per_cell.unstack("dataset").reindex(columns=dataset_order(summary.dataset.unique()))
    wide["Average"] = wide.mean(axis=1, skipna=False)
    if configurations:
        wide = wide.reindex([c for c in configurations if c in wide.index])
    wide.index = [f"{a} / {r}" for a, r in wide.index]
    wide.index.name = "Algorithm / reduction"
    return wide, summary.model.nunique()


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


def _cells(df: pd.DataFrame, decimals: int) -> list[list[str]]:
    def fmt(v):
        if isinstance(v, (float, np.floating)):
            return NA if np.isnan(v) else f"{v:.{decimals}f}"
        return str(v)

    return [[str(idx)] + [fmt(v) for v in row] for idx, row in zip(df.index, df.itertuples(index=False))]


def to_markdown(df: pd.DataFrame, decimals: int = 2, caption: str = "") -> str:
    header = [df.index.name or ""] + [str(c) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(df.columns)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _cells(df, decimals)]
    text = "\n".join(lines) + "\n"
    return (f"{caption}\n\n" if caption else "") + text


def to_latex(df: pd.DataFrame, decimals: int = 2, caption: str = "") -> str:
    def esc(s: str) -> str:
        return s.replace("&", r"\&").replace("_", r"\_").replace("%", r"\%").replace("#", r"\#")

    header = [df.index.name or ""] + [str(c) for c in df.columns]
    lines = [r"\begin{table}[ht]", r"\centering", r"\begin{tabular}{l" + "r" * len(df.columns) + "}", r"\toprule",
             " & ".join(esc(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(esc(c) for c in row) + r" \\" for row in _cells(df, decimals)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{esc(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_csv(df: pd.DataFrame, decimals: int = 2) -> str:
    return df.round(decimals).to_csv(na_rep=NA)


def write_all_formats(df: pd.DataFrame, stem: str | Path, caption: str = "", decimals: int = 2) -> list[Path]:
    """Write ``stem.md``, ``stem.csv`` and ``stem.tex``; return the paths."""
    stem = Path(stem)
    paths = [stem.with_suffix(s) for s in (".md", ".csv", ".tex")]
    write_text(to_markdown(df, decimals, caption), paths[0])
    write_text(to_csv(df, decimals), paths[1])
    write_text(to_latex(df, decimals, caption), paths[2])
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
                  outdir, log=print) -> None:
    """Write Tables 1-3 (Markdown, CSV, LaTeX) into ``outdir``."""
    outdir = Path(outdir)
    stats = [dataset_stats(name, pd.read_parquet(t), pd.read_parquet(s))
             for name, t, s in zip(datasets, texts_paths, splits_paths)]
    write_all_formats(table1(stats), outdir / "table1", "Table 1: dataset statistics.", decimals=0)
    summary = summarize(pd.read_parquet(scores_path))
    t2 = table2(summary, model_names, **table2_config)
    write_all_formats(t2, outdir / "table2",
                      f"Table 2: V-measure x 100, {table2_config['algorithm']} on "
                      f"{table2_config['reduction']} embeddings, mean over splits.")
    t3, n_models = table3(summary, [tuple(c) for c in configurations])
    write_all_formats(t3, outdir / "table3",
                      f"Table 3: V-measure x 100 per (algorithm, reduction), mean over {n_models} model(s).")
    log(to_markdown(t2))
    log(to_markdown(t3))
