"""Bootstrap intervals and paired comparisons (issue 15.3) on constructed cases with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from render_helpers import render

from tecb.report import render as R
from tecb.report import stats as S
from tecb.report import tables as T

DATASETS = ["BlurbsClusteringS2S", "TenKGnadClusteringS2S"]
#: the config's default statistics with seed 42
STATS = S.Statistics.from_config(T.STATISTICS_DEFAULTS, seed=42)


# --- intervals -----------------------------------------------------------------------------


def test_interval_contains_the_mean_and_shrinks_with_more_splits():
    rng = np.random.default_rng(1)
    widths = []
    for n in (5, 20, 80):
        values = rng.normal(0.4, 0.05, size=n)
        lo, hi = S.bootstrap_interval(values, seed=3)
        assert lo < values.mean() < hi
        assert values.min() <= lo and hi <= values.max()
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    # roughly the normal-theory width 2 * 1.96 * sd / sqrt(n) for n = 80
    assert widths[2] == pytest.approx(2 * 1.96 * 0.05 / np.sqrt(80), rel=0.3)


def test_interval_is_seeded_and_widens_with_confidence():
    values = np.linspace(0.2, 0.6, 12)
    assert S.bootstrap_interval(values, seed=7) == S.bootstrap_interval(values, seed=7)
    assert S.bootstrap_interval(values, seed=7) != S.bootstrap_interval(values, seed=8)
    lo90, hi90 = S.bootstrap_interval(values, confidence=0.90, seed=42)
    lo99, hi99 = S.bootstrap_interval(values, confidence=0.99, seed=42)
    assert lo99 < lo90 and hi90 < hi99


def test_interval_of_constant_or_single_split_has_zero_width():
    assert S.bootstrap_interval([0.3] * 10, seed=42) == pytest.approx((0.3, 0.3))
    assert S.bootstrap_interval([0.42], seed=42) == pytest.approx((0.42, 0.42))
    with pytest.raises(ValueError):
        S.bootstrap_interval([], seed=42)
    with pytest.raises(ValueError):
        S.bootstrap_interval([0.1, np.nan], seed=42)


def test_stratified_interval_over_datasets_is_around_the_mean_of_means():
    a, b = np.full(10, 0.2), np.array([0.5, 0.7] * 5)
    lo, hi = S.bootstrap_interval([a, b], seed=42)
    assert lo < (0.2 + 0.6) / 2 < hi
    # not the pooled mean of the 20 values (the same here by construction of equal sizes), so use unequal sizes
    lo, hi = S.bootstrap_interval([np.full(2, 0.0), np.full(18, 1.0)], seed=42)
    assert lo == pytest.approx(0.5) and hi == pytest.approx(0.5)  # mean of means, not 0.9


# --- tests and Holm --------------------------------------------------------------------------


@pytest.mark.parametrize("test", S.TESTS)
def test_identical_models_are_not_significantly_different(test):
    assert S.paired_pvalue(np.zeros(20), test=test, seed=42) == 1.0
    assert S.paired_pvalue(np.full(20, 1e-17), test=test, seed=42) == 1.0  # float noise is a tie


@pytest.mark.parametrize("test", S.TESTS)
def test_uniformly_worse_model_is_significantly_worse(test):
    rng = np.random.default_rng(0)
    best = rng.uniform(0.3, 0.6, size=20)
    worse = best - 0.2
    p = S.paired_pvalue(best - worse, test=test, seed=42)
    assert p < 0.001
    # and not the other way round (the mean test is two-sided: the same p either way)
    reverse = S.paired_pvalue(worse - best, test=test, seed=42)
    assert reverse == p if test == "mean" else reverse > 0.5


def test_exact_permutation_and_wilcoxon_p_values():
    # all 5 differences positive: exactly 1 of 2^5 sign patterns is as extreme
    assert S.paired_pvalue([0.1, 0.2, 0.3, 0.4, 0.5], test="permutation", seed=42) == pytest.approx(1 / 32)
    assert S.paired_pvalue([0.1, 0.2, 0.3, 0.4, 0.5], test="wilcoxon", seed=42) == pytest.approx(1 / 32)
    # a noisy, centred difference is not significant
    rng = np.random.default_rng(5)
    d = rng.normal(0, 0.05, size=12)
    d -= d.mean()
    for test in S.TESTS:
        assert S.paired_pvalue(d, test=test, seed=42) > 0.2


def test_permutation_and_bootstrap_tests_are_seeded():
    d = np.random.default_rng(2).normal(0.01, 0.05, size=30)  # > 16 splits: Monte Carlo
    for test in ("permutation", "bootstrap"):
        assert S.paired_pvalue(d, test=test, seed=1) == S.paired_pvalue(d, test=test, seed=1)


def test_holm():
    np.testing.assert_allclose(S.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(S.holm([0.5, 0.001]), [0.5, 0.002])
    assert S.holm([0.6, 0.9]).max() <= 1.0
    assert S.holm([]).size == 0


def _series(values):
    return pd.Series(values, index=pd.RangeIndex(len(values), name="split"))


def test_compare_to_best_marks_ties_and_separates_a_worse_model():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.6, size=20)
    noise = rng.normal(0, 0.02, size=20)
    per_model = {
        "best": [_series(base + 0.001)],
        "twin": [_series(base + 0.001)],
        "noisy": [_series(base + noise - noise.mean())],
        "worse": [_series(base - 0.2)],
    }
    out = S.compare_to_best(per_model, seed=42).set_index("model")
    assert out.loc["best", "best"] and out.loc["best", "not_worse"]
    assert out.loc["twin", "not_worse"] and out.loc["twin", "p_value"] == 1.0
    assert out.loc["noisy", "not_worse"]
    assert not out.loc["worse", "not_worse"] and out.loc["worse", "diff"] == pytest.approx(0.201)
    assert (out.p_holm.dropna() >= out.p_value.dropna()).all()


def test_compare_to_best_pairs_on_shared_splits():
    a = _series(np.linspace(0.4, 0.6, 10))
    b = (a - 0.1).drop(index=[0, 1])  # b lacks two splits
    out = S.compare_to_best({"a": [a], "b": [b]}, seed=42).set_index("model")
    assert out.loc["b", "diff"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="share no split"):
        S.compare_to_best({"a": [a.iloc[:2]], "b": [b.iloc[2:4].set_axis([50, 51])]}, seed=42)


def test_holm_correction_matters():
    # 5 splits: the smallest possible one-sided p is 1/32 ~ 0.031 < 0.05, but with 3 comparisons Holm gives 0.094
    base = _series(np.array([0.5, 0.52, 0.54, 0.56, 0.58]))
    per_model = {"best": [base]} | {f"m{i}": [base - 0.05 * (i + 1)] for i in range(3)}
    out = S.compare_to_best(per_model, test="wilcoxon", seed=42).set_index("model")
    assert (out.p_value.dropna() < 0.05).all()
    assert out.drop("best").not_worse.all()
    one = S.compare_to_best({"best": [base], "m0": [base - 0.05]}, test="wilcoxon", seed=42).set_index("model")
    assert not one.loc["m0", "not_worse"]


# --- Table 2 -------------------------------------------------------------------------------


def _scores(n_splits=20):
    rng = np.random.default_rng(0)
    rows = []
    for d in DATASETS:
        base = rng.uniform(0.3, 0.6, size=n_splits)
        for model, shift in (("good", 0.0), ("same", 0.0), ("bad", -0.2)):
            for split in range(n_splits):
                v = base[split] + shift
                rows.append(
                    {
                        "model": model,
                        "dataset": d,
                        "reduction": "none",
                        "algorithm": "kmeans",
                        "split": split,
                        "v_measure": v,
                        "ami": v - 0.05,
                    }
                )
    return pd.DataFrame(rows)


def test_table_statistics_and_marks():
    scores = _scores()
    long = S.table_statistics(scores, algorithm="kmeans", reduction="none", datasets=DATASETS, statistics=STATS)
    assert set(long.column) == set(DATASETS) | {S.AVERAGE}
    bad = long[long.model == "bad"]
    assert not bad.not_worse.any()
    assert long[long.model != "bad"].not_worse.all()
    assert (long.ci_low <= long["mean"]).all() and (long["mean"] <= long.ci_high).all()
    assert set(long[long.column == S.AVERAGE].test) == {"mean"}  # the default test serves the averages too
    assert (long.diff_low <= long["diff"]).all() and (long["diff"] <= long.diff_high).all()
    rank = S.table_statistics(
        scores,
        algorithm="kmeans",
        reduction="none",
        datasets=DATASETS,
        statistics=S.Statistics(test="wilcoxon", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42),
    )
    assert set(rank[rank.column == S.AVERAGE].test) == {"permutation"}  # Wilcoxon takes one dataset
    names = {"good": "Good", "same": "Same", "bad": "Bad"}
    t2 = T.table2(T.summarize(scores), names, datasets=DATASETS)
    marks = S.table_marks(t2, long, names)
    assert marks.at["Same", DATASETS[0]].startswith("† [") and marks.at["Good", DATASETS[0]].startswith(" [")
    assert "†" not in "".join(marks.loc["Bad"])
    md = R.to_markdown(t2, mark_best=True, suffix=marks, footnotes=[S.describe_test("wilcoxon", 0.05, 0.95)])
    good = t2.at["Good", DATASETS[0]]
    lo, hi = long.query("model == 'good' and column == @DATASETS[0]")[["ci_low", "ci_high"]].iloc[0] * 100
    assert f"**{good:.2f}** [{lo:.2f}, {hi:.2f}]" in md
    assert "multiple comparisons with the best" in md and "†: not significantly worse" in md
    tex = R.to_latex(t2, mark_best=True, suffix=marks)
    assert r"$^\dagger$ [" in tex and "†" not in tex
    html = R.to_html(t2, mark_best=True, suffix=marks)
    assert "† [" in html
    # seeded: the same statistics again
    again = S.table_statistics(scores, algorithm="kmeans", reduction="none", datasets=DATASETS, statistics=STATS)
    pd.testing.assert_frame_equal(long, again)


@pytest.mark.slow
def test_render_tables_with_statistics_and_ami(tmp_path):
    scores = _scores(n_splits=8)
    scores.to_parquet(tmp_path / "scores.parquet")
    texts, splits = [], []
    for d in DATASETS:
        pd.DataFrame({"text_id": [0, 1], "text": ["a b", "c"]}).to_parquet(tmp_path / f"{d}_t.parquet")
        pd.DataFrame({"split": [0, 0], "text_id": [0, 1], "label": ["x", "y"]}).to_parquet(tmp_path / f"{d}_s.parquet")
        texts.append(tmp_path / f"{d}_t.parquet")
        splits.append(tmp_path / f"{d}_s.parquet")
    names = {"good": "Good", "same": "Same", "bad": "Bad"}
    out = tmp_path / "tables"
    kwargs = dict(statistics={"test": "wilcoxon"}, metrics=["v_measure", "ami"], seed=42, log=lambda m: None)
    kmeans = {"algorithm": "kmeans", "reduction": "none"}
    inputs = (tmp_path / "scores.parquet", DATASETS, texts, splits, names, [("kmeans", "none")], kmeans)
    render(*inputs, out, **kwargs)
    md = (out / "table2.md").read_text()
    assert "†" in md and "[" in md and "multiple comparisons with the best" in md
    ami = (out / "table2_ami.md").read_text()
    assert "AMI x 100" in ami and "†" in ami
    assert (out / "table3_ami.csv").exists()
    stats = pd.read_csv(out / "table2_statistics.csv")
    assert set(stats.model) == set(names)
    assert (stats.p_value.dropna() > 0).all() and (stats.p_mcb.dropna() > 0).all()  # never p = 0 (issue 53)
    assert stats.loc[~stats.best, "detectable"].notna().all()
    iv = pd.read_csv(out / "intervals.csv")
    assert set(iv.metric) == {"v_measure", "ami"} and len(iv) == 2 * 3 * len(DATASETS)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    render(*inputs, out, **kwargs)
    assert first == {p.name: p.read_bytes() for p in out.iterdir()}  # byte-identical rerun
    # statistics off: no marks, no statistics files
    render(*inputs, tmp_path / "plain", log=lambda m: None, seed=42)
    assert "†" not in (tmp_path / "plain" / "table2.md").read_text()
    assert not (tmp_path / "plain" / "intervals.csv").exists()


def test_statistics_follow_the_tables_average_columns():
    scores = _scores(n_splits=6)
    scores.loc[scores.dataset == DATASETS[1], "dataset"] = "MyData"  # one paper dataset, one other
    names = {"good": "Good", "same": "Same", "bad": "Bad"}
    t2 = T.table2(T.summarize(scores), names, datasets=[DATASETS[0], "MyData"])
    marks, notes, long = T.table2_statistics(
        scores, t2, names, {"algorithm": "kmeans", "reduction": "none"}, STATS, intervals=True
    )
    assert set(long.column) == set(t2.columns)
    for col in t2.columns:  # every column's statistics average what the table averages
        means = long[long.column == col].set_index("model")["mean"] * 100
        assert means.rename(index=names).reindex(t2.index).to_numpy() == pytest.approx(t2[col].to_numpy())
    assert (
        all(marks.loc[n, c] for n in names.values() for c in t2.columns)
        and "multiple comparisons with the best" in notes[0]
    )


# --- the mean test agrees with its interval (issue 43.1) ------------------------------------------


def _excludes_zero(result) -> bool:
    return result.ci_low > 0 or result.ci_high < 0


def test_the_mean_test_and_its_interval_never_disagree_on_random_tables():
    """300 random tables (1-4 datasets of 2-30 splits, split kinds or not, overlaps, shifts from none to large,
    ties, 1-4 seeds): p < 1 - confidence exactly when the interval of the mean excludes 0."""
    rng = np.random.default_rng(43)
    disagreements, marked = [], 0
    for i in range(300):
        n_blocks = int(rng.integers(1, 5))
        sizes = rng.integers(2, 31, size=n_blocks)
        shift = rng.choice([0.0, 0.002, 0.01, 0.05])
        blocks = [np.round(rng.normal(shift, rng.uniform(0.001, 0.05), size=n), int(rng.integers(2, 6))) for n in sizes]
        strata = [rng.choice(["coarse", "fine", "within"], size=n) if rng.random() < 0.5 else None for n in sizes]
        overlaps = [S.Overlap(design_effect=rng.uniform(1, 20), df_scale=rng.uniform(0.2, 1)) for _ in sizes]
        confidence = float(rng.choice([0.9, 0.95, 0.99]))
        draws = {"confidence": confidence, "n_resamples": int(rng.choice([200, 1000, 4999])), "seed": i}
        results = [S.mean_test(blocks, strata=strata, design_effect=overlaps, **draws)]
        seeds = rng.normal(shift, 0.02, size=(int(rng.integers(1, 5)), sizes[0]))
        results.append(S.seeds_mean_test(seeds, strata=strata[0], design_effect=overlaps[0], **draws))
        for r in results:
            assert r.ci_low <= r.mean <= r.ci_high or not np.isfinite(r.ci_low)
            marked += r.p_value < 1 - confidence
            if (r.p_value < 1 - confidence) != _excludes_zero(r):
                disagreements.append((i, r))
    assert not disagreements
    assert 100 < marked < 500  # both outcomes occur, so the agreement is not vacuous


@pytest.mark.slow
def test_table2_marks_agree_with_the_difference_interval():
    """A model marked worse than the best (no †) has a difference interval above 0; with one comparison per
    column (Holm changes nothing) the converse holds too."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        rows = []
        for d in DATASETS:
            base = rng.uniform(0.3, 0.6, size=10)
            for model, shift in (("a", 0.0), ("b", float(rng.choice([0.0, -0.005, -0.02])))):
                for split in range(10):
                    v = base[split] + shift + rng.normal(0, 0.01)
                    rows.append({"model": model, "dataset": d, "reduction": "none", "algorithm": "kmeans"})
                    rows[-1] |= {"split": split, "v_measure": v}
        long = S.table_statistics(
            pd.DataFrame(rows), algorithm="kmeans", reduction="none", datasets=DATASETS, statistics=STATS
        )
        other = long[~long.best]
        assert (other.not_worse == ~((other.diff_low > 0) | (other.diff_high < 0))).all(), trial


