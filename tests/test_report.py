"""Report pieces (config, runtimes), MTEB-format results, and the report built from the demo's outputs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import DEMO_RUN_FOLDERS, demo_run_config, run_snakemake

from tecb.report import extras as report
from tecb.report import mteb_results


def test_config_dump_redacts_secrets(tmp_path):
    cfg = {
        "seed": 42,
        "sources": {"reddit": {"client_secret": "s3cr3t", "path": "x"}},
        "list": [{"api_key": "k3y"}],
        "models": {"m": {"name": "M"}},
    }
    report.write_config(cfg, tmp_path / "config.yaml")
    text = (tmp_path / "config.yaml").read_text()
    assert "s3cr3t" not in text and "k3y" not in text
    back = yaml.safe_load(text)
    assert back["sources"]["reddit"]["path"] == "x" and back["seed"] == 42 and back["models"]["m"]["name"] == "M"


def test_runtimes_from_benchmark_files(tmp_path):
    root = tmp_path / "results" / "benchmarks"
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    jobs = [("embed", "m/D1", 2.5), ("embed", "m/D2", 3.5), ("cluster", "m/D1", 1.0)]
    paths = []
    for step, job, s in jobs:
        path = root / step / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{s}\t0:00:02\t100.0\t1\t1\t1\t0\t0\t50\t{s}\n")
        paths.append(path)
    table = report.runtimes(paths, [(step, job) for step, job, _ in jobs])  # keys given, no path parsing
    assert list(table.step) == ["cluster", "embed", "embed"] and list(table.job) == ["m/D1", "m/D1", "m/D2"]
    summary = report.runtime_summary(table)
    assert summary.at["embed", "jobs"] == 2 and summary.at["embed", "total_seconds"] == 6.0
    bad = root / "embed" / "bad.tsv"
    bad.write_text("x\ty\n1\t2\n")
    with pytest.raises(ValueError, match=r"bad\.tsv.*'s'"):
        report.runtimes([bad], [("embed", "bad")])
    with pytest.raises(ValueError, match="2 keys"):
        report.runtimes([bad], [("embed", "bad"), ("embed", "worse")])


def _scores():
    rows = [
        {
            "model": m,
            "dataset": "BlurbsClusteringS2S",
            "algorithm": a,
            "reduction": r,
            "split": s,
            "v_measure": v,
            "seconds": 0.5,
        }
        for m in ("m1", "m2")
        for a, r in (("kmeans", "none"), ("kmeans", "umap"))
        for s, v in zip((2, 0, 1), (0.3, 0.1, 0.2))
    ]
    return pd.DataFrame(rows)


def test_mteb_result_format():
    published = {"origin": "published", "revision": "22793b6a6465bf00120ad525e38c51210858132c"}
    res = mteb_results.mteb_result(
        _scores(),
        "m1",
        "BlurbsClusteringS2S",
        spec={"kind": "huggingface", "id": "org/m1"},
        mteb_task=None,
        provenance=published,
    )
    assert res["task_name"] == "tecb.BlurbsClusteringS2S"
    assert res["dataset_revision"] == "22793b6a6465bf00120ad525e38c51210858132c"
    assert res["mteb_version"] == mteb_results.MTEB_VERSION
    built = mteb_results.mteb_result(
        _scores(),
        "m1",
        "BlurbsClusteringS2S",
        spec={"kind": "huggingface"},
        mteb_task=None,
        provenance={"content_sha256": "ab"},
    )
    assert built["dataset_revision"] == "tecb-sha256:ab"  # a dataset built here never claims a hub revision
    assert built["tecb"]["not_mteb_task_because"].startswith("a custom dataset built here")
    test = res["scores"]["test"][0]
    assert test["v_measures"] == [0.1, 0.2, 0.3]  # split order
    assert test["main_score"] == test["v_measure"] == pytest.approx(0.2)
    assert test["v_measure_std"] == pytest.approx(np.std([0.1, 0.2, 0.3]))
    assert res["evaluation_time"] is None and res["tecb"]["model_id"] == "org/m1"  # no timings: byte-identical
    json.dumps(res)
    named = mteb_results.mteb_result(
        _scores(),
        "m1",
        "BlurbsClusteringS2S",
        spec={"kind": "huggingface"},
        mteb_task="BlurbsClusteringS2S",
        provenance=published,
    )
    assert named["task_name"] == "BlurbsClusteringS2S" and named["tecb"]["not_mteb_task_because"] is None
    with pytest.raises(ValueError, match="records revision tecb-sha256:ab"):
        mteb_results.mteb_result(
            _scores(),
            "m1",
            "BlurbsClusteringS2S",
            spec={"kind": "huggingface"},
            mteb_task="BlurbsClusteringS2S",
            provenance={"content_sha256": "ab"},
        )
    with pytest.raises(ValueError, match="m3.*BlurbsClusteringS2S.*kmeans/none"):
        mteb_results.mteb_result(_scores(), "m3", "BlurbsClusteringS2S", spec={"kind": "huggingface"}, mteb_task=None)


def test_model_id_is_the_configured_name_never_a_path():
    """A local model is recorded as tecb/{key} with its configured revision, never its folder."""
    local = {"kind": "local", "path": "/models/mine", "revision": "v2"}
    assert mteb_results.model_identity("mine", local) == ("tecb/mine", "v2")
    assert mteb_results.model_identity("x", {"kind": "huggingface", "id": "/abs/folder"}) == (
        "tecb/x",
        "no_revision_available",
    )
    assert (
        mteb_results.model_identity("g", {"kind": "huggingface", "id": "deepset/gbert-base"})[0] == "deepset/gbert-base"
    )
    res = mteb_results.mteb_result(_scores(), "m1", "BlurbsClusteringS2S", spec=local, mteb_task=None, provenance={})
    assert res["tecb"]["model_id"] == "tecb/m1" and res["tecb"]["model_revision"] == "v2"
    assert "/models/mine" not in json.dumps(res)


def test_mteb_task_of_config():
    """mteb's task name only for the published splits downloaded at mteb's revision, mteb's k-means and seed."""
    kmeans = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}
    entry = {"source": "published_blurbs_s2s"}
    assert mteb_results.mteb_task_of(entry, {}, kmeans=kmeans, seed=42) == "BlurbsClusteringS2S"
    assert mteb_results.mteb_task_of({"source": "published_tenkgnad_p2p"}, {}, kmeans=kmeans, seed=42) == (
        "TenKGnadClusteringP2P"
    )
    assert mteb_results.mteb_task_of(entry, {}, kmeans=kmeans, seed=1) is None
    assert mteb_results.mteb_task_of(entry, {}, kmeans={**kmeans, "params": {"batch_size": 64}}, seed=42) is None
    local = {"published_blurbs_s2s": {"path": "/data/test.jsonl"}}
    assert mteb_results.mteb_task_of(entry, local, kmeans=kmeans, seed=42) is None
    other = {"published_blurbs_s2s": {"revision": "main"}}
    assert mteb_results.mteb_task_of(entry, other, kmeans=kmeans, seed=42) is None
    assert mteb_results.mteb_task_of({"source": "germeval2019", "text": "s2s"}, {}, kmeans=kmeans, seed=42) is None
    rel = mteb_results.result_relpath(
        "g", {"kind": "huggingface", "id": "deepset/gbert-base"}, "BlurbsClusteringS2S", "BlurbsClusteringS2S"
    )
    assert rel == "results/deepset__gbert-base/no_revision_available/BlurbsClusteringS2S.json"
    assert mteb_results.result_relpath("t", {"kind": "tfidf"}, "Mine", None) == (
        "custom/results/tecb__t/no_revision_available/tecb.Mine.json"
    )


