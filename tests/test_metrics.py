"""Per-split scores: sklearn's definitions, noise counted as one cluster."""

import math

import numpy as np
import pytest
from sklearn import metrics

from tecb.cluster.metrics import score


def _expected_mutual_information(rows, cols):
    """E[MI] of two random partitions with these cluster sizes (Vinh, Epps & Bailey 2010, eq. 24a), summed
    term by term over the hypergeometric distribution of each cell: an implementation independent of sklearn's."""
    n = sum(rows)
    total = 0.0
    for a in rows:
        for b in cols:
            for nij in range(max(1, a + b - n), min(a, b) + 1):
                p = math.comb(b, nij) * math.comb(n - b, a - nij) / math.comb(n, a)  # hypergeometric P(n_ij)
                total += nij / n * math.log(n * nij / (a * b)) * p
    return total


def test_scores_match_hand_computed_definitions_and_count_clusters():
    """Against the definitions worked by hand, not the sklearn calls the implementation makes. Gold {a, b, c},
    two texts each; cluster 0 = {a, a, b, b}, cluster 1 = {c, c}: clusters are not pure (h < 1), but no class
    is split (c = 1), so swapping homogeneity and completeness, or another V-measure beta, shows."""
    true = np.array(["a", "a", "b", "b", "c", "c"])
    pred = np.array([0, 0, 0, 0, 1, 1])
    s = score(true, pred)
    # H(C) = ln 3; H(C|K) = 4/6 * H(1/2, 1/2) = (2/3) ln 2; h = 1 - H(C|K) / H(C); H(K|C) = 0 -> c = 1
    h = 1 - (2 / 3) * math.log(2) / math.log(3)
    assert s["homogeneity"] == pytest.approx(h) and h == pytest.approx(0.57938, abs=1e-5)
    assert s["completeness"] == pytest.approx(1.0)
    assert s["v_measure"] == pytest.approx(2 * h * 1 / (h + 1))  # beta = 1: the harmonic mean
    # ARI by pair counting: 15 pairs; pairs together in both = C(2,2) x 3 = 3; same class: 3; same cluster:
    # C(4,2) + C(2,2) = 7; expected = 3 * 7 / 15 = 1.4; max = (3 + 7) / 2 = 5 -> (3 - 1.4) / (5 - 1.4) = 4/9
    assert s["ari"] == pytest.approx(4 / 9)
    # AMI (arithmetic mean of the entropies, sklearn's default): MI = H(C) - H(C|K) = ln 3 - (2/3) ln 2;
    # H(K) = H(4/6, 2/6); E[MI] summed over the hypergeometric model above
    mi = math.log(3) - (2 / 3) * math.log(2)
    h_k = -(4 / 6 * math.log(4 / 6) + 2 / 6 * math.log(2 / 6))
    emi = _expected_mutual_information([2, 2, 2], [4, 2])
    assert s["ami"] == pytest.approx((mi - emi) / ((math.log(3) + h_k) / 2 - emi))
    assert s["ami"] == pytest.approx(8 / 13)  # the same, as a fraction
    assert (s["n_texts"], s["n_labels"], s["n_clusters"], s["noise_fraction"]) == (6, 3, 2, 0.0)
    # the 8-text case of before: sklearn, the library MTEB scores with, agrees too
    true = np.array(["a", "a", "a", "b", "b", "c", "c", "c"])
    pred = np.array([0, 0, 1, 1, 1, 2, 2, 0])
    s = score(true, pred)
    assert s["v_measure"] == metrics.v_measure_score(true, pred) and 0 < s["v_measure"] < 1
    assert (s["n_texts"], s["n_labels"], s["n_clusters"], s["noise_fraction"]) == (8, 3, 3, 0.0)


def test_v_measure_is_sklearns_v_measure_score_bit_for_bit():
    """score() takes the V-measure from homogeneity_completeness_v_measure (computed once with h and c): the same
    float as sklearn's v_measure_score, MTEB's call, on random labelings with noise, one cluster, one label."""
    rng = np.random.default_rng(3)
    for n, k_true, k_pred in [(50, 5, 7), (300, 20, 20), (10, 1, 3), (40, 4, 1), (200, 12, 30)]:
        true = rng.integers(0, k_true, n)
        pred = rng.integers(-1, k_pred, n)  # -1: HDBSCAN's noise
        assert score(true, pred)["v_measure"] == metrics.v_measure_score(true, pred), (n, k_true, k_pred)


def test_perfect_clustering_scores_one_whatever_the_cluster_ids():
    s = score(["x", "x", "y", "y"], [7, 7, 3, 3])
    assert s["v_measure"] == pytest.approx(1.0) and s["ari"] == pytest.approx(1.0)


def test_noise_is_one_cluster_and_its_fraction_is_reported():
    true = ["a", "a", "b", "b"]
    s = score(true, [-1, 0, -1, 1])
    assert s["noise_fraction"] == 0.5
    assert s["n_clusters"] == 3  # -1, 0, 1
    assert s["v_measure"] == metrics.v_measure_score(true, [-1, 0, -1, 1])
    # by hand (Rosenberg & Hirschberg 2007), noise {a, b} one cluster: H(C|K) = ln2 / 2, H(C) = ln2 -> h = 1/2;
    # H(K|C) = ln2, H(K) = 1.5 ln2 -> c = 1/3; V = 2hc / (h + c) = 0.4
    assert s["homogeneity"] == pytest.approx(0.5) and s["completeness"] == pytest.approx(1 / 3)
    assert s["v_measure"] == pytest.approx(0.4)


def test_one_cluster_for_everything_has_zero_v_measure():
    s = score(["a", "b", "a", "b"], [0, 0, 0, 0])
    assert s["n_clusters"] == 1 and s["v_measure"] == 0.0
