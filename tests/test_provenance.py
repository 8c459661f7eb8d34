"""Honest provenance (issue 13.2): every dataset records its origin in its files, and the tables set it beside
the paper's numbers only when it is comparable (full raw source with the paper's rules, or the published splits)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from render_helpers import render_vs_paper

from tecb import io
from tecb.data import datasets
from tecb.data import demo as demo_data
from tecb.io import file_sha256
from tecb.report import paper as P
from tecb.report import render as R
from tecb.report import tables as T

REF = Path(__file__).resolve().parents[1] / "reference" / "paper_results.csv"


def _write(ds, folder, name):
    io.write_dataset(
        ds.texts, ds.splits, folder / "texts.parquet", folder / "splits.parquet", name, provenance=ds.provenance
    )
    return folder / "texts.parquet", folder / "splits.parquet"


@pytest.fixture(scope="module")
def blurbs_zip(tmp_path_factory):
    return demo_data.write_germeval_zip(tmp_path_factory.mktemp("g") / "germeval2019.zip", books_per_genre=6, seed=42)


def test_raw_build_records_source_hashes_rules_and_partial_source(blurbs_zip, tmp_path):
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "germeval2019", "text": "s2s"}, {}, str(blurbs_zip), seed=42
    )
    texts_path, splits_path = _write(ds, tmp_path, "BlurbsClusteringS2S")
    prov = io.dataset_provenance(texts_path)
    assert prov == io.dataset_provenance(splits_path) == json.loads(json.dumps(ds.provenance))
    assert prov["origin"] == "raw" and prov["builder"] == "germeval2019" and prov["rules"] == "paper"
    assert prov["source_files"][0] == {"file": "germeval2019.zip", "sha256": file_sha256(blurbs_zip)}
    assert [f["file"].rsplit("/", 1)[-1] for f in prov["source_files"][1:]] == [
        "blurbs_train.txt",
        "blurbs_dev.txt",
        "blurbs_test.txt",
    ]
    assert prov["full_source"] is False and prov["comparable_to_paper"] is False
    assert prov["not_comparable_because"].startswith("built from part of the source")
    assert str(tmp_path) not in json.dumps(prov) and str(blurbs_zip.parent) not in json.dumps(prov)  # no paths


def test_same_build_elsewhere_gives_byte_identical_files(blurbs_zip, tmp_path):
    entry = {"source": "germeval2019", "text": "p2p"}
    a = _write(
        datasets.build_from_config("BlurbsClusteringP2P", entry, {}, str(blurbs_zip), seed=42),
        tmp_path / "a",
        "BlurbsClusteringP2P",
    )
    copy = tmp_path / "elsewhere" / "germeval2019.zip"
    copy.parent.mkdir()
    copy.write_bytes(blurbs_zip.read_bytes())
    b = _write(
        datasets.build_from_config("BlurbsClusteringP2P", entry, {}, str(copy), seed=42),
        tmp_path / "b",
        "BlurbsClusteringP2P",
    )
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_full_source_with_the_papers_recipe_is_comparable(blurbs_zip, monkeypatch):
    monkeypatch.setitem(datasets.FULL_SOURCE, "germeval2019", (10, "test threshold"))
    entry = {"source": "germeval2019", "text": "s2s"}
    ds = datasets.build_from_config("BlurbsClusteringS2S", entry, {}, str(blurbs_zip), seed=42)
    assert ds.provenance["full_source"] and ds.provenance["comparable_to_paper"]
    other = datasets.build_from_config("BlurbsClusteringS2S", {**entry, "n_splits": 5}, {}, str(blurbs_zip), seed=42)
    assert other.provenance["not_comparable_because"].startswith("split recipe")
    wrong_name = datasets.build_from_config("BlurbsClusteringP2P", entry, {}, str(blurbs_zip), seed=42)
    assert wrong_name.provenance["not_comparable_because"].startswith("text variant s2s")
    mine = datasets.build_from_config("MyBlurbs", entry, {}, str(blurbs_zip), seed=42)
    assert mine.provenance["not_comparable_because"] == "not one of the paper's datasets"


def _published_file(path):
    rows = [{"sentences": [f"Satz {i}" for i in range(6)], "labels": ["a", "b", "c"] * 2}] * 2
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_published_splits_record_repo_and_revision(tmp_path):
    """Downloaded from the hub at the pinned revision (no local `path`): the paper's splits."""
    path = _published_file(tmp_path / "test.jsonl")
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "published_blurbs_s2s"}, {"published_blurbs_s2s": {}}, str(path), seed=42
    )
    prov = ds.provenance
    assert prov["origin"] == "published" and prov["repo_id"] == "slvnwhrl/blurbs-clustering-s2s"
    assert prov["revision"] == "22793b6a6465bf00120ad525e38c51210858132c" and prov["comparable_to_paper"]
    assert prov["revision_check"] == "downloaded from the hub at this revision"
    assert prov["source_files"] == [{"file": "test.jsonl", "sha256": file_sha256(path), "records": 2}]
    other = datasets.build_from_config(
        "BlurbsClusteringS2S",
        {"source": "mine"},
        {"mine": {"builder": "published", "repo_id": "me/x", "revision": "abc"}},
        str(path),
        seed=42,
    )
    assert other.provenance["not_comparable_because"] == "published splits other than the paper's (me/x@abc)"


