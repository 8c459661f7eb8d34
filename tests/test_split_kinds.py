"""Issue 21.2-21.4: statistics stratified by split kind, the chance floor and the comparability decision, on
constructed cases with answers computed by hand (or in closed form)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from render_helpers import render

from tecb import io
from tecb.data import datasets
from tecb.data import demo as demo_data
from tecb.report import chance as C
from tecb.report import paper as P
from tecb.report import stats as S
from tecb.report import tables as T
from tecb.scoring import chance as SC

# --- stratified bootstrap ---------------------------------------------------------------------------------


def test_stratified_interval_of_two_constant_levels_has_zero_width_at_the_mean():
    """Two kinds, each constant, at very different levels: within-kind resampling cannot move the mean (the
    kinds' means weighted by their split counts), the plain bootstrap mixes the levels and is wide."""
    values = np.array([0.03] * 10 + [0.31] * 10 + [0.20] * 8)
    kinds = ["coarse"] * 10 + ["fine"] * 10 + ["within-genre"] * 8
    lo, hi = S.bootstrap_interval(values, strata=kinds, seed=1)
    assert lo == pytest.approx(values.mean()) and hi == pytest.approx(values.mean())
    plo, phi = S.bootstrap_interval(values, seed=1)
    assert phi - plo > 0.05


def test_stratified_interval_width_matches_the_closed_form():
    """Bootstrap variance of the stratified mean: sum_k w_k^2 s_k^2 / n_k (s_k^2 the population variance of kind
    k, w_k = n_k / N); of the plain mean: s^2 / N. Kind A alternates 0.02/0.04, kind B 0.30/0.32 (10 each):
    s_k^2 = 1e-4, so the stratified SD is sqrt(2 * 0.25 * 1e-4 / 10) = 0.002236; the plain SD is
    sqrt(0.0197 / 20) = 0.03139 (s^2 = 0.14^2 + 1e-4)."""
    a, b = np.array([0.02, 0.04] * 5), np.array([0.30, 0.32] * 5)
    values, kinds = np.concatenate([a, b]), ["a"] * 10 + ["b"] * 10
    lo, hi = S.bootstrap_interval(values, strata=kinds, n_resamples=20_000, seed=3)
    plo, phi = S.bootstrap_interval(values, n_resamples=20_000, seed=3)
    z = 1.959964
    assert hi - lo == pytest.approx(2 * z * np.sqrt(2 * 0.25 * 1e-4 / 10), rel=0.1)
    assert phi - plo == pytest.approx(2 * z * np.sqrt((0.14**2 + 1e-4) / 20), rel=0.1)
    assert (phi - plo) / (hi - lo) > 10


def test_stratified_interval_over_datasets_strata_per_dataset():
    """A list of datasets: kinds only for the first; the second is resampled as one block."""
    blurbs, other = np.array([0.0] * 5 + [1.0] * 5), np.full(6, 0.4)
    lo, hi = S.bootstrap_interval([blurbs, other], strata=[["c"] * 5 + ["f"] * 5, None], seed=42)
    assert lo == pytest.approx(0.45) and hi == pytest.approx(0.45)
    with pytest.raises(ValueError, match="split kinds"):
        S.bootstrap_interval(blurbs, strata=["c"] * 3, seed=42)


def test_plain_interval_is_unchanged_by_the_strata_code():
    """No strata: the same draws as before issue 21 (one stratum of weight 1)."""
    values = np.linspace(0.1, 0.5, 9)
    rng = np.random.default_rng(42)
    means = values[rng.integers(0, 9, size=(10_000, 9))].mean(axis=1)
    assert S.bootstrap_interval(values, seed=42) == tuple(np.quantile(means, [0.025, 0.975]))


# --- stratified paired tests ------------------------------------------------------------------------------


def test_stratified_wilcoxon_is_van_elteren_computed_by_hand():
    """Kind A differences 0.01, 0.02, -0.03 and kind B 1, 2, 3. Pooled Wilcoxon: W+ = 1+2+4+5+6 = 18, and 5 of
    the 64 sign patterns reach 18 (complements summing to <= 3: {}, {1}, {2}, {3}, {1,2}): p = 5/64. Ranked within
    kinds (van Elteren, weights 1/(n_k+1) = 1/4 each): T = (3 + 6) / 4; W_A, W_B are independent signed-rank sums
    of n=3 (counts 1,1,1,2,1,1,1 for 0..6) and W_A + W_B >= 9 in 12 of 64 patterns: p = 12/64."""
    d = np.array([0.01, 0.02, -0.03, 1.0, 2.0, 3.0])
    kinds = ["a"] * 3 + ["b"] * 3
    assert S.paired_pvalue(d, test="wilcoxon", seed=42) == pytest.approx(5 / 64)
    assert S.paired_pvalue(d, strata=kinds, test="wilcoxon", seed=42) == pytest.approx(12 / 64)
    # one kind only: the plain (exact) Wilcoxon test
    assert S.paired_pvalue(d, strata=["a"] * 6, test="wilcoxon", seed=42) == pytest.approx(5 / 64)


def test_stratified_signed_rank_with_one_kind_equals_scipys_exact_wilcoxon():
    from scipy.stats import rankdata, wilcoxon

    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, size=9)
    score = rankdata(np.abs(d))
    stats = [sum(s for s, pos in zip(score, signs) if pos) for signs in itertools.product((1, 0), repeat=9)]
    exact = np.mean(np.array(stats) >= score[d > 0].sum() - 1e-12)
    p = S._stratified_signed_rank(d, np.array(["k"] * 9, dtype=object), 1000, rng)
    assert p == pytest.approx(exact) == pytest.approx(wilcoxon(d, alternative="greater").pvalue)


