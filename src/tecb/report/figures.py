"""Figures: UMAP scatter plots coloured by label (the paper's Figure 1), a heatmap of Table 3 and a bar
chart of the Table 2 averages. Each figure is written to the paths it is given (PNG and/or SVG, by suffix).

Figures are ``matplotlib.figure.Figure`` objects drawn with the Agg canvas: no pyplot, no global backend or
rcParams change, so importing this module changes nothing in the process."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tecb.io import atomic_path
from tecb.report.confusion import choose_split
from tecb.report.render import header_label

FORMATS = ("png", "svg")
DPI = 150
MAX_LEGEND = 20
RC = {"svg.hashsalt": "tecb"}  # stable SVG ids: same data, same file (set only while saving)


def new_figure(figsize) -> Figure:
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, paths) -> list[Path]:
    """Write the figure to each of ``paths`` atomically, the format from the suffix (``.png``, ``.svg``)."""
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    for path in paths:
        ext = path.suffix.lstrip(".")
        if ext not in FORMATS:
            raise ValueError(f"{path}: a figure is written as one of {FORMATS}, not {ext or 'no suffix'!r}")
        with matplotlib.rc_context(RC), atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=DPI, bbox_inches="tight", metadata=_metadata(ext))
        path.chmod(0o644)
    return paths


def legend_below_panels(fig: Figure, axes, n_used: int, ncols: int) -> None:
    """Finish a grid of panels: hide the panels past the first ``n_used``, tighten the layout and put every
    curve's entry, from all panels (a curve may be missing from the first), in one legend below the panels, up to
    two entries per panel column a row."""
    for ax in list(axes.flat)[n_used:]:
        ax.axis("off")
    entries = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    ncol = max(1, min(len(entries), 2 * ncols))
    fig.tight_layout()
    if entries:
        fig.legend(
            list(entries.values()),
            list(entries),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=ncol,
            fontsize=8,
            frameon=False,
        )


def _metadata(ext: str) -> dict:
    # Fixed metadata so that the same data gives byte-identical files.
    return {"Date": None} if ext == "svg" else {"Software": None}


def label_colours(labels) -> dict[str, tuple]:
    """One colour per label, in sorted label order: tab10/tab20 for few labels, an evenly spaced hue wheel else."""
    labels = sorted(set(map(str, labels)))
    n = len(labels)
    if n <= 10:
        colours = matplotlib.colormaps["tab10"].colors[:n]
    elif n <= 20:
        colours = matplotlib.colormaps["tab20"].colors[:n]
    else:
        colours = [matplotlib.colormaps["hsv"](i / n) for i in range(n)]
    return dict(zip(labels, colours))


def umap_points(reduced: pd.DataFrame, splits: pd.DataFrame, split: int) -> pd.DataFrame:
    """Columns x, y, label of one split: the 2-D coordinates joined with the split's labels on text_id."""
    red = reduced[reduced["split"] == split]
    if "x" in red.columns and red["x"].dtype == object:
        xy = np.vstack(red["x"].to_numpy())
    else:
        comp = [c for c in red.columns if c not in ("split", "text_id")]
        xy = red[comp].to_numpy()
    if xy.ndim != 2 or xy.shape[1] < 2:
        raise ValueError(f"reduced coordinates of split {split} are not 2-D (shape {xy.shape})")
    pts = pd.DataFrame({"text_id": red["text_id"].to_numpy(), "x": xy[:, 0], "y": xy[:, 1]})
    lab = splits.loc[splits["split"] == split, ["text_id", "label"]].drop_duplicates("text_id")
    out = pts.merge(lab, on="text_id", how="left")
    if out["label"].isna().any():
        missing = out.loc[out["label"].isna(), "text_id"].iloc[0]
        raise ValueError(f"split {split}: text_id {missing} of the reduced file has no label in the splits file")
    return out


