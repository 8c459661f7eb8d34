"""The text-level bootstrap over saved predictions (tecb.report.bootstrap, issue 53 item 2)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import v_measure_score

from tecb.report import bootstrap, stats


def _noisy(labels, keep, rng, clusters=6):
    return np.where(rng.random(labels.size) < keep, labels, rng.integers(0, clusters, labels.size))


def test_weighted_tables_give_sklearns_v_measure_of_the_resampled_texts():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 200)
    c = _noisy(y, 0.6, rng)
    w = bootstrap.resample_weights(200, n_resamples=4, seed=1)
    means, observed = bootstrap.split_scores(w, members=np.arange(200), labels=y, clusters=c)
    assert observed[0] == pytest.approx(v_measure_score(y, c))
    for row, value in zip(w, means):
        drawn = np.repeat(np.arange(200), row.astype(int))
        assert value == pytest.approx(v_measure_score(y[drawn], c[drawn]))
    assert bootstrap.v_measure_tables(np.array([[3.0, 0.0], [0.0, 0.0]])) == pytest.approx(1.0)  # one label


def _design(rng, keep_a, keep_b, states=1):
    pool = rng.integers(0, 5, 400)
    texts = [np.sort(rng.choice(400, size=300, replace=False)) for _ in range(6)]
    labels = [pool[t] for t in texts]
    a = [[np.stack([_noisy(y, keep_a, rng) for _ in range(states)]) for y in labels]]
    b = [[np.stack([_noisy(y, keep_b, rng) for _ in range(states)]) for y in labels]]
    return texts, labels, a, b


def test_the_paired_test_is_deterministic_never_p_zero_and_sees_a_difference():
    texts, labels, a, b = _design(np.random.default_rng(2), 0.7, 0.4, states=3)
    one = bootstrap.contrast_test(a, b, texts=texts, labels=labels, n_resamples=200, seed=0)
    assert one == bootstrap.contrast_test(a, b, texts=texts, labels=labels, n_resamples=200, seed=0)
    observed = np.mean(
        [v_measure_score(y, x[s]) - v_measure_score(y, z[s]) for y, x, z in zip(labels, a[0], b[0]) for s in range(3)]
    )
    assert one.mean == pytest.approx(100 * observed)
    assert 0 < one.p_value < 0.001 and one.ci_low > 0 and one.detectable < one.mean
    same = bootstrap.contrast_test(a, a, texts=texts, labels=labels, n_resamples=200, seed=0)
    assert same.mean == 0 and same.p_value == 1.0  # identical predictions: no difference, and no spread


def test_equal_models_give_a_wide_enough_interval():
    # two models that drop the label at the same rate: the interval holds 0 in most draws
    covered = 0
    for draw in range(20):
        texts, labels, a, b = _design(np.random.default_rng(100 + draw), 0.5, 0.5)
        result = bootstrap.contrast_test(a, b, texts=texts, labels=labels, n_resamples=100, seed=draw)
        covered += result.ci_low <= 0 <= result.ci_high
    assert covered >= 16


def test_seeds_and_states_and_bad_input():
    rng = np.random.default_rng(5)
    texts, labels, a, b = _design(rng, 0.6, 0.5, states=2)
    _, _, a2, _ = _design(rng, 0.6, 0.5, states=2)
    seeds = bootstrap.contrast_test(
        a + [[c[:, :] for c in a2[0]]], b, texts=texts, labels=labels, n_resamples=50, seed=0
    )
    assert np.isfinite(seeds.se) and seeds.df < 1e6
    level = bootstrap.contrast_test(a, None, texts=texts, labels=labels, n_resamples=50, seed=0)
    assert level.ci_low > 0
    with pytest.raises(ValueError, match="splits but predictions"):
        bootstrap.contrast_test([a[0][:3]], b, texts=texts, labels=labels, n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="labels and"):
        bootstrap.contrast_test(a, b, texts=texts, labels=[y[:-1] for y in labels], n_resamples=10, seed=0)


def _run_files(rng, states=1):
    """A dataset's splits file, three models' labels files (model c as good as b) and their scores."""
    pool = rng.integers(0, 4, 500)
    split_ids = [np.sort(rng.choice(500, size=350, replace=False)) for _ in range(5)]
    splits = pd.DataFrame(
        [(s, int(t), f"l{pool[t]}") for s, ids in enumerate(split_ids) for t in ids],
        columns=["split", "text_id", "label"],
    )
    labels, scores = {}, []
    for model, keep in (("a", 0.7), ("b", 0.5), ("c", 0.5)):
        rows = []
        for s, ids in enumerate(split_ids):
            values = []
            for state in range(states):
                clusters = _noisy(pool[ids], keep, rng)
                rows += [(s, int(t), int(c), state) for t, c in zip(ids, clusters)]
                values.append(v_measure_score(pool[ids], clusters))
            scores.append((model, "d", "none", "kmeans", s, float(np.mean(values)), len(ids)))
        frame = pd.DataFrame(rows, columns=["split", "text_id", "cluster", "state"])
        labels[(model, "d", "none", "kmeans")] = frame if states > 1 else frame.drop(columns="state")
    columns = ["model", "dataset", "reduction", "algorithm", "split", "v_measure", "n_texts"]
    return splits, labels, pd.DataFrame(scores, columns=columns)


@pytest.mark.parametrize("states", [1, 3])
def test_table_statistics_use_the_bootstrap_where_predictions_are_saved(states):
    splits, labels, scores = _run_files(np.random.default_rng(9), states=states)
    predictions = {k: bootstrap.split_predictions(splits, v, source=str(k)) for k, v in labels.items()}
    pairs = bootstrap.TablePairs(predictions, {"d": splits.text_id.to_numpy()}, n_resamples=200, seed=0)
    spec = stats.Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=1000, seed=0)
    call = dict(algorithm="kmeans", reduction="none", datasets=["d"], averages={})
    analytic = stats.table_statistics(scores, statistics=spec, **call).set_index("model")
    boot = stats.table_statistics(scores, statistics=replace(spec, pairs=pairs), **call).set_index("model")
    assert boot["mean"].equals(analytic["mean"]) and boot.loc["a", "best"]
    assert boot.loc["b", "diff"] == pytest.approx(analytic.loc["b", "diff"])  # the same scores, recomputed
    assert not np.isclose(boot.loc["b", "se"], analytic.loc["b", "se"])  # but another test
    # in the score files' units, as the analytic test's: the interval holds the difference, the SEs are alike
    assert boot.loc["b", "diff_low"] <= boot.loc["b", "diff"] <= boot.loc["b", "diff_high"]
    assert 0.1 < boot.loc["b", "se"] / analytic.loc["b", "se"] < 10
    assert 0 < boot.loc["b", "p_value"] < 0.05 and boot.loc["b", "diff_low"] > 0
    assert boot.loc["c", "p_mcb"] < 0.05  # c is as bad as b


def test_split_predictions_name_the_file_and_split_on_bad_input():
    splits, labels, _ = _run_files(np.random.default_rng(1))
    frame = labels[("a", "d", "none", "kmeans")]
    with pytest.raises(ValueError, match="f.parquet: split 2: its texts differ"):
        bootstrap.split_predictions(splits, frame[~((frame.split == 2) & (frame.index % 7 == 0))], source="f.parquet")
    with pytest.raises(ValueError, match="f.parquet: labels file lacks column"):
        bootstrap.split_predictions(splits, frame.drop(columns="cluster"), source="f.parquet")


def test_split_predictions_keep_a_text_that_repeats_in_a_split():
    """The demo's datasets hold duplicate rows: a text twice in one split. The labels file follows the split's row
    order (tecb.cluster.algorithms.labels_table), so predictions are aligned by position, every state alike."""
    splits = pd.DataFrame({"split": [0, 0, 0, 0], "text_id": [7, 3, 7, 5], "label": ["a", "b", "a", "b"]})
    labels = pd.DataFrame(
        {"split": [0] * 8, "text_id": [7, 3, 7, 5] * 2, "cluster": [1, 0, 2, 0, 0, 1, 0, 1], "state": [0] * 4 + [1] * 4}
    )
    ids, gold, clusters = bootstrap.split_predictions(splits, labels, source="x.parquet")[0]
    assert ids.tolist() == [7, 3, 7, 5] and gold.tolist() == ["a", "b", "a", "b"]
    assert clusters.tolist() == [[1, 0, 2, 0], [0, 1, 0, 1]]
    with pytest.raises(ValueError, match="x.parquet: split 0"):
        bootstrap.split_predictions(splits, labels.iloc[:7], source="x.parquet")


def test_blocks_of_replicates_change_no_bit(monkeypatch):
    """resample_weights and split_scores draw and tabulate BLOCK replicates at a time (issue 56: memory): the
    same bytes as all at once, with a last block of one replicate and several states."""
    rng = np.random.default_rng(4)
    members, y = rng.choice(300, 120, replace=False), rng.integers(0, 6, 120)
    clusters = rng.integers(0, 5, (3, 120))
    runs = []
    for block in (10**9, 7):
        monkeypatch.setattr(bootstrap, "BLOCK", block)
        w = bootstrap.resample_weights(300, n_resamples=50, seed=[3, 1])
        runs.append([w, *bootstrap.split_scores(w, members=members, labels=y, clusters=clusters)])
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*runs))
    once = np.random.default_rng([3, 1]).multinomial(300, np.full(300, 1 / 300), size=50)
    assert np.array_equal(runs[1][0], once)


def test_the_clustering_response_scales_the_replicates_by_the_spread_beyond_restarts_and_text():
    # one kind of 4 splits: the replicates' across-split spread (text) is known, the observed differences spread
    # more than restarts + text: the excess, as a ratio to the text part, scales the replicates' variance
    rng = np.random.default_rng(0)
    boot = rng.standard_normal((400, 1, 4))
    zero = np.zeros((400, 1, 4))
    noise = np.full((1, 4), 0.5)
    a = bootstrap.Replicates(boot=boot, observed=np.array([[0.0, 4.0, -4.0, 2.0]]), noise=noise)
    b = bootstrap.Replicates(boot=zero, observed=np.zeros((1, 4)), noise=noise)
    _, today = bootstrap.paired_parts(a, b, strata=None, response=False)
    _, parts = bootstrap.paired_parts(a, b, strata=None, response=True)
    replicates = float(boot[:, 0].mean(axis=1).var(ddof=1))
    text = float((boot[:, 0] - boot[:, 0].mean(axis=0)).var(axis=1, ddof=1).mean())
    spread = float(np.var([0.0, 4.0, -4.0, 2.0], ddof=1))
    assert parts[0] == today[0] and parts[1] == pytest.approx((1.0 / 4, 1e6))  # restarts: (0.5 + 0.5) / 4
    assert parts[2] == pytest.approx(((spread - 1.0 - text) / text * replicates, 3.0))
    calm = bootstrap.Replicates(boot=boot, observed=np.zeros((1, 4)), noise=noise)
    assert len(bootstrap.paired_parts(calm, b, strata=None, response=True)[1]) == 2  # nothing beyond restarts
    one_state = bootstrap.Replicates(boot=boot, observed=a.observed, noise=np.full((1, 4), np.nan))
    assert bootstrap.paired_parts(one_state, b, strata=None, response=True) == bootstrap.paired_parts(
        one_state, b, strata=None, response=False
    )  # R = 1: the restarts unknown, today's split level
