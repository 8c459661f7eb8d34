"""Raw inputs as people have them (issue 13.1) and bad inputs that must name the file (issue 12.3, 12.5).

Files are written in the real formats; the real samples in ../shared/data are used when present.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import sqlite3
import zipfile

import pandas as pd
import pytest
from conftest import ROOT, SHARED

from tecb.data import datasets
from tecb.data.sources import custom, germeval, gnad, published
from tecb.data.sources.files import SourceFileError

REAL_BLURBS = SHARED / "data" / "germeval2019" / "blurbs_dev_sample.txt"
REAL_CSV = SHARED / "data" / "10kgnad" / "test_sample.csv"
GENRES = {"Literatur & Unterhaltung": ["Krimi & Thriller", "Fantasy"], "Sachbuch": ["Natur", "Geschichte"]}


def _book(
    i: int,
    g0: str,
    g1: str,
    isbn: int | None = None,
    title: str | None = None,
    body: str | None = None,
    labelled: bool = True,
) -> str:
    cats = (
        (
            f'<categories>\n<category>\n<topic d="0">{g0}</topic>\n<topic d="1">{g1}</topic>\n</category>\n'
            "</categories>\n"
        )
        if labelled
        else ""
    )
    return (
        f'<book date="2019-01-04" xml:lang="de">\n<title>{title or f"Titel {i}"}</title>\n'
        f"<body>{body or f'Klappentext Nummer {i} &amp; mehr.'}</body>\n<copyright>(c) Verlag</copyright>\n"
        f"{cats}<authors>A. Autor</authors>\n<isbn>{isbn or 9783000000000 + i}</isbn>\n</book>\n"
    )


def _books(start: int, n: int, labelled: bool = True) -> str:
    pairs = [(g0, g1) for g0, fine in GENRES.items() for g1 in fine]
    return "".join(_book(start + i, *pairs[i % len(pairs)], labelled=labelled) for i in range(n))


def _germeval_folder(folder, gz_test: bool = True):
    """train + dev as .txt, test as .txt.gz (as public copies ship it), and an unlabelled test file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "blurbs_train.txt").write_text(_books(0, 24), encoding="utf-8")
    (folder / "blurbs_dev.txt").write_text(_books(100, 8), encoding="utf-8")
    test = _books(200, 8).encode("utf-8")
    if gz_test:
        (folder / "blurbs_test.txt.gz").write_bytes(gzip.compress(test, mtime=0))
    else:
        (folder / "blurbs_test.txt").write_bytes(test)
    (folder / "blurbs_test_nolabel.txt").write_text(_books(300, 12, labelled=False), encoding="utf-8")
    (folder / "hierarchy.txt").write_text("".join(f"{a}\t{b}\n" for a, fine in GENRES.items() for b in fine))
    return folder


# --- GermEval: folders, patterns, .gz, unlabelled files, duplicates ----------------------------------------


def test_germeval_folder_by_pattern_with_gz_and_unlabelled_file(tmp_path):
    folder = _germeval_folder(tmp_path / "germeval")
    source = germeval.read_blurbs_source(folder)
    assert [(f.short, f.books, f.labelled) for f in source.files] == [
        ("blurbs_train.txt", 24, True),
        ("blurbs_dev.txt", 8, True),
        ("blurbs_test.txt.gz", 8, True),
        ("blurbs_test_nolabel.txt", 12, False),
    ]
    assert len(source.books) == 40  # the unlabelled books are not used
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "germeval2019", "text": "s2s"}, {}, str(folder), seed=42
    )
    log = datasets.describe(ds, "BlurbsClusteringS2S")
    assert "blurbs_test_nolabel.txt: 12 books read, UNLABELLED" in log
    assert "blurbs_test.txt.gz: 8 books read, labelled" in log
    assert "no d=0 genre" not in log  # unlabelled books are not counted as drops
    # the per-file counts come before the selection counts
    assert log.index("books read per file") < log.index("split 0") and ds.n_items == 40