def umap_figure(reduced_path, splits_path, out_paths, title: str = "", split: int | str = "first") -> list[Path]:
    """Scatter plot of one split's UMAP coordinates coloured by label (the paper's Figure 1 style); ``split``:
    a split id, or ``"first"`` (in the paper's datasets, a split over all texts' top labels), as in
    :func:`tecb.report.confusion.choose_split`."""
    splits = pd.read_parquet(splits_path)
    split = choose_split(splits, split)
    pts = umap_points(pd.read_parquet(reduced_path), splits, split)
    colours = label_colours(pts["label"])
    fig = new_figure((7, 6))
    ax = fig.subplots()
    size = float(np.clip(4000 / max(len(pts), 1), 2, 30))
    for label, colour in colours.items():
        sel = pts[pts["label"] == label]
        ax.scatter(sel.x, sel.y, s=size, color=colour, label=f"{label} ({len(sel)})", alpha=0.75, linewidths=0)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f"{title}\nsplit {split}: {len(pts)} texts, {len(colours)} labels".strip(), fontsize=11)
    if len(colours) <= MAX_LEGEND:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False, markerscale=2)
    return save(fig, out_paths)


def heatmap_figure(table: pd.DataFrame, out_paths, title: str = "") -> list[Path]:
    """Heatmap of a (rows x datasets) table of V-measure x 100 (Table 3); n/a cells stay blank."""
    values = table.to_numpy(dtype=float)
    fig = new_figure((1.3 * table.shape[1] + 3, 0.45 * table.shape[0] + 1.8))
    ax = fig.subplots()
    masked = np.ma.masked_invalid(values)
    vmax = np.nanmax(values) if np.isfinite(values).any() else 1.0
    image = ax.imshow(masked, cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(table.shape[1]), [header_label(c) for c in table.columns], rotation=30, ha="right")
    ax.set_yticks(range(table.shape[0]), [str(i) for i in table.index])
    for (i, j), v in np.ndenumerate(values):
        text = "n/a" if np.isnan(v) else f"{v:.1f}"
        dark = np.isnan(v) or v > 0.6 * vmax
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if dark else "white")
    fig.colorbar(image, ax=ax, label="V-measure x 100")
    ax.set_title(title, fontsize=11)
    return save(fig, out_paths)


def averages_title(datasets, metric_label: str = "V-measure") -> str:
    """The title of the Table 2 averages chart, saying which datasets the averages are over."""
    from tecb.report.tables import PAPER_DATASETS

    k, n = len(set(datasets) & set(PAPER_DATASETS)), len(PAPER_DATASETS)
    over = "the paper's 6 datasets" if k == n else f"{k} of the paper's {n} datasets" if k else "the datasets"
    return f"Table 2: average {metric_label} x 100 over {over}"


def bar_figure(
    averages: pd.Series, out_paths, title: str = "", reference: pd.Series | None = None, no_reference_because: str = ""
) -> list[Path]:
    """Horizontal bars of per-model averages (Table 2), highest on top; paper values as markers when given.

    Give ``reference`` only where the averages are comparable with the paper's
    (:func:`tecb.report.paper.paper_average_not_comparable`); else ``no_reference_because`` says why in the title."""
    averages = averages.astype(float).sort_values(na_position="first")
    fig = new_figure((7, 0.4 * len(averages) + 1.5))
    ax = fig.subplots()
    y = np.arange(len(averages))
    ax.barh(y, averages.fillna(0).to_numpy(), color=matplotlib.colormaps["tab10"].colors[0], label="this run")
    top = np.nanmax(averages.to_numpy()) if averages.notna().any() else 1.0
    for yi, v in zip(y, averages):
        if np.isnan(v):
            ax.text(0.01 * top, yi, "n/a", va="center", fontsize=8)
        elif v > 0.15 * top:
            ax.text(v - 0.01 * top, yi, f"{v:.2f}", va="center", ha="right", fontsize=8, color="white")
        else:
            ax.text(v + 0.01 * top, yi, f"{v:.2f}", va="center", fontsize=8)
    if reference is not None:
        ref = reference.reindex(averages.index).astype(float)
        if ref.notna().any():
            ax.scatter(ref.to_numpy(), y, marker="|", s=300, linewidths=2.5, color="black", zorder=3, label="paper")
            ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(y, [str(i) for i in averages.index])
    ax.set_xlabel("average V-measure x 100 over datasets")
    if no_reference_because:
        title = f"{title}\npaper's averages not shown: {no_reference_because}".strip()
    ax.set_title(title, fontsize=11)
    return save(fig, out_paths)
