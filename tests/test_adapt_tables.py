"""Table 6 (tecb.report.adapt_tables) on constructed score files with known numbers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tecb.adapt.jobs import _write_scores
from tecb.report import adapt_tables, contrasts
from tecb.report.render import stem_paths
from tecb.report.stats import Statistics


def _job(tmp_path, name, base, adapted, steps=6, skipped=None, seed=42):
    rows = []
    if not skipped:
        for step, values in ((0, base), (steps, adapted)):
            for split, v in enumerate(values):
                rows.append(
                    {
                        "step": step,
                        "split": split,
                        "n_texts": 10,
                        "n_labels": 2,
                        "n_clusters": 2,
                        "v_measure": v,
                        "homogeneity": v,
                        "completeness": v,
                        "loss": None if step == 0 else 0.5,
                    }
                )
    protocol = {"variant": name[2], "skipped": skipped} if skipped else {"variant": name[2], "labels_seen": "none"}
    meta = {"protocol": protocol, "training": {"steps": steps, "device": "cpu", "precision": "float32"}}
    path = tmp_path / f"{'-'.join(name)}-{seed}.parquet"
    _write_scores(rows, meta, path)
    timing = tmp_path / f"{'-'.join(name)}-{seed}.json"
    timing.write_text(json.dumps({"train_seconds": 1.5, "eval_seconds": 0.5, "total_seconds": 2.5}))
    return path, (*name, seed), timing


def table6_outputs(folder, *, contrasts: bool = False) -> dict:
    """The output paths ``adapt_tables.render`` writes Table 6 and its companions to, under ``folder``."""
    outputs = {
        "scores": folder / "scores.parquet",
        "figure": folder / "fig.png",
        "table6": stem_paths(folder / "table6"),
        "costs": {"md": folder / "costs.md", "csv": folder / "costs.csv"},
    }
    if contrasts:
        outputs["contrasts"] = {ext: folder / f"contrasts.{ext}" for ext in ("md", "csv", "tex")}
    return outputs


def _cob_and_triplet_lodo(tmp_path, base: list, dataset: str) -> list:
    """Two method jobs under lodo above ``base`` (COB by 0.03+, triplet by 0.02+), read against the controls."""
    return [
        _job(tmp_path, ("m", "cob", "lodo", dataset), base, [b + 0.03 + 0.002 * i for i, b in enumerate(base)]),
        _job(
            tmp_path, ("m", "triplet", "lodo", dataset), base, [b + 0.02 + 0.001 * (i % 3) for i, b in enumerate(base)]
        ),
    ]


def test_table6_pairs_adapted_with_base_split_by_split(tmp_path):
    jobs = [
        _job(
            tmp_path,
            ("m", "simcse", "transductive", "TenKGnadClusteringS2S"),
            [0.1, 0.2, 0.3, 0.4],
            [0.2, 0.3, 0.4, 0.5],
        ),
        _job(tmp_path, ("m", "cob", "disjoint", "TenKGnadClusteringS2S"), [], [], skipped="3 categories, fewer than 4"),
    ]
    outputs = table6_outputs(tmp_path)
    adapt_tables.render(
        adapt_tables.ReportInputs(keys=[j[1] for j in jobs], scores=[j[0] for j in jobs], timings=[j[2] for j in jobs]),
        outputs,
        statistics=Statistics(test="permutation", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42),
        model_names={"m": "Model"},
        log=lambda *_: None,
    )
    table = pd.read_csv(tmp_path / "table6.csv", index_col=0)
    row = table.loc["Model · SimCSE · transductive · TenKGnad S2S"]
    assert row["base"] == pytest.approx(25.0) and row["adapted"] == pytest.approx(35.0)
    assert row["Δ"] == pytest.approx(10.0)
    # four splits all better: the exact sign-flip p is 1/16 one-sided, 1/8 two-sided (not significant at 0.05)
    assert adapt_tables.stats.parse_p(row["p"]) == pytest.approx(0.125)
    assert row["steps"] == 6 and row["device"] == "cpu"
    skipped = table.loc["Model · COB · disjoint · TenKGnad S2S"]
    assert "skipped: 3 categories" in skipped["p"]
    md = (tmp_path / "table6.md").read_text()
    assert "+10.00 [+10.00, +10.00]" in md and "*" not in md.split("\n\n")[1].split("Δ")[1].split("\n")[2]
    costs = pd.read_csv(tmp_path / "costs.csv", index_col=0)
    assert list(costs["train_seconds"]) == [1.5, 1.5]
    assert "seconds" not in (tmp_path / "table6.csv").read_text()
    assert (tmp_path / "fig.png").stat().st_size > 0


def test_table6_marks_a_significant_gain(tmp_path):
    base = [0.1 + 0.01 * i for i in range(10)]
    adapted = [b + 0.05 + 0.001 * i for i, b in enumerate(base)]
    path, key, _ = _job(tmp_path, ("m", "cob", "lodo", "BlurbsClusteringS2S"), base, adapted)
    long, meta = adapt_tables.collect([path], [key])
    table, suffix = adapt_tables.table6(
        long, meta, statistics=Statistics(test="wilcoxon", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42)
    )
    assert table["Δ"].iloc[0] == pytest.approx(100 * (sum(adapted) - sum(base)) / 10)
    assert adapt_tables.stats.parse_p(table["p"].iloc[0]) < 0.05 and suffix["Δ"].iloc[0].startswith("*")


def test_what_ran_shows_the_clustering_and_flags_a_clusterns_run_that_never_clustered():
    from tecb.adapt.jobs import what_ran as job_warnings

    clustered = {
        "phases": {
            "clusterns": {
                "clustering_started_at": 3,
                "n_clusters": 8,
                "batches": 20,
                "batches_with_hard_negatives": 16,
                "batches_with_false_negatives": 5,
            }
        }
    }
    assert adapt_tables.what_ran("clusterns", clustered) == (
        "clustering from step 3, k 8, hard negatives in 80 % and false negatives in 25 % of 20 batches"
    )
    assert job_warnings("clusterns", clustered) == []
    never = {"phases": {"clusterns": {"clustering_started_at": None, "n_clusters": 8, "batches": 20}}}
    warnings = job_warnings("clusterns", never)
    assert len(warnings) == 1 and "never clustered in 20 batches" in warnings[0]
    assert adapt_tables.what_ran("clusterns", never, warnings) == "NEVER CLUSTERED (plain SimCSE)"
    auto = {"phases": {"clusterns": {**clustered["phases"]["clusterns"], "clustering_started_at": 0, "n_clusters": 12,
                                     "n_clusters_auto": {"rule": "best silhouette of the step-0 batch"},
                                     "similarity_threshold": 0.8123,
                                     "similarity_threshold_auto": {"rule": "step-0 mean in-batch cosine"}}}}  # fmt: skip
    assert adapt_tables.what_ran("clusterns", auto) == (
        "clustering from step 0, k 12 (auto: best silhouette of the step-0 batch), σ 0.81 (auto: step-0 mean "
        "in-batch cosine), hard negatives in 80 % and false negatives in 25 % of 20 batches"
    )
    only_k = {"phases": {"clusterns": {**never["phases"]["clusterns"], "n_clusters": 6,
                                       "n_clusters_auto": {"rule": "best silhouette of the step-0 batch"}}}}  # fmt: skip
    assert adapt_tables.what_ran("clusterns", only_k) == (
        "NEVER CLUSTERED (plain SimCSE), k 6 (auto: best silhouette of the step-0 batch)"
    )
    cob = {"phases": {"cob": {"instances": 12, "projection_head": "Dense(8 -> 256, tanh)"}}}
    assert adapt_tables.what_ran("cob", cob) == "12 instances, head Dense(8 -> 256, tanh)"
    assert adapt_tables.what_ran("argue", {"phases": {"pairs": {}, "siamese": {}}}) == "phases pairs + siamese"
    assert adapt_tables.what_ran("simcse", {"phases": {"simcse": {"augmentation": "cropping"}}}) == "cropping views"
    cropped = {"augmentation": "cropping", "crop_ratio": 0.5, "views": 40, "views_cropped": 30}
    assert adapt_tables.what_ran("simcse", {"phases": {"simcse": cropped}}) == (
        "cropping views (ratio 0.5: 75 % of views cut)"
    )


def test_table6_has_a_ran_column(tmp_path):
    path, key, timing = _job(
        tmp_path, ("m", "clusterns", "transductive", "TenKGnadClusteringS2S"), [0.1] * 3, [0.2] * 3
    )
    long, meta = adapt_tables.collect([path], [key])
    meta[key]["training"]["phases"] = {"clusterns": {"clustering_started_at": None, "batches": 4}}
    table, _ = adapt_tables.table6(
        long, meta, statistics=Statistics(test="wilcoxon", alpha=0.05, confidence=0.95, n_resamples=200, seed=0)
    )
    assert table["ran"].tolist() == ["NEVER CLUSTERED (plain SimCSE)"]


def test_table6_statistics_are_table2s_stratified_by_split_design(tmp_path):
    """Blurbs mixes three split designs; Table 2 resamples splits within their design and stratifies its paired
    test by design. Table 6 does the same where split_kinds has the dataset: its interval and p-value are the
    stratified ones of tecb.report.stats, not those of one pooled set of splits."""
    import numpy as np

    from tecb.report import stats

    base = [0.10, 0.12, 0.11, 0.50, 0.52, 0.51, 0.30, 0.33]
    adapted = [0.13, 0.12, 0.15, 0.49, 0.55, 0.56, 0.30, 0.36]
    path, key, _ = _job(tmp_path, ("m", "cob", "lodo", "BlurbsClusteringS2S"), base, adapted)
    long, meta = adapt_tables.collect([path], [key])
    kinds = {"BlurbsClusteringS2S": {i: k for i, k in enumerate("cccfffww")}}
    common = {"statistics": Statistics(test="bootstrap", alpha=0.05, confidence=0.95, n_resamples=2000, seed=3)}
    _, pooled = adapt_tables.table6(long, meta, **common)
    _, strat = adapt_tables.table6(long, meta, split_kinds=kinds, **common)
    strata = list("cccfffww")
    lo, hi = stats.bootstrap_interval(np.array(base), strata=strata, confidence=0.95, n_resamples=2000, seed=3)
    assert strat["base"].iloc[0] == f" [{lo * 100:.2f}, {hi * 100:.2f}]"
    lo, hi = stats.bootstrap_interval(np.array(base), confidence=0.95, n_resamples=2000, seed=3)
    assert pooled["base"].iloc[0] == f" [{lo * 100:.2f}, {hi * 100:.2f}]"
    assert strat["base"].iloc[0] != pooled["base"].iloc[0]  # the designs' spread is not resampled noise


def test_table6_has_the_chance_row_of_table2(tmp_path):
    """The random-partition floor under Table 6, as under Table 2: per dataset the mean over draws of the mean over
    splits (hand-computed) with the percentile interval over the draws."""
    path, key, _ = _job(tmp_path, ("m", "simcse", "transductive", "TenKGnadClusteringS2S"), [0.3] * 2, [0.4] * 2)
    long, meta = adapt_tables.collect([path], [key])
    chance = pd.DataFrame(
        {"split": [0, 1, 0, 1, 0, 1], "draw": [0, 0, 1, 1, 2, 2], "v_measure": [0.02, 0.04, 0.01, 0.03, 0.05, 0.07]}
    )
    table, suffix = adapt_tables.table6(
        long, meta, statistics=Statistics(test="wilcoxon", alpha=0.05, confidence=0.5, n_resamples=200, seed=0),
        chance={"TenKGnadClusteringS2S": chance},
    )  # fmt: skip
    row = [i for i in table.index if i.startswith("Random partition (chance)")]
    assert len(row) == 1 and len(table) == 2
    # draws' means over splits: 0.03, 0.02, 0.06 -> mean 0.0367; 25th/75th percentiles 0.025, 0.045
    assert table.loc[row[0], "base"] == pytest.approx(11 / 3)
    assert suffix.loc[row[0], "base"] == " [2.50, 4.50]"
    assert pd.isna(table.loc[row[0], "adapted"]) and table.loc[row[0], "p"] == ""


def test_two_seeds_enter_the_interval_and_the_test_by_hand(tmp_path):
    """Seed A improves all four splits, seed B three of four: the intersection-union test takes the weaker seed.
    Exact sign flips of 4 splits: A's one-sided p is 1/16, B's (differences 1, 2, 3, -0.5, in V x 100) 2/16 (only
    +,+,+,+ and +,+,+,- reach B's sum 5.5), so p = 2 * max(1/16, 2/16) = 0.25; one seed alone gives 2/16."""
    base = [0.10, 0.20, 0.30, 0.40]
    seed_a = [b + d / 100 for b, d in zip(base, [1, 2, 3, 4])]
    seed_b = [b + d / 100 for b, d in zip(base, [1, 2, 3, -0.5])]
    name = ("m", "simcse", "transductive", "TenKGnadClusteringS2S")
    jobs = [_job(tmp_path, name, base, seed_a, seed=1), _job(tmp_path, name, base, seed_b, seed=2)]
    long, meta = adapt_tables.collect([j[0] for j in jobs], [j[1] for j in jobs])
    table, suffix = adapt_tables.table6(
        long, meta, statistics=Statistics(test="permutation", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42)
    )
    assert float(table["p"].iloc[0]) == pytest.approx(0.25)
    assert table["seeds"].iloc[0] == "2"
    assert table["Δ"].iloc[0] == pytest.approx((10 + 5.5) / 2 / 4)
    long_a, meta_a = adapt_tables.collect([jobs[0][0]], [jobs[0][1]])
    alone, _ = adapt_tables.table6(
        long_a,
        meta_a,
        statistics=Statistics(test="permutation", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42),
    )
    assert float(alone["p"].iloc[0]) == pytest.approx(0.125)


def test_seeds_bootstrap_interval_by_hand():
    """Seeds that differ by a constant on every split: the split bootstrap of the seed mean has zero width, the
    two-level one draws 0, 1 or 2 copies of the better seed (probabilities 1/4, 1/2, 1/4), so its 95 % interval
    is [0, 1]. One seed: exactly bootstrap_interval."""
    from tecb.report import stats

    matrix = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert stats.bootstrap_interval([0.5, 0.5, 0.5], seed=1) == (0.5, 0.5)
    assert stats.seeds_bootstrap_interval(matrix, seed=1) == (0.0, 1.0)
    row = [0.1, 0.4, 0.2, 0.9]
    kinds = ["a", "a", "b", "b"]
    assert stats.seeds_bootstrap_interval([row], strata=kinds, seed=3) == stats.bootstrap_interval(
        row, strata=kinds, seed=3
    )
    with pytest.raises(ValueError, match="NaN"):
        stats.seeds_bootstrap_interval([[0.1, float("nan")]], seed=1)


def test_what_ran_shows_the_epoch_model_selection_kept():
    training = {
        "phases": {
            "cob": {
                "instances": 16,
                "validation_instances": 4,
                "validation": [0.2, 0.25, 0.24],
                "selected_epoch": 1,
                "projection_head": "Dense(384 -> 256, tanh)",
            }
        }
    }
    text = adapt_tables.what_ran("cob", training)
    assert "16 instances" in text and "epoch 1 of 2 kept on 4 validation instances" in text
    assert "20.0/25.0/24.0" in text


def _contrast_jobs(tmp_path):
    """SimCSE and ClusterNS (2 seeds each) and argue's two objectives (1 seed) on 6 Blurbs splits of two designs:
    ClusterNS is 2 points above SimCSE on every split, argue/similarity 1 point above argue/order."""
    base = [0.10, 0.12, 0.11, 0.50, 0.52, 0.51]
    name = lambda m, v: ("m", m, v, "BlurbsClusteringS2S")  # noqa: E731
    jobs = []
    for seed, jitter in ((1, 0.0), (2, 0.004)):
        jobs.append(_job(tmp_path, name("simcse", "transductive"), base, [b + 0.01 + jitter for b in base], seed=seed))
        jobs.append(
            _job(tmp_path, name("clusterns", "transductive"), base, [b + 0.03 + jitter for b in base], seed=seed)
        )
    jobs.append(_job(tmp_path, name("argue", "similarity"), base, [b + 0.02 for b in base], seed=1))
    jobs.append(
        _job(tmp_path, name("argue", "order"), base, [b + 0.01 + 0.001 * i for i, b in enumerate(base)], seed=1)
    )
    return jobs


DECLARED = [
    adapt_tables.Contrast(a="*", b="base"),
    adapt_tables.Contrast(a="clusterns", b="simcse"),
    adapt_tables.Contrast(a="cob", b="triplet"),
    adapt_tables.Contrast(a="argue/similarity", b="argue/order"),
]


def test_contrasts_are_computed_per_design_with_seeds_and_holm(tmp_path):
    jobs = _contrast_jobs(tmp_path)
    long, meta = adapt_tables.collect([j[0] for j in jobs], [j[1] for j in jobs])
    kinds = {"BlurbsClusteringS2S": dict(enumerate("cccfff"))}
    statistics = Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=2000, seed=4)
    table, notes = adapt_tables.contrasts(long, meta, declared=DECLARED, statistics=statistics, split_kinds=kinds)
    assert notes == ["cob − triplet: skipped, this run has no such pair of arms"]
    # 4 arms vs base + clusterns - simcse + similarity - order, each over all splits and per design (c, f)
    assert len(table) == 6 * 3 and set(table.design) == {"all", "c", "f"} and table.index.is_unique
    row = table[(table.contrast == "clusterns − simcse") & (table.design == "all")].iloc[0]
    assert row["delta"] == pytest.approx(2.0) and row["seeds"] == "2 / 2" and row["splits"] == 6
    assert row["mean_a"] - row["mean_b"] == pytest.approx(row["delta"])
    per_design = table[(table.contrast == "clusterns − simcse") & (table.design != "all")]
    assert list(per_design.splits) == [3, 3] and per_design.delta.tolist() == pytest.approx([2.0, 2.0])
    argue = table[(table.contrast == "argue/similarity − argue/order") & (table.design == "all")].iloc[0]
    assert argue["delta"] == pytest.approx(100 * (0.01 - 0.001 * 2.5)) and argue["seeds"] == "1 / 1"
    # p_holm over every row; a mark only where the interval excludes 0
    p, p_holm = table.p.map(adapt_tables.stats.parse_p), table.p_holm.map(adapt_tables.stats.parse_p)
    assert (p_holm >= p).all() and table.significant.isin(["*", ""]).all()
    low, high = table.ci_low.astype(float), table.ci_high.astype(float)  # printed with the decimals their sign needs
    outside = (low > 0) | (high < 0)
    assert (outside == (p < 0.05)).all() and (~outside[table.significant == "*"]).sum() == 0
    # the skipped arms are a note, and `base` cannot come first
    with pytest.raises(ValueError, match="only be the second arm"):
        adapt_tables.contrasts(
            long, meta, declared=[adapt_tables.Contrast(a="base", b="simcse")], statistics=statistics
        )