def test_one_split_gives_no_interval_and_no_mark():
    r = S.mean_test([0.3], seed=1)
    assert r.p_value == 1.0 and r.ci_low == -np.inf and r.ci_high == np.inf and r.df == 0
    constant = S.mean_test([0.3] * 5, seed=1)  # no spread over 5 splits: the difference is certain
    assert constant.ci_low == constant.ci_high == pytest.approx(0.3)
    assert constant.p_value == S.P_FLOOR > 0  # never 0: Holm could not adjust it (issue 53)


@pytest.mark.slow
def test_the_mean_test_keeps_its_level_with_ten_splits():
    """The small-sample widening (unbiased variance, t-quantile levels): over 1000 null samples of 10 normal
    splits, this test rejects at most 5 % + 2.6 simulation SEs, while 0 falls outside the plain percentile
    bootstrap interval (bootstrap_interval) far more often."""
    rng = np.random.default_rng(11)
    n = 1000
    bound = 0.05 + 2.6 * np.sqrt(0.05 * 0.95 / n)
    samples = [rng.normal(0, 1, 10) for _ in range(n)]
    rejected = sum(S.mean_test(x, n_resamples=1000, seed=i).p_value < 0.05 for i, x in enumerate(samples))
    outside = sum(
        not lo <= 0 <= hi
        for lo, hi in (S.bootstrap_interval(x, n_resamples=1000, seed=i) for i, x in enumerate(samples))
    )
    assert rejected / n <= bound < outside / n


