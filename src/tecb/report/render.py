"""Tables as files: Markdown, CSV, LaTeX (booktabs) and HTML, with bold bests, suffixes and footnotes."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class TableText:
    """A table and how it is printed: numbers with ``decimals``, a ``caption`` above, the best value of each column
    in bold (``mark_best``), ``footnotes`` below, and a ``suffix`` frame of marks (†, ‡, §) after the cells."""

    df: pd.DataFrame
    decimals: int = 2
    caption: str = ""
    mark_best: bool = False
    footnotes: tuple | list = ()
    suffix: pd.DataFrame | None = None

    def notes(self) -> list[str]:
        return _notes(self.df, self.mark_best, self.footnotes, self.decimals)

    def cells(self, bold, escape=lambda s: s) -> list[list[str]]:
        """The formatted cells (:func:`_cells`), best values through ``bold``, text through ``escape``."""
        return _cells(self.df, self.decimals, self.mark_best, bold, suffix=self.suffix, escape=escape)


def _group_spans(groups: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """The top header row's cells as ``(first, last)`` column: a dataset group's S2S and P2P columns share one, a
    column without a kind stands alone."""
    spans, j = [], 0
    while j < len(groups):
        k = j
        while k + 1 < len(groups) and groups[k + 1][0] == groups[j][0] and groups[j][1]:
            k += 1
        spans.append((j, k))
        j = k + 1
    return spans


def to_markdown(df: pd.DataFrame, *args, **kwargs) -> str:
    """A Markdown table; dataset columns read ``Blurbs S2S`` etc.; best per column in bold; notes below. The
    arguments are :class:`TableText`'s."""
    return _markdown(TableText(df, *args, **kwargs))


def _markdown(t: TableText) -> str:
    df = t.df
    header = [df.index.name or ""] + [header_label(c) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(df.columns)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in t.cells(lambda s: f"**{s}**")]
    text = "\n".join(lines) + "\n"
    notes = t.notes()
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    return (f"{t.caption}\n\n" if t.caption else "") + text


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


def to_latex(df: pd.DataFrame, *args, **kwargs) -> str:
    """A booktabs table; dataset columns grouped (Blurbs / TenKGnad / Reddit over S2S / P2P). The arguments are
    :class:`TableText`'s."""
    return _latex(TableText(df, *args, **kwargs))


