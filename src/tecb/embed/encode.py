"""Texts -> vectors, streamed to the embeddings Parquet contract (design §4, §5, §8).

Each unique text of a dataset is encoded once per model. Texts are taken in chunks in ``text_id``
order; within a chunk sentence-transformers sorts them by length (less padding) and encodes them in
batches whose size is halved on an out-of-memory error; every chunk is written to Parquet as soon as
it is ready, so host memory stays flat however large the dataset, and a progress line (texts done /
total, rate, ETA) is logged. Nothing here changes process-wide state: the workflow's embed script sets
``HF_HUB_OFFLINE=1`` before any Hugging Face import (compute jobs never reach the hub); fp16/bf16
apply on CUDA only (:func:`dtype_parity` compares them with float32 on any device).

A model spec (:mod:`tecb.embed.spec`) adds what current models need to score correctly: a literal
``prompt`` or a ``prompt_name`` of the model, ``trust_remote_code``, a ``pooling`` override,
``normalize``, ``max_seq_length``, ``model_kwargs``/``tokenizer_kwargs``/``encode_kwargs`` and a
``revision``; all are recorded in the file's metadata with the share of texts cut at
``max_seq_length`` (``truncated_fraction``) and the share of tokens kept (``token_coverage``).
"""

from __future__ import annotations

import base64
import functools
import json
import platform
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from tecb.embed.spec import CHUNK_SIZE, encoder_device, encoder_settings, run_options
from tecb.io import (
    atomic_path,
    embedding_batch,
    embedding_schema,
    nonfinite_rows,
    update_vectors_hash,
    vectors_hasher,
    write_json,
)

# --- models -------------------------------------------------------------------------------


def is_sentence_transformers_dir(path: str | Path) -> bool:
    return (Path(path) / "modules.json").exists()


@dataclass(frozen=True)
class Loading:
    """Which model is built from a name or folder, as a model spec overrides it (:mod:`tecb.embed.spec`): the hub
    ``revision``; the weights' ``dtype`` (other than float32: half precision); ``trust_remote_code``; ``pooling``
    (replaces the pooling: ``cls``, ``mean``, ``lasttoken``, ...; None: the model's own, mean for a plain Hugging
    Face checkpoint); ``normalize`` (False removes a model's own ``Normalize`` module, True is applied at encode
    time, see :func:`encode_options`); ``model_kwargs``/``tokenizer_kwargs`` (to ``from_pretrained`` of the model
    and the tokenizer)."""

    revision: str | None = None
    dtype: str = "float32"
    trust_remote_code: bool = False
    pooling: str | None = None
    normalize: bool | None = None
    model_kwargs: dict | None = None
    tokenizer_kwargs: dict | None = None


def load_sentence_transformer(
    name_or_path: str,
    *,
    loading: Loading | None = None,
    device: str | None = None,
    max_seq_length: int | None = None,
):
    """Load a model the way the paper does (design §5), with a model spec's overrides (``loading``, None: none).

    A sentence-transformers model keeps its own pooling; a plain Hugging Face checkpoint gets mean
    pooling over the last hidden states (which is what ``SentenceTransformer(name)`` builds for it).
    The model runs on ``device`` and cuts texts at ``max_seq_length`` tokens (None: the model's own).
    """
    import torch
    from sentence_transformers import SentenceTransformer

    loading = loading or Loading()
    revision, trust_remote_code, pooling = loading.revision, loading.trust_remote_code, loading.pooling
    model_kwargs = dict(loading.model_kwargs or {})
    tokenizer_kwargs = dict(loading.tokenizer_kwargs or {})
    if loading.dtype != "float32":
        model_kwargs["dtype"] = getattr(torch, loading.dtype)
    path = Path(name_or_path)
    if path.exists() and not is_sentence_transformers_dir(path):
        model = _plain_checkpoint(path, loading, model_kwargs, tokenizer_kwargs, device=device)
    else:
        model = SentenceTransformer(
            name_or_path,
            revision=revision,
            device=device,
            trust_remote_code=trust_remote_code,
            model_kwargs=model_kwargs or None,
            processor_kwargs=tokenizer_kwargs or None,
        )
        if pooling:
            set_pooling(model, pooling)
    if loading.normalize is False:
        for name in [name for name, module in model._modules.items() if type(module).__name__ == "Normalize"]:
            del model._modules[name]
    if max_seq_length:
        model.max_seq_length = max_seq_length
    return model


def _plain_checkpoint(path: Path, loading: Loading, model_kwargs: dict, tokenizer_kwargs: dict, *, device):
    """A plain Hugging Face checkpoint folder as a SentenceTransformer: its transformer and a pooling module (the
    spec's ``pooling``, else mean pooling), as ``SentenceTransformer(path)`` builds it."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules

    if loading.trust_remote_code:  # SentenceTransformer(trust_remote_code=...) passes it on by itself
        model_kwargs.setdefault("trust_remote_code", True)
        tokenizer_kwargs.setdefault("trust_remote_code", True)
    word = modules.Transformer(
        str(path),
        model_kwargs=model_kwargs,
        processor_kwargs=tokenizer_kwargs,
        config_kwargs={"trust_remote_code": True} if loading.trust_remote_code else None,
    )
    mode = loading.pooling or "mean"
    return SentenceTransformer(modules=[word, modules.Pooling(word.get_embedding_dimension(), mode)], device=device)


def set_pooling(model, mode: str) -> None:
    """Replace the model's pooling module by one with ``mode`` (its ``include_prompt`` kept)."""
    from sentence_transformers.sentence_transformer import modules

    for name, module in model._modules.items():
        if type(module).__name__ == "Pooling":
            dim = module.get_embedding_dimension()
            model._modules[name] = modules.Pooling(dim, mode, include_prompt=getattr(module, "include_prompt", True))
            return
    raise ValueError(
        f"the model has no Pooling module to override with pooling={mode!r}: {[type(m).__name__ for m in model]}"
    )


