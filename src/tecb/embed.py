"""Texts -> vectors, streamed to the embeddings Parquet contract (design §4, §5, §8).

Each unique text of a dataset is encoded once per model. Texts are taken in chunks in ``text_id``
order; within a chunk sentence-transformers sorts them by length (less padding) and encodes them in
batches whose size is halved on an out-of-memory error; every chunk is written to Parquet as soon as it is ready, so host
memory stays flat however large the dataset. Models with a local path load with ``HF_HUB_OFFLINE=1``;
fp16/bf16 apply on CUDA only.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import platform
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from tecb.io import atomic_path, embedding_batch, embedding_schema

CHUNK_SIZE = 4096


# --- models -------------------------------------------------------------------------------


def is_sentence_transformers_dir(path: str | Path) -> bool:
    return (Path(path) / "modules.json").exists()


def load_sentence_transformer(
    name_or_path: str,
    revision: str | None = None,
    device: str | None = None,
    max_seq_length: int | None = None,
    dtype: str = "float32",
):
    """Load a model the way the paper does (design §5).

    A sentence-transformers model keeps its own pooling; a plain Hugging Face checkpoint gets mean
    pooling over the last hidden states (which is what ``SentenceTransformer(name)`` builds for it).
    """
    import torch
    from sentence_transformers import SentenceTransformer, models

    model_kwargs = {"dtype": getattr(torch, dtype)} if dtype != "float32" else {}
    path = Path(name_or_path)
    if path.exists() and not is_sentence_transformers_dir(path):
        word = models.Transformer(str(path), model_kwargs=model_kwargs)
        pooling = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
        model = SentenceTransformer(modules=[word, pooling], device=device)
    else:
        model = SentenceTransformer(name_or_path, revision=revision, device=device, model_kwargs=model_kwargs)
    if max_seq_length:
        model.max_seq_length = max_seq_length
    return model


def pooling_mode(model) -> str:
    for module in model:
        if type(module).__name__ == "Pooling":
            return getattr(module, "pooling_mode", None) or module.get_pooling_mode_str()
    return "model-defined"


# --- encoding -----------------------------------------------------------------------------


def chunks(seq: list, size: int) -> Iterator[tuple[int, list]]:
    for start in range(0, len(seq), size):
        yield start, seq[start : start + size]


def _is_oom(error: BaseException) -> bool:
    """True for a CUDA (or other accelerator) out-of-memory error."""
    import torch

    oom = getattr(torch.cuda, "OutOfMemoryError", None) or getattr(torch, "OutOfMemoryError", None)
    return (oom is not None and isinstance(error, oom)) or (
        isinstance(error, RuntimeError) and "out of memory" in str(error).lower()
    )


def _free_cuda_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def encode_transformer(
    model, texts: list[str], batch_size: int = 32, chunk_size: int = CHUNK_SIZE, log=None, state: dict | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_text_id, vectors)`` per chunk of ``chunk_size`` texts in ``text_id`` order.

    A chunk goes to ``model.encode`` in one call, which sorts it by length (longest first, so an
    out-of-memory error shows up in the first batch, before any work is lost) and encodes it in
    batches of ``batch_size``. On an out-of-memory error the batch size is halved (down to 1) and the
    chunk retried; the smaller size is kept for the rest. ``state["final_batch_size"]`` reports it.
    """
    state = state if state is not None else {}
    state["final_batch_size"] = batch_size = max(1, int(batch_size))
    for start, chunk in chunks(texts, chunk_size):
        while True:
            try:
                vectors = model.encode(chunk, batch_size=batch_size, convert_to_numpy=True,
                                       normalize_embeddings=False, show_progress_bar=False)
                break
            except Exception as error:  # noqa: BLE001 - re-raised unless it is an OOM we can shrink away
                if not _is_oom(error) or batch_size == 1:
                    raise
                _free_cuda_cache()
                batch_size = state["final_batch_size"] = batch_size // 2
                if log:
                    log(f"out of memory at text {start}: batch size halved to {batch_size}")
        yield start, np.asarray(vectors, dtype=np.float32)


