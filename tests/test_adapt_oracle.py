"""The positive control of Table 6 (issue 42 item 4): a triplet job under the ``oracle`` protocol trains on the
evaluated dataset's own labels, on purpose, through the workflow's entry point (tecb.adapt.jobs.run, the tiny BERT
of tests/test_adapt_methods.py, a small labelled dataset), moves the score, and its Table 6 row is marked as a
control beside the untrained head's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

torch = pytest.importorskip("torch")

from test_adapt_methods import (  # noqa: E402
    base_model,  # noqa: F401  (the fixture: a tiny BERT saved as a sentence-transformers folder)
    settings_for,
    topic_corpus,
)
from test_adapt_tables import table6_outputs  # noqa: E402

from tecb import io  # noqa: E402
from tecb.adapt import jobs  # noqa: E402
from tecb.adapt.random_head import DEFAULTS as HEAD_DEFAULTS  # noqa: E402
from tecb.report import adapt_tables  # noqa: E402
from tecb.report.stats import Statistics  # noqa: E402

DATASET = "TenKGnadClusteringS2S"  # a name Table 6 orders and labels; the texts are the topic corpus
SCORING = jobs.Scoring({"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}, 42, 32)
SETTINGS = {
    "triplet": {**settings_for("triplet"), "epochs": 3, "max_length": 32, "instance_size": 8},
    "random_head": dict(HEAD_DEFAULTS),
}


pytestmark = pytest.mark.slow  # two jobs of the tiny BERT (one trains three epochs) and their scoring


@pytest.fixture(scope="module")
def oracle_jobs(base_model, tmp_path_factory):  # noqa: F811
    """A labelled dataset of four topics (eight splits: all its texts, and seven seeded halves) and its two
    ``oracle`` jobs: triplet and the random-head control, seed 3. Returns the folder, each job's (key, scores,
    timings) and the dataset's texts and labels."""
    root = tmp_path_factory.mktemp("oracle")
    label_of = dict(zip(*topic_corpus(16, 0)))  # unique texts, each with its topic
    texts, labels = list(label_of), list(label_of.values())
    rng = np.random.default_rng(0)
    halves = [sorted(rng.choice(len(texts), len(texts) // 2, replace=False).tolist()) for _ in range(7)]
    splits = [(ids, [labels[i] for i in ids]) for ids in [list(range(len(texts))), *halves]]
    io.write_dataset(texts, splits, root / "texts.parquet", root / "splits.parquet", DATASET)
    done = {}
    for method in ("triplet", "random_head"):
        out = root / method
        files = jobs.Files(model_dir=base_model, datasets={DATASET: ("src", root / "texts.parquet",
                           root / "splits.parquet")}, scores=out / "scores.parquet", model_out=out / "model",
                           timings=out / "timings.json")  # fmt: skip
        job = jobs.Job(method, "oracle", DATASET, 3, SETTINGS[method], {"min_categories": 4, "rounds": 2})
        jobs.run(job, scoring=SCORING, files=files, encoder=None, device="cpu", log=lambda *_: None)
        done[method] = (("tiny", method, "oracle", DATASET, 3), files.scores, files.timings)
    return root, done, (texts, labels)


def test_an_oracle_triplet_job_trains_on_the_evaluated_labels_and_moves_the_score(oracle_jobs):
    _, done, (texts, labels) = oracle_jobs
    _, scores, _ = done["triplet"]
    meta = json.loads(pq.read_schema(scores).metadata[b"tecb"])
    record = meta["protocol"]
    assert record["variant"] == "oracle" and record["leak"] == "evaluated labels (positive control)"
    assert record["train_datasets"] == [DATASET] and record["train_labels"] == sorted(set(labels))
    # 64 items of one scheme in instances of 8, two rounds: 16 instances, 20 % of them held out for the selection
    assert record["instances"] == 2 * len(texts) // 8 == 16
    assert meta["training"]["phases"]["triplet"]["validation_instances"] == 3
    rows = pd.read_parquet(scores)
    assert sorted(rows.split.unique()) == list(range(8))  # evaluated on all the splits, as lodo
    base = rows[rows.step == 0].v_measure.mean()
    adapted = rows[rows.step == rows.step.max()].v_measure.mean()
    assert rows.step.max() > 0 and adapted > base + 0.05, (base, adapted)  # the positive control moves the score
    gains = rows[rows.step == rows.step.max()].v_measure.to_numpy() - rows[rows.step == 0].v_measure.to_numpy()
    assert (gains > 0).all(), gains  # on every split
    control = pd.read_parquet(done["random_head"][1])
    assert control[control.step == 0].v_measure.tolist() == rows[rows.step == 0].v_measure.tolist()  # same splits
    assert adapted > control[control.step == 1].v_measure.mean() + 0.05  # beyond the untrained head alone
    assert json.loads((scores.parent / "model" / "protocol.json").read_text())["protocol"] == record


def test_table6_marks_the_oracle_row_as_a_positive_control(oracle_jobs, tmp_path):
    _, done, _ = oracle_jobs
    keys, scores, timings = zip(*done.values())
    outputs = table6_outputs(tmp_path)
    adapt_tables.render(
        adapt_tables.ReportInputs(keys=keys, scores=scores, timings=timings),
        outputs,
        statistics=Statistics(test="permutation", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42),
        model_names={"tiny": "Tiny"},
        log=lambda *_: None,
    )
    table = pd.read_csv(tmp_path / "table6.csv", index_col=0)
    oracle = table.loc["Tiny · Triplet · oracle · TenKGnad S2S"]
    ran = oracle["ran"]
    assert ran.startswith("POSITIVE CONTROL: trained on the evaluated labels, ") and "triplets" in ran, ran
    # the harness detects the gain: better on all 8 splits (a sign-flip p near 2/256), Holm over the 2 control rows
    assert oracle["Δ"] > 5 and float(oracle["p"]) < 0.05
    md = (tmp_path / "table6.md").read_text()
    assert "| Tiny · Triplet · oracle · TenKGnad S2S" in md
    assert "*" in next(line for line in md.splitlines() if line.startswith("| Tiny · Triplet · oracle"))
    head = table.loc["Tiny · random head · oracle · TenKGnad S2S"]
    assert head["ran"].startswith("CONTROL: no training") and "POSITIVE" not in head["ran"]
    assert "oracle = POSITIVE CONTROL, not a result" in md and "protocols: oracle" in md
