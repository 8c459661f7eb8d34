"""Adaptive pre-training: whole-word masking, TSDAE noise, tiny training runs, evaluation = embed stage, Table 5."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, copy_project, run_snakemake, sigkill_once_written
from helpers import job_counts

from tecb import io
from tecb.adapt import pretrain
from tecb.embed.tiny_bert import create_tiny_bert
from tecb.report import pretrain_tables, stats

WORDS = [
    "Fußballweltmeisterschaft",
    "Bundesregierung",
    "Wirtschaftswachstum",
    "Klimaschutz",
    "Literatur",
    "Roman",
    "Spiel",
    "Tor",
    "Minister",
    "Wahl",
    "Börse",
    "Aktien",
    "Theater",
    "Forschung",
    "Impfstoff",
]
PARAMS = {
    "wwm": {
        "lr": 1e-3,
        "batch_size": 4,
        "grad_accum": 2,
        "weight_decay": 0.01,
        "warmup_ratio": 0.06,
        "max_length": 64,
        "mlm_probability": 0.15,
    },
    "tsdae": {
        "lr": 1e-3,
        "batch_size": 4,
        "grad_accum": 1,
        "weight_decay": 0.0,
        "warmup_ratio": 0.0,
        "max_length": 64,
        "deletion_ratio": 0.6,
    },
}
KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}


def job(tiny, method, checkpoint_dir, eval_epochs=(1, 2), params=None, **kwargs) -> pretrain.PretrainJob:
    """A pre-training job on the tiny fixture's dataset and model, scored by k-means, seeds 42 unless given."""
    root, model = tiny
    kwargs = {"seed": 42, "eval_seed": 42, **kwargs}
    return pretrain.PretrainJob(
        model,
        root / "texts.parquet",
        root / "splits.parquet",
        method,
        PARAMS[method] if params is None else params,
        list(eval_epochs),
        KMEANS,
        checkpoint_dir,
        **kwargs,
    )


def corpus(n=24, seed=0):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        topic = i % 3
        words = rng.choice(WORDS[topic * 5 : topic * 5 + 5], size=6)
        texts.append(f"{i} " + " ".join(words) + ".")
        labels.append(f"topic{topic}")
    return texts, labels


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretrain")
    texts, labels = corpus()
    model = create_tiny_bert(
        root / "model", texts * 3, vocab_size=600, hidden_size=32, max_position_embeddings=128, seed=42
    )
    ids = list(range(len(texts)))
    io.write_dataset(
        texts, [(ids, labels), (ids[:12], labels[:12])], root / "texts.parquet", root / "splits.parquet", "Tiny"
    )
    return root, model


def test_collator_masks_whole_words(tiny):
    from transformers import AutoTokenizer

    _, model = tiny
    tokenizer = AutoTokenizer.from_pretrained(model)
    collator = pretrain.WholeWordMaskCollator(tokenizer, probability=0.3, max_length=64, seed=1)
    texts = ["Tormann Romanliteratur Ministerwahl Börsenkurs Theaterstück Forschungsreise Spiel Tor"] * 20
    batch = collator(texts)
    enc = tokenizer(texts, truncation=True, max_length=64, padding=True)
    multi_piece_words_masked = 0
    for row in range(len(texts)):
        word_ids = enc.word_ids(row)
        chosen = batch["labels"][row] != -100
        n_tokens = sum(w is not None for w in word_ids)
        assert 1 <= int(chosen.sum()) <= round(0.3 * n_tokens)
        for word in set(w for w in word_ids if w is not None):
            positions = [i for i, w in enumerate(word_ids) if w == word]
            flags = {bool(chosen[i]) for i in positions}
            assert len(flags) == 1, f"word {word} of row {row} is partly masked"
            multi_piece_words_masked += len(positions) > 1 and flags == {True}
        assert not chosen[0] and not chosen[[i for i, w in enumerate(word_ids) if w is None][-1]]  # never [CLS]/[SEP]
        # labels hold the original ids; most chosen tokens became [MASK]
        original = np.array(enc["input_ids"][row])
        assert (batch["labels"][row].numpy()[chosen.numpy()] == original[chosen.numpy()]).all()
    assert multi_piece_words_masked > 0  # the tokenizer splits these words: whole multi-piece words were masked
    masked = (batch["input_ids"] == tokenizer.mask_token_id) & (batch["labels"] != -100)
    assert masked.sum() > 0.5 * (batch["labels"] != -100).sum()


