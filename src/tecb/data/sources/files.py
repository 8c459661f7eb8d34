"""Reading raw input files with errors that name the file and say what to do (design §9).

Every source reads its bytes through here: a ``.gz`` file is decompressed, text must be UTF-8 (a BOM is
dropped), and a truncated or corrupt archive, a non-UTF-8 byte or an unreadable database becomes a
:class:`SourceFileError` naming the file (and line), never a bare ``UnicodeDecodeError`` or ``EOFError``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path

REDOWNLOAD = "the file is incomplete or damaged: delete it and download it again (or copy it again)"


class SourceFileError(ValueError):
    """A raw input file cannot be read; the message names the file and what to do."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def gunzip(data: bytes, where: str) -> bytes:
    """Decompress gzip ``data``; a truncated or corrupt stream is an error naming ``where``."""
    try:
        return gzip.decompress(data)
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as err:
        raise SourceFileError(f"{where}: truncated or corrupt gzip file ({err}); {REDOWNLOAD}") from None


def read_bytes(path: str | Path) -> bytes:
    """The content of ``path`` (decompressed when it ends in ``.gz``); missing files are named."""
    path = Path(path)
    if not path.exists():
        raise SourceFileError(f"{path}: no such file")
    if path.is_dir():
        raise SourceFileError(f"{path}: is a folder, expected a file")
    data = path.read_bytes()
    return gunzip(data, str(path)) if path.name.lower().endswith(".gz") else data


def decode(data: bytes, where: str) -> str:
    """UTF-8 text of ``data`` (a leading BOM dropped); a bad byte is an error naming file, line and byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        bad = data[err.start : err.start + 1].hex()
        raise SourceFileError(
            f"{where}, line {line} (byte {err.start}): not UTF-8 text (byte 0x{bad}); re-save the file as UTF-8, "
            "e.g. `iconv -f latin1 -t utf-8 IN > OUT` for a Latin-1/Windows-1252 file"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path) -> str:
    """UTF-8 text of ``path`` (``.gz`` decompressed), errors naming the file."""
    return decode(read_bytes(path), str(path))


def json_lines(path, text: str, error: type[Exception]):
    """Yield ``(line_no, object)`` for each non-blank line of a JSON Lines text; a line that is not a JSON
    object raises ``error`` naming the file and line."""
    for line_no, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 may sit inside a string
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise error(f"{path}, line {line_no}: not valid JSON ({err.msg})") from None
        if not isinstance(obj, dict):
            raise error(f"{path}, line {line_no}: expected a JSON object")
        yield line_no, obj
