"""Statistics, the MTEB v2 scoring mode and the cluster views through the workflow (issue 15.3, 15.4, 15.6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import copy_project, demo_run_config, run_snakemake

WORDS = {
    "sport": ["Tor", "Spiel", "Mannschaft", "Trainer", "Liga", "Stadion", "Regierung"],
    "politik": ["Regierung", "Wahl", "Partei", "Minister", "Gesetz", "Parlament", "Theater"],
    "kultur": ["Theater", "Roman", "Konzert", "Museum", "Oper", "Bühne", "Spiel"],
}


def _tsv(path, n_per_label=30, seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        {"text": " ".join(rng.choice(words, size=5)), "label": label}
        for label, words in WORDS.items()
        for _ in range(n_per_label)
    ]
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)


@pytest.mark.workflow
def test_statistics_mteb_v2_and_cluster_views_through_the_workflow(tmp_path):
    work = copy_project(tmp_path / "proj")
    _tsv(work / "news.tsv")
    cfg = {
        "run": "stats",
        "seed": 42,
        "sources": {"news": {"builder": "custom", "path": "news.tsv"}},
        "datasets": {
            "NewsClustering": {
                "source": "news",
                "text_column": "text",
                "label_column": "label",
                "n_splits": 8,
                "min_fraction": 0.5,
                "max_fraction": 1.0,
            }
        },
        "models": {
            "tfidf": {"name": "TF-IDF 16", "kind": "tfidf", "dim": 16},
            "tfidf2": {"name": "TF-IDF 2", "kind": "tfidf", "dim": 2},
        },
        "embed": {"device": "cpu"},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "tables": {"metrics": ["v_measure", "ami"], "reference": ""},
        "scoring": {"protocols": ["paper", "mteb_v2"], "mteb_v2": {"sample_size": 300, "n_bootstraps": 4}},
    }
    (work / "config" / "stats.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(work, "--configfile", "config/stats.yaml", "--cores", "1")
    res = work / "results" / "stats"
    md = (res / "tables" / "table2.md").read_text()
    assert "multiple comparisons with the best" in md and "NOT for comparing models" in md
    assert md.count(" [") >= 4  # an interval in every cell (2 models x (dataset + average))
    stats = pd.read_csv(res / "tables" / "table2_statistics.csv")
    assert set(stats.column) == {"NewsClustering", "Average"} and stats.groupby("column").best.sum().eq(1).all()
    assert (res / "tables" / "table2_ami.md").read_text().startswith("Table 2: AMI x 100")
    iv = pd.read_csv(res / "tables" / "intervals.csv")
    assert set(iv.metric) == {"v_measure", "ami"} and (iv.ci_low <= iv["mean"]).all()
    v2 = pd.read_parquet(res / "mteb_v2" / "tfidf" / "NewsClustering.parquet")
    assert len(v2) == 4 and v2.v_measure.between(0, 1).all() and (v2.n_texts == 90).all()
    assert "TF-IDF 16" in (res / "tables" / "table_mteb_v2.md").read_text()
    # the chance floor: one file per dataset, a row under Table 2 (not in its CSV), its numbers in chance.csv
    assert len(pd.read_parquet(res / "chance" / "NewsClustering.parquet")) == 8 * 100
    assert (
        "| Random partition (chance) |" in md and "Random partition" not in (res / "tables" / "table2.csv").read_text()
    )
    assert set(pd.read_csv(res / "tables" / "chance.csv").column) == {"NewsClustering", "Average"}
    view = (res / "report" / "clusters" / "tfidf" / "NewsClustering.html").read_text()
    assert "top terms (c-TF-IDF)" in view and "V-measure" in view
    assert "n/a" in (res / "report" / "truncation.html").read_text()  # TF-IDF truncates nothing
    # the tables are byte-identical when rerun
    before = {p.name: p.read_bytes() for p in (res / "tables").iterdir()}
    run_snakemake(work, "--configfile", "config/stats.yaml", "--cores", "1", "--forcerun", "tables", "mteb_v2_table")
    assert before == {p.name: p.read_bytes() for p in (res / "tables").iterdir()}


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
