"""GermEval 2019 blurbs parser and selection rules: crafted records, generated files, the real sample."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from conftest import SHARED

from tecb.data import demo as demo_data
from tecb.data.sources import germeval

REAL = SHARED / "data" / "germeval2019" / "blurbs_dev_sample.txt"


_ISBN = iter(range(9783000000000, 9784000000000))


def book(
    title="Titel", body="Text", cats=(((0, "Sachbuch"), (1, "Natur, Wissenschaft, Technik")),), extra="", isbn=None
):
    isbn = next(_ISBN) if isbn is None else isbn
    cat_xml = "".join(
        "<category>" + "".join(f'<topic d="{d}">{n}</topic>' for d, n in path) + "</category>\n" for path in cats
    )
    return (
        f'<book date="2019-01-04" xml:lang="de">\n<title>{title}</title>\n<body>{body}</body>\n{extra}'
        f"<categories>\n{cat_xml}</categories>\n<isbn>{isbn}</isbn>\n</book>\n"
    )


def test_no_root_bare_ampersand_entities_and_soft_hyphens():
    text = book(
        "&quot;Haus &amp; Hof&quot; AT&T",
        "Erfah\u00adrung &#228;&#xFC; &shy;x & y",
        [[(0, "Kinderbuch & Jugendbuch"), (1, "Liebe & Freundschaft")]],
    ) + book("Zweites", "B")
    books = germeval.parse_blurbs(text, "f.txt")
    assert len(books) == 2
    assert books[0].title == '"Haus & Hof" AT&T'
    assert books[0].body == "Erfahrung äü x & y"
    assert books[0].genres(0) == ["Kinderbuch & Jugendbuch"] and books[0].genres(1) == ["Liebe & Freundschaft"]
    assert books[1].line == text[: text.index("Zweites")].count("\n")


def test_multiple_categories_give_distinct_genres_in_order():
    b = germeval.parse_blurbs(
        book(cats=[[(0, "A"), (1, "x"), (2, "deep")], [(0, "A"), (1, "y")], [(0, "A"), (1, "x")]])
    )[0]
    assert b.genres(0) == ["A"] and b.genres(1) == ["x", "y"] and b.genres(2) == ["deep"]


@pytest.mark.parametrize(
    "text, message",
    [
        (book() + '<book date="x">\n<title>Offen</title>\n', "f.txt, line 9: field <book> is not closed"),
        ("<book>\n<title>Offen</title>\n<body>x</body>\n" + book(), "f.txt, line 1: field <book> is not closed"),
        (book().replace("Text</body>", "Text</bod>"), "f.txt, line 3: field <body> is not closed"),
        (book().replace("Titel</title>", "Titel"), "f.txt, line 2: field <title> is not closed"),
        (book().replace("</category>", "", 1), "f.txt, line 5: field <category> opened 1 times, closed 0"),
        (book().replace('d="0"', 'd="zero"'), "f.txt, line 5: field <topic> without a numeric d"),
    ],
)
def test_broken_records_name_file_line_and_field(text, message):
    with pytest.raises(germeval.BlurbsFormatError, match=message):
        germeval.parse_blurbs(text, "f.txt")


def test_selection_rules_and_drop_reasons():
    books = germeval.parse_blurbs(
        book("ok1", cats=[[(0, "A"), (1, "common")]])
        + book("ok2", cats=[[(0, "A"), (1, "common")]])
        + book("two fine", cats=[[(0, "A"), (1, "common")], [(0, "A"), (1, "rare")]])
        + book("", "no title")
        + book("no body", "")
        + book("two coarse", cats=[[(0, "A"), (1, "common")], [(0, "B"), (1, "z")]])
        + book("three fine", cats=[[(0, "A"), (1, "common")], [(0, "A"), (1, "rare")], [(0, "A"), (1, "z")]])
        + book("unlabeled", cats=[])
        + book("coarse only", cats=[[(0, "A")]])
    )
    kept, dropped = germeval.select_books(books)
    assert [(k.title, k.genre0, k.genre1) for k in kept] == [
        ("ok1", "A", "common"),
        ("ok2", "A", "common"),
        ("two fine", "A", "rare"),
    ]
    assert dropped == {
        "empty title": 1,
        "empty body": 1,
        "2 d=0 genres": 1,
        "3 d=1 genres": 1,
        "no d=0 genre": 1,
        "no d=1 genre": 1,
    }


def test_generated_zip_pools_train_dev_test(tmp_path):
    path = demo_data.write_germeval_zip(tmp_path / "g.zip", books_per_genre=4, seed=42)
    books = germeval.read_blurbs(path)
    with zipfile.ZipFile(path) as zf:
        n_blocks = sum(zf.read(n).decode().count("<book ") for n in zf.namelist() if "blurbs_" in n)
    assert len(books) == n_blocks
    assert {Path(b.source.split(":")[-1]).name for b in books} == set(germeval.BLURB_FILES)
    assert not any("\u00ad" in b.body or "&quot;" in b.title for b in books)


@pytest.mark.skipif(not REAL.exists(), reason="real GermEval sample not present")
def test_real_sample():
    books = germeval.read_blurbs(REAL)
    assert len(books) == REAL.read_text(encoding="utf-8").count("<book ")
    assert all(b.title and "\u00ad" not in b.body for b in books)
    assert any("&" in g for b in books for g in b.genres(0) + b.genres(1))
    kept, dropped = germeval.select_books(books)
    assert len(kept) + sum(dropped.values()) == len(books)
    assert kept and all(k.genre0 and k.genre1 for k in kept)
    hierarchy = {tuple(line.split("\t")) for line in (REAL.parent / "hierarchy.txt").read_text().splitlines()}
    parents = {child: parent for parent, child in hierarchy}
    assert all(parents.get(k.genre1) == k.genre0 for k in kept)
