"""Which differences between models are real: bootstrap intervals over splits and paired tests (issue 15.3).

The unit of replication is the split: every (model, dataset, configuration) has one score per split, and all
models are clustered on the same splits, so two models are compared *paired*, split by split.

- :func:`bootstrap_interval`: percentile bootstrap interval of the mean over splits (resampling splits with
  replacement). For an average over datasets, splits are resampled within each dataset (a stratified bootstrap).
- :func:`mean_test` (the default test, ``mean``): the mean difference's interval and its two-sided p-value from
  the same resamples, so a mark and its interval cannot disagree; :func:`seeds_mean_test` and
  :func:`contrast_test` add the training seeds' variance (Tables 5-6, the contrasts); :func:`split_overlap`: the
  design effect of splits subsampled from one pool, which widens them (issue 43).
- :func:`paired_pvalue`: one-sided p-value for "the best model is better than this one" from the per-split
  differences: the Wilcoxon signed-rank test (exact for small n; a test of a symmetric shift, not of the mean), a
  sign-flip permutation test (the paired randomisation test; exact enumeration up to 16 splits) or a paired
  bootstrap. Over several datasets (the average column) the permutation and bootstrap tests flip/resample within
  each dataset; Wilcoxon needs one.
- :func:`noise_floor`, :func:`detectable_difference`: the smallest Δ the training seeds can detect.
- :func:`holm`: Holm's step-down adjustment for the comparisons of one column (all models against the best).
- :func:`compare_to_best`: per column, which models are not significantly worse than the best.
- Split kinds (issue 21.2): where a dataset's splits are of different designs (Blurbs: coarse-genre,
  fine-genre and within-genre splits, recorded by its builder as ``split_kinds``), ``strata`` gives each split's
  kind: the bootstrap then resamples splits within each kind (the mean over splits is the kinds' means weighted
  by their split counts, so it is unchanged) and the Wilcoxon test becomes its stratified form (van Elteren:
  signed ranks within each kind, weighted 1/(n_k + 1)). The sign-flip permutation test needs no change (it
  flips each split's own difference). :func:`kind_means`: the mean and interval per kind.

Everything is seeded: the same inputs and seed give the same numbers. No function reads the config.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

KEYS = ["model", "dataset", "reduction", "algorithm"]
TESTS = ("mean", "wilcoxon", "permutation", "bootstrap")
MAX_EXACT_PERMUTATION = 16  # enumerate all 2^n sign flips up to this many splits, else Monte Carlo
AVERAGE = "Average"


@dataclass(frozen=True, kw_only=True)
class Statistics:
    """How a table's differences are tested and its intervals drawn: the paired ``test`` (one of :data:`TESTS`),
    the significance level ``alpha`` (of the Holm-adjusted p-values), the ``confidence`` of the bootstrap
    intervals, the ``n_resamples`` of every bootstrap or Monte Carlo test and the ``seed`` of every resampling."""

    test: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int
    #: dataset -> the :class:`Overlap` of its splits (:func:`split_overlap`); the ``mean`` test and the intervals
    #: of differences use it (absent: splits taken as independent)
    design_effects: Mapping[str, Overlap] | None = None

    @classmethod
    def from_config(cls, statistics: Mapping, *, seed: int, design_effects: Mapping | None = None) -> Statistics:
        """The spec of the config's ``tables.statistics`` section (its ``test``, ``alpha``, ``confidence`` and
        ``n_resamples``; the other keys say what is shown) with the run's ``seed`` and the datasets'
        ``design_effects`` (:func:`tecb.report.tables.design_effects`)."""
        return cls(
            test=statistics["test"],
            alpha=statistics["alpha"],
            confidence=statistics["confidence"],
            n_resamples=statistics["n_resamples"],
            seed=seed,
            design_effects=dict(design_effects or {}),
        )

    def design_effect(self, dataset: str) -> Overlap:
        """The :class:`Overlap` of ``dataset``'s splits (none when not known)."""
        return (self.design_effects or {}).get(dataset, Overlap())


@dataclass(frozen=True)
class Overlap:
    """What resampling a dataset's splits as independent misses when they are subsamples of one pool
    (:func:`split_overlap`): the ``design_effect`` (true variance of the mean over splits / the variance the
    split bootstrap sees, >= 1) and ``df_scale`` (effective / nominal degrees of freedom of that variance, <= 1:
    overlapping splits vary together, so their spread is a poorer estimate)."""

    design_effect: float = 1.0
    df_scale: float = 1.0


def _single(values) -> bool:
    """True when ``values`` is one array of per-split values, not a list of them (one per dataset)."""
    return isinstance(values, (np.ndarray, pd.Series)) or (
        isinstance(values, Sequence) and len(values) > 0 and np.isscalar(values[0])
    )


def _blocks(values) -> list[np.ndarray]:
    """One array per dataset (a single array or a list of them); NaN-free, float64."""
    if _single(values):
        values = [values]
    blocks = [np.asarray(b, dtype=float) for b in values]
    if not blocks or any(b.size == 0 for b in blocks):
        raise ValueError("every block needs at least one value")
    if any(np.isnan(b).any() for b in blocks):
        raise ValueError("values contain NaN")
    return blocks