def test_stratified_bootstrap_test_and_unchanged_permutation_test():
    d = np.array([0.01, 0.02, -0.005, 0.3, 0.28, 0.33, 0.31])
    kinds = ["a"] * 3 + ["b"] * 4
    assert S.paired_pvalue(d, strata=kinds, test="permutation", seed=42) == S.paired_pvalue(
        d, test="permutation", seed=42
    )
    p_strat = S.paired_pvalue(d, strata=kinds, test="bootstrap", seed=2)
    assert p_strat == S.paired_pvalue(d, strata=kinds, test="bootstrap", seed=2) and p_strat < 0.01


def _kind_scores(n_models=2):
    """Blurbs-like: 4 coarse splits around 0.03, 4 fine around 0.31; model b is 0.01 worse on every split."""
    rows = []
    level = [0.03, 0.031, 0.029, 0.032, 0.31, 0.305, 0.312, 0.309]
    for m, shift in (("a", 0.0), ("b", -0.01))[:n_models]:
        for s, v in enumerate(level):
            rows.append(
                {"model": m, "dataset": "BlurbsClusteringS2S", "reduction": "none", "algorithm": "kmeans"}
                | {"split": s, "v_measure": v + shift, "ami": v / 2 + shift}
            )
    return pd.DataFrame(rows)


def test_table_statistics_and_kind_means_use_the_split_kinds():
    scores = _kind_scores()
    kinds = {"BlurbsClusteringS2S": {s: "coarse" if s < 4 else "fine" for s in range(8)}}
    statistics = S.Statistics(test="wilcoxon", alpha=0.05, confidence=0.95, n_resamples=2000, seed=42)
    common = dict(algorithm="kmeans", reduction="none", datasets=["BlurbsClusteringS2S"], statistics=statistics)
    plain = S.table_statistics(scores, **common)
    strat = S.table_statistics(scores, split_kinds=kinds, **common)
    a_plain, a_strat = plain[plain.model == "a"].iloc[0], strat[strat.model == "a"].iloc[0]
    assert a_strat["mean"] == a_plain["mean"]
    assert (a_strat.ci_high - a_strat.ci_low) * 5 < a_plain.ci_high - a_plain.ci_low
    per = S.kind_means(scores, algorithm="kmeans", reduction="none", split_kinds=kinds, n_resamples=500, seed=42)
    got = per.set_index(["model", "kind"])["mean"]
    assert got["a", "coarse"] == pytest.approx(np.mean([0.03, 0.031, 0.029, 0.032]))
    assert got["b", "fine"] == pytest.approx(np.mean([0.31, 0.305, 0.312, 0.309]) - 0.01)


# --- the Blurbs builder records its split kinds ------------------------------------------------------------


