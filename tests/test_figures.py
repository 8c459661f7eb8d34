"""Figures: UMAP scatter joined with labels, consistent colours, heatmap and bars with n/a, PNG + SVG."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tecb.report import figures as F
from tecb.report import paper as P
from tecb.report import tables as T
from tecb.report.confusion import choose_split


def _reduced_and_splits(tmp_path, n=60, list_column=True):
    rng = np.random.default_rng(1)
    ids = np.arange(n, dtype=np.int32)
    labels = np.array(["Sport", "Kultur", "Web"])[ids % 3]
    splits = pd.DataFrame(
        {
            "split": np.repeat(np.array([0, 1], dtype=np.int16), n),
            "text_id": np.concatenate([ids, ids]),
            "label": np.concatenate([labels, labels[::-1]]),
        }
    )
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
        choose_split(splits, 7)


def test_umap_figure_writes_png_and_svg_deterministically(tmp_path):
    _reduced_and_splits(tmp_path)
    outs = [tmp_path / "out" / "fig.png", tmp_path / "out" / "fig.svg"]
    paths = F.umap_figure(tmp_path / "umap.parquet", tmp_path / "splits.parquet", outs, "m / d")
    assert [p.name for p in paths] == ["fig.png", "fig.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in paths[1].read_bytes()[:500]
    first = [p.read_bytes() for p in paths]
    F.umap_figure(tmp_path / "umap.parquet", tmp_path / "splits.parquet", outs, "m / d")
    assert [p.read_bytes() for p in paths] == first
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_label_colours_are_consistent_and_distinct():
    a = F.label_colours(["b", "a", "c", "a"])
    b = F.label_colours(["c", "b", "a"])
    assert a == b and len(set(a.values())) == 3
    many = F.label_colours([f"l{i}" for i in range(40)])
    assert len(set(many.values())) == 40


def test_heatmap_and_bars_with_missing_cells(tmp_path):
    t3 = pd.DataFrame(
        {"BlurbsClusteringS2S": [10.0, np.nan], "Average": [10.0, np.nan]}, index=["kmeans / none", "hdbscan / umap"]
    )
    png, svg = F.heatmap_figure(t3, [tmp_path / "heat.png", tmp_path / "heat.svg"], "Table 3")
    assert png.stat().st_size > 1000 and svg.exists()
    assert "n/a" in svg.read_text()
    avg = pd.Series({"A": 30.0, "B": np.nan, "GBERT-base": 28.0})
    paper = P.paper_table2(Path(__file__).resolve().parents[1] / "reference" / "paper_results.csv")["Average"]
    png, svg = F.bar_figure(avg, [tmp_path / "bars.png", tmp_path / "bars.svg"], "Table 2", reference=paper)
    text = svg.read_text()
    assert "n/a" in text and "paper" in text and "28.00" in text


def test_paper_averages_only_where_the_run_is_comparable(tmp_path):
    """The paper's averages are ticks only beside averages over its six datasets, built comparably; else the
    title says why they are not shown."""
    avg = pd.Series({"A": 30.0, "GBERT-base": 28.0})
    paper = P.paper_table2(Path(__file__).resolve().parents[1] / "reference" / "paper_results.csv")["Average"]
    four = T.PAPER_DATASETS[:4]
    why = P.paper_average_not_comparable(four, {d: "" for d in four})
    assert why == "this run has 4 of the paper's 6 datasets"
    assert F.averages_title(four) == "Table 2: average V-measure x 100 over 4 of the paper's 6 datasets"
    assert F.averages_title(T.PAPER_DATASETS) == "Table 2: average V-measure x 100 over the paper's 6 datasets"
    (svg,) = F.bar_figure(avg, [tmp_path / "four.svg"], F.averages_title(four), no_reference_because=why)
    text = svg.read_text()
    assert "paper's averages not shown: this run has 4 of the paper's 6 datasets" in text
    assert "<!-- paper -->" not in text  # no legend entry for the paper's ticks
    (svg,) = F.bar_figure(avg, [tmp_path / "six.svg"], F.averages_title(T.PAPER_DATASETS), reference=paper)
    assert "<!-- paper -->" in svg.read_text() and "not shown" not in svg.read_text()


@pytest.mark.slow
def test_importing_the_library_leaves_global_state_alone(tmp_path):
    """No process-wide patches: after importing every tecb module, matplotlib's backend and rcParams and the
    environment are what they were; drawing and saving a figure changes no rcParams either."""
    import subprocess
    import sys

    code = (
        "import os, pkgutil, importlib, matplotlib, tecb; b = matplotlib.get_backend(); "
        "r = dict(matplotlib.rcParams); env = lambda: {k: v for k, v in os.environ.items() "
        "if not k.startswith('KMP_')}; e = env(); "  # KMP_*: set by torch's OpenMP runtime, not by tecb
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(tecb.__path__, 'tecb.')]; "
        "assert matplotlib.get_backend() == b, (b, matplotlib.get_backend()); "
        "assert dict(matplotlib.rcParams) == r; assert env() == e, set(env().items()) ^ set(e.items()); "
        "import tecb.report.figures as F; import pandas as pd; "
        "F.bar_figure(pd.Series({'a': 1.0}), [os.environ['OUT']]); "
        "assert dict(matplotlib.rcParams) == r"
    )
    env = {"MPLBACKEND": "svg", "PATH": "", "OUT": "bars.svg", "HOME": os.environ.get("HOME", "/tmp")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_save_refuses_an_unknown_format(tmp_path):
    fig = F.new_figure((2, 2))
    with pytest.raises(ValueError, match="not 'pdf'"):
        F.save(fig, [tmp_path / "x.pdf"])