def test_germeval_gz_path_and_zip_with_folder_inside(tmp_path):
    gz = tmp_path / "blurbs_dev.txt.gz"
    gz.write_bytes(gzip.compress(_books(0, 8).encode()))
    assert len(germeval.read_blurbs(gz)) == 8
    zpath = tmp_path / "germeval2019t1-public-data-final.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("data/blurbs_train.txt", _books(0, 12))
        zf.writestr("data/blurbs_test_nolabel.txt", _books(50, 4, labelled=False))
        zf.writestr("data/hierarchy.txt", "x\ty\n")
    source = germeval.read_blurbs_source(zpath)
    assert [f.short for f in source.files] == [
        f"{zpath.name}:data/blurbs_train.txt",
        f"{zpath.name}:data/blurbs_test_nolabel.txt",
    ]
    assert len(source.books) == 12 and source.archive_sha256


def test_germeval_nothing_found_and_ambiguous_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "hierarchy.txt").write_text("a\tb\n")
    with pytest.raises(SourceFileError, match=r"no blurbs file found in .*empty"):
        germeval.read_blurbs_source(tmp_path / "empty")
    folder = _germeval_folder(tmp_path / "both")
    (folder / "blurbs_test.txt").write_text(_books(200, 8))
    with pytest.raises(SourceFileError, match=r"both blurbs_test.txt and blurbs_test.txt.gz"):
        germeval.read_blurbs_source(folder)
    only_unlabelled = tmp_path / "nolabel"
    only_unlabelled.mkdir()
    (only_unlabelled / "blurbs_test_nolabel.txt").write_text(_books(0, 5, labelled=False))
    with pytest.raises(ValueError, match=r"no labelled books \(unlabelled files: .*blurbs_test_nolabel.txt\)"):
        datasets.build_blurbs(only_unlabelled, "s2s", seed=42)


def test_duplicate_books_are_dropped_and_counted(tmp_path):
    text = (
        _book(1, "Sachbuch", "Natur")
        + _book(2, "Sachbuch", "Natur", isbn=9783000000001)  # same ISBN as 1
        + _book(3, "Sachbuch", "Natur", title="Gleich", body="Gleicher Text")
        + _book(4, "Sachbuch", "Geschichte", title="Gleich", body="Gleicher Text")  # same title + body
        + _book(5, "Sachbuch", "Geschichte", title="Gleich", body="Anderer Text")
    )  # same title only: kept
    kept, dropped = germeval.select_books(germeval.parse_blurbs(text, "f.txt"))
    assert len(kept) == 3
    assert dropped == {
        "duplicate book (same ISBN as an earlier one)": 1,
        "duplicate book (same title and body as an earlier one)": 1,
    }


@pytest.mark.skipif(not REAL_BLURBS.exists(), reason="real GermEval sample not present")
def test_real_germeval_sample_as_folder_and_gz(tmp_path):
    folder = tmp_path / "g"
    folder.mkdir()
    shutil.copy(REAL_BLURBS, folder / "blurbs_dev.txt")
    (folder / "blurbs_train.txt.gz").write_bytes(gzip.compress(REAL_BLURBS.read_bytes()))
    source = germeval.read_blurbs_source(folder)
    n = REAL_BLURBS.read_text(encoding="utf-8").count("<book ")
    assert [(f.short, f.books, f.labelled) for f in source.files] == [
        ("blurbs_train.txt.gz", n, True),
        ("blurbs_dev.txt", n, True),
    ]
    kept, dropped = germeval.select_books(source.books)
    # the second copy of every book is a duplicate (same ISBN): counted among the dropped records
    assert dropped["duplicate book (same ISBN as an earlier one)"] == n
    assert len(kept) + sum(dropped.values()) == 2 * n


# --- 10kGNAD csv: train + test together -------------------------------------------------------------------


def _gnad_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter=";", quotechar="'", lineterminator="\n").writerows(rows)
    return path


def _gnad_folder(tmp_path):
    labels = ["Sport", "Web", "Kultur"]
    folder = tmp_path / "10kGNAD"
    folder.mkdir()
    _gnad_csv(folder / "train.csv", [(labels[i % 3], f"Artikel {i}; mit 'Zitat'") for i in range(30)])
    _gnad_csv(folder / "test.csv", [(labels[i % 3], f"Test {i}") for i in range(6)])
    (folder / "README.md").write_text("not a csv")
    return folder


def _gnad(name, path):
    return datasets.build_from_config(
        name, {"source": "gnad", "text": "p2p"}, {"gnad": {"builder": "10kgnad_csv"}}, path, seed=42
    )


