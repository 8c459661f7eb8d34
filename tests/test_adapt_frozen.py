"""Arms on frozen vectors (tecb.adapt.frozen) against their papers' equations on hand-computed cases, and the
positive control through the project's own scoring path: a head trained on the evaluated labels must win by far,
so a broken scoring path (or a broken head) fails here."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tecb.adapt import frozen  # noqa: E402
from tecb.adapt.jobs import score_vectors  # noqa: E402

KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}


def synthetic(seed: int = 0, per_label: int = 40, labels: int = 4):
    """Vectors whose labels differ only along 2 quiet directions, with 6 loud directions of label-free noise: the
    base clusters by the noise (low V-measure), a head that has read the labels by the quiet directions."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(labels, 2)) * 1.0
    rows, y = [], []
    for k in range(labels):
        quiet = centres[k] + 0.15 * rng.normal(size=(per_label, 2))
        loud = 4.0 * rng.normal(size=(per_label, 6))
        rows.append(np.hstack([quiet, loud, 0.1 * rng.normal(size=(per_label, 8))]))
        y += [f"c{k}"] * per_label
    return np.vstack(rows), np.asarray(y, dtype=object)


def splits_of(y, n_splits: int = 3, seed: int = 0):
    """Benchmark-like splits: random subsets of 60 % of the items each."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(n_splits):
        ids = np.sort(rng.choice(len(y), size=int(0.6 * len(y)), replace=False))
        out.append((s, ids, y[ids]))
    return out


def v_measure(vectors, splits) -> float:
    rows = score_vectors(vectors, splits, algorithm=KMEANS, seed=42, log=lambda *a: None)
    return float(np.mean([r["v_measure"] for r in rows]))


SMALL_HEAD = frozen.HeadTraining(dim=32, epochs=60, lr=1e-2, batch_size=64)


@pytest.mark.slow
def test_the_positive_control_wins_through_the_projects_scoring_path():
    x, y = synthetic()
    splits = splits_of(y)
    base = v_measure(x, splits)
    gains = {}
    for kind in ("supcon", "classifier"):
        head = frozen.fit_label_head(x, y, kind=kind, training=SMALL_HEAD, seed=1)
        gains[kind] = v_measure(head.transform(x), splits)
        assert base < 0.2 and gains[kind] > base + 0.4, (kind, base, gains[kind])
        assert head.info["loss_end"] < head.info["loss_start"]
    # the same head on labels that carry nothing (shuffled) falls far short: the gain is the labels', not the head's
    shuffled = np.random.default_rng(5).permutation(y)
    noise = frozen.fit_label_head(x, shuffled, kind="supcon", training=SMALL_HEAD, seed=1)
    assert v_measure(noise.transform(x), splits) < gains["supcon"] - 0.3


def test_the_positive_control_beats_the_base_by_three_times_its_detectable_delta():
    """Issue 54's bar for a positive control, in miniature: over 3 training seeds and 6 splits, the label head's Δ
    against the base (Table 6's test: tecb.report.stats.contrast_test of seeds x splits against the base) is
    significant and at least 3x the smallest Δ that test detects; labels that carry nothing do not pass it."""
    from tecb.report.stats import contrast_test

    x, y = synthetic()
    splits = splits_of(y, n_splits=6)

    def per_split(vectors):
        rows = score_vectors(vectors, splits, algorithm=KMEANS, seed=42, log=lambda *a: None)
        return [r["v_measure"] for r in sorted(rows, key=lambda r: r["split"])]

    base = np.asarray([per_split(x)])

    def delta(labels):
        heads = [frozen.fit_label_head(x, labels, kind="supcon", training=SMALL_HEAD, seed=s) for s in (42, 1, 2)]
        return contrast_test(np.asarray([per_split(h.transform(x)) for h in heads]), base, seed=0)

    won = delta(y)
    assert won.ci_low > 0 and won.p_value < 0.05, won
    assert 0 < won.detectable and won.mean >= 3 * won.detectable, won
    shuffled = delta(np.random.default_rng(5).permutation(y))
    assert not shuffled.mean >= 3 * shuffled.detectable, shuffled


def test_whitening_gives_the_identity_covariance_and_matches_the_hand_computed_map():
    x, _ = synthetic()
    head = frozen.fit_whitening(x)
    z = head.transform(x)
    assert np.allclose(z.mean(axis=0), 0, atol=1e-10)
    assert np.allclose(np.cov(z, rowvar=False, bias=True), np.eye(x.shape[1]), atol=1e-8)
    # by hand: covariance diag(4, 1) in its own axes -> W = diag(1/2, 1) (up to the eigenvectors' signs)
    pts = np.array([[2.0, 1.0], [-2.0, -1.0], [2.0, -1.0], [-2.0, 1.0]]) + [3.0, -1.0]
    w = frozen.fit_whitening(pts)
    assert np.allclose(w.mean, [3.0, -1.0])
    assert np.allclose(np.abs(w.weight), [[0.5, 0.0], [0.0, 1.0]])
    assert np.allclose(np.abs(w.transform(pts)), 1.0)
    two = frozen.fit_whitening(x, n_components=2)
    assert two.transform(x).shape == (len(x), 2)
    with pytest.raises(ValueError, match="components"):
        frozen.fit_whitening(np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]), n_components=2)


def test_all_but_the_top_removes_the_mean_and_the_top_directions():
    """Mu & Viswanath, Algorithm 1 by hand: mean (1, 1); the top direction is the first axis (variance 1 against
    0.01): what is left of each point is its second coordinate less the mean's."""
    pts = np.array([[2.0, 1.0], [0.0, 1.0], [1.0, 1.1], [1.0, 0.9]])
    head = frozen.fit_all_but_the_top(pts, n_components=1)
    assert np.allclose(head.mean, [1.0, 1.0])
    assert np.allclose(head.transform(pts), [[0.0, 0.0], [0.0, 0.0], [0.0, 0.1], [0.0, -0.1]])
    assert np.allclose(frozen.fit_all_but_the_top(pts, n_components=0).transform(pts), pts - [1.0, 1.0])
    x, _ = synthetic()
    z = frozen.fit_all_but_the_top(x, n_components=3).transform(x)
    _, s, vt = np.linalg.svd(x - x.mean(0), full_matrices=False)
    assert np.allclose(z @ vt[:3].T, 0, atol=1e-9)  # nothing left along the top 3 directions
    assert frozen.default_top(384) == 4 and frozen.default_top(50) == 1


def test_supcon_loss_equals_khosla_eq2_by_hand():
    z = torch.tensor([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]], dtype=torch.float64)
    labels = torch.tensor([0, 0, 1])
    t = 0.5
    zn = z / z.norm(dim=1, keepdim=True)
    sim = (zn @ zn.T).numpy() / t
    expected = []
    for i, p in ((0, 1), (1, 0)):  # anchor 2 has no positive: left out
        others = [a for a in range(3) if a != i]
        expected.append(-(sim[i, p] - math.log(sum(math.exp(sim[i, a]) for a in others))))
    assert float(frozen.supcon_loss(z, labels, t)) == pytest.approx(np.mean(expected))


