"""A content-addressed store of embedding files shared by run folders (config ``embed.cache_dir``).

An entry is ``{cache_dir}/{key}.parquet`` (+ ``{key}.timings.json``), where the key is the sha256 of the content
that decides the vectors (:func:`cache_key`): the model's resolved settings (:func:`tecb.embed.spec.encoder_settings`)
without any path, what the model's files are (a local model's digest, a built model's directory digest, a
prefetched hub model's resolved commit and remote-code record), the TF-IDF seed, and the sha256 of the dataset's
``texts.parquet``. Never a path: a model built inside a run folder (``results/{run}/models/``) or moved to another
folder hits the entry when its files are the same. Execution settings (batch size, device, threads) are not part of
it, as they do not re-embed within a run either.

Every embeddings file the workflow writes names its key in its own metadata (``cache_key``,
:func:`embedding_key`, :func:`keyed_metadata`), cached or not: the record ``{key}.json`` vouches for an entry's files
by their sha256, and the file vouches for being the embedding of *that* key, so another entry's (or another run's)
file put in its place is refused even with a record rewritten to match it. The metadata of an embeddings file
depends only on its key (:func:`keyed_metadata`): where the model's files were read from (a model built under
``results/{run}/models/``, a local model's folder, whatever its name) is not recorded, and neither is how the job
ran (:data:`RUN_SETTINGS`: the batch size, recorded in the job's timings file instead), so an entry has the same
bytes whichever run computed it, and a run's file the same bytes with or without the cache.

An entry is *finished* when its record ``{key}.json`` (sizes and sha256 of both files, written last) matches the
files and its embeddings file names its key. The embed jobs use the store themselves (as mteb's cached-embedding
wrapper wraps an encoder), whatever their granularity: an embed job (one dataset), an embed_merge job (a sharded
model's dataset, merged from the run's shards) and an embed_batch job (every dataset of a model) each compute their
key and call :func:`serve_from_entry`, which, under the entry's lock (``{key}.lock``), verifies the entry
(:func:`verify_entry`, every byte) and reuses it when finished, else computes it (a damaged one is named and moved
aside first), then puts it at the run's ``embeddings/{model}/{dataset}.parquet`` (and its timings). No rule
declares an entry, so Snakemake never removes one, and no job removes or rewrites a finished one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from tecb.embed.spec import FILELESS_KINDS, directory_digest, file_sha256

KEY_VERSION = 4  # bump when the embedding file format or the key changes: old entries are then not reused
# settings that name where the model's files are, not what they are (their content is ``model_content``)
PATH_SETTINGS = ("path", "distill_from")


@dataclass(frozen=True)
class ModelFiles:
    """What a model's files are (:func:`model_content`): its ``kind``, the directory or file it is read from
    (``path``, None: none) and a local model's model_digest file (``digest``, None: none)."""

    kind: str
    path: str | os.PathLike | None = None
    digest: str | os.PathLike | None = None


def model_content(model: ModelFiles):
    """What the model's files are, cheaply: a local model's recorded digest, a built model's directory digest,
    a prefetched hub model's resolved commit and remote-code record; ``None`` for TF-IDF."""
    kind, path, digest_file = model.kind, model.path, model.digest
    if kind in FILELESS_KINDS:  # a Python object's package, version and files are in its settings
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
    """The sha256 naming a cache entry: of the canonical JSON of the content that decides the vectors. Where the
    model's files are (``path``, a ``distill_from`` folder) is left out when their content is known."""
    if model_content is not None:
        settings = {k: v for k, v in settings.items() if k not in PATH_SETTINGS}
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


def record_path(cache_dir: str | os.PathLike, key: str) -> str:
    """The record that makes an entry finished: each file's size and sha256, written after both files."""
    return os.path.join(cache_dir, f"{key}.json")


def _file_record(path) -> dict:
    return {"bytes": os.path.getsize(path), "sha256": file_sha256(path)}


def embedding_key(*, settings: dict, seed: int | None, texts, model: ModelFiles) -> str:
    """The key of the embedding of a dataset's ``texts`` (its texts.parquet) by a model (its resolved ``settings``,
    the TF-IDF ``seed``, what its files are): :func:`cache_key` of their content; what an embeddings file records."""
    return cache_key(settings=settings, seed=seed, texts_sha256=file_sha256(texts), model_content=model_content(model))


#: how a job ran, not what its vectors are: left out of an embeddings file (its job's timings file records them)
RUN_SETTINGS = ("batch_size", "final_batch_size")


def keyed_metadata(meta: dict, *, key: str, model_paths=()) -> dict:
    """An embeddings file's metadata: ``meta`` with its ``cache_key``, without :data:`RUN_SETTINGS`, and with every
    value that is one of ``model_paths`` (where the model's files were read from: perhaps a run's folder, a folder of
    any name) recorded as None, so the file's bytes depend on its key only, not on the run that computed it (the key
    holds what the model's files are; ``model_sha256`` too, where there is a digest)."""
    paths = {str(p) for p in model_paths if p}
    kept = {k: None if isinstance(v, str) and v in paths else v for k, v in meta.items() if k not in RUN_SETTINGS}
    return {**kept, "cache_key": key}


