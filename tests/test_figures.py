"""Figures: UMAP scatter joined with labels, consistent colours, heatmap and bars with n/a, PNG + SVG."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tecb import figures as F
from tecb import tables as T


def _reduced_and_splits(tmp_path, n=60, list_column=True):
    rng = np.random.default_rng(1)
    ids = np.arange(n, dtype=np.int32)
    labels = np.array(["Sport", "Kultur", "Web"])[ids % 3]
    splits = pd.DataFrame({"split": np.repeat(np.array([0, 1], dtype=np.int16), n),
                           "text_id": np.concatenate([ids, ids]), "label": np.concatenate([labels, labels[::-1]])})
    xy = rng.normal(size=(2 * n, 2)).astype(np.float32) + (splits.text_id.to_numpy() % 3)[:, None] * 3
    if list_column:
        reduced = pd.DataFrame({"split": splits.split, "text_id": splits.text_id, "x": list(xy)})
    else:
        reduced = pd.DataFrame({"split": splits.split, "text_id": splits.text_id, "x0": xy[:, 0], "x1": xy[:, 1]})
    reduced.to_parquet(tmp_path / "umap.parquet")
    splits.to_parquet(tmp_path / "splits.parquet")
    return reduced, splits


@pytest.mark.parametrize("list_column", [True, False])
def test_umap_points_join_labels_of_the_chosen_split(tmp_path, list_column):
    reduced, splits = _reduced_and_splits(tmp_path, list_column=list_column)
    pts = F.umap_points(reduced, splits, 1)
    assert len(pts) == 60 and set(pts.columns) == {"text_id", "x", "y", "label"}
    expected = splits[splits.split == 1].set_index("text_id").label
    assert (pts.set_index("text_id").label == expected.reindex(pts.text_id)).all()


def test_umap_points_name_a_text_without_label(tmp_path):
    reduced, splits = _reduced_and_splits(tmp_path)
    with pytest.raises(ValueError, match="split 0: text_id 5 .* no label"):
        F.umap_points(reduced, splits[~((splits.split == 0) & (splits.text_id == 5))], 0)
    with pytest.raises(ValueError, match="split 7 not among"):
        F.choose_split(splits, 7)


def test_umap_figure_writes_png_and_svg_deterministically(tmp_path):
    _reduced_and_splits(tmp_path)
    paths = F.umap_figure(tmp_path / "umap.parquet", tmp_path / "splits.parquet", tmp_path / "out" / "fig", "m / d")
    assert [p.name for p in paths] == ["fig.png", "fig.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in paths[1].read_bytes()[:500]
    first = [p.read_bytes() for p in paths]
    F.umap_figure(tmp_path / "umap.parquet", tmp_path / "splits.parquet", tmp_path / "out" / "fig", "m / d")
    assert [p.read_bytes() for p in paths] == first
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_label_colours_are_consistent_and_distinct():
    a = F.label_colours(["b", "a", "c", "a"])
    b = F.label_colours(["c", "b", "a"])
    assert a == b and len(set(a.values())) == 3
    many = F.label_colours([f"l{i}" for i in range(40)])
    assert len(set(many.values())) == 40


def test_heatmap_and_bars_with_missing_cells(tmp_path):
    t3 = pd.DataFrame({"BlurbsClusteringS2S": [10.0, np.nan], "Average": [10.0, np.nan]},
                      index=["kmeans / none", "hdbscan / umap"])
    png, svg = F.heatmap_figure(t3, tmp_path / "heat", "Table 3")
    assert png.stat().st_size > 1000 and svg.exists()
    assert "n/a" in svg.read_text()
    avg = pd.Series({"A": 30.0, "B": np.nan, "GBERT-base": 28.0})
    paper = T.paper_table2(T.Path(__file__).resolve().parents[1] / "reference" / "paper_results.csv")["Average"]
    png, svg = F.bar_figure(avg, tmp_path / "bars", "Table 2", reference=paper)
    text = svg.read_text()
    assert "n/a" in text and "paper" in text and "28.00" in text
