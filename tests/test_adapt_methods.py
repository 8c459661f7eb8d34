"""The embedding-training methods (tecb.adapt.simcse/clusterns/cob/triplet/argue) against their papers' equations
on hand-computed cases, and end to end on a tiny model over a corpus with separable topics."""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import sys
import textwrap
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tecb.adapt import argue, clusterns, cob, simcse, triplet  # noqa: E402
from tecb.adapt.training import METHODS, RunOptions, TrainingData, TrainingRun, method_module, train  # noqa: E402
from tecb.cluster.metrics import score  # noqa: E402

# --- numpy oracles, written from the papers' equations -------------------------------------


def np_cos(a, b):
    a = np.asarray(a, float) / np.linalg.norm(a, axis=1, keepdims=True)
    b = np.asarray(b, float) / np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def np_infonce(z1, z2, tau, hard=None, mu=1.0):
    """ClusterNS Eq. (1) / Eq. (2), averaged over the batch."""
    s = np_cos(z1, z2)
    h = np_cos(z1, hard) if hard is not None else None
    losses = []
    for i in range(len(z1)):
        denom = sum(
            math.exp(s[i, j] / tau) + (mu * math.exp(h[i, j] / tau) if h is not None else 0) for j in range(len(z1))
        )
        losses.append(-math.log(math.exp(s[i, i] / tau) / denom))
    return float(np.mean(losses))


def np_bml(z1, z2, labels, alpha, beta, reduction="false_negatives"):
    """ClusterNS Eq. (4)-(5) over every pair (i, j != i) of one cluster (``false_negatives``), or as the authors'
    code reduces it (``all_pairs``): Delta masked to 0 outside the pairs, the mean over all N x N entries."""
    s = np_cos(z1, z2)
    values, entries = [], []
    for i in range(len(z1)):
        for j in range(len(z1)):
            false_negative = i != j and labels[i] == labels[j]
            delta = s[i, j] - s[i, i] if false_negative else 0.0
            value = max(delta + alpha, 0) + max(-delta - beta, 0)
            entries.append(value)
            if false_negative:
                values.append(value)
    if reduction == "all_pairs":
        return float(np.mean(entries))
    return float(np.mean(values)) if values else 0.0


def t(x):
    return torch.tensor(np.asarray(x, float), dtype=torch.float64)


Z1 = [[1.0, 0.2], [0.1, 1.0], [-0.7, 0.4], [0.5, -0.9]]
Z2 = [[0.9, 0.3], [0.0, 1.1], [-0.6, 0.6], [0.6, -0.7]]


# --- SimCSE ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.05, 0.5])
def test_infonce_equals_eq1(tau):
    got = float(simcse.infonce_loss(t(Z1), t(Z2), tau))
    assert got == pytest.approx(np_infonce(Z1, Z2, tau), rel=1e-5)


def test_infonce_with_hard_negatives_equals_eq2():
    hard = [[0.3, 0.3], [1.0, -0.2], [0.2, 0.9], [-1.0, 0.1]]
    got = float(simcse.infonce_loss(t(Z1), t(Z2), 0.5, hard=t(hard), hard_weight=2.0))
    assert got == pytest.approx(np_infonce(Z1, Z2, 0.5, hard=hard, mu=2.0), rel=1e-5)
    assert got > float(simcse.infonce_loss(t(Z1), t(Z2), 0.5))  # hard negatives only add to the denominator


# --- ClusterNS ---------------------------------------------------------------------------------


def test_bml_equals_eq5():
    labels = [0, 1, 0, 0]
    mask = clusterns.false_negative_mask(torch.tensor(labels))
    for alpha, beta in [(0.2, 0.5), (0.0, 0.3), (0.25, 0.6)]:
        for reduction in clusterns.BML_REDUCTIONS:
            got = float(clusterns.bml_loss(t(Z1), t(Z2), mask, alpha, beta, reduction))
            assert got == pytest.approx(np_bml(Z1, Z2, labels, alpha, beta, reduction), rel=1e-5)
    empty = clusterns.false_negative_mask(torch.tensor([0, 1, 2, 3]))
    assert float(clusterns.bml_loss(t(Z1), t(Z2), empty, 0.2, 0.5, "false_negatives")) == 0.0
    assert float(clusterns.bml_loss(t(Z1), t(Z2), empty, 0.2, 0.5, "all_pairs")) == pytest.approx(0.2)  # ReLU(alpha)
    with pytest.raises(ValueError, match="bml_reduction"):
        clusterns.bml_loss(t(Z1), t(Z2), mask, 0.2, 0.5, "sum")


def test_bml_reduction_by_hand():
    """Two orthogonal samples of one cluster, each view equal to its anchor: cos(x_i, x_i^+) = 1, cos(x_i, x_j^+) =
    0, so Delta = -1 for both false-negative pairs, ReLU(-1 + 0.2) + ReLU(1 - 0.5) = 0.5 each. The authors' code:
    the two diagonal entries are masked to Delta = 0 and add ReLU(0.2) = 0.2 each: (0.5 + 0.5 + 0.2 + 0.2) / 4 =
    0.35. Over the false negatives only: 0.5. The gradient of the all-pairs mean is 2/4 of the other's."""
    z = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    mask = clusterns.false_negative_mask(torch.tensor([0, 0]))
    assert float(clusterns.bml_loss(z, z, mask, 0.2, 0.5, "all_pairs")) == pytest.approx(0.35)
    assert float(clusterns.bml_loss(z, z, mask, 0.2, 0.5, "false_negatives")) == pytest.approx(0.5)
    grads = []
    for reduction in ("all_pairs", "false_negatives"):
        z1 = z.clone().requires_grad_(True)
        clusterns.bml_loss(z1, z, mask, 0.2, 0.5, reduction).backward()
        grads.append(z1.grad)
    assert torch.allclose(grads[0], grads[1] * 2 / 4) and grads[1].abs().sum() > 0


def test_clusterns_objective_equals_eq6():
    labels = torch.tensor([0, 1, 0, 1])
    hard = [[0.3, 0.3], [1.0, -0.2], [0.2, 0.9], [-1.0, 0.1]]
    settings = {"temperature": 0.05, "hard_negative_weight": 1.0, "bml_alpha": 0.2, "bml_beta": 0.5, "bml_weight": 0.1}
    for reduction in clusterns.BML_REDUCTIONS:
        settings["bml_reduction"] = reduction
        got = float(clusterns.clusterns_loss(t(Z1), t(Z2), (labels, t(hard)), settings))
        bml = np_bml(Z1, Z2, [0, 1, 0, 1], 0.2, 0.5, reduction)
        assert got == pytest.approx(np_infonce(Z1, Z2, 0.05, hard=hard, mu=1.0) + 0.1 * bml, rel=1e-5)
    assert float(clusterns.clusterns_loss(t(Z1), t(Z2), None, settings)) == pytest.approx(np_infonce(Z1, Z2, 0.05))