def test_blurbs_build_records_split_kinds_without_changing_its_splits(tmp_path):
    zip_path = demo_data.write_germeval_zip(tmp_path / "germeval2019.zip", books_per_genre=6, seed=42)
    ds = datasets.build_from_config(
        "BlurbsClusteringS2S", {"source": "germeval2019", "text": "s2s"}, {}, zip_path, seed=42
    )
    kinds = ds.provenance["split_kinds"]
    assert len(kinds) == len(ds.splits)
    assert kinds[:20] == ["coarse"] * 10 + ["fine"] * 10 and set(kinds[20:]) == {"within-genre"}
    assert [n.split()[0] for n in ds.split_names] == [
        {"coarse": "coarse", "fine": "fine", "within-genre": "within"}[k] for k in kinds
    ]
    io.write_dataset(ds.texts, ds.splits, tmp_path / "t.parquet", tmp_path / "s.parquet", "B", ds.provenance)
    assert list(pd.read_parquet(tmp_path / "s.parquet").columns) == ["split", "text_id", "label"]
    assert T.split_kinds(["B"], [tmp_path / "s.parquet"]) == {"B": dict(enumerate(kinds))}


# --- chance -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_chance_of_two_texts_two_labels_is_one_half():
    """Two texts, two labels: a random 2-partition puts them together (V = 0) or apart (V = 1) with equal
    probability, so the expected V-measure is 1/2."""
    splits = pd.DataFrame({"split": [0, 0], "text_id": [0, 1], "label": ["x", "y"]})
    # 200 draws: the mean's standard error is 0.035, so 0.5 +- 0.15 is 4 of them (seeded: the same draws each run);
    # a floor that always kept the two texts together (0) or apart (1) fails
    rows = SC.chance_scores(splits, n_draws=200, seed=0)
    assert set(rows.v_measure.round(12)) == {0.0, 1.0}
    assert rows.v_measure.mean() == pytest.approx(0.5, abs=0.15)
    assert rows.equals(SC.chance_scores(splits, n_draws=200, seed=0))


@pytest.mark.slow
def test_chance_ami_is_about_zero_and_summary_intervals_hold_the_mean():
    rng = np.random.default_rng(0)
    splits = pd.DataFrame(
        {"split": np.repeat([0, 1, 2], 200), "text_id": np.arange(600), "label": rng.integers(0, 5, 600).astype(str)}
    )
    rows = SC.chance_scores(splits, n_draws=50, seed=1)
    assert abs(rows.ami.mean()) < 0.005 and rows.v_measure.mean() > 0.005
    summ = C.chance_summary(
        {"D": rows}, metric="ami", confidence=0.95, split_kinds={"D": {0: "c", 1: "c", 2: "f"}}
    ).set_index(["column", "kind"])
    cell = summ.loc[("D", "")]
    assert cell.ci_low < cell["mean"] < cell.ci_high
    assert summ.loc[("D", "f"), "mean"] == pytest.approx(rows[rows.split == 2].ami.mean())


@pytest.mark.slow
def test_tables_show_the_chance_row_per_kind_table_and_comparability(tmp_path):
    scores = _kind_scores()
    scores.to_parquet(tmp_path / "scores.parquet")
    splits = pd.DataFrame(
        {"split": np.repeat(np.arange(8), 30), "text_id": np.tile(np.arange(30), 8), "label": ["p", "q", "r"] * 80}
    )
    kinds = ["coarse"] * 4 + ["fine"] * 4
    io.write_dataset(
        [f"t{i}" for i in range(30)],
        [(g.text_id.tolist(), g.label.tolist()) for _, g in splits.groupby("split")],
        tmp_path / "t.parquet",
        tmp_path / "s.parquet",
        "BlurbsClusteringS2S",
        {"split_kinds": kinds, "not_comparable_because": "built from part of the source (30 books)"},
    )
    SC.run(tmp_path / "s.parquet", tmp_path / "chance.parquet", n_draws=40, seed=42, log=lambda m: None)
    out = tmp_path / "out"
    render(
        tmp_path / "scores.parquet",
        ["BlurbsClusteringS2S"],
        [tmp_path / "t.parquet"],
        [tmp_path / "s.parquet"],
        {"a": "A", "b": "B"},
        [("kmeans", "none")],
        {"algorithm": "kmeans", "reduction": "none"},
        out,
        log=lambda m: None,
        statistics={"n_resamples": 500},
        metrics=["v_measure", "ami"],
        chance_paths=[tmp_path / "chance.parquet"],
        per_kind=True,
    )
    t2 = (out / "table2.md").read_text()
    chance_line = next(line for line in t2.splitlines() if line.startswith(f"| {T.CHANCE_ROW}"))
    assert "**" not in chance_line and "[" in chance_line  # a floor with its interval, never bold
    # 30 texts, 3 labels: a random partition scores far above model a's coarse level (~3): marked ‡
    assert "‡" in t2 and "stratified by kind" in t2
    assert "BlurbsClusteringS2S: not comparable (partial source)" in t2
    for stem in ("table3", "table2_ami", "table3_ami", "table2_per_kind"):
        assert T.CHANCE_ROW in (out / f"{stem}.md").read_text(), stem
    per_kind = pd.read_csv(out / "table2_per_kind.csv", index_col=0)
    assert T.CHANCE_ROW not in per_kind.index and T.CHANCE_ROW not in pd.read_csv(out / "table2.csv", index_col=0).index
    assert list(per_kind.columns) == ["BlurbsClusteringS2S coarse", "BlurbsClusteringS2S fine"]
    assert per_kind.at["A", "BlurbsClusteringS2S coarse"] == pytest.approx(3.05)
    chance = pd.read_csv(out / "chance.csv")
    assert {"v_measure", "ami"} <= set(chance.metric)


