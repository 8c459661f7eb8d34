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
        frozen={"arms": ARMS, "label_head": {"epochs": 20, "dim": 32, "lr": 0.01},
                "disjoint_supcon": {"epochs": 30, "dim": 32, "lr": 0.01}, "self_training": {"epochs": 5}},
    )  # fmt: skip
    own = work / "frozen.yaml"
    own.write_text(yaml.safe_dump(config))
    args = ("--configfile", str(own))
    bench = "results/demo-adapt/scores/tiny-bert/TenKGnadClusteringS2S/none/kmeans.parquet"  # the benchmark's
    run_snakemake(work, "adapt_report", bench, *args, "--cores", "2", "--resources", "gpu=1")
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
    bench = pd.read_parquet(work / bench)
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


def _dataset(tmp_path, name: str, seed: int = 0):
    """A dataset of 6 labels x 20 texts whose vectors carry the label weakly; its files and embeddings."""
    import numpy as np

    from tecb import io
    from tecb.embed.encode import write_embeddings

    rng = np.random.default_rng(seed)
    texts = [f"Text {i}" for i in range(120)]
    labels = [f"c{i % 6}" for i in range(120)]
    splits = [(sorted(rng.choice(120, size=90, replace=False).tolist()), None) for _ in range(3)]
    splits = [(ids, [labels[i] for i in ids]) for ids, _ in splits]
    folder = tmp_path / name
    folder.mkdir()
    io.write_dataset(texts, splits, folder / "texts.parquet", folder / "splits.parquet", name)
    centres = rng.normal(size=(6, 8))
    vectors = np.vstack([0.5 * centres[i % 6] + rng.normal(size=8) for i in range(120)])
    write_embeddings(folder / "e.parquet", [(0, vectors)], len(texts), {"model": "synthetic"})
    return folder, vectors


KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}


def _run(folder, arm, tmp_path, *, name, pairs=None, text_kind="s2s", settings=None):
    from tecb.adapt import frozen_jobs

    frozen_jobs.run(frozen_jobs.FrozenJob(
        arm=arm, dataset=(name, "s", folder / "texts.parquet", folder / "splits.parquet"),
        embeddings=folder / "e.parquet", settings=settings or {}, seed=1, algorithm=KMEANS, eval_seed=42,
        protocol={"min_categories": 4}, text_kind=text_kind, pairs=pairs,
        scores_out=tmp_path / f"{arm}.parquet", timings_out=tmp_path / f"{arm}.json",
        labels_out=tmp_path / f"{arm}.labels.parquet",
    ), log=lambda *a: None)  # fmt: skip
    table = pq.read_table(tmp_path / f"{arm}.parquet")
    return table.to_pandas(), __import__("json").loads(table.schema.metadata[b"tecb"])


@pytest.mark.slow
def test_a_pair_arm_maps_titles_and_skips_a_p2p_dataset(tmp_path):
    import numpy as np

    from tecb.adapt import frozen_jobs

    folder, vectors = _dataset(tmp_path, "DS2S")
    rng = np.random.default_rng(3)
    titles = rng.normal(size=(200, 8))
    pairs = tmp_path / "pairs.parquet"
    frozen_jobs.write_pairs([f"t{i}" for i in range(200)], [f"t{i} b" for i in range(200)], titles,
                            2 * titles + 1, {"kept": 200}, pairs)  # fmt: skip
    df, meta = _run(folder, "title_blurb_ridge", tmp_path, name="DS2S", pairs=pairs, settings={"alpha": 1e-6})
    assert sorted(df["step"].unique()) == [0, 1] and len(df) == 6
    assert meta["variant"] == "unseen_books" and meta["protocol"]["pairs"] == {"kept": 200}
    # an affine map learnt exactly: k-means on 2x + 1 finds the partitions it finds on x (the same V per split)
    base, arm = df[df.step == 0].set_index("split"), df[df.step == 1].set_index("split")
    assert np.allclose(base["v_measure"], arm["v_measure"], atol=1e-6)
    p2p, _ = _dataset(tmp_path, "DP2P")
    df, meta = _run(p2p, "title_blurb_ridge", tmp_path, name="DP2P", pairs=pairs, text_kind="p2p")
    assert df.empty and "(S2S datasets) only" in meta["protocol"]["skipped"]


@pytest.mark.slow
def test_the_disjoint_head_trains_on_one_half_and_is_scored_on_the_other(tmp_path):
    folder, _ = _dataset(tmp_path, "D")
    df, meta = _run(folder, "disjoint_supcon", tmp_path, name="D", settings={"epochs": 5, "dim": 8})
    record = meta["protocol"]
    assert not set(record["train_labels"]) & set(record["eval_labels"]) and record["items"] > 0
    assert set(df["n_labels"]) <= {len(record["eval_labels"])} and sorted(df["step"].unique()) == [0, 1]
    # the labels file holds the base's and the arm's predictions on the restricted splits: the scores again
    from sklearn.metrics import v_measure_score

    from tecb.report.adapt_tables import read_predictions

    saved = read_predictions([tmp_path / "disjoint_supcon.labels.parquet"], [("m", "disjoint_supcon", "x", "D", 1)])
    for name, step in (("base", 0), ("final", 1)):
        again = [
            v_measure_score(y, c[0])
            for _, (_, y, c) in sorted(saved[("m", "disjoint_supcon", "x", "D", 1)][name].items())
        ]
        assert again == pytest.approx(df[df.step == step].sort_values("split").v_measure.tolist(), abs=1e-12)
    control, meta = _run(folder, "label_head", tmp_path, name="D", settings={"epochs": 200, "dim": 8, "lr": 0.01})
    base, arm = control[control.step == 0], control[control.step == 1]
    assert arm["v_measure"].mean() > base["v_measure"].mean() + 0.1  # the positive control wins (linear head)
    assert meta["variant"] == "oracle" and len(meta["training"]["phases"]["label_head"]["per_split"]) == 3