@pytest.mark.slow
def test_masked_lm_loss_is_the_models_own_loss_and_gradient(tiny):
    """The head on the masked positions only gives the loss and gradients of the model's full forward pass."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    _, model_dir = tiny
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir)
    batch = pretrain.WholeWordMaskCollator(tokenizer, probability=0.3, max_length=64, seed=3)(corpus()[0][:8])
    assert 0 < int((batch["labels"] != -100).sum()) < batch["labels"].numel() // 2
    grads = []
    for loss_of in (lambda: model(**batch).loss, lambda: pretrain.masked_lm_loss(model, batch)):
        model.zero_grad()
        loss = loss_of()
        loss.backward()
        grads.append((float(loss.detach()), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (full, full_grads), (masked, masked_grads) = grads
    assert masked == pytest.approx(full, rel=1e-6)
    assert len(full_grads) == len(masked_grads)
    for a, b in zip(full_grads, masked_grads):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_delete_words_keeps_order_and_at_least_one():
    rng = np.random.default_rng(0)
    text = " ".join(f"w{i}" for i in range(200))
    noisy = pretrain.delete_words(text, 0.6, rng).split()
    assert 40 < len(noisy) < 120  # about 40 % kept
    assert noisy == sorted(noisy, key=lambda w: int(w[1:]))
    assert len(pretrain.delete_words("eins", 0.99, rng).split()) == 1


def test_evaluation_embeddings_equal_embed_stage(tiny, tmp_path):
    from tecb.embed.encode import EmbedJob, embed_dataset

    root, model = tiny
    out = tmp_path / "emb.parquet"
    embed_dataset(
        EmbedJob.from_spec(
            root / "texts.parquet",
            out,
            {"kind": "tiny-bert", "path": str(model)},
            {"device": "cpu", "batch_size": 32},
            seed=42,
        ),
        log=lambda m: None,
    )
    embed_vectors, _ = io.read_embeddings(out)
    texts = pq.read_table(root / "texts.parquet").column("text").to_pylist()
    ours = pretrain.encode_checkpoint(model, texts, device="cpu")
    np.testing.assert_array_equal(ours, embed_vectors)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wwm", "tsdae"])
def test_tiny_training_changes_evaluation(tiny, tmp_path, method):
    root, model = tiny
    texts = pq.read_table(root / "texts.parquet").column("text").to_pylist()
    before = pretrain.encode_checkpoint(model, texts, device="cpu")
    ckpt = tmp_path / "ckpt"
    timings = []
    import random

    import torch

    random.seed(7), np.random.seed(7), torch.manual_seed(7)  # the caller's generators, left as they were
    states = random.getstate(), np.random.get_state()[1].copy(), torch.random.get_rng_state()
    rows = pretrain.pretrain(job(tiny, method, ckpt, device="cpu"), log=lambda m: None, timings=timings)
    assert random.getstate() == states[0] and np.array_equal(np.random.get_state()[1], states[1])
    assert torch.equal(torch.random.get_rng_state(), states[2])
    assert [(r["epoch"], r["split"]) for r in rows] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert not any("seconds" in k for r in rows for k in r)  # durations go to the timings, not the scores
    assert [t["epoch"] for t in timings] == [1, 2] and all(
        t["train_seconds"] >= 0 <= t["eval_seconds"] for t in timings
    )
    assert all(np.isfinite(r["train_loss"]) and 0 <= r["v_measure"] <= 1 for r in rows)
    assert rows[-1]["optimizer_steps"] == 2 * (3 if method == "wwm" else 6)
    prov = io.json.loads((ckpt / "provenance.json").read_text())
    assert prov["method"] == method and prov["epoch"] == 2 and prov["seed"] == 42
    after = pretrain.encode_checkpoint(ckpt, texts, device="cpu")
    assert after.shape == before.shape and not np.allclose(after, before)
    assert list(tmp_path.iterdir()) == [ckpt]  # epoch 1's scratch checkpoint is gone
    if method == "wwm":  # same seed -> identical numbers; progress lines say texts done / total, rate, ETA
        lines = []
        again = pretrain.pretrain(
            job(tiny, method, tmp_path / "ckpt2", device="cpu", progress_every=0), log=lines.append
        )
        assert again == rows
        progress = [line for line in lines if line.startswith("epoch 1: ") and "texts/s" in line]
        assert progress and f"/{len(texts)} texts" in progress[0] and "ETA" in progress[0]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wwm", "tsdae"])
def test_max_steps_ends_the_job_and_scores_its_epoch_as_the_last(tiny, tmp_path, method):
    """A step budget: the job stops after max_steps optimizer steps, inside epoch 1 of (1, 2), and scores it."""
    params = dict(PARAMS[method], max_steps=2)
    lines = []
    rows = pretrain.pretrain(job(tiny, method, tmp_path / "ckpt", params=params, device="cpu"), log=lines.append)
    assert {(r["epoch"], r["optimizer_steps"]) for r in rows} == {(1, 2)}
    assert sorted(r["split"] for r in rows) == [0, 1]
    meta = json.loads((tmp_path / "ckpt" / "provenance.json").read_text())
    assert meta["optimizer_steps"] == 2 and meta["params"]["max_steps"] == 2
    assert any("max_steps 2 reached" in line for line in lines)


@pytest.mark.slow
def test_a_job_trains_on_other_texts_and_scores_the_evaluated_ones(tiny, tmp_path):
    """train_texts_path (pretrain.unlabelled): the steps come from the other texts, the scores from the dataset's."""
    root, _ = tiny
    other = tmp_path / "unlabelled.parquet"
    io.write_texts([f"Buch {i} Roman Literatur" for i in range(9)], other, provenance={"what": "unlabelled"})
    lines, params = [], dict(PARAMS["tsdae"], batch_size=3)
    on_other = job(tiny, "tsdae", tmp_path / "a", eval_epochs=[1], params=params, train_texts_path=other)
    rows = pretrain.pretrain(on_other, log=lines.append)
    assert {r["optimizer_steps"] for r in rows} == {3}  # 9 texts / 3: the dataset's 24 would take 8 steps
    assert sorted(r["split"] for r in rows) == [0, 1] and rows[0]["n_texts"] == 24
    assert any("9 unlabelled texts" in line for line in lines)
    assert json.loads((tmp_path / "a" / "provenance.json").read_text())["train_texts"] == str(other)
    on_own = job(tiny, "tsdae", tmp_path / "b", eval_epochs=[1], params=params)
    assert pretrain.job_fingerprint(on_own) != pretrain.job_fingerprint(on_other)