def test_render_writes_the_contrasts_beside_table6(tmp_path):
    jobs = _contrast_jobs(tmp_path)
    outputs = table6_outputs(tmp_path, contrasts=True)
    adapt_tables.render(
        adapt_tables.ReportInputs(keys=[j[1] for j in jobs], scores=[j[0] for j in jobs], timings=[j[2] for j in jobs]),
        outputs,
        statistics=Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=500, seed=1),
        contrasts_declared=[{"a": "clusterns", "b": "simcse"}, {"a": "tsdae", "b": "wwm"}],
        log=lambda *_: None,
    )
    csv = pd.read_csv(tmp_path / "contrasts.csv", index_col=0)
    assert list(csv.contrast) == ["clusterns − simcse"] and csv["delta"].iloc[0] == pytest.approx(2.0)
    md = (tmp_path / "contrasts.md").read_text()
    assert "tsdae − wwm: skipped" in md and "Holm" in md
    assert "clusterns − simcse" in (tmp_path / "contrasts.tex").read_text()
    table6 = pd.read_csv(tmp_path / "table6.csv", index_col=0)
    assert set(table6["SD seeds"].astype(str)) == {"0.28", "1 seed"}  # 2 seeds 0.4 apart; argue ran 1 seed
    # the noise floor from the seeds' spread (pooled SD 0.28: SimCSE's and ClusterNS's seeds 0.4 apart each)
    assert "Noise floor, a LOWER BOUND (training seeds alone, SD pooled over the methods, 2 seeds" in md6(tmp_path)
    assert "Blurbs S2S: seed SD 0.28" in md6(tmp_path)


