"""The simulation that can fail both ways (issue 53.6, tecb.report.simulation): V-measure from k-means
clusterings of latent-class data, splits by the project's recipes, the tables' contrast test asked for its
interval and p. benchmarks/measurement_simulation.py runs the three designs at full size."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tecb.report import simulation

RUNS = 40  # per hypothesis
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
    genre, fine, _, _ = simulation._pool(design, simulation.geometry(design, rng), rng)
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


#: the per-commit size: TenKGnad's design (10 overlapping subsamples of one pool) at 600 texts, 5 restarts
SMALL = dataclasses.replace(simulation.DESIGNS["tenkgnad_p2p"], pool=600, effect=0.2)


@pytest.fixture(scope="module")
def small_table():
    """40 simulated runs under the null and 40 under the effect, both tests on the same runs (~30-45 s)."""
    tests = {"bootstrap": simulation.test_bootstrap, "analytic": simulation.test_analytic}
    tests["response"] = simulation.test_bootstrap_response
    table = simulation.run_design(SMALL, runs=RUNS, restarts=5, seed=53, tests=tests)
    return {(r["test"], r["restarts"]): r for r in table.to_dict("records")}


@pytest.mark.slow
@pytest.mark.parametrize("restarts", [5, 1])
def test_the_text_bootstrap_keeps_its_promises_on_the_tenkgnad_design(small_table, restarts):
    row = small_table[("bootstrap", restarts)]
    assert simulation.acceptance(row, slack=SLACK) == [], row


@pytest.mark.slow
def test_the_clustering_response_keeps_them_too(small_table):
    # the bootstrap with the clustering response (benchmarks/measurement_diagnosis.md; not yet the tables'
    # default): within the acceptance at R = 5; at R = 1 (no restarts to separate it) the bootstrap itself
    row = small_table[("response", 5)]
    assert simulation.acceptance(row, slack=SLACK) == [], row
    assert small_table[("response", 1)]["detectable"] == small_table[("bootstrap", 1)]["detectable"]


@pytest.mark.slow
def test_the_analytic_test_fails_the_acceptance_there_for_being_too_wide(small_table):
    # the test of 91b9323 (the tables' fallback without saved predictions): its intervals are too wide, so its
    # power falls far below the z test's on the same runs
    row = small_table[("analytic", 5)]
    misses = simulation.acceptance(row, slack=SLACK)
    assert any(m.startswith("power") for m in misses), row
    assert row["detectable"] > 1.5 * small_table[("bootstrap", 5)]["detectable"]
