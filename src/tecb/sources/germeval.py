"""GermEval 2019 Task 1 blurbs: parsing the (not well-formed) files and the paper's selection rules.

The files hold ``<book>`` blocks with no root element; genre names contain bare ``&`` while other
fields carry real entities (``&amp;``, ``&quot;``, ``&#...;``), so an XML parser cannot read them.
We cut the blocks with regular expressions and unescape each field with :func:`html.unescape`,
which decodes real entities and leaves a bare ``&`` alone.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BLURB_FILES = ("blurbs_train.txt", "blurbs_dev.txt", "blurbs_test.txt")

_BOOK = re.compile(r"<book\b[^>]*>(.*?)</book>", re.S)
_CATEGORY = re.compile(r"<category>(.*?)</category>", re.S)
_TOPIC = re.compile(r'<topic\s+d="(\d+)"[^>]*>(.*?)</topic>', re.S)
SOFT_HYPHEN = "\u00ad"


class BlurbsFormatError(ValueError):
    """A record in a blurbs file breaks the format; the message names file, line and field."""


@dataclass
class Book:
    title: str
    body: str
    categories: list[list[tuple[int, str]]] = field(default_factory=list)
    source: str = ""
    line: int = 0

    def genres(self, depth: int) -> list[str]:
        """Distinct genres at ``depth`` over all category paths, in order of appearance."""
        seen: dict[str, None] = {}
        for path in self.categories:
            for d, name in path:
                if d == depth:
                    seen.setdefault(name, None)
        return list(seen)


# only complete entities (with their ';'): html.unescape alone would also decode "&not", "&copy", ... without one
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def clean_field(raw: str) -> str:
    """Decode real entities (a bare ``&`` stays), drop soft hyphens, strip surrounding whitespace."""
    return _ENTITY.sub(lambda m: html.unescape(m.group(0)), raw).replace(SOFT_HYPHEN, "").strip()


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _field(text: str, start: int, end: int, name: str, source: str) -> str:
    """The cleaned content of ``<name>`` inside ``text[start:end]`` ("" when absent)."""
    block = text[start:end]
    m = re.search(rf"<{name}>(.*?)</{name}>", block, re.S)
    if m is None:
        opened = re.search(rf"<{name}>", block)
        if opened:
            raise BlurbsFormatError(f"{source}, line {_line(text, start + opened.start())}: field <{name}> is not closed")
        return ""
    return clean_field(m.group(1))


def _categories(text: str, start: int, end: int, source: str) -> list[list[tuple[int, str]]]:
    block = text[start:end]
    for tag in ("categories", "category", "topic"):
        n_open, n_close = len(re.findall(rf"<{tag}\b", block)), block.count(f"</{tag}>")
        if n_open != n_close:
            at = re.search(rf"<{tag}\b", block)
            line = _line(text, start + (at.start() if at else 0))
            raise BlurbsFormatError(f"{source}, line {line}: field <{tag}> opened {n_open} times, closed {n_close} times")
    cats = []
    for c in _CATEGORY.finditer(block):
        topics = _TOPIC.findall(c.group(1))
        if len(topics) != c.group(1).count("</topic>"):
            line = _line(text, start + c.start())
            raise BlurbsFormatError(f'{source}, line {line}: field <topic> without a numeric d="..." attribute')
        cats.append([(int(d), clean_field(name)) for d, name in topics])
    return cats


def parse_blurbs(text: str, source: str = "<string>") -> list[Book]:
    """Parse the content of one blurbs file into :class:`Book` records (file, line and field named on errors)."""
    books = []
    pos = 0
    for m in _BOOK.finditer(text):
        line = _line(text, m.start())
        between = text[pos : m.start()]
        if "<book" in between:
            bad = pos + between.index("<book")
            raise BlurbsFormatError(f"{source}, line {_line(text, bad)}: field <book> is not closed")
        inner = m.group(1)
        if re.search(r"<book\b", inner):
            raise BlurbsFormatError(f"{source}, line {line}: field <book> is not closed before the next <book>")
        start, end = m.start(1), m.end(1)
        books.append(
            Book(
                _field(text, start, end, "title", source),
                _field(text, start, end, "body", source),
                _categories(text, start, end, source),
                source,
                line,
            )
        )
        pos = m.end()
    rest = text[pos:]
    if "<book" in rest:
        bad = pos + rest.index("<book")
        raise BlurbsFormatError(f"{source}, line {_line(text, bad)}: field <book> is not closed")
    return books


def read_blurbs(path: str | Path, members: tuple[str, ...] = BLURB_FILES) -> list[Book]:
    """Read books from the GermEval zip (the listed members that exist), a directory, or one file."""
    path = Path(path)
    books: list[Book] = []
    if path.is_dir():
        for name in members:
            if (path / name).exists():
                books += parse_blurbs((path / name).read_text(encoding="utf-8"), str(path / name))
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            by_base = {Path(n).name: n for n in zf.namelist()}
            found = [by_base[m] for m in members if m in by_base]
            if not found:
                raise BlurbsFormatError(f"{path}: none of {', '.join(members)} in the archive")
            for name in found:
                with zf.open(name) as fh:
                    books += parse_blurbs(io.TextIOWrapper(fh, encoding="utf-8").read(), f"{path}:{name}")
    else:
        books = parse_blurbs(path.read_text(encoding="utf-8"), str(path))
    return books


@dataclass
class SelectedBook:
    title: str
    body: str
    genre0: str
    genre1: str


def select_books(books: list[Book]) -> tuple[list[SelectedBook], Counter]:
    """Apply the paper's selection (design §6); return kept books and a count of drop reasons.

    Keep a book if title and body are non-empty, it has exactly one distinct d=0 genre and one or
    two distinct d=1 genres; with two, keep the d=1 genre that is rarer over the whole collection
    (ties broken by name).
    """
    freq1 = Counter(g for b in books for g in b.genres(1))
    kept, dropped = [], Counter()
    for b in books:
        g0, g1 = b.genres(0), b.genres(1)
        if not b.title:
            dropped["empty title"] += 1
        elif not b.body:
            dropped["empty body"] += 1
        elif len(g0) == 0:
            dropped["no d=0 genre"] += 1
        elif len(g0) > 1:
            dropped[f"{len(g0)} d=0 genres"] += 1
        elif len(g1) == 0:
            dropped["no d=1 genre"] += 1
        elif len(g1) > 2:
            dropped[f"{len(g1)} d=1 genres"] += 1
        else:
            fine = min(g1, key=lambda g: (freq1[g], g))
            kept.append(SelectedBook(b.title, b.body, g0[0], fine))
    return kept, dropped