def unit(deg):
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def test_farthest_first_picks_least_similar_to_last():
    z = t([unit(a) for a in (0, 10, 180, 90, 200)])
    # from 0 deg: 180 (idx 2) is least similar; from 180: among 10, 90, 200 it is 10 (170 deg apart)
    assert clusterns.farthest_first(z, 3, first=0) == [0, 2, 1]
    # from 90: 200 (110 deg) beats 180 (90 deg); from 200: 10 deg is 170 deg apart
    assert clusterns.farthest_first(z, 3, first=3) == [3, 4, 1]
    with pytest.raises(ValueError, match="n_clusters"):
        clusterns.farthest_first(z, 6, first=0)


def test_hard_negative_is_second_nearest_centroid():
    centroids = t([unit(a) for a in (0, 60, 150, 250)])
    # nearest, second nearest (degrees apart): 20 -> 0 (20), 60 (40); 100 -> 60 (40), 150 (50);
    # 190 -> 150 (40), 250 (60); 330 -> 0 (30), 250 (80)
    samples = t([unit(a) for a in (20, 100, 190, 330)])
    assert clusterns.assign(samples, centroids).tolist() == [0, 1, 2, 0]
    assert clusterns.hard_negative_index(samples, centroids).tolist() == [1, 2, 3, 3]


def test_false_negatives_are_exactly_the_same_cluster_samples():
    labels = torch.tensor([0, 1, 0, 2, 1, 0])
    mask = clusterns.false_negative_mask(labels).numpy()
    expected = np.array([[i != j and labels[i] == labels[j] for j in range(6)] for i in range(6)])
    assert (mask == expected).all()
    assert not mask.diagonal().any()


def test_momentum_update_is_eq7_eq8():
    c = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    z = np.array([[0.8, 0.2], [0.6, 0.4], [0.1, 0.9]])
    labels = [0, 0, 1]  # centroid 2 has no member and stays
    gamma = 0.1
    expected = c.copy()
    expected[0] = (1 - gamma) * c[0] + gamma * z[:2].mean(0)
    expected[1] = (1 - gamma) * c[1] + gamma * z[2]
    got = clusterns.momentum_update(t(c), t(z), torch.tensor(labels), gamma).numpy()
    assert np.allclose(got, expected, atol=1e-6)


def test_clustering_starts_after_warmup_and_threshold():
    rng = np.random.default_rng(0)
    z = t([unit(a) for a in (0, 90, 180, 270)])
    km = clusterns.BatchKMeans(n_clusters=2, momentum=0.5, similarity_threshold=0.5, warmup_steps=2)
    assert km.step(z, z, 0, rng) is None and km.centroids is None  # warm-up
    same = t([unit(a) for a in (0, 1, 2, 3)])  # mean cosine ~1 > threshold
    assert km.step(same, same, 2, rng) is None and km.centroids is None
    assert km.step(z, z, 3, rng) is None  # Algorithm 1, t == S: initialise only
    assert km.started_at == 3 and km.centroids.shape == (2, 2)
    labels, hard = km.step(z, z, 4, rng)  # t > S: cluster, hard negatives
    assert labels.shape == (4,) and hard.shape == (4, 2)


def test_auto_threshold_is_the_mean_off_diagonal_cosine():
    """sigma auto on hand-computed batches: the mean cosine over pairs of different texts."""
    orthogonal = t(np.eye(3))
    assert clusterns.auto_threshold(orthogonal) == pytest.approx(0.0)
    # 0, 60, 120 degrees: cos 60 = 0.5 (twice), cos 120 = -0.5 -> (0.5 + 0.5 - 0.5) / 3, lengths play no part
    assert clusterns.auto_threshold(t([[2 * x for x in unit(0)], unit(60), unit(120)])) == pytest.approx(1 / 6)
    # two views: cos(z1_0, z2_1) = 1/sqrt 2, cos(z1_1, z2_0) = 0; the positive pairs (diagonal) are left out
    z1, z2 = t([[1, 0], [0, 1]]), t([[1, 0], [1, 1]])
    assert clusterns.auto_threshold(z1, z2) == pytest.approx(1 / (2 * math.sqrt(2)))
    with pytest.raises(ValueError, match="at least 2"):
        clusterns.auto_threshold(t([[1.0, 0.0]]))


def test_silhouettes_of_the_batch_kmeans_equal_the_hand_computed_ones():
    """k 2 on points at 0, 10, 90 and 100 degrees: the groups {0, 10} and {90, 100}; each point's silhouette
    ``1 - a / b`` with a the cosine distance to its partner, b the mean distance to the other group."""
    z = t([unit(a) for a in (0, 10, 90, 100)])
    d = lambda deg: 1 - math.cos(math.radians(deg))  # noqa: E731
    outer = 1 - d(10) / ((d(90) + d(100)) / 2)  # 0 and 100 degrees
    inner = 1 - d(10) / ((d(80) + d(90)) / 2)  # 10 and 90 degrees
    assert clusterns.silhouettes(z, k_max=2, seed=0)[2] == pytest.approx((outer + inner) / 2)


def test_auto_n_clusters_picks_the_k_of_the_best_silhouette_smaller_on_ties():
    rng = np.random.default_rng(0)
    tight = lambda centre, n: [np.asarray(centre) + 0.01 * rng.standard_normal(3) for _ in range(n)]  # noqa: E731
    two = t(tight([1, 0, 0], 4) + tight([0, 1, 0], 4))
    assert clusterns.auto_n_clusters(two, k_max=4, seed=0) == 2
    three = t(tight([1, 0, 0], 3) + tight([0, 1, 0], 3) + tight([0, 0, 1], 3))
    assert clusterns.auto_n_clusters(three, k_max=4, seed=0) == 3
    assert clusterns.auto_n_clusters(three, k_max=4, seed=0) == clusterns.auto_n_clusters(three, k_max=4, seed=0)
    # ties -> the smaller k; no silhouette at all (too few distinct points) -> 2
    assert clusterns.best_k({2: 0.5, 3: 0.5 + 1e-13, 4: 0.2}) == 2
    assert clusterns.best_k({2: 0.1, 3: 0.5, 4: 0.5}) == 3
    assert clusterns.best_k({2: None}) == 2
    # two groups of identical points: k 2 has silhouette 1; k 3 finds the same 2 clusters (1 again): a tie -> 2
    copies = t([[1, 0], [1, 0], [0, 1], [0, 1]])
    assert clusterns.silhouettes(copies, k_max=2, seed=0)[2] == pytest.approx(1.0)
    assert clusterns.auto_n_clusters(copies, k_max=3, seed=0) == 2