def test_10kgnad_train_and_test_as_folder_or_list(tmp_path):
    folder = _gnad_folder(tmp_path)
    by_folder = _gnad("TenKGnadClusteringP2P", str(folder))
    by_list = _gnad("TenKGnadClusteringP2P", [str(folder / "test.csv"), str(folder / "train.csv")])
    assert by_folder.n_items == by_list.n_items == 36
    # read in the fixed order train, test, whatever the list's order: the same texts, splits and identity
    assert [f["file"] for f in by_folder.provenance["source_files"]] == ["train.csv", "test.csv"]
    assert by_folder.texts[0] == "Artikel 0; mit 'Zitat'" and by_folder.texts == by_list.texts
    assert by_folder.splits == by_list.splits
    assert by_folder.provenance["content_sha256"] == by_list.provenance["content_sha256"]
    assert by_folder.provenance == by_list.provenance
    log = datasets.describe(by_list, "TenKGnadClusteringP2P")
    assert "rows read per file, in this order" in log and log.index("train.csv: 30 rows") < log.index("test.csv: 6")
    (tmp_path / "none").mkdir()
    with pytest.raises(SourceFileError, match=r"no 10kGNAD csv file found in .*none"):
        datasets.build_tenkgnad_csv(str(tmp_path / "none"), seed=42)


def test_10kgnad_articles_csv_beside_train_and_test_does_not_double_the_corpus(tmp_path):
    folder = _gnad_folder(tmp_path)
    alone = _gnad("TenKGnadClusteringP2P", str(folder))
    rows = list(csv.reader((folder / "train.csv").open(encoding="utf-8"), delimiter=";", quotechar="'"))
    rows += list(csv.reader((folder / "test.csv").open(encoding="utf-8"), delimiter=";", quotechar="'"))
    _gnad_csv(folder / "articles.csv", rows)  # the 10kGNAD repository's third file: train + test together
    both = _gnad("TenKGnadClusteringP2P", str(folder))
    assert both.n_items == 36 and both.provenance["content_sha256"] == alone.provenance["content_sha256"]
    assert [f["file"] for f in both.provenance["source_files"]] == ["train.csv", "test.csv"]
    log = datasets.describe(both, "TenKGnadClusteringP2P")
    assert f"{folder / 'articles.csv'}: ignored (it holds the articles of train.csv and test.csv together" in log
    with pytest.raises(SourceFileError, match="articles.csv holds the articles of train.csv and test.csv together"):
        _gnad("TenKGnadClusteringP2P", [str(folder / "train.csv"), str(folder / "articles.csv")])
    with pytest.raises(SourceFileError, match="train.csv named more than once"):
        _gnad("TenKGnadClusteringP2P", [str(folder / "train.csv"), str(folder / "train.csv")])
    assert _gnad("TenKGnadClusteringP2P", str(folder / "articles.csv")).n_items == 36  # named alone: read
    (folder / "train.csv").unlink()
    (folder / "test.csv").unlink()
    with pytest.raises(SourceFileError, match=r"no 10kGNAD csv file found in .*found articles.csv: name that file"):
        _gnad("TenKGnadClusteringP2P", str(folder))


def test_10kgnad_folder_with_gz_files_and_one_part_missing(tmp_path):
    folder = _gnad_folder(tmp_path)
    (folder / "train.csv.gz").write_bytes(gzip.compress((folder / "train.csv").read_bytes()))
    with pytest.raises(SourceFileError, match=r"both train.csv and train.csv.gz"):
        _gnad("TenKGnadClusteringP2P", str(folder))
    (folder / "train.csv").unlink()
    gz = _gnad("TenKGnadClusteringP2P", str(folder))
    assert [f["file"] for f in gz.provenance["source_files"]] == ["train.csv.gz", "test.csv"]
    (folder / "test.csv").unlink()
    log = datasets.describe(_gnad("TenKGnadClusteringP2P", str(folder)), "TenKGnadClusteringP2P")
    assert "no test.csv (the whole corpus is train.csv + test.csv)" in log