def tfidf_vectors(texts: list[str], dim: int = 256, seed: int = 42) -> np.ndarray:
    """TF-IDF (word unigrams and bigrams, sublinear tf) reduced to ``dim`` dimensions by TruncatedSVD (LSA)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    matrix = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1).fit_transform(texts)
    n_components = max(1, min(dim, matrix.shape[0] - 1, matrix.shape[1] - 1))
    return TruncatedSVD(n_components=n_components, random_state=seed).fit_transform(matrix).astype(np.float32)


# --- writing ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "sentence-transformers", "scikit-learn", "numpy", "pyarrow", "tecb"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def write_embeddings(path: str | Path, batches: Iterable[tuple[int, np.ndarray]], n_texts: int, metadata: dict) -> dict:
    """Stream ``batches`` to ``path`` atomically; add ``dim``, ``n_texts_encoded``, ``seconds`` to the metadata.

    One pass: each batch becomes a row group as soon as it arrives; the provenance (only complete at
    the end, e.g. the seconds) goes into the footer, written at close, as the Arrow schema with its
    metadata. The file appears under its final name only once complete.
    """
    path = Path(path)
    start_time = time.perf_counter()
    encoded, dim = 0, None
    with atomic_path(path) as tmp:
        writer = None
        try:
            for start, vectors in batches:
                if start != encoded:
                    raise ValueError(f"batches must arrive in text_id order: expected {encoded}, got {start}")
                if writer is None:
                    dim = vectors.shape[1]
                    writer = pq.ParquetWriter(tmp, embedding_schema(dim, {}), store_schema=False)
                writer.write_batch(embedding_batch(writer.schema, start, vectors))
                encoded += len(vectors)
            if encoded != n_texts or writer is None:
                raise ValueError(f"{path}: encoded {encoded} texts, expected {n_texts}")
            meta = dict(metadata, dim=int(dim), n_texts=n_texts, n_texts_encoded=encoded,
                        seconds=round(time.perf_counter() - start_time, 3), versions=dict(library_versions()))
            final = embedding_schema(dim, meta)
            writer.add_key_value_metadata({
                "ARROW:schema": base64.b64encode(final.serialize().to_pybytes()).decode("ascii"),
                **{k.decode(): v.decode() for k, v in final.metadata.items()},
            })
        finally:
            if writer is not None:
                writer.close()
    return meta


def read_texts(path: str | Path) -> list[str]:
    table = pq.read_table(path)
    return table.column("text").to_pylist()


def go_offline() -> None:
    """Forbid hub access for this process (design §7): models are loaded from their prefetched path."""
    import sys

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[name] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # imported before us: its flag was read at import time
        constants.HF_HUB_OFFLINE = True


def embed_dataset(texts_path, out_path, model_spec: dict, embed_options: dict, seed: int = 42, log=print) -> dict:
    """Embed a dataset's unique texts with the model described by ``model_spec`` (a config entry).

    A model with a ``path`` (prefetched, local or tiny) is loaded with ``HF_HUB_OFFLINE=1``.
    """
    texts = read_texts(texts_path)
    kind = model_spec.get("kind", "huggingface")
    if kind == "tfidf":
        dim = int(model_spec.get("dim", 256))
        meta = {"model": "tfidf", "kind": "tfidf", "pooling": "none", "requested_dim": dim, "device": "cpu",
                "dtype": "float32", "revision": None, "max_seq_length": None}
        vectors = tfidf_vectors(texts, dim=dim, seed=seed)
        batches = chunks(list(vectors), CHUNK_SIZE)
        batches = ((s, np.stack(v)) for s, v in batches)
    else:
        if model_spec.get("path"):
            go_offline()
        device = embed_options.get("device") or None
        if device == "auto":
            device = None
        dtype = model_spec.get("dtype") or embed_options.get("dtype", "float32")
        source = model_spec.get("path") or model_spec["id"]
        model = load_sentence_transformer(source, model_spec.get("revision"), device,
                                          model_spec.get("max_seq_length"), dtype if _on_cuda(device) else "float32")
        batch_size = int(model_spec.get("batch_size", embed_options.get("batch_size", 32)))
        meta = {"model": model_spec.get("id") or str(source), "kind": kind, "source": str(source),
                "revision": _resolved_revision(source) or model_spec.get("revision"),
                "pooling": pooling_mode(model), "max_seq_length": model.max_seq_length,
                "dtype": str(next(model.parameters()).dtype).replace("torch.", ""), "device": str(model.device),
                "batch_size": batch_size, "sorted_by_length": True}
        batches = encode_transformer(model, texts, batch_size, log=log, state=meta)  # adds final_batch_size
    log(f"encoding {len(texts)} unique texts with {meta['model']}")
    meta = write_embeddings(out_path, batches, len(texts), meta)
    log(json.dumps(meta, indent=1))
    return meta


def _on_cuda(device: str | None) -> bool:
    import torch

    return torch.cuda.is_available() and (device is None or str(device).startswith("cuda"))


def _resolved_revision(source) -> str | None:
    """The commit recorded by the prefetch rule next to a downloaded model, if any."""
    marker = Path(source) / ".tecb_revision"
    return marker.read_text().strip() if marker.exists() else None
