"""Tables as files: Markdown, CSV, LaTeX (booktabs) and HTML, with bold bests, suffixes and footnotes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tecb.io import write_text
from tecb.report.tables import CHANCE_ROW, column_group

NA = "n/a"
NA_FOOTNOTE = (
    "n/a: no result (model or configuration not run, or dataset not built, e.g. Reddit without "
    "credentials); an average over datasets is n/a when one of its cells is."
)


def _best(df: pd.DataFrame, decimals: int, mark_best: bool) -> set[tuple[int, int]]:
    """(row, column) positions holding the highest rounded value of their numeric column."""
    best = set()
    if not mark_best:
        return best
    real = [i != CHANCE_ROW for i in df.index]  # the chance row is a floor, never a column's best
    for j, col in enumerate(df.columns):
        values = pd.to_numeric(df[col], errors="coerce").round(decimals).where(real)
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
        .replace("‡", r"$^\ddagger$")
        .replace("§", r"$^\S$")
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