# --- overlapping splits (issue 43.3) ----------------------------------------------------------


def test_split_overlap_by_hand():
    """Disjoint splits of equal size: no correction. Two splits that are the same 4 texts plus one own text each
    (sizes 5): C = [[1/5, 4/25], [4/25, 1/5]], 1'C1/4 = 0.18, the bootstrap sees (2/5 - 0.36)/2 = 0.02, so the
    design effect is 9 and the effective degrees of freedom are those of one split pair (df scale 1)."""
    disjoint = S.split_overlap([[0, 1], [2, 3], [4, 5]])
    assert (disjoint.design_effect, disjoint.df_scale, disjoint.factors) == (1.0, 1.0, (1.0,))
    two = S.split_overlap([[0, 1, 2, 3, 4], [0, 1, 2, 3, 5]])
    assert two.design_effect == pytest.approx(9.0) and two.df_scale == pytest.approx(1.0)
    nested = S.split_overlap([list(range(n)) for n in (20, 40, 60, 80, 100)])
    assert nested.design_effect > 5 and nested.df_scale < 1
    # kinds: resampling within kinds sees less, so the effect grows
    kinds = ["a", "a", "a", "b", "b"]
    assert S.split_overlap([list(range(n)) for n in (20, 40, 60, 80, 100)], kinds).design_effect > 5
    with pytest.raises(ValueError, match="at least one text"):
        S.split_overlap([[0], []])


