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

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
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
    #: the paired text-level bootstrap over the run's saved predictions (:class:`tecb.report.bootstrap.TablePairs`);
    #: None: none saved, the analytic test of the per-split scores (the fallback, labelled so in the notes)
    pairs: object | None = None

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
    (:func:`split_overlap`), for the text part of a split's variance (the clustering part, independent across
    splits, is not widened). ``design_effect``, ``df_scale``: for all splits as one design (true variance of the
    mean / the variance the splits' spread suggests; effective / nominal degrees of freedom of that spread).
    Per split kind (issue 53: each design its own factor, so disjoint within-genre partitions get 1.0):
    ``kinds`` (in order), ``factors``, ``df_scales`` and ``correlations`` (kinds x kinds: the correlation of two
    kinds' means under the text model, as coarse and fine splits share texts)."""

    design_effect: float = 1.0
    df_scale: float = 1.0
    kinds: tuple = ()
    factors: tuple = ()
    df_scales: tuple = ()
    correlations: tuple = ()

    def of(self, kind) -> tuple[float, float]:
        """(factor, df scale) of the splits of ``kind`` (the whole design's where the kind is not recorded)."""
        if kind in self.kinds:
            i = self.kinds.index(kind)
            return self.factors[i], self.df_scales[i]
        return self.design_effect, self.df_scale

    def correlation(self, kind_a, kind_b) -> float:
        """The text-model correlation of the means of two kinds' splits (0 where not recorded: as the stratified
        bootstrap, which resamples kinds independently)."""
        if kind_a == kind_b:
            return 1.0
        if kind_a in self.kinds and kind_b in self.kinds:
            return float(self.correlations[self.kinds.index(kind_a)][self.kinds.index(kind_b)])
        return 0.0


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
    """A mean difference with its interval and the two-sided p-value of "the mean is 0" (:func:`mean_test`):
    ``mean ± t(df) · se``, and p from the same t, so ``p_value < 1 - confidence`` exactly when
    ``[ci_low, ci_high]`` excludes 0. ``df``: the Welch-Satterthwaite degrees of freedom of the variance (0:
    none, then the interval is unbounded and p is 1); ``se``: the standard error; ``detectable``: the smallest
    true difference this test detects with 80 % power at α = 1 - confidence (:func:`detectable_difference`)."""

    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    df: float
    se: float = float("nan")
    detectable: float = float("nan")


#: the smallest p-value reported: an analytic tail can underflow to 0, and Holm cannot adjust a 0
P_FLOOR = 1e-16


def _cells(values, strata, noise) -> list[list[tuple[object, np.ndarray, float, np.ndarray | None]]]:
    """Per block of ``values``: its strata as (kind, values, weight = stratum size / block size, clustering
    variance of each value or None)."""
    blocks = _blocks(values)
    kinds = _per_block(values, strata) or [None] * len(blocks)
    if noise is None:
        noises = [None] * len(blocks)
    else:
        noises = [np.asarray(n, dtype=float) for n in ([noise] if _single(values) else noise)]
    if len(kinds) != len(blocks) or len(noises) != len(blocks):
        raise ValueError(f"{len(blocks)} blocks of values but {len(kinds)} of split kinds, {len(noises)} of noise")
    out = []
    for b, k, nz in zip(blocks, kinds, noises):
        if nz is not None and nz.shape != b.shape:
            raise ValueError(f"{b.size} values but {nz.size} clustering variances")
        labels = np.asarray([None] * b.size if k is None else list(k), dtype=object)
        if labels.size != b.size:
            raise ValueError(f"{b.size} values but {labels.size} split kinds")
        out.append(
            [
                (
                    kind,
                    b[labels == kind],
                    float(np.sum(labels == kind)) / b.size,
                    None if nz is None else nz[labels == kind],
                )
                for kind in dict.fromkeys(labels.tolist())
            ]
        )
    return out


def _variance_parts(values, strata, design_effect, noise) -> list[tuple[float, float]]:
    """(variance contribution to the mean over blocks of each block's stratified mean, its degrees of freedom)
    per part. Per (block, kind): the splits' unbiased variance less the mean clustering variance of a split
    (``noise``, from the restarts; None: unknown, all of it counted as text variance) is the text part, widened
    by the kind's overlap factor (:class:`Overlap`; its df by the kind's df scale) and correlated with the
    block's other kinds as the overlap says; the clustering part is independent across splits and taken as
    known (many restarts per split)."""
    cells = _cells(values, strata, noise)
    if design_effect is None or isinstance(design_effect, Overlap):
        design_effect = [design_effect or Overlap()] * len(cells)
    if len(design_effect) != len(cells):
        raise ValueError(f"{len(cells)} blocks of values but {len(design_effect)} overlaps")
    parts = []
    for block, overlap in zip(cells, design_effect):
        text = []
        for kind, x, weight, nz in block:
            n, w = x.size, weight / len(cells)
            if n < 2:
                continue  # one split: its variance is not estimated
            clustering = float(nz.mean()) if nz is not None else 0.0
            factor, df_scale = overlap.of(kind)
            if not (factor >= 1 and 0 < df_scale <= 1):
                raise ValueError(
                    f"a design effect (overlap factor) must be >= 1 and a df scale in (0, 1], got {overlap}"
                )
            spread, df_spread = float(x.var(ddof=1)), df_scale * (n - 1.0)
            own = factor * max(spread - clustering, 0.0) / n
            # Welch-Satterthwaite of factor * spread - (factor - 1) * clustering (the restarts' part, from many
            # restarts, taken as known): few degrees of freedom where the text part is small beside the
            # clustering part, so a wide t
            total = own + clustering / n
            df = (n * total) ** 2 / ((factor * spread) ** 2 / df_spread) if spread > 0 else df_spread
            df = min(df_spread, max(df, 1.0))  # at least one degree of freedom, at most the spread's
            text.append((kind, w, own, clustering / n, df))
        for kind, w, var, clustered, df in text:
            shared = sum(w * wl * overlap.correlation(kind, kl) * np.sqrt(var * vl) for kl, wl, vl, _, _ in text)
            parts.append((shared + w**2 * clustered, df))
    return parts


def _decide(observed: float, parts, confidence: float) -> MeanTest:
    """The t interval and two-sided p of ``observed`` with the variance ``parts`` ((contribution, df) each):
    Welch-Satterthwaite degrees of freedom, ``observed ± t(df) · se``, ``p = 2 · P(T > |observed| / se)``
    (at least :data:`P_FLOOR`, never 0). No part with degrees of freedom: unbounded, p 1."""
    from scipy.stats import t as student

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    finite = [(v, d) for v, d in parts if np.isfinite(d)]
    if not finite:
        return MeanTest(mean=observed, ci_low=-np.inf, ci_high=np.inf, p_value=1.0, df=0.0)
    total = float(sum(v for v, _ in parts))
    spread = sum(v**2 / d for v, d in finite if d > 0)
    df = total**2 / spread if spread > 0 else float(sum(d for _, d in finite) or 1e6)
    df = float(min(df, 1e6))
    se = float(np.sqrt(max(total, 0.0)))
    if se == 0:  # no spread at all: the difference is certain
        p = 1.0 if observed == 0 else P_FLOOR
        return MeanTest(mean=observed, ci_low=observed, ci_high=observed, p_value=p, df=df, se=0.0, detectable=0.0)
    tq = float(student.ppf(1 - (1 - confidence) / 2, df))
    p = max(P_FLOOR, min(1.0, 2 * float(student.sf(abs(observed) / se, df))))
    return MeanTest(
        mean=observed,
        ci_low=observed - tq * se,
        ci_high=observed + tq * se,
        p_value=p,
        df=df,
        se=se,
        detectable=detectable_difference(se, df, alpha=1 - confidence),
    )


def mean_test(
    values,
    *,
    strata=None,
    design_effect=None,
    noise=None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
) -> MeanTest:
    """The mean of ``values`` (per-split differences, or scores) with its t interval and two-sided p-value of
    "the mean is 0" (issue 53; analytic, so ``n_resamples`` and ``seed`` are not used: every call is
    deterministic). ``values``, ``strata``: as for :func:`bootstrap_interval` (a list of arrays: the mean over
    datasets of each dataset's mean; kinds: each kind's mean weighted by its split count). The variance of the
    mean has two parts (:func:`_variance_parts`): clustering noise, independent across splits, estimated from
    the restarts (``noise``: each value's clustering variance, the restarts' variance / R; None: R = 1, not
    separable, counted as text variance: wide where clustering noise dominates), and text sampling, the splits'
    spread less the clustering part, widened per split kind by its overlap factor (``design_effect``: an
    :class:`Overlap`, or one per dataset; :func:`split_overlap`). The interval and p come from one t with
    Welch-Satterthwaite degrees of freedom: ``p < 1 - confidence`` exactly when the interval excludes 0."""
    blocks = _blocks(values)
    tol = 1e-12 * max(1.0, max(float(np.abs(b).max()) for b in blocks))
    blocks = [np.where(np.abs(b) > tol, b, 0.0) for b in blocks]  # float noise counts as a tie
    observed = float(np.mean([b.mean() for b in blocks]))
    parts = _variance_parts(blocks if not _single(values) else blocks[0], strata, design_effect, noise)
    return _decide(observed, parts, confidence)


def _seeds_matrix(values, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"{name} must be a non-empty seeds x splits matrix, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError(f"{name} contain NaN")
    return matrix


def seeds_mean_test(
    values,
    *,
    strata=None,
    design_effect=None,
    noise=None,
    confidence: float = 0.95,
    **draws,
) -> MeanTest:
    """:func:`mean_test` of a seeds x splits matrix (one row per training seed) with the seed level in it
    (:func:`contrast_test` against zero). ``noise``: the clustering variance of each cell (seeds x splits), or
    None. One seed: :func:`mean_test` of its row (the seeds' variance is not estimated; the tables say
    "1 seed"). ``draws``: ``seed`` (required) and ``n_resamples``, as :func:`contrast_test` takes them."""
    _check_draws("seeds_mean_test", draws)
    matrix = _seeds_matrix(values, "values")
    options = {"strata": strata, "design_effect": design_effect, "confidence": confidence, **draws}
    if matrix.shape[0] == 1:
        return mean_test(matrix[0], noise=None if noise is None else np.asarray(noise)[0], **options)
    return contrast_test(matrix, np.zeros((1, matrix.shape[1])), noise_a=noise, **options)


def _check_draws(name: str, draws: Mapping) -> None:
    """Raise as Python would for a signature ``*, n_resamples: int = 10_000, seed: int`` given ``draws``."""
    for key in draws:
        if key not in ("n_resamples", "seed"):
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
    if "seed" not in draws:
        raise TypeError(f"{name}() missing 1 required keyword-only argument: 'seed'")


def contrast_test(
    a,
    b,
    *,
    strata=None,
    design_effect=None,
    noise_a=None,
    noise_b=None,
    confidence: float = 0.95,
    **draws,
) -> MeanTest:
    """The mean of ``a`` minus the mean of ``b`` (seeds x splits matrices on the same splits, e.g. two training
    methods, or a method and its base model as one row), with the t interval and two-sided p of
    :func:`mean_test` of the per-split difference of the seeds' means (its clustering variance from
    ``noise_a``/``noise_b``, each cell's, where the restarts give it), plus for each side with several seeds the
    unbiased variance of its mean over seeds, with its seeds - 1 degrees of freedom (the two sides' seeds are
    independent trainings, not pairs). The seed-by-split noise is in both levels, so the interval errs
    slightly wide. ``draws``: ``seed`` (required) and ``n_resamples``, as every test takes them (analytic: not
    used)."""
    _check_draws("contrast_test", draws)
    a, b = _seeds_matrix(a, "a"), _seeds_matrix(b, "b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a has {a.shape[1]} splits but b {b.shape[1]}")
    diff = a.mean(axis=0) - b.mean(axis=0)
    noise = None
    if noise_a is not None or noise_b is not None:
        noise = np.zeros(a.shape[1])
        for side, nz in ((a, noise_a), (b, noise_b)):
            if nz is not None:
                noise = noise + np.asarray(nz, dtype=float).reshape(side.shape).sum(axis=0) / side.shape[0] ** 2
    parts = _variance_parts(diff, strata, design_effect, noise)
    for side in (a, b):
        if side.shape[0] > 1:
            means = side.mean(axis=1)
            parts = parts + [(float(means.var(ddof=1)) / means.size, means.size - 1.0)]
    return _decide(float(diff.mean()), parts, confidence)


def split_overlap(members: Sequence, strata=None) -> Overlap:
    """How much the variance of the mean over splits exceeds what their spread suggests, when the splits are
    subsamples of one pool of texts (``members``: one collection of text ids per split; ``strata``: each split's
    kind or None).

    Model (the text part of a split's score): the mean of a per-text quantity of variance σ² over its texts, so
    two splits covary as σ² |s ∩ t| / (|s| |t|) (the matrix C). Per kind k of S_k splits: their unbiased
    spread expects σ² a_k (a_k = tr(F_k C_k), F_k the centring over S_k - 1) and the kind's mean has variance
    σ² b_kk (b_kl = 1'C_kl 1 / (S_k S_l)); the factor is b_kk S_k / a_k: 1 for disjoint splits of a partition
    (within-genre), much more for heavily overlapping subsamples (their scores agree because they share texts,
    not because the result would replicate on new texts); two kinds' means correlate b_kl / sqrt(b_kk b_ll).
    Clustering noise is not in the model: :func:`mean_test` widens only the text part. ``df_scale``: the
    Satterthwaite degrees of freedom of the spread under C over those under independence. ``design_effect``,
    ``df_scale``: the same for all splits as one design (resampled within kinds)."""
    sets = [set(np.asarray(list(m)).tolist()) for m in members]
    n_splits = len(sets)
    if n_splits == 0 or any(not m for m in sets):
        raise ValueError("every split needs at least one text")
    sizes = np.array([len(m) for m in sets], dtype=float)
    shared = np.array([[len(a & b) for b in sets] for a in sets], dtype=float)
    c = shared / np.outer(sizes, sizes)
    kinds = np.asarray(list(strata) if strata is not None else [None] * n_splits, dtype=object)
    if kinds.size != n_splits:
        raise ValueError(f"{n_splits} splits but {kinds.size} split kinds")
    labels, form, factors, scales, b = _kind_overlaps(c, kinds)
    corr = b / np.sqrt(np.outer(np.diag(b), np.diag(b)))
    seen = float(np.trace(form @ c))
    whole = (
        max(1.0, float(c.sum() / n_splits**2 / seen)) if seen > 0 else 1.0,
        min(1.0, _dof(form, c) / _dof(form, np.diag(np.diag(c)))) if seen > 0 else 1.0,
    )
    return Overlap(
        design_effect=whole[0],
        df_scale=whole[1],
        kinds=tuple(labels),
        factors=tuple(factors),
        df_scales=tuple(scales),
        correlations=tuple(tuple(float(x) for x in row) for row in corr),
    )


def _dof(form: np.ndarray, cov: np.ndarray) -> float:
    """The Satterthwaite degrees of freedom of the quadratic ``form`` of values with covariance ``cov``."""
    m = form @ cov
    return float(np.trace(m) ** 2 / np.trace(m @ m)) if np.trace(m @ m) > 0 else 0.0


def _kind_overlaps(c: np.ndarray, kinds: np.ndarray) -> tuple[list, np.ndarray, list, list, np.ndarray]:
    """Per split kind of :func:`split_overlap` (``c``: the splits' text covariance / σ², ``kinds``: each
    split's kind): the kinds in order, the stratified spread's variance of the mean as a quadratic form, each
    kind's factor and df scale, and b (kinds x kinds: the covariance of two kinds' means / σ²)."""
    n_splits = kinds.size
    form = np.zeros((n_splits, n_splits))  # the stratified spread's variance of the mean as a quadratic form
    labels = list(dict.fromkeys(kinds.tolist()))
    index = {k: np.flatnonzero(kinds == k) for k in labels}
    factors, scales, b = [], [], np.zeros((len(labels), len(labels)))
    for i, k in enumerate(labels):
        idx = index[k]
        for j, kl in enumerate(labels):
            b[i, j] = c[np.ix_(idx, index[kl])].sum() / (idx.size * index[kl].size)
        if idx.size < 2:
            factors.append(1.0)
            scales.append(1.0)
            continue
        centre = (np.eye(idx.size) - 1.0 / idx.size) / (idx.size - 1)
        form[np.ix_(idx, idx)] = (idx.size / n_splits) ** 2 * centre / idx.size
        ck = c[np.ix_(idx, idx)]
        factors.append(max(1.0, float(b[i, i] * idx.size / np.trace(centre @ ck))))
        scales.append(min(1.0, _dof(centre, ck) / _dof(centre, np.diag(np.diag(ck)))))
    return labels, form, factors, scales, b


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


def _paired(per_model, noise, kinds, i: str, j: str, min_texts, sizes):
    """Per dataset the differences ``i`` minus ``j`` on the splits both have (the splits with at least
    ``min_texts`` texts where ``sizes`` gives them), their clustering variance (None: no restarts) and kinds."""
    diffs, noises, strata, index = [], [], [], []
    for n, (si, sj) in enumerate(zip(per_model[i], per_model[j], strict=True)):
        joined = pd.concat([si, sj], axis=1, join="inner").dropna()
        if sizes is not None and min_texts:
            joined = joined[usable_splits(sizes[n].reindex(joined.index).to_numpy(float))]
        if joined.empty:
            raise ValueError(f"models {i!r} and {j!r} share no split")
        diffs.append(joined.iloc[:, 0].to_numpy(float) - joined.iloc[:, 1].to_numpy(float))
        index.append(joined.index)
        if noise is not None:
            noises.append((noise[i][n].reindex(joined.index) + noise[j][n].reindex(joined.index)).to_numpy(float))
        block_kinds = kinds[n] if kinds is not None else None
        strata.append([block_kinds[s] for s in joined.index] if block_kinds else None)
    kinds_out = strata if any(k is not None for k in strata) else None
    return diffs, (noises if noise is not None else None), kinds_out, index


def _max_t_pvalues(ts: Sequence[tuple[float, float]], k: int, n_resamples: int, seed: int) -> list[float]:
    """Simultaneous two-sided p-values of the t statistics ``ts`` ((t, df) each) among ``k - 1`` comparisons
    of one model with the others (Dunnett's max-|t|, the comparisons equicorrelated at 0.5 as with equal
    variances): the share of ``n_resamples`` seeded draws of max |T| at or above |t|, (count + 1) / (n + 1)."""
    from scipy.stats import chi2

    rng = np.random.default_rng(seed)
    shared = rng.standard_normal((n_resamples, 1))
    z = np.abs(np.sqrt(0.5) * (shared + rng.standard_normal((n_resamples, max(k - 1, 1))))).max(axis=1)
    uniform = np.clip(rng.random(n_resamples), 1e-12, 1 - 1e-12)  # the variance's draw, one stream for every df
    out = []
    for t, df in ts:
        if t == 0 or not df > 0:
            out.append(1.0)
        elif not np.isfinite(t):
            out.append(1.0 / (n_resamples + 1))
        else:
            scale = np.sqrt(chi2.ppf(uniform, min(df, 1e6)) / min(df, 1e6))
            out.append(float((1 + np.sum(z / scale >= abs(t))) / (n_resamples + 1)))
    return out


@dataclass(frozen=True, kw_only=True)
class ColumnSplits:
    """What :func:`compare_to_best` knows of a column's splits besides the scores, per dataset of the column:
    ``kinds`` (split id -> split kind, or None; the tests are then stratified by kind), ``design_effects`` (the
    :class:`Overlap` of its splits), ``noise`` (model -> per dataset, split id -> clustering variance of its
    score, from the restarts; None: R = 1) and ``sizes`` (split id -> texts): the splits with fewer than
    ``min_texts`` texts are left out, for every model alike. ``paired``: (model i, model j, dataset position,
    split ids) -> (mean difference, variance parts) of the text-level bootstrap over saved predictions, or None
    where they are not saved (then the analytic :func:`mean_test`)."""

    kinds: Sequence[Mapping | None] | None = None
    design_effects: Sequence[Overlap] | None = None
    noise: Mapping[str, Sequence[pd.Series]] | None = None
    sizes: Sequence[pd.Series] | None = None
    min_texts: int = 0
    paired: Callable | None = None


def _pair_test(per_model, splits: ColumnSplits, i: str, j: str, confidence: float, draws: Mapping):
    """(per-dataset differences ``i`` minus ``j``, their kinds, their :func:`mean_test`) on the splits both
    have (:func:`_paired`)."""
    diffs, nz, strata, index = _paired(per_model, splits.noise, splits.kinds, i, j, splits.min_texts, splits.sizes)
    if splits.paired is not None:
        parts = [splits.paired(i, j, n, idx) for n, idx in enumerate(index)]
        if all(p is not None for p in parts):  # the bootstrap over the predictions: the mean over datasets
            scale = 1.0 / len(parts) ** 2
            combined = [(v * scale, df) for _, ps in parts for v, df in ps]
            return diffs, strata, _decide(float(np.mean([m for m, _ in parts])), combined, confidence)
    effect = list(splits.design_effects) if splits.design_effects is not None else None
    return (
        diffs,
        strata,
        mean_test(diffs, strata=strata, design_effect=effect, noise=nz, confidence=confidence, **draws),
    )


def _mcb_pvalue(above: Sequence, column_test: str, k: int, n_resamples: int, seed: int) -> float:
    """MCB's p of one model among ``k``: the smallest simultaneous p of the models ``above`` it (their
    :class:`MeanTest` against it for the ``mean`` test, max-|t|; else their p-values, Bonferroni)."""
    if column_test == "mean":
        ts = [(r.mean / r.se if r.se > 0 else (np.inf if r.mean else 0.0), r.df) for r in above]
        return min(_max_t_pvalues(ts, k, n_resamples, seed), default=1.0)
    return min((min(1.0, (k - 1) * q) for q in above), default=1.0)


def compare_to_best(
    per_model: Mapping[str, Sequence[pd.Series]],
    *,
    test: str = "mean",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
    splits: ColumnSplits | None = None,
) -> pd.DataFrame:
    """All models of one column against the column's best, paired on splits, with the choice of the best
    accounted for (Hsu's multiple comparisons with the best, MCB).

    ``per_model``: model -> one Series per dataset (index = split id, value = score); one Series for a dataset
    column, one per dataset for the average column. The best model is the one with the highest mean (over
    datasets of per-dataset means); ties go to the first. Models are compared on the splits both have, leaving
    out the splits with fewer than ``min_texts`` texts, for every model alike; ``splits``: the column's split
    kinds, overlaps, clustering noise and sizes (:class:`ColumnSplits`; None: none known).

    Returns one row per model: ``mean``, ``best`` (bool), ``diff`` (best mean - this mean, on the shared
    splits) with its ``confidence`` interval ``diff_low``, ``diff_high``, ``se``, ``df`` and ``detectable``
    (:func:`mean_test`, whatever the test), ``p_value`` (this model against the best; the test's),
    ``p_holm`` (Holm over the column's comparisons with the best), ``p_mcb`` (MCB: the smallest simultaneous p
    of any model of the column above this one, max-|t| over this model's comparisons for the ``mean`` test,
    Bonferroni over them for the others; so a best chosen from the data does not make a mark) and
    ``not_worse`` (True for the best and every model whose ``p_mcb`` is >= ``alpha``).
    """
    models = list(per_model)
    columns = ["model", "mean", "best", "diff", "diff_low", "diff_high", "se", "df", "detectable"]
    columns += ["p_value", "p_holm", "p_mcb", "not_worse"]
    if not models:
        return pd.DataFrame(columns=columns)
    splits = splits if splits is not None else ColumnSplits()
    means = {m: float(np.mean([s.mean() for s in per_model[m]])) for m in models}
    best = max(models, key=lambda m: means[m])
    draws = {"n_resamples": n_resamples, "seed": seed}
    pair = functools.partial(_pair_test, per_model, splits, confidence=confidence, draws=draws)
    rows, pvals = [], []
    for m in models:
        if m == best:
            rows.append(
                {"model": m, "mean": means[m], "best": True, "diff": 0.0, "diff_low": 0.0, "diff_high": 0.0}
                | {"p_value": np.nan, "p_mcb": np.nan}
            )
            continue
        diffs, strata, interval = pair(best, m)
        column_test = test if len(diffs) == 1 or test != "wilcoxon" else "permutation"
        p = (
            interval.p_value
            if column_test == "mean"
            else paired_pvalue(diffs, test=column_test, strata=strata, **draws)
        )
        above = [j for j in models if j != m and means[j] > means[m]]
        if len(models) == 2:  # one comparison: the best's choice costs nothing, the pair's own p is exact
            mcb = p
        elif column_test == "mean":
            tests = [interval if j == best else pair(j, m)[2] for j in above]
            mcb = _mcb_pvalue(tests, column_test, len(models), n_resamples, seed)
        else:
            one = [p if j == best else paired_pvalue(pair(j, m)[0], test=column_test, **draws) for j in above]
            mcb = _mcb_pvalue(one, column_test, len(models), n_resamples, seed)
        pvals.append(p)
        rows.append(
            {"model": m, "mean": means[m], "best": False, "diff": float(np.mean([d.mean() for d in diffs]))}
            | {"diff_low": interval.ci_low, "diff_high": interval.ci_high, "se": interval.se, "df": interval.df}
            | {"detectable": interval.detectable, "p_value": p, "p_mcb": mcb}
        )
    adjusted = iter(holm(pvals))
    for row in rows:
        row["p_holm"] = np.nan if row["best"] else float(next(adjusted))
        row["not_worse"] = bool(row["best"] or row["p_mcb"] >= alpha)
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


#: the rule for splits far below the paper's smallest (177 texts): a split with fewer texts than this (a third
#: of it; the real Blurbs' two within-genre splits of 17 titles) is left out of every test, difference and
#: detectable Δ, for every model and arm alike; Table 2's cell means keep every split (the paper's protocol)
MIN_SPLIT_TEXTS = 50


def usable_splits(sizes) -> np.ndarray:
    """Which splits of ``sizes`` (texts per split; NaN: not recorded) the tests use: those with at least
    :data:`MIN_SPLIT_TEXTS` texts, unless fewer than two would be left (a dataset of small splits throughout,
    as the demo's smallest, keeps them all: the rule is for splits far below their dataset's others)."""
    sizes = np.asarray(sizes, dtype=float)
    keep = ~(sizes < MIN_SPLIT_TEXTS)
    return keep if keep.sum() >= 2 else np.ones(sizes.size, dtype=bool)


def restart_variance(restarts) -> float:
    """The clustering variance of a split's score averaged over its restarts (``restarts``: the per-state
    scores, ``v_measure_restarts``): their unbiased variance / R; NaN for fewer than two."""
    values = np.asarray(list(restarts) if restarts is not None else [], dtype=float)
    return float(values.var(ddof=1) / values.size) if values.size > 1 else float("nan")


def _per_split_noise(scores: pd.DataFrame, metric: str) -> dict[tuple, pd.Series] | None:
    """(model, dataset, reduction, algorithm) -> Series split -> clustering variance of its ``metric`` (from
    ``{metric}_restarts``: the restarts' variance / R), or None where the scores have no restarts (R = 1)."""
    column = f"{metric}_restarts"
    if column not in scores:
        return None
    frame = scores.assign(_noise=scores[column].map(restart_variance))
    out = _per_split(frame, "_noise")
    return out if out else None


def _size_weighted(per: Mapping, sizes: Mapping, keys: Sequence[tuple]) -> float:
    """The mean over datasets (``keys``: one model's per dataset) of each dataset's mean over splits weighted by
    split size (NaN: no sizes)."""
    if not all(k in sizes for k in keys):
        return np.nan
    joined = [pd.concat([per[k], sizes[k]], axis=1, join="inner").to_numpy(float) for k in keys]
    return float(np.mean([np.average(j[:, 0], weights=j[:, 1]) for j in joined]))


def _level_interval(series: Sequence[pd.Series], column_datasets, split_kinds, statistics: Statistics):
    """A cell's level interval: the percentile bootstrap over its splits (stratified by kind where known)."""
    strata = [_kinds_of(split_kinds, d, s.index) for d, s in zip(column_datasets, series)]
    # the level's interval: the percentile bootstrap over splits, as before issue 53, labelled in the
    # note as not for comparing models (a split's level differs by its design: its labels and size, so
    # the overlap correction of differences does not apply to it)
    return bootstrap_interval(
        [s.to_numpy() for s in series],
        strata=strata if any(k is not None for k in strata) else None,
        confidence=statistics.confidence,
        n_resamples=statistics.n_resamples,
        seed=statistics.seed,
    )


def _texts_and_tested(sizes: Mapping, keys: Sequence[tuple], series: Sequence[pd.Series], sized: bool):
    """A cell's texts (NaN where the splits' sizes are not ``sized``) and how many of its splits the tests use
    (:func:`usable_splits`; all of them without sizes)."""
    if not sized:
        return np.nan, sum(len(s) for s in series)
    texts = sum(int(sizes[k].reindex(s.index).sum()) for k, s in zip(keys, series))
    tested = sum(int(usable_splits(sizes[k].reindex(s.index).to_numpy(float)).sum()) for k, s in zip(keys, series))
    return texts, tested


def _column_pairs(pairs, column_datasets, kinds, reduction: str, algorithm: str) -> Callable | None:
    """:attr:`ColumnSplits.paired` of a column from a table's :attr:`Statistics.pairs` (None: none)."""
    if pairs is None:
        return None

    def paired(i: str, j: str, n: int, splits):
        known = kinds[n]
        strata = [known[s] for s in splits] if known else None
        key = (column_datasets[n], reduction, algorithm)
        return pairs.parts((i, *key), (j, *key), list(splits), strata)

    return paired


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
    """Table 2's statistics: per (column, model) the mean, its interval and the comparison with the best.

    Columns are ``datasets`` and the average columns of ``averages`` (name -> the datasets it averages; default
    ``{"Average": datasets}``), each only over models with a result on all its datasets. Returns a long frame:
    ``column, model, mean, ci_low, ci_high, n_splits, n_texts, best, diff, diff_low, diff_high, se, df,
    detectable, p_value, p_holm, p_mcb, not_worse, test, tested_splits, size_weighted`` (scores in the metric's
    own scale, 0..1). ``ci_low, ci_high``: the level's percentile bootstrap interval over all splits (not for
    comparing models); the comparison (:func:`compare_to_best`) leaves out splits
    of fewer than :data:`MIN_SPLIT_TEXTS` texts (``tested_splits``: how many it rests on). ``statistics``: the test, its
    level and the overlaps (:class:`Statistics`). ``split_kinds`` (dataset -> split id -> kind): those datasets'
    intervals and tests are stratified by kind."""
    sub = scores[(scores.algorithm == algorithm) & (scores.reduction == reduction)]
    per = _per_split(sub, metric)
    sizes = _per_split(sub, "n_texts") if "n_texts" in sub else {}
    noise = _per_split_noise(sub, metric)
    models = list(dict.fromkeys(k[0] for k in per))
    out = []

    def column(name, series_by_model, column_test, column_datasets):
        if not series_by_model:
            return
        kinds = [(split_kinds or {}).get(d) for d in column_datasets]
        keys = {m: [(m, d, reduction, algorithm) for d in column_datasets] for m in series_by_model}
        first = keys[next(iter(series_by_model))]
        split_sizes = [sizes[k] for k in first] if all(k in sizes for k in first) else None
        model_noise = None
        if noise is not None and all(k in noise for ks in keys.values() for k in ks):
            model_noise = {m: [noise[k] for k in ks] for m, ks in keys.items()}
        splits = ColumnSplits(
            kinds=kinds if any(kinds) else None,
            design_effects=[statistics.design_effect(d) for d in column_datasets],
            noise=model_noise,
            sizes=split_sizes,
            min_texts=MIN_SPLIT_TEXTS,
            paired=_column_pairs(statistics.pairs, column_datasets, kinds, reduction, algorithm),
        )
        cmp = compare_to_best(
            series_by_model,
            test=column_test,
            alpha=statistics.alpha,
            confidence=statistics.confidence,
            n_resamples=statistics.n_resamples,
            seed=statistics.seed,
            splits=splits,
        )
        for row in cmp.to_dict("records"):
            series = series_by_model[row["model"]]
            low, high = _level_interval(series, column_datasets, split_kinds, statistics)
            n = sum(len(s) for s in series)
            texts, tested = _texts_and_tested(sizes, keys[row["model"]], series, split_sizes is not None)
            out.append(
                {"column": name, **row, "ci_low": low, "ci_high": high, "n_splits": n}
                | {"n_texts": texts, "tested_splits": tested, "test": column_test}
            )
            out[-1]["size_weighted"] = _size_weighted(per, sizes, keys[row["model"]])

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
    cols = ["column", "model", "mean", "ci_low", "ci_high", "n_splits", "n_texts", "tested_splits", "best", "diff"]
    cols += ["diff_low", "diff_high", "se", "df", "detectable", "p_value", "p_holm", "p_mcb", "not_worse", "test"]
    return pd.DataFrame(out, columns=cols + ["size_weighted"])


def format_p(p: float) -> str:
    """A p-value as printed: three decimals, "< 0.001" below that (never "0.000"), empty for NaN."""
    if p is None or pd.isna(p):
        return ""
    return "< 0.001" if p < 0.0005 else f"{p:.3f}"


def parse_p(text) -> float:
    """A printed p-value (:func:`format_p`) read back: "< 0.001" as 0.0005 (below 0.001), NaN for empty."""
    text = str(text).strip()
    if not text or text == "nan":
        return float("nan")
    return 0.0005 if text.startswith("<") else float(text)


def format_bound(value: float, decimals: int = 2, signed: bool = False) -> str:
    """An interval bound printed so that its sign survives rounding: where it rounds to 0 at ``decimals`` but is
    not 0, more decimals (up to 6) until a digit shows, so an upper bound of -0.004 prints "-0.004", not
    "-0.00" or "0.00". ``signed``: "+" before positive values."""
    if value is None or pd.isna(value) or not np.isfinite(value):
        return "n/a" if value is None or pd.isna(value) else ("−∞" if value < 0 else "∞")
    if value == 0:
        return f"{0.0:.{decimals}f}"  # never "-0.00"
    places = decimals
    while round(abs(value), places) == 0 and places < 6:
        places += 1
    return f"{value:{'+' if signed else ''}.{places}f}"


def describe_test(
    test: str,
    alpha: float,
    confidence: float,
    intervals: bool = True,
    stratified: Sequence[str] = (),
    rests_on: str = "",
) -> str:
    """The footnote explaining the marks and intervals of a table; ``stratified``: the datasets whose splits
    are of several kinds (stratified); ``rests_on``: what each column's tests rest on (splits, texts)."""
    name = {
        "mean": "two-sided paired t test of the mean difference over splits (tables/table2_statistics.csv: diff_low, "
        "diff_high, p_value), its variance the text part widened per split kind for splits subsampled from one pool "
        "plus the clustering part from the restarts (docs/statistics.md)",
        "wilcoxon": "one-sided Wilcoxon signed-rank test on the per-split differences, a test of a symmetric shift "
        "rather than of the mean (the average column: a sign-flip permutation test within each dataset)",
        "permutation": "one-sided paired sign-flip permutation test over the splits",
        "bootstrap": "one-sided paired bootstrap over the splits",
    }[test]
    adjust = (
        "Hsu's multiple comparisons with the best (max-|t| over the column's comparisons)"
        if test == "mean"
        else "Hsu's multiple comparisons with the best (Bonferroni over the column's comparisons)"
    )
    marks = (
        f"†: not significantly worse than the column's best (bold): no model of the column is above it by the "
        f"{name}, adjusted by {adjust}, so the choice of the best from the data is accounted for (table2_statistics: "
        f"p_mcb), α = {alpha:g}; a † on two models does not say they are equal; detectable: the smallest difference "
        f"to the best that test finds with 80 % power. Splits of fewer than {MIN_SPLIT_TEXTS} texts are left out "
        "of the tests for every model."
    )
    if rests_on:
        marks += f" Each column rests on: {rests_on}."
    if stratified:
        marks += (
            f" {', '.join(stratified)}: splits of different designs (coarse-genre, fine-genre, within-genre), so "
            "intervals and tests are stratified by kind (Wilcoxon: van Elteren), each kind with its own overlap."
        )
    if not intervals:
        return marks
    return (
        f"[low, high]: {confidence:.0%} bootstrap interval of the cell's mean over splits (resampling splits as "
        "independent, within their kind; for the average, within each dataset): NOT for comparing models (too "
        "narrow for splits subsampled from one pool; their paired test is †); (size-weighted w): the mean weighted by split size, where it differs from the "
        "(unweighted, the paper's) mean by more than the interval's half-width. " + marks
    )


def rests_on(long: pd.DataFrame) -> str:
    """What each column of a table's statistics (``long``: :func:`table_statistics`) rests on: its splits, the
    splits its tests use, its texts (the first model's, as every model is clustered on the same splits)."""
    parts = []
    for column, part in long.groupby("column", sort=False):
        row = part.iloc[0]
        texts = "" if pd.isna(row["n_texts"]) else f", {int(row['n_texts']):,} texts"
        tested = "" if row["tested_splits"] == row["n_splits"] else f" ({int(row['tested_splits'])} tested)"
        parts.append(f"{column} {int(row['n_splits'])} splits{tested}{texts}")
    return "; ".join(parts)


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
            text += (
                f" [{format_bound(row['ci_low'] * scale, decimals)}, {format_bound(row['ci_high'] * scale, decimals)}]"
            )
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
