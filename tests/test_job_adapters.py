"""One job adapter per stage (issue 45 item 2): a stage's run options are resolved once, by its library, from the
Snakemake job a script is given (``from_job``), or while the DAG is built (``from_config``): the threads, the
per-model batch size, the memory guard, numba's cache folder, the store's folder, the seed that decides a model's
vectors. A fake job here stands for the ``snakemake`` object of a script."""

from __future__ import annotations

import os
import re
from types import SimpleNamespace

import pytest

from tecb.cluster.batch import batch_members
from tecb.cluster.job import ClusterRun
from tecb.embed.job import EmbedRun, embed_job, job_model_files
from tecb.embed.spec import batch_size_of, job_embed_options, vector_seed

CONFIG = {
    "embed": {"batch_size": 32, "device": "cpu", "threads": 2, "cache_dir": "store"},
    "models": {"big": {"kind": "local", "path": "m", "batch_size": 4}, "tfidf": {"kind": "tfidf", "dim": 8}},
    "cluster": {"threads": 4, "max_memory_gb": 3.5, "numba_cache": ".snakemake/numba-cache", "batch": True},
}


class Names(SimpleNamespace):
    """A Snakemake Namedlist's `get`."""

    def get(self, key, default=None):
        return getattr(self, key, default)

    def keys(self):
        return vars(self).keys()


def fake_job(threads=3, **params):
    return SimpleNamespace(
        config=CONFIG,
        threads=threads,
        wildcards=Names(model="big", dataset="D"),
        input=Names(texts="t.parquet", model=["m"], digest=[]),
        params=Names(settings={"kind": "local", "path": "m"}, seed=None, **params),
    )


def test_cluster_threads_are_resolved_once_from_the_config_and_a_job_takes_its_own():
    dag = ClusterRun.from_config(CONFIG)
    assert (dag.threads, dag.max_memory_gb, dag.numba_cache) == (4, 3.5, ".snakemake/numba-cache")
    assert [dag.method_threads(m) for m in ("minibatch_kmeans", "hdbscan", "agglomerative", "dbstream")] == [4, 4, 1, 1]
    job = ClusterRun.from_job(fake_job(threads=2))  # Snakemake scaled the declared 4 down to --cores 2
    assert (job.threads, job.max_memory_gb, job.numba_cache) == (2, 3.5, ".snakemake/numba-cache")
    assert ClusterRun.from_config({"cluster": {"threads": 1, "numba_cache": ""}}).numba_cache is None


def test_a_cluster_batch_gives_each_configuration_its_jobs_threads_or_one():
    configurations = [
        {"reduction": "none", "algorithm": "kmeans", "spec": {"method": "minibatch_kmeans"}},
        {"reduction": "none", "algorithm": "ward", "spec": {"method": "agglomerative"}},
    ]
    outputs = SimpleNamespace(scores=["s1", "s2"], timings=["t1", "t2"], labels=["l1", "l2"])
    members = batch_members(configurations, SimpleNamespace(embeddings="e"), outputs, reduced={}, threads=3)
    assert [m["threads"] for m in members] == [3, 1]


def test_the_per_model_batch_size_has_one_resolution():
    assert batch_size_of({"batch_size": 4}, {"batch_size": 32}) == 4
    assert batch_size_of({}, {"batch_size": 32}) == 32
    assert job_embed_options(CONFIG, model="big")["batch_size"] == 4
    assert job_embed_options(CONFIG, model="tfidf")["batch_size"] == 32


def test_the_seed_that_decides_vectors_is_tfidfs_only():
    assert vector_seed("tfidf", 42) == 42
    assert {vector_seed(kind, 42) for kind in ("huggingface", "local", "tiny-bert", "python", "static")} == {None}


def test_an_embed_job_is_built_from_the_snakemake_job():
    job = fake_job()
    run = EmbedRun.from_job(job)
    assert run.options["batch_size"] == 4 and run.options["device"] == "cpu" and run.cache_dir == "store"
    built = embed_job(job, embeddings="e.parquet", timings="t.json", cache_key="k" * 64)
    assert (built.texts, built.embeddings, built.timings, built.dataset) == ("t.parquet", "e.parquet", "t.json", "D")
    assert built.embed_options["batch_size"] == 4 and built.seed is None and built.cache_key == "k" * 64
    files = job_model_files(job)
    assert (files.kind, files.path, files.digest) == ("local", "m", None)
    assert job_model_files(fake_job(kind="tfidf")).kind == "tfidf"  # the params' kind first (embed_batch)


