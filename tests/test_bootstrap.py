"""The text-level bootstrap over saved predictions (tecb.report.bootstrap, issue 53 item 2)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import v_measure_score

from tecb.report import bootstrap


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