def test_auto_k_is_the_papers_four_texts_per_cluster():
    """ClusterNS's run: batch 512, K 128 (4 texts per cluster); its Appendix A grid spans 2 to 5.3."""
    assert clusterns.ratio_n_clusters(512) == 128 and clusterns.ratio_n_clusters(256) == 64
    assert clusterns.ratio_n_clusters(32) == 8  # e5's study batch: not the K = 2 the silhouette rule chose
    assert clusterns.ratio_n_clusters(30) == 8 and clusterns.ratio_n_clusters(29) == 7  # 7.5 -> 8, 7.25 -> 7
    assert clusterns.ratio_n_clusters(8) == 2 and clusterns.ratio_n_clusters(4) == 2  # at least 2
    assert clusterns.ratio_n_clusters(3) == 2  # at most batch - 1
    with pytest.raises(ValueError, match="at least 3"):
        clusterns.ratio_n_clusters(2)


def test_auto_k_and_sigma_resolve_once_at_step_0_and_clustering_starts_there():
    rng = np.random.default_rng(0)
    z = t([[1, 0.01 * i, 0] for i in range(4)] + [[0.01 * i, 1, 0] for i in range(4)])
    with pytest.raises(ValueError, match="seed"):
        clusterns.BatchKMeans(n_clusters="auto", momentum=0.5, similarity_threshold=0.4, warmup_steps=0)
    km = clusterns.BatchKMeans(n_clusters="auto", momentum=0.5, similarity_threshold="auto", warmup_steps=0, seed=3)
    assert km.report() == {"n_clusters": None}
    assert km.step(z, z, 0, rng) is None  # initialise at t = S = 0
    assert km.started_at == 0 and km.k == 2 and km.centroids.shape == (2, 3)
    assert km.threshold == pytest.approx(clusterns.off_diagonal_cosine(z))
    report = km.report()
    assert report["n_clusters"] == 2 and report["n_clusters_auto"]["batch"] == 8  # 8 / 4
    assert report["n_clusters_auto"]["rule"] == "batch / 4, the paper's ratio"
    assert report["n_clusters_auto"]["silhouette"] == round(clusterns.silhouettes(z, k_max=2, seed=3)[2], 6)
    assert report["n_clusters_auto"]["random_state"] == 3
    assert report["similarity_threshold"] == round(km.threshold, 6)
    assert report["similarity_threshold_auto"] == {"rule": "step-0 mean in-batch cosine"}
    same = t([[1, 0.01 * i, 0] for i in range(8)])  # another batch resolves nothing again
    labels, hard = km.step(same, same, 1, rng)
    assert km.k == 2 and labels.shape == (8,) and hard.shape == (8, 3)
    again = clusterns.BatchKMeans(n_clusters="auto", momentum=0.5, similarity_threshold="auto", warmup_steps=0, seed=3)
    again.load_state_dict(km.state_dict())  # a resumed run: nothing resolved anew
    assert (again.k, again.threshold, again.report()) == (km.k, km.threshold, km.report())
    # auto sigma after a warm-up: the rule compares the same off-diagonal statistic with the step-0 value
    late = clusterns.BatchKMeans(n_clusters=2, momentum=0.5, similarity_threshold="auto", warmup_steps=1)
    assert late.step(z, z, 0, rng) is None and late.centroids is None
    assert late.step(same, same, 1, rng) is None and late.centroids is None  # more similar than at step 0
    assert late.step(z, z, 2, rng) is None and late.started_at == 2
    assert late.report() == {
        "n_clusters": 2,
        "similarity_threshold": round(late.threshold, 6),
        "similarity_threshold_auto": {"rule": "step-0 mean in-batch cosine"},
    }


# --- COB -----------------------------------------------------------------------------------------


def test_cob_error_term_is_sum_abs_a_minus_t_and_rand_index():
    x = t([[0.0, 0.0], [2.1, 0.0], [3.0, 0.0], [4.0, 0.0]])
    labels = ["a", "a", "b", "b"]
    loss = float(cob.cob_loss(x, labels, lambda_=10.0, regularization=0.0))
    d = np.abs(np.subtract.outer([0, 2.1, 3, 4], [0, 2.1, 3, 4]))
    a = cob.hac_adjacency(d, 2)
    tt = cob.gold_adjacency(labels)
    assert loss == pytest.approx(np.abs(a - tt).sum())
    from sklearn.metrics import rand_score

    pred = [0, 1, 1, 1]  # average linkage: {3, 4} then 2.1 joins them
    assert (a == cob.gold_adjacency(pred)).all()
    n = 4
    assert 1 - np.abs(a - tt).sum() / (2 * math.comb(n, 2)) == pytest.approx(rand_score(labels, pred))


def test_cob_regularizer_is_intra_minus_inter_mean_distance():
    x = t([[0.0, 0.0], [1.0, 0.0], [5.0, 0.0]])
    labels = [0, 0, 1]
    with_reg = float(cob.cob_loss(x, labels, lambda_=10.0, regularization=2.0))
    without = float(cob.cob_loss(x, labels, lambda_=10.0, regularization=0.0))
    d = np.abs(np.subtract.outer([0, 1, 5], [0, 1, 5]))
    tt = cob.gold_adjacency(labels)  # diagonal included, as in the authors' code
    intra, inter = (d * tt).sum() / tt.sum(), (d * (1 - tt)).sum() / (1 - tt).sum()
    assert with_reg - without == pytest.approx(2.0 * (intra - inter), rel=1e-5)


def test_blackbox_gradient_is_vlastelica_formula():
    d = torch.tensor([[0, 2.1, 3, 4], [2.1, 0, 0.9, 1.9], [3, 0.9, 0, 1], [4, 1.9, 1, 0]], requires_grad=True)
    tt = torch.tensor(cob.gold_adjacency([0, 0, 1, 1]), dtype=torch.float32)
    lam = 5.0
    a = cob._blackbox().apply(d, lam, 2)
    (a * (1 - tt) + (1 - a) * tt).sum().backward()
    dl_da = (1 - 2 * tt).numpy()
    a0 = cob.hac_adjacency(d.detach().numpy(), 2)
    a1 = cob.hac_adjacency(np.maximum(d.detach().numpy() + lam * dl_da, 0), 2)
    assert np.allclose(d.grad.numpy(), -(a0 - a1) / lam)
    assert (a1 == tt.numpy()).all()  # the perturbed input is solved to the gold clustering
    assert d.grad.abs().sum() > 0


def test_blackbox_gradient_step_raises_ari():
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import adjusted_rand_score

    labels = [0, 0, 0, 1, 1, 1]
    start = [[0.0, 0.0], [0.3, 0.2], [2.2, 0.1], [3.0, 0.0], [3.3, 0.2], [3.6, -0.1]]
    x = torch.tensor(start, requires_grad=True)

    def ari(points):
        pred = AgglomerativeClustering(n_clusters=2, linkage="average").fit_predict(np.asarray(points))
        return adjusted_rand_score(labels, pred)

    before = ari(start)
    cob.cob_loss(x, labels, lambda_=5.0, regularization=0.0).backward()
    with torch.no_grad():
        moved = (x - 1.0 * x.grad).numpy()
    assert before < 1.0
    assert ari(moved) > before
    assert ari(moved) == 1.0