@pytest.mark.skipif(not REAL_CSV.exists(), reason="real 10kGNAD sample not present")
def test_real_10kgnad_sample_as_train_and_test(tmp_path):
    folder = tmp_path / "10kGNAD"
    folder.mkdir()
    shutil.copy(REAL_CSV, folder / "test.csv")
    shutil.copy(REAL_CSV, folder / "train.csv")
    ds = datasets.build_tenkgnad_csv(str(folder), seed=42)
    assert ds.n_items == 240 and len(ds.texts) == 120  # the same articles twice: stored once


# --- custom files: sep, quoting, TSV written by pandas and SIB-200 -----------------------------------------

TRICKY = ['"Hallo", sagte sie.', "Ein Tab\tim Text", "Zwei\nZeilen", 'er sagte "ja"', "'einfach'", "plain"]


def _frame():
    rows = [
        {"index_id": i, "category": ["science", "sports", "politics"][i % 3], "text": t}
        for i, t in enumerate(TRICKY * 2)
    ]
    return pd.DataFrame(rows)


def test_pandas_written_tsv_round_trips(tmp_path):
    df = _frame()
    path = tmp_path / "data.tsv"
    df.to_csv(path, sep="\t", index=False)
    texts, labels, _ = custom.read_rows(path, "text", "category")
    assert texts == df.text.tolist() and labels == df.category.tolist()


def test_sib200_style_tsv_round_trips(tmp_path):
    """SIB-200's TSVs (index_id, category, text) quote a field when it holds a quote, as csv.writer does."""
    df = _frame()
    path = tmp_path / "train.tsv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(df.columns)
        w.writerows(df.itertuples(index=False))
    texts, labels, _ = custom.read_rows(path, "text", "category")
    assert texts == df.text.tolist() and labels == df.category.tolist()