def _latex(t: TableText) -> str:
    df = t.df
    groups = [column_group(c) for c in df.columns]
    lines = [r"\begin{table}[ht]", r"\centering", r"\begin{tabular}{l" + "r" * len(df.columns) + "}", r"\toprule"]
    if any(kind for _, kind in groups):
        top, rules = [""], []
        for j, k in _group_spans(groups):
            span = k - j + 1
            top.append(
                rf"\multicolumn{{{span}}}{{c}}{{{_tex(groups[j][0])}}}"
                if span > 1
                else (_tex(groups[j][0]) if groups[j][1] else "")
            )
            if groups[j][1]:
                rules.append(rf"\cmidrule(lr){{{j + 2}-{k + 2}}}")
        lines.append(" & ".join(top) + r" \\")
        lines.append(" ".join(rules))
        second = [_tex(df.index.name or "")] + [_tex(kind or group) for group, kind in groups]
    else:
        second = [_tex(df.index.name or "")] + [_tex(str(c)) for c in df.columns]
    lines += [" & ".join(second) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in t.cells(lambda s: rf"\textbf{{{s}}}", escape=_tex)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if t.caption:
        lines.append(rf"\caption{{{_tex(t.caption)}}}")
    notes = t.notes()
    if notes:
        lines.append(r"\par\footnotesize " + r" \\ ".join(_tex(n) for n in notes))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_csv(df: pd.DataFrame, decimals: int = 2) -> str:
    """Plain CSV: full dataset names, rounded numbers, "n/a" for missing cells."""
    return df.round(decimals).to_csv(na_rep=NA)


def to_html(df: pd.DataFrame, *args, **kwargs) -> str:
    """A standalone HTML table (for the Snakemake report): grouped dataset header, best per column in bold. The
    arguments are :class:`TableText`'s."""
    return _html(TableText(df, *args, **kwargs))


def _html(t: TableText) -> str:
    from html import escape

    df = t.df
    groups = [column_group(c) for c in df.columns]
    head = ["<tr><th></th>"]
    for j, k in _group_spans(groups):
        head.append(f'<th colspan="{k - j + 1}">{escape(groups[j][0]) if groups[j][1] else ""}</th>')
    head.append(
        "</tr>\n<tr><th>"
        + escape(df.index.name or "")
        + "</th>"
        + "".join(f"<th>{escape(kind or group)}</th>" for group, kind in groups)
        + "</tr>"
    )
    escaped = TableText(
        df.rename(index=lambda i: escape(str(i))).map(lambda v: escape(v) if isinstance(v, str) else v),
        t.decimals,
        mark_best=t.mark_best,
        suffix=None if t.suffix is None else t.suffix.map(lambda v: escape(v) if isinstance(v, str) else v),
    )
    body = ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in escaped.cells(lambda s: f"<b>{s}</b>")]
    notes = "".join(f"<li>{escape(n)}</li>" for n in t.notes())
    style = (
        "<style>table{border-collapse:collapse;font-family:sans-serif;font-size:13px}"
        "td,th{padding:3px 8px;border-bottom:1px solid #ddd}td{text-align:right}"
        "td:first-child{text-align:left}</style>"
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>{style}</head><body>\n"
        + (f"<p>{escape(t.caption)}</p>\n" if t.caption else "")
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
    text = TableText(df, decimals, caption, mark_best, footnotes, suffix)
    render = {"md": lambda: _markdown(text), "csv": lambda: to_csv(df, decimals), "tex": lambda: _latex(text),
              "html": lambda: _html(text)}  # fmt: skip
    written = []
    for ext, path in paths.items():
        write_text(render[ext](), path)
        written.append(Path(path))
    return written


def stem_paths(stem: str | Path, formats=FORMATS) -> dict[str, Path]:
    """``{format: stem.format}``: the paths of one table for callers without a workflow (the rules name theirs)."""
    stem = Path(stem)
    return {ext: stem.with_name(f"{stem.name}.{ext}") for ext in formats}


def write_all_formats(df: pd.DataFrame, stem: str | Path, *args, **kwargs) -> list[Path]:
    """Write ``stem.md``, ``stem.csv``, ``stem.tex`` and ``stem.html``; return the paths. The other arguments are
    :func:`write_formats`'."""
    return write_formats(df, stem_paths(stem), *args, **kwargs)


def markdown_table_html(markdown: str, caption: str) -> str:
    """A Markdown pipe table (and the lines after it, as notes) as a standalone HTML page for the Snakemake report:
    the models and leaderboard tables, which are written as Markdown first."""
    from html import escape

    lines = markdown.rstrip("\n").split("\n")
    rows = [line for line in lines if line.startswith("|")]
    notes = [line.lstrip("- ").strip() for line in lines[len(rows) :] if line.strip()]

    def cells(line: str) -> list[str]:
        return [escape(c.strip()) for c in line.strip().strip("|").split("|")]

    head = "<tr>" + "".join(f"<th>{c}</th>" for c in cells(rows[0])) + "</tr>"
    body = ["<tr>" + "".join(f"<td>{c}</td>" for c in cells(r)) + "</tr>" for r in rows[2:]]
    style = (
        "<style>table{border-collapse:collapse;font-family:sans-serif;font-size:13px}"
        "td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}</style>"
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>{style}</head><body>\n<p>{escape(caption)}</p>\n"
        + "<table>\n"
        + head
        + "\n"
        + "\n".join(body)
        + "\n</table>\n"
        + ("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>\n" if notes else "")
        + "</body></html>\n"
    )
