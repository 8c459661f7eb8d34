"""The real-data run (config/real.yaml, issue 34) as CI can afford it: the tokenlearn static model (the
transformers cost minutes per P2P dataset on 2 cores) x k-means on raw vectors x the three real datasets (the
GermEval 2019 dev blurbs, the 10kGNAD test split from ../shared/data/real, linked into resources/real/ as a user
would put the downloads there). With TECB_TEST_REAL_DISTILL=1 (`make test-real`, not CI: ~100 CPU-s more) also
all-MiniLM-L6-v2 distilled into a static model by the workflow on real text (the workflow's distillation is
asserted on the tiny model in CI: tests/test_model_kinds_workflow.py).

Asserted: the stored vectors equal each package's own encode of the same texts; each encoder is above the chance
floor's interval on TenKGnad P2P; the tables carry the comparability notes (dev-only Blurbs, csv-only TenKGnad)
and each encoder's input note. The full run (six encoders, 14 configurations) is `make real`.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT, real_project, run_snakemake

from tecb.io import read_embeddings

pytestmark = pytest.mark.workflow

#: the distilled MiniLM only with TECB_TEST_REAL_DISTILL=1 (`make test-real`)
DISTILL = os.environ.get("TECB_TEST_REAL_DISTILL") == "1"
MODELS = ("tokenlearn", "minilm-static") if DISTILL else ("tokenlearn",)
DATASETS = ("BlurbsClusteringS2S", "BlurbsClusteringP2P", "TenKGnadClusteringP2P")


def real_test_config() -> dict:
    """config/real.yaml cut to what CI affords: :data:`MODELS` on one thread, k-means on raw vectors, the paper
    protocol only, 10 chance draws per split."""
    config = yaml.safe_load((ROOT / "config" / "real.yaml").read_text())
    config["run"] = "real-ci"
    minilm_folder = config["models"]["minilm"]["path"]
    config["models"] = {key: config["models"][key] for key in MODELS}
    if DISTILL:
        config["models"]["minilm-static"]["distill_from"] = minilm_folder  # the folder, not the (unused) model key
    config["configurations"] = [{"algorithm": "kmeans", "reduction": "none"}]
    config["scoring"] = {"protocols": ["paper"]}
    config["tables"] = {"metrics": ["v_measure"], "per_kind": False, "chance": {"n_draws": 10}}
    return config


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    work = real_project(tmp_path_factory.mktemp("real") / "proj", "real-ci", real_test_config())
    run_snakemake(
        work, "--configfile", "config/real-ci.yaml", "--cores", "2", "results/real-ci/tables/table2.md", "all"
    )
    return work, work / "results" / "real-ci"


def test_the_real_config_plans_six_encoders_on_three_datasets_and_14_configurations(real_run):
    work, _ = real_run
    config = yaml.safe_load((ROOT / "config" / "real.yaml").read_text())
    assert len(config["models"]) >= 6 and tuple(config["datasets"]) == DATASETS
    assert len(config["configurations"]) == 14
    assert all(spec.get("note") for spec in config["models"].values())  # every encoder says what input it got
    result = run_snakemake(work, "--configfile", "config/real.yaml", "-n", "--quiet", "rules")
    planned = result.stdout  # stderr is merged into it
    assert "embed_batch" in planned and "cluster_batch" in planned and "distill_static" in planned


def test_stored_vectors_equal_each_packages_own_encode(real_run):
    import static_model
    from model2vec import StaticModel

    _, res = real_run
    distilled = StaticModel.from_pretrained(str(res / "models" / "minilm-static")) if DISTILL else None
    for dataset in DATASETS:
        texts = pd.read_parquet(res / "datasets" / dataset / "texts.parquet").text.tolist()
        own = {"tokenlearn": np.asarray(static_model.get_embeddings(texts), dtype=np.float32)}
        if DISTILL:
            own["minilm-static"] = distilled.encode(texts, show_progress_bar=False)
        for model in MODELS:
            vectors, meta = read_embeddings(res / "embeddings" / model / f"{dataset}.parquet")
            np.testing.assert_allclose(vectors, own[model], atol=1e-5, err_msg=f"{model} on {dataset}")
            assert len(vectors) == len(texts)
    if DISTILL:
        assert meta["backend"] == "model2vec"


def test_every_real_encoder_is_above_the_chance_interval_on_tenkgnad(real_run):
    _, res = real_run
    cells = pd.read_csv(res / "tables" / "intervals.csv")
    cells = cells[(cells.metric == "v_measure") & (cells.dataset == "TenKGnadClusteringP2P")]
    chance = pd.read_csv(res / "tables" / "chance.csv", keep_default_na=False)
    floor = chance[(chance.metric == "v_measure") & (chance.column == "TenKGnadClusteringP2P") & (chance.kind == "")]
    assert len(floor) == 1
    ceiling = float(floor.ci_high.iloc[0])
    assert 0 < ceiling < 0.2
    assert set(cells.model) == set(MODELS)
    for row in cells.itertuples():
        assert row.ci_low > ceiling, f"{row.model}: {row.ci_low:.3f} not above chance's {ceiling:.3f}"


def test_tables_say_what_the_scores_cannot_be_compared_with(real_run):
    _, res = real_run
    table2 = (res / "tables" / "table2.md").read_text()
    assert "| Random partition (chance) |" in table2
    assert "built from the 10kGNAD csv files: no titles, so not the paper's P2P text" in table2
    assert "2,079" in table2 or "2079" in table2  # the dev file's size against the full GermEval data
    assert "tokenlearn-static-model 0.1.1" in table2
    assert ("model2vec distillation of all-MiniLM-L6-v2" in table2) == DISTILL
    table1 = (res / "tables" / "table1.md").read_text()
    assert "10kGNAD csv" in table1