def test_killed_evaluation_leaves_a_scratch_checkpoint_that_remove_orphans_finds(tiny, tmp_path, monkeypatch):
    """The scratch checkpoint of an intermediate epoch is named like every temporary (tecb.io.TEMP_NAME): removed
    when its scoring fails, and, where a job is killed outright, by io.remove_orphans on the next run."""
    import os
    import time

    root, model = tiny
    seen = []

    def killed(path, *args, **kwargs):
        seen.append(path)
        assert io.TEMP_NAME.match(path.name) and path.parent == tmp_path  # beside the checkpoint, a temporary
        then = time.time() - 3 * 3600
        os.utime(path, (then, then))
        assert io.remove_orphans([tmp_path]) == [path]  # as if the job had been killed here 3 hours ago
        raise KeyboardInterrupt

    monkeypatch.setattr(pretrain, "evaluate_checkpoint", killed)
    with pytest.raises(KeyboardInterrupt):
        pretrain.pretrain(job(tiny, "wwm", tmp_path / "ckpt", device="cpu"), log=lambda m: None)
    assert len(seen) == 1 and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_run_writes_durations_to_the_timings_file_only(tiny, tmp_path):
    """... and the predicted clusters of every evaluated epoch to the labels file: the scores' V-measures again."""
    from sklearn.metrics import v_measure_score

    from tecb.report.bootstrap import split_predictions

    root, model = tiny
    out, timings = tmp_path / "seed42.parquet", tmp_path / "timings" / "seed42.json"
    labels = tmp_path / "seed42.labels.parquet"
    pretrain.run(
        job(tiny, "wwm", tmp_path / "ckpt", eval_epochs=[1], device="cpu", eval_batch_size=32),
        out,
        log=lambda m: None,
        timings_path=timings,
        labels_path=labels,
    )
    assert not any("seconds" in name for name in pq.read_schema(out).names)
    saved, scores = pd.read_parquet(labels), pd.read_parquet(out)
    assert set(saved.epoch) == {1} and list(saved.columns) == ["epoch", "split", "text_id", "cluster"]
    predicted = split_predictions(pd.read_parquet(root / "splits.parquet"), saved.drop(columns="epoch"), source="t")
    again = [v_measure_score(y, c[0]) for _, (_, y, c) in sorted(predicted.items())]
    assert again == pytest.approx(scores.sort_values("split").v_measure.tolist(), abs=1e-12)
    got = io.json.loads(timings.read_text())
    assert got["method"] == "wwm" and got["seed"] == 42 and [t["epoch"] for t in got["epochs"]] == [1]
    assert got["total_seconds"] >= got["epochs"][0]["train_seconds"] >= 0