def test_embed_device_has_one_resolution_read_by_the_encoders_and_the_gpu_resource():
    from tecb.embed.spec import KINDS, encoder_device, gpus_asked

    assert [encoder_device(o) for o in ({}, {"device": ""}, {"device": "auto"})] == [None, None, None]
    assert [encoder_device({"device": d}) for d in ("cpu", "cuda:1")] == ["cpu", "cuda:1"]
    asked = {d: {k: gpus_asked(k, {"device": d}) for k in KINDS} for d in ("cpu", "auto", "cuda")}
    for device, gpus in asked.items():
        assert gpus["tfidf"] == gpus["static"] == gpus["precomputed"] == 0
        assert gpus["tiny-bert"] == gpus["huggingface"] == gpus["local"] == 1  # a transformer asks on any device
        assert gpus["python"] == (device != "cpu")
    # no other file reads `embed.device` itself (pretrain.device and adapt.device are their stages' own)
    from conftest import ROOT

    reads = re.compile(r"""(embed_options|\["embed"\]|EMBED)(\.get\(|\[)["']device["']""")
    files = [*(ROOT / "src" / "tecb").rglob("*.py"), *(ROOT / "workflow").rglob("*.smk")]
    readers = [str(p.relative_to(ROOT)) for p in files if reads.search(p.read_text())]
    assert readers == ["src/tecb/embed/spec.py"]


def test_a_cluster_job_points_numba_at_its_cache_folder_only_when_one_is_set(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    ClusterRun(threads=1).use_numba_cache()
    assert "NUMBA_CACHE_DIR" not in os.environ
    ClusterRun(threads=1, numba_cache="numba-cache").use_numba_cache()
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "numba-cache")


def test_a_cluster_batch_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.cluster import batch
    from tecb.report.cluster_batch import run_cluster_batch

    calls = []
    monkeypatch.setattr(batch, "run_batch", lambda b, **kw: calls.append((b, kw)) or ["x"])
    job = SimpleNamespace(
        wildcards=Names(model="m", dataset="D"),
        input=Names(embeddings="e.parquet", splits="s.parquet", texts="t.parquet"),
        output=Names(
            reduced=["r.parquet"],
            scores=["s1", "s2"],
            timings=["t1", "t2"],
            labels=["l1", "l2"],
            member_keys="keys.json",
            mteb_v2="v2.parquet",
            view="view.html",
        ),  # fmt: skip
        params=Names(
            seed=7,
            reductions=[{"reduction": "pca", "spec": {"method": "pca"}}],
            members=[
                {"reduction": "none", "algorithm": "kmeans", "spec": {"method": "minibatch_kmeans"}},
                {"reduction": "pca", "algorithm": "ward", "spec": {"method": "agglomerative"}},
            ],
            steps={
                "mteb_v2": {"max_documents": 100, "options": {}},
                "view": {"labels": "l1", "title": "T", "split": "largest", "top_terms": 8},
            },
        ),
    )
    assert run_cluster_batch(job, ClusterRun(threads=3, max_memory_gb=2.0, numba_cache="c")) == ["x"]
    [(built, options)] = calls
    assert [(r["name"], r["out"]) for r in built.reductions] == [("pca", "r.parquet")]
    assert [(m["name"], m["threads"], m.get("reduced_path")) for m in built.members] == [
        ("none/kmeans", 3, None),
        ("pca/ward", 1, "r.parquet"),
    ]
    assert [(s["name"], s["outputs"]) for s in built.steps] == [
        ("mteb_v2", ["v2.parquet"]),
        ("cluster_view", ["view.html"]),
    ]
    assert built.steps[1]["inputs"] == ["t.parquet", "s.parquet", "l1"]
    assert options["files"] == batch.BatchFiles(embeddings="e.parquet", splits="s.parquet", keys="keys.json")
    assert (options["seed"], options["max_memory_gb"], options["cache_umap"], options["where"]) == (
        7,
        2.0,
        True,
        "m/D: ",
    )
    job.params.steps = {}  # neither step configured
    run_cluster_batch(job, ClusterRun(threads=1))
    assert calls[1][0].steps == [] and calls[1][1]["cache_umap"] is False


