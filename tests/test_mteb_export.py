"""MTEB-format results that mteb 2.x itself loads and validates (issues 13.3, 21.5): ResultCache layout, mteb's own
task names for mteb's published pools, custom ``tecb.*`` names in a cache of their own for everything else, honest
dataset revisions, the mteb version matched, model ids that are names. mteb is a test-only dependency."""

from __future__ import annotations

import importlib.metadata
import json

import numpy as np
import pandas as pd
import pytest

from tecb.report import mteb_results as M
from tecb.report.tables import PAPER_DATASETS

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


# the config decides (tecb.report.mteb_results.mteb_task_of): published Blurbs S2S downloaded at mteb's revision
MTEB_TASKS = {"BlurbsClusteringS2S": "BlurbsClusteringS2S", "RedditClusteringP2P": None}


def _export(tmp_path, scores):
    scores.to_parquet(tmp_path / "scores.parquet")
    cache = tmp_path / "mteb"
    targets = [(m, d, cache / M.result_relpath(m, MODELS[m], d, MTEB_TASKS[d])) for m in MODELS for d in PROVENANCE]
    metas = [(m, cache / M.meta_relpath(m, MODELS[m], custom)) for m in MODELS for custom in (False, True)]
    M.write_mteb_results(
        M.ResultFiles(scores=tmp_path / "scores.parquet", results=targets, metas=metas),
        MODELS,
        mteb_tasks=MTEB_TASKS,
        log=lambda m: None,
        provenance=PROVENANCE,
        resolved_revisions={"gbert": "abc123def"},
    )
    return cache


def test_layout_and_fields(tmp_path):
    cache = _export(tmp_path, _scores())
    folder = cache / "results" / "deepset__gbert-base" / "abc123"
    assert sorted(p.name for p in folder.iterdir()) == ["BlurbsClusteringS2S.json", "model_meta.json"]
    custom = cache / "custom" / "results" / "deepset__gbert-base" / "abc123"
    assert sorted(p.name for p in custom.iterdir()) == ["model_meta.json", "tecb.RedditClusteringP2P.json"]
    assert json.loads((folder / "model_meta.json").read_text())["name"] == "deepset/gbert-base"
    pub = json.loads((folder / "BlurbsClusteringS2S.json").read_text())
    raw = json.loads((custom / "tecb.RedditClusteringP2P.json").read_text())
    assert pub["task_name"] == "BlurbsClusteringS2S" and raw["task_name"] == "tecb.RedditClusteringP2P"
    assert pub["dataset_revision"] == "22793b6a6465bf00120ad525e38c51210858132c"
    assert raw["dataset_revision"] == "tecb-sha256:" + "f" * 64  # never a hub revision for a rebuilt dataset
    assert raw["tecb"]["not_comparable_because"].startswith("built from part")
    assert raw["tecb"]["not_mteb_task_because"].startswith("a raw dataset built here")
    assert pub["tecb"]["resolved_revision"] == "abc123def"
    assert pub["tecb"]["model_id"] == "deepset/gbert-base" and pub["tecb"]["model_revision"] == "abc123"
    assert pub["mteb_version"] == raw["mteb_version"] == M.MTEB_VERSION
    assert (cache / "results" / "tecb__tfidf" / "no_revision_available" / "model_meta.json").exists()


def test_mteb_version_is_the_installed_one():
    """The version the files state is the mteb the oracle tests (test_mteb_oracle, test_mteb_v2) run against."""
    assert M.MTEB_VERSION == importlib.metadata.version("mteb") == mteb.__version__


def test_mteb_loads_and_validates_the_mteb_named_results(tmp_path):
    """ResultCache.load_results(validate_and_filter=True) loads the mteb-named cache; TaskResult.task is mteb's
    task; the scores are ours."""
    scores = _scores()
    cache = _export(tmp_path, scores)
    loaded = mteb.ResultCache(cache_path=cache).load_results(include_remote=False, validate_and_filter=True)
    got = {
        (mr.model_name, mr.model_revision, tr.task_name): tr for mr in loaded.model_results for tr in mr.task_results
    }
    assert set(got) == {
        ("deepset/gbert-base", "abc123", "BlurbsClusteringS2S"),
        ("tecb/tfidf", "no_revision_available", "BlurbsClusteringS2S"),
    }
    for m in MODELS:
        name, revision = M.model_identity(m, MODELS[m])
        tr = got[(name, revision, "BlurbsClusteringS2S")]
        assert tr.task.metadata.name == "BlurbsClusteringS2S"  # mteb's own task object
        assert (tr.task.metadata.dataset["path"], tr.task.metadata.dataset["revision"]) == (
            PROVENANCE["BlurbsClusteringS2S"]["repo_id"],
            tr.dataset_revision,
        )
        sub = scores[(scores.model == m) & (scores.dataset == "BlurbsClusteringS2S") & (scores.reduction == "none")]
        assert tr.get_score() == pytest.approx(sub.v_measure.mean(), abs=1e-12)
        assert tr.scores["test"][0]["v_measures"] == pytest.approx(sub.sort_values("split").v_measure.tolist())
        assert tr.mteb_version == M.MTEB_VERSION
    frame = loaded.to_dataframe()  # mteb's own summary view: one row per task, one column per model
    assert frame.task_name.tolist() == ["BlurbsClusteringS2S"]
    assert frame.at[0, "deepset/gbert-base"] == pytest.approx(
        got[("deepset/gbert-base", "abc123", "BlurbsClusteringS2S")].get_score()
    )


