"""Tables 5 and 6 and their contrasts on the paired text-level bootstrap (issue 53): the bootstrap where both
sides' saved predictions are there, the analytic test where they are not, the ``test`` column saying which."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import v_measure_score

from tecb.adapt.jobs import _write_scores, labels_table
from tecb.adapt.pretrain import labels_of_epoch
from tecb.cluster.algorithms import labels_table as cluster_labels
from tecb.io import write_table
from tecb.report import adapt_tables, bootstrap, pretrain_tables, stats
from tecb.report.contrasts import ANALYTIC, TEXT_BOOTSTRAP, Predictions, compare, paired_predictions

STATISTICS = stats.Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=2000, seed=7)
POOL = 150
GOLD = np.arange(POOL) % 3  # three classes, text i's label


def _splits(seed=0, n=6, size=90):
    """``n`` splits of ``size`` texts subsampled from one pool (overlapping), as (split, text ids, labels)."""
    rng = np.random.default_rng(seed)
    return [(s, np.sort(rng.choice(POOL, size, replace=False)), None) for s in range(n)]


def _predict(splits, flip: float, seed: int) -> dict:
    """Split id -> (text ids, labels, clusters: one state) of a clustering that gets each text's class right but a
    share ``flip`` of them, drawn per text (the same text gets the same cluster in every split)."""
    rng = np.random.default_rng(seed)
    per_text = np.where(rng.random(POOL) < flip, rng.integers(0, 3, POOL), GOLD)
    return {s: (ids, GOLD[ids], per_text[ids][None, :]) for s, ids, _ in splits}


def _scores(side: dict) -> np.ndarray:
    """The V-measure of each split of ``side`` (split order), as a cluster job scores it."""
    return np.array([v_measure_score(y, c[0]) for _, (_, y, c) in sorted(side.items())])


def test_a_contrast_of_seeds_against_a_base_is_the_text_bootstrap_where_both_sides_predictions_are_there():
    splits = _splits()
    ids = [s for s, _, _ in splits]
    base = _predict(splits, flip=0.5, seed=1)
    seeds = [_predict(splits, flip=0.3, seed=10 + i) for i in range(3)]
    a, b = np.array([_scores(s) for s in seeds]), _scores(base)[None, :]
    kinds = list("ccffff")
    saved = paired_predictions(seeds, [base], ids)
    found = compare(a, b, statistics=STATISTICS, design="D", strata=kinds, predictions=saved)
    assert found["test"] == TEXT_BOOTSTRAP
    assert found["delta"] == pytest.approx(100 * (a.mean(axis=0) - b[0]).mean(), abs=1e-9)
    # the bootstrap of the seeds x splits, stratified by the splits' kinds, as bootstrap.contrast_test gives it
    direct = bootstrap.contrast_test(
        saved.a, saved.b, texts=saved.texts, labels=saved.labels, strata=kinds, n_resamples=1000, seed=7
    )
    assert (found["ci_low"], found["ci_high"], found["p"]) == (direct.ci_low, direct.ci_high, direct.p_value)
    assert 0 < found["p"] and found["ci_low"] <= found["delta"] <= found["ci_high"] and found["detectable"] > 0
    assert (found["p"] < 0.05) == (found["ci_low"] > 0 or found["ci_high"] < 0)
    # without the base's predictions (or a seed's): the analytic test on the same scores, the same Δ
    for missing in (paired_predictions(seeds, None, ids), paired_predictions(seeds[:2] + [None], [base], ids)):
        assert missing is None
        analytic = compare(a, b, statistics=STATISTICS, design="D", strata=kinds, predictions=missing)
        assert analytic["test"] == ANALYTIC and analytic["delta"] == pytest.approx(found["delta"], abs=1e-9)
    # a seed that lacks a split is no bootstrap either; one design's splits are a mask
    assert paired_predictions([{**seeds[0]}, {k: v for k, v in seeds[1].items() if k != 3}], [base], ids) is None
    assert saved.columns(np.array(kinds) == "c").texts[1] is saved.texts[1] and len(saved.columns([1, 0] * 3).a[2]) == 3


def test_where_the_splits_are_the_same_texts_the_analytic_test_cannot_see_their_text_variance():
    """Six splits of the same 90 texts, each side clustering them the same way in every split: the per-split
    differences do not vary, so the analytic test's interval has no width (the overlap is not declared), while the
    bootstrap over the texts still sees how much the difference depends on which texts were drawn."""
    one = _splits(n=1)[0][1]
    splits = [(s, one, None) for s in range(6)]
    ids = list(range(6))
    good, bad = _predict(splits, flip=0.2, seed=3), _predict(splits, flip=0.6, seed=4)
    a, b = _scores(good)[None, :], _scores(bad)[None, :]
    analytic = compare(a, b, statistics=STATISTICS, design="D")
    boot = compare(a, b, statistics=STATISTICS, design="D", predictions=paired_predictions([good], [bad], ids))
    assert analytic["test"] == ANALYTIC and boot["test"] == TEXT_BOOTSTRAP
    assert analytic["delta"] == pytest.approx(boot["delta"], abs=1e-9) and boot["delta"] > 10
    assert analytic["ci_high"] - analytic["ci_low"] < 1e-9 and analytic["detectable"] < 1e-9
    assert boot["ci_high"] - boot["ci_low"] > 5 and boot["detectable"] > 1 and boot["p"] > analytic["p"]


def test_predictions_that_are_not_those_of_the_scores_are_refused():
    splits = _splits()
    ids = [s for s, _, _ in splits]
    good, bad = _predict(splits, flip=0.2, seed=3), _predict(splits, flip=0.6, seed=4)
    saved = paired_predictions([good], [bad], ids)
    with pytest.raises(ValueError, match="not those of the score files"):
        compare(_scores(good)[None, :] + 0.01, _scores(bad)[None, :], statistics=STATISTICS, design="D",
                predictions=saved)  # fmt: skip
    other = {s: (t[::-1], y[::-1], c[:, ::-1]) for s, (t, y, c) in bad.items()}
    assert paired_predictions([good], [other], ids) is None  # other texts under the same split ids: no pairing
    assert isinstance(saved, Predictions)


def _adapt_job(folder, key, base: dict, final: dict, splits, steps=6):
    """A training job's scores and labels files (step 0: ``base``, step ``steps``: ``final``) as the job writes
    them (tecb.adapt.jobs)."""
    rows = []
    for step, side in ((0, base), (steps, final)):
        for split, v in zip(sorted(side), _scores(side)):
            rows.append({"step": step, "split": split, "n_texts": len(side[split][0]), "n_labels": 3, "n_clusters": 3})
            rows[-1] |= {"v_measure": v, "homogeneity": v, "completeness": v, "loss": None if step == 0 else 0.5}
    meta = {"protocol": {"variant": key[2], "labels_seen": "none"}, "training": {"steps": steps, "device": "cpu"}}
    name = "-".join(map(str, key))
    _write_scores(rows, meta, folder / f"{name}.parquet")
    predicted = [(step, [(s, side[s][2][0]) for s in sorted(side)]) for step, side in ((0, base), (steps, final))]
    eval_splits = [(s, ids, GOLD[ids]) for s, ids, _ in splits]
    write_table(labels_table(predicted, eval_splits), folder / f"{name}.labels.parquet")
    return folder / f"{name}.parquet", folder / f"{name}.labels.parquet"


def test_table6_and_its_contrasts_read_the_jobs_labels_files_and_say_which_test_each_row_used(tmp_path):
    splits = _splits()
    base = _predict(splits, flip=0.5, seed=1)
    jobs = []
    for method, flip in (("simcse", 0.45), ("clusterns", 0.3)):
        for seed in (1, 2):
            key = ("m", method, "transductive", "BlurbsClusteringS2S", seed)
            final = _predict(splits, flip=flip, seed=100 * seed + len(jobs))
            jobs.append((key, *_adapt_job(tmp_path, key, base, final, splits)))
    keys, scores, labels = [j[0] for j in jobs], [j[1] for j in jobs], [j[2] for j in jobs]
    long, meta = adapt_tables.collect(scores, keys)
    saved = adapt_tables.read_predictions(labels, keys)
    assert set(saved) == set(keys) and sorted(saved[keys[0]]["final"]) == list(range(6))
    kinds = {"BlurbsClusteringS2S": dict(enumerate("ccffff"))}
    table, _ = adapt_tables.table6(long, meta, statistics=STATISTICS, split_kinds=kinds, predictions=saved)
    plain, _ = adapt_tables.table6(long, meta, statistics=STATISTICS, split_kinds=kinds)
    assert set(table.test) == {TEXT_BOOTSTRAP} and set(plain.test) == {ANALYTIC}
    assert table["Δ"].tolist() == pytest.approx(plain["Δ"].tolist(), abs=1e-9)
    assert (table.detectable != plain.detectable).all() and (table.splits == "6").all()
    declared = [adapt_tables.Contrast(a="*", b="base"), adapt_tables.Contrast(a="clusterns", b="simcse")]
    found, _ = adapt_tables.contrasts(
        long, meta, declared=declared, statistics=STATISTICS, split_kinds=kinds, predictions=saved
    )
    assert len(found) == 3 * 3 and set(found.test) == {TEXT_BOOTSTRAP}  # all splits and each design alike
    row = found[(found.contrast == "clusterns − simcse") & (found.design == "all")].iloc[0]
    assert row["delta"] == pytest.approx(row["mean_a"] - row["mean_b"]) and row["seeds"] == "2 / 2"
    assert stats.parse_p(row["p"]) > 0
    # one job without its labels file: its rows and contrasts fall back, the others keep the bootstrap
    some = {k: v for k, v in saved.items() if k != keys[0]}
    partial, _ = adapt_tables.contrasts(
        long, meta, declared=declared, statistics=STATISTICS, split_kinds=kinds, predictions=some
    )
    assert set(partial[partial.a.str.startswith("SimCSE")].test) == {ANALYTIC}
    assert set(partial[partial.a.str.startswith("ClusterNS") & (partial.b == "base")].test) == {TEXT_BOOTSTRAP}


def test_table5_deltas_and_contrasts_read_the_pretrain_jobs_and_the_baselines_labels_files(tmp_path):
    splits = _splits()
    gold = pd.DataFrame(
        [{"split": s, "text_id": t, "label": str(GOLD[t])} for s, ids, _ in splits for t in ids.tolist()]
    )
    write_table(__import__("pyarrow").Table.from_pandas(gold, preserve_index=False), tmp_path / "splits.parquet")
    base = _predict(splits, flip=0.5, seed=1)
    pd.DataFrame({"split": sorted(base), "v_measure": _scores(base)}).to_parquet(tmp_path / "base.parquet")
    write_table(cluster_labels([(s, base[s][2][0]) for s in sorted(base)], {s: base[s][0] for s in base}),
                tmp_path / "base.labels.parquet")  # fmt: skip
    rows, labels = [], {}
    for method, flip in (("wwm", 0.4), ("tsdae", 0.45)):
        for seed in (1, 2):
            tables = []
            for epoch in (1, 2):
                side = _predict(splits, flip=flip, seed=seed * 10 + epoch + len(labels) * 100)
                rows += [
                    {"model": "m", "method": method, "dataset": "D", "seed": seed, "epoch": epoch, "split": s}
                    | {"v_measure": v, "n_texts": 90}
                    for s, v in zip(sorted(side), _scores(side))
                ]
                table = cluster_labels([(s, side[s][2][0]) for s in sorted(side)], {s: side[s][0] for s in side})
                tables.append(labels_of_epoch(epoch, table))
            labels[("m", method, "D", seed)] = tmp_path / f"{method}{seed}.labels.parquet"
            write_table(__import__("pyarrow").concat_tables(tables), labels[("m", method, "D", seed)])
    long = pd.DataFrame(rows)
    saved = pretrain_tables.read_predictions(
        labels, {("m", "D"): tmp_path / "base.labels.parquet"}, {"D": tmp_path / "splits.parquet"}
    )
    assert len(saved["jobs"]) == 8 and set(saved["base"]) == {("m", "D")}
    base_scores = pretrain_tables.baseline_splits({("m", "D"): tmp_path / "base.parquet"})
    epochs = {"wwm": [2], "tsdae": [1]}
    boot = pretrain_tables.delta_statistics(long, base_scores, epochs, STATISTICS, predictions=saved)
    plain = pretrain_tables.delta_statistics(long, base_scores, epochs, STATISTICS)
    assert set(boot.test) == {TEXT_BOOTSTRAP} and set(plain.test) == {ANALYTIC}
    assert boot.delta.tolist() == pytest.approx(plain.delta.tolist(), abs=1e-9) and (boot.p > 0).all()
    declared = [{"a": "tsdae", "b": "wwm"}, {"a": "*", "b": "base"}]
    budgets = {"wwm": 2, "tsdae": 1}
    found, _ = pretrain_tables.contrasts(
        long, base_scores, declared=declared, budgets=budgets, statistics=STATISTICS, predictions=saved
    )
    plain, _ = pretrain_tables.contrasts(long, base_scores, declared=declared, budgets=budgets, statistics=STATISTICS)
    assert len(found) == 3 and set(found.test) == {TEXT_BOOTSTRAP} and set(plain.test) == {ANALYTIC}
    assert found.delta.tolist() == pytest.approx(plain.delta.tolist(), abs=1e-9)


def test_a_training_jobs_evaluation_keeps_step_0s_and_the_last_steps_predictions(monkeypatch):
    """tecb.adapt.jobs._Evaluation (the training's evaluate callback): the labels file of step 0 and the last
    scored step gives the scores' V-measures again, survives a resume, and is empty where the predictions kept are
    not those of the last step's scores (the statistics then fall back)."""
    from types import SimpleNamespace

    from tecb.adapt import jobs
    from tecb.adapt.pretrain import Scoring
    from tecb.report.bootstrap import split_predictions

    rng = np.random.default_rng(0)
    labels = np.array([f"c{i % 3}" for i in range(60)], dtype=object)
    centres = rng.normal(size=(3, 4))
    calls = iter([centres[np.arange(60) % 3] * k + rng.normal(size=(60, 4)) for k in (0.5, 3.0, 0.3)])
    monkeypatch.setattr(jobs, "encode", lambda *a, **k: next(calls))
    plan = SimpleNamespace(eval_texts=[f"t{i}" for i in range(60)], eval_splits=[(0, tuple(range(40)), tuple(labels[:40])), (1, tuple(range(20, 60)), tuple(labels[20:]))])  # fmt: skip
    kmeans = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}
    evaluation = jobs._Evaluation(plan, Scoring(kmeans, 42, 8), {}, lambda v: {}, {"eval_max_length": 8}, print)
    model = SimpleNamespace(max_seq_length=8)
    evaluation(model)
    evaluation(model)
    rows = jobs._rows(0, evaluation.calls[0][1]) + jobs._rows(5, evaluation.calls[1][1], 0.1)
    resumed = jobs._Evaluation(plan, Scoring(kmeans, 42, 8), {}, lambda v: {}, {"eval_max_length": 8}, print)
    resumed.load_state_dict(evaluation.state_dict())
    table = resumed.labels(rows, print).to_pandas()
    assert list(table.columns) == ["step", "split", "text_id", "cluster", "label"] and set(table.step) == {0, 5}
    for step in (0, 5):
        part = table[table.step == step]
        gold = part[["split", "text_id", "label"]]
        found = split_predictions(gold, part.drop(columns=["step", "label"]), source="t")
        again = [v_measure_score(y, c[0]) for _, (_, y, c) in sorted(found.items())]
        assert again == pytest.approx([r["v_measure"] for r in rows if r["step"] == step], abs=1e-12)
    evaluation(model)  # a later call whose scores are not the rows': no labels
    assert evaluation.labels(rows, lambda m: None).num_rows == 0
