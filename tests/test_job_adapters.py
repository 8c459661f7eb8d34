"""One job adapter per stage (issue 45 item 2): a stage's run options are resolved once, by its library, from the
Snakemake job a script is given (``from_job``), or while the DAG is built (``from_config``): the threads, the
per-model batch size, the memory guard, numba's cache folder, the store's folder, the seed that decides a model's
vectors. A fake job here stands for the ``snakemake`` object of a script."""

from __future__ import annotations

from types import SimpleNamespace

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
    # an embed_compute job: the (model, dataset) its key belongs to, not its wildcards
    other = embed_job(job, embeddings="e", timings="t", cache_key="k", owner=("tfidf", "E"))
    assert other.dataset == "E" and other.embed_options["batch_size"] == 32
    files = job_model_files(job)
    assert (files.kind, files.path, files.digest) == ("local", "m", None)
    assert job_model_files(fake_job(kind="tfidf")).kind == "tfidf"  # the params' kind first (embed_batch, embed_key)