def test_each_split_kind_gets_its_own_overlap_factor():
    """Issue 53: a disjoint within-genre partition gets its own factor, 1.0, while the overlapping coarse
    subsamples of the same pool get theirs (9, as by hand above); the two kinds' means correlate as they share
    texts, and a kind not recorded falls back to the whole design's factor."""
    coarse = [[0, 1, 2, 3, 4], [0, 1, 2, 3, 5]]
    within = [[0, 1], [2, 3], [4, 5]]
    both = S.split_overlap(coarse + within, ["coarse"] * 2 + ["within"] * 3)
    assert both.of("within") == (1.0, 1.0)
    assert both.of("coarse")[0] == pytest.approx(9.0)
    assert 0 < both.correlation("coarse", "within") < 1 and both.correlation("within", "within") == 1.0
    assert both.of("fine") == (both.design_effect, both.df_scale)
    # the mean test widens only the kind that overlaps: the within-genre splits alone keep their plain interval
    x = np.array([0.01, 0.03, 0.02, 0.0, 0.04])
    kinds = ["coarse"] * 2 + ["within"] * 3
    per_kind = S.mean_test(x, strata=kinds, design_effect=both, seed=1)
    pooled = S.mean_test(x, strata=kinds, design_effect=S.Overlap(design_effect=both.factors[0]), seed=1)
    assert per_kind.se < pooled.se