# --- triplet -----------------------------------------------------------------------------------


def test_instance_triplets_by_hand():
    assert triplet.instance_triplets([0, 0, 1]) == [(0, 1, 2)]
    assert triplet.instance_triplets([1, 0, 0]) == [(1, 2, 0)]
    assert triplet.instance_triplets([0, 1, 0]) == [(0, 2, 1)]
    assert triplet.instance_triplets([0, 1, 2]) == []
    labels = [0, 1, 0, 1, 2]
    got = triplet.instance_triplets(labels)
    for a, p, n in got:
        assert labels[a] == labels[p] != labels[n]
    expected = sum(1 for c in combinations(range(5), 3) if len({labels[i] for i in c}) == 2)
    assert len(got) == expected == 6


def test_mine_triplets_fraction():
    instances = [(("a", "b", "c", "d"), (0, 0, 1, 1)), (("e", "f", "g"), (0, 1, 2))]
    mined = triplet.mine_triplets(instances, 2, np.random.default_rng(0))
    assert len(mined) == 2  # 4 triplets in the first instance // 2, none in the second
    assert all({a, p} in ({"a", "b"}, {"c", "d"}) for a, p, _ in mined)
    # the bound: 50 texts of 10 labels (5 each) give 10 * C(5,2) * 45 = 4,500 triplets, 180 at 1/25; 17 kept
    labels = [i % 10 for i in range(50)]
    big = [(tuple(f"t{i}" for i in range(50)), tuple(labels))]
    assert len(triplet.instance_triplets(labels)) == 4500
    assert len(triplet.mine_triplets(big, 25, np.random.default_rng(0))) == 180
    assert len(triplet.mine_triplets(big, 25, np.random.default_rng(0), max_per_instance=17)) == 17


@pytest.mark.slow
def test_triplet_loss_is_euclidean_margin(tiny_model):
    from sentence_transformers.sentence_transformer.losses import TripletLoss

    from tecb.adapt.training import encode_features

    texts = [["fußball tor spiel"], ["fußball liga sieg"], ["regen wind sturm"]]
    tiny_model.eval()
    loss = TripletLoss(tiny_model, triplet_margin=5.0)
    with torch.no_grad():
        got = float(loss([encode_features(tiny_model, x, "cpu") for x in texts], None))
        a, p, n = (tiny_model.encode(x, convert_to_numpy=True)[0].astype(float) for x in texts)
    expected = max(np.linalg.norm(a - p) - np.linalg.norm(a - n) + 5.0, 0.0)
    assert got == pytest.approx(expected, rel=1e-4)
    assert triplet.DEFAULTS["margin"] == 5.0  # sentence-transformers' default, which COB's baseline used


@pytest.mark.slow
@pytest.mark.parametrize("method", ["cob", "triplet"])
def test_cob_and_triplet_train_through_the_authors_dense_tanh_head(method, base_model, tmp_path):
    """COB's model (and its triplet baseline's) is Transformer -> Pooling -> Dense(256, tanh): the phase puts the
    head after the pooling, its output is tanh(W p + b) of the pooled vector p (checked by hand), bounded in
    [-1, 1]; projection_dim 0 leaves the model as it is."""
    from tecb.adapt.training import embed
    from tecb.embed.encode import load_sentence_transformer

    texts, labels = topic_corpus(16, 0)
    data = training_data(texts, labels)
    model = load_sentence_transformer(str(base_model), device="cpu", max_seq_length=32)
    pooled_model = load_sentence_transformer(str(base_model), device="cpu", max_seq_length=32)
    settings = settings_for(method)
    phases = method_module(method).phases(
        model=model, data=data, settings=settings, rng=np.random.default_rng(0), device="cpu"
    )
    assert [type(m).__name__ for m in model] == ["Transformer", "Pooling", "Dense"]
    assert phases[0].info["projection_head"] == f"Dense({pooled_model.get_embedding_dimension()} -> 256, tanh)"
    model.eval()
    with torch.no_grad():
        out = embed(model, texts[:3], "cpu")
        pooled = embed(pooled_model, texts[:3], "cpu")
    dense = model[2].linear
    assert out.shape == (3, 256) and float(out.abs().max()) <= 1.0
    torch.testing.assert_close(out, torch.tanh(pooled @ dense.weight.T + dense.bias), rtol=1e-5, atol=1e-6)
    assert any(p is dense.weight for p in model.parameters())  # trained with the encoder
    bare = load_sentence_transformer(str(base_model), device="cpu", max_seq_length=32)
    method_module(method).phases(
        model=bare, data=data, settings={**settings, "projection_dim": 0}, rng=np.random.default_rng(0), device="cpu"
    )
    assert [type(m).__name__ for m in bare] == ["Transformer", "Pooling"]
    # step 0 scores the base model, before the phase adds the head; the adapted model is scored with it
    dims = []
    train(
        TrainingRun(method=method, base_model_dir=base_model, data=data, settings={**settings, "epochs": 1}, seed=0),
        device="cpu", output_dir=tmp_path / "m", eval_every=None,
        evaluate=lambda m: dims.append(m.get_embedding_dimension()) or 0.0,
    )  # fmt: skip
    assert dims == [pooled_model.get_embedding_dimension(), 256]


def _weights(folder) -> dict:
    from tecb.embed.encode import load_sentence_transformer

    return load_sentence_transformer(str(folder), device="cpu").state_dict()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["cob", "triplet"])
def test_random_head_is_exactly_the_head_cob_and_triplet_start_from(method, base_model, tmp_path):
    """The control (random_head) saves the base model with the head a COB or triplet job of the same seed and
    projection_dim creates at step 0 (the method run for 0 epochs saves that head untrained): every weight equal,
    the encoder's the base's; another seed gives another head. It makes no optimizer step and is scored twice: the
    base at step 0, the model with its head after its phase (step 1)."""
    from tecb.adapt import random_head

    texts, labels = topic_corpus(16, 0)
    data = training_data(texts, labels)
    dims, heads = [], {}
    for seed in (4, 5):
        for name, settings in ((method, {**settings_for(method), "epochs": 0}), ("random_head", random_head.DEFAULTS)):
            out = train(
                TrainingRun(method=name, base_model_dir=base_model, data=data if name == method else TrainingData(),
                            settings=settings, seed=seed),
                device="cpu", output_dir=tmp_path / f"{name}{seed}", eval_every=None,
                evaluate=(lambda m: dims.append(m.get_embedding_dimension()) or 0.0) if name != method else None,
            )  # fmt: skip
            heads[name, seed] = _weights(tmp_path / f"{name}{seed}")
        assert out["steps"] == 0 and [r["step"] for r in out["history"]] == [0, 1]
        assert out["phases"]["random_head"]["projection_head"].endswith("-> 256, tanh)")
        trained, control = heads[method, seed], heads["random_head", seed]
        assert trained.keys() == control.keys() and any(".linear." in k for k in control)
        for key in trained:
            assert torch.equal(trained[key], control[key]), key
    base = _weights(base_model)
    assert all(torch.equal(base[k], heads["random_head", 4][k]) for k in base)  # the encoder untouched
    linear = [k for k in heads["random_head", 4] if ".linear." in k]
    assert not all(torch.equal(heads["random_head", 4][k], heads["random_head", 5][k]) for k in linear)
    width = len(next(v for k, v in base.items() if k.endswith("LayerNorm.bias")))
    assert dims == [width, 256, width, 256]  # the control scored as the base, then with its head


