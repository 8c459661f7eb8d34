"""The declared contrasts (``tables.contrasts``): what Table 5's and Table 6's contrasts tables share.

Each table finds its own pairs of arms (:func:`tecb.report.pretrain_tables.contrasts`: methods at their epoch
budgets; :func:`tecb.report.adapt_tables.contrasts`: training arms, per split design) and hands each pair's seeds x
splits to :func:`compare`; :func:`table` makes the rows one table: p Holm-adjusted (:func:`holm_by_family` where
controls form a family of their own), ``*`` where under alpha, p and the bounds printed, one index label per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tecb.report import bootstrap, stats

#: the columns of a test's result in a contrasts table, in their order (V-measure x 100 but ``p``; ``test``:
#: which test the row used, :data:`TEXT_BOOTSTRAP` or :data:`ANALYTIC`)
RESULT_COLUMNS = ["delta", "ci_low", "ci_high", "p", "detectable", "test"]
#: the ``test`` of a row: the paired text-level bootstrap over both sides' saved predictions
#: (:func:`tecb.report.bootstrap.contrast_test`), or the analytic test of the per-split scores (the fallback)
TEXT_BOOTSTRAP, ANALYTIC = "text bootstrap", "analytic"
#: what the ``test`` column of Table 6 and the contrasts says (docs/statistics.md)
TEST_NOTE = (
    "test: text bootstrap = the paired text-level bootstrap over both arms' saved predictions (the texts of the "
    "dataset resampled, every split's V-measure recomputed from the fixed predictions; the split-level noise per "
    "split kind and the training seeds' spread beside it), analytic = the fallback where some predictions are not "
    "saved (a t test of the per-split scores, the splits' text variance widened per split kind, the clustering "
    "variance from the restarts where scored with several); both a t interval with Welch-Satterthwaite df."
)
#: how far (V-measure x 100) the mean the predictions give may be from the score files' before they are refused
MEAN_TOLERANCE = 1e-6


def skipped(name: str) -> str:
    """The note of a declared contrast ``name`` whose arms the run does not have (skipped, not an error)."""
    return f"{name}: skipped, this run has no such pair of arms"


@dataclass(frozen=True)
class Predictions:
    """Both sides' saved predictions on one comparison's splits, in the order of its score arrays: ``texts``,
    ``labels`` per split its text ids and true labels; ``a``, ``b`` per seed (the base: one, or each job's step
    0) per split the predicted clusters (states x texts)."""

    texts: list
    labels: list
    a: list
    b: list

    def columns(self, mask) -> Predictions:
        """These predictions on the splits of ``mask`` (a boolean mask over the splits)."""
        keep = np.flatnonzero(np.asarray(mask, dtype=bool))

        def pick(seq):
            return [seq[i] for i in keep]

        return Predictions(pick(self.texts), pick(self.labels), [pick(s) for s in self.a], [pick(s) for s in self.b])


def paired_predictions(a, b, splits) -> Predictions | None:
    """The :class:`Predictions` of sides ``a`` and ``b`` (each per seed a mapping split id -> (text ids, labels,
    clusters), :func:`tecb.report.bootstrap.split_predictions`; None or empty: not saved) on ``splits``; None where
    some seed of either side lacks one of them, or where the sides' predictions of a split are of different texts
    (arms of two protocols that evaluate other texts under one split id): the analytic fallback, as the score
    files pair them."""
    if not a or not b or any(side is None for side in (*a, *b)):
        return None
    splits = [int(s) for s in splits]
    if any(s not in side for side in (*a, *b) for s in splits):
        return None
    first = a[0]
    for side in (*a, *b):
        for s in splits:
            if not np.array_equal(np.asarray(side[s][0]), np.asarray(first[s][0])):
                return None
    return Predictions(
        texts=[first[s][0] for s in splits],
        labels=[first[s][1] for s in splits],
        a=[[side[s][2] for s in splits] for side in a],
        b=[[side[s][2] for s in splits] for side in b],
    )


def compare(
    a,
    b,
    *,
    statistics: stats.Statistics,
    design: str,
    strata=None,
    noise_a=None,
    noise_b=None,
    predictions: Predictions | None = None,
) -> dict:
    """The :data:`RESULT_COLUMNS` of ``a`` minus ``b`` (seeds x splits on the same splits; the base as one row).
    With both sides' ``predictions`` on those splits: the paired text-level bootstrap
    (:func:`tecb.report.bootstrap.contrast_test`, :data:`tecb.report.bootstrap.TABLE_RESAMPLES` replicates,
    stratified by ``strata``, each split's kind), whose mean must be the scores' (else a ValueError: the labels
    files are not those of the scores); else :func:`tecb.report.stats.contrast_test` with ``statistics``'
    confidence, resamples and seed and the split overlap of ``design`` (a dataset, or ``dataset/kind``),
    ``strata`` and the clustering variances ``noise_a``, ``noise_b`` (None: no restarts)."""
    if predictions is not None:
        result = bootstrap.contrast_test(
            predictions.a,
            predictions.b,
            texts=predictions.texts,
            labels=predictions.labels,
            strata=strata,
            confidence=statistics.confidence,
            n_resamples=bootstrap.TABLE_RESAMPLES,
            seed=statistics.seed,
        )
        scores = (np.asarray(a, float).mean(axis=0) - np.asarray(b, float).mean(axis=0)).mean() * 100
        if not abs(result.mean - scores) <= MEAN_TOLERANCE:
            raise ValueError(
                f"{design}: the saved predictions give a mean difference of {result.mean:.6f}, the scores "
                f"{scores:.6f} (V-measure x 100): the labels files are not those of the score files"
            )
        return _result_row(result, scale=1.0, test=TEXT_BOOTSTRAP)
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
    return _result_row(result, scale=100.0, test=ANALYTIC)


def _result_row(result: stats.MeanTest, *, scale: float, test: str) -> dict:
    """The :data:`RESULT_COLUMNS` of a test's ``result``, its differences x ``scale`` (V-measure x 100: the
    bootstrap's come so already, the analytic test's as fractions)."""
    return {
        "delta": result.mean * scale,
        "ci_low": result.ci_low * scale,
        "ci_high": result.ci_high * scale,
        "p": result.p_value,
        "detectable": result.detectable * scale,
        "test": test,
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