@pytest.mark.slow
def test_evaluation_uses_the_given_eval_seed(tiny, tmp_path, monkeypatch):
    """The clustering of each evaluation is seeded with ``eval_seed`` (the config seed), not a constant."""
    import tecb.cluster.algorithms

    root, model = tiny
    seen = []
    real = tecb.cluster.algorithms.cluster_splits

    def spy(points, algorithm, seed=None, **kwargs):
        seen.append(seed)
        return real(points, algorithm, seed=seed, **kwargs)

    monkeypatch.setattr(tecb.cluster.algorithms, "cluster_splits", spy)
    pretrain.pretrain(
        job(tiny, "wwm", tmp_path / "c", eval_epochs=[1], seed=3, device="cpu", eval_seed=7), log=lambda m: None
    )
    assert seen == [7]


def test_bad_method_and_epochs(tiny, tmp_path):
    root, model = tiny
    with pytest.raises(ValueError, match="unknown pre-training method"):
        pretrain.pretrain(job(tiny, "simcse", tmp_path / "c", eval_epochs=[1], params={}))
    with pytest.raises(ValueError, match="eval_epochs"):
        pretrain.pretrain(job(tiny, "wwm", tmp_path / "c", eval_epochs=[0]))


def _fake_scores(tmp_path):
    paths = []
    rng = np.random.default_rng(0)
    for method in ("wwm", "tsdae"):
        for dataset in ("BlurbsClusteringS2S", "RedditClusteringP2P"):
            for seed in (42, 1, 2):
                rows = [
                    {"epoch": e, "split": s, "v_measure": 0.3 + 0.01 * e + 0.01 * rng.random()}
                    for e in (1, 2, 10)
                    for s in (0, 1)
                ]
                p = tmp_path / "gbert-base" / method / dataset / f"seed{seed}.parquet"
                p.parent.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(rows).to_parquet(p)
                paths.append(p)
    base = {}
    for dataset in ("BlurbsClusteringS2S", "RedditClusteringP2P"):
        p = tmp_path / f"base_{dataset}.parquet"
        pd.DataFrame({"split": [0, 1], "v_measure": [0.25, 0.27]}).to_parquet(p)
        base[("gbert-base", dataset)] = p
    return paths, base


def test_training_note_gives_each_jobs_steps_and_the_unlabelled_datasets():
    rows = [
        {"model": "m", "method": method, "dataset": d, "seed": seed, "epoch": e, "optimizer_steps": steps * e}
        | ({"unlabelled_texts": 9} if d == "B" else {})
        for method, steps in (("tsdae", 10), ("wwm", 3))
        for d in ("A", "B")
        for seed in (1, 2)
        for e in (1, 2)
    ]
    rows[-1]["optimizer_steps"] = 5  # a job cut by max_steps
    assert pretrain_tables.training_note(pd.DataFrame(rows)) == (
        "Optimizer steps per job: tsdae on A 20; tsdae on B 20; wwm on A 6; wwm on B 5/6. B: every job trained on 9 "
        "texts of its source's unlabelled books (pretrain.unlabelled), never on the evaluated texts."
    )
    assert "unlabelled" not in pretrain_tables.training_note(pd.DataFrame(rows).drop(columns="unlabelled_texts"))