def _blurbs_published(path, source=None):
    """BlurbsClusteringS2S from the published file at ``path`` (source ``published_blurbs_s2s``, its settings
    ``source``: by default the path), seed 42."""
    sources = {"published_blurbs_s2s": source or {"path": str(path)}}
    return datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "published_blurbs_s2s"}, sources, str(path), seed=42
    )


def test_local_published_file_unlike_the_papers_table1_is_not_comparable(tmp_path):
    """A local test.jsonl cannot be checked against the hub offline: its statistics must equal the paper's Table 1."""
    from tecb.report import mteb_results

    path = _published_file(tmp_path / "test.jsonl")  # 2 splits of 6 texts: not the paper's 28 splits
    ds = _blurbs_published(path)
    prov = ds.provenance
    assert prov["origin"] == "published" and prov["revision"] is None and not prov["comparable_to_paper"]
    assert prov["revision_unverified_because"].startswith(
        "the local test.jsonl does not match the paper's Table 1 statistics: unique_samples 6 (paper 17726), "
        "splits 2 (paper 28)"
    )
    assert prov["not_comparable_because"].startswith("published splits other than the paper's: the local test.jsonl")
    assert P.short_reason(prov["not_comparable_because"]) == "other published splits"
    assert mteb_results.dataset_revision("BlurbsClusteringS2S", prov) == f"tecb-sha256:{prov['content_sha256']}"
    assert "revision: unverified (the local test.jsonl does not match" in datasets.describe(ds, "BlurbsClusteringS2S")
    # the workflow passes `local: True` (its params leave paths out) instead of the path
    same = _blurbs_published(path, {"local": True})
    assert same.provenance == prov
    mine = datasets.build_from_config(
        "Mine",
        {"source": "p"},
        {"p": {"builder": "published", "path": str(path), "repo_id": "me/x", "revision": "abc"}},
        str(path),
        seed=42,
    )
    assert (
        mine.provenance["revision"] is None
        and "none of the paper's published datasets" in mine.provenance["revision_unverified_because"]
    )


def test_local_published_file_matching_the_papers_table1_is_comparable(tmp_path, monkeypatch):
    from tecb.data.sources import published
    from tecb.report import mteb_results

    path = _published_file(tmp_path / "test.jsonl")
    stats = {
        "unique_samples": 6,
        "splits": 2,
        "split_size_min": 6,
        "split_size_max": 6,
        "classes_min": 3,
        "classes_max": 3,
    }
    monkeypatch.setitem(published.PAPER_TABLE1, "published_blurbs_s2s", stats)
    ds = _blurbs_published(path)
    prov = ds.provenance
    assert prov["comparable_to_paper"] and prov["revision"] == "22793b6a6465bf00120ad525e38c51210858132c"
    assert prov["revision_check"].startswith("local test.jsonl whose statistics equal the paper's Table 1")
    assert mteb_results.dataset_revision("BlurbsClusteringS2S", prov) == prov["revision"]
    monkeypatch.setitem(published.PAPER_TABLE1, "published_blurbs_s2s", {**stats, "classes_max": 4})
    off_by_one = _blurbs_published(path)
    assert off_by_one.provenance["revision_unverified_because"].endswith(": classes_max 3 (paper 4)")


