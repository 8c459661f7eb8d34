"""One Million Posts corpus.sqlite3 -> 10kGNAD articles, and the 10kGNAD csv fallback (P2P only)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import SHARED
from helpers import GNAD_CATEGORIES

from tecb.data import datasets
from tecb.data.sources import gnad

REAL_CSV = SHARED / "data" / "10kgnad" / "test_sample.csv"
BODY = (
    '<div class="section" id="content-main"><h2 itemprop="description"><strong>Teaser</strong> &amp; mehr</h2>'
    '<div class="copytext"><p>Erster  Absatz<br/>mit Umbruch.</p><img src="x"><p>Zweiter &quot;Absatz&quot;.</p>'
    '<div class="supplemental"><p>Kasten</p></div></div><p>Außerhalb</p></div>'
)


def _corpus(path, rows):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE Articles (ID_Article INTEGER, Path TEXT, publishingDate TEXT, Title TEXT, Body TEXT)")
    con.executemany("INSERT INTO Articles VALUES (?, ?, '2015-06-01', ?, ?)", rows)
    con.commit()
    con.close()
    return path


def test_newsroom_articles_description_and_copytext(tmp_path):
    path = _corpus(
        tmp_path / "corpus.sqlite3",
        [
            (1, "Newsroom/Sport/Fussball/Bundesliga", "Tor  in Wien", BODY),
            (2, "Newsroom/User/Forum", "Userbeitrag", BODY),
            (3, "Diskurs/Kommentar", "Kommentar", BODY),
            (4, "Newsroom/Web/Netzpolitik", "Netz", "<p>no copytext</p>"),
        ],
    )
    arts = gnad.read_articles(path)
    assert [(a.id, a.label) for a in arts] == [(1, "Sport"), (4, "Web")]
    a = arts[0]
    assert a.title == "Tor in Wien" and a.description == "Teaser & mehr"
    assert a.paragraphs[:2] == ["Erster Absatz mit Umbruch.", 'Zweiter "Absatz".'] and "Außerhalb" not in a.paragraphs
    assert a.p2p().startswith('Tor in Wien Teaser & mehr Erster Absatz mit Umbruch. Zweiter "Absatz".')
    assert arts[1].p2p() == "Netz"


def test_p2p_drops_articles_without_text_and_counts_them(tmp_path):
    rows = [(i, f"Newsroom/{c}/x", f"Titel {i}", BODY) for i, c in enumerate(["Sport", "Web", "Kultur"] * 5)]
    rows.append((99, "Newsroom/Sport/x", "Leer", "<div></div>"))
    path = _corpus(tmp_path / "corpus.sqlite3", rows)
    ds = datasets.build_tenkgnad(path, "p2p", seed=42)
    assert ds.dropped["no description or copytext"] == 1 and ds.n_items == 15
    assert "dropped (no description or copytext): 1" in datasets.describe(ds, "T")


def test_bad_records_name_file_record_and_field(tmp_path):
    path = _corpus(tmp_path / "c.sqlite3", [(7, "Newsroom/", "T", BODY)])
    with pytest.raises(gnad.GnadFormatError, match=r"c.sqlite3: Articles record ID_Article=7: field Path"):
        gnad.read_articles(path)
    path = _corpus(tmp_path / "d.sqlite3", [(8, "Newsroom/Sport", None, BODY)])
    with pytest.raises(gnad.GnadFormatError, match="ID_Article=8: field Title is NULL"):
        gnad.read_articles(path)
    (tmp_path / "e.sqlite3").write_text("not a database")
    with pytest.raises(gnad.GnadFormatError, match="e.sqlite3: cannot read table Articles"):
        gnad.read_articles(tmp_path / "e.sqlite3")


def test_csv_quotes_and_bad_records(tmp_path):
    good = tmp_path / "train.csv"
    good.write_text("Sport;'Ein Tor; dann ''zwei''\nZeilen'\nWeb;Ohne Anführung\n", encoding="utf-8")
    assert gnad.read_10kgnad_csv(good) == [("Sport", "Ein Tor; dann 'zwei'\nZeilen"), ("Web", "Ohne Anführung")]
    bad = tmp_path / "bad.csv"
    bad.write_text("Sport;'a\nb'\nWeb;\n", encoding="utf-8")
    with pytest.raises(gnad.GnadFormatError, match=r"bad.csv, record 2 \(line 3\): field text is empty"):
        gnad.read_10kgnad_csv(bad)
    bad.write_text("Sport;a;b\n", encoding="utf-8")
    with pytest.raises(gnad.GnadFormatError, match=r"record 1 \(line 1\): expected 2 fields"):
        gnad.read_10kgnad_csv(bad)


@pytest.mark.skipif(not REAL_CSV.exists(), reason="real 10kGNAD sample not present")
def test_real_csv_sample_builds_p2p():
    rows = gnad.read_10kgnad_csv(REAL_CSV)
    assert len(rows) == 120
    assert {label for label, _ in rows} == GNAD_CATEGORIES
    ds = datasets.build_tenkgnad_csv(str(REAL_CSV), seed=42)
    assert len(ds.splits) == 10 and all(12 <= len(ids) <= 120 for ids, _ in ds.splits)
    with pytest.raises(ValueError, match="P2P only|only build the P2P"):
        datasets.build_tenkgnad_csv(str(REAL_CSV), "s2s", seed=42)