def test_the_embed_and_merge_jobs_serve_their_files_from_the_store_or_write_them(monkeypatch, tmp_path):
    """With embed.cache_dir an embed job (its key: tecb.embed.job.job_embedding_key) and an embed_merge job (the
    key its shards record) serve their outputs from the store's entry, computed into the entry's paths; without
    it, they write their outputs."""
    from tecb.embed import encode, job, shard

    served, embedded, merged = [], [], []

    def serve(folder, key, *, compute, outputs, log):
        served.append((folder, key, outputs))
        compute({"embeddings": f"{folder}/{key}.parquet", "timings": f"{folder}/{key}.timings.json"})
        return True

    monkeypatch.setattr(job, "serve_from_entry", serve)
    monkeypatch.setattr(job, "job_embedding_key", lambda j: "k" * 64)
    monkeypatch.setattr(job, "recorded_key", lambda path: "m" * 64)
    monkeypatch.setattr(encode, "embed_dataset", lambda built, log: embedded.append(built))
    monkeypatch.setattr(shard, "merge_job", lambda shards, times, **paths: merged.append((shards, times, paths)))
    embed = SimpleNamespace(
        config=CONFIG,
        threads=1,
        wildcards=Names(model="tfidf", dataset="E"),
        input=Names(texts="t.parquet", model=[], digest=[], shards=["a", "b"], timings=["ta", "tb"]),
        output=Names(embeddings="e.parquet", timings="t.json"),
        params=Names(settings={"kind": "tfidf", "dim": 8}, seed=42),
    )
    outputs = {"embeddings": "e.parquet", "timings": "t.json"}
    assert job.run_embed_job(embed, log=lambda m: None) is True
    [built] = embedded
    assert served == [("store", "k" * 64, outputs)]
    assert (built.embeddings, built.timings, built.cache_key) == ("store/" + "k" * 64 + ".parquet",
                                                                  "store/" + "k" * 64 + ".timings.json", "k" * 64)  # fmt: skip
    assert (built.dataset, built.seed, built.embed_options["batch_size"]) == ("E", 42, 32)
    job.run_merge_job(embed, log=lambda m: None)
    assert served[1][1:] == ("m" * 64, outputs)
    assert [(s, t, p["embeddings"]) for s, t, p in merged] == [
        (["a", "b"], ["ta", "tb"], "store/" + "m" * 64 + ".parquet")
    ]
    # without the store: the run's files themselves
    embed.config = {**CONFIG, "embed": {**CONFIG["embed"], "cache_dir": None}}
    job.run_embed_job(embed, log=lambda m: None)
    job.run_merge_job(embed, log=lambda m: None)
    assert len(served) == 2 and embedded[-1].embeddings == "e.parquet" and merged[-1][2]["embeddings"] == "e.parquet"


def test_an_embed_batch_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.embed import batch, job
    from tecb.embed.cache import ModelFiles

    calls = []
    monkeypatch.setattr(batch, "run_embed_batch", lambda members, **kw: calls.append((members, kw)) or ["A"])
    embed_batch = SimpleNamespace(
        config=CONFIG,
        threads=1,
        wildcards=Names(model="tfidf"),
        input=Names(texts=["a.parquet", "b.parquet"], model=[], digest=[]),
        output=Names(embeddings=["ea", "eb"], timings=["ta", "tb"], batch_keys="keys.json"),
        params=Names(datasets=["A", "B"], settings={"A": {"dim": 8}, "B": {"dim": 4}}, seed=42, kind="tfidf"),
    )
    assert job.run_embed_batch_job(embed_batch, log=lambda m: None) == ["A"]
    [(members, options)] = calls
    assert [(m["dataset"], m["settings"], m["texts"], m["embeddings"], m["timings"]) for m in members] == [
        ("A", {"dim": 8}, "a.parquet", "ea", "ta"),
        ("B", {"dim": 4}, "b.parquet", "eb", "tb"),
    ]
    assert (options["seed"], options["keys_path"], options["cache_dir"]) == (42, "keys.json", "store")
    assert options["embed_options"]["batch_size"] == 32  # the tfidf model sets none: the embed section's
    assert options["model"] == ModelFiles(kind="tfidf", path=None, digest=None)
    embed_batch.output.timings = ["ta"]  # a dataset without its outputs: refused, not silently dropped
    with pytest.raises(ValueError):
        job.run_embed_batch_job(embed_batch, log=lambda m: None)


