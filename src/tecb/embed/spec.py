"""Model specs: the settings that decide an embedding, resolved once (design §4, §5).

:func:`encoder_settings` turns a ``models.<key>`` config entry (plus the ``embed`` defaults and the
dataset) into the plain values that decide the vectors: what is loaded (id/path, revision, remote
code, model and tokenizer keyword arguments, dtype), how texts are fed to it (prompt, maximum
sequence length, ``encode`` keyword arguments) and how token vectors become one vector (pooling,
normalisation). The embed rule passes exactly this as its params, so changing any of them recomputes
the embedding, while the display ``name`` and execution settings (batch size, device, threads: they
change the numbers only at float rounding level) do not. The same dict is recorded in each
embedding file's metadata.

:func:`directory_digest` hashes a local model's files, so overwriting its weights re-embeds.

Pure Python (``hashlib`` only): the Snakefile imports it while building the DAG.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

POOLING_MODES = ("mean", "cls", "max", "lasttoken", "mean_sqrt_len_tokens", "weightedmean")
DTYPES = ("float32", "float16", "bfloat16")
TRANSFORMER_KINDS = ("huggingface", "local", "tiny-bert")
# keys of a model entry that are not embedding inputs: the display name, execution settings
NOT_INPUTS = ("name", "batch_size")

_TRANSFORMER_OPTIONS = (
    "batch_size",
    "max_seq_length",
    "dtype",
    "prompt",
    "prompt_name",
    "pooling",
    "normalize",
    "model_kwargs",
    "tokenizer_kwargs",
    "encode_kwargs",
)
#: The keys a ``models.<key>`` entry of each kind may set (besides ``name`` and ``kind``); any other key is refused
#: at validation, naming it (``tecb.configcheck``): a ``prompt`` on ``tfidf`` would otherwise be silently ignored.
KIND_KEYS = {
    "huggingface": ("id", "revision", "trust_remote_code", "code_revisions", *_TRANSFORMER_OPTIONS),
    "local": ("path", "id", "trust_remote_code", *_TRANSFORMER_OPTIONS),
    "tfidf": ("dim",),
    "tiny-bert": _TRANSFORMER_OPTIONS,
}


def resolve_prompt(prompt, dataset: str | None) -> str | None:
    """A literal prompt: the string itself, or from a mapping ``{dataset: prompt, default: prompt}``."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Mapping):
        if dataset is not None and dataset in prompt:
            return prompt[dataset]
        return prompt.get("default")
    raise TypeError(f"prompt must be a string or a mapping of dataset -> string, not {type(prompt).__name__}")


def encoder_settings(spec: Mapping, embed_options: Mapping | None = None, dataset: str | None = None) -> dict:
    """The resolved values that decide a model's vectors for ``dataset`` (see the module docstring).

    ``spec`` is a ``models.<key>`` entry (with ``path`` filled in for built or prefetched models);
    ``embed_options`` the ``embed`` section (its ``dtype`` is the default of a model's ``dtype``).
    """
    embed_options = embed_options or {}
    kind = spec["kind"]  # filled by the config schema's default
    if kind == "tfidf":
        return {"kind": "tfidf", "dim": int(spec.get("dim", 256))}
    if kind not in TRANSFORMER_KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    prompt = resolve_prompt(spec.get("prompt"), dataset)
    prompt_name = spec.get("prompt_name")
    if prompt is not None and prompt_name is not None:
        raise ValueError(
            "a model takes `prompt` (a literal prefix) or `prompt_name` (one of its own prompts), not both"
        )
    pooling = spec.get("pooling")
    if pooling is not None and pooling not in POOLING_MODES:
        raise ValueError(f"pooling {pooling!r} is not one of {', '.join(POOLING_MODES)}")
    dtype = spec.get("dtype") or embed_options.get("dtype") or "float32"
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    max_seq_length = spec.get("max_seq_length")
    return {
        "kind": kind,
        "id": spec.get("id"),
        "path": str(spec["path"]) if spec.get("path") else None,
        "revision": spec.get("revision"),
        "trust_remote_code": bool(spec.get("trust_remote_code", False)),
        "prompt": prompt,
        "prompt_name": prompt_name,
        "pooling": pooling,
        "normalize": spec.get("normalize"),
        "max_seq_length": int(max_seq_length) if max_seq_length else None,
        "model_kwargs": dict(spec.get("model_kwargs") or {}),
        "tokenizer_kwargs": dict(spec.get("tokenizer_kwargs") or {}),
        "encode_kwargs": dict(spec.get("encode_kwargs") or {}),
        "dtype": dtype,
    }


# --- local model content --------------------------------------------------------------------

SKIP_DIRS = {".git", "__pycache__", ".cache", ".ipynb_checkpoints"}


def model_files(path: str | os.PathLike) -> list[str]:
    """The files of a model directory (or the file itself), sorted; caches and VCS folders skipped."""
    path = Path(path)
    if path.is_file():
        return [str(path)]
    if not path.is_dir():
        raise FileNotFoundError(f"model path {path} does not exist")
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [os.path.join(root, f) for f in files]
    return sorted(found)


def file_sha256(path: str | os.PathLike, block: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def directory_digest(path: str | os.PathLike) -> dict:
    """``{"sha256": <digest of all files>, "files": {relative path: sha256}}`` of a model directory.

    The digest covers each file's relative path and content, so renaming, adding, removing or
    overwriting any weight, config or tokenizer file changes it; timestamps do not.
    """
    path = Path(path)
    base = path.parent if path.is_file() else path
    files = {os.path.relpath(f, base).replace(os.sep, "/"): file_sha256(f) for f in model_files(path)}
    total = hashlib.sha256()
    for name, digest in sorted(files.items()):
        total.update(f"{name}\0{digest}\n".encode())
    return {"sha256": total.hexdigest(), "files": files}
