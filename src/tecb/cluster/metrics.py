"""Scores of one clustering against the gold labels of a split."""

from __future__ import annotations

import numpy as np
from sklearn import metrics

NOISE = -1


def score(labels_true, labels_pred) -> dict[str, float]:
    """V-measure (as MTEB computes it), homogeneity, completeness, AMI, ARI, clusters and noise.

    Noise points (label -1, from HDBSCAN) are kept as one cluster of their own, as in the paper. The V-measure
    is the third value of scikit-learn's ``homogeneity_completeness_v_measure``, which is what its
    ``v_measure_score`` (MTEB's call) returns, so it is computed once with homogeneity and completeness.
    """
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    h, c, v = metrics.homogeneity_completeness_v_measure(labels_true, labels_pred)
    return {
        "n_texts": int(len(labels_true)),
        "n_labels": int(len(np.unique(labels_true))),
        "n_clusters": int(len(np.unique(labels_pred))),
        "noise_fraction": float(np.mean(labels_pred == NOISE)),
        "v_measure": float(v),
        "homogeneity": float(h),
        "completeness": float(c),
        "ami": float(metrics.adjusted_mutual_info_score(labels_true, labels_pred)),
        "ari": float(metrics.adjusted_rand_score(labels_true, labels_pred)),
    }
