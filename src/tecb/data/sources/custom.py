"""Your own labelled data: a TSV/CSV/Parquet/JSONL file with a text and a label column.

Splits come either from a split column (one split per distinct value, in sorted order) or from the
random-fraction recipe of the paper (``n_splits`` samples of ``min_fraction``..``max_fraction`` of the rows,
seeded).

Reading rules (README, "Your own data"):

- TSV/CSV: the first line is the header. ``sep`` is the field separator (default: tab for TSV, ``,`` for
  CSV; ``;`` for a German Excel CSV). ``quoting: minimal`` (default) reads fields the way pandas, Excel and
  Python's ``csv`` module write them: a field that *starts* with ``"`` is quoted (it may hold separators and
  line breaks, ``""`` is one ``"``); a ``"`` anywhere else is an ordinary character. A field that starts with
  a quote but is not a well-formed quoted field is refused, naming file and line (set ``quoting: none`` when
  quotes are plain text in your file). ``quoting: none``: nothing is special but the separator and the line end.
- JSONL: one JSON object per line. Parquet: columns as stored.
- Text: kept exactly as stored (a number becomes its decimal text, see labels). Empty text is an error.
- Labels are strings: surrounding whitespace is removed; a number (JSON, Parquet) is written in its
  shortest decimal form and an integral one without ``.0`` (``1``, ``1.0`` and ``"1"`` are all the label
  ``"1"``). Two *different* label strings that denote the same number (``"1"`` and ``"1.0"``, ``"01"``) are
  refused, naming both records: rename one of them. ``true``/``false``, lists and objects are refused, and so
  is the label ``NaN`` (any case): it is how a missing value is written, not a class.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tecb.data.sources.files import SourceFileError, decode, read_bytes

FORMATS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
QUOTING = ("minimal", "none")


class CustomFormatError(ValueError):
    """A custom dataset file or one of its records breaks the expected format."""


def file_format(path: str | Path, fmt: str | None = None) -> str:
    """The file's format: ``fmt`` if given, else from its suffix (a ``.gz`` suffix is looked through)."""
    name = Path(path).name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    fmt = fmt or FORMATS.get(Path(name).suffix)
    if fmt not in ("tsv", "csv", "parquet", "jsonl"):
        raise CustomFormatError(f"{path}: unknown format; name it with `format: tsv|csv|parquet|jsonl`")
    return fmt


def _delimited(path, text: str, sep: str, quoting: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows and each row's first line number of a TSV/CSV text."""
    if quoting not in QUOTING:
        raise CustomFormatError(f"{path}: quoting must be one of {', '.join(QUOTING)}, got {quoting!r}")
    if len(sep) != 1:
        raise CustomFormatError(f"{path}: sep must be one character, got {sep!r}")
    kwargs = (
        {"quoting": csv.QUOTE_NONE} if quoting == "none" else {"quotechar": '"', "doublequote": True, "strict": True}
    )
    first = text.split("\n", 1)[0]
    if sep != ";" and ";" in first and sep not in first:
        raise CustomFormatError(
            f"{path}, line 1: the header {first.strip()!r} holds no {sep!r} but ';': "
            'is the file `;`-separated (German Excel)? set `sep: ";"`'
        )
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, **kwargs)
    rows, lines = [], []
    start = 1
    try:
        for row in reader:
            if row:
                rows.append(row)
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as err:
        raise CustomFormatError(
            f'{path}, line {start}: a field starts with a quote (") but is not a well-formed quoted field ({err}); '
            "if quotes are plain text in this file, set `quoting: none`"
        ) from None
    if not rows:
        raise CustomFormatError(f"{path}: no header line")
    header, rows, lines = rows[0], rows[1:], lines[1:]
    for row, line in zip(rows, lines):
        if len(row) != len(header):
            hint = "" if sep != "," else '; a `;`-separated file needs `sep: ";"`'
            raise CustomFormatError(
                f"{path}, line {line}: {len(row)} fields, the header has {len(header)} (separator {sep!r}){hint}"
            )
    if len(header) == 1 and len(rows) and sep != ";" and ";" in header[0]:
        raise CustomFormatError(f'{path}: one column {header[0]!r}: is it `;`-separated? set `sep: ";"`')
    return header, rows, lines


def _jsonl(path, text: str) -> tuple[list[dict], list[int]]:
    from tecb.data.sources.files import json_lines

    pairs = list(json_lines(path, text, CustomFormatError))
    return [obj for _, obj in pairs], [line_no for line_no, _ in pairs]


def read_records(
    path, fmt: str | None = None, sep: str | None = None, quoting: str = "minimal"
) -> tuple[list[dict], list[str], list[str]]:
    """All records as dicts, their column names, and where each record is (``record N (line L)``)."""
    fmt = file_format(path, fmt)
    if fmt == "parquet":
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as err:
            raise CustomFormatError(f"{path}: cannot read as parquet ({err}); is the file complete?") from None
        records = df.to_dict("records")
        return records, [str(c) for c in df.columns], [f"record {i + 1}" for i in range(len(records))]
    if sep is not None and fmt == "jsonl":
        raise CustomFormatError(f"{path}: `sep` applies to tsv/csv files, not {fmt}")
    text = decode(read_bytes(path), str(path))
    if fmt == "jsonl":
        records, lines = _jsonl(path, text)
        columns = list(dict.fromkeys(k for r in records for k in r))
    else:
        header, rows, lines = _delimited(path, text, sep or ("\t" if fmt == "tsv" else ","), quoting)
        records, columns = [dict(zip(header, row)) for row in rows], header
    return records, columns, [f"record {i + 1} (line {line})" for i, line in enumerate(lines)]