def test_a_pretrain_job_is_built_from_the_snakemake_job(monkeypatch):
    import torch

    from tecb.adapt import pretrain

    fake = SimpleNamespace(
        threads=3,
        wildcards=Names(method="wwm", seed="-7"),
        input=Names(model="m", texts="t.parquet", splits="s.parquet", train_texts=[]),
        output=Names(checkpoint="ckpt/seed-7", scores="scores.parquet", timings="t.json"),
        params=Names(
            method_params={"lr": 0.1},
            epochs=[1, 2],
            algorithm={"method": "minibatch_kmeans"},
            eval_seed=42,
            device="cpu",
            eval_batch_size=16,
            resume_every=5,
        ),  # fmt: skip
    )
    built = pretrain.PretrainJob.from_job(fake)
    assert (built.model_dir, built.texts_path, built.splits_path, built.checkpoint_dir) == (
        "m",
        "t.parquet",
        "s.parquet",
        "ckpt/seed-7",
    )
    assert (built.method, built.params, built.eval_epochs, built.algorithm) == (
        "wwm",
        {"lr": 0.1},
        [1, 2],
        {"method": "minibatch_kmeans"},
    )
    assert (built.seed, built.eval_seed, built.device, built.eval_batch_size) == (-7, 42, "cpu", 16)
    assert (built.resume_path, built.resume_every, built.train_texts_path) == ("ckpt/seed-7.resume.pt", 5, None)
    fake.input.train_texts = "other.parquet"
    assert pretrain.PretrainJob.from_job(fake).train_texts_path == "other.parquet"
    threads, runs = [], []
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    monkeypatch.setattr(
        pretrain,
        "run",
        lambda job, out, *, log, timings_path, labels_path: runs.append((job, out, timings_path, labels_path)),
    )
    pretrain.run_pretrain_job(fake, log=print)
    assert threads == [3] and runs == [(pretrain.PretrainJob.from_job(fake), "scores.parquet", "t.json", None)]
    fake.output = Names(checkpoint="ckpt/seed-7", scores="scores.parquet", timings="t.json", labels="l.parquet")
    pretrain.run_pretrain_job(fake, log=print)  # tables.statistics.labels on: the job's labels output
    assert runs[-1][3] == "l.parquet"


STATISTICS = {"enabled": True, "test": "mean", "alpha": 0.05, "confidence": 0.95, "n_resamples": 100}


def test_a_tables_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.report import job, table_files

    calls = []
    monkeypatch.setattr(table_files, "render_tables", lambda s, i, *, outputs, log: calls.append((s, i, outputs)))
    tables = SimpleNamespace(
        input=Names(scores="scores.parquet", texts=["ta"], splits=["sa"], reference=["r.csv", "r1.csv"], chance=["c"]),
        output=Names(table1=["1.md", "1.csv"], table1_html="1.html", intervals="i.csv"),
        params=Names(
            tables=["table1"],
            formats=["md", "csv"],
            csv_tables=["intervals"],
            datasets=["A"],
            model_names={"m": "M"},
            model_notes={},
            configurations=[["kmeans", "none"]],
            table2={"algorithm": "kmeans", "reduction": "none"},
            metrics=["v_measure"],
            statistics=STATISTICS,
            chance=True,
            per_kind=False,
            seed=42,
            trained_on={},
        ),  # fmt: skip
    )
    job.run_tables_job(tables)
    [(settings, inputs, outputs)] = calls
    assert outputs == {"table1": {"md": "1.md", "csv": "1.csv", "html": "1.html"}, "intervals": {"csv": "i.csv"}}
    assert settings.configurations == [("kmeans", "none")] and settings.statistics == STATISTICS
    assert (inputs.reference, inputs.reference_table1, inputs.chance) == ("r.csv", "r1.csv", ["c"])
    tables.input.reference, tables.params.chance = [], False
    tables.params.statistics = {**STATISTICS, "enabled": False}
    job.run_tables_job(tables)
    settings, inputs, _ = calls[1]
    assert (inputs.reference, inputs.reference_table1, inputs.chance, settings.statistics) == (None, None, None, None)
    assert inputs.labels is None  # no labels files named: the analytic test
    tables.input.labels, tables.params.labels_keys = ["l.parquet"], [["m", "A", "none", "kmeans"]]
    job.run_tables_job(tables)
    assert calls[2][1].labels == {("m", "A", "none", "kmeans"): "l.parquet"}
    tables.params.labels_keys = []
    with pytest.raises(ValueError, match="1 labels files but 0 labels_keys"):
        job.run_tables_job(tables)


