"""Contrasts quoted in prose are the generated ones: every number of a tagged line equals its table's.

A line of the README or a doc that quotes a contrast ends with a tag naming the generated file (relative to the
repository) and the row (the file's first column)::

    ClusterNS − SimCSE on Blurbs S2S: +0.40 [-0.31, +1.37], Holm p 1.00
    <!-- contrast: runs/real/adapt/contrasts.csv clusterns − simcse · MiniLM · ClusterNS transductive · BlurbsClusteringS2S · all -->

(the tag on the same line as the numbers; ``quote:`` instead of ``contrast:`` for any other generated CSV, as
``benchmarks/coverage.csv``, or a generated Markdown file, whose row is its first line that starts with the tag's
text after any list marker, as a table's note: ``<!-- quote: runs/x/table6.md Noise floor -->``). :func:`check_quotes` finds every number of each tagged line (a number
glued to letters, as the 2 of "S2S", is not one) and asks that the row hold it, at the decimals quoted (or that
the row's name contain it);
:func:`untagged_contrasts` finds lines that compare two methods with a signed number but carry no tag (numbers
typed by hand). A whole kept file (a table of ``runs/``, :mod:`tecb.report.kept`) is quoted between
``<!-- kept: PATH -->`` and ``<!-- /kept -->``: :func:`kept_blocks`; :func:`refresh_kept_blocks` copies each
file into its blocks again after the kept file changed (``python -m tecb.report.quotes --refresh DOC...``; the
prose around a block is not rewritten: read it again).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

TAG = re.compile(r"<!--\s*(?:contrast|quote):\s*(\S+)\s+(.+?)\s*-->")
NUMBER = re.compile(r"(?<![\w.])[+\-−]?\d+(?:\.\d+)?(?![\w.])")
METHOD = r"(?:ClusterNS|SimCSE|COB|[Tt]riplet|argue|similarity|order|TSDAE|WWM)"
VERSUS = re.compile(rf"{METHOD}[^.;:]{{0,40}}?(?:−|-|over|vs\.?|ahead of|≥|>)\s*{METHOD}")
KEPT_BLOCK = re.compile(r"<!-- kept: (?P<path>\S+) -->\n(?P<text>.*?)<!-- /kept -->", re.S)
SIGNED = re.compile(r"(?<![\w.])[+\-−]\d+\.\d+")


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


def _read_table(file: Path):
    """A quoted file: a CSV as a frame indexed by its first column, a Markdown file as its lines."""
    if file.suffix == ".md":
        return [re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", line) for line in file.read_text(encoding="utf-8").splitlines()]
    return pd.read_csv(file, index_col=0)


def _held(table, row: str) -> list[float] | None:
    """The numbers of ``row`` of a quoted file (its cells, or its Markdown line's numbers), and those of the row's
    own name; None: no such row."""
    if isinstance(table, list):
        line = next((line for line in table if line.startswith(row)), None)
        return None if line is None else [_value(v) for v in NUMBER.findall(line)]
    if row not in table.index:
        return None
    cells = table.loc[[row]].stack()  # every row of that name (a name may repeat, e.g. one per method)
    return [float(v) for v in pd.to_numeric(cells, errors="coerce").dropna()] + [_value(v) for v in NUMBER.findall(row)]


def check_quotes(text: str, root) -> list[str]:
    """The problems of ``text``'s tagged lines (none: every quoted number is in its row): a missing file or row,
    or a number the row does not hold at the decimals quoted. ``root``: what the tags' paths are relative to."""
    problems = []
    tables: dict[str, pd.DataFrame | list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for tag in TAG.finditer(line):
            path, row = tag.group(1), tag.group(2)
            if path not in tables:
                file = Path(root) / path
                if not file.exists():
                    problems.append(f"line {number}: {path} does not exist")
                    continue
                tables[path] = _read_table(file)
            held = _held(tables[path], row)
            if held is None:
                problems.append(f"line {number}: {path} has no row {row!r}")
                continue
            prose = TAG.sub("", line)
            for quoted in NUMBER.findall(prose):
                decimals = len(quoted.split(".")[1]) if "." in quoted else 0
                if not any(round(v, decimals) == round(_value(quoted), decimals) for v in held):
                    problems.append(f"line {number}: {quoted} is not in {path} row {row!r}")
    return problems


def untagged_contrasts(text: str) -> list[str]:
    """Lines that set two methods against each other with a signed number (a contrast) but no tag."""
    return [
        f"line {number}: {line.strip()[:100]}"
        for number, line in enumerate(text.splitlines(), start=1)
        if VERSUS.search(line) and SIGNED.search(line) and not TAG.search(line)
    ]


def kept_blocks(text: str) -> list[tuple[str, str]]:
    """``(path, quoted text)`` of every ``<!-- kept: PATH -->`` … ``<!-- /kept -->`` block of a document."""
    return [(m["path"], m["text"]) for m in KEPT_BLOCK.finditer(text)]


def refresh_kept_blocks(text: str, root) -> str:
    """``text`` with every :func:`kept_blocks` block replaced by its file under ``root`` as it is now."""

    def block(match):
        body = (Path(root) / match["path"]).read_text(encoding="utf-8").strip()
        return f"<!-- kept: {match['path']} -->\n{body}\n<!-- /kept -->"

    return KEPT_BLOCK.sub(block, text)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] != ["--refresh"]:
        sys.exit("usage: python -m tecb.report.quotes --refresh DOCUMENT [DOCUMENT ...]")
    for doc in map(Path, sys.argv[2:]):
        old = doc.read_text(encoding="utf-8")
        new = refresh_kept_blocks(old, ".")
        if new != old:
            doc.write_text(new, encoding="utf-8")
            print(f"{doc}: kept blocks refreshed")