# --- argue ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_argue_pair_heads_shapes_and_labels(tiny_model):
    heads = argue.PairHeads(tiny_model[0].auto_model.config.hidden_size, ["order", "reply"])
    objectives = ["order", "reply", "order"]
    logits = argue.pair_logits(tiny_model, heads, ["a b", "c d", "e"], ["f", "g h", "i j"], objectives, 32, "cpu")
    assert logits.shape == (3, 2)
    # each row goes through its own objective's head
    cls = torch.randn(1, tiny_model[0].auto_model.config.hidden_size)
    assert torch.equal(heads(cls, ["reply"]), heads.heads["reply"](cls))
    assert not torch.equal(heads(cls, ["order"]), heads(cls, ["reply"]))
    with pytest.raises(ValueError, match="pair 1"):
        argue.check_pairs([("a", "b", 1, "order"), ("a", "b", 2, "order")])
    with pytest.raises(ValueError, match="objective"):
        argue.check_pairs([("a", "b", 1, "nsp")])


def test_argue_phases(tiny_model):
    settings = dict(argue.DEFAULTS, siamese_epochs=1)
    rng = np.random.default_rng(0)
    only_order = TrainingData(pairs=(("a", "b", 1, "order"), ("b", "a", 0, "order")))
    # no reply pair (no forum): the siamese phase cannot run, and it does not vanish silently
    with pytest.raises(ValueError, match="siamese_epochs: 0"):
        argue.phases(model=tiny_model, data=only_order, settings=settings, rng=rng, device="cpu")
    pair_phase_only = dict(settings, siamese_epochs=0)  # the explicit choice
    assert [
        p.name for p in argue.phases(model=tiny_model, data=only_order, settings=pair_phase_only, rng=rng, device="cpu")
    ] == ["pairs"]
    mixed = TrainingData(pairs=(("a", "b", 1, "order"), ("c", "d", 1, "reply"), ("e", "f", 0, "reply")))
    phases = argue.phases(model=tiny_model, data=mixed, settings=settings, rng=rng, device="cpu")
    assert [p.name for p in phases] == ["pairs", "siamese"]
    assert len(phases[1].batches(rng)[0]) == 2  # the two reply pairs, not the order pair
    loss = phases[0].loss([0, 1, 2])
    assert loss.ndim == 0 and float(loss.detach()) > 0
    # one model per objective: the pair phase trains the data's objective alone, the siamese phase its objectives
    one = TrainingData(pairs=mixed.pairs, objective="order")
    phases = argue.phases(model=tiny_model, data=one, settings=settings, rng=rng, device="cpu")
    assert phases[0].info == {"objective": "order", "pairs": 1} and list(phases[0].modules[0].heads) == ["order"]
    assert phases[1].info == {"objectives": ["reply"], "pairs": 2}


# --- the loop: settings, end-to-end training, determinism -------------------------------------

TOPICS = {
    "sport": "fußball tor spiel mannschaft trainer liga sieg stadion ball verein".split(),
    "wirtschaft": "bank aktie markt preis firma umsatz gewinn börse kredit steuer".split(),
    "kultur": "theater musik film konzert bühne roman kunst oper museum lied".split(),
    "wetter": "regen sonne wind schnee sturm wolke gewitter hitze frost nebel".split(),
}
FILLER = "der die das und ein eine ist war mit auf im am heute gestern sehr".split()


