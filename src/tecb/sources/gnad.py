"""One Million Posts corpus (``corpus.sqlite3``) as 10kGNAD, and the 10kGNAD csv fallback.

Articles under ``Newsroom/`` (but not ``Newsroom/User``) are news articles; their label is the
second component of ``Path``. ``Body`` is HTML: the teaser is ``<h2 itemprop="description">``, the
text the ``<p>`` paragraphs inside ``<div class="copytext">``.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from tecb.sources.files import REDOWNLOAD, SourceFileError, read_text

QUERY = (
    "SELECT ID_Article, Path, Title, Body FROM Articles "
    "WHERE Path LIKE 'Newsroom/%' AND Path NOT LIKE 'Newsroom/User%' ORDER BY ID_Article"
)


class GnadFormatError(ValueError):
    """A record of the news sources breaks the format; the message names file, record and field."""


@dataclass
class Article:
    id: int
    label: str
    title: str
    description: str
    paragraphs: list[str]

    def s2s(self) -> str:
        return self.title

    def p2p(self) -> str:
        return " ".join(part for part in [self.title, self.description, *self.paragraphs] if part)


class _BodyParser(HTMLParser):
    """Collect the description ``h2`` and the ``p`` texts inside ``div.copytext``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.description: list[str] = []
        self.paragraphs: list[str] = []
        self._stack: list[str] = []
        self._in_desc = 0
        self._copytext_depth: int | None = None
        self._p: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "br":  # a line break separates words; it has no end tag
            self.handle_data(" ")
            return
        self._stack.append(tag)
        if tag == "h2" and attrs.get("itemprop") == "description":
            self._in_desc = len(self._stack)
        elif tag == "div" and "copytext" in (attrs.get("class") or "").split() and self._copytext_depth is None:
            self._copytext_depth = len(self._stack)
        elif tag == "p" and self._copytext_depth is not None:
            self._p = []

    def handle_endtag(self, tag):
        if tag == "br" or tag not in self._stack:
            return
        while self._stack:
            depth = len(self._stack)
            top = self._stack.pop()
            if top == "p" and self._p is not None:
                text = " ".join("".join(self._p).split())
                if text:
                    self.paragraphs.append(text)
                self._p = None
            if depth == self._in_desc:
                self._in_desc = 0
            if depth == self._copytext_depth:
                self._copytext_depth = None
            if top == tag:
                break

    def handle_data(self, data):
        if self._in_desc:
            self.description.append(data)
        if self._p is not None:
            self._p.append(data)


def parse_body(html_body: str) -> tuple[str, list[str]]:
    """Return ``(description, paragraphs)`` of an article body."""
    parser = _BodyParser()
    parser.feed(html_body or "")
    parser.close()
    return " ".join("".join(parser.description).split()), parser.paragraphs


def read_articles(sqlite_path: str | Path) -> list[Article]:
    """Read the newsroom articles of a One Million Posts ``corpus.sqlite3``."""
    sqlite_path = Path(sqlite_path)
    if not sqlite_path.exists():
        raise FileNotFoundError(f"{sqlite_path}: no such file")
    if sqlite_path.is_dir():
        raise SourceFileError(f"{sqlite_path}: is a folder; million_posts needs the corpus.sqlite3 file")
    with open(sqlite_path, "rb") as fh:
        magic = fh.read(16)
    if magic != b"SQLite format 3\x00":
        raise GnadFormatError(f"{sqlite_path}: cannot read table Articles (not an SQLite database: it does not start "
                              f"with the SQLite header); million_posts needs corpus.sqlite3 from "
                              f"million_post_corpus.tar.bz2; if it is that file, {REDOWNLOAD}")
    con = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        rows = con.execute(QUERY).fetchall()
    except sqlite3.DatabaseError as err:
        hint = REDOWNLOAD if "malformed" in str(err) or "not a database" in str(err) else \
            "is it the One Million Posts corpus.sqlite3 (table Articles with ID_Article, Path, Title, Body)?"
        raise GnadFormatError(f"{sqlite_path}: cannot read table Articles ({err}); {hint}") from None
    finally:
        con.close()
    articles = []
    for id_, path, title, body in rows:
        parts = (path or "").split("/")
        if len(parts) < 2 or not parts[1]:
            raise GnadFormatError(f"{sqlite_path}: Articles record ID_Article={id_}: field Path {path!r} has no category")
        if title is None:
            raise GnadFormatError(f"{sqlite_path}: Articles record ID_Article={id_}: field Title is NULL")
        description, paragraphs = parse_body(body or "")
        articles.append(Article(int(id_), parts[1], " ".join(title.split()), description, paragraphs))
    return articles


def csv_files(paths) -> list[Path]:
    """The 10kGNAD csv files named by ``paths``: one file, a list of files, or a folder (its ``*.csv``, or
    ``*.csv.gz``, in name order: ``test.csv`` and ``train.csv`` for the whole corpus)."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for item in map(Path, items):
        if item.is_dir():
            found = sorted(p for p in item.iterdir() if p.is_file() and p.name.lower().endswith((".csv", ".csv.gz")))
            if not found:
                raise SourceFileError(f"no 10kGNAD csv file found in {item} (expected train.csv and test.csv)")
            files += found
        else:
            files.append(item)
    if not files:
        raise SourceFileError("10kgnad_csv: no files given (a path, a list of paths or a folder)")
    return files


def read_10kgnad_csv(path: str | Path) -> list[tuple[str, str]]:
    """Read a 10kGNAD csv (``label;text``, quote char ``'``, no header; ``.gz`` too) as ``(label, text)`` pairs."""
    path = Path(path)
    out = []
    with io.StringIO(read_text(path), newline="") as fh:
        reader = csv.reader(fh, delimiter=";", quotechar="'")
        start = 1
        for record, row in enumerate(reader, start=1):
            where = f"{path}, record {record} (line {start})"
            start = reader.line_num + 1
            if not row:
                continue
            if len(row) != 2:
                raise GnadFormatError(f"{where}: expected 2 fields (label;text), got {len(row)}")
            label, text = row[0].strip(), row[1].strip()
            if not label:
                raise GnadFormatError(f"{where}: field label is empty")
            if not text:
                raise GnadFormatError(f"{where}: field text is empty")
            out.append((label, text))
    return out