def _strata_of(values, strata) -> list[list[tuple[np.ndarray, float]]]:
    """Per block of ``values``, its strata as (values, weight = stratum size / block size). ``strata``: for one
    array of values, one kind per value (or None); for a list of arrays, a list of those. No strata: one
    stratum of weight 1 per block."""
    blocks = _blocks(values)
    if strata is None:
        strata = [None] * len(blocks)
    elif _single(values):
        strata = [strata]
    if len(strata) != len(blocks):
        raise ValueError(f"{len(blocks)} blocks of values but {len(strata)} of split kinds")
    out = []
    for b, kinds in zip(blocks, strata):
        if kinds is None:
            out.append([(b, 1.0)])
            continue
        kinds = np.asarray(list(kinds), dtype=object)
        if kinds.size != b.size:
            raise ValueError(f"{b.size} values but {kinds.size} split kinds")
        out.append([(b[kinds == k], float(np.sum(kinds == k)) / b.size) for k in dict.fromkeys(kinds.tolist())])
    return out


def _per_block(values, strata):
    """``strata`` as one entry per block of ``values`` (None stays None)."""
    if strata is None:
        return None
    return [strata] if _single(values) else list(strata)


def _boot_means(blocks: list[np.ndarray], n_resamples: int, rng: np.random.Generator, strata=None) -> np.ndarray:
    """``n_resamples`` bootstrap replicates of the mean over blocks of each block's mean; with ``strata`` (one
    per block), each block's splits are resampled within their stratum and its mean is the strata means
    weighted by size."""
    out = np.zeros(n_resamples)
    for parts in _strata_of(blocks, strata):
        for b, weight in parts:
            idx = rng.integers(0, b.size, size=(n_resamples, b.size))
            out += weight * b[idx].mean(axis=1)
    return out / len(blocks)


def bootstrap_interval(
    values, *, strata=None, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one score per split).

    ``values`` may also be a list of arrays, one per dataset: the interval is then for the mean over datasets of
    each dataset's mean, resampling splits within each dataset. ``strata``: each split's kind (one array, or one
    per dataset, None where a dataset has one design): splits are then resampled within their kind. A single
    split gives a zero-width interval.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    blocks = _blocks(values)
    means = _boot_means(blocks, n_resamples, np.random.default_rng(seed), _per_block(values, strata))
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)