def test_a_pretrain_report_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.report import job, paper, pretrain_tables, tables

    calls = []
    monkeypatch.setattr(pretrain_tables, "render", lambda i, o, **kw: calls.append((i, o, kw)))
    monkeypatch.setattr(paper, "comparability", lambda names, paths: {n: f"not {p}" for n, p in zip(names, paths)})
    monkeypatch.setattr(tables, "split_kinds", lambda names, paths: {"A": {0: "coarse"}})
    monkeypatch.setattr(tables, "split_overlaps", lambda names, paths, kinds: {n: p for n, p in zip(names, paths)})
    stems = ("table5", "best_epochs", "table5_vs_paper")
    report = SimpleNamespace(
        input=Names(scores=["s1"], baselines=["b1"], reference="ref.csv", splits=["sp"]),
        output=Names(
            scores="scores.parquet",
            figure2="f2.png",
            contrasts=["c.md"],
            **{s: [f"{s}.md"] for s in stems},
            **{f"{s}_html": f"{s}.html" for s in stems},
        ),  # fmt: skip
        params=Names(
            seed_keys=[("m", "wwm", "A", 1)],
            formats=["md"],
            baseline_keys=[["m", "A"]],
            table_epochs={"wwm": [1]},
            budgets={"wwm": 1},
            model_names={"m": "M"},
            datasets=["A"],
            statistics=STATISTICS,
            contrasts=[],
            seed=3,
        ),  # fmt: skip
    )
    job.run_pretrain_report_job(report)
    [(inputs, outputs, options)] = calls
    assert outputs == {
        "scores": "scores.parquet",
        "figure2": "f2.png",
        **{s: {"md": f"{s}.md", "html": f"{s}.html"} for s in stems},
        "contrasts": {"md": "c.md"},
    }
    assert (inputs.keys, inputs.scores, inputs.baselines, inputs.reference) == (
        [("m", "wwm", "A", 1)],
        ["s1"],
        {("m", "A"): "b1"},
        "ref.csv",
    )
    assert options["not_comparable"] == {"A": "not sp"} and options["budgets"] == {"wwm": 1}
    assert (options["statistics"].seed, options["statistics"].design_effects) == (3, {"A": "sp"})
    assert options["split_kinds"] == {"A": {0: "coarse"}}  # Table 5 stratified by split kind, as Table 6 (issue 53)
    report.params.statistics = {**STATISTICS, "enabled": False}
    job.run_pretrain_report_job(report)
    assert calls[1][2]["statistics"] is None


def test_an_adapt_report_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.report import adapt_tables, job, tables

    calls = []
    monkeypatch.setattr(adapt_tables, "render", lambda i, o, **kw: calls.append((i, o, kw)))
    monkeypatch.setattr(tables, "split_kinds", lambda names, paths: {"A": {0: "coarse"}})
    monkeypatch.setattr(tables, "split_overlaps", lambda names, paths, kinds: {"A": (paths, kinds)})
    report = SimpleNamespace(
        input=Names(scores=["s1"], timings=["t1"], splits=["sp"], chance=["ch"]),
        output=Names(
            scores="scores.parquet",
            figure="f.png",
            table6=["6.md", "6.csv"],
            table6_html="6.html",
            costs=["costs.md", "costs.csv"],
            contrasts=["c.md", "c.csv"],
        ),  # fmt: skip
        params=Names(
            jobs=[("m", "simcse", "v", "A", 1)],
            formats=["md", "csv"],
            statistics=STATISTICS,
            contrasts=[{"a": "x"}],
            seed=5,
            model_names={"m": "M"},
            datasets=["A"],
        ),  # fmt: skip
    )
    job.run_adapt_report_job(report)
    [(inputs, outputs, options)] = calls
    assert outputs == {
        "scores": "scores.parquet",
        "figure": "f.png",
        "table6": {"md": "6.md", "csv": "6.csv", "html": "6.html"},
        "costs": {"md": "costs.md", "csv": "costs.csv"},
        "contrasts": {"md": "c.md", "csv": "c.csv"},
    }
    assert (inputs.keys, inputs.scores, inputs.timings, inputs.chance) == (
        [("m", "simcse", "v", "A", 1)],
        ["s1"],
        ["t1"],
        {"A": "ch"},
    )
    assert options["split_kinds"] == {"A": {0: "coarse"}} and options["contrasts_declared"] == [{"a": "x"}]
    assert options["statistics"].seed == 5
    assert options["statistics"].design_effects == {"A": (["sp"], {"A": {0: "coarse"}})}


