"""Table 5 on one lent GPU (tecb.adapt.gpu_table5): the paper's steps, and the whole command dry-run on the CPU.

The dry run packs a random packed model and a 3-topic dataset it builds into a bundle and runs the bundle's plan as
the GPU run does (preflight, the cut checked and converted, the untrained model scored, TSDAE and WWM trained to
their steps and scored), in seconds; the other tests show what stops a run before any job.
"""

from __future__ import annotations

import json
import shutil
import tarfile

import pandas as pd
import pytest
from conftest import ROOT

from tecb import io
from tecb.adapt import gpu_table5


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu_table5")
    return folder, gpu_table5.dry_run(folder, log=lambda *_: None)


def test_the_paper_steps_come_from_its_titles_and_batches():
    plan = gpu_table5.paper_plan()
    # 17,726 titles (paper Table 1): TSDAE 1 epoch at batch 8, WWM 10 and 30 epochs at 32 x 8
    assert plan["tsdae"]["steps"] == [-(-17726 // 8)] == [2216]
    assert plan["wwm"]["steps"] == [70 * 10, 70 * 30]
    assert plan["wwm"]["params"]["batch_size"] * plan["wwm"]["params"]["grad_accum"] == 256
    assert plan["tsdae"]["params"]["batch_size"] == 8 and not plan["tsdae"]["params"]["freeze_word_embeddings"]
    # on the real 1,808 titles: TSDAE's 2,216 steps end in epoch 10; WWM's 700 in epoch 88, 2,100 in epoch 263
    assert gpu_table5.epochs_for_steps([2216], n_texts=1808, batch_size=8, grad_accum=1) == [10]
    assert gpu_table5.epochs_for_steps([700, 2100], n_texts=1808, batch_size=256, grad_accum=1) == [88, 263]


def test_the_kept_plan_is_the_codes():
    """config/gpu-table5.plan.json: the plan ``pack`` wrote here for the real Blurbs S2S (the bytes the docs quote)."""
    kept = json.loads((ROOT / "config" / "gpu-table5.plan.json").read_text())
    assert kept["methods"] == gpu_table5.paper_plan()
    assert {k: kept[k] for k in ("algorithm", "eval_seed", "eval_batch_size", "seeds")} == gpu_table5._study_scoring()
    assert kept["bytes"] == sum(kept["files"].values()) < gpu_table5.MAX_BUNDLE_BYTES
    assert kept["files"]["cut/e5-small-q4-cut.bin"] == kept["cut"]["bytes"] and kept["n_texts"] == 1808


def test_the_dry_run_trains_each_method_to_its_steps_and_scores_it(dry):
    folder, report = dry
    assert [(j["method"], j["steps"]) for j in report["jobs"]] == [("tsdae", 4), ("wwm", 4)]
    assert report["skipped"] == [] and report["device"] == "cpu"
    assert report["model_bytes"] > 4 * report["plan"]["cut"]["bytes"]  # float32 weights from a 4-bit file
    out = folder / "out"
    with tarfile.open(out / "scores.tar") as tar:
        names = sorted(tar.getnames())
    assert names == [
        "base.parquet",
        "scores/tsdae-seed42.parquet",
        "scores/wwm-seed42.parquet",
        "timings/tsdae-seed42.json",
        "timings/wwm-seed42.json",
    ]
    wwm = pd.read_parquet(folder / "work" / "scores" / "wwm-seed42.parquet")
    assert sorted(set(wwm.optimizer_steps)) == [2, 4]  # scored at each planned step, 2 splits each
    assert len(wwm) == 4 and wwm.v_measure.between(0, 1).all()
    rows = gpu_table5.summary_rows(folder / "work")
    assert [(r["method"], r["steps"]) for r in rows] == [("untrained", 0), ("tsdae", 4), ("wwm", 2), ("wwm", 4)]
    assert "| tsdae | 4 | 1 |" in (out / "summary.md").read_text()
    assert json.loads((out / "jobs.json").read_text())["plan"]["bytes"] < gpu_table5.MAX_BUNDLE_BYTES


def test_a_bundle_whose_texts_are_not_the_cuts_is_refused(dry, tmp_path):
    folder, _ = dry
    bundle = shutil.copytree(folder / "bundle", tmp_path / "bundle")
    ids = [0, 1, 2, 3]
    io.write_dataset(
        ["andere Texte", "noch einer", "und mehr", "ein vierter"], [(ids, list("aabb"))],
        bundle / "data" / "texts.parquet", bundle / "data" / "splits.parquet", "Other",
    )  # fmt: skip
    with pytest.raises(ValueError, match="not the 30 the cut"):
        gpu_table5.run(bundle, tmp_path / "out", device="cpu", work=tmp_path / "work", log=lambda *_: None)
    assert not (tmp_path / "out" / "jobs.json").exists()


def test_a_missing_api_stops_the_run_before_any_job(monkeypatch):
    monkeypatch.setattr(gpu_table5, "APIS", gpu_table5.APIS + (("transformers", "NoSuchThing"),))
    with pytest.raises(RuntimeError, match=r"transformers\.NoSuchThing is missing"):
        gpu_table5.preflight(log=lambda *_: None)
    monkeypatch.setattr(gpu_table5, "LIBRARIES", {"not_a_library_tecb": ("1.0", None)})
    with pytest.raises(RuntimeError, match="not_a_library_tecb is not installed"):
        gpu_table5.preflight(log=lambda *_: None)


def test_no_job_starts_past_the_budget(dry, tmp_path):
    folder, _ = dry
    report = gpu_table5.run(
        folder / "bundle", tmp_path / "out", device="cpu", budget_minutes=0.0, work=tmp_path / "w", log=lambda *_: None
    )
    assert report["jobs"] == [] and [j["method"] for j in report["skipped"]] == ["tsdae", "wwm"]
    assert "Not started (the budget): tsdae seed 42; wwm seed 42" in (tmp_path / "out" / "summary.md").read_text()
