"""Published splits (test.jsonl, one split per line) -> the two contract files."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tecb import io
from tecb.data import datasets
from tecb.data.sources import published


def _write(path, splits):
    path.write_text(
        "".join(json.dumps({"sentences": s, "labels": y}, ensure_ascii=False) + "\n" for s, y in splits),
        encoding="utf-8",
    )
    return path


SPLITS = [
    (["Die Tür", "Das Haus", "Der Baum", "Ein Ball"], ["a", "a", "b", "b"]),
    (["Das Haus", "Ein Ball", "Süße Äpfel"], ["a", "b", "c"]),
]


def test_published_dedups_texts_across_splits(tmp_path):
    ds = datasets.build_published(_write(tmp_path / "test.jsonl", SPLITS), seed=42)
    assert ds.texts == ["Die Tür", "Das Haus", "Der Baum", "Ein Ball", "Süße Äpfel"]
    assert len(ds.splits) == 2
    for (ids, labels), (sentences, want) in zip(ds.splits, SPLITS):
        assert [ds.texts[i] for i in ids] == sentences and labels == want
    io.write_dataset(ds.texts, ds.splits, tmp_path / "t.parquet", tmp_path / "s.parquet", "P")
    splits = pq.read_table(tmp_path / "s.parquet").to_pandas()
    assert splits.groupby("split").size().tolist() == [4, 3]


def test_build_from_config_selects_published_by_source_name(tmp_path):
    path = _write(tmp_path / "test.jsonl", SPLITS)
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "published_blurbs_s2s"}, {"published_blurbs_s2s": {}}, path, seed=42
    )
    assert len(ds.splits) == 2  # n_splits does not re-sample published splits


def test_pinned_revisions():
    assert published.resolve("published_tenkgnad_p2p", {}) == (
        "slvnwhrl/tenkgnad-clustering-p2p",
        "5c59e41555244b7e45c9a6be2d720ab4bafae558",
    )
    assert published.resolve("mine", {"repo_id": "me/x", "revision": "abc"}) == ("me/x", "abc")
    with pytest.raises(ValueError, match="repo_id"):
        published.resolve("mine", {})


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not valid JSON"),
        (json.dumps({"sentences": ["a"]}), "line 2: field 'labels' is missing"),
        (json.dumps({"sentences": ["a", "b"], "labels": ["x"]}), "line 2: field 'labels' has 1 entries"),
        (json.dumps({"sentences": ["a", None], "labels": ["x", "y"]}), r"line 2: field 'sentences'\[1\]"),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"sentences": ["a"], "labels": ["x"]}) + "\n" + line + "\n")
    with pytest.raises(published.PublishedFormatError, match=message) as err:
        published.read_splits(path)
    assert str(path) in str(err.value)


def test_single_class_published_split_is_an_error_naming_the_dataset(tmp_path):
    ds = datasets.build_published(_write(tmp_path / "test.jsonl", [(["a", "b"], ["x", "x"])]), seed=42)
    with pytest.raises(ValueError, match="OneClass"):
        io.write_dataset(ds.texts, ds.splits, tmp_path / "t.parquet", tmp_path / "s.parquet", "OneClass")
    assert not (tmp_path / "t.parquet").exists() and not (tmp_path / "s.parquet").exists()


def test_hub_download_uses_dataset_repo_type(tmp_path, monkeypatch):
    calls = {}
    src = _write(tmp_path / "cached.jsonl", SPLITS)

    def fake(repo_id, filename, repo_type=None, revision=None):
        calls.update(repo_id=repo_id, filename=filename, repo_type=repo_type, revision=revision)
        return str(src)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    out = published.hub_download(
        "slvnwhrl/blurbs-clustering-s2s", "22793b6a", tmp_path / "o" / "test.jsonl", log=lambda m: None
    )
    assert calls == {
        "repo_id": "slvnwhrl/blurbs-clustering-s2s",
        "filename": "test.jsonl",
        "repo_type": "dataset",
        "revision": "22793b6a",
    }
    assert out.read_text(encoding="utf-8") == src.read_text(encoding="utf-8")


def test_empty_published_split_is_an_error_naming_the_dataset(tmp_path):
    path = _write(tmp_path / "test.jsonl", [SPLITS[0], ([], [])])
    with pytest.raises(ValueError, match=r"dataset Mine: split 1 .* 0 items"):
        datasets.build_from_config("Mine", {"source": "p"}, {"p": {"builder": "published"}}, path, seed=42)


@pytest.mark.workflow
def test_workflow_builds_published_dataset_from_local_path(tmp_path):
    import yaml
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    _write(work / "test.jsonl", SPLITS)
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    cfg["sources"]["published_blurbs_s2s"]["path"] = "test.jsonl"
    cfg["datasets"] = {"BlurbsClusteringS2S": {"source": "published_blurbs_s2s"}}
    (work / "config" / "pub.yaml").write_text(yaml.safe_dump(cfg))
    target = "results/datasets/BlurbsClusteringS2S/splits.parquet"
    run_snakemake(work, "--configfile", "config/pub.yaml", "--cores", "1", target)
    splits = pq.read_table(work / target).to_pandas()
    assert splits.groupby("split").size().tolist() == [4, 3]
    prov = io.dataset_provenance(work / target)  # a local file unlike the paper's Table 1: revision unverified
    assert prov["revision"] is None and prov["comparable_to_paper"] is False
    assert "does not match the paper's Table 1" in prov["not_comparable_because"]
    assert len(pq.read_table(work / "results/datasets/BlurbsClusteringS2S/texts.parquet")) == 5
    dry = run_snakemake(work, "--configfile", "config/pub.yaml", "-n", check=False)
    assert dry.returncode == 0, dry.stdout[-3000:]
    assert "download_published" not in dry.stdout  # a local path replaces the download