def custom_task(name):
    """An mteb task object for a custom result: mteb's legacy clustering class under the custom name (how a user
    validates the custom cache with mteb: docs/outputs.md)."""
    from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy

    meta = mteb.get_task("BlurbsClusteringS2S").metadata.model_copy(
        update={"name": name, "superseded_by": None, "dataset": {"path": "local/" + name, "revision": "tecb"}}
    )
    return type("TecbTask", (AbsTaskClusteringLegacy,), {"metadata": meta})()


def test_mteb_loads_the_custom_cache(tmp_path):
    """The custom-named results load with mteb's loader from their own cache, validate against an mteb task object
    of that name, and never reach the mteb-named cache (where validate_and_filter would reject unknown names)."""
    scores = _scores()
    cache = _export(tmp_path, scores)
    loaded = mteb.ResultCache(cache_path=cache / "custom").load_results(include_remote=False)
    names = {tr.task_name for mr in loaded.model_results for tr in mr.task_results}
    assert names == {"tecb.RedditClusteringP2P"}
    task = custom_task("tecb.RedditClusteringP2P")
    valid = mteb.ResultCache(cache_path=cache / "custom").load_results(
        tasks=[task], include_remote=False, validate_and_filter=True
    )
    for mr in valid.model_results:
        (tr,) = mr.task_results
        model = "gbert" if mr.model_name == "deepset/gbert-base" else "tfidf"
        sub = scores[(scores.model == model) & (scores.dataset == "RedditClusteringP2P") & (scores.reduction == "none")]
        assert tr.get_score() == pytest.approx(sub.v_measure.mean(), abs=1e-12)
    assert len(valid.model_results) == 2
    with pytest.raises(KeyError):  # why they have a cache of their own: mteb's registry does not know the name
        mteb.ResultCache(cache_path=cache / "custom").load_results(include_remote=False, validate_and_filter=True)


@pytest.mark.slow
def test_task_names_cannot_pass_for_mtebs_own():
    own = {t.metadata.name for t in mteb.get_tasks(exclude_superseded=False)}
    assert "RedditClusteringP2P" in own  # MTEB's English Reddit task: the bare name would be confused
    for d in PAPER_DATASETS:
        assert M.task_name(d) not in own and M.task_name(d).startswith("tecb.")


def test_same_hub_id_twice_is_refused(tmp_path):
    scores = _scores()
    scores.to_parquet(tmp_path / "scores.parquet")
    models = {"a": {"kind": "huggingface", "id": "x/y"}, "b": {"kind": "huggingface", "id": "x/y"}}
    scores = scores.replace({"model": {"gbert": "a", "tfidf": "b"}})
    scores.to_parquet(tmp_path / "scores.parquet")
    targets = [("a", "BlurbsClusteringS2S", tmp_path / "1.json"), ("b", "BlurbsClusteringS2S", tmp_path / "2.json")]
    with pytest.raises(ValueError, match=r"models 'a' and 'b' have the same hub id and revision"):
        M.write_mteb_results(
            M.ResultFiles(scores=tmp_path / "scores.parquet", results=targets),
            models,
            mteb_tasks={},
            log=lambda m: None,
        )


@pytest.mark.workflow
def test_demo_mteb_results_load_with_mteb(demo_run):
    """The demo's exported results load with mteb and equal the mean V-measure of its scores. Its datasets are
    built here, so all of them are in the custom cache and none claims an mteb task name."""
    res = demo_run / "results" / "demo"
    scores = pd.read_parquet(res / "scores.parquet")
    assert not (res / "mteb" / "results").exists()
    loaded = mteb.ResultCache(cache_path=res / "mteb" / "custom").load_results(include_remote=False)
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
            assert tr.mteb_version == M.MTEB_VERSION
            n += 1
    assert n == scores[["model", "dataset"]].drop_duplicates().shape[0] > 0


@pytest.mark.workflow
def test_workflow_names_mteb_files_from_the_config(tmp_path):
    """The workflow decides each dataset's cache before any job runs: the published Blurbs S2S splits downloaded at
    mteb's revision -> mteb's task name; the same splits from a local file, or a dataset built here -> custom."""
    import yaml
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    cfg = {
        "run": "names",
        "sources": {"local_blurbs": {"builder": "published", "path": "test.jsonl"}},
        "datasets": {
            "BlurbsClusteringS2S": {"source": "published_blurbs_s2s"},
            "LocalBlurbs": {"source": "local_blurbs"},
            "TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"},
        },
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 8}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }
    (work / "test.jsonl").write_text('{"sentences": ["a", "b"], "labels": ["x", "y"]}\n')
    (work / "config" / "names.yaml").write_text(yaml.safe_dump(cfg))
    out = run_snakemake(work, "--configfile", "config/names.yaml", "-n", "--cores", "1", "mteb_results").stdout
    base = "results/names/mteb/"
    assert f"{base}results/tecb__tfidf/no_revision_available/BlurbsClusteringS2S.json" in out
    assert f"{base}results/tecb__tfidf/no_revision_available/model_meta.json" in out
    assert f"{base}custom/results/tecb__tfidf/no_revision_available/tecb.LocalBlurbs.json" in out
    assert f"{base}custom/results/tecb__tfidf/no_revision_available/tecb.TenKGnadClusteringS2S.json" in out
    assert f"{base}custom/results/tecb__tfidf/no_revision_available/model_meta.json" in out
    assert "tecb.BlurbsClusteringS2S.json" not in out