def test_dec_assignment_and_target_by_hand():
    z = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    centroids = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    q = frozen.student_t_assignment(z, centroids).numpy()
    a, b = 1 / (1 + 1), 1 / (1 + 4)  # (1 + d^2)^-1 at alpha 1
    assert np.allclose(q, [[a / (a + b), b / (a + b)]])
    q = torch.tensor([[0.6, 0.4], [0.3, 0.7]], dtype=torch.float64)
    p = frozen.target_distribution(q).numpy()
    row0 = np.array([0.36 / 0.9, 0.16 / 1.1])
    row1 = np.array([0.09 / 0.9, 0.49 / 1.1])
    assert np.allclose(p, [row0 / row0.sum(), row1 / row1.sum()])


@pytest.mark.slow
def test_self_training_sharpens_without_labels_and_is_seeded():
    x, y = synthetic(per_label=30)
    a = frozen.fit_self_training(x, n_clusters=4, epochs=20, lr=1e-2, batch_size=64, seed=3)
    b = frozen.fit_self_training(x, n_clusters=4, epochs=20, lr=1e-2, batch_size=64, seed=3)
    assert np.array_equal(a.transform(x), b.transform(x))
    assert a.info["confidence_end"] > a.info["confidence_start"]  # the soft assignments sharpened
    with pytest.raises(ValueError, match="n_clusters"):
        frozen.fit_self_training(x, n_clusters=1, seed=0)


def test_label_halves_are_disjoint_and_seeded():
    labels = [f"c{i % 6}" for i in range(30)]
    train, evaluated = frozen.label_halves(labels, seed=1)
    assert len(train) == 3 and len(evaluated) == 3 and not set(train) & set(evaluated)
    assert frozen.label_halves(labels, seed=1) == (train, evaluated)
    with pytest.raises(ValueError, match="4 categories"):
        frozen.label_halves(["a", "b", "c"], seed=0)


def test_ridge_map_is_the_closed_form_and_recovers_a_linear_map():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    true = rng.normal(size=(5, 5))
    y = x @ true + 0.5
    head = frozen.fit_ridge_map(x, y, alpha=1e-8)
    assert np.allclose(head.transform(x), y, atol=1e-6)
    from sklearn.linear_model import Ridge

    noisy = y + rng.normal(size=y.shape)
    ours = frozen.fit_ridge_map(x, noisy, alpha=30.0)
    assert np.allclose(ours.transform(x), Ridge(alpha=30.0).fit(x, noisy).predict(x))


@pytest.mark.slow
def test_infonce_map_brings_titles_to_their_own_texts():
    """Texts are a rotation of their titles plus noise: the map learnt from pairs retrieves each held-out title's own
    text far more often than the identity does."""
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    titles = rng.normal(size=(400, 16))
    texts = titles @ q + 0.3 * rng.normal(size=titles.shape)

    def hits(a, b):
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        return float(np.mean(np.argmax(a @ b.T, axis=1) == np.arange(len(a))))

    head = frozen.fit_infonce_map(titles[:300], texts[:300], epochs=30, lr=1e-2, batch_size=100, seed=0)
    assert head.info["loss_end"] < head.info["loss_start"]
    assert hits(head.transform(titles[300:]), texts[300:]) > hits(titles[300:], texts[300:]) + 0.5
