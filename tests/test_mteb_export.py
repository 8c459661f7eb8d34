"""MTEB-format results that mteb 2.x itself loads (issue 13.3): ResultCache layout, honest dataset revisions,
task names that cannot pass for MTEB's own tasks. mteb is a test-only dependency."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tecb.report import mteb_results as M

mteb = pytest.importorskip("mteb")

MODELS = {
    "gbert": {"name": "GBERT-base", "kind": "huggingface", "id": "deepset/gbert-base", "revision": "abc123"},
    "tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 8},
}
PROVENANCE = {
    "BlurbsClusteringS2S": {
        "origin": "published",
        "repo_id": "slvnwhrl/blurbs-clustering-s2s",
        "revision": "22793b6a6465bf00120ad525e38c51210858132c",
        "comparable_to_paper": True,
        "content_sha256": "0" * 64,
    },
    "RedditClusteringP2P": {
        "origin": "raw",
        "content_sha256": "f" * 64,
        "comparable_to_paper": False,
        "not_comparable_because": "built from part of the source (...)",
    },
}


def _scores():
    rng = np.random.default_rng(0)
    rows = [
        {"model": m, "dataset": d, "algorithm": a, "reduction": r, "split": s, "v_measure": float(rng.random())}
        for m in MODELS
        for d in PROVENANCE
        for a, r in (("kmeans", "none"), ("kmeans", "umap"))
        for s in range(4)
    ]
    return pd.DataFrame(rows)


def _export(tmp_path, scores):
    scores.to_parquet(tmp_path / "scores.parquet")
    cache = tmp_path / "mteb"
    targets = [(m, d, cache / "results" / M.result_relpath(m, MODELS[m], d)) for m in MODELS for d in PROVENANCE]
    metas = [(m, cache / "results" / M.model_folder(m, MODELS[m]) / "model_meta.json") for m in MODELS]
    M.write_mteb_results(
        tmp_path / "scores.parquet",
        MODELS,
        targets,
        log=lambda m: None,
        provenance=PROVENANCE,
        meta_targets=metas,
        resolved_revisions={"gbert": "abc123def"},
    )
    return cache


def test_layout_and_fields(tmp_path):
    cache = _export(tmp_path, _scores())
    folder = cache / "results" / "deepset__gbert-base" / "abc123"
    assert sorted(p.name for p in folder.iterdir()) == [
        "model_meta.json",
        "tecb.BlurbsClusteringS2S.json",
        "tecb.RedditClusteringP2P.json",
    ]
    assert json.loads((folder / "model_meta.json").read_text())["name"] == "deepset/gbert-base"
    pub = json.loads((folder / "tecb.BlurbsClusteringS2S.json").read_text())
    raw = json.loads((folder / "tecb.RedditClusteringP2P.json").read_text())
    assert pub["dataset_revision"] == "22793b6a6465bf00120ad525e38c51210858132c"
    assert raw["dataset_revision"] == "tecb-sha256:" + "f" * 64  # never a hub revision for a rebuilt dataset
    assert raw["tecb"]["not_comparable_because"].startswith("built from part")
    assert pub["tecb"]["resolved_revision"] == "abc123def"
    assert (cache / "results" / "tecb__tfidf" / "no_revision_available" / "model_meta.json").exists()


def test_mteb_result_cache_loads_the_scores(tmp_path):
    scores = _scores()
    cache = _export(tmp_path, scores)
    loaded = mteb.ResultCache(cache_path=cache).load_results(include_remote=False)
    got = {
        (mr.model_name, mr.model_revision, tr.task_name): tr for mr in loaded.model_results for tr in mr.task_results
    }
    assert set(got) == {
        (name, rev, M.task_name(d))
        for name, rev in [("deepset/gbert-base", "abc123"), ("tecb/tfidf", "no_revision_available")]
        for d in PROVENANCE
    }
    for m in MODELS:
        name, revision = M.model_identity(m, MODELS[m])
        for d in PROVENANCE:
            tr = got[(name, revision, M.task_name(d))]
            sub = scores[(scores.model == m) & (scores.dataset == d) & (scores.reduction == "none")]
            assert tr.scores["test"][0]["main_score"] == pytest.approx(sub.v_measure.mean(), abs=1e-12)
            assert tr.scores["test"][0]["v_measures"] == pytest.approx(sub.sort_values("split").v_measure.tolist())
            assert tr.dataset_revision == M.dataset_revision(d, PROVENANCE[d])


def test_task_names_cannot_pass_for_mtebs_own():
    own = {t.metadata.name for t in mteb.get_tasks(exclude_superseded=False)}
    assert "RedditClusteringP2P" in own  # MTEB's English Reddit task: the bare name would be confused
    for d in [
        "BlurbsClusteringS2S",
        "BlurbsClusteringP2P",
        "TenKGnadClusteringS2S",
        "TenKGnadClusteringP2P",
        "RedditClusteringS2S",
        "RedditClusteringP2P",
    ]:
        assert M.task_name(d) not in own and M.task_name(d).startswith("tecb.")


def test_same_hub_id_twice_is_refused(tmp_path):
    scores = _scores()
    scores.to_parquet(tmp_path / "scores.parquet")
    models = {"a": {"kind": "huggingface", "id": "x/y"}, "b": {"kind": "huggingface", "id": "x/y"}}
    scores = scores.replace({"model": {"gbert": "a", "tfidf": "b"}})
    scores.to_parquet(tmp_path / "scores.parquet")
    with pytest.raises(ValueError, match=r"models 'a' and 'b' have the same hub id and revision"):
        M.write_mteb_results(
            tmp_path / "scores.parquet",
            models,
            [("a", "BlurbsClusteringS2S", tmp_path / "1.json"), ("b", "BlurbsClusteringS2S", tmp_path / "2.json")],
            log=lambda m: None,
        )


@pytest.mark.workflow
def test_demo_mteb_results_load_with_mteb(demo_run):
    """The demo's exported results load with mteb and equal the mean V-measure of its scores."""
    res = demo_run / "results" / "demo"
    scores = pd.read_parquet(res / "scores.parquet")
    loaded = mteb.ResultCache(cache_path=res / "mteb").load_results(include_remote=False)
    n = 0
    for mr in loaded.model_results:
        model = mr.model_name.removeprefix("tecb/")
        for tr in mr.task_results:
            dataset = tr.task_name.removeprefix(M.TASK_PREFIX)
            sub = scores[
                (scores.model == model)
                & (scores.dataset == dataset)
                & (scores.algorithm == "kmeans")
                & (scores.reduction == "none")
            ]
            assert tr.scores["test"][0]["main_score"] == pytest.approx(sub.v_measure.mean(), abs=1e-12)
            assert tr.dataset_revision.startswith("tecb-sha256:")  # the demo's datasets are built here
            n += 1
    assert n == scores[["model", "dataset"]].drop_duplicates().shape[0] > 0
