"""The training study's configs on the real files (issue 42): part 1 (Table 5 on the real Blurbs S2S) plans its
jobs, and part 2's training texts are built for real from the unlabelled GermEval 2019 test blurbs: as many as the
evaluated pool, none of them an evaluated title. The training itself is `make real-study` (hours on 2 cores)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import ROOT, real_project, run_snakemake
from helpers import job_counts

from tecb.io import dataset_provenance

pytestmark = pytest.mark.workflow

STUDY = ["config/real.yaml", "config/real-study.yaml", "config/real-study-s2s.yaml"]
UNSEEN = [*STUDY, "config/real-study-s2s-unseen.yaml"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return real_project(tmp_path_factory.mktemp("study") / "proj", "unused", {})


def test_part_one_plans_two_models_two_methods_three_seeds(work):
    out = run_snakemake(work, "pretrain_report", "--configfile", *STUDY, "-n").stdout
    counts = job_counts(out)
    assert counts["pretrain"] == 2 * 2 * 3 and counts["pretrain_report"] == 1
    assert "pretrain_unlabelled_texts" not in counts


def test_part_two_trains_on_unlabelled_books_never_evaluated(work):
    counts = job_counts(run_snakemake(work, "pretrain_report", "--configfile", *UNSEEN, "-n").stdout)
    assert counts["pretrain"] == 12 and counts["pretrain_unlabelled_texts"] == 1
    target = "results/real-study-s2s-unseen/pretrain/unlabelled/BlurbsClusteringS2S.parquet"
    run_snakemake(work, target, "--configfile", *UNSEEN, "--cores", "1")
    texts = pd.read_parquet(work / target).text.tolist()
    evaluated = pd.read_parquet(work / "results/real-study-s2s-unseen/datasets/BlurbsClusteringS2S/texts.parquet")
    asked = yaml.safe_load((ROOT / UNSEEN[-1]).read_text())["pretrain"]["unlabelled"]["BlurbsClusteringS2S"]
    assert len(texts) == asked["n_texts"] == len(evaluated) and len(set(texts)) == len(texts)
    assert not set(texts) & set(evaluated.text)
    provenance = dataset_provenance(work / target)
    assert [f["file"] for f in provenance["files"]] == ["blurbs_test_nolabel.txt"]
    assert provenance["books"] > provenance["kept"] and provenance["equal_to_an_evaluated_text"] > 0
