"""Which differences between models are real: bootstrap intervals over splits and paired tests (issue 15.3).

The unit of replication is the split: every (model, dataset, configuration) has one score per split, and all
models are clustered on the same splits, so two models are compared *paired*, split by split.

- :func:`bootstrap_interval`: percentile bootstrap interval of the mean over splits (resampling splits with
  replacement). For an average over datasets, splits are resampled within each dataset (a stratified bootstrap).
- :func:`paired_pvalue`: one-sided p-value for "the best model is better than this one" from the per-split
  differences: the Wilcoxon signed-rank test (exact for small n), a sign-flip permutation test (the paired
  randomisation test; exact enumeration up to 16 splits) or a paired bootstrap. Over several datasets (the
  average column) the permutation and bootstrap tests flip/resample within each dataset; Wilcoxon needs one.
- :func:`holm`: Holm's step-down adjustment for the comparisons of one column (all models against the best).
- :func:`compare_to_best`: per column, which models are not significantly worse than the best.

Everything is seeded: the same inputs and seed give the same numbers. No function reads the config.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

KEYS = ["model", "dataset", "reduction", "algorithm"]
TESTS = ("wilcoxon", "permutation", "bootstrap")
MAX_EXACT_PERMUTATION = 16  # enumerate all 2^n sign flips up to this many splits, else Monte Carlo
AVERAGE = "Average"


def _blocks(values) -> list[np.ndarray]:
    """One array per dataset (a single array or a list of them); NaN-free, float64."""
    if isinstance(values, (np.ndarray, pd.Series)) or (
        isinstance(values, Sequence) and len(values) and np.isscalar(values[0])
    ):
        values = [values]
    blocks = [np.asarray(b, dtype=float) for b in values]
    if not blocks or any(b.size == 0 for b in blocks):
        raise ValueError("every block needs at least one value")
    if any(np.isnan(b).any() for b in blocks):
        raise ValueError("values contain NaN")
    return blocks


def _boot_means(blocks: list[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_resamples`` bootstrap replicates of the mean over blocks of each block's mean."""
    out = np.zeros(n_resamples)
    for b in blocks:
        idx = rng.integers(0, b.size, size=(n_resamples, b.size))
        out += b[idx].mean(axis=1)
    return out / len(blocks)


def bootstrap_interval(
    values, *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one score per split).

    ``values`` may also be a list of arrays, one per dataset: the interval is then for the mean over datasets of
    each dataset's mean, resampling splits within each dataset. A single split gives a zero-width interval.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    blocks = _blocks(values)
    means = _boot_means(blocks, n_resamples, np.random.default_rng(seed))
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)


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