def test_only_the_text_part_is_widened_and_the_clustering_part_comes_from_the_restarts():
    """Issue 53: the splits' spread less the restarts' clustering variance is the text part, widened by the
    overlap factor; the clustering part (independent across splits) is not. All of the spread clustering noise:
    the interval is the plain one however large the factor; no restarts (R = 1): the whole spread is widened."""
    x = np.random.default_rng(4).normal(0.0, 0.02, size=10)
    spread = float(x.var(ddof=1))
    overlap = S.Overlap(design_effect=9.0)
    plain = S.mean_test(x, seed=1)
    assert S.mean_test(x, design_effect=overlap, noise=np.full(10, spread), seed=1).se == pytest.approx(plain.se)
    assert S.mean_test(x, design_effect=overlap, seed=1).se == pytest.approx(3 * plain.se)
    half = S.mean_test(x, design_effect=overlap, noise=np.full(10, spread / 2), seed=1)
    assert half.se == pytest.approx(np.sqrt((9 * spread / 2 + spread / 2) / 10))
    # the text part is a difference, 9 x spread - 8 x clustering: Welch-Satterthwaite gives it fewer degrees of
    # freedom than the spread's 9, so a wider t (at least 1)
    whole = S.mean_test(x, design_effect=overlap, seed=1)
    assert whole.df == pytest.approx(9) and 1 <= half.df < whole.df
    assert half.df == pytest.approx(max(1.0, (9 * spread / 2 + spread / 2) ** 2 / ((9 * spread) ** 2 / 9)))
    assert S.restart_variance([0.1, 0.3]) == pytest.approx(0.02 / 2) and np.isnan(S.restart_variance([0.1]))


