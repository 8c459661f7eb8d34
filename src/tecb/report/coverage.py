"""Do the tables' intervals and tests keep their promises? Coverage and false-positive rate by simulation.

Under the null, two encoders differ only by noise: each text of a pool carries a per-text score difference of mean
0 (the text-level model of :func:`tecb.report.stats.split_overlap`), a split's difference is the mean over
its texts plus independent clustering noise, and a run's splits are drawn by one of the :data:`DESIGNS`. Each
simulation draws one such run and asks :func:`tecb.report.stats.mean_test` (or
:func:`~tecb.report.stats.seeds_mean_test`) for the interval and the two-sided p of the mean difference; the true
difference is 0, so a promised 95 % interval should cover it in about 95 % of the simulations and p < 0.05 should
happen in at most about 5 %. ``benchmarks/null_coverage.py`` writes the figures quoted in ``docs/statistics.md``;
``tests/test_coverage.py`` runs fewer simulations with bounds that can fail.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tecb.report import stats


@dataclass(frozen=True, kw_only=True)
class Design:
    """How a run's splits are drawn: ``kinds`` (name -> number of splits of that design), each split a random
    subsample of ``min_fraction``..``max_fraction`` of one ``pool`` of texts (``independent``: each split a fresh
    draw of texts, sharing none); ``split_sd``: the clustering noise of a split's difference, in units of the
    per-text SD; ``seeds`` (> 1: a seeds x splits matrix with a seed-level effect of SD ``seed_sd``)."""

    name: str
    kinds: dict
    pool: int
    min_fraction: float = 0.1
    max_fraction: float = 1.0
    independent: bool = False
    split_sd: float = 0.02
    seeds: int = 1
    seed_sd: float = 0.0


#: the designs simulated: the paper's (subsamples of one pool, Blurbs' three kinds of one pool), splits that
#: share no text, Table 6's three training seeds, and splits whose clustering noise (independent across splits)
#: outweighs the text sampling (where the correction errs wide)
DESIGNS = (
    Design(name="10 independent splits", kinds={"all": 10}, pool=200, independent=True),
    Design(name="10 subsamples of one pool (TenKGnad, Reddit)", kinds={"all": 10}, pool=400),
    Design(
        name="28 subsamples of one pool in 3 kinds (Blurbs)", kinds={"coarse": 10, "fine": 10, "within": 8}, pool=400
    ),
    Design(name="10 subsamples, 3 training seeds (Table 6)", kinds={"all": 10}, pool=400, seeds=3, seed_sd=0.03),
    Design(name="10 subsamples, clustering noise dominating", kinds={"all": 10}, pool=400, split_sd=0.2),
)


def draw_run(design: Design, rng: np.random.Generator) -> tuple[np.ndarray, list, list]:
    """One simulated run under the null: (seeds x splits differences, each split's text ids, each split's kind)."""
    members, kinds = [], []
    next_id = 0
    for kind, count in design.kinds.items():
        for _ in range(count):
            size = max(2, int(round(design.pool * rng.uniform(design.min_fraction, design.max_fraction))))
            if design.independent:
                members.append(np.arange(next_id, next_id + size))
                next_id += size
            else:
                members.append(rng.choice(design.pool, size=size, replace=False))
            kinds.append(kind)
    n_texts = next_id if design.independent else design.pool
    rows = []
    for _ in range(design.seeds):
        per_text = rng.standard_normal(n_texts)  # this seed's model minus the other encoder, per text
        seed_effect = design.seed_sd * rng.standard_normal()
        rows.append([per_text[m].mean() + design.split_sd * rng.standard_normal() + seed_effect for m in members])
    return np.asarray(rows), members, kinds


def simulate(
    design: Design, *, corrected: bool, n_simulations: int, n_resamples: int, confidence: float = 0.95, seed: int
) -> dict:
    """Coverage of the true difference (0) by the ``confidence`` interval and the share of p < 1 - confidence,
    over ``n_simulations`` runs of ``design``; ``corrected``: with the overlap design effect
    (:func:`tecb.report.stats.split_overlap`), else splits taken as independent."""
    rng = np.random.default_rng(seed)
    covered = rejected = 0
    effects = []
    for i in range(n_simulations):
        matrix, members, kinds = draw_run(design, rng)
        strata = kinds if len(set(kinds)) > 1 else None
        effect = stats.split_overlap(members, strata) if corrected else None
        effects.append(effect.design_effect if effect else 1.0)
        result = stats.seeds_mean_test(
            matrix, strata=strata, design_effect=effect, confidence=confidence, n_resamples=n_resamples, seed=i
        )
        covered += result.ci_low <= 0 <= result.ci_high
        rejected += result.p_value < 1 - confidence
    return {
        "design": design.name,
        "method": "design effect" if corrected else "splits as independent",
        "simulations": n_simulations,
        "coverage": covered / n_simulations,
        "false_positive_rate": rejected / n_simulations,
        "median_design_effect": float(np.median(effects)),
    }


def coverage_table(*, n_simulations: int, n_resamples: int, seed: int, designs=DESIGNS) -> pd.DataFrame:
    """:func:`simulate` for every design, with and without the correction."""
    rows = [
        simulate(d, corrected=c, n_simulations=n_simulations, n_resamples=n_resamples, seed=seed)
        for d in designs
        for c in (False, True)
    ]
    return pd.DataFrame(rows)