def md6(tmp_path):
    return (tmp_path / "table6.md").read_text()


def test_the_random_head_control_is_a_row_apart_and_the_contrast_methods_are_read_against(tmp_path):
    """A control row (random_head): its Δ against the base with its interval, labelled a control in `ran`, its p
    Holm-adjusted among the controls, so adding it changes no method's number; `*` does not match it, and
    `cob − random_head` compares COB with it on the same variant (a contrast with a control: its own Holm family)."""
    base = [0.1 + 0.01 * i for i in range(8)]
    dataset = "BlurbsClusteringS2S"
    methods = _cob_and_triplet_lodo(tmp_path, base, dataset)
    control = _job(
        tmp_path, ("m", "random_head", "lodo", dataset), base, [b + 0.01 * (i % 2) for i, b in enumerate(base)], steps=1
    )
    statistics = Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=2000, seed=3)
    declared = [adapt_tables.Contrast(a="*", b="base"), adapt_tables.Contrast(a="cob", b="triplet"),
                adapt_tables.Contrast(a="cob", b="random_head"), adapt_tables.Contrast(a="triplet", b="random_head")]  # fmt: skip

    def tables(jobs):
        long, meta = adapt_tables.collect([j[0] for j in jobs], [j[1] for j in jobs])
        for key in meta:  # as the training loop records them: the control's head, no optimizer step
            meta[key]["training"]["phases"] = {key[1]: {"projection_head": "Dense(8 -> 256, tanh)"}}
        if control[1] in meta:
            meta[control[1]]["training"]["steps"] = 0
        table, suffix = adapt_tables.table6(long, meta, statistics=statistics)
        found, notes = adapt_tables.contrasts(long, meta, declared=declared, statistics=statistics)
        return table, suffix, found, notes, meta

    without, _, contrasts_without, notes_without, _ = tables(methods)
    table, suffix, found, notes, meta = tables(methods + [control])
    row = table.loc["m · random head · lodo · Blurbs S2S"]
    assert row["Δ"] == pytest.approx(0.5) and row["steps"] == "0"
    assert row["ran"] == "CONTROL: no training, head Dense(8 -> 256, tanh)"
    assert suffix.loc["m · random head · lodo · Blurbs S2S", "Δ"].strip(" *").startswith("[")
    # the methods' rows, p included, are those of the run without the control (their own Holm family)
    pd.testing.assert_frame_equal(table.drop(index="m · random head · lodo · Blurbs S2S"), without)
    assert list(table.index).index("m · random head · lodo · Blurbs S2S") == 2  # after COB and triplet
    assert "random head: a control, not a method" in adapt_tables.control_note(meta)
    assert adapt_tables.control_note({k: v for k, v in meta.items() if k[1] != "random_head"}) == ""
    # `*` is every trained arm, not the control; the control's contrasts are added, the others unchanged
    assert set(found[found.contrast == "* − base"].a) == {"COB lodo", "Triplet lodo"}
    assert notes_without == ["cob − random_head: skipped, this run has no such pair of arms",
                             "triplet − random_head: skipped, this run has no such pair of arms"] and not notes  # fmt: skip
    pd.testing.assert_frame_equal(found[~found.b.str.startswith("random head")], contrasts_without)
    cob = found[found.contrast == "cob − random_head"].iloc[0]
    assert cob["b"] == "random head lodo" and cob["delta"] == pytest.approx(cob["mean_a"] - cob["mean_b"])
    assert cob["delta"] == pytest.approx(table.loc["m · COB · lodo · Blurbs S2S", "Δ"] - row["Δ"])
    # Holm within each family: two control contrasts adjusted together
    p = found[found.b.str.startswith("random head")].p.map(adapt_tables.stats.parse_p).to_numpy()
    holm = found[found.b.str.startswith("random head")].p_holm.map(adapt_tables.stats.parse_p).to_numpy()
    assert holm == pytest.approx(adapt_tables.stats.holm(p), abs=1e-3)