def topic_corpus(n_per_topic: int, seed: int):
    """Texts of 3 topic words among 5 shared filler words; duplicates may occur (as in real data)."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for topic, words in TOPICS.items():
        for _ in range(n_per_topic):
            w = list(rng.choice(words, 3)) + list(rng.choice(FILLER, 5))
            rng.shuffle(w)
            texts.append(" ".join(w))
            labels.append(topic)
    return texts, labels


@pytest.fixture(scope="module")
def base_model(tmp_path_factory):
    from tecb.embed.encode import load_sentence_transformer
    from tecb.embed.tiny_bert import create_tiny_bert

    root = tmp_path_factory.mktemp("adapt_methods")
    texts, _ = topic_corpus(24, 0)
    create_tiny_bert(root / "tiny", texts + sum(TOPICS.values(), []), seed=1)
    load_sentence_transformer(str(root / "tiny"), device="cpu").save(str(root / "base"))
    return root / "base"


@pytest.fixture
def tiny_model(base_model):
    from tecb.embed.encode import load_sentence_transformer

    return load_sentence_transformer(str(base_model), device="cpu", max_seq_length=32)


def training_data(texts, labels):
    order = np.random.default_rng(1).permutation(len(texts))
    instances = tuple((tuple(texts[i] for i in idx), tuple(labels[i] for i in idx)) for idx in np.array_split(order, 8))
    rng = np.random.default_rng(2)
    pairs = []
    for i in range(len(texts)):
        j = int(rng.integers(len(texts)))
        pairs.append((texts[i], texts[j], int(labels[i] == labels[j]), "similarity"))
    return TrainingData(texts=tuple(texts), instances=instances, pairs=tuple(pairs))


# few steps at a high learning rate: a tiny random model must move visibly
SMALL = {
    "simcse": {"lr": 1e-3, "batch_size": 32, "epochs": 3, "min_steps": 0},
    "clusterns": {
        "lr": 1e-3,
        "batch_size": 16,
        "epochs": 6,
        "n_clusters": 4,
        "similarity_threshold": 0.99,
        "bml_weight": 0.1,
        "min_steps": 0,
    },
    "cob": {"lr": 1e-3, "epochs": 2, "lambda_": 1.0, "regularization": 0.1},
    "triplet": {"lr": 1e-3, "batch_size": 8, "epochs": 1, "triplet_fraction": 5, "margin": 1.0},
    "argue": {"lr": 1e-3, "epochs": 1, "siamese_lr": 1e-3, "siamese_epochs": 3, "siamese_batch_size": 8},
}


def settings_for(method):
    return {**method_module(method).DEFAULTS, **SMALL[method]}


def test_defaults_cover_the_loop_and_missing_settings_raise(base_model, tmp_path):
    from tecb.adapt.training import COMMON_KEYS

    for method in METHODS:
        assert set(COMMON_KEYS) <= set(method_module(method).DEFAULTS), method
    settings = settings_for("simcse")
    del settings["temperature"]
    with pytest.raises(ValueError, match="temperature"):
        train(
            TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=("a", "b")),
                        settings=settings, seed=0),
            device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None,
        )  # fmt: skip
    with pytest.raises(ValueError, match="unknown training method"):
        method_module("nsp")
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_training_logs_progress_lines(base_model, tmp_path):
    """Every phase says its length and logs step / total, loss, elapsed time and ETA (first and last step at least)."""
    from tecb.adapt.training import Progress

    texts, _ = topic_corpus(4, 0)
    lines = []
    out = train(
        TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=tuple(texts)),
                    settings={**settings_for("simcse"), "batch_size": 4, "epochs": 2}, seed=0),
        device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None, log=lines.append,
        options=RunOptions(progress_seconds=3600),
    )  # fmt: skip
    total = out["steps"]
    assert total == 2 * len(set(texts)) // 4
    assert lines[0] == f"phase simcse: {total} optimizer steps (2 epochs of {total // 2} batches)"
    steps = [line for line in lines if re.match(r"phase \w+: step \d+/", line)]
    assert len(steps) == 2  # progress_seconds not reached: the first and the last step only
    assert any(line.startswith("phase simcse: loss at step 0 ") for line in lines)  # and the step-0 loss line
    assert steps[0].startswith(f"phase simcse: step 1/{total} (")
    assert steps[-1].startswith(f"phase simcse: step {total}/{total} (100 %), loss ")
    assert "elapsed 0:00:" in steps[-1] and steps[-1].endswith("ETA 0:00:00")
    # the ETA is the elapsed time per step times the steps left (hand-computed)
    progress = Progress(None, 30)
    progress.name, progress.total, progress.started = "cob", 10, 100.0
    assert (
        progress.line(4, 0.5, now=100.0 + 80)
        == "phase cob: step 4/10 (40 %), loss 0.5000, elapsed 0:01:20, ETA 0:02:00"
    )
    assert progress.line(0, None, now=100.0).endswith("loss n/a, elapsed 0:00:00, ETA ?")


@pytest.mark.slow
def test_step0_loads_and_encodes_the_base_model_as_the_embed_stage(base_model, tmp_path):
    """One code path: a model whose spec sets a prompt, a pooling override and normalisation gives, loaded and
    encoded by the adapt stage, the embed stage's vectors (the job asserts it at step 0); loaded as a bare folder
    it does not, and the check says so. The training forward pass sees the same prompt."""
    from tecb import io
    from tecb.adapt.jobs import check_base_vectors, encode
    from tecb.adapt.training import embed, load_base
    from tecb.embed.encode import EmbedJob, embed_dataset, encode_options
    from tecb.embed.spec import encoder_settings

    texts, labels = topic_corpus(3, 0)
    texts = list(dict.fromkeys(texts))
    io.write_dataset(texts, [(list(range(len(texts))), labels[: len(texts)])], tmp_path / "t.parquet",
                     tmp_path / "s.parquet", "D")  # fmt: skip
    spec = {"kind": "local", "path": str(base_model), "prompt": "Thema: ", "pooling": "cls", "normalize": True}
    options = {"batch_size": 4, "device": "cpu", "dtype": "float32"}
    embed_dataset(
        EmbedJob.from_spec(tmp_path / "t.parquet", tmp_path / "e.parquet", spec, options, seed=None),
        log=lambda *_: None,
    )
    encoder = encoder_settings(spec, options, "D")
    model = load_base(encoder, device="cpu")
    assert model.tecb_prompt == "Thema: "
    vectors = encode(model, texts, batch_size=8, encode_kwargs=encode_options(encoder))
    record = check_base_vectors(vectors, texts, tmp_path / "e.parquet", all_texts=texts, float32=True)
    assert record["max_abs_diff"] < 1e-5
    subset = texts[::2]  # the label-disjoint variant evaluates a subset of the texts
    check_base_vectors(vectors[::2], subset, tmp_path / "e.parquet", all_texts=texts, float32=True)
    bare = load_base(str(base_model), device="cpu")  # no prompt, mean pooling, not normalised: not the benchmark
    with pytest.raises(AssertionError, match="not the benchmark's base model"):
        check_base_vectors(encode(bare, texts, batch_size=8), texts, tmp_path / "e.parquet", all_texts=texts,
                           float32=True)  # fmt: skip
    model.eval()
    with torch.no_grad():
        trained_view = embed(model, texts, "cpu").numpy()
    np.testing.assert_allclose(
        trained_view, model.encode(texts, prompt="Thema: ", normalize_embeddings=False), rtol=1e-4, atol=1e-5
    )


@pytest.mark.slow
def test_p2p_trains_at_the_benchmark_length_and_the_model_is_saved_with_it(base_model, tmp_path):
    """SimCSE's 32 tokens are sentences'; a P2P dataset is trained at p2p_max_length (None: the benchmark's
    length) and every adapted model is saved with the length the benchmark embeds with."""
    from tecb.adapt.jobs import is_p2p
    from tecb.embed.encode import load_sentence_transformer

    assert is_p2p("BlurbsClusteringP2P", None) and not is_p2p("BlurbsClusteringS2S", None)
    assert is_p2p("mine", "p2p") and not is_p2p("MineP2P", "s2s")  # the config's `text` decides where it is set
    assert simcse.DEFAULTS["p2p_max_length"] is None and clusterns.DEFAULTS["p2p_max_length"] is None
    texts, _ = topic_corpus(4, 0)
    train(
        TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=tuple(texts)),
                    settings={**settings_for("simcse"), "batch_size": 8}, seed=0),
        device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None, options=RunOptions(save_max_length=96),
    )  # fmt: skip
    assert load_sentence_transformer(str(tmp_path / "m"), device="cpu").max_seq_length == 96


@pytest.mark.slow
def test_min_steps_adds_epochs_until_reached(base_model, tmp_path):
    """The rule that scales training to the data: 10 texts in batches of 4 are 3 batches an epoch (4 + 4 + 2);
    min_steps 7 needs 3 epochs (9 steps); 0, or a length already reached, keeps the configured epochs."""
    from tecb.adapt.training import Phase, epochs_for

    def phase(min_steps, epochs=1):
        return Phase("p", simcse.text_batches(10, 4), None, 1e-3, epochs, 0.0, 0.0, 1.0, min_steps=min_steps)

    rng = np.random.default_rng(0)
    assert [len(e) for e in epochs_for(phase(7), rng)] == [3, 3, 3]
    assert [len(e) for e in epochs_for(phase(0, epochs=2), rng)] == [3, 3]
    assert [len(e) for e in epochs_for(phase(5, epochs=2), rng)] == [3, 3]  # already reached
    texts, _ = topic_corpus(4, 0)
    out = train(
        TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=tuple(texts)),
                    settings={**settings_for("simcse"), "batch_size": 8, "epochs": 1, "min_steps": 5}, seed=0),
        device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None,
    )  # fmt: skip
    per_epoch = -(-len(texts) // 8)
    assert out["steps"] == per_epoch * -(-5 // per_epoch) and out["steps"] >= 5
    assert out["phases"]["simcse"]["epochs_run"] == -(-5 // per_epoch)


@pytest.mark.slow
def test_cropping_views_are_contiguous_spans_and_dropout_is_the_default(base_model, tmp_path):
    rng = np.random.default_rng(0)
    text = "a b c d e f g h i j"
    for _ in range(20):
        view = simcse.crop(text, 0.8, rng)
        assert len(view.split()) == 8 and view in text  # ceil(0.8 * 10) words, contiguous
    assert simcse.crop("a b", 0.8, rng) == "a b" and simcse.crop("eins", 0.5, rng) == "eins"
    assert simcse.DEFAULTS["augmentation"] == clusterns.DEFAULTS["augmentation"] == "dropout"
    assert simcse.view_maker(simcse.DEFAULTS, rng) == (None, None)
    with pytest.raises(ValueError, match="augmentation"):
        simcse.view_maker({**simcse.DEFAULTS, "augmentation": "mask"}, rng)
    texts, _ = topic_corpus(4, 0)
    runs = []
    for name, augmentation in (("a", "cropping"), ("b", "cropping"), ("c", "dropout")):
        out = train(
            TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=tuple(texts)),
                        settings={**settings_for("simcse"), "batch_size": 8, "augmentation": augmentation}, seed=0),
            device="cpu", output_dir=tmp_path / name, eval_every=None, evaluate=None,
        )  # fmt: skip
        info = out["phases"]["simcse"]
        assert info["augmentation"] == augmentation
        assert len(texts) % 8 != 1  # no last batch of one text dropped: every text gives two views per epoch
        assert info["views"] == 2 * len(texts) * info["epochs_run"]
        # dropout cuts nothing; a crop at 0.8 of an 8-word text keeps ceil(6.4) = 7 words: every view is cut
        assert {len(t.split()) for t in texts} == {8}
        assert info["views_cropped"] == (0 if augmentation == "dropout" else info["views"])
        runs.append(tree_digest(tmp_path / name))
    assert runs[0] == runs[1] != runs[2]  # seeded crops: the same bytes again; another model than dropout's


def v_measure_of(texts, labels):
    from sklearn.cluster import KMeans

    def evaluate(model):
        vectors = model.encode(texts, batch_size=64, convert_to_numpy=True)
        return score(labels, KMeans(4, n_init=5, random_state=0).fit_predict(vectors))["v_measure"]

    return evaluate


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_training_raises_v_measure(method, base_model, tmp_path):
    texts, labels = topic_corpus(16, 0)
    out = train(
        TrainingRun(
            method=method,
            base_model_dir=base_model,
            data=training_data(texts, labels),
            settings=settings_for(method),
            seed=3,
        ),
        device="cpu",
        output_dir=tmp_path / "adapted",
        eval_every=None,
        evaluate=v_measure_of(texts, labels),
    )
    scores = [r["score"] for r in out["history"] if "score" in r]
    assert out["history"][0]["step"] == 0 and out["steps"] > 0 and out["device"] == "cpu"
    assert out["precision"] == "float32" and out["method"] == method
    assert scores[-1] > scores[0] + 0.05, scores
    assert (tmp_path / "adapted" / "modules.json").exists()
    if method == "clusterns":
        info = out["phases"]["clusterns"]
        assert info["clustering_started_at"] is not None and info["n_clusters"] == 4
        assert info["batches"] == out["steps"]
        # every batch after the start step has hard negatives (the start step itself only initialises)
        assert info["batches_with_hard_negatives"] == info["batches"] - info["clustering_started_at"] - 1
        assert 0 < info["batches_with_false_negatives"] <= info["batches_with_hard_negatives"]


@pytest.mark.slow
def test_clusterns_auto_resolves_k_and_sigma_from_the_step0_batch(base_model, tmp_path):
    """``auto`` K and sigma on the tiny model: clustering starts at step 0, K the batch / 4, the job's
    record says how both were chosen, Table 6's ``ran`` column prints them; the same seed gives the same bytes."""
    from tecb.report.adapt_tables import what_ran

    texts, labels = topic_corpus(16, 0)
    settings = {**settings_for("clusterns"), "n_clusters": "auto", "similarity_threshold": "auto", "epochs": 2}
    outs, digests = [], []
    for name in ("a", "b"):
        run = TrainingRun(method="clusterns", base_model_dir=base_model, data=training_data(texts, labels),
                          settings=settings, seed=4)  # fmt: skip
        outs.append(train(run, device="cpu", output_dir=tmp_path / name, eval_every=None, evaluate=None))
        digests.append(tree_digest(tmp_path / name))
    assert digests[0] == digests[1] and outs[0]["phases"] == outs[1]["phases"]
    info = outs[0]["phases"]["clusterns"]
    assert info["clustering_started_at"] == 0
    first_batch = min(settings["batch_size"], len(texts))
    assert info["n_clusters"] == clusterns.ratio_n_clusters(first_batch)
    assert info["n_clusters_auto"]["batch"] == first_batch
    assert -1 <= info["n_clusters_auto"]["silhouette"] <= 1 and -1 <= info["similarity_threshold"] <= 1
    ran = what_ran("clusterns", outs[0])
    assert ran.startswith(
        f"clustering from step 0, k {info['n_clusters']} (auto: batch / 4, the paper's ratio), "
        f"σ {info['similarity_threshold']:.2f} (auto: step-0 mean in-batch cosine), hard negatives in "
    ), ran