def test_paper_table1_counts_in_the_library_equal_the_reference_file():
    from tecb.data.sources import published

    ref = pd.read_csv(REF.with_name("paper_table1.csv")).set_index("dataset")
    for name, (_, _, source) in datasets.PAPER_SOURCES.items():
        if source is None:
            continue
        assert published.PAPER_TABLE1[source] == {k: int(ref.at[name, k]) for k in published.PAPER_TABLE1[source]}
    assert set(published.PAPER_TABLE1) == set(published.PUBLISHED)


def test_workflow_marks_only_local_published_sources():
    sources = {
        "published_blurbs_s2s": {"path": "x/test.jsonl"},
        "published_tenkgnad_s2s": {},
        "germeval2019": {"path": "g.zip"},
    }
    spec = {"published_blurbs_s2s": {}}
    assert datasets.mark_local_published(spec, {"source": "published_blurbs_s2s"}, sources) == {
        "published_blurbs_s2s": {"local": True}
    }
    assert datasets.mark_local_published(
        {"published_tenkgnad_s2s": {}}, {"source": "published_tenkgnad_s2s"}, sources
    ) == {"published_tenkgnad_s2s": {}}
    assert datasets.mark_local_published({"germeval2019": {}}, {"source": "germeval2019", "text": "s2s"}, sources) == {
        "germeval2019": {}
    }


def test_custom_and_csv_fallback_are_not_comparable(tmp_path):
    tsv = tmp_path / "mine.tsv"
    tsv.write_text("text\tlabel\n" + "".join(f"t{i}\t{'ab'[i % 2]}\n" for i in range(20)))
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "mine"}, {"mine": {"builder": "custom"}}, str(tsv), seed=42
    )
    assert ds.provenance["origin"] == "custom" and ds.provenance["source_files"][0]["sha256"] == file_sha256(tsv)
    assert not ds.provenance["comparable_to_paper"]
    csv = tmp_path / "train.csv"
    csv.write_text("".join(f"{'AB'[i % 2]};Text {i}\n" for i in range(20)))
    ds = datasets.build_from_config(
        "TenKGnadClusteringP2P",
        {"source": "gnad", "text": "p2p"},
        {"gnad": {"builder": "10kgnad_csv"}},
        str(csv),
        seed=42,
    )
    assert "10kGNAD csv files: no titles" in ds.provenance["not_comparable_because"]


# --- tables ----------------------------------------------------------------------------------------------


def _summary(datasets_, models=("GBERT-base", "GBERT-large")):
    rows = [
        {
            "model": m,
            "dataset": d,
            "algorithm": "kmeans",
            "reduction": "none",
            "v_measure": 0.1 * (i + 1),
            "v_measure_std": 0.0,
            "n_splits": 1,
        }
        for m in models
        for i, d in enumerate(datasets_)
    ]
    return pd.DataFrame(rows)


def test_table2_average_is_over_the_papers_datasets_others_apart():
    t2 = T.table2(_summary(T.PAPER_DATASETS + ["MyData", "ZData"]))
    assert list(t2.columns) == T.PAPER_DATASETS + ["Average", "MyData", "ZData", T.OTHER_AVERAGE]
    row = t2.iloc[0]
    assert row["Average"] == pytest.approx(np.mean([10, 20, 30, 40, 50, 60]))
    assert row[T.OTHER_AVERAGE] == pytest.approx(75.0)
    only_mine = T.table2(_summary(["MyData"]))
    assert list(only_mine.columns) == ["MyData", "Average"]


