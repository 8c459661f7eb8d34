"""GermEval 2019 Task 1 blurbs: parsing the (not well-formed) files and the paper's selection rules.

The files hold ``<book>`` blocks with no root element; genre names contain bare ``&`` while other
fields carry real entities (``&amp;``, ``&quot;``, ``&#...;``), so an XML parser cannot read them.
We cut the blocks with regular expressions and unescape each field with :func:`html.unescape`,
which decodes real entities and leaves a bare ``&`` alone.
"""

from __future__ import annotations

import html
import re
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tecb.data.sources.files import REDOWNLOAD, SourceFileError, decode, gunzip, sha256_bytes
from tecb.io import file_sha256

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
    isbn: str = ""

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
            raise BlurbsFormatError(
                f"{source}, line {_line(text, start + opened.start())}: field <{name}> is not closed"
            )
        return ""
    return clean_field(m.group(1))


def _categories(text: str, start: int, end: int, source: str) -> list[list[tuple[int, str]]]:
    block = text[start:end]
    for tag in ("categories", "category", "topic"):
        n_open, n_close = len(re.findall(rf"<{tag}\b", block)), block.count(f"</{tag}>")
        if n_open != n_close:
            at = re.search(rf"<{tag}\b", block)
            line = _line(text, start + (at.start() if at else 0))
            raise BlurbsFormatError(
                f"{source}, line {line}: field <{tag}> opened {n_open} times, closed {n_close} times"
            )
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
                _field(text, start, end, "isbn", source),
            )
        )
        pos = m.end()
    rest = text[pos:]
    if "<book" in rest:
        bad = pos + rest.index("<book")
        raise BlurbsFormatError(f"{source}, line {_line(text, bad)}: field <book> is not closed")
    return books


BLURB_PATTERN = re.compile(r"^blurbs_[^/]*\.txt(\.gz)?$", re.I)


@dataclass
class BlurbsFile:
    """One blurbs file read: its name (``archive.zip:member`` inside a zip), SHA-256 of its bytes as stored,
    the number of ``<book>`` records and whether any of them carries ``<categories>`` (labels)."""

    name: str
    sha256: str
    books: int
    labelled: bool
    short: str = ""  # the name without folders (``archive.zip:member``), for outputs that must not hold paths


@dataclass
class BlurbsSource:
    """All books of the labelled files (in file order), every file read, the archive's own hash, and the books of
    the unlabelled files (e.g. ``blurbs_test_nolabel.txt``: never in a dataset; texts for unsupervised training)."""

    books: list[Book]
    files: list[BlurbsFile]
    archive_sha256: str | None = None
    unlabelled: list[Book] = field(default_factory=list)

    def report(self) -> str:
        lines = []
        for f in self.files:
            state = (
                "labelled"
                if f.labelled
                else "UNLABELLED (no <categories>): not used"
                if f.books
                else "no <book> records: not a blurbs file?"
            )
            lines.append(f"    {f.name}: {f.books} books read, {state}")
        return "\n".join(lines)


def _blurbs_name(name: str) -> bool:
    return bool(BLURB_PATTERN.match(Path(name).name))


def _file_order(name: str) -> tuple[int, str]:
    """train, dev, test first (the order the paper pools them in: it decides the item order), then the rest."""
    base = Path(str(name)).name.lower().removesuffix(".gz")
    return (BLURB_FILES.index(base) if base in BLURB_FILES else len(BLURB_FILES), base)


def _parse_file(data: bytes, where: str, files: list[BlurbsFile], books: list[Book], short: str, unlabelled) -> None:
    digest = sha256_bytes(data)
    if where.lower().endswith(".gz"):
        data = gunzip(data, where)
    parsed = parse_blurbs(decode(data, where), where)
    labelled = any(b.categories for b in parsed)
    files.append(BlurbsFile(where, digest, len(parsed), labelled, short))
    (books if labelled else unlabelled).extend(parsed)


def read_blurbs_source(path: str | Path) -> BlurbsSource:
    """Read every ``blurbs_*.txt`` (or ``.txt.gz``) of the GermEval zip or a folder, or one such file.

    A file whose books carry no ``<categories>`` at all (e.g. ``blurbs_test_nolabel.txt``) is recorded as
    unlabelled and its books are not used. Files are read in the order train, dev, test, then others by name.
    """
    path = Path(path)
    books: list[Book] = []
    files: list[BlurbsFile] = []
    unlabelled: list[Book] = []
    archive = None
    if not path.exists():
        raise SourceFileError(f"{path}: no such file or folder")
    if path.is_dir():
        found = sorted((p for p in path.iterdir() if p.is_file() and _blurbs_name(p.name)), key=_file_order)
        if not found:
            raise SourceFileError(f"no blurbs file found in {path} (expected blurbs_*.txt or blurbs_*.txt.gz)")
        stems = {}
        for p in found:
            stem = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
            if stem in stems:
                raise SourceFileError(f"{path}: both {stems[stem]} and {p.name} hold {stem}; keep only one")
            stems[stem] = p.name
        for p in found:
            _parse_file(p.read_bytes(), str(p), files, books, p.name, unlabelled)
    elif path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
        archive = file_sha256(path)
        try:
            with zipfile.ZipFile(path) as zf:
                found = sorted((n for n in zf.namelist() if _blurbs_name(n)), key=_file_order)
                if not found:
                    raise SourceFileError(f"no blurbs file found in {path} (expected blurbs_*.txt members)")
                for name in found:
                    _parse_file(zf.read(name), f"{path}:{name}", files, books, f"{path.name}:{name}", unlabelled)
        except (zipfile.BadZipFile, EOFError, zlib.error) as err:
            raise SourceFileError(f"{path}: truncated or corrupt zip file ({err}); {REDOWNLOAD}") from None
    else:
        _parse_file(path.read_bytes(), str(path), files, books, path.name, unlabelled)
    return BlurbsSource(books, files, archive, unlabelled)


def read_blurbs(path: str | Path) -> list[Book]:
    """The books of the labelled blurbs files of the GermEval zip, a folder, or one (``.gz``) file."""
    return read_blurbs_source(path).books


@dataclass
class SelectedBook:
    title: str
    body: str
    genre0: str
    genre1: str


def select_books(books: list[Book]) -> tuple[list[SelectedBook], Counter]:
    """Apply the paper's selection (design §6); return kept books and a count of drop reasons.

    A book that repeats an earlier one (same ISBN, or same title and body) is dropped as a duplicate
    (the first one read is kept). Keep a book if title and body are non-empty, it has exactly one
    distinct d=0 genre and one or two distinct d=1 genres; with two, keep the d=1 genre that is rarer
    over the whole collection: a genre's frequency is the number of books read (all labelled files,
    before any selection, duplicates included) that list it among their distinct d=1 genres; ties go
    to the alphabetically first name.
    """
    freq1 = Counter(g for b in books for g in b.genres(1))
    kept, dropped = [], Counter()
    seen_isbn: set[str] = set()
    seen_text: set[tuple[str, str]] = set()
    for b in books:
        g0, g1 = b.genres(0), b.genres(1)
        isbn = b.isbn.strip()
        if isbn and isbn in seen_isbn:
            dropped["duplicate book (same ISBN as an earlier one)"] += 1
            continue
        if b.title and b.body and (b.title, b.body) in seen_text:
            dropped["duplicate book (same title and body as an earlier one)"] += 1
            continue
        if isbn:
            seen_isbn.add(isbn)
        seen_text.add((b.title, b.body))
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
