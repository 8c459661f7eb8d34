"""The paper-scale dress rehearsal's data (issue 56, tecb.data.paper_scale): the paper's Table 1 shape, exactly."""

from __future__ import annotations

import csv
import json
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


def _benchmark(name: str):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOG = """start 2026-11-29T08:03:58Z
[Sun Nov 29 08:04:01 2026]
rule cluster:
    log: logs/x/cluster/m/D/none/kmeans.log
    wildcards: model=m, dataset=D, reduction=none, algorithm=kmeans
    threads: 1
    resources: tmpdir=/tmp, mem_mb=900, mem=1 GB
Shell command: None

[Sun Nov 29 08:05:01 2026]
localrule build_dataset:
    log: logs/x/build_dataset/D.log
    resources: tmpdir=/tmp, disk_mb=1000, mem_mb=1000, mem=1 GB
snakemake end 2026-11-29T09:33:58Z
"""


def test_the_report_reads_each_jobs_declaration_and_the_runs_span():
    report = _benchmark("paper_scale")
    jobs = report.job_blocks(LOG)
    assert jobs["logs/x/cluster/m/D/none/kmeans.log"]["mem_mb"] == 900
    assert jobs["logs/x/build_dataset/D.log"]["rule"] == "build_dataset"
    assert report.job_kind("cluster", {"algorithm": "kmeans", "reduction": "none"}) == "cluster kmeans on none"
    assert report.run_span(LOG) == ("2026-11-29 08:03:58", "09:33:58", 1.5)
    assert report.run_span(LOG.replace("start", "begun"))[2] == pytest.approx(1 / 60)  # Snakemake's stamps
    rows = [
        {"rule": "cluster", "log": "a.log", "mem_mb_declared": 900, "peak_rss_mb": 950.0},
        {"rule": "cluster", "log": "b.log", "mem_mb_declared": 900, "peak_rss_mb": 450.0},
    ]
    text = "\n".join(report._memory_rows(rows))
    assert "**1 over** their declaration (a.log)" in text and "| cluster | 2 | 900..900 | 950 | 0.95 | 1 |" in text


def test_the_projection_is_corrected_only_where_it_is_off_by_more_than_30_percent(tmp_path):
    prj = _benchmark("paper_run_projection")
    (tmp_path / "jobs.csv").write_text(
        "kind,dataset,cpu_s,projected_cpu_s\n"
        "cluster kmeans on none,D,13.0,10.0\n"  # 1.3 off, 1.18 with its 1 s of loading the raw points: kept
        "cluster dbstream on umap,D,6.0,10.0\n"  # 0.6: scaled
        "cluster kmeans on umap,D,12.0,10.0\n"  # 1.2: kept
        "reduce pca,D,,\n"
    )
    fix, rows = prj.corrections(tmp_path / "jobs.csv", {"D": 1.0})
    assert fix["scale"] == {"cluster dbstream on umap": 0.6}
    assert set(fix["load"]) == {"cluster kmeans on none"} and fix["load"]["cluster kmeans on none"] == {"D": 1.0}
    assert len(rows) == 2 + 3


def _sitting(stamp: str, blocks: list[tuple[str, str, bool]]) -> str:
    """A Snakemake output of cluster jobs ``(jobid, algorithm, finished)`` started at ``stamp`` (HH:MM:SS)."""
    out = [f"start 2026-11-29T{stamp}Z"]
    for jobid, algorithm, finished in blocks:
        out += [
            f"[Sun Nov 29 {stamp} 2026]",
            "rule cluster:",
            f"    log: logs/x/cluster/m/D/none/{algorithm}.log",
            f"    jobid: {jobid}",
            f"    wildcards: model=m, dataset=D, reduction=none, algorithm={algorithm}",
            "    resources: tmpdir=/tmp, mem_mb=900, mem=1 GB",
        ]
        out += [f"[Sun Nov 29 {stamp} 2026]", f"Finished jobid: {jobid} (Rule: cluster)"] if finished else []
    return "\n".join(out) + "\n"


def test_the_final_report_joins_the_sittings_one_row_per_job(tmp_path):
    """A run stopped and resumed: a job stopped in the first sitting and run again in the second counts once, with
    the second's record and commit; each sitting's span and the total; Tables 1-3 copied, the report complete."""
    report = _benchmark("paper_scale")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "x.yaml").write_text("run: x\nsources: {}\ndatasets: {}\nmodels: {}\n")
    (tmp_path / "results" / "x" / "tables").mkdir(parents=True)
    for name in report.TABLES:
        (tmp_path / "results" / "x" / "tables" / name).write_text(name)
    logs = [
        _sitting("08:00:00", [("1", "kmeans", True), ("2", "agglomerative", False)]),
        _sitting("10:00:00", [("7", "agglomerative", True)]).replace(
            "start", "snakemake end 2026-11-29T10:30:00Z\nstart"
        ),
    ]
    records = [
        [("kmeans", 2.0), ("agglomerative", 5.0)],  # agglomerative: stopped
        [("agglomerative", 7.0)],
    ]
    args = []
    for i, (log, recs) in enumerate(zip(logs, records)):
        (tmp_path / f"run{i}.log").write_text(log + ("[Sun Nov 29 08:12:00 2026]\n" if i == 0 else ""))
        (tmp_path / f"run{i}.jsonl").write_text("".join(
            json.dumps({"log": f"logs/x/cluster/m/D/none/{a}.log", "cpu_s": cpu, "peak_rss_mb": 100.0 * cpu,
                        "first_seen": 0.0, "last_seen": cpu}) + "\n" for a, cpu in recs))  # fmt: skip
        args += ["--sitting", str(tmp_path / f"run{i}.log"), str(tmp_path / f"run{i}.jsonl"), f"c{i}"]
    out, csv_path = tmp_path / "report.md", tmp_path / "jobs.csv"
    report.main([*args, "--run-dir", str(tmp_path), "--config", "config/x.yaml", "--out", str(out),
                 "--records", str(csv_path), "--tables-out", str(tmp_path / "tables")])  # fmt: skip
    rows = {r["algorithm"]: r for r in csv.DictReader(csv_path.open())}
    assert len(rows) == 2 and rows["agglomerative"]["commit"] == "c1" and rows["agglomerative"]["cpu_s"] == "7.0"
    assert rows["kmeans"]["sitting"] == "sitting 1" and rows["kmeans"]["finished"] == "True"
    text = out.read_text()
    assert "| sitting 1 | c0 | 2026-11-29 08:00:00 | 08:12:00 | 0.20 | 1 |" in text  # stopped: its last stamp
    assert "| sitting 2 | c1 | 2026-11-29 10:00:00 | 10:30:00 | 0.50 | 1 |" in text
    assert "**0.70**" in text and "**Complete**" in text and "Partial" not in text
    assert (tmp_path / "tables" / "table3.csv").read_text() == "table3.csv"
    assert "2 jobs with a declared `mem_mb` and a measured peak; **0 over**" in text  # 700 MB at most, of 900