def test_an_adapt_job_is_built_from_the_snakemake_job(monkeypatch):
    import torch

    from tecb.adapt import jobs

    fake = SimpleNamespace(
        threads=2,
        config={"adapt": {"resume_every": 25}},
        wildcards=Names(method="cob", variant="disjoint", dataset="D", seed="7"),
        input=Names(model="m", texts=["d.parquet", "o.parquet"], splits=["ds.parquet", "os.parquet"], benchmark="b"),
        output=Names(scores="s.parquet", model="out/seed7", timings="t.json"),
        params=Names(
            settings={"epochs": 4},
            protocol={"supervised": ["disjoint"]},
            text_kind="s2s",
            algorithm={"method": "minibatch_kmeans"},
            eval_seed=42,
            eval_batch_size=16,
            eval_max_length=128,
            eval_every=None,
            names=["D", "O"],
            sources=["germeval", "gnad"],
            encoder={"prompt": "q: "},
            device="cpu",
            strict=True,
        ),  # fmt: skip
    )
    threads, runs = [], []
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    monkeypatch.setattr(jobs, "run", lambda job, **kwargs: runs.append((job, kwargs)))
    jobs.run_adapt_job(fake, log=print)
    assert threads == [2] and len(runs) == 1
    job, kwargs = runs[0]
    assert job == jobs.Job("cob", "disjoint", "D", 7, {"epochs": 4}, {"supervised": ["disjoint"]}, "s2s")
    assert kwargs["scoring"] == jobs.Scoring({"method": "minibatch_kmeans"}, 42, 16, 128, None)
    assert kwargs["files"] == jobs.Files(
        model_dir="m",
        datasets={"D": ("germeval", "d.parquet", "ds.parquet"), "O": ("gnad", "o.parquet", "os.parquet")},
        scores="s.parquet",
        model_out="out/seed7",
        timings="t.json",
        posts=None,
        benchmark_embeddings="b",
        resume="out/seed7.resume.pt",
    )
    assert (kwargs["encoder"], kwargs["device"], kwargs["strict"], kwargs["resume_every"]) == (
        {"prompt": "q: "},
        "cpu",
        True,
        25,
    )


def test_a_cluster_job_is_built_from_the_snakemake_job(monkeypatch):
    from tecb.cluster import algorithms
    from tecb.cluster.job import run_cluster_job

    fake = SimpleNamespace(
        config=CONFIG,
        threads=2,
        wildcards=Names(model="big", dataset="D", algorithm="kmeans", reduction="umap"),
        input=Names(splits="s.parquet", reduced="r.parquet"),
        output=Names(scores="sc.parquet", timings="t.json", labels="l.parquet"),
        params=Names(spec={"method": "minibatch_kmeans"}, seed=42),
    )
    runs = []
    monkeypatch.setattr(algorithms, "run_configuration", lambda spec, **kwargs: runs.append((spec, kwargs)))
    run_cluster_job(fake, log=print)
    assert len(runs) == 1
    spec, kwargs = runs[0]
    assert spec == {"method": "minibatch_kmeans"} and kwargs["files"] == algorithms.ClusterFiles(
        splits="s.parquet", scores="sc.parquet", timings="t.json", labels="l.parquet", embeddings=None,
        reduced="r.parquet",
    )  # fmt: skip
    assert (kwargs["seed"], kwargs["threads"], kwargs["max_memory_gb"]) == (42, 2, 3.5)
    assert kwargs["where"] == "big/D (kmeans, umap): "


def test_a_reduce_job_sets_numbas_cache_then_reduces(monkeypatch, tmp_path):
    from tecb.cluster import reduce
    from tecb.cluster.job import run_reduce_job

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    fake = SimpleNamespace(
        config=CONFIG,
        threads=3,
        wildcards=Names(reduction="umap"),
        input=Names(embeddings="e.parquet", splits="s.parquet"),
        output=["r.parquet"],
        params=Names(spec={"method": "umap", "n_components": 2}, seed=42),
    )
    runs, logged = [], []
    monkeypatch.setattr(reduce, "run_reduction", lambda spec, **kwargs: runs.append((spec, kwargs)))
    run_reduce_job(fake, log=logged.append)
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / ".snakemake" / "numba-cache")
    assert logged == ["numba cache: .snakemake/numba-cache"] and len(runs) == 1
    spec, kwargs = runs[0]
    assert spec == {"method": "umap", "n_components": 2}
    assert kwargs["files"] == reduce.ReduceFiles(embeddings="e.parquet", splits="s.parquet", reduced="r.parquet")
    assert (kwargs["reduction"], kwargs["seed"], kwargs["threads"], kwargs["cache_umap"]) == ("umap", 42, 3, True)
