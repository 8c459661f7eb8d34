"""Sharded embedding of one dataset (scatter/gather), byte-identical to embedding it in one job.

:func:`embed_dataset` encodes a transformer model's texts in chunks of ``embed.chunk_size`` texts
(:data:`tecb.embed.spec.CHUNK_SIZE` by default) in ``text_id`` order (each chunk sorted by length and batched on
its own) and writes one row group per chunk. A shard is a contiguous range of whole chunks (:func:`shard_ranges`,
planned by :func:`plan_shards`), so it encodes exactly the batches the single job encodes; :func:`embed_shard`
embeds one range, :func:`merge_shards` writes the shards' vectors as the single job's chunks with the single
job's metadata (the long-text statistics added up over the shards, the checksum over all vectors). Transformer
kinds only (:data:`SHARDABLE_KINDS`): TF-IDF fits its vocabulary and SVD on all texts at once, and the other
kinds write row groups of their own size. The workflow's rules: workflow/rules/embed_shard.smk.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tecb.embed import encode
from tecb.embed.spec import CHUNK_SIZE, TRANSFORMER_KINDS
from tecb.io import read_embeddings, scratch_dir, write_json

#: Model kinds whose embedding can be sharded: each text encoded on its own, one row group per chunk.
SHARDABLE_KINDS = (*TRANSFORMER_KINDS, "mteb")  # kind mteb: mteb's wrapper encodes chunk by chunk as well

# written by write_embeddings itself (appended after the given metadata)
_WRITTEN = ("dim", "n_texts", "n_texts_encoded", "vectors_sha256", "versions")


def shard_ranges(n_texts: int, shard_size: int, chunk_size: int | None = None) -> list[tuple[int, int]]:
    """``[start, stop)`` text-id ranges of about ``shard_size`` texts, each a whole number of chunks
    (``shard_size`` is rounded down to a multiple of the chunk size, at least one chunk)."""
    chunk_size = chunk_size or CHUNK_SIZE
    size = max(chunk_size, shard_size // chunk_size * chunk_size)
    return [(start, min(start + size, n_texts)) for start in range(0, n_texts, size)]


def plan_shards(texts_path, *, shard_size: int, chunk_size: int | None) -> dict:
    """The shards of a dataset's texts file: its number of texts and the :func:`shard_ranges`."""
    n_texts = pq.ParquetFile(texts_path).metadata.num_rows
    chunk_size = chunk_size or CHUNK_SIZE
    ranges = shard_ranges(n_texts, shard_size, chunk_size)
    return {"n_texts": n_texts, "shard_size": shard_size, "chunk_size": chunk_size, "shards": ranges}


def embed_shard(job: encode.EmbedJob, *, start: int, stop: int, log=print) -> dict:
    """Embed texts ``start`` to ``stop`` (a range of :func:`shard_ranges`) of ``job``'s texts into its embeddings
    file, a file of their own (:func:`tecb.embed.encode.embed_dataset`)."""
    settings = job.settings
    if settings.get("kind") == "tfidf":
        raise ValueError("TF-IDF cannot be sharded: it fits on all texts of a dataset (embed.shard_size)")
    if settings.get("kind") not in SHARDABLE_KINDS:
        raise ValueError(f"kind {settings.get('kind')!r} is not sharded: only {', '.join(SHARDABLE_KINDS)} are")
    chunk_size = settings.get("chunk_size", CHUNK_SIZE)
    if start % chunk_size:
        raise ValueError(f"shard start {start} is not a multiple of the chunk size {chunk_size}")
    texts = pq.read_table(job.texts, columns=["text"]).slice(start, stop - start)
    with scratch_dir(job.embeddings) as tmp:
        part = os.path.join(tmp, "texts.parquet")
        pq.write_table(pa.table({"text": texts.column("text")}), part)
        return encode.embed_dataset(replace(job, texts=part), log=log)


def merged_metadata(metas: list[dict]) -> dict:
    """The metadata the single job writes, from the shards' (in order): their own counts added up."""
    meta = {k: v for k, v in metas[0].items() if k not in _WRITTEN}
    n = sum(m["n_texts"] for m in metas)
    if metas[0].get("tokens_total") is not None:
        truncated = sum(m["n_truncated"] for m in metas)
        total = sum(m["tokens_total"] for m in metas)
        kept = sum(m["tokens_kept"] for m in metas)
        meta.update(
            truncated_fraction=round(truncated / n, 6),
            token_coverage=round(kept / total, 6) if total else 1.0,
            n_truncated=truncated,
            tokens_total=total,
            tokens_kept=kept,
            tokens_max=max(m["tokens_max"] for m in metas),
            tokens_mean=round(total / n, 2),
        )
    if "final_batch_size" in meta:
        meta["final_batch_size"] = min(m["final_batch_size"] for m in metas)
    return meta


def merge_shards(shard_paths: list, out_path) -> dict:
    """Write the shards (in text-id order) as one embeddings file, as the single job would have written it (their
    ``cache_key``, the whole dataset's, included)."""
    metas = [read_embeddings(p)[1] for p in shard_paths]
    n_texts = sum(m["n_texts"] for m in metas)
    chunk_size = metas[0].get("chunk_size", CHUNK_SIZE)  # recorded where it is not the default

    def batches():
        offset = 0
        for path in shard_paths:
            vectors, _ = read_embeddings(path)
            for start in range(0, len(vectors), chunk_size):
                yield offset + start, vectors[start : start + chunk_size]
            offset += len(vectors)

    return encode.write_embeddings(Path(out_path), batches(), n_texts, merged_metadata(metas))


def merge_timings(timing_paths: list, out_path) -> dict:
    """The single job's timings file from the shards' (seconds added up: the GPU time of all shards)."""
    shards = [json.loads(Path(p).read_text(encoding="utf-8")) for p in timing_paths]
    seconds = round(sum(t["seconds"] for t in shards), 3)
    n_texts = sum(t["n_texts"] for t in shards)
    record = {
        "seconds": seconds,
        "n_texts": n_texts,
        "texts_per_second": round(n_texts / max(seconds, 1e-9), 1),
        "shards": len(shards),
        "shard_seconds": [t["seconds"] for t in shards],
    }
    write_json(record, out_path)
    return record


def merge_job(shard_paths: list, timing_paths: list, *, embeddings, timings, log=print) -> dict:
    """A (model, dataset)'s shards merged into ``embeddings`` (:func:`merge_shards`) and their timings added up into
    ``timings`` (:func:`merge_timings`): the embed_merge job's run file, or the store's entry it is served from
    (the same bytes; :func:`tecb.embed.job.run_merge_job`); returns the merged file's metadata."""
    meta = merge_shards(list(shard_paths), embeddings)  # the shards name the key
    record = merge_timings(list(timing_paths), timings)
    log(f"{len(shard_paths)} shard(s), {meta['n_texts']} texts, vectors_sha256 {meta['vectors_sha256']}")
    log(f"shards' seconds: {record['shard_seconds']}")
    return meta
