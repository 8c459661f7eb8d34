"""A content-addressed store of embedding files shared by run folders (config ``embed.cache_dir``).

An entry is ``{cache_dir}/{key}.parquet`` (+ ``{key}.timings.json``), where the key is the sha256 of the content
that decides the vectors (:func:`cache_key`): the model's resolved settings (:func:`tecb.embed.spec.encoder_settings`)
without any path, what the model's files are (a local model's digest, a built model's directory digest, a
prefetched hub model's resolved commit and remote-code record), the TF-IDF seed, and the sha256 of the dataset's
``texts.parquet``. Never a path: a model built inside a run folder (``results/{run}/models/``) or moved to another
folder hits the entry when its files are the same. Execution settings (batch size, device, threads) are not part of
it, as they do not re-embed within a run either; the entry's metadata records those of the run that computed it.

Every embeddings file the workflow writes names its key in its own metadata (``cache_key``,
:func:`embedding_key`, :func:`keyed_metadata`), cached or not: the record ``{key}.json`` vouches for an entry's files
by their sha256, and the file vouches for being the embedding of *that* key, so another entry's (or another run's)
file put in its place is refused even with a record rewritten to match it. A model path (perhaps a model built under
``results/{run}/models/``) is recorded by its last part only: a file has the same bytes whichever run computed it,
with or without the cache.

An entry is *finished* when its record ``{key}.json`` (sizes and sha256 of both files, written last) matches the
files and its embeddings file names its key: :func:`fill_entry` computes a missing or unfinished entry under a per-key lock (``{key}.lock``), so runs
sharing a cache compute each entry once, and never touches a finished one; :func:`verify_entry` checks an entry
before it is linked (or copied) into a run's ``embeddings/{model}/{dataset}.parquet``, and :func:`quarantine`
moves a damaged one aside so that the next run computes it again.
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

KEY_VERSION = 3  # bump when the embedding file format or the key changes: old entries are then not reused
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


def is_finished(cache_dir, key: str) -> bool:
    """Cheap (sizes only, for planning): the entry's record exists and its files have the recorded sizes."""
    try:
        with open(record_path(cache_dir, key), encoding="utf-8") as f:
            record = json.load(f)
        return all(os.path.getsize(p) == record[name]["bytes"] for name, p in entry_paths(cache_dir, key).items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def finished_keys(cache_dir) -> list[str]:
    """The keys of the store's finished entries (:func:`is_finished`, cheap), sorted; none for a missing store."""
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return []
    keys = (n[:-5] for n in names if len(n) == 69 and n.endswith(".json") and _is_key(n[:-5]))
    return sorted(k for k in keys if is_finished(cache_dir, k))


def _is_key(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def key_owners(key_files, *, models, datasets) -> dict[str, tuple[str, str]]:
    """Cache key -> the first (model, dataset) of ``models`` x ``datasets`` whose key file (one of ``key_files``,
    the run's ``{model}/{dataset}.key.json``) records it; a damaged key file, or one of a model or dataset no longer
    configured, is skipped (the workflow's embed_compute rule finds a key's owner here)."""
    from tecb.io import ContractError, read_json_record

    owners = {}
    for path in key_files:
        try:
            record = read_json_record(path, ("model", "dataset", "key"), "key file")
        except ContractError:
            continue
        if record["model"] in models and record["dataset"] in datasets:
            owners.setdefault(record["key"], (record["model"], record["dataset"]))
    return owners


def owner_of(owners: dict, key: str) -> tuple[str, str]:
    """The (model, dataset) with cache key ``key`` (of :func:`key_owners`); ``ValueError`` naming it if none."""
    if key not in owners:
        raise ValueError(f"embed.cache_dir: no (model, dataset) of this run has cache key {key}")
    return owners[key]


def embedding_key(*, settings: dict, seed: int | None, texts, model: ModelFiles) -> str:
    """The key of the embedding of a dataset's ``texts`` (its texts.parquet) by a model (its resolved ``settings``,
    the TF-IDF ``seed``, what its files are): :func:`cache_key` of their content; what an embeddings file records."""
    return cache_key(settings=settings, seed=seed, texts_sha256=file_sha256(texts), model_content=model_content(model))


def keyed_metadata(meta: dict, *, key: str, model_paths=()) -> dict:
    """An embeddings file's metadata: ``meta`` with its ``cache_key`` and every value that is one of
    ``model_paths`` (where the model's files were read from: perhaps a run's folder) cut to the path's last part,
    so the file's bytes do not depend on the run that computed it (its key holds what the model's files are)."""
    paths = {str(p) for p in model_paths if p}
    cut = {k: os.path.basename(str(v).rstrip("/")) if isinstance(v, str) and v in paths else v for k, v in meta.items()}
    return {**cut, "cache_key": key}


def _recorded_key(path) -> str | None:
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
        recorded = _recorded_key(path)
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


def fill_entry(cache_dir, key: str, compute, log=print) -> bool:
    """Make the entry finished: under its lock, keep it if it is (another run may have computed it meanwhile),
    else run ``compute(paths)`` (writing both files of :func:`entry_paths`, atomically; the embeddings with the
    metadata of :func:`keyed_metadata`) and write the record last. Returns whether it computed."""
    paths = entry_paths(cache_dir, key)
    with entry_lock(cache_dir, key, log=log):
        why = verify_entry(cache_dir, key)
        if not why:
            log(f"cache entry {key}: already in the cache (finished, verified), kept")
            return False
        if any(os.path.exists(p) for p in paths.values()):
            log(f"cache entry {key}: {why}; computed again")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record_path(cache_dir, key))  # not finished until the record is written again
        compute(paths)
        record = {name: _file_record(p) for name, p in paths.items()}
        from tecb.io import write_json

        write_json({"key": key, **record}, record_path(cache_dir, key))
        log(f"cache entry {key}: computed into the cache")
        return True


def quarantine(cache_dir, key: str, why: str) -> str:
    """Move a damaged entry aside (under its lock; its record removed first, so it is no longer finished) and
    return the message naming it: the next run computes the entry again."""
    paths = entry_paths(cache_dir, key)
    with entry_lock(cache_dir, key):
        why = verify_entry(cache_dir, key) and why  # another run may have computed it again meanwhile
        if not why:
            return ""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record_path(cache_dir, key))
        moved = []
        for path in paths.values():
            if os.path.exists(path):
                os.replace(path, path + ".damaged")
                moved.append(path + ".damaged")
    return (
        f"embedding cache entry {paths['embeddings']} is damaged ({why}): not linked; moved aside to "
        f"{', '.join(moved) or '(nothing left)'} (delete it when you like). Run the same command again: it computes "
        "the entry again, the same bytes"
    )


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