def test_table5_and_figure(tmp_path):
    from tecb.report.stats import Statistics

    paths, base = _fake_scores(tmp_path)
    out = tmp_path / "out"
    keys = [p.relative_to(tmp_path).with_suffix("").parts for p in paths]
    keys = [(m, method, d, int(s.removeprefix("seed"))) for m, method, d, s in keys]
    fmts = ("md", "csv", "tex", "html")
    outputs = {
        "scores": out / "scores.parquet",
        "figure2": out / "figure2.png",
        **{stem: {ext: out / f"{stem}.{ext}" for ext in fmts} for stem in ("table5", "best_epochs", "table5_vs_paper")},
    }
    inputs = pretrain_tables.ReportInputs(
        keys=keys, scores=paths, baselines=base, reference=ROOT / "reference" / "paper_table5.csv"
    )
    pretrain_tables.render(
        inputs,
        outputs,
        rows=pretrain_tables.Table5Rows(epochs={"wwm": [10], "tsdae": [1]}, model_names={"gbert-base": "GBERT-base"}),
        budgets={"wwm": 10, "tsdae": 1},
        log=lambda m: None,
        not_comparable={"BlurbsClusteringS2S": ""},
        statistics=Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=500, seed=42),
    )
    assert "delta [low, high]: 95% t interval" in (out / "table5.md").read_text()
    # the noise floor: each (model, method)'s seed means at its last epoch, pooled per dataset
    long = pd.read_parquet(out / "scores.parquet")
    last = long[long.epoch == 10].groupby(["method", "dataset", "seed"]).v_measure.mean().mul(100).reset_index()
    floor = stats.noise_floor(last.rename(columns={"method": "arm", "v_measure": "score"}), alpha=0.05)
    s2s = floor.set_index("dataset").loc["BlurbsClusteringS2S"]
    assert f"seed SD {s2s.sd_seeds:.2f}, Δ ≥ {s2s.vs_base:.2f} against the base" in (out / "table5.md").read_text()
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(
        ["scores.parquet", "figure2.png"]
        + [f"{s}.{e}" for s in ("table5", "best_epochs", "table5_vs_paper") for e in fmts]
    )  # exactly the declared files
    t5 = pd.read_csv(out / "table5.csv", index_col=0)
    assert list(t5.index) == ["GBERT-base TSDAE 1", "GBERT-base WWM 10"]  # the paper's row order
    long = pd.read_parquet(out / "scores.parquet")
    seeds = long[(long.method == "wwm") & (long.epoch == 10) & (long.dataset == "BlurbsClusteringS2S")]
    per_seed = seeds.groupby("seed").v_measure.mean() * 100
    assert t5.loc["GBERT-base WWM 10", "BlurbsClusteringS2S_avg"] == pytest.approx(per_seed.mean(), abs=0.006)
    assert t5.loc["GBERT-base WWM 10", "BlurbsClusteringS2S_sd"] == pytest.approx(per_seed.std(ddof=1), abs=0.006)
    assert t5.loc["GBERT-base WWM 10", "BlurbsClusteringS2S_delta"] == pytest.approx(per_seed.mean() - 26, abs=0.006)
    best = pd.read_csv(out / "best_epochs.csv", index_col=0)
    assert (best.best_epoch == 10).all() and (best.budget_epoch.isin([1, 10])).all()
    vs = pd.read_csv(out / "table5_vs_paper.csv", index_col=0)
    assert vs.loc["GBERT-base WWM 10 BlurbsClusteringS2S", "paper"] == pytest.approx(15.71)
    assert (out / "figure2.png").stat().st_size > 10_000
    # comparability decided in one place (tecb.report.paper) and printed under Table 5 (issue 21.4)
    for stem in ("table5", "table5_vs_paper"):
        text = (out / f"{stem}.md").read_text()
        assert "Comparability with the paper's published numbers: BlurbsClusteringS2S: comparable" in text