def test_write_mteb_results(tmp_path):
    _scores().to_parquet(tmp_path / "scores.parquet")
    targets = [("m1", "BlurbsClusteringS2S", tmp_path / "a.json"), ("m2", "BlurbsClusteringS2S", tmp_path / "b.json")]
    paths = mteb_results.write_mteb_results(
        mteb_results.ResultFiles(scores=tmp_path / "scores.parquet", results=targets),
        {"m1": {"kind": "huggingface", "id": "a/b"}, "m2": {"kind": "huggingface"}},
        mteb_tasks={"BlurbsClusteringS2S": None},
        log=lambda m: None,
    )
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == ["a.json", "b.json"]
    assert json.loads(paths[0].read_text())["scores"]["test"][0]["v_measure"] == pytest.approx(0.2)


@pytest.mark.workflow
def test_demo_tables_figures_mteb_and_report(demo_run):
    """The demo produces the tables (beside the paper too), figures, MTEB JSON; `--report` builds the HTML."""
    res = demo_run / "results" / "demo"  # config/demo.yaml: run: demo
    cfg = demo_run_config(demo_run)
    for n in (1, 2, 3):
        for stem in (f"table{n}", f"table{n}_vs_paper"):
            for ext in ("md", "csv", "tex", "html"):
                assert (res / "tables" / f"{stem}.{ext}").stat().st_size > 0
    t2 = pd.read_csv(res / "tables" / "table2.csv", index_col=0)
    assert list(t2.index) == [m["name"] for m in cfg["models"].values()]
    assert "Average" in t2.columns and "Blurbs S2S" in (res / "tables" / "table2.md").read_text()
    t3_md = (res / "tables" / "table3.md").read_text()
    assert f"mean over the {len(cfg['models'])} model(s)" in t3_md and "**" in t3_md
    for m in cfg["models"]:
        for d in cfg["datasets"]:
            assert (res / "figures" / "umap" / m / f"{d}.png").stat().st_size > 1000
            assert (res / "figures" / "umap" / m / f"{d}.svg").exists()
            data = json.loads(
                (
                    res / "mteb" / "custom" / "results" / f"tecb__{m}" / "no_revision_available" / f"tecb.{d}.json"
                ).read_text()
            )  # mteb.ResultCache layout, the custom cache: the demo's datasets are built here (test_mteb_export)
            assert 0 <= data["scores"]["test"][0]["main_score"] <= 1
    for stem in ("table3_heatmap", "table2_averages"):
        assert (res / "figures" / f"{stem}.png").exists() and (res / "figures" / f"{stem}.svg").exists()
    # the demo's datasets are built from small parts of the sources: no paper ticks, and the chart says why
    bars = (res / "figures" / "table2_averages.svg").read_text()
    assert "paper's averages not shown: BlurbsClusteringS2S (and 5 more) is not comparable" in bars
    assert "<!-- paper -->" not in bars
    t1_vs = (res / "tables" / "table1_vs_paper.md").read_text()
    assert "Unique samples" in t1_vs and "Split size (min)" in t1_vs and "split_size_min" not in t1_vs
    runtimes = pd.read_csv(res / "report" / "runtimes.csv")
    assert {"embed", "cluster"} <= set(runtimes.step) and (runtimes.seconds >= 0).all()
    assert "reduce" not in set(runtimes.step)  # cluster.batch: the reductions run inside the cluster_batch jobs
    run_snakemake(demo_run, "--configfile", "config/demo.yaml", "--report", "results/demo/report.html")
    html = (res / "report.html").read_text(errors="replace")
    assert len(html) > 100_000
    for needle in (
        "table2_vs_paper.html",
        "table3_heatmap.png",
        "runtimes.html",
        "config.yaml",
        "table5.html",
        "figure2.png",
        "Adaptive pre-training",
    ):  # Table 5 and Figure 2 too
        assert needle in html
    # the run was made in a temporary folder: no table and no report meant for sharing names it
    shared = [res / "report.html", *(p for p in sorted((res / "tables").rglob("*")) if p.is_file())]
    folders = [str(f).encode() for f in DEMO_RUN_FOLDERS]  # where the demo ran, and this copy of it
    assert [p.name for p in shared if any(f in p.read_bytes() for f in folders)] == []
