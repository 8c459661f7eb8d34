"""The paper-scale dress rehearsal's data (issue 56, tecb.data.paper_scale): the paper's Table 1 shape, exactly."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from tecb.data import paper_scale
from tecb.data.datasets import build_custom, custom_options


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TenKGnadClusteringS2S", "BlurbsClusteringS2S"])
def test_a_dataset_has_the_papers_table1_numbers(name, tmp_path):
    """Written, read back by the workflow's custom builder: unique texts, splits, smallest and largest split, fewest
    and most classes as the paper's Table 1; average length within 30 % of the published one."""
    row = paper_scale.table1()[name]
    path = paper_scale.write_all(tmp_path, seed=42, datasets=[name])[name]
    dataset = build_custom(path, seed=42, **custom_options({"split_column": "split"}))
    sizes = [len(ids) for ids, _ in dataset.splits]
    classes = [len(set(labels)) for _, labels in dataset.splits]
    got = (len(dataset.texts), len(sizes), min(sizes), max(sizes), min(classes), max(classes))
    keys = ("unique_samples", "splits", "split_size_min", "split_size_max", "classes_min", "classes_max")
    assert got == tuple(row[k] for k in keys)
    mean = sum(map(len, dataset.texts)) / len(dataset.texts)
    assert abs(mean / row["avg_chars"] - 1) < 0.3
    assert dataset.provenance["origin"] == "custom"  # never counted as the paper's data


@pytest.mark.slow
def test_the_same_seed_writes_the_same_rows(tmp_path):
    name = "TenKGnadClusteringS2S"
    a = paper_scale.write_all(tmp_path / "a", seed=7, datasets=[name])[name]
    b = paper_scale.write_all(tmp_path / "b", seed=7, datasets=[name])[name]
    c = paper_scale.write_all(tmp_path / "c", seed=8, datasets=[name])[name]
    assert pq.read_table(a).equals(pq.read_table(b)) and not pq.read_table(a).equals(pq.read_table(c))


def test_every_split_plan_holds_the_table():
    """Per dataset: split count, smallest and largest split, fewest and most classes as published."""
    for name, row in paper_scale.table1().items():
        plan = paper_scale.split_plan(row, seed=42)
        sizes, classes = [s for s, _, _ in plan], [c for _, c, _ in plan]
        assert (len(plan), min(sizes), max(sizes)) == (row["splits"], row["split_size_min"], row["split_size_max"])
        assert (min(classes), max(classes)) == (row["classes_min"], row["classes_max"]), name


@pytest.mark.slow
def test_writing_again_leaves_the_files_as_they_are(tmp_path):
    """`make paper-scale` writes the data first each time: the same bytes are not written again, so the workflow
    sees no newer input and reruns nothing (each time it did, the datasets and the chance rows were rebuilt)."""
    name = "TenKGnadClusteringS2S"
    path = paper_scale.write_all(tmp_path, seed=42, datasets=[name])[name]
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    paper_scale.write_all(tmp_path, seed=42, datasets=[name])
    assert path.stat().st_mtime_ns == before - 10**9
    paper_scale.write_all(tmp_path, seed=43, datasets=[name])
    assert path.stat().st_mtime_ns != before - 10**9