def test_semicolon_csv_and_quoting_none(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text('text;label\n"Preis: 3,50 €; günstig";Wirtschaft\nTor!;Sport\n', encoding="utf-8")
    with pytest.raises(custom.CustomFormatError, match=r"excel.csv.*sep: \";\""):
        custom.read_rows(path, "text", "label")
    texts, labels, _ = custom.read_rows(path, "text", "label", sep=";")
    assert texts == ["Preis: 3,50 €; günstig", "Tor!"] and labels == ["Wirtschaft", "Sport"]
    raw = tmp_path / "raw.tsv"
    raw.write_text('text\tlabel\n"Zitat" und mehr\tA\nohne\tB\n', encoding="utf-8")
    with pytest.raises(custom.CustomFormatError, match=r"raw.tsv, line 2: .*quoting: none"):
        custom.read_rows(raw, "text", "label")
    texts, _, _ = custom.read_rows(raw, "text", "label", quoting="none")
    assert texts == ['"Zitat" und mehr', "ohne"]


def test_keys_that_do_not_apply_are_config_errors(tmp_path):
    with pytest.raises(ValueError, match=r"datasets\.Mine\.text does not apply to builder 'custom'"):
        datasets.check_entry("Mine", {"source": "mine", "text": "s2s"}, "custom")
    with pytest.raises(ValueError, match=r"datasets\.Mine\.n_splits does not apply .*split_column"):
        datasets.check_entry("Mine", {"source": "mine", "split_column": "fold", "n_splits": 3}, "custom")
    with pytest.raises(ValueError, match=r"datasets\.B\.min_fraction does not apply to builder 'published'"):
        datasets.check_entry("B", {"source": "published_blurbs_s2s", "min_fraction": 0.2}, "published")
    with pytest.raises(ValueError, match=r"datasets\.B\.sep does not apply to builder 'germeval2019'"):
        datasets.check_entry("B", {"source": "germeval2019", "text": "s2s", "sep": ";"}, "germeval2019")
    with pytest.raises(ValueError, match=r"datasets\.B \(builder 'germeval2019'\) needs `text: s2s`"):
        datasets.check_entry("B", {"source": "germeval2019"}, "germeval2019")
    datasets.check_entry("Mine", {"source": "mine", "sep": ";", "quoting": "none", "n_splits": 3}, "custom")


# --- labels are strings: one rule, or a refusal naming the records -----------------------------------------


def test_jsonl_numeric_labels_become_one_class(tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [{"text": f"t{i}", "label": v} for i, v in enumerate([1, 1.0, "1", " 1 ", 2, 2.5, "x"])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, labels, _ = custom.read_rows(path, "text", "label")
    assert labels == ["1", "1", "1", "1", "2", "2.5", "x"]
    pq_path = tmp_path / "d.parquet"
    pd.DataFrame({"text": ["a", "b"], "label": [1.0, 3.0]}).to_parquet(pq_path)
    assert custom.read_rows(pq_path, "text", "label")[1] == ["1", "3"]


def test_same_number_written_two_ways_is_refused_naming_both_records(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\na,1\nb,2\nc,1.0\n")
    with pytest.raises(
        custom.CustomFormatError,
        match=r"d.csv, record 3 \(line 4\): field 'label' is '1.0' but record 1 \(line 2\) has '1'",
    ):
        custom.read_rows(path, "text", "label")
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"text": "a", "label": true}\n')
    with pytest.raises(custom.CustomFormatError, match=r"b.jsonl, record 1 \(line 1\): field 'label' is a boolean"):
        custom.read_rows(bad, "text", "label")
    pub = tmp_path / "test.jsonl"
    pub.write_text(json.dumps({"sentences": ["a", "b", "c"], "labels": [1, "1.0", 2]}) + "\n")
    with pytest.raises(published.PublishedFormatError, match=r"test.jsonl.*'1.0'.*line 1, labels\[0\]"):
        published.read_splits(pub)


def test_conflicting_labels_are_reported_and_kept(tmp_path):
    path = tmp_path / "d.tsv"
    rows = [("Gleicher Text", "a"), ("Gleicher Text", "b"), ("anders", "a"), ("noch", "b"), ("mehr", "a")]
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in rows))
    entry = {"source": "mine", "n_splits": 1, "min_fraction": 1.0, "max_fraction": 1.0}
    ds = datasets.build_from_config("Mine", entry, {"mine": {"builder": "custom"}}, str(path), seed=42)
    assert ds.provenance["texts_with_conflicting_labels"] == 1
    log = datasets.describe(ds, "Mine")
    assert "1 texts have conflicting labels" in log and "'Gleicher Text' labels ['a', 'b']" in log
    assert len(ds.splits[0][0]) == 5  # kept: each item keeps its own label


# --- every input error names the file ----------------------------------------------------------------------


def test_non_utf8_files_name_file_and_line(tmp_path):
    latin = "Müller".encode("latin-1")
    blurbs = tmp_path / "blurbs_train.txt"
    blurbs.write_bytes(_books(0, 2).encode() + b"<book><title>" + latin + b"</title></book>\n")
    with pytest.raises(SourceFileError, match=r"blurbs_train.txt, line \d+ .*not UTF-8.*iconv"):
        germeval.read_blurbs(blurbs)
    gcsv = tmp_path / "train.csv"
    gcsv.write_bytes(b"Sport;ok\nWeb;" + latin + b"\n")
    with pytest.raises(SourceFileError, match=r"train.csv, line 2 .*not UTF-8"):
        gnad.read_10kgnad_csv(gcsv)
    tsv = tmp_path / "mine.tsv"
    tsv.write_bytes(b"text\tlabel\n" + latin + b"\tA\n")
    with pytest.raises(SourceFileError, match=r"mine.tsv, line 2 .*not UTF-8"):
        custom.read_rows(tsv, "text", "label")
    pub = tmp_path / "test.jsonl"
    pub.write_bytes(b'{"sentences": ["' + latin + b'"], "labels": ["a"]}\n')
    with pytest.raises(SourceFileError, match=r"test.jsonl, line 1 .*not UTF-8"):
        published.read_splits(pub)


def test_truncated_gzip_and_zip_name_the_file(tmp_path):
    data = gzip.compress(_books(0, 30).encode())
    gz = tmp_path / "blurbs_train.txt.gz"
    gz.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceFileError, match=r"blurbs_train.txt.gz: truncated or corrupt gzip.*download it again"):
        germeval.read_blurbs(gz)
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(gz, folder / gz.name)
    with pytest.raises(SourceFileError, match=r"folder/blurbs_train.txt.gz: truncated"):
        datasets.build_blurbs(folder, "s2s", seed=42)
    zpath = tmp_path / "germeval.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("blurbs_train.txt", _books(0, 50))
    whole = zpath.read_bytes()
    zpath.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SourceFileError, match=r"germeval.zip: truncated or corrupt zip.*download it again"):
        germeval.read_blurbs(zpath)
    csv_gz = tmp_path / "train.csv.gz"
    csv_gz.write_bytes(gzip.compress(b"Sport;a\n" * 200)[:40])
    with pytest.raises(SourceFileError, match=r"train.csv.gz: truncated"):
        gnad.read_10kgnad_csv(csv_gz)


