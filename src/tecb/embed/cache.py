"""A content-addressed store of embedding files shared by run folders (config ``embed.cache_dir``).

An entry is ``{cache_dir}/{key}.parquet`` (+ ``{key}.timings.json``), where the key is the sha256 of everything
that decides the file's bytes (:func:`cache_key`): the model's resolved settings
(:func:`tecb.embed.spec.encoder_settings`, its recorded ``path`` included), what the model's files are (a local
model's digest, a built model's directory digest, a prefetched hub model's resolved commit and remote-code
record), the TF-IDF seed, and the sha256 of the dataset's ``texts.parquet``. Execution settings (batch size,
device, threads) are not part of it, as they do not re-embed within a run either. Entries are written once,
atomically, and linked (or copied) into a run's ``embeddings/{model}/{dataset}.parquet``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from tecb.embed.spec import directory_digest, file_sha256

KEY_VERSION = 1  # bump when the embedding file format changes: old entries are then not reused


def model_content(kind: str, path: str | os.PathLike | None = None, digest_file: str | os.PathLike | None = None):
    """What the model's files are, cheaply: a local model's recorded digest, a built model's directory digest,
    a prefetched hub model's resolved commit and remote-code record; ``None`` for TF-IDF."""
    if kind in ("tfidf", "python"):  # a Python object's package, version and files are in its settings
        return None
    if kind == "local" or (digest_file and kind in ("precomputed", "static", "mteb")):
        with open(digest_file) as f:
            return json.load(f)["sha256"]
    if kind in ("huggingface", "mteb"):  # kind mteb without `path`: prefetched like a hub model
        model_dir = Path(path)
        out = {}
        for marker in (".tecb_revision", ".tecb_remote_code.json"):
            if (model_dir / marker).exists():
                out[marker] = file_sha256(model_dir / marker)
        # no record of the resolved commit (an older prefetch): hash the files themselves
        return out if ".tecb_revision" in out else directory_digest(model_dir)["sha256"]
    return directory_digest(path)["sha256"]


def cache_key(*, settings: dict, seed: int | None, texts_sha256: str, model_content) -> str:
    """The sha256 naming a cache entry: of the canonical JSON of everything that decides the embedding file."""
    record = {
        "version": KEY_VERSION,
        "settings": settings,
        "seed": seed,
        "texts_sha256": texts_sha256,
        "model_content": model_content,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def entry_paths(cache_dir: str | os.PathLike, key: str) -> dict[str, str]:
    """The files of one cache entry: the embeddings and the durations of the job that computed them."""
    return {
        "embeddings": os.path.join(cache_dir, f"{key}.parquet"),
        "timings": os.path.join(cache_dir, f"{key}.timings.json"),
    }


def link_or_copy(source: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Put ``source``'s bytes at ``dest`` atomically: a hard link where the file system allows, else a copy
    (with its modification time, so a cache entry never looks newer than the run's copy)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.link.tmp")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copy2(source, tmp)
    os.replace(tmp, dest)
