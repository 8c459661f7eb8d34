"""The walking skeleton: the offline demo end to end, and the paper config's DAG."""

from __future__ import annotations

import json
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, copy_project, demo_run_config, run_snakemake
from helpers import SCORE_COLUMNS

from tecb.report.tables import PAPER_DATASETS

PAPER_MODELS = [
    "gbert-base",
    "gbert-large",
    "gelectra-base",
    "gelectra-large",
    "gottbert",
    "minilm-l12-v2",
    "mpnet-base-v2",
    "cross-en-de-roberta",
    "use-cmlm-multilingual",
    "sentence-t5-base",
    "sentence-t5-xxl",
    "xlm-roberta-large",
]


def _configurations(workdir):
    """The configurations the demo fixture ran (tests/conftest.py: every algorithm and reduction once)."""
    return demo_run_config(workdir)["configurations"]


def _models(workdir):
    """The models the demo fixture ran (tests/conftest.py: config/demo.yaml's without `tfidf-64`)."""
    return list(demo_run_config(workdir)["models"])


@pytest.mark.workflow
def test_demo_writes_all_tables(demo_run):
    for n in (1, 2, 3):
        for ext in ("md", "csv", "tex"):
            path = demo_run / "results" / "demo" / "tables" / f"table{n}.{ext}"
            assert path.exists() and path.stat().st_size > 0, path
    table2 = pd.read_csv(demo_run / "results/demo/tables/table2.csv", index_col=0)
    assert list(table2.index) == ["TF-IDF + SVD", "tiny BERT (random init)"]  # the test demo's (conftest.py)
    assert list(table2.columns) == PAPER_DATASETS + ["Average"]
    assert table2.notna().all().all()
    table1 = pd.read_csv(demo_run / "results/demo/tables/table1.csv", index_col=0)
    assert list(table1.index) == PAPER_DATASETS
    table3 = pd.read_csv(demo_run / "results/demo/tables/table3.csv", index_col=0)
    assert len(table3) == len(_configurations(demo_run)) and table3.notna().all().all()


@pytest.mark.workflow
def test_demo_tfidf_beats_chance_on_p2p(demo_run):
    scores = pd.read_parquet(demo_run / "results/demo/scores.parquet")
    raw = scores[(scores.model == "tfidf") & (scores.algorithm == "kmeans") & (scores.reduction == "none")]
    means = raw.groupby("dataset").v_measure.mean()
    for dataset in ("BlurbsClusteringP2P", "TenKGnadClusteringP2P", "RedditClusteringP2P"):
        assert means[dataset] > 0.5, (dataset, means[dataset])
    assert set(scores.model) == set(_models(demo_run)) == {"tfidf", "tiny-bert"}
    assert set(scores.dataset) == set(PAPER_DATASETS)
    assert len(scores.groupby(["algorithm", "reduction"])) == len(_configurations(demo_run))


@pytest.mark.workflow
def test_demo_files_follow_the_contracts(demo_run):
    results = demo_run / "results" / "demo"  # config/demo.yaml: run: demo
    for dataset in PAPER_DATASETS:
        texts = pq.read_table(results / "datasets" / dataset / "texts.parquet")
        splits = pq.read_table(results / "datasets" / dataset / "splits.parquet")
        assert texts.schema.field("text_id").type == pa.int32()
        assert texts.schema.field("text").type == pa.string()
        assert texts.column("text_id").to_pylist() == list(range(texts.num_rows))
        assert len(set(texts.column("text").to_pylist())) == texts.num_rows, "texts must be unique"
        assert splits.schema.field("split").type == pa.int16()
        assert splits.schema.field("text_id").type == pa.int32()
        assert splits.schema.field("label").type == pa.string()
        for model in _models(demo_run):
            emb = pq.read_table(results / "embeddings" / model / f"{dataset}.parquet")
            assert pa.types.is_fixed_size_list(emb.schema.field("embedding").type)
            assert emb.schema.field("embedding").type.value_type == pa.float32()
            assert emb.column("text_id").to_pylist() == list(range(texts.num_rows))
            meta = json.loads(emb.schema.metadata[b"tecb"])
            assert meta["n_texts_encoded"] == texts.num_rows  # each unique text encoded once
            assert meta["dim"] == emb.schema.field("embedding").type.list_size
            for reduction in ("pca", "umap", "pca_umap"):
                red = pq.read_table(results / "reduced" / model / dataset / f"{reduction}.parquet")
                assert red.num_rows == splits.num_rows
            score = pq.read_table(results / "scores" / model / dataset / "none" / "kmeans.parquet")
            assert set(SCORE_COLUMNS) <= set(score.column_names)
            assert "seconds" not in score.column_names  # durations would break byte-identical reruns
            assert score.num_rows == len(set(splits.column("split").to_pylist()))


@pytest.mark.workflow
def test_demo_rerun_has_nothing_to_do(demo_run):
    proc = run_snakemake(demo_run, "--configfile", "config/demo.yaml", "-n")
    assert "Nothing to be done" in proc.stdout


@pytest.mark.workflow
@pytest.mark.plan
@pytest.mark.smoke
def test_paper_config_dag_has_every_model_and_dataset(tmp_path):
    workdir = copy_project(tmp_path)
    proc = run_snakemake(workdir, "-n", "--cores", "4", "--resources", "gpu=1")
    for model in PAPER_MODELS:
        assert f"resources/models/{model}" in proc.stdout, model
        for dataset in PAPER_DATASETS:
            assert f"results/embeddings/{model}/{dataset}.parquet" in proc.stdout, (model, dataset)
    assert "results/tables/table2.md" in proc.stdout


@pytest.mark.workflow
@pytest.mark.plan
def test_snakemake_lint_is_clean(tmp_path):
    workdir = copy_project(tmp_path)
    proc = run_snakemake(workdir, "--lint", check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "Lints for" not in proc.stdout, proc.stdout[-4000:]


@pytest.mark.plan
def test_snakefmt_is_clean():
    import subprocess
    import sys
    from pathlib import Path

    snakefmt = Path(sys.executable).with_name("snakefmt")
    proc = subprocess.run(
        [str(snakefmt), "--check", "workflow/Snakefile", "workflow/rules"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(command):
    """The Python code (library, scripts, tests, benchmarks) passes ruff's lint and format checks (pyproject.toml)."""
    import subprocess
    import sys
    from pathlib import Path

    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(ruff), *command, "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]


@pytest.mark.workflow
@pytest.mark.plan
def test_quickstart_plans_table2_in_a_few_cpu_jobs(tmp_path):
    """`make quickstart` (README's first command): Table 2 of config/quickstart.yaml in a handful of jobs, no GPU."""
    workdir = copy_project(tmp_path)
    target = "results/quickstart/tables/table2.md"
    proc = run_snakemake(workdir, target, "--configfile", "config/quickstart.yaml", "-n", "--cores", "2")
    total = int(re.search(r"^total\s+(\d+)", proc.stdout, flags=re.M).group(1))
    assert 5 <= total <= 25, proc.stdout[-3000:]
    assert "rule tables:" in proc.stdout or "rule tables" in proc.stdout
    assert not re.search(r"\bgpu=1\b", proc.stdout), "the quickstart must not need a GPU"
    assert (ROOT / "Makefile").read_text().count("config/quickstart.yaml") >= 1
