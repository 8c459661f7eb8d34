"""The arms on frozen vectors in the workflow (rule adapt_frozen): on the demo data with config/adapt.yaml, each arm
is a Table 6 row scored on the base model's splits; the positive control wins; the title->blurb arms plan their
pairs job."""

from __future__ import annotations

import re
import zipfile

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import copy_project, run_snakemake

ARMS = ["whitening", "all_but_the_top", "self_training", "label_head", "disjoint_supcon"]


@pytest.mark.workflow
def test_frozen_arms_are_table6_rows_and_the_positive_control_wins(tmp_path):
    work = copy_project(tmp_path / "frozen")
    # config/adapt.yaml with its methods replaced by the frozen arms (an overlay merges `methods` key by key)
    config = yaml.safe_load((work / "config" / "adapt.yaml").read_text())
    config["adapt"].update(
        methods={},
        seeds=[42, 1],
        frozen={"arms": ARMS, "label_head": {"epochs": 30, "dim": 32, "lr": 0.01},
                "disjoint_supcon": {"epochs": 30, "dim": 32, "lr": 0.01}, "self_training": {"epochs": 5}},
    )  # fmt: skip
    own = work / "frozen.yaml"
    own.write_text(yaml.safe_dump(config))
    args = ("--configfile", str(own))
    run_snakemake(work, "adapt_report", *args, "--cores", "2", "--resources", "gpu=1")
    out = work / "results" / "demo-adapt" / "adapt"
    table = pd.read_csv(out / "table6.csv", index_col=0)
    rows = [r for r in table.index if not r.startswith("Random partition")]
    assert len(rows) == len(ARMS), rows
    named = [("centring + whitening", "transductive"), ("label head", "oracle"), ("DEC self-training head", "transductive"),
             ("SupCon head, label-disjoint", "disjoint"), ("all-but-the-top", "transductive")]  # fmt: skip
    for name, variant in named:
        assert any(f"· {name} · {variant} · TenKGnad S2S" in r for r in rows), (name, rows)
    control = next(r for r in rows if "· label head ·" in r)
    assert "POSITIVE CONTROL" in table.loc[control, "ran"]
    # the positive control wins by far over its base, through the benchmark's own clustering and scoring
    assert table.loc[control, "adapted"] > table.loc[control, "base"] + 10, table.loc[control]
    # step 0 is the benchmark's base: the same V-measure as the embed -> cluster -> score path of the model
    scores = pq.read_table(
        out / "tiny-bert" / "whitening" / "transductive" / "TenKGnadClusteringS2S" / "seed42.parquet"
    )
    df = scores.to_pandas()
    assert sorted(df["step"].unique()) == [0, 1]
    bench = pd.read_parquet(work / "results/demo-adapt/scores/tiny-bert/TenKGnadClusteringS2S/none/kmeans.parquet")
    merged = df[df.step == 0].merge(bench, on="split", suffixes=("", "_bench"))
    assert len(merged) == len(bench) and (merged["v_measure"] - merged["v_measure_bench"]).abs().max() < 1e-9

    # the title->blurb arms: their pairs job is planned from the source's unlabelled books, per model
    plan_overlay = work / "pairs.yaml"
    plan_overlay.write_text(yaml.safe_dump({"adapt": {"frozen": {"arms": ["title_blurb_ridge"]}}}))
    plan = run_snakemake(work, "adapt_report", *args, str(plan_overlay), "-n").stdout
    assert re.search(r"rule adapt_frozen_pairs:", plan) and "title_blurb_ridge" in plan, plan[-2000:]


def test_unseen_pairs_drop_evaluated_texts_and_duplicates(tmp_path):
    from tecb.adapt.frozen_jobs import unseen_pairs

    books = [("Der Titel", "Ein Klappentext."), ("Zweiter Titel", "Noch ein Text."), ("Der Titel", "Doppelt."),
             ("Evaluiert", "Schon gesehen.")]  # fmt: skip
    xml = (
        "<root>\n"
        + "".join(
            f'<book date="2019-01-04" xml:lang="de">\n<title>{t}</title>\n<body>{b}</body>\n<copyright>(c)</copyright>\n'
            f"<authors>A</authors>\n<published>2019-01-04</published>\n<isbn>{i}</isbn>\n"
            f"<url>https://example.org/{i}</url>\n</book>\n"
            for i, (t, b) in enumerate(books)
        )
        + "</root>\n"
    )
    source = tmp_path / "germeval.zip"
    with zipfile.ZipFile(source, "w") as zf:
        zf.writestr("blurbs_test_nolabel.txt", xml)
    titles, texts, provenance = unseen_pairs(source, evaluated={"Evaluiert"}, max_pairs=None, seed=0)
    assert titles == ["Der Titel", "Zweiter Titel"]
    assert all(text.startswith(title) and len(text) > len(title) for title, text in zip(titles, texts))
    assert provenance["dropped_as_evaluated"] == 1 and provenance["kept"] == 2
    one, _, _ = unseen_pairs(source, evaluated=set(), max_pairs=1, seed=0)
    assert len(one) == 1