def test_corrupt_sqlite_names_the_file_and_what_to_do(tmp_path):
    db = tmp_path / "corpus.sqlite3"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE Articles (ID_Article INTEGER, Path TEXT, publishingDate TEXT, Title TEXT, Body TEXT)")
    con.executemany(
        "INSERT INTO Articles VALUES (?, 'Newsroom/Sport/x', '', ?, ?)",
        [(i, f"T{i}", "<p>x</p>" * 200) for i in range(400)],
    )
    con.commit()
    con.close()
    whole = db.read_bytes()
    db.write_bytes(whole[: len(whole) // 3])
    with pytest.raises(gnad.GnadFormatError, match=r"corpus.sqlite3: cannot read table Articles .*download it again"):
        gnad.read_articles(db)
    db.write_bytes(b"\x00" * 4096)
    with pytest.raises(gnad.GnadFormatError, match=r"corpus.sqlite3: .*not an SQLite database"):
        gnad.read_articles(db)


# --- the README's source examples are the ones tested -------------------------------------------------------

README = ROOT / "docs" / "datasets.md"  # its "At a glance" section: the source examples the README points to


def _readme_blocks() -> list[dict]:
    import re

    import yaml

    section = README.read_text(encoding="utf-8").split("\n## At a glance", 1)[1].split("\n## ", 1)[0]
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]


def _make_source(builder: str, path, tmp_path):
    """Write a small file in the real format of ``builder`` at ``path`` (a path, list, or folder)."""
    if builder == "germeval2019":
        _germeval_folder(path)
    elif builder == "million_posts":
        path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE Articles (ID_Article INTEGER, Path TEXT, publishingDate TEXT, Title TEXT, Body TEXT)")
        body = '<div class="copytext"><p>Absatz {}</p></div>'
        con.executemany(
            "INSERT INTO Articles VALUES (?, ?, '', ?, ?)",
            [(i, f"Newsroom/{['Sport', 'Web', 'Kultur'][i % 3]}/x", f"Titel {i}", body.format(i)) for i in range(30)],
        )
        con.commit()
        con.close()
    elif builder == "10kgnad_csv":
        for i, p in enumerate(path):
            p.parent.mkdir(parents=True, exist_ok=True)
            _gnad_csv(p, [(["Sport", "Web", "Kultur"][j % 3], f"Text {i} {j}") for j in range(15)])
    elif builder == "custom":
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".tsv":
            pd.DataFrame(
                {"text": [f'"Satz" {i}' for i in range(24)], "label": list("abc") * 8, "fold": ["f1", "f2"] * 12}
            ).to_csv(path, sep="\t", index=False)
        else:
            path.write_text(
                "Antwort;Thema\n" + "".join(f'"Gut; sehr {i}";{"xy"[i % 2]}\n' for i in range(12)), encoding="utf-8"
            )


def test_readme_source_examples_build_as_written(tmp_path):
    import jsonschema
    import yaml

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    paper = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    blocks = _readme_blocks()
    assert len(blocks) >= 4
    built = []
    for block in blocks:
        sources = {**paper["sources"], **(block.get("sources") or {})}
        jsonschema.validate(
            {"sources": sources, "datasets": block["datasets"]},
            {**schema, "required": [], "properties": {k: schema["properties"][k] for k in ("sources", "datasets")}},
        )
        for name, entry in block["datasets"].items():
            source = sources[entry["source"]]
            builder = datasets.builder_of(entry["source"], source, entry)
            datasets.check_entry(name, entry, builder)
            if builder == "published":
                continue  # a hub download; the local test.jsonl path is tested in test_published.py
            raw = source["path"]
            local = [tmp_path / p.lstrip("/") for p in raw] if isinstance(raw, list) else tmp_path / raw.lstrip("/")
            if not (local[0] if isinstance(local, list) else local).exists():
                _make_source(builder, local, tmp_path)
            path = [str(p) for p in local] if isinstance(local, list) else str(local)
            ds = datasets.build_from_config(name, entry, sources, path, seed=42)
            assert ds.splits and ds.provenance["source_files"]
            built.append(name)
    assert {"BlurbsClusteringS2S", "TenKGnadClusteringS2S", "TenKGnadClusteringP2P", "MyNewsByFold", "Umfrage"} <= set(
        built
    )


def test_truncated_download_archive_and_bad_reddit_files_name_the_file(tmp_path):
    import io as _io
    import tarfile

    from tecb.data import download, rehydrate
    from tecb.data.sources import reddit

    buf = _io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tf:
        data = ("x" * 200_000).encode()
        info = tarfile.TarInfo("million_post_corpus/corpus.sqlite3")
        info.size = len(data)
        tf.addfile(info, _io.BytesIO(data))
    archive = tmp_path / "million_post_corpus.tar.bz2"
    archive.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(ValueError, match=r"(?s)million_post_corpus.tar.bz2: truncated or corrupt archive.*download it"):
        download.extract_member(archive, "corpus.sqlite3", tmp_path / "corpus.sqlite3")
    assert not (tmp_path / "corpus.sqlite3").exists()
    ids = tmp_path / "submission_ids.txt"
    ids.write_bytes(b"id\nabc\n\xe9\n")
    with pytest.raises(SourceFileError, match=r"submission_ids.txt, line 3 .*not UTF-8"):
        rehydrate.read_ids(ids)
    sub = tmp_path / "submissions.parquet"
    sub.write_bytes(b"PAR1" + b"\0" * 20)
    with pytest.raises(reddit.RedditFormatError, match=r"submissions.parquet: cannot read as Parquet.*rehydrate"):
        reddit.read_submissions(sub)


@pytest.mark.workflow
def test_inapplicable_key_fails_config_validation(tmp_path):
    """`text:` on a custom dataset stops the workflow before any job, naming the key."""
    import yaml
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    (work / "mine.tsv").write_text("text\tlabel\na\tx\nb\ty\n")
    cfg = {
        "sources": {"mine": {"builder": "custom", "path": "mine.tsv"}},
        "datasets": {"Mine": {"source": "mine", "text": "s2s"}},
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 8}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "pretrain": {"enabled": False},
    }
    (work / "config" / "bad.yaml").write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(work, "--configfile", "config/bad.yaml", "-n", check=False)
    assert proc.returncode != 0
    assert "datasets.Mine.text does not apply to builder 'custom'" in proc.stdout, proc.stdout[-2000:]