@pytest.mark.workflow
def test_paper_config_dry_runs_full_grid(tmp_path):
    workdir = copy_project(tmp_path)
    proc = run_snakemake(workdir, "-n", "--cores", "2", "--resources", "gpu=1")
    counts = job_counts(proc.stdout)
    assert counts.get("pretrain", 0) == 2 * 2 * 6 * 3
    assert counts.get("pretrain_report", 0) == 1


@pytest.mark.workflow
def test_config_names_unknown_model(tmp_path):
    workdir = copy_project(tmp_path)
    cfg = (workdir / "config" / "demo.yaml").read_text()
    (workdir / "config" / "demo.yaml").write_text(cfg.replace("models: [tiny-bert]", "models: [no-such-model]"))
    proc = run_snakemake(workdir, "-n", "--configfile", "config/demo.yaml", "--cores", "1", check=False)
    assert proc.returncode != 0 and "pretrain.models names 'no-such-model'" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wwm", "tsdae"])
def test_a_sentence_transformers_base_keeps_its_prompt_and_modules(tiny, tmp_path, method, monkeypatch):
    """A base with sentence-transformers files and a default prompt (multilingual-e5's ``query: ``): training sees
    every text with the prompt in front, and the checkpoint keeps the base's modules and prompt, so that it is
    scored as the embed stage scores the base (issue 42)."""
    import json
    import shutil

    root, model = tiny
    base = tmp_path / "base"
    shutil.copytree(model, base)
    (base / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            ]
        )
    )
    (base / "1_Pooling").mkdir()
    (base / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 32, "pooling_mode_mean_tokens": True})
    )
    prompts = {"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": "query"}
    (base / "config_sentence_transformers.json").write_text(json.dumps(prompts))
    assert pretrain.base_prompt(base) == "query: " and pretrain.base_prompt(model) == ""

    seen = []
    if method == "tsdae":
        monkeypatch.setattr(pretrain, "delete_words", lambda t, ratio, rng: seen.append(t) or t)
    else:
        original = pretrain.WholeWordMaskCollator.__call__
        monkeypatch.setattr(
            pretrain.WholeWordMaskCollator, "__call__", lambda self, texts: seen.extend(texts) or original(self, texts)
        )
    ckpt = tmp_path / "ckpt"
    rows = pretrain.pretrain(job((root, base), method, ckpt, eval_epochs=(1,), device="cpu"), log=lambda m: None)
    assert rows and all(0 <= r["v_measure"] <= 1 for r in rows)
    if method == "tsdae":  # the noise is drawn on the text, the prompt put in front of both views
        assert seen and not any(t.startswith("query: ") for t in seen)
    else:
        assert seen and all(t.startswith("query: ") for t in seen)
    for name in ("modules.json", "config_sentence_transformers.json", "1_Pooling/config.json"):
        assert (ckpt / name).read_bytes() == (base / name).read_bytes()


RESUMABLE_JOB = """
import sys, time
from pathlib import Path
from tecb.adapt import pretrain

model, texts, splits, out, slow = sys.argv[1:6]
if slow == "slow":  # give the test time to kill the job mid-way (the test's own patch, in this process only)
    step = pretrain._Training._optimizer_step
    pretrain._Training._optimizer_step = lambda self: (time.sleep(0.05), step(self))[1]
params = {"lr": 1e-3, "batch_size": 4, "grad_accum": 1, "weight_decay": 0.0, "warmup_ratio": 0.1,
          "max_length": 64, "deletion_ratio": 0.6}
job = pretrain.PretrainJob(model, texts, splits, "tsdae", params, [4, 8],
                           {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}},
                           Path(out) / "ckpt", seed=42, eval_seed=42, device="cpu",
                           resume_path=Path(out) / "ckpt.resume.pt", resume_every=3)
pretrain.run(job, Path(out) / "scores.parquet", log=lambda m: print(m, flush=True),
             timings_path=Path(out) / "timings.json")
"""


