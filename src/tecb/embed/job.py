"""An embed-stage job from its Snakemake job, resolved in one place (issue 45: one job adapter per stage).

What decides the vectors comes from the rule's params: ``settings`` (:func:`tecb.embed.spec.encoder_settings`) and
``seed`` (:func:`tecb.embed.spec.vector_seed`: the run's for TF-IDF, None otherwise), with the inputs ``texts``,
``model`` and ``digest``. How the job runs comes from the config, here (:class:`EmbedRun`): the ``embed`` section
with the model's own batch size (:func:`tecb.embed.spec.job_embed_options`) and the store's folder. Neither decides
the vectors, so neither is a param (changing them re-embeds nothing), and no script reads the config itself.

:func:`embed_job` is the :class:`tecb.embed.encode.EmbedJob` of an embed, embed_shard or embed_compute job,
:func:`job_model_files` what its model files are and :func:`job_embedding_key` the key of what decides its vectors;
:func:`job_threads` puts a job's torch and BLAS on its threads; :func:`fill_cache_entry` is the embed_compute job
and :func:`run_embed_batch_job` the embed_batch job.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from tecb.embed.cache import ModelFiles, embedding_key, fill_entry
from tecb.embed.encode import EmbedJob
from tecb.embed.spec import job_embed_options, recorded_digest


@dataclass(frozen=True)
class EmbedRun:
    """How one model's embed job runs: ``options``, the config's ``embed`` section with the model's own
    ``batch_size`` first; ``cache_dir``, the content-addressed store (``embed.cache_dir``; None: none)."""

    options: dict
    cache_dir: str | None = None

    @classmethod
    def from_job(cls, job, *, model: str | None = None) -> EmbedRun:
        """``job``: the ``snakemake`` object of a script; ``model``: the model it embeds (default: its wildcard)."""
        config = job.config
        return cls(
            options=job_embed_options(config, model=model or job.wildcards.model),
            cache_dir=config["embed"].get("cache_dir"),
        )


def job_model_files(job) -> ModelFiles:
    """What a job's model files are (the cache key's part): its params ``kind`` (or its ``settings``' kind) and its
    inputs ``model`` and ``digest`` (lists of at most one path)."""
    kind = job.params.get("kind") or job.params.settings["kind"]
    return ModelFiles(
        kind=kind,
        path=job.input.model[0] if job.input.model else None,
        digest=job.input.digest[0] if job.input.digest else None,
    )


def job_embedding_key(job) -> str:
    """The key of what decides a job's vectors (:func:`tecb.embed.cache.embedding_key`): its settings and seed,
    the whole dataset's texts, its model files; recorded in the file it writes."""
    return embedding_key(
        settings=job.params.settings, seed=job.params.seed, texts=job.input.texts, model=job_model_files(job)
    )


def embed_job(job, *, embeddings, timings, cache_key: str, owner: tuple[str, str] | None = None) -> EmbedJob:
    """The :class:`~tecb.embed.encode.EmbedJob` of an embed, embed_shard or embed_compute job: its texts, params
    ``settings`` and ``seed``, model digest and :class:`EmbedRun` options, written to ``embeddings`` and
    ``timings``, recording ``cache_key``. ``owner``: the (model, dataset) embedded (default: the job's wildcards;
    an embed_compute job's wildcard is a key)."""
    model, dataset = owner or (job.wildcards.model, job.wildcards.dataset)
    return EmbedJob(
        texts=job.input.texts,
        embeddings=embeddings,
        model_spec=job.params.settings,
        embed_options=EmbedRun.from_job(job, model=model).options,
        seed=job.params.seed,  # the run's seed for TF-IDF, None for models that use none
        dataset=dataset,
        model_digest=recorded_digest(job.input.get("digest")),
        timings=timings,
        cache_key=cache_key,
    )


@contextlib.contextmanager
def job_threads(job, kind: str):
    """Torch and BLAS/OpenMP on exactly the ``threads`` Snakemake gave ``job``, not on every core of the machine:
    the TF-IDF SVD's vectors depend on the BLAS thread count (benchmarks/blas_kernels.md), so this keeps them equal
    across machines (issue 21.6). A model of ``kind`` ``tfidf`` never imports torch (~1.6 CPU-s)."""
    from threadpoolctl import threadpool_limits

    if kind != "tfidf":
        import torch

        torch.set_num_threads(job.threads)
    with threadpool_limits(job.threads):
        yield


def fill_cache_entry(job, *, log=print) -> bool:
    """An embed_compute job: the store's entry ``{cache_dir}/{key}.parquet`` of its wildcard ``key`` (its params
    ``owner``: the run's model and dataset with that key), under the entry's lock: an entry another run finished
    meanwhile is kept (:func:`tecb.embed.cache.fill_entry`; returns whether this job computed it). The entry is
    embedded as an embed job embeds a run's file or, for a sharded model (inputs ``shards``), merged from the run's
    shards as an embed_merge job merges them: the same bytes."""
    model, dataset = job.params.owner["model"], job.params.owner["dataset"]
    key = job.wildcards.key
    log(f"cache entry of {model} / {dataset}")

    def merge(paths):
        from tecb.embed.shard import merge_job

        merge_job(job.input.shards, job.input.timings, **paths, log=log)

    def compute(paths):
        from tecb.embed.encode import embed_dataset

        with job_threads(job, job.params.settings["kind"]):
            # the file names its key (as every embeddings file) and no run's folder
            built = embed_job(job, **paths, cache_key=key, owner=(model, dataset))
            embed_dataset(built, log=log)

    sharded = "shards" in job.input.keys()
    return fill_entry(os.path.dirname(job.output.embeddings), key, merge if sharded else compute, log=log)


def run_embed_batch_job(job, *, log=print) -> list[str]:
    """An embed_batch job: every dataset of its params ``datasets`` (each with its ``settings``, its input
    ``texts`` and its outputs ``embeddings`` and ``timings``, in that order) embedded as an embed job would
    (:func:`tecb.embed.batch.run_embed_batch`), on the job's threads (:func:`job_threads`), with its params
    ``seed`` and ``kind``, its model files, its :class:`EmbedRun` and its output ``batch_keys``; returns the
    datasets embedded (the others were up to date)."""
    from tecb.embed.batch import run_embed_batch

    inp, out, p, run = job.input, job.output, job.params, EmbedRun.from_job(job)
    members = [
        {"dataset": d, "settings": p.settings[d], "texts": texts, "embeddings": emb, "timings": timings}
        for d, texts, emb, timings in zip(p.datasets, inp.texts, out.embeddings, out.timings, strict=True)
    ]
    with job_threads(job, p.kind):  # torch and BLAS on the job's threads, as an embed job's (issue 21.6)
        return run_embed_batch(
            members,
            embed_options=run.options,
            seed=p.seed,  # the run's seed for TF-IDF, None for models that use none
            model=job_model_files(job),
            keys_path=out.batch_keys,
            cache_dir=run.cache_dir,  # the store's entries, filled and linked
            log=log,
        )
