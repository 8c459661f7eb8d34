"""A text-level bootstrap over saved predictions (issue 53, item 2, second option).

The texts of a dataset's pool (its unique text ids) are resampled with replacement; in each replicate every
split's V-measure is recomputed from the FIXED predicted clusters and true labels of its texts, each text
weighted by how often the replicate drew it (a weighted contingency table), and averaged over splits as the
tables do. A contrast is paired: both sides (model A and B, a method's seeds and its base) see the same
replicate, so what the two share through their texts cancels. No linear model and no overlap factor: the
splits' overlap is in the replicates, since a text drawn twice counts twice in every split that holds it.

What the replicates cannot see, because the predictions are held fixed, is added beside them
(:func:`contrast_test`): the split-level noise (the clustering's own noise and the draw of a split's texts),
independent across splits, per split kind the larger of the restarts' variance / R (each split's states; R >
1) and the kind's spread of per-split differences less the spread the text replicates already explain (method
of moments; at R = 1 the only estimate); and for a side with several training seeds the variance of its mean
over seeds (seeds - 1 degrees of freedom). The interval and p are a t with Welch-Satterthwaite degrees of
freedom over these parts (:func:`tecb.report.stats._decide`), so p < 1 - confidence exactly when the interval
excludes 0, and p is never 0. docs/statistics.md says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tecb.report import stats

#: the tables' scale: V-measure x 100
SCALE = 100.0


def v_measure_tables(tables: np.ndarray) -> np.ndarray:
    """V-measure of each weighted contingency table of ``tables`` (... x labels x clusters), as scikit-learn's
    ``v_measure_score`` for integer counts (homogeneity 1 with one label, completeness 1 with one cluster)."""
    from scipy.special import xlogy

    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(-2, -1))
    safe = np.where(n > 0, n, 1.0)
    pl, pc = t.sum(-1) / safe[..., None], t.sum(-2) / safe[..., None]
    h_l, h_c = -xlogy(pl, pl).sum(-1), -xlogy(pc, pc).sum(-1)
    joint = t / safe[..., None, None]
    outer = pl[..., :, None] * pc[..., None, :]
    mutual = np.where(joint > 0, xlogy(joint, joint) - xlogy(joint, np.where(outer > 0, outer, 1.0)), 0.0)
    mutual = np.maximum(mutual.sum(axis=(-2, -1)), 0.0)
    eps = 1e-12
    hom = np.where(h_l > eps, mutual / np.where(h_l > eps, h_l, 1.0), 1.0)
    com = np.where(h_c > eps, mutual / np.where(h_c > eps, h_c, 1.0), 1.0)
    total = hom + com
    return np.where(total > 0, 2 * hom * com / np.where(total > 0, total, 1.0), 0.0)


def _codes(values) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1 if codes.size else 0


def split_scores(weights: np.ndarray, *, members: np.ndarray, labels, clusters) -> np.ndarray:
    """One split's V-measure under each replicate's text ``weights`` (replicates x pool texts): ``members``
    are the split's texts as positions in the pool, ``labels`` their true labels, ``clusters`` their predicted
    clusters (states x texts, or one row). Returns the states' mean per replicate and each state's value
    under unit weights (the observed scores)."""
    members = np.asarray(members)
    lab, n_lab = _codes(labels)
    states = np.atleast_2d(np.asarray(clusters))
    if states.shape[1] != members.size or lab.size != members.size:
        raise ValueError(f"a split of {members.size} texts has {lab.size} labels and {states.shape[1]} clusters")
    w = np.asarray(weights, dtype=float)[:, members]
    w = np.vstack([np.ones((1, members.size)), w])  # row 0: the observed (unit) weights
    rows = np.arange(w.shape[0])[:, None]
    values = np.empty((states.shape[0], w.shape[0]))
    for s, row in enumerate(states):
        clu, n_clu = _codes(row)
        cells = n_lab * n_clu
        flat = (rows * cells + (lab * n_clu + clu)[None, :]).ravel()
        table = np.bincount(flat, weights=w.ravel(), minlength=w.shape[0] * cells)
        values[s] = v_measure_tables(table.reshape(w.shape[0], n_lab, n_clu))
    return values[:, 1:].mean(axis=0), values[:, 0]


def resample_weights(pool: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """Multinomial bootstrap weights (``n_resamples`` x ``pool``): how often each of the pool's texts is drawn
    when ``pool`` texts are drawn with replacement."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(pool, np.full(pool, 1.0 / pool), size=n_resamples).astype(float)


