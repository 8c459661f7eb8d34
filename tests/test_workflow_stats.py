"""Statistics, the MTEB v2 scoring mode, the chance floor and the cluster views through the workflow (issue 15.3,
15.4, 15.6), asserted on the shared demo run (conftest.demo_run), which has all of them on."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import demo_run_config, run_snakemake


@pytest.mark.workflow
def test_statistics_mteb_v2_chance_and_cluster_views_of_the_demo(demo_run):
    """The shared demo has every scoring and statistics switch on (tables.metrics: v_measure and ami, the
    statistics, scoring.protocols: paper and mteb_v2, the chance floor, the cluster views): each through the
    workflow, and the tables byte-identical when rerun."""
    res, config = demo_run / "results" / "demo", demo_run_config(demo_run)
    models = [spec["name"] for spec in config["models"].values()]
    md = (res / "tables" / "table2.md").read_text()
    assert "multiple comparisons with the best" in md and "NOT for comparing models" in md
    assert (res / "tables" / "table2_ami.md").read_text().startswith("Table 2: AMI x 100")
    iv = pd.read_csv(res / "tables" / "intervals.csv")
    assert set(iv.metric) == {"v_measure", "ami"} and (iv.ci_low <= iv["mean"]).all()
    dataset = "TenKGnadClusteringS2S"  # one level of labels
    v2 = pd.read_parquet(res / "mteb_v2" / "tfidf" / f"{dataset}.parquet")
    n_bootstraps = config["scoring"]["mteb_v2"].get("n_bootstraps", 10)  # the schema's default
    assert len(v2) == n_bootstraps and v2.v_measure.between(0, 1).all(), v2
    n_pool = json.loads(pq.read_schema(res / "mteb_v2" / "tfidf" / f"{dataset}.parquet").metadata[b"tecb"])["n_pool"]
    assert v2.n_texts.nunique() == 1 and 0 < v2.n_texts.iloc[0] <= n_pool, (v2.n_texts, n_pool)
    table_v2 = (res / "tables" / "table_mteb_v2.md").read_text()
    assert all(name in table_v2 for name in models), (models, table_v2[:500])
    # the chance floor: one file per dataset (n_draws per split), a row under Table 2 (not in its CSV), its
    # numbers in chance.csv
    splits = pd.read_parquet(res / "datasets" / dataset / "splits.parquet")
    n_draws = config["tables"]["chance"]["n_draws"]
    assert len(pd.read_parquet(res / "chance" / f"{dataset}.parquet")) == splits.split.nunique() * n_draws
    assert (
        "| Random partition (chance) |" in md and "Random partition" not in (res / "tables" / "table2.csv").read_text()
    )
    columns = set(pd.read_csv(res / "tables" / "table2_statistics.csv").column)
    assert set(pd.read_csv(res / "tables" / "chance.csv").column) == columns and "Average" in columns
    view = (res / "report" / "clusters" / "tfidf" / f"{dataset}.html").read_text()
    assert "top terms (c-TF-IDF)" in view and "V-measure" in view
    assert "n/a" in (res / "report" / "truncation.html").read_text()  # TF-IDF truncates nothing
    # the tables are byte-identical when rerun (and what reads them again too: the demo is left finished)
    before = {p.name: p.read_bytes() for p in (res / "tables").iterdir()}
    args = ("--configfile", "config/demo.yaml", "--cores", "2", "--resources", "gpu=1")
    run_snakemake(demo_run, *args, "--forcerun", "tables", "mteb_v2_table")
    assert before == {p.name: p.read_bytes() for p in (res / "tables").iterdir()}
    assert "Nothing to be done" in run_snakemake(demo_run, "-n", *args).stdout


@pytest.mark.workflow
def test_demo_table2_shows_intervals_and_significance_marks(demo_run):
    res = demo_run / "results" / "demo"
    md = (res / "tables" / "table2.md").read_text()
    assert "†" in md and "multiple comparisons with the best" in md and "NOT for comparing models" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| Model")]
    assert rows[-1].startswith("| Random partition (chance) |")  # the chance row under the models (issue 21.3)
    rows = rows[:-1]
    models = list(demo_run_config(demo_run)["models"])
    assert len(rows) == len(models) == 2  # the test demo's TF-IDF and tiny BERT (tests/conftest.py)
    assert all(cell.count("[") == 1 for row in rows for cell in row.split("|")[2:-1])  # an interval in each cell
    stats = pd.read_csv(res / "tables" / "table2_statistics.csv")
    assert stats.groupby("column").best.sum().eq(1).all() and len(stats.column.unique()) == 7
    # a random-init BERT: worse on average; per column the two-sided mean test (overlap-corrected) marks it worse
    # exactly where the interval of its difference to the best excludes 0 (one comparison per column: no Holm)
    tiny = stats[stats.model == "tiny-bert"]
    assert not tiny[tiny.column == "Average"].not_worse.any()
    assert ((tiny.diff_low > 0) | (tiny.diff_high < 0)).eq(~tiny.not_worse).all() and (~tiny.not_worse).any()
    assert (res / "tables" / "table2_ami.md").exists() and (res / "tables" / "table_mteb_v2.md").exists()
    for model in models:
        assert len(list((res / "report" / "clusters" / model).glob("*.html"))) == 6


@pytest.mark.workflow
def test_demo_table5_and_its_contrasts_use_the_text_bootstrap_over_labels_that_give_the_scores(demo_run):
    """The demo's pre-training jobs keep their predictions (every evaluated epoch), so Table 5's deltas and the
    pre-training contrasts are tested by the paired text-level bootstrap over them and the un-adapted model's k-means
    labels (issue 53); each labels file gives its job's scores again. (The scores themselves are unchanged: the
    same pre-training with and without this change wrote the same bytes; the kept demo's were made with other BLAS
    kernels, benchmarks/blas_kernels.md, so they are no byte reference on every machine.)"""
    from sklearn.metrics import v_measure_score

    from tecb.report.bootstrap import split_predictions
    from tecb.report.stats import parse_p

    res = demo_run / "results" / "demo"
    labels = sorted((res / "pretrain").glob("*/*/*/seed*.labels.parquet"))
    assert [p.relative_to(res / "pretrain").parts[1] for p in labels] == ["tsdae", "wwm"]
    assert all(set(pd.read_parquet(p).epoch) == {1, 2} for p in labels)  # every evaluated epoch
    found = pd.read_csv(res / "pretrain" / "contrasts.csv")
    assert len(found) == 3 and set(found.test) == {"text bootstrap"} and (found.detectable > 0).all()
    assert (found.p.map(parse_p) > 0).all() and (found.splits > 0).all() and (found.texts > 0).all()
    assert "tests used: text bootstrap;" in (res / "pretrain" / "table5.md").read_text()
    splits = pd.read_parquet(res / "datasets" / "TenKGnadClusteringS2S" / "splits.parquet")
    for path in labels:
        scores = pd.read_parquet(path.with_name(path.name.replace(".labels", "")))
        for epoch, part in pd.read_parquet(path).groupby("epoch"):
            found = split_predictions(splits, part.drop(columns="epoch"), source=str(path))
            again = [v_measure_score(y, c[0]) for _, (_, y, c) in sorted(found.items())]
            want = scores[scores.epoch == epoch].sort_values("split").v_measure.tolist()
            assert again == pytest.approx(want, abs=1e-12), (path, epoch)
