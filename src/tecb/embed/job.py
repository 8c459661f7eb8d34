"""An embed-stage job from its Snakemake job, resolved in one place (issue 45: one job adapter per stage).

What decides the vectors comes from the rule's params: ``settings`` (:func:`tecb.embed.spec.encoder_settings`) and
``seed`` (:func:`tecb.embed.spec.vector_seed`: the run's for TF-IDF, None otherwise), with the inputs ``texts``,
``model`` and ``digest``. How the job runs comes from the config, here (:class:`EmbedRun`): the ``embed`` section
with the model's own batch size (:func:`tecb.embed.spec.job_embed_options`) and the store's folder. Neither decides
the vectors, so neither is a param (changing them re-embeds nothing), and no script reads the config itself.

:func:`embed_job` is the :class:`tecb.embed.encode.EmbedJob` of an embed or embed_shard job,
:func:`job_model_files` what its model files are and :func:`job_embedding_key` the key of what decides its vectors;
:func:`job_threads` puts a job's torch and BLAS on its threads. :func:`run_embed_job`, :func:`run_merge_job` and
:func:`run_embed_batch_job` are the embed, embed_merge and embed_batch jobs: with the store, each serves its run
files from the store's entries (:func:`tecb.embed.cache.serve_from_entry`), the one way the store is filled and read.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from tecb.embed.cache import ModelFiles, embedding_key, recorded_key, serve_from_entry
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


def embed_job(job, *, embeddings, timings, cache_key: str) -> EmbedJob:
    """The :class:`~tecb.embed.encode.EmbedJob` of an embed or embed_shard job: its texts, params ``settings`` and
    ``seed``, model digest and :class:`EmbedRun` options, written to ``embeddings`` and ``timings``, recording
    ``cache_key``."""
    model, dataset = job.wildcards.model, job.wildcards.dataset
    return EmbedJob(
        texts=job.input.texts,
        embeddings=embeddings,
        settings=job.params.settings,
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


def run_embed_job(job, *, log=print) -> bool:
    """An embed job: its dataset's texts embedded into its outputs ``embeddings`` and ``timings``, recording the
    key of what decides them (:func:`job_embedding_key`); with the store (``embed.cache_dir``), the store's entry
    of that key, reused or computed (:func:`tecb.embed.cache.serve_from_entry`). Returns whether it embedded."""
    from tecb.embed.encode import embed_dataset

    key, out, run = job_embedding_key(job), job.output, EmbedRun.from_job(job)

    def compute(paths):
        with job_threads(job, job.params.settings["kind"]):  # torch and BLAS on the job's threads (issue 21.6)
            embed_dataset(embed_job(job, **paths, cache_key=key), log=log)

    outputs = {"embeddings": out.embeddings, "timings": out.timings}
    if run.cache_dir is None:
        compute(outputs)
        return True
    return serve_from_entry(run.cache_dir, key, compute=compute, outputs=outputs, log=log)


def run_merge_job(job, *, log=print) -> bool:
    """An embed_merge job: its inputs ``shards`` (in text order) merged into its outputs ``embeddings`` and
    ``timings`` as one embed job writes them (:func:`tecb.embed.shard.merge_job`); with the store, the store's
    entry of the key the shards record (the whole dataset's), reused or merged into it. Returns whether it merged.
    """
    from tecb.embed.shard import merge_job

    inp, out, run = job.input, job.output, EmbedRun.from_job(job)

    def merge(paths):
        merge_job(inp.shards, inp.timings, **paths, log=log)

    outputs = {"embeddings": out.embeddings, "timings": out.timings}
    if run.cache_dir is None:
        merge(outputs)
        return True
    keys = {recorded_key(p) for p in inp.shards}
    if len(keys) != 1 or None in keys:
        raise ValueError(f"the shards {list(inp.shards)} record the cache keys {sorted(map(str, keys))}, not one")
    return serve_from_entry(run.cache_dir, keys.pop(), compute=merge, outputs=outputs, log=log)


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


# --- declared memory (the embed and embed_batch rules' mem_mb) ------------------------------------------------

#: MB an embed job needs besides its data: Python, numpy, scikit-learn and pyarrow (TF-IDF and the other kinds that
#: import no torch) or torch and transformers with a model's code (a transformer's; the paper-scale tiny BERT's build
#: job peaked at 812 MB)
BASE_MB, TORCH_BASE_MB = 500, 1000
#: declared = HEADROOM x estimate, the cluster and reduce jobs' margin (tecb.cluster.algorithms.HEADROOM, a later
#: stage: not imported here)
HEADROOM = 1.3
#: bytes held per byte of a dataset's text column: the Arrow column, the Python strings, the tokens and sparse counts
#: of TF-IDF or a transformer's token ids
TEXT_FACTOR = 10
#: TruncatedSVD's randomized range finder and its output, in units of (texts + vocabulary) x (dim + 10) float64 (it
#: multiplies the n x vocabulary matrix by n x (dim + 10) and vocabulary x (dim + 10) blocks): measured 2.7 units at
#: 40,181 texts x 768 dims (+831 MB) and 3.3 at 6,000 texts x 384 dims with a 42k-bigram vocabulary (+552 MB)
SVD_FACTOR = 4
#: bytes a transformer's embedding holds per byte of the texts it encodes, besides TEXT_FACTOR: the tokenizer's
#: encodings of a 4,096-text chunk counted untruncated (~180 bytes a token) and the heap its forward passes leave
#: fragmented, which grows with the texts encoded (glibc's malloc; with a fixed mmap threshold it stays flat).
#: Measured in benchmarks/embed_memory.md: 4,096 TenKGnad P2P-like texts (10.7 MB) and the paper-scale tiny-BERT
#: embed_batch job (1,980 MB; largest dataset 36 MB) peak above what 1,000 MB + 10 x the bytes declared
ENCODE_FACTOR = 30
#: TfidfVectorizer's default word pattern (tfidf_vectors: lower-cased, unigrams and bigrams)
TOKEN_PATTERN = r"(?u)\b\w\w+\b"


def tfidf_vocabulary_size(texts) -> int:
    """How many distinct word unigrams and bigrams ``texts`` have, as :func:`tecb.embed.encode.tfidf_vectors`'s
    vectorizer counts them (its matrix's columns), without building its strings."""
    import re

    import numpy as np

    pattern, ids, pairs = re.compile(TOKEN_PATTERN), {}, [np.zeros(0, np.int64)]
    for text in texts:
        words = np.array([ids.setdefault(w, len(ids)) for w in pattern.findall(text.lower())], np.int64)
        pairs.append((words[:-1] << 32) | words[1:])
    return len(ids) + len(np.unique(np.concatenate(pairs)))


def memory_estimate_mb(
    settings: dict,
    *,
    n_texts: int,
    text_bytes: int,
    vocabulary: int = 0,
    model_bytes: int = 0,
    file_bytes: int = 0,
) -> int:
    """MB one dataset's embedding holds at its peak (before :data:`HEADROOM`): the base, the texts it embeds
    (``text_bytes``: :data:`TEXT_FACTOR`, and a transformer's :data:`ENCODE_FACTOR`), TF-IDF's SVD
    (:data:`SVD_FACTOR`, with the ``vocabulary`` size) or twice a model's files (loaded, and a copy), and
    ``file_bytes`` (a shard's whole texts column, read once)."""
    from tecb.embed.spec import TRANSFORMER_KINDS

    transformer = settings["kind"] in TRANSFORMER_KINDS + ("mteb",)
    data = (TEXT_FACTOR + (ENCODE_FACTOR if transformer else 0)) * text_bytes + 2 * model_bytes + file_bytes
    if settings["kind"] == "tfidf":
        data += SVD_FACTOR * (n_texts + vocabulary) * (int(settings["dim"]) + 10) * 8
    base = TORCH_BASE_MB if transformer else BASE_MB
    return base + -(-data // 1_000_000)


def job_memory_mb(settings: dict, *, texts, model=(), rows: tuple[int, int] | None = None) -> int:
    """Memory to declare (Snakemake ``mem_mb``) for embedding each of ``texts`` (texts.parquet files, one after the
    other) with a model of ``settings`` read from ``model`` (its directory or file, if any): HEADROOM x the largest
    :func:`memory_estimate_mb` (TF-IDF's texts are read for their vocabulary); ``rows``: an embed_shard job's
    ``[start, stop)`` of one file's texts, the texts it embeds (it reads the whole column). Only the base before the
    texts exist (Snakemake evaluates again before the job runs)."""
    import os

    import pyarrow.parquet as pq

    from tecb.embed.spec import model_files

    texts = [texts] if isinstance(texts, str | os.PathLike) else list(texts)
    model = [model] if isinstance(model, str | os.PathLike) else list(model)
    model_bytes = sum(os.path.getsize(f) for m in model if os.path.exists(m) for f in model_files(m))
    if not all(os.path.exists(t) for t in texts):
        return memory_estimate_mb(settings, n_texts=0, text_bytes=0, model_bytes=model_bytes)
    largest = 0
    for path in texts:
        meta = pq.ParquetFile(path).metadata
        column = meta.schema.names.index("text")
        text_bytes = sum(meta.row_group(g).column(column).total_uncompressed_size for g in range(meta.num_row_groups))
        n_texts, file_bytes, vocabulary = meta.num_rows, 0, 0
        if rows is not None:
            import pyarrow.compute as pc

            file_bytes, (start, stop) = text_bytes, rows
            part = pq.read_table(path, columns=["text"]).column("text").slice(start, stop - start)
            n_texts, text_bytes = len(part), int(pc.sum(pc.binary_length(part)).as_py() or 0) + 4 * len(part)
        if settings["kind"] == "tfidf":
            vocabulary = tfidf_vocabulary_size(pq.read_table(path, columns=["text"]).column("text").to_pylist())
        estimate = memory_estimate_mb(
            settings,
            n_texts=n_texts,
            text_bytes=text_bytes,
            vocabulary=vocabulary,
            model_bytes=model_bytes,
            file_bytes=file_bytes,
        )
        largest = max(largest, estimate)
    return int(HEADROOM * largest)
