"""Sharded embedding of one dataset (scatter/gather), byte-identical to embedding it in one job.

:func:`embed_dataset` encodes a dataset's texts in chunks of :data:`tecb.embed.encode.CHUNK_SIZE` texts in
``text_id`` order (each chunk sorted by length and batched on its own) and writes one row group per chunk. A
shard is a contiguous range of whole chunks (:func:`shard_ranges`), so it encodes exactly the batches the
single job encodes; :func:`embed_shard` embeds one range, :func:`merge_shards` writes the shards' vectors as the
single job's chunks with the single job's metadata (the long-text statistics added up over the shards, the
checksum over all vectors). Neural models only: TF-IDF fits its vocabulary and SVD on all texts at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tecb.embed import encode
from tecb.io import read_embeddings, scratch_dir

# written by write_embeddings itself (appended after the given metadata)
_WRITTEN = ("dim", "n_texts", "n_texts_encoded", "vectors_sha256", "versions")


def shard_ranges(n_texts: int, shard_size: int, chunk_size: int | None = None) -> list[tuple[int, int]]:
    """``[start, stop)`` text-id ranges of about ``shard_size`` texts, each a whole number of chunks
    (``shard_size`` is rounded down to a multiple of the chunk size, at least one chunk)."""
    chunk_size = chunk_size or encode.CHUNK_SIZE
    size = max(chunk_size, shard_size // chunk_size * chunk_size)
    return [(start, min(start + size, n_texts)) for start in range(0, n_texts, size)]


def embed_shard(
    texts_path, out_path, model_spec: dict, embed_options: dict, *, start: int, stop: int, seed: int, log=print,
    dataset: str | None = None, model_digest: str | None = None, timings_path=None,
) -> dict:  # fmt: skip
    """Embed texts ``start`` to ``stop`` (a range of :func:`shard_ranges`) into an embeddings file of their own."""
    if model_spec.get("kind") == "tfidf":
        raise ValueError("TF-IDF cannot be sharded: it fits on all texts of a dataset (embed.shard_size)")
    if start % encode.CHUNK_SIZE:
        raise ValueError(f"shard start {start} is not a multiple of the chunk size {encode.CHUNK_SIZE}")
    texts = pq.read_table(texts_path, columns=["text"]).slice(start, stop - start)
    with scratch_dir(out_path) as tmp:
        part = os.path.join(tmp, "texts.parquet")
        pq.write_table(pa.table({"text": texts.column("text")}), part)
        return encode.embed_dataset(
            part, out_path, model_spec, embed_options, seed=seed, log=log, dataset=dataset,
            model_digest=model_digest, timings_path=timings_path,
        )  # fmt: skip


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
    """Write the shards (in text-id order) as one embeddings file, as the single job would have written it."""
    metas = [read_embeddings(p)[1] for p in shard_paths]
    n_texts = sum(m["n_texts"] for m in metas)

    def batches():
        offset = 0
        for path in shard_paths:
            vectors, _ = read_embeddings(path)
            for start in range(0, len(vectors), encode.CHUNK_SIZE):
                yield offset + start, vectors[start : start + encode.CHUNK_SIZE]
            offset += len(vectors)

    return encode.write_embeddings(Path(out_path), batches(), n_texts, merged_metadata(metas))