def test_clusterns_rejects_an_unknown_word_for_k_or_sigma(tiny_model):
    for key in ("n_clusters", "similarity_threshold"):
        settings = {**settings_for("clusterns"), key: "automatic"}
        with pytest.raises(ValueError, match=f"{key} must be a number or 'auto'"):
            clusterns.phases(model=tiny_model, data=TrainingData(texts=("a b", "c d")), settings=settings,
                             rng=np.random.default_rng(0), device="cpu")  # fmt: skip


@pytest.mark.slow
def test_same_seed_same_bytes_and_global_rng_untouched(base_model, tmp_path):
    texts, labels = topic_corpus(8, 0)
    data = training_data(texts, labels)
    settings = {**settings_for("clusterns"), "epochs": 1, "batch_size": 16}
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    runs = []
    for name in ("a", "b"):
        train(
            TrainingRun(method="clusterns", base_model_dir=base_model, data=data, settings=settings, seed=5),
            device="cpu", output_dir=tmp_path / name, eval_every=None, evaluate=None,
        )  # fmt: skip
        runs.append(tree_digest(tmp_path / name))
    assert torch.equal(torch.rand(1), expected_next)  # the caller's generator state is put back
    assert runs[0] == runs[1]
    train(
        TrainingRun(method="clusterns", base_model_dir=base_model, data=data, settings=settings, seed=6),
        device="cpu", output_dir=tmp_path / "c", eval_every=None, evaluate=None,
    )  # fmt: skip
    assert tree_digest(tmp_path / "c") != runs[0]