def test_design_effect_widens_the_interval_by_its_square_root():
    d = np.random.default_rng(3).normal(0.01, 0.02, size=12)
    plain = S.mean_test(d, seed=5)
    wide = S.mean_test(d, design_effect=S.Overlap(design_effect=4.0), seed=5)
    assert (wide.ci_high - wide.mean) == pytest.approx(2 * (plain.ci_high - plain.mean))
    assert wide.p_value > plain.p_value
    with pytest.raises(ValueError, match="design effect"):
        S.mean_test(d, design_effect=S.Overlap(design_effect=0.5), seed=5)


def test_p_values_print_and_bounds_keep_their_sign():
    """Issue 53: "< 0.001", never 0.000; a bound that rounds to 0 gets the decimals its sign needs."""
    assert S.format_p(0.0004) == "< 0.001" and S.format_p(0.049) == "0.049" and S.format_p(np.nan) == ""
    assert S.format_bound(-0.004, signed=True) == "-0.004" and S.format_bound(-1.054, signed=True) == "-1.05"
    assert S.format_bound(0.0) == "0.00" and S.format_bound(-0.0) == "0.00" and S.format_bound(2.5) == "2.50"


# --- the noise floor (issue 43.4) -------------------------------------------------------------


def test_detectable_difference_and_noise_floor_by_hand():
    from scipy.stats import t

    # 3 seeds, seed SD 1, a test on 2 degrees of freedom: (t_2(0.975) + t_2(0.8)) / sqrt(3)
    assert S.detectable_difference(1 / np.sqrt(3), 2) == pytest.approx((t.ppf(0.975, 2) + t.ppf(0.8, 2)) / np.sqrt(3))
    assert np.isnan(S.detectable_difference(1.0, 0))
    per_seed = pd.DataFrame(
        {
            "arm": ["a"] * 3 + ["b"] * 3 + ["c"],
            "dataset": ["D"] * 7,
            "seed": [1, 2, 3, 1, 2, 3, 1],
            "score": [1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 50.0],  # each arm's seeds spread SD 1 about its own mean
        }
    )
    floor = S.noise_floor(per_seed).iloc[0]
    assert floor["sd_seeds"] == pytest.approx(1.0) and floor["df"] == 4 and floor["seeds"] == 3
    # t tests with the pooled SD on its 4 degrees of freedom
    assert floor["vs_base"] == pytest.approx((t.ppf(0.975, 4) + t.ppf(0.8, 4)) / np.sqrt(3))
    assert floor["vs_arm"] == pytest.approx(floor["vs_base"] * np.sqrt(2))


def test_the_size_weighted_mean_is_shown_where_it_differs_beyond_the_interval():
    """One large split scoring far above nine small ones: the size-weighted mean (by hand) is shown beside the
    unweighted one; with equal sizes it equals the mean and is not shown."""
    values = [0.2] * 9 + [0.6]
    rows = [
        {"model": m, "dataset": DATASETS[0], "reduction": "none", "algorithm": "kmeans", "split": i}
        | {"v_measure": v - (0.1 if m == "b" else 0.0), "n_texts": 1000 if i == 9 else 20}
        for m in ("a", "b")
        for i, v in enumerate(values)
    ]
    scores = pd.DataFrame(rows)
    long = S.table_statistics(scores, algorithm="kmeans", reduction="none", datasets=DATASETS[:1], statistics=STATS)
    a = long[(long.model == "a") & (long.column == DATASETS[0])].iloc[0]
    assert a["size_weighted"] == pytest.approx((9 * 20 * 0.2 + 1000 * 0.6) / 1180)
    t2 = T.table2(T.summarize(scores), {"a": "A", "b": "B"}, datasets=DATASETS[:1])
    marks = S.table_marks(t2, long, {"a": "A", "b": "B"})
    assert marks.at["A", DATASETS[0]].endswith(f"(size-weighted {a['size_weighted'] * 100:.2f})")
    same = S.table_statistics(
        scores.assign(n_texts=50), algorithm="kmeans", reduction="none", datasets=DATASETS[:1], statistics=STATS
    )
    assert "size-weighted" not in "".join(S.table_marks(t2, same, {"a": "A", "b": "B"}).to_numpy().ravel())