def pooling_mode(model) -> str:
    for module in model:
        if type(module).__name__ == "Pooling":
            mode = getattr(module, "pooling_mode", None) or module.get_pooling_mode_str()
            return "+".join(mode) if isinstance(mode, (list, tuple)) else str(mode)
    return "model-defined"


def is_normalized(model) -> bool:
    """Whether the model has a ``Normalize`` module (L2-normalised output)."""
    return any(type(module).__name__ == "Normalize" for module in model)


def load_encoder(settings: dict, device: str | None = None, dtype: str | None = None):
    """Load the model described by resolved settings (:func:`tecb.embed.spec.encoder_settings`)."""
    source = settings.get("path") or settings["id"]
    loading = Loading(
        revision=settings.get("revision"),
        dtype=dtype or settings.get("dtype") or "float32",
        trust_remote_code=settings.get("trust_remote_code", False),
        pooling=settings.get("pooling"),
        normalize=settings.get("normalize"),
        model_kwargs=settings.get("model_kwargs"),
        tokenizer_kwargs=settings.get("tokenizer_kwargs"),
    )
    return load_sentence_transformer(
        str(source), loading=loading, device=device, max_seq_length=settings.get("max_seq_length")
    )


def effective_prompt(model, prompt: str | None = None, prompt_name: str | None = None) -> str | None:
    """The text sentence-transformers will prepend: the literal ``prompt``, the model's prompt called
    ``prompt_name``, else the model's default prompt (``default_prompt_name``), else none."""
    if prompt is not None:
        return prompt
    prompts = getattr(model, "prompts", None) or {}
    if prompt_name is not None:
        if prompt_name not in prompts:
            raise ValueError(f"prompt_name {prompt_name!r} is not one of the model's prompts: {sorted(prompts)}")
        return prompts[prompt_name]
    default = getattr(model, "default_prompt_name", None)
    return prompts.get(default) if default else None


def encode_options(settings: dict) -> dict:
    """Keyword arguments of ``model.encode`` from resolved settings: prompt, normalisation, extras."""
    options = dict(settings.get("encode_kwargs") or {})
    if settings.get("prompt") is not None:
        options["prompt"] = settings["prompt"]
    if settings.get("prompt_name") is not None:
        options["prompt_name"] = settings["prompt_name"]
    if settings.get("normalize"):
        options["normalize_embeddings"] = True
    return options


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


#: The least time between two progress lines of batches inside one chunk (:meth:`Progress.advance`).
BATCH_LINE_SECONDS = 1.0