def tree_digest(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.slow
def test_same_seed_identical_bytes_across_processes(base_model, tmp_path):
    """Every method trained in two separate processes (each its own PYTHONHASHSEED), on data with duplicate texts,
    saves byte-identical models (tests/test_adapt_workflow.py repeats two of the workflow's jobs)."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_adapt_methods import METHODS, topic_corpus, training_data, settings_for
        from tecb.adapt.training import TrainingRun, train
        texts, labels = topic_corpus(6, 0)
        texts, labels = texts + texts[:4], labels + labels[:4]
        for method in METHODS:  # one epoch each; ClusterNS two (it clusters after its warm-up)
            run = TrainingRun(method=method, base_model_dir={str(base_model)!r}, data=training_data(texts, labels),
                              settings={{**settings_for(method), "epochs": 2 if method == "clusterns" else 1}}, seed=9)
            train(run, device="cpu", output_dir=Path(sys.argv[1]) / method, eval_every=None, evaluate=None)
        """
    )
    for name, hash_seed in (("x", "1"), ("y", "2")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", script, str(tmp_path / name)], check=True, capture_output=True, env=env)
    x, y = tree_digest(tmp_path / "x"), tree_digest(tmp_path / "y")
    assert {k.split("/")[0] for k in x} == set(METHODS)
    assert x == y, sorted(k for k in x if x[k] != y.get(k))


# --- model selection (COB, triplet) ----------------------------------------------------------------


def test_hold_out_is_a_seeded_share_of_the_instances():
    from tecb.adapt.training import hold_out

    instances = [((f"t{i}",), ("l",)) for i in range(10)]
    train_a, held_a = hold_out(instances, 0.2, np.random.default_rng(5))
    train_b, held_b = hold_out(instances, 0.2, np.random.default_rng(5))
    assert (train_a, held_a) == (train_b, held_b) and len(held_a) == 2 and len(train_a) == 8
    assert sorted(train_a + held_a) == sorted(instances)
    assert hold_out(instances, 0.0, np.random.default_rng(5)) == (instances, [])
    assert len(hold_out(instances[:3], 0.1, np.random.default_rng(5))[1]) == 1  # at least one
    with pytest.raises(ValueError, match="validation_fraction"):
        hold_out(instances, 1.0, np.random.default_rng(5))


def test_selection_keeps_the_best_epochs_weights_by_hand():
    """Scripted validation scores 0.5 (before training), 0.7, 0.6, 0.65 after epochs 1-3: epoch 1 is kept, and the
    weights put back are those after epoch 1 (the base's 0.5 is reported, never selected)."""
    from tecb.adapt.training import Phase, _Selection

    layer = torch.nn.Linear(2, 1, bias=False)
    scores = iter([0.5, 0.7, 0.6, 0.65])
    phase = Phase("cob", None, None, 1e-3, 3, 0.0, 0.0, 1.0, validate=lambda: next(scores))
    selection = _Selection(phase, layer)
    weights = []
    for epoch in range(3):
        with torch.no_grad():
            layer.weight.fill_(float(epoch + 1))
        weights.append(layer.weight.detach().clone())
        selection.after_epoch()
    lines = []
    selection.finish(log=lines.append)
    assert phase.info == {"validation": [0.5, 0.7, 0.6, 0.65], "selected_epoch": 1}
    torch.testing.assert_close(layer.weight, weights[0])
    assert "-> epoch 1 kept" in lines[0]


@pytest.mark.slow
def test_cob_selects_its_epoch_on_held_out_training_instances(base_model, tmp_path):
    """COB with 3 epochs and a quarter of its 8 instances held out: 4 validation scores (base + 3 epochs), the saved
    model scores the kept epoch's value on those held-out instances."""
    from tecb.adapt.training import hold_out, load_base, validation_score

    texts, labels = topic_corpus(16, 0)
    data = training_data(texts, labels)
    settings = {**settings_for("cob"), "epochs": 3, "validation_fraction": 0.25}
    out = train(
        TrainingRun(method="cob", base_model_dir=base_model, data=data, settings=settings, seed=3),
        device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None,
    )  # fmt: skip
    info = out["phases"]["cob"]
    assert info["validation_instances"] == 2 and info["instances"] == 6
    assert len(info["validation"]) == 4
    kept = info["selected_epoch"]
    assert kept == 1 + int(np.argmax(info["validation"][1:]))
    _, held_out = hold_out([(list(t), list(y)) for t, y in data.instances], 0.25, np.random.default_rng(3))
    saved = load_base(str(tmp_path / "m"), device="cpu")
    assert validation_score(saved, held_out, "cpu") == pytest.approx(info["validation"][kept], abs=1e-6)


def test_step0_loss_is_recorded_beside_chance_and_no_signal_is_flagged():
    """The first loss of a phase (before any update) and its loss at chance go to the phase's info and the log; a
    step-0 loss under 1 % of chance is flagged, and Table 6's `ran` column says so (issue 42 item 4)."""
    import math

    from tecb.adapt.training import Phase, _record_step0
    from tecb.report.adapt_tables import what_ran

    def phase(chance):
        return Phase(
            "simcse",
            batches=lambda rng: [],
            loss=None,
            lr=1e-5,
            epochs=1,
            warmup_ratio=0.0,
            weight_decay=0.0,
            max_grad_norm=1.0,
            chance_loss=chance,
        )

    lines = []
    learning, saturated, unknown = phase(lambda b: math.log(len(b))), phase(lambda b: math.log(len(b))), phase(None)
    _record_step0(learning, list(range(64)), 2.5, lines.append)
    _record_step0(saturated, list(range(64)), 0.0033, lines.append)
    _record_step0(unknown, [0, 1], 0.7, lines.append)
    assert learning.info == {"step0_loss": 2.5, "chance_loss": round(math.log(64), 6), "no_signal": False}
    assert saturated.info["no_signal"] is True and "~no signal" in lines[1]
    assert unknown.info["chance_loss"] is None and unknown.info["no_signal"] is False
    ran = what_ran("simcse", {"phases": {"simcse": {"augmentation": "dropout", **saturated.info}}})
    assert "simcse step-0 loss 0.0033 (chance 4.16) ~NO SIGNAL" in ran