def test_holm_by_family_adjusts_each_family_alone():
    p = [0.01, float("nan"), 0.02, 0.04, 0.03]
    adjusted = contrasts.holm_by_family(p, [False, False, True, False, True])
    assert adjusted[[0, 3]] == pytest.approx([0.02, 0.04])  # Holm over the two methods' rows alone
    assert adjusted[[2, 4]] == pytest.approx([0.04, 0.04])  # and over the two controls' rows alone
    assert pd.isna(adjusted[1])


def test_an_oracle_row_is_a_positive_control_adjusted_with_the_controls(tmp_path):
    """A row of the ``oracle`` protocol (trained on the evaluated labels: the positive control) says so in `ran`,
    and its p is Holm-adjusted with the controls' rows (random_head's), apart from the methods': adding the oracle
    rows changes no method's row, nor a contrast between methods; a contrast with an oracle arm is a control's."""
    base = [0.1 + 0.01 * i for i in range(8)]
    dataset = "BlurbsClusteringS2S"
    methods = _cob_and_triplet_lodo(tmp_path, base, dataset)
    head = [b + 0.01 * (i % 2) for i, b in enumerate(base)]
    oracle = [
        _job(tmp_path, ("m", "triplet", "oracle", dataset), base, [b + 0.1 + 0.004 * i for i, b in enumerate(base)]),
        _job(tmp_path, ("m", "random_head", "oracle", dataset), base, head, steps=1),
    ]
    statistics = Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=2000, seed=3)
    declared = [adapt_tables.Contrast(a="*", b="base"), adapt_tables.Contrast(a="cob", b="triplet")]

    def tables(jobs):
        long, meta = adapt_tables.collect([j[0] for j in jobs], [j[1] for j in jobs])
        for key in meta:
            meta[key]["training"]["phases"] = {key[1]: {"projection_head": "Dense(8 -> 256, tanh)"}}
        table, _ = adapt_tables.table6(long, meta, statistics=statistics)
        found, _ = adapt_tables.contrasts(long, meta, declared=declared, statistics=statistics)
        return table, found

    without, contrasts_without = tables(methods)
    table, found = tables(methods + oracle)
    row = table.loc["m · Triplet · oracle · Blurbs S2S"]
    assert row["ran"] == "POSITIVE CONTROL: trained on the evaluated labels, ? triplets, head Dense(8 -> 256, tanh)"
    assert table.loc["m · random head · oracle · Blurbs S2S", "ran"].startswith("CONTROL: no training")
    pd.testing.assert_frame_equal(table.loc[without.index], without)  # the methods' rows, p included, unchanged
    raw = [
        adapt_tables.stats.parse_p(tables([job])[0]["p"].iloc[0]) for job in oracle
    ]  # each alone: Holm over one row is its p
    adjusted = table.loc[["m · Triplet · oracle · Blurbs S2S", "m · random head · oracle · Blurbs S2S"], "p"]
    assert adjusted.map(adapt_tables.stats.parse_p).to_numpy() == pytest.approx(adapt_tables.stats.holm(raw), abs=1e-3)
    assert adapt_tables.is_control(("m", "triplet", "oracle")) and not adapt_tables.is_control(("m", "cob", "lodo"))
    # contrasts: the methods' rows and their Holm unchanged; `*` includes the oracle arm, in the controls' family
    pd.testing.assert_frame_equal(found[~found.a.str.endswith("oracle")], contrasts_without)
    assert set(found[found.contrast == "* − base"].a) == {"COB lodo", "Triplet lodo", "Triplet oracle"}
