"""Per-split scores: sklearn's definitions, noise counted as one cluster."""

import numpy as np
import pytest
from sklearn import metrics

from tecb.cluster.metrics import score


def test_scores_match_sklearn_and_count_clusters():
    true = np.array(["a", "a", "a", "b", "b", "c", "c", "c"])
    pred = np.array([0, 0, 1, 1, 1, 2, 2, 0])
    s = score(true, pred)
    assert s["v_measure"] == metrics.v_measure_score(true, pred)
    assert s["homogeneity"] == metrics.homogeneity_score(true, pred)
    assert s["completeness"] == metrics.completeness_score(true, pred)
    assert s["ami"] == metrics.adjusted_mutual_info_score(true, pred)
    assert s["ari"] == metrics.adjusted_rand_score(true, pred)
    assert (s["n_texts"], s["n_labels"], s["n_clusters"], s["noise_fraction"]) == (8, 3, 3, 0.0)
    assert 0 < s["v_measure"] < 1


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