def test_vs_paper_cells_say_why_not_comparable():
    ours = T.table2(_summary(T.PAPER_DATASETS))
    paper = P.paper_table2(REF)
    nc = {d: "" for d in T.PAPER_DATASETS}
    nc["RedditClusteringS2S"] = "built from part of the source (12 submissions; ...)"
    out = P.compare(ours, paper, not_comparable=nc)
    cell = out[(out.index == "GBERT-base") & (out.Dataset == "RedditClusteringS2S")].iloc[0]
    assert cell["Δ"] == "not comparable (partial source)" and not np.isnan(cell["Paper"])
    avg = out[(out.index == "GBERT-base") & (out.Dataset == "Average")].iloc[0]
    assert avg["Δ"] == "not comparable (partial source)"
    fine = out[(out.index == "GBERT-base") & (out.Dataset == "BlurbsClusteringS2S")].iloc[0]
    assert fine["Δ"] == pytest.approx(fine["This run"] - fine["Paper"])
    md = R.to_markdown(out, footnotes=P.comparability_notes(nc, T.PAPER_DATASETS))
    assert "not comparable (partial source)" in md and "RedditClusteringS2S: built from part of the source" in md


def test_render_tables_says_the_demo_build_is_not_comparable(blurbs_zip, tmp_path):
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "germeval2019", "text": "s2s"}, {}, str(blurbs_zip), seed=42
    )
    texts, splits = _write(ds, tmp_path / "d", "BlurbsClusteringS2S")
    rows = [
        {
            "model": "m",
            "dataset": "BlurbsClusteringS2S",
            "reduction": "none",
            "algorithm": "kmeans",
            "split": s,
            "v_measure": 0.3,
        }
        for s in range(len(ds.splits))
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "scores.parquet")
    render_vs_paper(
        tmp_path / "scores.parquet",
        ["BlurbsClusteringS2S"],
        [texts],
        [splits],
        {"m": "GBERT-base"},
        tmp_path / "out",
    )
    vs = (tmp_path / "out" / "table2_vs_paper.md").read_text()
    assert "not comparable (partial source)" in vs and "BlurbsClusteringS2S: built from part of the source" in vs
    assert (
        "Not comparable with the paper's dataset: BlurbsClusteringS2S" in (tmp_path / "out" / "table2.md").read_text()
    )
    t1 = (tmp_path / "out" / "table1_vs_paper.md").read_text()
    assert "not comparable (partial source)" in t1


def test_table5_vs_paper_gives_no_difference_for_a_non_comparable_dataset():
    from tecb.report import pretrain_tables as PT

    summ = pd.DataFrame(
        [
            {"model": "gbert-base", "method": "tsdae", "epoch": 1, "dataset": d, "avg": 20.0}
            for d in ("BlurbsClusteringS2S", "TenKGnadClusteringS2S")
        ]
    )
    ref = REF.with_name("paper_table5.csv")
    vs = PT.versus_paper(
        summ,
        ref,
        {"tsdae": [1]},
        {"gbert-base": "GBERT-base"},
        not_comparable={
            "BlurbsClusteringS2S": "",
            "TenKGnadClusteringS2S": "built from part of the source (270 newsroom articles; ...)",
        },
    )
    assert vs.loc["GBERT-base TSDAE 1 BlurbsClusteringS2S", "ours_minus_paper"] == pytest.approx(20.0 - 14.37)
    row = vs.loc["GBERT-base TSDAE 1 TenKGnadClusteringS2S"]
    assert row["ours_minus_paper"] == "not comparable (partial source)" and row["paper"] == 32.87


@pytest.mark.workflow
def test_demo_datasets_record_provenance_and_tables_say_not_comparable(demo_run):
    res = demo_run / "results" / "demo"
    prov = io.dataset_provenance(res / "datasets" / "BlurbsClusteringS2S" / "splits.parquet")
    zip_path = demo_run / "resources" / "demo" / "germeval2019.zip"
    assert prov["source_files"][0] == {"file": "germeval2019.zip", "sha256": file_sha256(zip_path)}
    assert prov["comparable_to_paper"] is False and prov["rules"] == "paper"
    for stem in ("table1_vs_paper", "table2_vs_paper", "table3_vs_paper"):
        text = (res / "tables" / f"{stem}.md").read_text()
        assert "not comparable (partial source)" in text or "n/a" in text
        assert "built from part of the source" in text
    t3 = pd.read_csv(res / "tables" / "table3_vs_paper.csv", index_col=0)
    assert not pd.to_numeric(t3["Δ"], errors="coerce").notna().any()  # no delta against the paper anywhere
    assert "Not comparable with the paper's dataset" in (res / "tables" / "table2.md").read_text()