@pytest.mark.slow
def test_a_killed_job_resumes_to_the_same_bytes(tiny, tmp_path):
    """kill -9 mid-way (after a saved state, before the end), the same job started again: it continues from the
    state (it says so) and ends with the scores and checkpoint weights of a job that ran through (issue 42)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root, model = tiny
    script = tmp_path / "job.py"
    script.write_text(RESUMABLE_JOB)
    env = {**os.environ, "PYTHONPATH": str(Path(pretrain.__file__).parents[2])}

    def start(out: Path, speed: str) -> subprocess.Popen:
        out.mkdir(exist_ok=True)
        args = [sys.executable, str(script), str(model), str(root / "texts.parquet"), str(root / "splits.parquet")]
        return subprocess.Popen([*args, str(out), speed], env=env, stdout=subprocess.PIPE, text=True)

    straight = start(tmp_path / "straight", "fast")
    killed = start(tmp_path / "killed", "slow")
    state = tmp_path / "killed" / "ckpt.resume.pt"
    sigkill_once_written(killed, state)
    assert state.exists() and not (tmp_path / "killed" / "scores.parquet").exists()
    again = start(tmp_path / "killed", "fast")
    log = again.communicate()[0]
    assert again.returncode == 0 and straight.wait() == 0
    resumed = re.search(r"resumed from \S+: epoch (\d+), batch (\d+), (\d+) optimizer steps done", log)
    assert resumed and 3 <= int(resumed[3]) < 48, log  # mid-way: 8 epochs x 6 steps
    assert not state.exists()  # a finished job leaves no state behind
    for name in ("scores.parquet", "ckpt/model.safetensors"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "straight" / name).read_bytes(), name
    # the job's time counts both processes: the killed one's up to its last saved state, then this one's
    import json

    timings = {k: json.loads((tmp_path / k / "timings.json").read_text()) for k in ("straight", "killed")}
    assert (timings["straight"]["processes"], timings["straight"]["earlier_seconds"]) == (1, 0.0)
    assert timings["killed"]["processes"] == 2 and timings["killed"]["earlier_seconds"] > 0
    assert timings["killed"]["total_seconds"] > timings["killed"]["earlier_seconds"]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wwm", "tsdae"])
def test_frozen_word_embeddings_stay_as_they_were(tiny, tmp_path, method):
    """``freeze_word_embeddings``: the word embeddings (and the tied decoder / MLM output) are not trained, the
    rest of the encoder is (issue 42 item 5)."""
    from safetensors.numpy import load_file

    root, model = tiny
    params = dict(PARAMS[method], freeze_word_embeddings=True)
    ckpt = tmp_path / "ckpt"
    pretrain.pretrain(job(tiny, method, ckpt, eval_epochs=(1,), params=params, device="cpu"), log=lambda m: None)
    before, after = load_file(str(model / "model.safetensors")), load_file(str(ckpt / "model.safetensors"))

    def weight(state, suffix):
        return next(v for k, v in state.items() if k.endswith(suffix))

    np.testing.assert_array_equal(weight(after, "word_embeddings.weight"), weight(before, "word_embeddings.weight"))
    layer = "encoder.layer.0.attention.self.query.weight"
    assert not np.array_equal(weight(after, layer), weight(before, layer))


def test_table5_deltas_carry_the_seed_level_and_one_seed_says_so(tmp_path):
    """Table 5's delta gets the interval and mark of the mean test over seeds and splits (issue 43.4): by hand,
    the mean difference to the base per split; its interval holds it; one seed shows "1 seed", not SD 0."""
    from tecb.report.stats import Statistics

    paths, base = _fake_scores(tmp_path)
    keys = [p.relative_to(tmp_path).with_suffix("").parts for p in paths]
    keys = [(m, method, d, int(s.removeprefix("seed"))) for m, method, d, s in keys]
    long = pretrain_tables.collect(paths, keys)
    statistics = Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42)
    deltas = pretrain_tables.delta_statistics(
        long, pretrain_tables.baseline_splits(base), {"wwm": [10], "tsdae": [1]}, statistics
    )
    assert len(deltas) == 4 and (deltas.seeds == 3).all()
    row = deltas[(deltas.method == "wwm") & (deltas.dataset == "BlurbsClusteringS2S")].iloc[0]
    cell = long[(long.method == "wwm") & (long.dataset == "BlurbsClusteringS2S") & (long.epoch == 10)]
    by_hand = (cell.v_measure - cell.split.map({0: 0.25, 1: 0.27})).mean() * 100
    assert row["delta"] == pytest.approx(by_hand) and row["ci_low"] <= by_hand <= row["ci_high"]
    assert (deltas.p_holm >= deltas.p).all()
    one = long[long.seed == 42]
    summ = pretrain_tables.summary(pretrain_tables.per_seed(one), pretrain_tables.baselines(base))
    t5 = pretrain_tables.table5(summ, {"wwm": [10]}, {"gbert-base": "GBERT-base"})
    assert t5.loc["GBERT-base WWM 10", "BlurbsClusteringS2S_sd"] == "1 seed"
    marks = pretrain_tables.delta_marks(t5, deltas, statistics, {"gbert-base": "GBERT-base"})
    assert marks.loc["GBERT-base WWM 10", "BlurbsClusteringS2S_delta"].endswith(")")  # (detectable d)


def test_table5_contrasts_compare_the_methods_at_their_budgets(tmp_path):
    """TSDAE − WWM at their fixed budgets (epochs 1 and 10), per dataset, by hand; each method against its base;
    arms the run lacks are a note."""
    from tecb.report.stats import Statistics

    paths, base = _fake_scores(tmp_path)
    keys = [p.relative_to(tmp_path).with_suffix("").parts for p in paths]
    keys = [(m, method, d, int(s.removeprefix("seed"))) for m, method, d, s in keys]
    long = pretrain_tables.collect(paths, keys)
    declared = [{"a": "tsdae", "b": "wwm"}, {"a": "*", "b": "base"}, {"a": "cob", "b": "triplet"}]
    statistics = Statistics(test="mean", alpha=0.05, confidence=0.95, n_resamples=1000, seed=42)
    table, notes = pretrain_tables.contrasts(
        long, pretrain_tables.baseline_splits(base), declared=declared, budgets={"wwm": 10, "tsdae": 1},
        statistics=statistics,
    )  # fmt: skip
    assert notes == ["cob − triplet: skipped, this run has no such pair of arms"]
    assert len(table) == 2 + 4 and set(table.seeds) == {"3 / 3", "3"} and table.index.is_unique
    row = table.loc["tsdae − wwm · gbert-base · tsdae 1 · BlurbsClusteringS2S"]
    blurbs = long[long.dataset == "BlurbsClusteringS2S"]
    tsdae = blurbs[(blurbs.method == "tsdae") & (blurbs.epoch == 1)].v_measure.mean()
    wwm = blurbs[(blurbs.method == "wwm") & (blurbs.epoch == 10)].v_measure.mean()
    low, high = float(row["ci_low"]), float(row["ci_high"])  # printed with the decimals their sign needs
    assert row["delta"] == pytest.approx(100 * (tsdae - wwm)) and low <= row["delta"] <= high
    assert (row["significant"] == "*") == (stats.parse_p(row["p_holm"]) < 0.05)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wwm", "tsdae"])
def test_the_step0_loss_is_recorded_beside_the_loss_at_chance(tiny, tmp_path, method):
    """Table 5's yardstick (issue 54): the first batch's loss before any update and the loss of uniform predictions
    over the vocabulary (ln V: both the MLM head and TSDAE's decoder predict tokens), in the scores' metadata."""
    import json
    import math

    from transformers import AutoConfig

    root, model = tiny
    out, lines = tmp_path / "seed42.parquet", []
    pretrain.run(job(tiny, method, tmp_path / "ckpt", eval_epochs=[1], device="cpu"), out, log=lines.append)
    meta = json.loads(pq.read_schema(out).metadata[b"tecb"])
    vocab = AutoConfig.from_pretrained(model).vocab_size
    assert meta["chance_loss"] == pytest.approx(math.log(vocab), abs=1e-6)
    assert 0 < meta["step0_loss"] and any(line.startswith("loss at step 0 ") for line in lines)
