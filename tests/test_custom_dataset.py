"""Custom datasets: TSV/CSV/Parquet/JSONL with text and label columns, a split column or the random recipe."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import copy_project, run_snakemake

from tecb.data import datasets
from tecb.data.sources import custom
from tecb.data.splits import FractionRecipe

TOPICS = {
    "sport": ["Tor", "Spiel", "Mannschaft", "Trainer", "Liga", "Stadion"],
    "politik": ["Regierung", "Wahl", "Partei", "Minister", "Gesetz", "Parlament"],
    "kultur": ["Theater", "Roman", "Konzert", "Museum", "Oper", "Bühne"],
}


def _frame(n_per_label=12, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for label, words in TOPICS.items():
        for i in range(n_per_label):
            text = " ".join(rng.choice(words, size=6)) + f" Nummer {label} {i}"
            rows.append({"text": text, "label": label, "fold": f"f{i % 2}"})
    return pd.DataFrame(rows)


def _write(df, path):
    suffix = path.suffix
    if suffix == ".tsv":
        df.to_csv(path, sep="\t", index=False)
    elif suffix == ".csv":
        df.to_csv(path, index=False)
    elif suffix == ".parquet":
        df.to_parquet(path)
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in df.to_dict("records")))
    return path


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".parquet", ".jsonl"])
def test_split_column_gives_one_split_per_value(tmp_path, suffix):
    df = _frame()
    path = _write(df, tmp_path / f"data{suffix}")
    ds = datasets.build_custom(path, layout=custom.Layout(split_column="fold"), seed=42)
    assert ds.split_names == ["fold=f0", "fold=f1"]
    assert len(ds.texts) == len(df)
    for (ids, labels), fold in zip(ds.splits, ["f0", "f1"]):
        part = df[df.fold == fold]
        assert sorted(ds.texts[i] for i in ids) == sorted(part.text)
        assert sorted(labels) == sorted(part.label)


def test_random_recipe_is_seeded_and_in_range(tmp_path):
    path = _write(_frame(), tmp_path / "data.tsv")
    recipe = FractionRecipe(n_splits=5, min_fraction=0.5, max_fraction=0.8)
    a = datasets.build_custom(path, recipe=recipe, seed=3)
    b = datasets.build_custom(path, recipe=recipe, seed=3)
    c = datasets.build_custom(path, recipe=recipe, seed=4)
    assert a.splits == b.splits and a.splits != c.splits
    assert len(a.splits) == 5
    assert all(18 <= len(ids) <= 29 for ids, _ in a.splits)


def test_missing_column_and_empty_field_are_named(tmp_path):
    path = _write(_frame(), tmp_path / "data.tsv")
    with pytest.raises(custom.CustomFormatError, match="no column 'txt'"):
        datasets.build_custom(path, layout=custom.Layout(text_column="txt"), seed=42)
    df = _frame()
    df.loc[4, "label"] = ""
    bad = _write(df, tmp_path / "bad.tsv")
    with pytest.raises(custom.CustomFormatError, match=r"bad.tsv, record 5 \(line 6\): field 'label' is empty"):
        datasets.build_custom(bad, seed=42)
    with pytest.raises(custom.CustomFormatError, match="unknown format"):
        datasets.build_custom(tmp_path / "data.xlsx", seed=42)


def test_single_class_split_is_an_error_naming_the_dataset(tmp_path):
    df = _frame()
    df["fold"] = df["label"]  # each split holds one label only
    path = _write(df, tmp_path / "data.tsv")
    with pytest.raises(ValueError, match="dataset MyData: split 0"):
        datasets.build_from_config(
            "MyData", {"source": "mine", "split_column": "fold"}, {"mine": {"builder": "custom"}}, path, seed=42
        )


@pytest.mark.workflow
def test_custom_tsv_through_the_workflow(tmp_path):
    """A custom TSV dataset, the TF-IDF model, kmeans on raw embeddings: built, embedded, scored, tabled."""
    work = copy_project(tmp_path / "proj")
    _write(_frame(n_per_label=20), work / "my_news.tsv")
    cfg = {
        "seed": 42,
        "sources": {"my_news": {"builder": "custom", "path": "my_news.tsv"}},
        "datasets": {
            "MyNewsClustering": {
                "source": "my_news",
                "text_column": "text",
                "label_column": "label",
                "n_splits": 3,
                "min_fraction": 0.5,
                "max_fraction": 1.0,
            }
        },
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 16}},
        "embed": {"device": "cpu"},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }
    (work / "config" / "custom.yaml").write_text(yaml.safe_dump(cfg))
    run_snakemake(work, "--configfile", "config/custom.yaml", "--cores", "1")
    splits = pq.read_table(work / "results/datasets/MyNewsClustering/splits.parquet").to_pandas()
    assert splits.split.nunique() == 3 and set(splits.label) == set(TOPICS)
    scores = pq.read_table(work / "results/scores/tfidf/MyNewsClustering/none/kmeans.parquet").to_pandas()
    assert len(scores) == 3 and (scores.n_labels == 3).all()
    assert scores.v_measure.between(0, 1).all() and scores.v_measure.mean() > 0.5
    table1 = (work / "results/tables/table1.md").read_text()
    assert "MyNewsClustering" in table1
    assert "MyNewsClustering" in (work / "results/tables/table2.md").read_text()
    log = (work / "logs/build_dataset/MyNewsClustering.log").read_text()
    assert "3 splits" in log
