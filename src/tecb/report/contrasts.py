"""The declared contrasts (``tables.contrasts``): what Table 5's and Table 6's contrasts tables share.

Each table finds its own pairs of arms (:func:`tecb.report.pretrain_tables.contrasts`: methods at their epoch
budgets; :func:`tecb.report.adapt_tables.contrasts`: training arms, per split design) and hands each pair's seeds x
splits to :func:`compare`; :func:`table` makes the rows one table: p Holm-adjusted (:func:`holm_by_family` where
controls form a family of their own), ``*`` where under alpha, p and the bounds printed, one index label per row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tecb.report import stats

#: the columns of a test's result in a contrasts table, in their order (V-measure x 100 but ``p``)
RESULT_COLUMNS = ["delta", "ci_low", "ci_high", "p", "detectable"]


def skipped(name: str) -> str:
    """The note of a declared contrast ``name`` whose arms the run does not have (skipped, not an error)."""
    return f"{name}: skipped, this run has no such pair of arms"


def compare(a, b, *, statistics: stats.Statistics, design: str, strata=None, noise_a=None, noise_b=None) -> dict:
    """The :data:`RESULT_COLUMNS` of ``a`` minus ``b`` (seeds x splits on the same splits; the base as one row):
    :func:`tecb.report.stats.contrast_test` with ``statistics``' confidence, resamples and seed and the split
    overlap of ``design`` (a dataset, or ``dataset/kind``), ``strata`` (each split's kind) and the clustering
    variances ``noise_a``, ``noise_b`` (None: no restarts)."""
    result = stats.contrast_test(
        a,
        b,
        noise_a=noise_a,
        noise_b=noise_b,
        strata=strata,
        design_effect=statistics.design_effect(design),
        confidence=statistics.confidence,
        n_resamples=statistics.n_resamples,
        seed=statistics.seed,
    )
    return {
        "delta": result.mean * 100,
        "ci_low": result.ci_low * 100,
        "ci_high": result.ci_high * 100,
        "p": result.p_value,
        "detectable": result.detectable * 100,
    }


def holm_by_family(pvals, controls) -> np.ndarray:
    """Holm's adjustment (:func:`tecb.report.stats.holm`) of ``pvals`` (NaN: no test, left NaN) within two
    families: the rows of a control (``controls[i]`` true: a control's Δ, a positive control's (``oracle``), a
    contrast with either) and the others, so a control added to a run changes no method's adjusted p."""
    pvals = np.asarray(pvals, dtype=float)
    adjusted = np.full(len(pvals), np.nan)
    for family in (False, True):
        done = [i for i, (p, c) in enumerate(zip(pvals, controls)) if not np.isnan(p) and bool(c) == family]
        if done:
            adjusted[done] = stats.holm(pvals[done])
    return adjusted


def table(rows: list[dict], *, columns: Sequence[str], key: Sequence[str], alpha: float, controls=None) -> pd.DataFrame:
    """The contrasts table of ``rows`` (each ``columns`` and the :data:`RESULT_COLUMNS`): p Holm-adjusted over
    every row, or by family where ``controls`` (per row: a control's) is given, ``*`` where under ``alpha``, p and
    the bounds printed; each row's index label its ``key`` columns joined by " · "."""
    out = pd.DataFrame(rows, columns=[*columns, *RESULT_COLUMNS])
    pvals = out["p"].to_numpy(float)
    adjusted = stats.holm(pvals) if controls is None else holm_by_family(pvals, controls)
    out["significant"] = ["*" if p < alpha else "" for p in adjusted]
    out["p"] = [stats.format_p(p) for p in out["p"]]
    out["p_holm"] = [stats.format_p(p) for p in adjusted]
    for col in ("ci_low", "ci_high"):  # printed so that a bound's sign survives rounding
        out[col] = [stats.format_bound(v, signed=True) for v in out[col]]
    out.index = pd.Index([" · ".join(str(v) for v in r) for r in out[list(key)].itertuples(index=False)], dtype=object)
    out.index.name = " · ".join(key)
    return out