def paired_pvalue(diffs, *, test: str = "wilcoxon", n_resamples: int = 10_000, seed: int) -> float:
    """One-sided p-value for H1 "mean difference > 0" from per-split differences (best minus other).

    ``diffs``: one array of per-split differences, or a list of them (one per dataset; the statistic is then the
    mean over datasets of each dataset's mean difference). All differences zero gives 1.
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; one of {TESTS}")
    blocks = _blocks(diffs)
    tol = 1e-12 * max(1.0, max(float(np.abs(b).max()) for b in blocks))
    blocks = [np.where(np.abs(b) > tol, b, 0.0) for b in blocks]  # float noise counts as a tie
    if all(not b.any() for b in blocks):
        return 1.0
    observed = float(np.mean([b.mean() for b in blocks]))
    if test == "wilcoxon":
        if len(blocks) != 1:
            raise ValueError("the Wilcoxon test takes one dataset's differences; use 'permutation' for several")
        from scipy.stats import wilcoxon

        d = blocks[0][blocks[0] != 0]
        return float(wilcoxon(d, alternative="greater").pvalue)
    rng = np.random.default_rng(seed)
    if test == "bootstrap":
        means = _boot_means(blocks, n_resamples, rng)
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
    test: str = "wilcoxon",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int,
) -> pd.DataFrame:
    """All models of one column against the column's best, paired on splits, Holm-adjusted.

    ``per_model``: model -> one Series per dataset (index = split id, value = score); one Series for a dataset
    column, one per dataset for the average column. The best model is the one with the highest mean (over
    datasets of per-dataset means); ties go to the first. Each other model is compared on the splits both have.

    Returns one row per model: ``mean``, ``best`` (bool), ``diff`` (best mean - this mean, on the shared splits),
    ``p_value``, ``p_holm`` (NaN for the best) and ``not_worse`` (True for the best and for every model whose
    Holm-adjusted p-value is >= ``alpha``).
    """
    models = list(per_model)
    columns = ["model", "mean", "best", "diff", "p_value", "p_holm", "not_worse"]
    if not models:
        return pd.DataFrame(columns=columns)
    means = {m: float(np.mean([s.mean() for s in per_model[m]])) for m in models}
    best = max(models, key=lambda m: means[m])
    rows, pvals = [], []
    for m in models:
        if m == best:
            rows.append({"model": m, "mean": means[m], "best": True, "diff": 0.0, "p_value": np.nan})
            continue
        diffs = []
        for sb, so in zip(per_model[best], per_model[m], strict=True):
            joined = pd.concat([sb, so], axis=1, join="inner").dropna()
            if joined.empty:
                raise ValueError(f"models {best!r} and {m!r} share no split")
            diffs.append(joined.iloc[:, 0].to_numpy(float) - joined.iloc[:, 1].to_numpy(float))
        column_test = test if len(diffs) == 1 or test != "wilcoxon" else "permutation"
        p = paired_pvalue(diffs, test=column_test, n_resamples=n_resamples, seed=seed)
        pvals.append(p)
        rows.append(
            {
                "model": m,
                "mean": means[m],
                "best": False,
                "diff": float(np.mean([d.mean() for d in diffs])),
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


def intervals(
    scores: pd.DataFrame,
    metric: str = "v_measure",
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
) -> pd.DataFrame:
    """Per (model, dataset, reduction, algorithm): mean, std, n_splits and the bootstrap interval of the mean."""
    rows = []
    for key, s in _per_split(scores, metric).items():
        lo, hi = bootstrap_interval(s.to_numpy(), confidence=confidence, n_resamples=n_resamples, seed=seed)
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
    test: str = "wilcoxon",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int,
    averages: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Table 2's statistics: per (column, model) the mean, bootstrap interval and the comparison with the best.

    Columns are ``datasets`` and the average columns of ``averages`` (name -> the datasets it averages; default
    ``{"Average": datasets}``), each only over models with a result on all its datasets. Returns a long frame:
    ``column, model, mean, ci_low, ci_high, n_splits, best, diff, p_value, p_holm, not_worse, test`` (scores in
    the metric's own scale, 0..1).
    """
    sub = scores[(scores.algorithm == algorithm) & (scores.reduction == reduction)]
    per = _per_split(sub, metric)
    models = list(dict.fromkeys(k[0] for k in per))
    out = []

    def column(name, series_by_model, column_test):
        if not series_by_model:
            return
        cmp = compare_to_best(series_by_model, test=column_test, alpha=alpha, n_resamples=n_resamples, seed=seed)
        for row in cmp.to_dict("records"):
            lo, hi = bootstrap_interval(
                [s.to_numpy() for s in series_by_model[row["model"]]],
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
            n = sum(len(s) for s in series_by_model[row["model"]])
            out.append({"column": name, **row, "ci_low": lo, "ci_high": hi, "n_splits": n, "test": column_test})

    for d in datasets:
        column(d, {m: [per[(m, d, reduction, algorithm)]] for m in models if (m, d, reduction, algorithm) in per}, test)
    for name, group in (averages if averages is not None else {AVERAGE: datasets}).items():
        complete = [m for m in models if all((m, d, reduction, algorithm) in per for d in group)]
        if group:
            column(
                name,
                {m: [per[(m, d, reduction, algorithm)] for d in group] for m in complete},
                "permutation" if test == "wilcoxon" else test,
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
        "p_value",
        "p_holm",
        "not_worse",
        "test",
    ]
    return pd.DataFrame(out, columns=cols)


def describe_test(test: str, alpha: float, confidence: float, intervals: bool = True) -> str:
    """The footnote explaining the marks and intervals of a table."""
    name = {
        "wilcoxon": "one-sided Wilcoxon signed-rank test on the per-split differences (the average column: "
        "a sign-flip permutation test within each dataset)",
        "permutation": "one-sided paired sign-flip permutation test over the splits",
        "bootstrap": "one-sided paired bootstrap over the splits",
    }[test]
    marks = (
        f"†: not significantly worse than the column's best (bold): {name}, Holm-adjusted over the column's "
        f"comparisons, α = {alpha:g}."
    )
    if not intervals:
        return marks
    return (
        f"[low, high]: {confidence:.0%} bootstrap interval of the mean over splits (resampling splits; for the "
        f"average, within each dataset). " + marks
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
    significantly worse than the column's best (the best itself is bold already), then " [low, high]"."""
    names = dict(model_names or {})
    suffix = pd.DataFrame("", index=table.index, columns=table.columns, dtype=object)
    for row in statistics.to_dict("records"):
        name, col = names.get(row["model"], row["model"]), row["column"]
        if name not in suffix.index or col not in suffix.columns or pd.isna(table.at[name, col]):
            continue
        text = "†" if row["not_worse"] and not row["best"] else ""
        if show_intervals:
            text += f" [{row['ci_low'] * scale:.{decimals}f}, {row['ci_high'] * scale:.{decimals}f}]"
        suffix.at[name, col] = text
    return suffix