def test_jsonl_with_line_separator_characters_inside_strings_and_crlf(tmp_path):
    texts = ["eins\u2028zwei", "drei\x85vier", "fünf\rsechs", "plain"]
    path = tmp_path / "d.jsonl"
    path.write_bytes(
        "".join(
            json.dumps({"text": t, "label": "ab"[i % 2]}, ensure_ascii=False) + "\r\n" for i, t in enumerate(texts)
        ).encode()
    )
    assert custom.read_rows(path, "text", "label")[0] == texts
    pub = tmp_path / "test.jsonl"
    pub.write_text(
        json.dumps({"sentences": texts, "labels": list("abab")}, ensure_ascii=False) + "\n",
        encoding="utf-8",
        newline="",
    )
    assert published.read_splits(pub)[0][0] == texts


def test_parquet_missing_label_and_non_string_values_name_the_record(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"text": ["a", "b", "c"], "label": pd.array([1, None, 2], dtype="Int64")}).to_parquet(path)
    with pytest.raises(custom.CustomFormatError, match=r"d.parquet, record 2: field 'label' is empty"):
        custom.read_rows(path, "text", "label")
    bad = tmp_path / "e.jsonl"
    bad.write_text('{"text": "a", "label": "x"}\n{"text": ["a", "b"], "label": "y"}\n')
    with pytest.raises(custom.CustomFormatError, match=r"e.jsonl, record 2 \(line 2\): field 'text' is a list"):
        custom.read_rows(bad, "text", "label")