class Progress:
    """Progress lines for a long loop: ``done/total unit (pct), rate unit/s, elapsed, ETA h:mm:ss``.

    :meth:`update` logs a line at every call. Between calls a background heartbeat logs, once ``heartbeat``
    seconds have passed without a line, the last count with its rate and ETA and how long the current step
    has been running, so a long step (a 4,096-text chunk of a large model) never looks hung. The heartbeat
    stops at ``done == total``, at :meth:`close`, or when the object is garbage-collected (``heartbeat=0``:
    none). It only reads and logs; it never touches the work.
    """

    def __init__(self, total: int, log, unit: str = "texts", what: str = "", heartbeat: float = 5.0):
        self.total, self.log, self.unit, self.what = total, log, unit, what
        self.start = self.last_update = self.last_line = time.perf_counter()
        self.done, self.closed, self.heartbeat = 0, False, heartbeat
        self._lock = threading.Lock()
        if log and heartbeat > 0 and total > 0:
            threading.Thread(target=_heartbeat, args=(weakref.ref(self), heartbeat), daemon=True).start()

    def _line(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        return (
            f"{self.what}{self.done}/{self.total} {self.unit} ({100 * self.done / max(self.total, 1):.0f}%), "
            f"{rate:.1f} {self.unit}/s, elapsed {_hms(elapsed)}, ETA {_hms(eta)}"
        )

    def update(self, done: int) -> str:
        with self._lock:
            now = time.perf_counter()
            self.done, self.last_update, self.last_line = done, now, now
            if done >= self.total:
                self.closed = True
            line = self._line(now)
            if self.log:
                self.log(line)
        return line

    def advance(self, n: int, min_interval: float | None = None) -> str | None:
        """``n`` more done inside the current step (a batch of a chunk): a line when ``min_interval`` seconds
        (default :data:`BATCH_LINE_SECONDS`) passed since the last one, so a chunk of many batches shows its
        progress and a fast model floods no log."""
        min_interval = BATCH_LINE_SECONDS if min_interval is None else min_interval
        with self._lock:
            now = time.perf_counter()
            self.done, self.last_update = min(self.done + n, self.total), now
            if self.closed or now - self.last_line < min_interval:
                return None
            self.last_line = now
            line = self._line(now)
            if self.log:
                self.log(line)
        return line

    def close(self) -> None:
        """Stop the heartbeat (the loop ended early or moved on to other work)."""
        self.closed = True

    def beat(self) -> str | None:
        """The heartbeat's line, logged if ``heartbeat`` seconds passed since the last line (else ``None``)."""
        with self._lock:
            now = time.perf_counter()
            if self.closed or now - self.last_line < self.heartbeat:
                return None
            self.last_line = now
            line = f"{self._line(now)}; still working (next step running for {_hms(now - self.last_update)})"
            if self.log:
                self.log(line)
        return line


def _heartbeat(ref, interval: float) -> None:
    """Call ``ref().beat()`` about every ``interval`` seconds while the Progress lives and is open."""
    while True:
        time.sleep(interval / 5)
        progress = ref()
        if progress is None or progress.closed:
            return
        progress.beat()
        del progress


def _hms(seconds: float) -> str:
    if seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def encode_transformer(
    model,
    texts: list[str],
    batch_size: int = 32,
    chunk_size: int = CHUNK_SIZE,
    log=None,
    state: dict | None = None,
    encode_kwargs: dict | None = None,
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_text_id, vectors)`` per chunk of ``chunk_size`` texts in ``text_id`` order.

    A chunk goes to ``model.encode`` in one call, which sorts it by length (longest first, so an
    out-of-memory error shows up in the first batch, before any work is lost) and encodes it in
    batches of ``batch_size``. On an out-of-memory error the batch size is halved (down to 1) and the
    chunk retried; the smaller size is kept for the rest. ``state["final_batch_size"]`` reports it.
    ``encode_kwargs`` (see :func:`encode_options`: prompt, normalisation, model-specific arguments)
    go to every ``model.encode`` call. After each chunk ``log`` gets a progress line (texts done /
    total, rate, ETA).
    """
    options = {"normalize_embeddings": False, **(encode_kwargs or {})}

    def encode(chunk, size):
        return model.encode(chunk, batch_size=size, convert_to_numpy=True, show_progress_bar=False, **options)

    state = state if state is not None else {}
    progress = Progress(len(texts), log, what="encoded ")
    counting = count_batches(model, progress) if log else None
    try:
        for start, vectors in encode_halving(
            encode, texts, max(1, int(batch_size)), chunk_size, log, state, progress=progress
        ):
            yield start, np.asarray(vectors, dtype=np.float32)
    finally:
        if counting is not None:
            counting.remove()


def count_batches(model, progress: Progress):
    """Count each batch the model's forward pass sees into ``progress`` (a torch forward hook, removed by the caller
    with ``.remove()``; None for a model without hooks). It only reads the batch's size: the vectors are the same."""
    if not hasattr(model, "register_forward_hook"):
        return None

    def seen(module, args, output):
        features = args[0] if args else None
        sizes = [v.shape[0] for v in features.values() if hasattr(v, "shape")] if isinstance(features, dict) else []
        if sizes:
            progress.advance(int(sizes[0]))

    return model.register_forward_hook(seen)


def encode_halving(
    encode, texts: list[str], batch_size: int, chunk_size: int, log, state: dict, progress: Progress | None = None
):
    """Yield ``(first_text_id, encode(chunk, batch_size))`` per chunk of ``chunk_size`` texts. On an out-of-memory
    error the batch size is halved (down to 1) and the chunk retried; the smaller size is kept for the rest and
    reported in ``state["final_batch_size"]``. After each chunk ``log`` (if any) gets a progress line (``progress``:
    the caller's, which may also count batches inside a chunk)."""
    state["final_batch_size"] = batch_size
    progress = progress or Progress(len(texts), log, what="encoded ")
    for start, chunk in chunks(texts, chunk_size):
        while True:
            try:
                vectors = encode(chunk, batch_size)
                break
            except Exception as error:  # noqa: BLE001 - re-raised unless it is an OOM we can shrink away
                if not _is_oom(error) or batch_size == 1:
                    raise
                _free_cuda_cache()
                batch_size = state["final_batch_size"] = batch_size // 2
                if log:
                    log(f"out of memory at text {start}: batch size halved to {batch_size}")
        progress.update(start + len(chunk))
        yield start, vectors


#: How :func:`token_counts` calls a tokenizer: every token counted (special tokens too), nothing cut or padded.
UNTRUNCATED = {
    "add_special_tokens": True,
    "truncation": False,
    "padding": False,
    "verbose": False,
    "return_attention_mask": False,
    "return_token_type_ids": False,
}


def token_counts(model, texts: list[str], prompt: str | None = None, chunk_size: int = CHUNK_SIZE) -> np.ndarray | None:
    """Tokens per text as the model's tokenizer counts them untruncated (special tokens and prompt
    included, as sentence-transformers feeds them); ``None`` when the model has no text tokenizer."""
    tokenizer = getattr(model[0], "tokenizer", None) if len(model) else None
    if tokenizer is None or not callable(tokenizer):
        return None
    counts: list[int] = []
    for _, part in chunks(texts, chunk_size):
        if prompt:
            part = [prompt + text for text in part]
        encoded = tokenizer(part, **UNTRUNCATED)
        counts += [len(ids) for ids in encoded["input_ids"]]
    return np.asarray(counts, dtype=np.int64)


