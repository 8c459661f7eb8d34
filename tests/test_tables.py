"""Tables 1-3: the paper's numbers through our aggregation, partial results, rendering, deltas."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from render_helpers import render, render_vs_paper

from tecb.report import paper as P
from tecb.report import render as R
from tecb.report import table_files as F
from tecb.report import tables as T

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "reference" / "paper_results.csv"
DATASETS = T.PAPER_DATASETS


def _rows(in_paper_only=True):
    with open(REF, newline="") as f:
        return [r for r in csv.DictReader(f) if not in_paper_only or r["in_paper_tables"] == "yes"]


def test_table2_from_paper_results_reproduces_printed_table2():
    t2 = P.paper_table2(REF)
    rows = [r for r in _rows(False) if (r["algorithm"], r["reduction"]) == ("kmeans", "none")]
    assert len(rows) == 13 and len(t2) == 13
    for r in rows:
        values = [float(r[d]) * 100 for d in DATASETS]
        for d, v in zip(DATASETS, values):
            assert round(t2.at[r["paper_name"], d], 2) == round(v, 2)
        assert round(t2.at[r["paper_name"], "Average"], 2) == round(sum(values) / 6, 2)
    assert list(t2.columns) == DATASETS + ["Average"]


def test_table3_from_paper_results_reproduces_printed_table3():
    t3, n = T.table3(P.load_reference(REF, in_paper_tables_only=True))
    assert n == 12
    cells = defaultdict(list)
    for r in _rows():
        for d in DATASETS:
            cells[(f"{r['algorithm']} / {r['reduction']}", d)].append(float(r[d]) * 100)
    assert {len(v) for v in cells.values()} == {12}
    for (row, d), values in cells.items():
        assert round(t3.at[row, d], 2) == round(sum(values) / 12, 2), (row, d)
    # the misprinted cell (reference/README.md): per-model results give 32.93 and average 29.49
    assert round(t3.at["kmeans / umap", "BlurbsClusteringP2P"], 2) == 32.93
    assert round(t3.at["kmeans / umap", "Average"], 2) == 29.49
    printed, n_printed = P.paper_table3(REF)
    assert n_printed == 12 and len(printed) == 10
    assert printed.at["kmeans / umap", "BlurbsClusteringP2P"] == 29.58
    assert printed.at["kmeans / umap", "Average"] == 28.93
    # every other printed cell is what our aggregation gives
    ours = t3.reindex(printed.index).round(2)
    diff = ours != printed.round(2)
    assert diff.sum().sum() == 2 and diff.at["kmeans / umap", "BlurbsClusteringP2P"]


def test_paper_config_names_match_the_reference_names():
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    names = {spec["name"] for spec in cfg["models"].values()}
    paper = {r["paper_name"] for r in _rows()}
    assert names == paper


def _summary(models=("a", "b"), datasets=DATASETS, configs=(("kmeans", "none"), ("kmeans", "umap"))):
    rows, rng = [], np.random.default_rng(0)
    for m in models:
        for d in datasets:
            for a, r in configs:
                for split in range(3):
                    rows.append(
                        {
                            "model": m,
                            "dataset": d,
                            "algorithm": a,
                            "reduction": r,
                            "split": split,
                            "v_measure": rng.uniform(0.1, 0.5),
                        }
                    )
    return pd.DataFrame(rows)


def _mean_of_model_means(scores, algorithm, reduction, dataset):
    """(Mean over models of each model's mean V-measure over its splits, x 100; the number of models), in
    plain Python over the rows: the aggregation Tables 2 and 3 are defined by, not the pandas code computing them."""
    per_model = defaultdict(list)
    for row in scores.to_dict("records"):
        if (row["algorithm"], row["reduction"], row["dataset"]) == (algorithm, reduction, dataset):
            per_model[row["model"]].append(row["v_measure"])
    means = [sum(values) / len(values) for values in per_model.values()]
    return 100 * sum(means) / len(means), len(means)


def test_partial_results_render_with_na_and_footnote():
    b = _summary(("b",), DATASETS[:4])
    b["v_measure"] /= 2  # not model a's values (the same draws): a mean over both differs from either
    scores = pd.concat([_summary(("a",)), b])  # b: no Reddit
    summary = T.summarize(scores)
    names = {"a": "Model A", "b": "Model B", "c": "Model C (not run)"}
    t2 = T.table2(summary, names, datasets=DATASETS)
    assert list(t2.index) == ["Model A", "Model B", "Model C (not run)"]
    assert t2.loc["Model C (not run)"].isna().all()
    assert np.isnan(t2.at["Model B", "RedditClusteringS2S"]) and np.isnan(t2.at["Model B", "Average"])
    assert not np.isnan(t2.at["Model A", "Average"])
    md = R.to_markdown(t2, mark_best=True)
    assert "n/a" in md and R.NA_FOOTNOTE in md
    tex = R.to_latex(t2, mark_best=True)
    assert "n/a" in tex and r"\multicolumn{2}{c}{Reddit}" in tex
    assert "n/a" in R.to_csv(t2)
    t3, n = T.table3(summary, [("kmeans", "none"), ("kmeans", "umap"), ("hdbscan", "umap")], datasets=DATASETS)
    assert n == 2
    # by hand, from the raw score rows: a cell is the mean over the models present of each model's mean over
    # its splits (x 100); Reddit cells average over model a only, Blurbs over both
    for config in ("kmeans / none", "kmeans / umap"):
        cells = {d: _mean_of_model_means(scores, *config.split(" / "), d) for d in DATASETS}
        assert cells["RedditClusteringP2P"][1] == 1 and cells["BlurbsClusteringS2S"][1] == 2
        for d, (value, _) in cells.items():
            assert t3.at[config, d] == pytest.approx(value), (config, d)
        assert t3.at[config, "Average"] == pytest.approx(sum(v for v, _ in cells.values()) / 6)
    # Table 2: model A's own means per dataset and their average over the six
    a_means = [_mean_of_model_means(scores[scores.model == "a"], "kmeans", "none", d)[0] for d in DATASETS]
    assert t2.loc["Model A", DATASETS].tolist() == pytest.approx(a_means)
    assert t2.at["Model A", "Average"] == pytest.approx(sum(a_means) / 6)
    assert t3.loc["hdbscan / umap"].isna().all()
    assert "n/a" in R.to_markdown(t3)


def test_empty_scores_do_not_crash():
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in T.KEYS} | {"v_measure": pd.Series(dtype=float)})
    summary = T.summarize(empty)
    t2 = T.table2(summary, {"a": "A"}, datasets=DATASETS)
    assert t2.shape == (1, 7) and t2.isna().all().all()
    t3, n = T.table3(summary, [("kmeans", "none")], datasets=DATASETS)
    assert n == 0 and t3.isna().all().all()
    assert "n/a" in R.to_markdown(t3) and "n/a" in R.to_html(t3)


def test_best_value_per_column_is_marked_ties_included():
    df = pd.DataFrame(
        {"BlurbsClusteringS2S": [1.0, 2.004, 2.0], "Average": [3.0, np.nan, 1.0]},
        index=pd.Index(["x", "y", "z"], name="Model"),
    )
    md = R.to_markdown(df, mark_best=True)
    assert "| y | **2.00** | n/a |" in md and "| z | **2.00** | 1.00 |" in md and "| x | 1.00 | **3.00** |" in md
    assert md.count("**") == 6
    assert r"\textbf{3.00}" in R.to_latex(df, mark_best=True)
    assert "<b>3.00</b>" in R.to_html(df, mark_best=True)
    assert "**" not in R.to_markdown(df)


def test_compare_gives_deltas_and_na():
    ours = pd.DataFrame(
        {"BlurbsClusteringS2S": [12.0, 5.0], "Average": [12.0, 5.0]},
        index=pd.Index(["GBERT-base", "mine"], name="Model"),
    )
    paper = P.paper_table2(REF)
    cmp = P.compare(ours, paper)
    row = cmp[(cmp.index == "GBERT-base") & (cmp.Dataset == "BlurbsClusteringS2S")].iloc[0]
    assert row.Paper == 11.27 and row["Δ"] == pytest.approx(0.73)
    # one dataset only: the paper's six-dataset average is not comparable
    avg = cmp[(cmp.index == "GBERT-base") & (cmp.Dataset == "Average")].iloc[0]
    assert np.isnan(avg.Paper) and np.isnan(avg["Δ"])
    assert cmp[cmp.index == "mine"].Paper.isna().all()
    md = R.to_markdown(cmp)
    assert "+0.73" in md and "n/a" in md


def test_bad_reference_names_file_record_and_field(tmp_path):
    bad = tmp_path / "ref.csv"
    text = REF.read_text().splitlines()
    fields = text[1].split(",")
    fields[6] = "oops"
    bad.write_text("\n".join([text[0], ",".join(fields)]) + "\n")
    with pytest.raises(ValueError, match=r"ref\.csv.*GBERT-base.*BlurbsClusteringP2P.*oops"):
        P.load_reference(bad)
    (tmp_path / "cols.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match=r"cols\.csv.*missing column"):
        P.load_reference(tmp_path / "cols.csv")


def test_write_all_formats(tmp_path):
    t3, n = P.paper_table3(REF)
    paths = R.write_all_formats(t3, tmp_path / "table3", "Table 3", mark_best=True)
    assert [p.suffix for p in paths] == [".md", ".csv", ".tex", ".html"]
    assert R.write_formats(t3, {"md": tmp_path / "only.txt"}) == [tmp_path / "only.txt"]
    with pytest.raises(ValueError, match="not xlsx"):
        R.write_formats(t3, {"xlsx": tmp_path / "t.xlsx"})
    back = pd.read_csv(paths[1], index_col=0)
    assert back.at["kmeans / umap", "BlurbsClusteringP2P"] == 29.58
    tex = paths[2].read_text()
    assert r"\cmidrule(lr){2-3}" in tex and "kmeans / umap" in tex and r"\begin{tabular}{lrrrrrrr}" in tex


def test_render_tables_on_partial_results(tmp_path):
    """Reddit missing for one model, one configured model never run: every file written, n/a and notes shown."""
    scores = pd.concat([_summary(("a",)), _summary(("b",), DATASETS[:4])])
    scores.to_parquet(tmp_path / "scores.parquet")
    pd.DataFrame({"text_id": [0, 1], "text": ["x", "yy"]}).to_parquet(tmp_path / "texts.parquet")
    splits = pa.Table.from_pandas(pd.DataFrame({"split": [0, 0], "text_id": [0, 1], "label": ["p", "q"]}))
    pq.write_table(
        splits.replace_schema_metadata({"tecb": '{"not_comparable_because": ""}'}), tmp_path / "splits.parquet"
    )  # provenance: comparable with the paper's dataset
    render_vs_paper(
        tmp_path / "scores.parquet",
        ["BlurbsClusteringS2S"],
        [tmp_path / "texts.parquet"],
        [tmp_path / "splits.parquet"],
        {"a": "A", "b": "B", "c": "C"},
        tmp_path / "out",
    )
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(written) == 24
    t2 = (tmp_path / "out" / "table2.md").read_text()
    assert "| C | n/a |" in t2 and R.NA_FOOTNOTE in t2
    t3 = (tmp_path / "out" / "table3.md").read_text()
    assert "mean over the 2 model(s) present" in t3 and "as few as 1" in t3
    t1 = pd.read_csv(tmp_path / "out" / "table1_vs_paper.csv", index_col=0)
    row = t1[t1.Statistic == "Unique samples"].iloc[0]  # the headers of Table 1, not the CSV's keys
    assert row["This run"] == 2 and row["Paper"] == 17726 and row["Δ"] == 2 - 17726
    assert list(t1.Statistic) == list(T.TABLE1_LABELS.values())
    md = (tmp_path / "out" / "table1_vs_paper.md").read_text()
    assert "Split size (min)" in md and "split_size_min" not in md
    assert "| Model | Blurbs S2S | Blurbs P2P |" in t2 and "| Average |" in t2  # all six (scores): the paper's


def _render_inputs(tmp_path, datasets=("BlurbsClusteringS2S",)):
    scores = _summary(("a", "b"), list(datasets))
    scores.to_parquet(tmp_path / "scores.parquet")
    texts, splits = [], []
    for d in datasets:
        pd.DataFrame({"text_id": [0, 1], "text": ["x", "yy"]}).to_parquet(tmp_path / f"{d}.texts.parquet")
        table = pa.Table.from_pandas(pd.DataFrame({"split": [0, 0], "text_id": [0, 1], "label": ["p", "q"]}))
        pq.write_table(
            table.replace_schema_metadata({"tecb": '{"not_comparable_because": ""}'}), tmp_path / f"{d}.splits.parquet"
        )
        texts.append(tmp_path / f"{d}.texts.parquet")
        splits.append(tmp_path / f"{d}.splits.parquet")
    return tmp_path / "scores.parquet", list(datasets), texts, splits


def test_render_tables_writes_exactly_the_outputs_it_is_given(tmp_path):
    """The rule names the files (any names); the library writes those, by key, and nothing else."""
    scores, datasets, texts, splits = _render_inputs(tmp_path)
    keys = F.table_keys(reference=False, metrics=["v_measure", "ami"], statistics=True)
    assert keys == ["table1", "table2", "table3", "table2_ami", "table3_ami", "table2_statistics", "intervals"]
    scores_df = pd.read_parquet(scores).assign(ami=0.2)
    scores_df.to_parquet(scores)
    out = tmp_path / "named-by-the-rule"
    outputs = {
        k: {
            ext: out / f"{i}-{ext}.file"
            for ext in (("csv",) if k in ("table2_statistics", "intervals") else ("md", "csv", "tex", "html"))
        }
        for i, k in enumerate(keys)
    }
    args = (
        scores,
        datasets,
        texts,
        splits,
        {"a": "A", "b": "B"},
        [["kmeans", "none"], ["kmeans", "umap"]],
        {"algorithm": "kmeans", "reduction": "none"},
    )
    kwargs = dict(log=lambda m: None, statistics={"n_resamples": 200}, metrics=["v_measure", "ami"], seed=42)
    render(*args, outputs, **kwargs)
    expected = sorted(str(p) for formats in outputs.values() for p in formats.values())
    assert sorted(str(p) for p in out.iterdir()) == expected
    assert "Table 2: AMI x 100" in (out / "3-md.file").read_text()
    # one of the paper's six datasets: the average is not the paper's, and its heading says so
    assert "| Model | Blurbs S2S | Average (1 of the paper's 6) |" in (out / "1-md.file").read_text()
    assert (out / "1-csv.file").read_text().splitlines()[0] == "Model,BlurbsClusteringS2S,Average (1 of the paper's 6)"
    assert pd.read_csv(out / "6-csv.file").metric.tolist()[0] == "v_measure"  # intervals
    del outputs["intervals"]
    with pytest.raises(ValueError, match=r"missing \['intervals'\]"):
        render(*args, outputs, **kwargs)
    with pytest.raises(ValueError, match=r"not written \['table9'\]"):
        render(*args, {**outputs, "intervals": {"csv": out / "i.csv"}, "table9": {"md": out / "x"}}, **kwargs)


def test_average_heading_says_how_many_of_the_papers_datasets_it_averages():
    assert T.average_label(T.PAPER_DATASETS + ["Average"]) == "Average"
    assert T.average_label(T.PAPER_DATASETS[:4] + ["Average"]) == "Average (4 of the paper's 6)"
    assert T.average_label(["MyData", "Average"]) == "Average"  # only the run's own datasets
    t2 = T.table2(T.summarize(_summary(("a",), DATASETS[:2])), {"a": "A"}, datasets=DATASETS[:2])
    assert list(T.label_average(t2).columns) == DATASETS[:2] + ["Average (2 of the paper's 6)"]
    assert "Average" in t2.columns  # the frame itself keeps its key (statistics, figures use it)


def test_paper_average_is_comparable_only_with_all_six_comparable_datasets():
    assert P.paper_average_not_comparable(DATASETS, {d: "" for d in DATASETS}) == ""
    assert P.paper_average_not_comparable(DATASETS[:5]) == "this run has 5 of the paper's 6 datasets"
    why = P.paper_average_not_comparable(DATASETS, {DATASETS[2]: "built from part of the source (270 articles)"})
    assert why == "TenKGnadClusteringS2S is not comparable (partial source)"


def test_table1_has_the_papers_columns_and_readable_headers():
    """Table 1 reads like the paper's (target, ranges, readable headers); the CSV keeps one number per column."""
    t1 = T.table1(
        [
            {
                "dataset": "RedditClusteringS2S",
                "unique_samples": 40181,
                "splits": 10,
                "split_size_min": 9288,
                "split_size_max": 26221,
                "classes_min": 10,
                "classes_max": 50,
                "avg_chars": 52,
            },
            {
                "dataset": "MyNewsClustering",
                "unique_samples": 60,
                "splits": 3,
                "split_size_min": 30,
                "split_size_max": 60,
                "classes_min": 3,
                "classes_max": 3,
                "avg_chars": 20,
            },
        ]
    )
    assert t1.loc["RedditClusteringS2S", "target"] == "submission titles"
    shown = T.table1_display(t1)
    assert list(shown.columns) == ["Target", "Unique samples", "Splits", "Split size", "Classes", "Avg. chars"]
    assert shown.loc["RedditClusteringS2S", "Split size"] == "9,288–26,221"
    assert shown.loc["MyNewsClustering", "Classes"] == "3"
    md = R.to_markdown(shown, decimals=0)
    assert "| Dataset | Target | Unique samples | Splits | Split size | Classes | Avg. chars |" in md
    assert "split_size_min" not in md and "40,181" in md


def test_collect_scores_takes_keys_not_paths(tmp_path):
    """The rule names each file's (model, dataset, reduction, algorithm); the file name means nothing."""
    a, b = tmp_path / "x.parquet", tmp_path / "y.parquet"
    pd.DataFrame({"split": [0, 1], "v_measure": [0.5, 0.6]}).to_parquet(a)
    pd.DataFrame({"split": [0], "v_measure": [0.7]}).to_parquet(b)
    out = F.collect_scores(
        [a, b],
        [("m1", "D", "none", "kmeans"), ("m2", "D", "pca", "hdbscan")],
        tmp_path / "scores.parquet",
        log=lambda m: None,
    )
    assert list(out.model) == ["m1", "m1", "m2"] and list(out.reduction) == ["none", "none", "pca"]
    assert pd.read_parquet(tmp_path / "scores.parquet").equals(out)
    with pytest.raises(ValueError, match="2 score files but 1 keys"):
        F.collect_scores([a, b], [("m1", "D", "none", "kmeans")], tmp_path / "s2.parquet")


def test_mteb_v2_table_writes_the_paths_it_is_given(tmp_path):
    """The MTEB v2 table and its long CSV go to the files the rule declares (no `{stem}_long.csv` derived)."""
    from tecb.report import mteb_v2

    files = {}
    for m, base in (("a", 0.3), ("b", 0.4)):
        path = tmp_path / f"{m}.parquet"
        pd.DataFrame(
            {
                "level": [0, 0],
                "bootstrap": [0, 1],
                "n_texts": [50, 50],
                "n_labels": [3, 3],
                "v_measure": [base, base + 0.02],
                "ami": [base - 0.1, base - 0.1],
            }
        ).to_parquet(path)
        files[(m, "BlurbsClusteringS2S")] = path
    table_paths = {ext: tmp_path / "out" / f"v2-{ext}.txt" for ext in ("md", "csv", "tex", "html")}
    long_path = tmp_path / "elsewhere" / "rows.csv"
    outputs = mteb_v2.TableFiles(results=files, table=table_paths, long=long_path)
    table = mteb_v2.render_table(outputs, {"a": "A", "b": "B"}, ["BlurbsClusteringS2S"], log=lambda m: None)
    assert sorted((tmp_path / "out").iterdir()) == sorted(table_paths.values())
    assert table.at["B", "BlurbsClusteringS2S"] == pytest.approx(41.0)
    assert "± 1.00" in table_paths["md"].read_text()
    assert pd.read_csv(long_path).model.tolist() == ["a", "b"]