def _number_text(v) -> str:
    """A number's label/text: integral values without ``.0``, others in their shortest decimal form."""
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v} is not a finite number")
        return str(int(v)) if v.is_integer() else repr(v)
    return str(int(v))


def _value(v, where: str, col: str, is_label: bool) -> str | None:
    """The string of one field (``None`` when missing/empty); numbers follow the label rule of the module doc."""
    import numpy as np

    if v is None or (not isinstance(v, (str, list, dict, tuple)) and pd.api.types.is_scalar(v) and pd.isna(v)):
        return None  # None, NaN, pandas NA/NaT: a missing field
    if isinstance(v, (bool, np.bool_)):
        raise CustomFormatError(f"{where}: field {col!r} is a boolean ({v}); write it as a string")
    if isinstance(v, (int, float, np.integer, np.floating)):
        try:
            return _number_text(v.item() if isinstance(v, np.generic) else v)
        except ValueError as err:
            raise CustomFormatError(f"{where}: field {col!r}: {err}") from None
    if not isinstance(v, str):
        raise CustomFormatError(f"{where}: field {col!r} is a {type(v).__name__}, expected a string")
    return v.strip() if is_label else v


def _numeric_collisions(labels: list[str], where: list[str], path, col: str) -> None:
    """Refuse two different label strings that denote the same number ("1" and "1.0")."""
    first: dict[float, tuple[str, str]] = {}
    for label, at in zip(labels, where):
        try:
            value = float(label)
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        if value in first and first[value][0] != label:
            raise CustomFormatError(
                f"{path}, {at}: field {col!r} is {label!r} but {first[value][1]} has {first[value][0]!r}: the same "
                "number written two ways would become two different classes; write the labels one way"
            )
        first.setdefault(value, (label, at))


@dataclass(frozen=True, kw_only=True)
class Layout:
    """How a custom file is read (its config entry's keys of the same names): the columns holding the text
    (``text_column``), the label (``label_column``) and, where the file gives its splits, the split
    (``split_column``; None: the random recipe); its ``format`` (None: from the suffix, :func:`file_format`), and
    for TSV/CSV the separator ``sep`` (None: the format's) and ``quoting`` (module doc)."""

    text_column: str = "text"
    label_column: str = "label"
    split_column: str | None = None
    format: str | None = None
    sep: str | None = None
    quoting: str = "minimal"

    def read(self, path):
        """:func:`read_rows` of ``path`` as this layout says."""
        return read_rows(
            path,
            self.text_column,
            self.label_column,
            self.split_column,
            self.format,
            sep=self.sep,
            quoting=self.quoting,
        )


def read_rows(
    path,
    text_column: str,
    label_column: str,
    split_column: str | None = None,
    fmt: str | None = None,
    sep: str | None = None,
    quoting: str = "minimal",
):
    """Return ``(texts, labels, split_values or None)``; a missing or empty field is an error naming the record."""
    records, columns, where = read_records(path, fmt, sep, quoting)
    for col in (text_column, label_column, split_column):
        if col is not None and col not in columns:
            raise CustomFormatError(f"{path}: no column {col!r} (columns: {', '.join(map(str, columns))})")
    out = {}
    for col in (text_column, label_column, split_column):
        if col is None:
            continue
        values = []
        for rec, at in zip(records, where):
            v = _value(rec.get(col), f"{path}, {at}", col, is_label=col != text_column)
            if v is None or (col != split_column and v.strip() == ""):
                raise CustomFormatError(f"{path}, {at}: field {col!r} is empty")
            values.append(v)
        out[col] = values
    if not out[text_column]:
        raise CustomFormatError(f"{path}: no records")
    for label, at in zip(out[label_column], where):
        if label.lower() == "nan":  # pandas, R and spreadsheets write a missing value as NaN: not a class
            raise CustomFormatError(
                f"{path}, {at}: field {label_column!r} is {label!r}, which is how a missing value is written; "
                "remove the record or give it its label"
            )
    _numeric_collisions(out[label_column], where, path, label_column)
    return out[text_column], out[label_column], out.get(split_column)


def read_table(
    path: str | Path, fmt: str | None = None, sep: str | None = None, quoting: str = "minimal"
) -> pd.DataFrame:
    """The whole file as a frame of the stored values (TSV/CSV fields are strings)."""
    records, columns, _ = read_records(path, fmt, sep, quoting)
    return pd.DataFrame(records, columns=columns)


__all__ = ["CustomFormatError", "Layout", "SourceFileError", "read_rows", "read_records", "read_table", "file_format"]
