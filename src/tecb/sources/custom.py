"""Your own labelled data: a TSV/CSV/Parquet/JSONL file with a text and a label column.

Splits come either from a split column (one split per distinct value, in sorted order) or from the
random-fraction recipe of the paper (``n_splits`` samples of ``low``..``high`` of the rows, seeded).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FORMATS = {".tsv": "tsv", ".tab": "tsv", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet",
           ".jsonl": "jsonl", ".ndjson": "jsonl"}


class CustomFormatError(ValueError):
    """A custom dataset file or one of its records breaks the expected format."""


def file_format(path: str | Path, fmt: str | None = None) -> str:
    """The file's format: ``fmt`` if given, else from its suffix."""
    fmt = fmt or FORMATS.get(Path(path).suffix.lower())
    if fmt not in ("tsv", "csv", "parquet", "jsonl"):
        raise CustomFormatError(f"{path}: unknown format; name it with `format: tsv|csv|parquet|jsonl`")
    return fmt


def read_table(path: str | Path, fmt: str | None = None) -> pd.DataFrame:
    """Read the whole file as strings (Parquet keeps its types)."""
    fmt = file_format(path, fmt)
    try:
        if fmt == "parquet":
            return pd.read_parquet(path)
        if fmt == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_csv(path, sep="\t" if fmt == "tsv" else ",", dtype=str, keep_default_na=False,
                           quoting=3 if fmt == "tsv" else 0)
    except (ValueError, pd.errors.ParserError) as err:
        raise CustomFormatError(f"{path}: cannot read as {fmt}: {err}") from None


def read_rows(path, text_column: str, label_column: str, split_column: str | None = None, fmt: str | None = None):
    """Return ``(texts, labels, split_values or None)``; a missing or empty field is an error naming the record."""
    df = read_table(path, fmt)
    for col in (text_column, label_column, split_column):
        if col is not None and col not in df.columns:
            raise CustomFormatError(f"{path}: no column {col!r} (columns: {', '.join(map(str, df.columns))})")
    # record numbers: a data line of TSV/CSV is record+1 after the header line; JSONL/Parquet count from 1
    header = 1 if file_format(path, fmt) in ("tsv", "csv") else 0
    out = {}
    for col in (text_column, label_column, split_column):
        if col is None:
            continue
        values = df[col].tolist()
        for i, v in enumerate(values):
            if v is None or (isinstance(v, float) and v != v) or (col != split_column and str(v).strip() == ""):
                raise CustomFormatError(f"{path}, record {i + 1} (line {i + 1 + header}): field {col!r} is empty")
        out[col] = [str(v) for v in values]
    if not out[text_column]:
        raise CustomFormatError(f"{path}: no records")
    return out[text_column], out[label_column], out.get(split_column)
