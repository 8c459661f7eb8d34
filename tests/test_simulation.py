"""The simulation that can fail both ways (issue 53.6, tecb.report.simulation): V-measure from k-means
clusterings of latent-class data, splits by the project's recipes, the tables' contrast test asked for its
interval and p. benchmarks/measurement_simulation.py runs the three designs at full size."""

from __future__ import annotations

import numpy as np
import pytest

from tecb.report import simulation

RUNS = 40  # per hypothesis: about 25 s on one idle core
SLACK = 2.6 * np.sqrt(0.05 * 0.95 / (2 * RUNS))  # the simulation's own SE of a 5 % rate, 2.6 times


def test_the_acceptance_fails_a_test_too_wide_and_one_too_narrow():
    good = {"coverage": 0.95, "false_positives": 0.05, "power": 0.7, "z_power": 0.8, "power_ratio": 0.875}
    assert simulation.acceptance(good) == []
    too_wide = good | {"coverage": 1.0, "false_positives": 0.0, "power": 0.1, "power_ratio": 0.125}
    assert len(simulation.acceptance(too_wide)) == 2  # coverage above 98.5 % and no power: fails
    too_narrow = good | {"coverage": 0.85, "false_positives": 0.12}
    assert len(simulation.acceptance(too_narrow)) == 2


def test_simulated_runs_use_the_recipes_and_real_clusterings():
    design = simulation.DESIGNS["blurbs_s2s"]
    rng = np.random.default_rng(3)
    genre, fine, _, _ = simulation._pool(design, rng)
    splits = simulation._splits(design, genre, fine, rng)
    kinds = [k for k, _, _ in splits]
    assert kinds.count("coarse") == 10 and kinds.count("fine") == 10 and 1 <= kinds.count("within") <= 8
    within = [set(idx.tolist()) for k, idx, _ in splits if k == "within"]
    assert all(not (a & b) for i, a in enumerate(within) for b in within[i + 1 :])  # a partition: disjoint
    x = np.random.default_rng(0).standard_normal((60, 2))
    restarts = simulation._kmeans(x, 4, 5, np.random.default_rng(1))
    assert restarts.shape == (5, 60) and len({tuple(r) for r in restarts}) > 1  # the seeds disagree: noise
    labels = np.repeat([0, 1, 2], 20)
    assert simulation._v_measure(labels, labels[None, :])[0] == pytest.approx(1.0)
    from sklearn.metrics import v_measure_score

    assert simulation._v_measure(labels, restarts[:1])[0] == pytest.approx(v_measure_score(labels, restarts[0]))


@pytest.mark.slow  # 2 x 40 simulated runs of 10 splits, each clustered 10 times: ~30-60 s
@pytest.mark.xfail(
    strict=True,
    reason="issue 53 open: on TenKGnad's design (10 heavily overlapping subsamples) the text part is estimated "
    "from a spread that barely shows it, so its Welch-Satterthwaite df is small and the test too wide: power "
    "0.033 against the z test's 0.444 (benchmarks/measurement_simulation.md); strict, so a fix makes it fail",
)
def test_the_contrast_test_keeps_its_promises_on_the_tenkgnad_design_at_ten_restarts():
    table = simulation.run_design(simulation.DESIGNS["tenkgnad_p2p"], runs=RUNS, restarts=10, seed=53)
    now = table.set_index("restarts").loc[10].to_dict()
    assert simulation.acceptance(now, slack=SLACK) == [], now
