"""The training study's configs on the real files (issue 42): part 1 (Table 5 on the real Blurbs S2S) plans its
jobs, and part 2's training texts are built for real from the unlabelled GermEval 2019 test blurbs: as many as the
evaluated pool, none of them an evaluated title; Table 6 on the trainable e5 plans its arms and controls. The
training itself is `make real-study` (hours on 2 cores)."""

from __future__ import annotations

import json

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


def test_part_one_plans_table6_on_e5_with_its_controls(work):
    """Table 6 on the trainable e5: SimCSE's two views as two arms, COB and its untrained-head control
    label-disjoint and (the positive control) on the evaluated labels, argue's similarity objective, ClusterNS at
    SimCSE's budget; three seeds,
    one evaluated dataset, side-by-side CPU jobs."""
    out = run_snakemake(work, "adapt_report", "--configfile", *STUDY, "config/real-study-adapt.yaml", "-n").stdout
    counts = job_counts(out)
    arms = ["simcse/dropout", "simcse/cropping", "cob/disjoint", "random_head/disjoint", "cob/oracle"]
    arms += ["random_head/oracle"]
    arms += ["argue/similarity", "clusterns/transductive"]
    assert counts["adapt"] == len(arms) * 3 and counts["adapt_report"] == 1 and "pretrain" not in counts
    for arm in arms:
        for seed in (42, 1, 2):
            assert f"adapt/e5-small-trainable/{arm}/BlurbsClusteringS2S/seed{seed}.parquet" in out
    assert "gpu=0" in out  # device cpu: no GPU asked, two one-thread jobs side by side


def test_control_b_plans_the_encoder_on_the_evaluated_labels_last_epoch_with_labels(work):
    """Issue 54's positive control (b) (config/real-control-b.yaml): COB on the evaluated labels (oracle), the last
    epoch kept (no selection), its head at its own learning rate, beside the untrained head; every job keeps its
    predictions so the contrasts use the text bootstrap; the titles alone are embedded (no P2P companion)."""
    overlay = ["config/real.yaml", "config/real-study-s2s.yaml", "config/real-control-b.yaml", "config/restarts10.yaml"]
    settings = yaml.safe_load((ROOT / "config" / "real-control-b.yaml").read_text(encoding="utf-8"))["adapt"]
    assert settings["methods"]["cob"]["validation_fraction"] == 0 and settings["methods"]["cob"]["head_lr"] > 2e-5
    out = run_snakemake(work, "adapt_report", "--configfile", *overlay, "-n").stdout
    counts = job_counts(out)
    assert counts["adapt"] == 2 * 3 and counts["adapt_report"] == 1
    for arm in ("cob/oracle", "random_head/oracle"):
        for seed in (42, 1, 2):
            assert f"adapt/e5-small-trainable/{arm}/BlurbsClusteringS2S/seed{seed}.labels.parquet" in out
    assert "BlurbsClusteringP2P" not in out


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


GPU = ["config/real.yaml", "config/real-study.yaml", "config/real-study-gpu.yaml"]
#: the manifest of the cut vocabulary the GPU overlay's model is converted from (docs/pretraining.md, "On a GPU")
GPU_CUT = ROOT / "config" / "real-study-gpu.cut.json"
GPU_DATASETS = ("BlurbsClusteringS2S", "BlurbsClusteringP2P", "TenKGnadClusteringP2P")


@pytest.fixture(scope="module")
def gpu_work(work):
    """The GPU overlay's model folder where ``vocab_cut convert`` puts it there; here a link to the full model,
    which the plan does not read (the cut's tokens and vectors: tests/test_vocab_cut.py)."""
    model = yaml.safe_load((ROOT / GPU[-1]).read_text())["models"]["e5-small-trainable"]["path"]
    (work / model).parent.mkdir(parents=True, exist_ok=True)
    if not (work / model).exists():
        (work / model).symlink_to(work / "resources/real/models/multilingual-e5-small", target_is_directory=True)
    return work


def test_the_gpu_overlay_plans_the_papers_grid_on_the_cut_model(gpu_work):
    """One model x TSDAE and WWM x three datasets x three seeds, on CUDA, at 512 tokens with
    the word embeddings trained and WWM's 30 epochs."""
    out = run_snakemake(gpu_work, "pretrain_report", "--configfile", *GPU, "-n").stdout
    counts = job_counts(out)
    assert counts["pretrain"] == 2 * 3 * 3 and counts["pretrain_report"] == 1
    from tecb.config import load_yaml, overlay_config

    merged = overlay_config(load_yaml(ROOT / "config" / "config.yaml"), *(load_yaml(ROOT / f) for f in GPU))
    methods = merged["pretrain"]["methods"]
    assert merged["pretrain"]["device"] == "cuda" and merged["pretrain"]["models"] == ["e5-small-trainable"]
    assert [m["max_length"] for m in methods.values()] == [512, 512]
    assert not any(m["freeze_word_embeddings"] for m in methods.values())
    assert methods["wwm"]["epochs"][-1] == 30 and methods["tsdae"]["epochs"] == [1]


def test_the_committed_cut_was_made_for_the_overlays_texts(gpu_work):
    """config/real-study-gpu.cut.json (written by ``python -m tecb.embed.vocab_cut cut``) records the sha256 of the
    texts it was cut for: those of the three datasets the GPU run builds from the real files."""
    from tecb.embed.vocab_cut import read_texts, texts_sha256

    targets = [f"results/real-study-gpu/datasets/{name}/texts.parquet" for name in GPU_DATASETS]
    run_snakemake(gpu_work, *targets, "--configfile", *GPU, "--cores", "1")
    manifest = json.loads(GPU_CUT.read_text())
    texts = read_texts([gpu_work / t for t in targets])
    assert len(texts) == manifest["texts"] and texts_sha256(texts) == manifest["texts_sha256"]