def truncation_stats(n_tokens: np.ndarray | None, max_seq_length: int | None) -> dict:
    """Long texts (issue 15.5): ``truncated_fraction`` = share of texts longer than ``max_seq_length``
    tokens (cut by the encoder); ``token_coverage`` = tokens kept / tokens in all texts."""
    if n_tokens is None or not max_seq_length or len(n_tokens) == 0:
        return {"truncated_fraction": None, "token_coverage": None}
    kept = np.minimum(n_tokens, int(max_seq_length))
    total = int(n_tokens.sum())
    return {
        "truncated_fraction": round(float(np.mean(n_tokens > max_seq_length)), 6),
        "token_coverage": round(float(kept.sum() / total), 6) if total else 1.0,
        "n_truncated": int(np.sum(n_tokens > max_seq_length)),
        "tokens_total": total,
        "tokens_kept": int(kept.sum()),
        "tokens_max": int(n_tokens.max()),
        "tokens_mean": round(float(n_tokens.mean()), 2),
    }


def tfidf_vectors(texts: list[str], *, dim: int, seed: int) -> np.ndarray:
    """TF-IDF (word unigrams and bigrams, sublinear tf) reduced to ``dim`` dimensions by TruncatedSVD (LSA)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    matrix = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1).fit_transform(texts)
    n_components = max(1, min(dim, matrix.shape[0] - 1, matrix.shape[1] - 1))
    return TruncatedSVD(n_components=n_components, random_state=seed).fit_transform(matrix).astype(np.float32)


# --- kind: python, precomputed, static (issue 22) ------------------------------------------


def build_python_encoder(settings: dict):
    """The encoder of a ``kind: python`` model: its ``object`` called with its ``kwargs``; returns
    ``(encode, instance)`` where ``encode(list_of_texts)`` is the instance's ``.encode`` or the instance itself."""
    from tecb.embed.spec import import_object

    instance = import_object(settings["object"])(**(settings.get("kwargs") or {}))
    encode = getattr(instance, "encode", None)
    if encode is None:
        if not callable(instance):
            raise ValueError(
                f"object {settings['object']!r}: what it returned has no .encode and is not callable "
                f"({type(instance).__name__})"
            )
        encode = instance
    return encode, instance


def as_matrix(vectors, n_texts: int, where: str) -> np.ndarray:
    """``vectors`` as a float32 matrix of ``n_texts`` rows, or a ``ValueError`` saying what came back."""
    if hasattr(vectors, "detach"):  # a torch tensor
        vectors = vectors.detach().cpu().float().numpy()
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != n_texts:
        raise ValueError(f"{where}: returned shape {matrix.shape} for {n_texts} texts; expected one row per text")
    bad = nonfinite_rows(matrix)
    if len(bad):
        raise ValueError(f"{where}: returned NaN/inf for {len(bad)} text(s), first at position {int(bad[0])}")
    return matrix