def _side(weights, members, labels, side) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One side's (seeds x splits) cells: replicates x seeds x splits, observed seeds x splits, and the
    restarts' variance of each cell's mean (NaN at one state)."""
    seeds = len(side)
    boot = np.empty((weights.shape[0], seeds, len(members)))
    observed, noise = np.empty((seeds, len(members))), np.full((seeds, len(members)), np.nan)
    for i, per_split in enumerate(side):
        if len(per_split) != len(members):
            raise ValueError(f"{len(members)} splits but predictions for {len(per_split)}")
        for j, (m, y, c) in enumerate(zip(members, labels, per_split)):
            boot[:, i, j], states = split_scores(weights, members=m, labels=y, clusters=c)
            observed[i, j] = states.mean()
            if states.size > 1:
                noise[i, j] = states.var(ddof=1) / states.size
    return boot, observed, noise


def _positions(texts: Sequence) -> tuple[list[np.ndarray], int]:
    """Each split's texts as positions in the pool (the union of every split's text ids)."""
    pool = {t: i for i, t in enumerate(dict.fromkeys(t for split in texts for t in np.asarray(split).tolist()))}
    return [np.array([pool[t] for t in np.asarray(split).tolist()], dtype=int) for split in texts], len(pool)


def _split_noise(diff_boot, diff, restart_noise, strata) -> list[tuple[float, float]]:
    """Per split kind: (contribution to the variance of the mean over splits, df) of the noise independent
    across splits: the larger of the restarts' variance / R and the kind's spread less what the replicates
    explain."""
    n_splits = diff.size
    kinds = np.asarray(list(strata) if strata is not None else [None] * n_splits, dtype=object)
    if kinds.size != n_splits:
        raise ValueError(f"{n_splits} splits but {kinds.size} split kinds")
    centred = diff_boot - diff_boot.mean(axis=0)
    parts = []
    for kind in dict.fromkeys(kinds.tolist()):
        idx = np.flatnonzero(kinds == kind)
        weight = idx.size / n_splits
        restarts = float(np.mean(restart_noise[idx])) if np.all(np.isfinite(restart_noise[idx])) else np.nan
        if idx.size < 2:
            if np.isfinite(restarts):
                parts.append((weight**2 * restarts / idx.size, 1e6))
            continue
        spread = float(diff[idx].var(ddof=1))
        explained = float(centred[:, idx].var(axis=1, ddof=1).mean())
        residual = max(spread - explained, 0.0)
        if np.isfinite(restarts) and restarts >= residual:
            parts.append((weight**2 * restarts / idx.size, 1e6))
        else:
            parts.append((weight**2 * residual / idx.size, idx.size - 1.0))
    return parts


def contrast_test(
    a: Sequence,
    b: Sequence | None,
    *,
    texts: Sequence,
    labels: Sequence,
    strata=None,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int,
) -> stats.MeanTest:
    """The paired text-level bootstrap test of the mean over splits of ``a`` minus ``b`` (module docstring).

    ``texts``, ``labels``: per split its text ids and true labels; ``a``, ``b``: per training seed (one for a
    plain model) per split the predicted clusters of those texts (states x texts, or one row); ``b`` None:
    ``a``'s level against 0 (a table cell). ``strata``: each split's kind. Scores as V-measure x 100 (as the tables). Deterministic for a ``seed``."""
    members, pool = _positions(texts)
    if len(labels) != len(members):
        raise ValueError(f"{len(members)} splits but labels for {len(labels)}")
    if not len(a):
        raise ValueError("a has no seeds")
    weights = resample_weights(pool, n_resamples=n_resamples, seed=seed)
    boot_a, obs_a, noise_a = _side(weights, members, labels, a)
    diff_boot, diff = boot_a.mean(axis=1), obs_a.mean(axis=0)
    restart_noise = np.nansum(noise_a, axis=0) / len(a) ** 2 if np.all(np.isfinite(noise_a)) else None
    sides = [obs_a]
    if b is not None:
        boot_b, obs_b, noise_b = _side(weights, members, labels, b)
        diff_boot, diff = diff_boot - boot_b.mean(axis=1), diff - obs_b.mean(axis=0)
        if restart_noise is not None and np.all(np.isfinite(noise_b)):
            restart_noise = restart_noise + noise_b.sum(axis=0) / len(b) ** 2
        else:
            restart_noise = None
        sides.append(obs_b)
    if restart_noise is None:
        restart_noise = np.full(diff.size, np.nan)
    diff_boot, diff, restart_noise = diff_boot * SCALE, diff * SCALE, restart_noise * SCALE**2
    parts = [(float(diff_boot.mean(axis=1).var(ddof=1)), n_resamples - 1.0)]
    parts += _split_noise(diff_boot, diff, restart_noise, strata)
    for side in sides:
        if side.shape[0] > 1:
            means = side.mean(axis=1) * SCALE
            parts.append((float(means.var(ddof=1)) / means.size, means.size - 1.0))
    return stats._decide(float(diff.mean()), parts, confidence)