def recorded_key(path) -> str | None:
    """The ``cache_key`` an embeddings file records in its metadata (its footer only), None when it has none."""
    from tecb.io import read_parquet_schema, read_tecb_metadata

    return read_tecb_metadata(read_parquet_schema(path, "embeddings"), path).get("cache_key")


def verify_entry(cache_dir, key: str) -> str:
    """Why the entry cannot be used (``""``: it is finished, its files are what its record says and its embeddings
    file names ``key``)."""
    record_file = record_path(cache_dir, key)
    try:
        with open(record_file, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return f"no record {record_file} (never finished)"
    except (OSError, ValueError) as exc:
        return f"its record {record_file} is unreadable ({exc})"
    for name, path in entry_paths(cache_dir, key).items():
        try:
            found = _file_record(path)
        except OSError as exc:
            return f"{path}: {exc.strerror or exc}"
        if not isinstance(record.get(name), dict) or found != {k: record[name].get(k) for k in found}:
            return (
                f"{path}: {found['bytes']} bytes with sha256 {found['sha256'][:12]}..., not what {record_file} records"
            )
    from tecb.io import ContractError

    path = entry_paths(cache_dir, key)["embeddings"]
    try:
        recorded = recorded_key(path)
    except ContractError as exc:
        return str(exc)
    if recorded != key:
        return f"{path} is the embedding of cache key {recorded} (from its metadata), not of {key}"
    return ""


@contextlib.contextmanager
def entry_lock(cache_dir, key: str, log=print):
    """Hold the entry's lock (``{key}.lock``, an exclusive ``flock``; released when the process ends, even by
    kill -9). Lock files are never deleted: removing one while a run waits on it would let a third run in."""
    import fcntl

    os.makedirs(cache_dir, exist_ok=True)
    with open(os.path.join(cache_dir, f"{key}.lock"), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"cache entry {key}: another run holds its lock, waiting")
            start = time.monotonic()
            fcntl.flock(handle, fcntl.LOCK_EX)
            log(f"cache entry {key}: lock acquired after {time.monotonic() - start:.1f} s")
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def serve_from_entry(cache_dir, key: str, *, compute, outputs: dict, log=print) -> bool:
    """A job's run files from the store's entry of ``key``; returns whether the entry was computed.

    Under the entry's lock (:func:`entry_lock`): a finished entry (:func:`verify_entry`: every byte against its
    record, and its embeddings file naming ``key``) is reused and copied to ``outputs`` (``embeddings``,
    ``timings``: the run's paths). Otherwise ``compute(paths)`` writes both files of :func:`entry_paths`
    (atomically; the embeddings with the metadata of :func:`keyed_metadata`), the record is written last and the
    files are hard-linked (or copied) to ``outputs``. A damaged entry (a record its files do not match, or an
    embeddings file naming another key) is named in the log and moved aside to ``*.damaged`` before it is
    computed again; an unfinished one (no record: a job killed while computing it) is overwritten. A finished
    entry is never removed or rewritten, and a job that fails leaves the entry as it found it or finished.

    A reused entry is copied, not linked: Snakemake sets the modification time of a job's outputs when the job
    ends, and a hard link shares it with the entry and every other run's link, whose later jobs would then look
    out of date (a copy costs the disk a run without the store uses).
    """
    paths = entry_paths(cache_dir, key)
    with entry_lock(cache_dir, key, log=log):
        why = verify_entry(cache_dir, key)
        if not why:
            log(f"cache entry {key}: already in the cache (finished, verified), reused")
        else:
            if os.path.exists(record_path(cache_dir, key)):
                log(f"WARNING {_set_aside(cache_dir, key, why)}")
            elif any(os.path.exists(p) for p in paths.values()):
                log(f"cache entry {key}: {why}; computed again")
            compute(paths)
            from tecb.io import write_json

            write_json(
                {"key": key, **{name: _file_record(p) for name, p in paths.items()}}, record_path(cache_dir, key)
            )
            log(f"cache entry {key}: computed into the cache")
        for name, dest in outputs.items():
            put_file(paths[name], dest, link=bool(why))
            log(f"{dest} <- {paths[name]}")
    return bool(why)


def _set_aside(cache_dir, key: str, why: str) -> str:
    """Move a damaged entry aside (its record removed first, so it is no longer finished; the caller holds the
    entry's lock) and return the message naming it."""
    paths = entry_paths(cache_dir, key)
    os.unlink(record_path(cache_dir, key))
    moved = []
    for path in paths.values():
        if os.path.exists(path):
            os.replace(path, path + ".damaged")
            moved.append(path + ".damaged")
    return (
        f"embedding cache entry {paths['embeddings']} is damaged ({why}): moved aside to "
        f"{', '.join(moved) or '(nothing left)'} (delete it when you like); computing it again, the same bytes"
    )


def put_file(source: str | os.PathLike, dest: str | os.PathLike, *, link: bool) -> None:
    """Put ``source``'s bytes at ``dest`` atomically: with ``link``, a hard link where the file system allows,
    else (or without ``link``) a copy of its own."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.link.tmp")
    if tmp.exists():
        tmp.unlink()
    if not (link and _hard_link(source, tmp)):
        shutil.copyfile(source, tmp)
    os.replace(tmp, dest)


def _hard_link(source, dest) -> bool:
    """Hard-link ``source`` at ``dest``; False where the file system refuses (another device, no links)."""
    try:
        os.link(source, dest)
    except OSError:
        return False
    return True