def seeds_bootstrap_interval(
    values, *, strata=None, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> tuple[float, float]:
    """Percentile interval of the mean of ``values`` (seeds x splits: one row per training seed) by a two-level
    bootstrap: each replicate draws the seeds with replacement and the splits with replacement (within their kind,
    ``strata``: one kind per split, as for :func:`bootstrap_interval`), and averages the drawn splits' mean over the
    drawn seeds. So the interval carries both the splits' and the training seeds' variance. One seed: exactly
    :func:`bootstrap_interval` of its row."""
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"values must be a non-empty seeds x splits matrix, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError("values contain NaN")
    if matrix.shape[0] == 1:
        return bootstrap_interval(matrix[0], strata=strata, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    n_seeds, n_splits = matrix.shape
    drawn = rng.integers(0, n_seeds, size=(n_resamples, n_seeds))
    weights = np.zeros((n_resamples, n_seeds))
    np.add.at(weights, (np.arange(n_resamples)[:, None], drawn), 1.0 / n_seeds)
    per_split = weights @ matrix  # (replicates, splits): each split's mean over the drawn seeds
    means = np.zeros(n_resamples)
    for idx, weight in _split_strata(n_splits, strata):
        picks = idx[rng.integers(0, idx.size, size=(n_resamples, idx.size))]
        means += weight * np.take_along_axis(per_split, picks, axis=1).mean(axis=1)
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)


def _split_strata(n_splits: int, strata) -> list[tuple[np.ndarray, float]]:
    """(split indices, weight = share of the splits) per kind; no strata: one kind."""
    if strata is None:
        return [(np.arange(n_splits), 1.0)]
    kinds = np.asarray(list(strata), dtype=object)
    if kinds.size != n_splits:
        raise ValueError(f"{n_splits} splits but {kinds.size} split kinds")
    return [(np.flatnonzero(kinds == k), float(np.sum(kinds == k)) / n_splits) for k in dict.fromkeys(kinds.tolist())]


def seeds_paired_pvalue(diffs, *, strata=None, test: str = "mean", n_resamples: int = 10_000, seed: int) -> float:
    """Two-sided p-value for "training changed the score" from per-(seed, split) differences (adapted minus base;
    one row per training seed). ``test: mean``: :func:`seeds_mean_test`'s (seeds and splits resampled). The other
    tests: an intersection-union test over the seeds: the change is called significant in a
    direction only if every seed's paired test over splits (:func:`paired_pvalue`, stratified by ``strata``) is,
    so ``p = 2 * min(max_s p_s(up), max_s p_s(down))``; one seed gives the usual two-sided ``2 * min(up, down)``.
    A seed whose training went the other way keeps the row from being marked."""
    matrix = np.atleast_2d(np.asarray(diffs, dtype=float))
    if test == "mean":
        return seeds_mean_test(matrix, strata=strata, n_resamples=n_resamples, seed=seed).p_value
    up = max(paired_pvalue(row, strata=strata, test=test, n_resamples=n_resamples, seed=seed) for row in matrix)
    down = max(paired_pvalue(-row, strata=strata, test=test, n_resamples=n_resamples, seed=seed) for row in matrix)
    return float(min(1.0, 2 * min(up, down)))


@dataclass(frozen=True)
class MeanTest:
    """A mean difference with its interval and the two-sided p-value of "the mean is 0", both from the same
    resamples (:func:`mean_test`): ``p_value < 1 - confidence`` exactly when ``[ci_low, ci_high]`` excludes 0.
    ``df``: the degrees of freedom of the variance (Welch-Satterthwaite over the resampled levels; 0: none,
    then the interval is unbounded and p is 1)."""

    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    df: float


def _cell_deviations(
    blocks, strata, n_resamples: int, rng, design_effect=None
) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """Bootstrap deviations of the mean over blocks of each block's (stratified) mean, each (block, stratum)
    cell's deviation scaled by sqrt(n / (n - 1)) so that its variance is the unbiased one, and by the square root
    of its block's design effect, its degrees of freedom by the block's ``df_scale`` (``design_effect``: an
    :class:`Overlap`, or one per block, None: none); and per cell its (variance of the mean, degrees of freedom)
    for Welch-Satterthwaite."""
    dev, parts = np.zeros(n_resamples), []
    cells = _strata_of(blocks, strata)
    if design_effect is None or isinstance(design_effect, Overlap):
        design_effect = [design_effect or Overlap()] * len(cells)
    if len(design_effect) != len(cells):
        raise ValueError(f"{len(cells)} blocks of values but {len(design_effect)} overlaps")
    for block, overlap in zip(cells, design_effect):
        effect, df_scale = overlap.design_effect, overlap.df_scale
        if not (effect >= 1 and 0 < df_scale <= 1):
            raise ValueError(f"a design effect must be >= 1 and a df scale in (0, 1], got {overlap}")
        for values, weight in block:
            w, n = weight / len(cells), values.size
            idx = rng.integers(0, n, size=(n_resamples, n))
            if n > 1:
                dev += w * (values[idx].mean(axis=1) - values.mean()) * np.sqrt(effect * n / (n - 1))
                parts.append((effect * w**2 * float(values.var(ddof=1)) / n, df_scale * (n - 1.0)))
    return dev, parts


def _decide(observed: float, dev: np.ndarray, parts, confidence: float) -> MeanTest:
    """The interval and p-value of ``observed + dev`` (the resampled means): the percentile interval at the
    levels of a t quantile with the Welch-Satterthwaite degrees of freedom of ``parts`` (Hesterberg's expanded
    percentile interval, so that few splits do not make it too narrow), and p its inversion: the smallest level at
    which the interval, so widened, would exclude 0."""
    from scipy.stats import norm
    from scipy.stats import t as student

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    total = sum(v for v, _ in parts)
    df_info = sum(d for _, d in parts)
    if df_info == 0:
        return MeanTest(mean=observed, ci_low=-np.inf, ci_high=np.inf, p_value=1.0, df=0.0)
    df = total**2 / sum(v**2 / d for v, d in parts) if total > 0 else df_info
    reps = np.sort(observed + dev)
    n = reps.size
    tq = float(student.ppf(1 - (1 - confidence) / 2, df))
    k = min(max(int(np.ceil(n * norm.cdf(-tq))) - 1, 0), (n - 1) // 2)
    low, high = float(reps[k]), float(reps[n - 1 - k])
    tail = min(int(np.sum(reps <= 0)), int(np.sum(reps >= 0))) / n
    p = 0.0 if tail == 0 else min(1.0, 2 * float(student.sf(-norm.ppf(tail), df)))
    return MeanTest(mean=observed, ci_low=low, ci_high=high, p_value=p, df=float(df))


def mean_test(
    values, *, strata=None, design_effect=None, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> MeanTest:
    """The mean of ``values`` (per-split differences, or scores) with its interval and the two-sided p-value of
    "the mean is 0", from one set of bootstrap resamples of the splits (within each dataset and each split kind,
    as :func:`bootstrap_interval`), so the two cannot disagree: ``p < 1 - confidence`` exactly when the interval
    excludes 0. ``values``, ``strata``: as for :func:`bootstrap_interval`. Small samples: each cell's resampled
    deviations are scaled to the unbiased variance and the percentile levels are those of a t quantile
    (Welch-Satterthwaite degrees of freedom), so that the test keeps its level with 8-10 splits.
    ``design_effect`` (an :class:`Overlap`, or one per dataset; :func:`split_overlap`): where splits are
    subsamples of one pool, the factor by which the variance of the mean exceeds what resampling splits as
    independent sees (the resampled deviations are widened by its square root) and the share of degrees of
    freedom left."""
    blocks = _blocks(values)
    tol = 1e-12 * max(1.0, max(float(np.abs(b).max()) for b in blocks))
    blocks = [np.where(np.abs(b) > tol, b, 0.0) for b in blocks]  # float noise counts as a tie
    observed = float(np.mean([b.mean() for b in blocks]))
    rng = np.random.default_rng(seed)
    dev, parts = _cell_deviations(blocks, _per_block(values, strata), n_resamples, rng, design_effect)
    return _decide(observed, dev, parts, confidence)


def _seeds_matrix(values, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"{name} must be a non-empty seeds x splits matrix, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError(f"{name} contain NaN")
    return matrix


def seeds_mean_test(
    values, *, strata=None, design_effect=None, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> MeanTest:
    """:func:`mean_test` of a seeds x splits matrix (one row per training seed) with the seed level in it: each
    resample adds to a bootstrap of the splits (of the seeds' mean per split, within kinds) an independent normal
    deviation with the unbiased variance of the mean of the seeds' means (3 seeds are too few to resample: a
    bootstrap of 3 keeps 2/3 of their variance and cannot reach beyond them), and the degrees of freedom combine
    both levels (Welch-Satterthwaite: with 3 seeds whose spread dominates, about 2).
    The seed-by-split noise is counted in both levels, so the interval errs wide. One seed: :func:`mean_test`
    of its row (the seeds' variance is not estimated; the tables say "1 seed")."""
    matrix = _seeds_matrix(values, "values")
    draws = {"strata": strata, "design_effect": design_effect, "confidence": confidence, "n_resamples": n_resamples}
    if matrix.shape[0] == 1:
        return mean_test(matrix[0], seed=seed, **draws)
    return contrast_test(matrix, np.zeros((1, matrix.shape[1])), seed=seed, **draws)


def contrast_test(
    a, b, *, strata=None, design_effect=None, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> MeanTest:
    """The mean of ``a`` minus the mean of ``b`` (seeds x splits matrices on the same splits, e.g. two training
    methods, or a method and its base model as one row), with the interval and two-sided p of
    :func:`seeds_mean_test`: the splits' bootstrap of the per-split difference of the seeds' means, plus for each
    side with several seeds a normal deviation with the unbiased variance of its mean over seeds (the two sides'
    seeds are independent trainings, not pairs)."""
    a, b = _seeds_matrix(a, "a"), _seeds_matrix(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a has {a.shape[1]} splits but b {b.shape[1]}")
    rng = np.random.default_rng(seed)
    blocks = [a.mean(axis=0) - b.mean(axis=0)]
    dev, parts = _cell_deviations(blocks, _per_block(blocks[0], strata), n_resamples, rng, design_effect)
    for side in (a, b):
        if side.shape[0] > 1:
            means = side.mean(axis=1)
            var = float(means.var(ddof=1)) / means.size
            dev = dev + rng.standard_normal(n_resamples) * np.sqrt(var)
            parts = parts + [(var, means.size - 1.0)]
    return _decide(float(blocks[0].mean()), dev, parts, confidence)


def split_overlap(members: Sequence, strata=None) -> Overlap:
    """How much the variance of the mean over splits exceeds what the split bootstrap sees, when the splits are
    subsamples of one pool of texts (``members``: one collection of text ids per split; ``strata``: each split's
    kind or None, as the resampling is stratified).

    Model: a split's score difference is the mean of a per-text quantity of variance σ² over its texts, so two
    splits' differences covary as σ² |s ∩ t| / (|s| |t|) (the matrix C). The mean over S splits then has
    variance σ² 1'C1 / S², while the stratified split bootstrap (unbiased-scaled) expects
    σ² Σ_k (S_k/S)² (tr C_k - 1'C_k1 / S_k) / (S_k (S_k - 1)). Their ratio, at least 1: disjoint splits of equal
    size give 1; heavily overlapping subsamples give much more (their differences agree because they share texts,
    not because the result would replicate on new texts). Clustering noise of a split is independent across
    splits and not in the model, so where it dominates the correction errs wide. ``df_scale``: the
    Satterthwaite degrees of freedom of the bootstrap's variance under C over those under independence."""
    sets = [set(np.asarray(list(m)).tolist()) for m in members]
    n_splits = len(sets)
    if n_splits == 0 or any(not m for m in sets):
        raise ValueError("every split needs at least one text")
    sizes = np.array([len(m) for m in sets], dtype=float)
    shared = np.array([[len(a & b) for b in sets] for a in sets], dtype=float)
    c = shared / np.outer(sizes, sizes)
    kinds = np.asarray(list(strata) if strata is not None else [0] * n_splits, dtype=object)
    if kinds.size != n_splits:
        raise ValueError(f"{n_splits} splits but {kinds.size} split kinds")
    form = np.zeros((n_splits, n_splits))  # the bootstrap's variance as a quadratic form of the differences
    for k in dict.fromkeys(kinds.tolist()):
        idx = np.flatnonzero(kinds == k)
        if idx.size > 1:
            centre = np.eye(idx.size) - 1.0 / idx.size
            form[np.ix_(idx, idx)] = (idx.size / n_splits) ** 2 * centre / (idx.size * (idx.size - 1))
    seen = float(np.trace(form @ c))
    if seen <= 0:
        return Overlap()

    def dof(cov):
        m = form @ cov
        return float(np.trace(m) ** 2 / np.trace(m @ m))

    return Overlap(
        design_effect=max(1.0, float(c.sum() / n_splits**2 / seen)),
        df_scale=min(1.0, dof(c) / dof(np.diag(np.diag(c)))),
    )


def detectable_difference(se: float, df: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided t test at ``alpha`` detects with probability ``power`` when the
    difference is estimated with standard error ``se`` on ``df`` degrees of freedom: (t_{1-α/2} + t_power) · se
    (the far tail neglected). NaN without degrees of freedom."""
    from scipy.stats import t as student

    if not df > 0 or not np.isfinite(se):
        return float("nan")
    return float((student.ppf(1 - alpha / 2, df) + student.ppf(power, df)) * se)


def noise_floor(per_seed: pd.DataFrame, *, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """The noise floor per dataset from seed-to-seed variation: ``per_seed`` has one row per (arm, dataset, seed)
    with ``score`` (an arm's mean over splits for one training seed, or one untrained control's). The seeds' SD is
    pooled over the arms of a dataset (each arm's variance about its own mean, weighted by its degrees of freedom);
    ``vs_base``: the smallest Δ of an arm of ``seeds`` seeds against a fixed base, ``vs_arm``: between two such
    arms, each a t test with the pooled SD and its degrees of freedom ``df`` (:func:`detectable_difference`,
    ``alpha``, ``power``). Split sampling is not in it (it adds to it); arms with one seed give no degrees of
    freedom."""
    rows = []
    for dataset, part in per_seed.groupby("dataset", sort=False):
        groups = [g.score.to_numpy(float) for _, g in part.groupby("arm", sort=False)]
        df = float(sum(g.size - 1 for g in groups))
        ss = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
        n = int(round(np.median([g.size for g in groups])))
        sd = np.sqrt(ss / df) if df > 0 else float("nan")
        rows.append(
            {"dataset": dataset, "arms": len(groups), "seeds": n, "sd_seeds": sd, "df": df}
            | {"vs_base": detectable_difference(sd / np.sqrt(n), df, alpha=alpha, power=power)}
            | {"vs_arm": detectable_difference(sd * np.sqrt(2 / n), df, alpha=alpha, power=power)}
        )
    return pd.DataFrame(rows, columns=["dataset", "arms", "seeds", "sd_seeds", "df", "vs_base", "vs_arm"])


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as given); controls the family-wise error rate."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def _stratified_signed_rank(d: np.ndarray, kinds: np.ndarray, n_resamples: int, rng) -> float:
    """One-sided p-value of the stratified signed-rank test (van Elteren): per kind, the sum of the ranks of |d|
    (within the kind) of the positive differences, weighted 1/(n_k + 1); its null distribution by flipping
    the signs of the splits (all 2^n flips up to 16 splits, else ``n_resamples`` seeded draws)."""
    from scipy.stats import rankdata

    keep = d != 0
    d, kinds = d[keep], kinds[keep]
    ranks, weights = np.zeros(d.size), np.zeros(d.size)
    for k in dict.fromkeys(kinds.tolist()):
        mask = kinds == k
        ranks[mask] = rankdata(np.abs(d[mask]))
        weights[mask] = 1.0 / (mask.sum() + 1)
    score = ranks * weights
    observed = float(score[d > 0].sum())
    n = d.size
    if n <= MAX_EXACT_PERMUTATION:
        positive = np.array(list(itertools.product((True, False), repeat=n)))
    else:
        positive = rng.random((n_resamples, n)) < 0.5
    stat = (positive * score).sum(axis=1)
    hits = int(np.sum(stat >= observed - 1e-12))
    if n <= MAX_EXACT_PERMUTATION:
        return hits / len(positive)
    return (1 + hits) / (n_resamples + 1)


def paired_pvalue(diffs, *, strata=None, test: str = "mean", n_resamples: int = 10_000, seed: int) -> float:
    """One-sided p-value for H1 "mean difference > 0" from per-split differences (best minus other); ``test:
    mean`` gives the two-sided p-value of :func:`mean_test` instead (the one its 95 % interval agrees with).
    ``wilcoxon`` tests another hypothesis: that the differences are symmetric about 0 (a median-like shift), not
    that their mean is 0.

    ``diffs``: one array of per-split differences, or a list of them (one per dataset; the statistic is then the
    mean over datasets of each dataset's mean difference). All differences zero gives 1. ``strata``: each
    split's kind (as for :func:`bootstrap_interval`): the bootstrap test resamples within kinds and the Wilcoxon
    test ranks within kinds (van Elteren); the sign-flip permutation test is the same with or without.
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; one of {TESTS}")
    if test == "mean":
        return mean_test(diffs, strata=strata, n_resamples=n_resamples, seed=seed).p_value
    blocks = _blocks(diffs)
    tol = 1e-12 * max(1.0, max(float(np.abs(b).max()) for b in blocks))
    blocks = [np.where(np.abs(b) > tol, b, 0.0) for b in blocks]  # float noise counts as a tie
    if all(not b.any() for b in blocks):
        return 1.0
    observed = float(np.mean([b.mean() for b in blocks]))
    if test == "wilcoxon":
        if len(blocks) != 1:
            raise ValueError("the Wilcoxon test takes one dataset's differences; use 'permutation' for several")
        kinds = _per_block(diffs, strata)
        if kinds is not None and kinds[0] is not None and len(set(kinds[0])) > 1:
            kinds = np.asarray(list(kinds[0]), dtype=object)
            return _stratified_signed_rank(blocks[0], kinds, n_resamples, np.random.default_rng(seed))
        from scipy.stats import wilcoxon

        d = blocks[0][blocks[0] != 0]
        return float(wilcoxon(d, alternative="greater").pvalue)
    rng = np.random.default_rng(seed)
    if test == "bootstrap":
        means = _boot_means(blocks, n_resamples, rng, _per_block(diffs, strata))
        return float((1 + np.sum(means <= tol)) / (n_resamples + 1))
    # sign-flip permutation: under H0 each split's difference is equally likely to have either sign
    n = sum(b.size for b in blocks)
    if n <= MAX_EXACT_PERMUTATION:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = rng.choice((1.0, -1.0), size=(n_resamples, n))
    stat, start = np.zeros(len(signs)), 0
    for b in blocks:
        stat += (signs[:, start : start + b.size] * b).mean(axis=1)
        start += b.size
    stat /= len(blocks)
    hits = int(np.sum(stat >= observed - tol))
    if n <= MAX_EXACT_PERMUTATION:
        return hits / len(signs)
    return (1 + hits) / (n_resamples + 1)


def compare_to_best(
    per_model: Mapping[str, Sequence[pd.Series]],
    *,
    kinds: Sequence[Mapping | None] | None = None,
    test: str = "mean",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
    design_effects: Sequence[Overlap] | None = None,
) -> pd.DataFrame:
    """All models of one column against the column's best, paired on splits, Holm-adjusted.

    ``per_model``: model -> one Series per dataset (index = split id, value = score); one Series for a dataset
    column, one per dataset for the average column. The best model is the one with the highest mean (over
    datasets of per-dataset means); ties go to the first. Each other model is compared on the splits both have.
    ``kinds``: per dataset (in the order of the Series), split id -> split kind, or None (one design): the test
    is then stratified by kind (:func:`paired_pvalue`). ``design_effects``: per dataset, the variance inflation
    of its overlapping splits (:class:`Overlap`, :func:`split_overlap`; None: none), used by the ``mean`` test and the
    difference's interval.

    Returns one row per model: ``mean``, ``best`` (bool), ``diff`` (best mean - this mean, on the shared splits)
    with its ``confidence`` interval ``diff_low``, ``diff_high`` (:func:`mean_test`, whatever the test),
    ``p_value``, ``p_holm`` (NaN for the best) and ``not_worse`` (True for the best and for every model whose
    Holm-adjusted p-value is >= ``alpha``). With ``test: mean`` and ``confidence = 1 - alpha`` a model marked
    worse has a difference interval above 0 (Holm only removes marks).
    """
    models = list(per_model)
    columns = ["model", "mean", "best", "diff", "diff_low", "diff_high", "p_value", "p_holm", "not_worse"]
    if not models:
        return pd.DataFrame(columns=columns)
    means = {m: float(np.mean([s.mean() for s in per_model[m]])) for m in models}
    best = max(models, key=lambda m: means[m])
    rows, pvals = [], []
    for m in models:
        if m == best:
            rows.append(
                {"model": m, "mean": means[m], "best": True, "diff": 0.0, "diff_low": 0.0, "diff_high": 0.0}
                | {"p_value": np.nan}
            )
            continue
        diffs, strata = [], []
        for i, (sb, so) in enumerate(zip(per_model[best], per_model[m], strict=True)):
            joined = pd.concat([sb, so], axis=1, join="inner").dropna()
            if joined.empty:
                raise ValueError(f"models {best!r} and {m!r} share no split")
            diffs.append(joined.iloc[:, 0].to_numpy(float) - joined.iloc[:, 1].to_numpy(float))
            block_kinds = kinds[i] if kinds is not None else None
            strata.append([block_kinds[s] for s in joined.index] if block_kinds else None)
        column_test = test if len(diffs) == 1 or test != "wilcoxon" else "permutation"
        stratified = strata if any(k is not None for k in strata) else None
        draws = {"strata": stratified, "n_resamples": n_resamples, "seed": seed}
        effect = list(design_effects) if design_effects is not None else None
        interval = mean_test(diffs, confidence=confidence, design_effect=effect, **draws)
        p = interval.p_value if column_test == "mean" else paired_pvalue(diffs, test=column_test, **draws)
        pvals.append(p)
        rows.append(
            {
                "model": m,
                "mean": means[m],
                "best": False,
                "diff": float(np.mean([d.mean() for d in diffs])),
                "diff_low": interval.ci_low,
                "diff_high": interval.ci_high,
                "p_value": p,
            }
        )
    adjusted = iter(holm(pvals))
    for row in rows:
        row["p_holm"] = np.nan if row["best"] else float(next(adjusted))
        row["not_worse"] = bool(row["best"] or row["p_holm"] >= alpha)
    return pd.DataFrame(rows, columns=columns)


def _per_split(scores: pd.DataFrame, metric: str) -> dict[tuple, pd.Series]:
    """(model, dataset, reduction, algorithm) -> Series split -> score (NaN rows dropped)."""
    out = {}
    for key, group in scores.groupby(KEYS, sort=False):
        s = group.set_index("split")[metric].astype(float).dropna()
        if not s.empty:
            out[key] = s.sort_index()
    return out


def _kinds_of(split_kinds, dataset, splits) -> list | None:
    """The kind of each of ``splits`` of ``dataset`` (``split_kinds``: dataset -> split -> kind), or None."""
    kinds = (split_kinds or {}).get(dataset)
    if not kinds:
        return None
    missing = [s for s in splits if s not in kinds]
    if missing:
        raise ValueError(f"{dataset}: split(s) {missing[:5]} have no recorded split kind")
    return [kinds[s] for s in splits]


def intervals(
    scores: pd.DataFrame,
    metric: str = "v_measure",
    *,
    split_kinds: Mapping[str, Mapping[int, str]] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
) -> pd.DataFrame:
    """Per (model, dataset, reduction, algorithm): mean, std, n_splits and the bootstrap interval of the mean
    (stratified by split kind where ``split_kinds`` has the dataset)."""
    rows = []
    for key, s in _per_split(scores, metric).items():
        lo, hi = bootstrap_interval(
            s.to_numpy(),
            strata=_kinds_of(split_kinds, key[1], s.index),
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
        rows.append(
            dict(zip(KEYS, key))
            | {
                "metric": metric,
                "mean": float(s.mean()),
                "std": float(s.std()) if s.size > 1 else np.nan,
                "n_splits": int(s.size),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return pd.DataFrame(rows, columns=KEYS + ["metric", "mean", "std", "n_splits", "ci_low", "ci_high"])


def table_statistics(
    scores: pd.DataFrame,
    *,
    algorithm: str,
    reduction: str,
    datasets: Sequence[str],
    metric: str = "v_measure",
    statistics: Statistics,
    averages: Mapping[str, Sequence[str]] | None = None,
    split_kinds: Mapping[str, Mapping[int, str]] | None = None,
) -> pd.DataFrame:
    """Table 2's statistics: per (column, model) the mean, bootstrap interval and the comparison with the best.

    Columns are ``datasets`` and the average columns of ``averages`` (name -> the datasets it averages; default
    ``{"Average": datasets}``), each only over models with a result on all its datasets. Returns a long frame:
    ``column, model, mean, ci_low, ci_high, n_splits, best, diff, p_value, p_holm, not_worse, test`` (scores in
    the metric's own scale, 0..1). ``statistics``: the test, its level and the intervals' (:class:`Statistics`).
    ``split_kinds`` (dataset -> split id -> kind): the datasets whose splits are of different designs; their
    intervals and tests are stratified by kind.
    """
    sub = scores[(scores.algorithm == algorithm) & (scores.reduction == reduction)]
    per = _per_split(sub, metric)
    sizes = _per_split(sub, "n_texts") if "n_texts" in sub else {}
    models = list(dict.fromkeys(k[0] for k in per))
    out = []

    def weighted(model, column_datasets) -> float:
        """The mean over datasets of each dataset's mean over splits weighted by split size (NaN: no sizes)."""
        keys = [(model, d, reduction, algorithm) for d in column_datasets]
        if not all(k in sizes for k in keys):
            return np.nan
        joined = [pd.concat([per[k], sizes[k]], axis=1, join="inner").to_numpy(float) for k in keys]
        return float(np.mean([np.average(j[:, 0], weights=j[:, 1]) for j in joined]))

    def column(name, series_by_model, column_test, column_datasets):
        if not series_by_model:
            return
        kinds = [(split_kinds or {}).get(d) for d in column_datasets]
        cmp = compare_to_best(
            series_by_model,
            kinds=kinds if any(kinds) else None,
            test=column_test,
            alpha=statistics.alpha,
            confidence=statistics.confidence,
            n_resamples=statistics.n_resamples,
            seed=statistics.seed,
            design_effects=[statistics.design_effect(d) for d in column_datasets],
        )
        for row in cmp.to_dict("records"):
            series = series_by_model[row["model"]]
            strata = [_kinds_of(split_kinds, d, s.index) for d, s in zip(column_datasets, series)]
            lo, hi = bootstrap_interval(
                [s.to_numpy() for s in series],
                strata=strata if any(k is not None for k in strata) else None,
                confidence=statistics.confidence,
                n_resamples=statistics.n_resamples,
                seed=statistics.seed,
            )
            n = sum(len(s) for s in series_by_model[row["model"]])
            out.append({"column": name, **row, "ci_low": lo, "ci_high": hi, "n_splits": n, "test": column_test})
            out[-1]["size_weighted"] = weighted(row["model"], column_datasets)

    for d in datasets:
        column(
            d,
            {m: [per[(m, d, reduction, algorithm)]] for m in models if (m, d, reduction, algorithm) in per},
            statistics.test,
            [d],
        )
    for name, group in (averages if averages is not None else {AVERAGE: datasets}).items():
        complete = [m for m in models if all((m, d, reduction, algorithm) in per for d in group)]
        if group:
            column(
                name,
                {m: [per[(m, d, reduction, algorithm)] for d in group] for m in complete},
                "permutation" if statistics.test == "wilcoxon" else statistics.test,
                list(group),
            )
    cols = [
        "column",
        "model",
        "mean",
        "ci_low",
        "ci_high",
        "n_splits",
        "best",
        "diff",
        "diff_low",
        "diff_high",
        "p_value",
        "p_holm",
        "not_worse",
        "test",
        "size_weighted",
    ]
    return pd.DataFrame(out, columns=cols)


def describe_test(
    test: str, alpha: float, confidence: float, intervals: bool = True, stratified: Sequence[str] = ()
) -> str:
    """The footnote explaining the marks and intervals of a table; ``stratified``: the datasets whose splits
    are resampled (and, with Wilcoxon, ranked) within their split kind."""
    name = {
        "mean": "two-sided paired test of the mean difference over splits, the inversion of the bootstrap interval "
        "of that difference (tables/table2_statistics.csv: diff_low, diff_high), so it agrees with the interval; "
        "widened for splits subsampled from one pool (docs/statistics.md)",
        "wilcoxon": "one-sided Wilcoxon signed-rank test on the per-split differences, a test of a symmetric shift "
        "rather than of the mean (the average column: a sign-flip permutation test within each dataset)",
        "permutation": "one-sided paired sign-flip permutation test over the splits",
        "bootstrap": "one-sided paired bootstrap over the splits",
    }[test]
    marks = (
        f"†: not significantly worse than the column's best (bold): {name}, Holm-adjusted over the column's "
        f"comparisons, α = {alpha:g}."
    )
    if stratified:
        marks += (
            f" {', '.join(stratified)}: splits of different designs (coarse-genre, fine-genre, within-genre), so "
            "intervals resample splits within their kind and tests are stratified by kind (Wilcoxon: van Elteren)."
        )
    if not intervals:
        return marks
    return (
        f"[low, high]: {confidence:.0%} bootstrap interval of the mean over splits (resampling splits; for the "
        f"average, within each dataset); (size-weighted w): the mean weighted by split size, where it differs from "
        f"the (unweighted, the paper's) mean by more than the interval's half-width. " + marks
    )


def table_marks(
    table: pd.DataFrame,
    statistics: pd.DataFrame,
    model_names: Mapping[str, str] | None = None,
    decimals: int = 2,
    scale: float = 100.0,
    show_intervals: bool = True,
) -> pd.DataFrame:
    """Suffixes for the cells of a models x columns ``table`` (index = display names): "†" where a model is not
    significantly worse than the column's best (the best itself is bold already), then " [low, high]", then
    " (size-weighted w)" where the mean weighted by split size differs from the (unweighted) mean by more than
    the interval's half-width."""
    names = dict(model_names or {})
    suffix = pd.DataFrame("", index=table.index, columns=table.columns, dtype=object)
    for row in statistics.to_dict("records"):
        name, col = names.get(row["model"], row["model"]), row["column"]
        if name not in suffix.index or col not in suffix.columns or pd.isna(table.at[name, col]):
            continue
        text = "†" if row["not_worse"] and not row["best"] else ""
        if show_intervals:
            text += f" [{row['ci_low'] * scale:.{decimals}f}, {row['ci_high'] * scale:.{decimals}f}]"
        w = row.get("size_weighted", np.nan)
        if pd.notna(w) and abs(w - row["mean"]) > (row["ci_high"] - row["ci_low"]) / 2:
            text += f" (size-weighted {w * scale:.{decimals}f})"
        suffix.at[name, col] = text
    return suffix


def kind_means(
    scores: pd.DataFrame,
    *,
    algorithm: str,
    reduction: str,
    split_kinds: Mapping[str, Mapping[int, str]],
    metric: str = "v_measure",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
) -> pd.DataFrame:
    """Per (model, dataset with split kinds, kind): the mean over that kind's splits and its bootstrap interval.

    Columns ``model, dataset, kind, mean, ci_low, ci_high, n_splits`` (kinds in the order the dataset records
    them); datasets without kinds are left out.
    """
    sub = scores[(scores.algorithm == algorithm) & (scores.reduction == reduction)]
    rows = []
    for (model, dataset, _, _), s in _per_split(sub, metric).items():
        kinds = split_kinds.get(dataset)
        if not kinds:
            continue
        labels = np.asarray(_kinds_of(split_kinds, dataset, s.index), dtype=object)
        for kind in dict.fromkeys(kinds.values()):
            values = s.to_numpy()[labels == kind]
            if values.size == 0:
                continue
            lo, hi = bootstrap_interval(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "kind": kind,
                    "mean": float(values.mean()),
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_splits": int(values.size),
                }
            )
    return pd.DataFrame(rows, columns=["model", "dataset", "kind", "mean", "ci_low", "ci_high", "n_splits"])
