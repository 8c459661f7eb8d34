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

from tecb.data.sources.files import REDOWNLOAD, SourceFileError, read_text

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


def is_sqlite(path: str | Path) -> bool:
    """Whether the file starts with the SQLite header."""
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def read_articles(sqlite_path: str | Path) -> list[Article]:
    """Read the newsroom articles of a One Million Posts ``corpus.sqlite3``."""
    sqlite_path = Path(sqlite_path)
    if not sqlite_path.exists():
        raise FileNotFoundError(f"{sqlite_path}: no such file")
    if sqlite_path.is_dir():
        raise SourceFileError(f"{sqlite_path}: is a folder; million_posts needs the corpus.sqlite3 file")
    if not is_sqlite(sqlite_path):
        raise GnadFormatError(
            f"{sqlite_path}: cannot read table Articles (not an SQLite database: it does not start "
            f"with the SQLite header); million_posts needs corpus.sqlite3 from "
            f"million_post_corpus.tar.bz2; if it is that file, {REDOWNLOAD}"
        )
    con = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        rows = con.execute(QUERY).fetchall()
    except sqlite3.DatabaseError as err:
        hint = (
            REDOWNLOAD
            if "malformed" in str(err) or "not a database" in str(err)
            else "is it the One Million Posts corpus.sqlite3 (table Articles with ID_Article, Path, Title, Body)?"
        )
        raise GnadFormatError(f"{sqlite_path}: cannot read table Articles ({err}); {hint}") from None
    finally:
        con.close()
    articles = []
    for id_, path, title, body in rows:
        parts = (path or "").split("/")
        if len(parts) < 2 or not parts[1]:
            raise GnadFormatError(
                f"{sqlite_path}: Articles record ID_Article={id_}: field Path {path!r} has no category"
            )
        if title is None:
            raise GnadFormatError(f"{sqlite_path}: Articles record ID_Article={id_}: field Title is NULL")
        description, paragraphs = parse_body(body or "")
        articles.append(Article(int(id_), parts[1], " ".join(title.split()), description, paragraphs))
    return articles


#: The 10kGNAD release's two files, read in this order (a folder and a list of them give the same dataset).
CSV_PARTS = ("train", "test")


def _csv_name(path: Path) -> str:
    """``train``, ``test``, ``articles``, ... for a ``.csv`` or ``.csv.gz`` file; "" for anything else."""
    name = path.name.lower().removesuffix(".gz")
    return name.removesuffix(".csv") if name.endswith(".csv") else ""


def _order(path: Path) -> int:
    name = _csv_name(path)
    return CSV_PARTS.index(name) if name in CSV_PARTS else len(CSV_PARTS)


def _folder_files(folder: Path) -> tuple[list[Path], list[str]]:
    """A folder's ``train.csv`` then ``test.csv`` (or ``.csv.gz``); other csv files are left out, with a note."""
    found = sorted(p for p in folder.iterdir() if p.is_file() and _csv_name(p))
    parts = [p for p in found if _csv_name(p) in CSV_PARTS]
    for part in CSV_PARTS:
        same = [p.name for p in parts if _csv_name(p) == part]
        if len(same) > 1:
            raise SourceFileError(f"{folder}: both {' and '.join(same)}: the same file twice? keep one of them")
    others = [p.name for p in found if p not in parts]
    if not parts:
        hint = f"; found {', '.join(others)}: name that file in `path` to read it" if others else ""
        raise SourceFileError(f"no 10kGNAD csv file found in {folder} (expected train.csv and test.csv{hint})")
    notes = []
    for name in others:
        why = (
            "it holds the articles of train.csv and test.csv together: reading it too would count each article twice"
            if _csv_name(Path(name)) == "articles"
            else "a folder is read as train.csv + test.csv"
        )
        notes.append(f"  {folder / name}: ignored ({why}; name it in `path` to read it instead)")
    missing = [f"{part}.csv" for part in CSV_PARTS if part not in {_csv_name(p) for p in parts}]
    if missing:
        notes.append(f"  {folder}: no {' or '.join(missing)} (the whole corpus is train.csv + test.csv)")
    return sorted(parts, key=_order), notes


def csv_files(paths) -> tuple[list[Path], list[str]]:
    """The 10kGNAD csv files named by ``paths``, in reading order, and notes for the build log.

    ``paths``: one file (read as it is), a list of files or a folder. A folder gives its ``train.csv`` and
    ``test.csv`` (or ``.csv.gz``); any other csv in it is ignored with a note (``articles.csv``, the two
    together, would double the corpus). Files are read in the order train, test, then others as given: the
    folder and the list of its two files give identical texts, splits and ``content_sha256``. A list that
    names ``articles.csv`` beside ``train.csv`` or ``test.csv``, or a file twice, is refused.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    notes: list[str] = []
    for item in map(Path, items):
        if item.is_dir():
            found, more = _folder_files(item)
            files += found
            notes += more
        else:
            files.append(item)
    if not files:
        raise SourceFileError("10kgnad_csv: no files given (a path, a list of paths or a folder)")
    twice = sorted({str(p) for p in files if sum(q.resolve() == p.resolve() for q in files) > 1})
    if twice:
        raise SourceFileError(f"10kgnad_csv: {', '.join(twice)} named more than once: its articles would count twice")
    names = {_csv_name(p) for p in files}
    if "articles" in names and names & set(CSV_PARTS):
        raise SourceFileError(
            "10kgnad_csv: articles.csv holds the articles of train.csv and test.csv together: "
            "reading it with them counts each article twice; name either articles.csv alone or "
            "train.csv and test.csv"
        )
    return sorted(files, key=_order), notes


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


# --- the forum: table Posts (argue's reply pairs) ----------------------------------------------

POSTS_QUERY = (
    "SELECT ID_Post, ID_Parent_Post, Headline, Body FROM Posts "
    "WHERE Status IS NULL OR Status != 'deleted' ORDER BY ID_Post"
)


def read_posts(sqlite_path: str | Path) -> list[tuple[int, int | None, str]]:
    """The forum posts of a One Million Posts ``corpus.sqlite3``: ``(ID_Post, ID_Parent_Post or None, text)``, the
    text being ``Headline`` and ``Body`` joined by a blank, whitespace collapsed; deleted posts are left out."""
    sqlite_path = Path(sqlite_path)
    if not sqlite_path.is_file():
        raise FileNotFoundError(f"{sqlite_path}: no such file")
    con = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        rows = con.execute(POSTS_QUERY).fetchall()
    except sqlite3.DatabaseError as err:
        raise GnadFormatError(
            f"{sqlite_path}: cannot read table Posts ({err}); argue's reply pairs need the One Million Posts "
            "corpus.sqlite3 (table Posts with ID_Post, ID_Parent_Post, Headline, Body, Status)"
        ) from None
    finally:
        con.close()
    out = []
    for id_post, parent, headline, body in rows:
        if id_post is None:
            raise GnadFormatError(f"{sqlite_path}: a Posts record has no ID_Post")
        text = " ".join(f"{headline or ''} {body or ''}".split())
        out.append((int(id_post), None if parent is None else int(parent), text))
    return out