def test_comparability_is_decided_in_one_place():
    assert P.comparability_status("BlurbsClusteringS2S", {"not_comparable_because": ""}) == P.COMPARABLE
    assert P.comparability_status("X", None) == P.NO_PROVENANCE
    assert P.comparability_status("X", {"not_comparable_because": "built from part"}) == "built from part"
    why = "pool differs from MTEB's"
    assert P.comparability_status("B", {"not_comparable_because": ""}, protocol_reason=why) == why
    # no recorded decision: the data layer's rule decides (a custom dataset is never the paper's)
    assert P.comparability_status("Mine", {"origin": "custom"}) == "not one of the paper's datasets"
    line = P.comparability_line({"A": "", "B": "built from part of the source (3 books)"}, ["A", "B"])
    assert line == (
        "Comparability with the paper's published numbers: A: comparable; B: not comparable (partial source)."
    )


@pytest.mark.slow
def test_mteb_v2_chance_runs_the_v2_protocol_on_random_vectors(tmp_path):
    """Random vectors carry nothing of the labels: the v2 protocol's AMI is about 0 on them, its V-measure above
    0; the v2 table gets the chance row (not in its CSV)."""
    from tecb.report import mteb_v2 as v2_table
    from tecb.scoring import mteb_v2

    rng = np.random.default_rng(0)
    splits = pd.DataFrame(
        {"split": np.repeat([0, 1], 150), "text_id": np.arange(300), "label": rng.integers(0, 4, 300).astype(str)}
    )
    splits.to_parquet(tmp_path / "s.parquet")
    opts = {"sample_size": 300, "n_bootstraps": 3}
    rows = SC.mteb_v2_chance(
        tmp_path / "s.parquet", tmp_path / "c.parquet", dataset="Mine", n_draws=3, seed=42, log=lambda m: None, **opts
    )
    assert len(rows) == 3 * 3 and rows.equals(pd.read_parquet(tmp_path / "c.parquet"))
    assert abs(rows.ami.mean()) < 0.02 and rows.v_measure.mean() > 0.001
    # the v2 table of a model (here random vectors too) with the chance row
    x = rng.standard_normal((300, 8)).astype(np.float32)
    from tecb.io import embedding_batch, embedding_schema, write_table

    schema = embedding_schema(8, {"n_texts": 300})
    import pyarrow as pa

    write_table(pa.Table.from_batches([embedding_batch(schema, 0, x)]), tmp_path / "e.parquet")
    mteb_v2.run(tmp_path / "e.parquet", tmp_path / "s.parquet", tmp_path / "m.parquet", dataset="Mine", seed=42, **opts)
    paths = {ext: tmp_path / f"v2.{ext}" for ext in ("md", "csv", "tex", "html")}
    files = v2_table.TableFiles(
        results={("m", "Mine"): tmp_path / "m.parquet"},
        chance={"Mine": tmp_path / "c.parquet"},
        table=paths,
        long=tmp_path / "long.csv",
    )
    v2_table.render_table(files, {"m": "M"}, ["Mine"], log=lambda m: None)
    md = paths["md"].read_text()
    assert f"| {T.CHANCE_ROW} |" in md and T.CHANCE_ROW not in paths["csv"].read_text()
