"""config/adapt.yaml: every training method on the demo data writes Table 6, byte-identical when run again."""

from __future__ import annotations

import importlib
import json
import re

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake

SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
METHODS = ("simcse", "clusterns", "cob", "triplet", "argue", "random_head")  # and the control


@pytest.mark.parametrize("method", METHODS)
def test_schema_defaults_are_the_methods_defaults(method):
    """The schema is the one home of defaults at run time: it holds each method module's DEFAULTS exactly."""
    module = importlib.import_module(f"tecb.adapt.{method}")
    props = SCHEMA["properties"]["adapt"]["properties"]["methods"]["properties"][method]["properties"]
    assert {k: v["default"] for k, v in props.items()} == module.DEFAULTS


def _outputs(work):
    """Every output that must repeat byte for byte (durations live in timings/ and benchmarks/ only)."""
    base = work / "results" / "demo-adapt"
    files = sorted(p for p in (base / "adapt").rglob("*") if p.is_file())
    files += sorted(p for p in (base / "checkpoints").rglob("protocol.json"))
    return {str(p.relative_to(base)): p.read_bytes() for p in files}


@pytest.mark.workflow
def test_adapt_overlay_writes_table6_and_repeats_byte_for_byte(tmp_path):
    work = copy_project(tmp_path / "adapt")
    first = work / "results" / "demo-adapt"
    # Table 6 and what it is compared with (the rest of `all`, e.g. the chance floor, is the demo test's)
    bench_path = first / "scores" / "tiny-bert" / "TenKGnadClusteringS2S" / "none" / "kmeans.parquet"
    targets = ["adapt_report", str(bench_path.relative_to(work))]

    def score_file(method, variant):
        return first / "adapt" / "tiny-bert" / method / variant / "TenKGnadClusteringS2S" / "seed42.parquet"

    run_snakemake(work, *targets, "--configfile", "config/adapt.yaml", "--cores", "2", "--resources", "gpu=1")
    table = pd.read_csv(first / "adapt" / "table6.csv", index_col=0)
    chance = [r for r in table.index if r.startswith("Random partition (chance)")]
    assert len(chance) == 1 and table.loc[chance[0], "base"] > 0  # the chance row of Table 2, TenKGnad S2S
    table = table.drop(index=chance)
    rows = list(table.index)
    for method in ("SimCSE", "ClusterNS", "COB", "Triplet", "argue"):
        assert any(f"· {method} ·" in r for r in rows), (method, rows)
    # cob, triplet and the random-head control under both supervised protocols, simcse and clusterns
    # transductive, one argue model per objective (order, reply): 10 rows, none skipped
    assert len(rows) == 10
    assert sum("· argue · order ·" in r for r in rows) == 1 and sum("· argue · reply ·" in r for r in rows) == 1
    assert sum("· lodo ·" in r for r in rows) == 3 and sum("· disjoint ·" in r for r in rows) == 3
    assert table["adapted"].notna().all() and table["base"].notna().all()
    assert (table["device"] == "cpu").all()
    # what each row ran, and step 0 asserted against the benchmark's embeddings in every job
    assert table["ran"].str.contains("head Dense").sum() == 6 and table["ran"].notna().all()
    controls = table[table.index.str.contains("· random head ·")]
    assert len(controls) == 2 and (controls["ran"].str.startswith("CONTROL: no training, head Dense")).all()
    assert (controls["steps"] == 0).all() and (controls["Δ"] != 0).all()
    # COB keeps the epoch of its best V-measure on held-out training instances, and Table 6 says which
    for variant in ("lodo", "disjoint"):
        info = json.loads(pq.read_schema(score_file("cob", variant)).metadata[b"tecb"])["training"]["phases"]["cob"]
        epochs = len(info["validation"]) - 1  # the first before training
        assert info["validation_instances"] >= 1 and epochs >= 1
        assert info["selected_epoch"] == 1 + max(range(epochs), key=lambda i: info["validation"][1 + i])
        row = table.loc[[r for r in rows if f"COB · {variant}" in r][0]]
        assert f"epoch {info['selected_epoch']} of {epochs} kept" in row["ran"], row["ran"]
    md = (first / "adapt" / "table6.md").read_text()
    assert md.startswith("Table 6") and "[" in md  # intervals in the cells
    assert (first / "adapt" / "figure_training.png").stat().st_size > 0
    costs = pd.read_csv(first / "timings" / "adapt" / "costs.csv", index_col=0)
    assert len(costs) == 10 and (costs[~costs.index.str.contains("random head")]["train_seconds"] > 0).all()
    assert "second" not in (first / "adapt" / "table6.csv").read_text()
    # the declared contrasts (the schema's defaults), computed beside Table 6 (issue 43.2)
    contrasts = pd.read_csv(first / "adapt" / "contrasts.csv", index_col=0)
    assert (contrasts.contrast == "* − base").sum() == 8 and set(contrasts.design) == {"all"}  # not the control
    assert {"clusterns − simcse", "cob − triplet"} <= set(contrasts.contrast)
    for method in ("cob", "triplet"):  # each read against the control, per supervised protocol
        read = contrasts[contrasts.contrast == f"{method} − random_head"]
        assert sorted(read.b) == ["random head disjoint", "random head lodo"], read
        assert (read.delta - (read.mean_a - read.mean_b)).abs().max() <= 0.015  # each rounded to 2 decimals
    assert "tsdae − wwm: skipped" in (first / "adapt" / "contrasts.md").read_text()
    # the protocol is recorded in every job's outputs
    for path in sorted((first / "adapt" / "tiny-bert").rglob("seed42.parquet")):
        meta = json.loads(pq.read_schema(path).metadata[b"tecb"])
        variant = path.parts[-3]
        protocol = "transductive" if path.parts[-4] == "argue" else variant  # argue's variant is its objective
        control = path.parts[-4] == "random_head"  # trains on nothing; scored after its head as step 1
        assert meta["protocol"]["variant"] == protocol
        assert (meta["protocol"]["labels_seen"] == "none") == (protocol == "transductive" or control)
        rows = pq.read_table(path).to_pandas()
        assert rows.step.min() == 0 and rows.step.max() == meta["training"]["steps"] + control
        assert meta["step0_check"]["max_abs_diff"] <= meta["step0_check"]["tolerance"]
        folder = first / "checkpoints" / "tiny-bert" / f"{path.parts[-4]}-{variant}" / path.parts[-2] / "seed42"
        assert json.loads((folder / "protocol.json").read_text())["protocol"] == meta["protocol"]
    # step 0 is the base model scored exactly as the benchmark scores it (same splits, same k-means)
    bench = pd.read_parquet(bench_path)

    for method, variant in (("simcse", "transductive"), ("cob", "lodo"), ("random_head", "lodo")):
        rows = pd.read_parquet(score_file(method, variant))
        step0 = rows[rows.step == 0].set_index("split").v_measure.sort_index()
        assert step0.to_numpy().tolist() == bench.set_index("split").v_measure.sort_index().to_numpy().tolist()
    # two training jobs again, in new processes with another PYTHONHASHSEED: COB under leave-one-dataset-out (the
    # supervised protocol's choice of training data) and argue (pairs from the forum's replies and sentence order);
    # every method's training repeating across processes is tests/test_adapt_methods.py's, the datasets and base
    # embeddings across clean runs tests/test_reproducible.py's
    a = _outputs(work)
    # a job leaves no training state behind; a state another job wrote where the rule tells COB's job to keep its
    # own (beside its model's folder, under the run's folder) is refused by the forced run below, which says so
    checkpoints = first / "checkpoints" / "tiny-bert"
    assert not list(checkpoints.rglob("*.resume.pt"))
    planted = checkpoints / "cob-lodo" / "TenKGnadClusteringS2S" / "seed42.resume.pt"
    torch_save = importlib.import_module("torch").save
    torch_save({"fingerprint": "another job's", "position": {}}, planted)
    repeat = [str(score_file(m, v).relative_to(work)) for m, v in (("cob", "lodo"), ("argue", "reply"))]
    again = run_snakemake(
        work, *targets, "--configfile", "config/adapt.yaml", "--cores", "2", "--resources", "gpu=1",
        "--forcerun", *repeat, env={"PYTHONHASHSEED": "77"},
    )  # fmt: skip
    assert len(re.findall(r"^(?:local)?rule adapt:$", again.stdout, flags=re.M)) == 2, again.stdout[-3000:]
    assert len(re.findall(r"^(?:local)?rule adapt_report:$", again.stdout, flags=re.M)) == 1, again.stdout[-3000:]
    b = _outputs(work)
    cob_log = work / "logs" / "demo-adapt" / "adapt" / "tiny-bert" / "cob" / "lodo" / "TenKGnadClusteringS2S"
    assert "belongs to other settings or data; ignored" in (cob_log / "seed42.log").read_text()
    assert not planted.exists()
    assert a.keys() == b.keys() and len(a) > 10
    different = [k for k in a if a[k] != b[k]]
    assert not different, f"outputs differ between two runs with the same seed: {different}"

    # a protocol variant added to the config plans its own jobs only: no finished job reruns for changed params
    overlay = work / "oracle.yaml"
    adapt = yaml.safe_load((work / "config" / "adapt.yaml").read_text())["adapt"]
    overlay.write_text(
        yaml.safe_dump({"adapt": {"protocol": {"supervised": [*adapt["protocol"]["supervised"], "oracle"]}}})
    )
    plan = run_snakemake(work, *targets, "--configfile", "config/adapt.yaml", str(overlay), "-n").stdout
    planned = re.findall(r"wildcards: model=tiny-bert, method=(\w+), variant=(\w+)", plan)
    assert sorted(set(planned)) == [("cob", "oracle"), ("random_head", "oracle"), ("triplet", "oracle")], plan[-3000:]