def test_source_keys_that_do_not_apply_are_config_errors():
    with pytest.raises(ValueError, match=r"sources\.mine\.url does not apply to builder 'custom'"):
        datasets.check_source("mine", {"builder": "custom", "path": "a.tsv", "url": "https://x"}, "custom")
    with pytest.raises(ValueError, match=r"sources\.g\.path is a list; only a 10kgnad_csv"):
        datasets.check_source("g", {"path": ["a", "b"]}, "germeval2019")
    datasets.check_source("reddit", {"ids_url": "https://x", "praw_site": None, "path": None}, "reddit")
    datasets.check_source("gnad", {"builder": "10kgnad_csv", "path": ["train.csv", "test.csv"]}, "10kgnad_csv")


def test_the_preflight_reads_a_custom_file_with_the_builds_layout_keys():
    """The preflight's cache key and reader take exactly the keys of custom.Layout (one list of a file's settings)."""
    import dataclasses

    from tecb import preflight

    assert preflight.CUSTOM_SETTINGS == tuple(f.name for f in dataclasses.fields(custom.Layout))


def test_unlabelled_blurb_texts_are_the_unlabelled_books_never_the_evaluated(tmp_path):
    """pretrain.unlabelled: the unlabelled file's titles (s2s) or title + blurb (p2p), duplicates and texts equal to
    an evaluated text left out, a seeded sample kept in file order, the file named by its name and sha256."""
    folder = _germeval_folder(tmp_path / "g")
    extra = _book(400, "Sachbuch", "Natur", title="Titel 100", labelled=False)  # a dev book's title
    extra += _book(401, "Sachbuch", "Natur", title="Titel 300", labelled=False)  # a repeated unlabelled title
    with open(folder / "blurbs_test_nolabel.txt", "a", encoding="utf-8") as f:
        f.write(extra)
    evaluated = datasets.build_blurbs(folder, "s2s", seed=1).texts
    assert "Titel 100" in evaluated
    texts, prov = datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=None, seed=1)
    assert texts == [f"Titel {i}" for i in range(300, 312)]
    assert prov["books"] == 14 and prov["equal_to_an_evaluated_text"] == 1 and prov["distinct_texts"] == 12
    assert [f["file"] for f in prov["files"]] == ["blurbs_test_nolabel.txt"]
    p2p, _ = datasets.unlabelled_blurb_texts(folder, "p2p", evaluated=[], n_texts=None, seed=1)
    assert p2p[0] == "Titel 300\nKlappentext Nummer 300 & mehr."
    sample, prov = datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=5, seed=3)
    again, _ = datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=5, seed=3)
    assert sample == again and len(set(sample)) == 5 and prov["kept"] == 5
    assert sample == [t for t in texts if t in sample]  # file order
    assert sample != datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=5, seed=4)[0]
    with pytest.raises(ValueError, match="n_texts 13 asked, 12 unlabelled texts available"):
        datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=13, seed=1)
    (folder / "blurbs_test_nolabel.txt").unlink()
    with pytest.raises(ValueError, match="no unlabelled blurbs file"):
        datasets.unlabelled_blurb_texts(folder, "s2s", evaluated=evaluated, n_texts=None, seed=1)


def test_pretrain_unlabelled_names_a_dataset_without_unlabelled_books():
    from tecb.configcheck import unlabelled_errors

    config = {
        "sources": {"germeval2019": {"path": "x"}, "tenkgnad": {"path": "y", "builder": "10kgnad_csv"}},
        "datasets": {
            "BlurbsClusteringS2S": {"source": "germeval2019", "text": "s2s"},
            "TenKGnadClusteringP2P": {"source": "tenkgnad", "text": "p2p"},
        },
        "pretrain": {"datasets": None, "unlabelled": {"BlurbsClusteringS2S": {"n_texts": 3}}},
    }
    assert unlabelled_errors(config) == []
    config["pretrain"]["unlabelled"] = {"TenKGnadClusteringP2P": {}, "Nope": {}}
    assert unlabelled_errors(config) == [
        "pretrain.unlabelled.TenKGnadClusteringP2P: only datasets built from GermEval 2019 blurbs have unlabelled books",
        "pretrain.unlabelled.Nope: not a key of `datasets`",
    ]
    config["pretrain"] = {"datasets": ["TenKGnadClusteringP2P"], "unlabelled": {"BlurbsClusteringS2S": {}}}
    assert unlabelled_errors(config) == [
        "pretrain.unlabelled.BlurbsClusteringS2S: not in pretrain.datasets (TenKGnadClusteringP2P)"
    ]