def encode_python(encode, texts: list[str], batch_size: int, where: str, log=None) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_text_id, vectors)`` per batch of ``batch_size`` texts, each checked (one finite row per text)."""
    progress = Progress(len(texts), log, what="encoded ")
    for start, batch in chunks(texts, max(1, int(batch_size))):
        yield start, as_matrix(encode(list(batch)), len(batch), where)
        progress.update(start + len(batch))


def read_precomputed(path, texts_path=None) -> tuple[list[str], np.ndarray]:
    """``(texts, vectors)`` of a precomputed-vectors file.

    Parquet: a ``text`` column (string) and a ``vector`` column (list of floats, the same length in every row).
    ``.npy``: a 2-D float array, row *i* the vector of line *i* of ``texts_path`` (``.txt``: one text per line;
    ``.jsonl``: one JSON string per line; ``.parquet``: its ``text`` column).
    """
    path = Path(path)
    if path.suffix == ".npy":
        if texts_path is None:
            raise ValueError(f"{path}: a .npy file of vectors needs `texts:`, the file of the texts its rows embed")
        vectors = np.load(path, allow_pickle=False)
        texts = _read_text_list(Path(texts_path))
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(f"{path}: shape {vectors.shape} does not match the {len(texts)} texts of {texts_path}")
        return texts, vectors.astype(np.float32)
    table = pq.read_table(path)
    missing = [c for c in ("text", "vector") if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: no column {missing[0]!r} (a precomputed file has columns text, vector)")
    texts = table.column("text").to_pylist()
    rows = table.column("vector").to_pylist()
    lengths = {len(r) if r is not None else -1 for r in rows}
    if len(lengths) > 1 or -1 in lengths:
        raise ValueError(f"{path}: column vector must hold vectors of one length, found lengths {sorted(lengths)}")
    return texts, np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)


def _read_text_list(path: Path) -> list[str]:
    if path.suffix == ".parquet":
        return pq.read_table(path, columns=["text"]).column("text").to_pylist()
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return [json.loads(line) for line in lines] if path.suffix == ".jsonl" else lines


def precomputed_lookup(texts: list[str], file_texts: list[str], vectors: np.ndarray, where: str) -> np.ndarray:
    """The vectors of ``texts`` looked up by text; every text must be there (else the count and the first missing)."""
    index: dict[str, int] = {}
    for i, text in enumerate(file_texts):
        if text in index and not np.array_equal(vectors[index[text]], vectors[i]):
            raise ValueError(
                f"{where}: text {text[:80]!r} appears twice with different vectors (rows {index[text]}, {i})"
            )
        index.setdefault(text, i)
    missing = [t for t in texts if t not in index]
    if missing:
        raise ValueError(
            f"{where}: {len(missing)} of {len(texts)} texts have no vector; first missing text: {missing[0][:200]!r}"
        )
    return vectors[[index[t] for t in texts]]


def load_static(path):
    """A static embedding model from a local folder: model2vec's ``StaticModel`` (config.json model_type
    model2vec), else a sentence-transformers folder (e.g. a ``StaticEmbedding`` module); returns ``(encode, info)``."""
    path = Path(path)
    config_file = path / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    if config.get("model_type") == "model2vec":
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(str(path))
        return (lambda texts: model.encode(texts, show_progress_bar=False)), {
            "backend": "model2vec",
            "normalized": bool(config.get("normalize")),
        }
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), device="cpu")
    return (lambda texts: model.encode(texts, convert_to_numpy=True, show_progress_bar=False)), {
        "backend": "sentence-transformers",
        "normalized": is_normalized(model),
    }


def distill_static(source: str, out_dir, pca_dims: int | None, log=print) -> dict:
    """Distil a local transformer (a Hugging Face or sentence-transformers folder) into a model2vec static
    model, without data (model2vec ``distill``: every vocabulary token through the model, PCA to
    ``pca_dims``, SIF weighting), written atomically to ``out_dir``."""
    import shutil

    from model2vec.distill import distill

    source_path = Path(source)
    # a sentence-transformers folder keeps the transformer in a sub-folder named by its modules.json
    modules = source_path / "modules.json"
    if modules.exists():
        for module in json.loads(modules.read_text()):
            if module["type"].endswith("Transformer") and (source_path / module["path"] / "config.json").exists():
                source_path = source_path / module["path"]
                break
    from transformers import AutoConfig

    hidden = AutoConfig.from_pretrained(str(source_path)).hidden_size
    dims = min(int(pca_dims), hidden) if pca_dims else None
    log(f"distilling {source_path} (hidden size {hidden}) into a static model, PCA to {dims}")
    model = distill(model_name=str(source_path), pca_dims=dims, device="cpu")
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(f".{out_dir.name}.distill.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    return {"source": str(source), "pca_dims": dims, "vocabulary": int(model.embedding.shape[0])}


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
    """Stream ``batches`` to ``path`` atomically; add ``dim``, ``n_texts_encoded``, ``vectors_sha256`` to the metadata.

    One pass: each batch becomes a row group as soon as it arrives; the provenance (only complete at
    the end, e.g. the checksum) goes into the footer, written at close, as the Arrow schema with its
    metadata. The file appears under its final name only once complete. Nothing in it records time: the
    same vectors give the same bytes (durations: :func:`embed_dataset`'s job's ``timings``).
    """
    path = Path(path)
    encoded, dim = 0, None
    hasher = vectors_hasher()  # vectors_sha256: verified by tecb.io.read_embeddings
    with atomic_path(path) as tmp:
        writer = None
        try:
            for start, vectors in batches:
                if start != encoded:
                    raise ValueError(f"batches must arrive in text_id order: expected {encoded}, got {start}")
                if writer is None:
                    dim = vectors.shape[1]
                    writer = pq.ParquetWriter(tmp, embedding_schema(dim, {}), store_schema=False)
                bad = nonfinite_rows(vectors)
                if len(bad):
                    raise ValueError(
                        f"{path}: the model gave NaN/inf vectors for {len(bad)} text(s), "
                        f"first text_id {start + int(bad[0])} (fp16 overflow? try dtype float32)"
                    )
                writer.write_batch(embedding_batch(writer.schema, start, vectors))
                update_vectors_hash(hasher, vectors)
                encoded += len(vectors)
            if encoded != n_texts or writer is None:
                raise ValueError(f"{path}: encoded {encoded} texts, expected {n_texts}")
            meta = dict(
                metadata,
                dim=int(dim),
                n_texts=n_texts,
                n_texts_encoded=encoded,
                vectors_sha256=hasher.hexdigest(),
                versions=dict(library_versions()),
            )
            final = embedding_schema(dim, meta)
            writer.add_key_value_metadata(
                {
                    "ARROW:schema": base64.b64encode(final.serialize().to_pybytes()).decode("ascii"),
                    **{k.decode(): v.decode() for k, v in final.metadata.items()},
                }
            )
        finally:
            if writer is not None:
                writer.close()
    return meta


def read_texts(path: str | Path) -> list[str]:
    table = pq.read_table(path)
    return table.column("text").to_pylist()


@dataclass(frozen=True)
class EmbedJob:
    """One embeddings file and what it is made of: the dataset's ``texts`` (its texts.parquet) embedded into
    ``embeddings`` by the model of ``settings`` (resolved: :func:`tecb.embed.spec.encoder_settings`, for
    ``dataset``), run as ``embed_options`` say (resolved: :func:`tecb.embed.spec.run_options`, the config's ``embed``
    with its defaults filled and the model's own ``batch_size`` first). Both are taken as given: a workflow job
    gets its settings from its rule's params and its options from :class:`tecb.embed.job.EmbedRun`; a caller
    holding a ``models.<key>`` entry builds its job with :meth:`from_spec`. ``seed``: TF-IDF's (its SVD), required
    there; None for models that use none. ``model_digest``: the local model's content hash, recorded when given.
    ``timings``: where how long it took is written (None: nowhere). ``cache_key``: the key of what decides the
    vectors (the dataset's whole texts, the model's settings and files: :func:`tecb.embed.cache.embedding_key`),
    recorded in the file, whose metadata then names no model folder (:func:`tecb.embed.cache.keyed_metadata`);
    every job of the workflow gives it (None: a file outside the workflow)."""

    texts: str | Path
    embeddings: str | Path
    settings: dict
    embed_options: dict
    seed: int | None
    dataset: str | None = None
    model_digest: str | None = None
    timings: str | Path | None = None
    cache_key: str | None = None

    @classmethod
    def from_spec(
        cls, texts, embeddings, model_spec: dict, embed_options: dict, seed: int | None, **fields
    ) -> EmbedJob:
        """The job of a ``models.<key>`` entry ``model_spec`` and the ``embed`` section ``embed_options``, both
        resolved here once (for ``fields``' ``dataset``); ``fields``: the other fields of :class:`EmbedJob`."""
        settings = encoder_settings(model_spec, embed_options, fields.get("dataset"))
        return cls(texts, embeddings, settings, run_options(model_spec, embed_options), seed, **fields)


def embed_dataset(job: EmbedJob, *, log=print) -> dict:
    """Embed a dataset's unique texts as ``job`` (:class:`EmbedJob`) says; returns the file's metadata.

    A model with a ``path`` (prefetched, local or tiny) is loaded from that directory. The metadata records the
    settings, what was actually used (pooling, prompt text, dtype, device), the long-text statistics
    (``truncated_fraction``, ``token_coverage``) and the ``model_digest`` when given. How long it took goes to
    the job's ``timings`` (JSON: ``seconds`` for loading and encoding, ``n_texts``, ``texts_per_second``), never
    into the embeddings file.
    """
    started = time.perf_counter()
    settings, embed_options, seed, model_digest = job.settings, job.embed_options, job.seed, job.model_digest
    texts = read_texts(job.texts)
    kind = settings["kind"]
    if kind == "tfidf":
        meta, batches = _tfidf_batches(settings, texts, seed, log)
    elif kind in ("python", "precomputed", "static"):
        meta, batches = _non_transformer_batches(settings, texts, embed_options, model_digest, log)
    elif kind == "mteb":
        meta, batches = _mteb_batches(settings, texts, embed_options, model_digest, log)
    else:
        meta, batches = _transformer_batches(settings, texts, embed_options, model_digest, log)
    ran = meta  # the encoder adds final_batch_size to it while the batches are written
    if job.cache_key is not None:
        from tecb.embed.cache import keyed_metadata

        meta = keyed_metadata(meta, key=job.cache_key, model_paths=(settings.get("path"), settings.get("distill_from")))
    meta = write_embeddings(job.embeddings, batches, len(texts), meta)
    log(json.dumps(meta, indent=1))
    if job.timings is not None:
        from tecb.embed.cache import RUN_SETTINGS

        seconds = time.perf_counter() - started
        write_json(
            {
                "seconds": round(seconds, 3),
                "n_texts": len(texts),
                "texts_per_second": round(len(texts) / max(seconds, 1e-9), 1),
                **{k: ran[k] for k in RUN_SETTINGS if k in ran},  # how it ran: not in the embeddings file
            },
            job.timings,
        )
    return meta


def _tfidf_batches(settings, texts, seed, log):
    """Metadata and ``(start, vectors)`` batches of TF-IDF + SVD (``seed``: its SVD's, required)."""
    dim = settings["dim"]
    meta = {
        "model": "tfidf",
        "kind": "tfidf",
        "pooling": "none",
        "requested_dim": dim,
        "device": "cpu",
        "dtype": "float32",
        "revision": None,
        "max_seq_length": None,
        "truncated_fraction": 0.0,
        "token_coverage": 1.0,
    }
    if seed is None:
        raise ValueError("TF-IDF embeddings need a seed (its TruncatedSVD)")
    vectors = tfidf_vectors(texts, dim=dim, seed=seed)
    batches = chunks(list(vectors), CHUNK_SIZE)
    batches = ((s, np.stack(v)) for s, v in batches)
    log(f"encoding {len(texts)} unique texts with {meta['model']}")
    return meta, batches


def _transformer_batches(settings, texts, embed_options, model_digest, log):
    """Metadata and ``(start, vectors)`` batches of a sentence-transformers model (``huggingface``, ``tiny-bert``
    ...): the texts sorted by length within each chunk, the batch size halved on out-of-memory errors."""
    kind = settings["kind"]
    device = encoder_device(embed_options)  # None: auto
    source = settings.get("path") or settings["id"]
    model = load_encoder(settings, device, settings["dtype"] if _on_cuda(device) else "float32")
    batch_size = int(embed_options["batch_size"])  # resolved: tecb.embed.spec.run_options
    prompt = effective_prompt(model, settings.get("prompt"), settings.get("prompt_name"))
    stats = truncation_stats(token_counts(model, texts, prompt), model.max_seq_length)
    meta = {
        "model": settings.get("id") or str(source),
        "kind": kind,
        "source": str(source),
        "revision": _resolved_revision(source) or settings.get("revision"),
        "model_sha256": model_digest,
        "pooling": pooling_mode(model),
        "pooling_override": settings.get("pooling"),
        "normalize": settings.get("normalize"),
        "normalized": bool(settings.get("normalize")) or is_normalized(model),
        "prompt": prompt,
        "prompt_name": settings.get("prompt_name"),
        "trust_remote_code": settings.get("trust_remote_code", False),
        "model_kwargs": settings.get("model_kwargs") or {},
        "tokenizer_kwargs": settings.get("tokenizer_kwargs") or {},
        "encode_kwargs": settings.get("encode_kwargs") or {},
        "max_seq_length": model.max_seq_length,
        **stats,
        "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
        "dtype_requested": settings["dtype"],
        "device": str(model.device),
        "batch_size": batch_size,
        "sorted_by_length": True,
        **({"chunk_size": settings["chunk_size"]} if "chunk_size" in settings else {}),
    }
    log(
        f"encoding {len(texts)} unique texts with {meta['model']} (prompt {prompt!r}, pooling {meta['pooling']}, "
        f"max_seq_length {meta['max_seq_length']}: {stats['truncated_fraction']} of the texts truncated, "
        f"token coverage {stats['token_coverage']})"
    )
    batches = encode_transformer(
        model,
        texts,
        batch_size,
        settings.get("chunk_size", CHUNK_SIZE),
        log=log,
        state=meta,  # adds final_batch_size
        encode_kwargs=encode_options(settings),
    )
    return meta, batches


def _mteb_batches(settings, texts, embed_options, model_digest, log):
    """Metadata and ``(start, vectors)`` batches of a ``kind: mteb`` model: mteb's own wrapper encodes each chunk of
    ``chunk_size`` texts in one call, as mteb's clustering evaluator calls it (tecb.embed.mteb_model)."""
    from tecb.embed import mteb_model

    wrapper = mteb_model.load_wrapper(settings, encoder_device(embed_options))
    batch_size = int(embed_options["batch_size"])  # resolved: tecb.embed.spec.run_options
    task = settings["task"]
    prompt = mteb_model.applied_prompt(wrapper, task)
    model = getattr(wrapper, "model", None)  # the sentence-transformers model inside mteb's wrapper, where it has one
    max_seq_length = getattr(model, "max_seq_length", None)
    stats = truncation_stats(
        token_counts(model, texts, prompt) if max_seq_length and hasattr(model, "__getitem__") else None,
        max_seq_length,
    )
    meta = {
        "model": settings["name"],
        "kind": "mteb",
        "source": settings.get("path") or settings["name"],
        "revision": (_resolved_revision(settings["path"]) if settings.get("path") else None) or settings["revision"],
        "mteb_revision": mteb_model.model_meta(settings["name"]).revision,
        "model_sha256": model_digest,
        "task": task,
        "prompt": prompt,
        "prompt_override": settings.get("prompt"),
        "loader": settings["loader"],
        "loader_kwargs": settings["loader_kwargs"],
        "mteb_version": settings["mteb_version"],
        "wrapper": type(wrapper).__name__,
        "device": str(getattr(model, "device", "unknown")),
        "max_seq_length": max_seq_length,
        **stats,
        "dtype": "float32",  # of the vectors: mteb's wrapper returns float32 whatever the weights' dtype
        "batch_size": batch_size,
        "final_batch_size": batch_size,
        **({"chunk_size": settings["chunk_size"]} if "chunk_size" in settings else {}),
    }
    log(
        f"encoding {len(texts)} unique texts with mteb's {meta['wrapper']} for {settings['name']} (task {task}, "
        f"prompt {prompt!r})"
    )

    def encode(chunk, size):
        return mteb_model.encode_texts(wrapper, chunk, task, size)

    return meta, encode_halving(encode, texts, batch_size, settings.get("chunk_size", CHUNK_SIZE), log, meta)


def _non_transformer_batches(settings, texts, embed_options, model_digest, log):
    """Metadata and ``(start, vectors)`` batches of a ``python``, ``precomputed`` or ``static`` model."""
    kind = settings["kind"]
    batch_size = int(embed_options["batch_size"])  # resolved: tecb.embed.spec.run_options
    base = {"kind": kind, "model_sha256": model_digest, "device": "cpu", "dtype": "float32", "revision": None}
    batches = {"python": _python_batches, "precomputed": _precomputed_batches}.get(kind, _static_batches)
    return batches(settings, texts, base, batch_size, log)


def _python_batches(settings, texts, base: dict, batch_size: int, log):
    """A ``python`` model's metadata and batches: its object encodes the texts."""
    from tecb.embed.spec import exposed_files, file_sha256

    encode, instance = build_python_encoder(settings)
    files = dict(settings.get("files") or {})
    files.update({f: file_sha256(f) for f in exposed_files(instance) if f not in files})
    meta = {
        **base,
        "model": settings["object"],
        "object": settings["object"],
        "kwargs": settings.get("kwargs") or {},
        "package": settings.get("package"),
        "files": files,
        "batch_size": batch_size,
    }
    log(f"encoding {len(texts)} unique texts with {settings['object']} (package {settings.get('package')})")
    return meta, encode_python(encode, texts, batch_size, f"object {settings['object']!r}", log)


def _precomputed_batches(settings, texts, base: dict, batch_size: int, log):
    """A ``precomputed`` model's metadata and batches: the texts' vectors looked up in its file."""
    file_texts, vectors = read_precomputed(settings["path"], settings.get("texts"))
    found = precomputed_lookup(texts, file_texts, vectors, settings["path"])
    as_matrix(found, len(texts), settings["path"])  # finite rows
    meta = {
        **base,
        "model": settings["path"],
        "path": settings["path"],
        "texts": settings.get("texts"),
        "n_vectors_in_file": len(file_texts),
    }
    log(f"looked up {len(texts)} unique texts in {settings['path']} ({len(file_texts)} vectors)")
    return meta, ((start, found[start : start + CHUNK_SIZE]) for start in range(0, len(texts), CHUNK_SIZE))


def _static_batches(settings, texts, base: dict, batch_size: int, log):
    """A ``static`` model's metadata and batches: its token vectors pooled per text."""
    from importlib.metadata import PackageNotFoundError, version

    encode, info = load_static(settings["path"])
    try:
        m2v = version("model2vec")
    except PackageNotFoundError:
        m2v = None
    meta = {
        **base,
        "model": settings.get("distill_from") or settings["path"],
        "path": settings["path"],
        "distill_from": settings.get("distill_from"),
        "pca_dims": settings.get("pca_dims"),
        "model2vec": m2v,
        **info,
        "batch_size": batch_size,
    }
    log(f"encoding {len(texts)} unique texts with the static model {settings['path']} ({info['backend']})")
    return meta, encode_python(encode, texts, batch_size, f"static model {settings['path']}", log)


def dtype_parity(
    model_spec: dict,
    texts: list[str],
    labels: list,
    dtype: str = "bfloat16",
    device: str | None = None,
    batch_size: int = 32,
    *,
    seed: int,
    n_seeds: int = 5,
) -> dict:
    """Half precision vs float32 on the same texts: vector agreement and the k-means V-measure of each.

    Both runs load the model described by ``model_spec`` on ``device`` (``dtype`` is applied on any
    device here, CPU included, so the check runs anywhere); k-means follows the paper (MiniBatchKMeans,
    k = number of labels, batch 500, ``n_init="auto"``) with seeds ``seed .. seed + n_seeds - 1``.
    ``v_measure_difference`` is the mean paired difference (half - float32) over those seeds; compare it
    with ``v_measure_seed_std``, the spread of float32's V-measure over the seeds alone (k-means noise).
    """
    settings = encoder_settings(model_spec)
    options = encode_options(settings)
    vectors, used = {}, {}
    for d in ("float32", dtype):
        model = load_encoder(settings, device, d)
        vectors[d] = np.concatenate([v for _, v in encode_transformer(model, texts, batch_size, encode_kwargs=options)])
        used[d] = str(next(model.parameters()).dtype).replace("torch.", "")
        device_used = str(model.device)
        del model
        _free_cuda_cache()
    k = len(set(labels))
    seeds = range(seed, seed + max(1, n_seeds))
    scores = {d: _kmeans_v_measures(v, labels, seeds) for d, v in vectors.items()}
    a, b = vectors["float32"], vectors[dtype]
    cosine = np.sum(a * b, axis=1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    return {
        "dtype": dtype,
        "dtype_loaded": used[dtype],
        "device": device_used,
        "n_texts": len(texts),
        "n_labels": k,
        "seeds": list(seeds),
        "v_measure_float32": float(scores["float32"].mean()),
        "v_measure_half": float(scores[dtype].mean()),
        "v_measure_difference": float((scores[dtype] - scores["float32"]).mean()),
        "v_measure_seed_std": float(scores["float32"].std(ddof=1)) if len(seeds) > 1 else 0.0,
        "max_abs_difference": float(np.max(np.abs(a - b))),
        "min_cosine": float(cosine.min()),
        "mean_cosine": float(cosine.mean()),
    }


def _kmeans_v_measures(vectors: np.ndarray, labels: list, seeds) -> np.ndarray:
    """The V-measure of the paper's k-means (MiniBatchKMeans, k = number of labels, batch 500, ``n_init="auto"``)
    on ``vectors``, one per seed."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    k = len(set(labels))
    return np.array(
        [
            v_measure_score(
                labels,
                MiniBatchKMeans(n_clusters=k, batch_size=500, n_init="auto", random_state=s).fit_predict(vectors),
            )
            for s in seeds
        ]
    )


def _on_cuda(device: str | None) -> bool:
    import torch

    return torch.cuda.is_available() and (device is None or str(device).startswith("cuda"))


def _resolved_revision(source) -> str | None:
    """The commit recorded by the prefetch rule next to a downloaded model, if any."""
    marker = Path(source) / ".tecb_revision"
    return marker.read_text().strip() if marker.exists() else None
