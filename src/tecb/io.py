"""File contracts and atomic writing.

Every output is written to a temporary file next to its target and renamed into place, so an
interrupted job never leaves a file that looks complete (design §9).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

TEXTS_SCHEMA = pa.schema([("text_id", pa.int32()), ("text", pa.string())])
SPLITS_SCHEMA = pa.schema([("split", pa.int16()), ("text_id", pa.int32()), ("label", pa.string())])


class ContractError(ValueError):
    """A file does not follow its contract (design §4)."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Temporary files and folders of :func:`atomic_path` / :func:`atomic_dir`: ``.{target name}.{8 random}.tmp``.
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporaries a killed writer of ``path`` left beside it; return them.

    Safe because one target has one writer at a time (Snakemake runs one job per output).
    """
    path = Path(path)
    own = re.compile(rf"^\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp$")
    if not path.parent.is_dir():
        return []
    stale = [p for p in path.parent.iterdir() if own.match(p.name)]
    for p in stale:
        _remove(p)
    return stale


def remove_orphans(roots, min_age_seconds: float = 7200) -> list[Path]:
    """Remove temporaries (:data:`TEMP_NAME`) under ``roots`` not modified for ``min_age_seconds``; return them.

    For a run's start (a killed job's leftovers). The age guard spares the temporaries of jobs still
    running in another Snakemake process on the same folders; a streaming writer touches its file
    with every batch. A writer also removes its own target's leftovers when it starts
    (:func:`remove_stale_temps`).
    """
    import time

    cutoff = time.time() - min_age_seconds
    removed = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in list(dirs) + files:
                if not TEMP_NAME.match(name):
                    continue
                p = Path(folder) / name
                with contextlib.suppress(FileNotFoundError):
                    if p.lstat().st_mtime < cutoff:
                        _remove(p)
                        removed.append(p)
                if name in dirs:
                    dirs.remove(name)  # never descend into a temporary folder
    return removed


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike):
    """Yield a temporary directory beside ``path``; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; outputs get the usual permissions
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def scratch_dir(path: str | os.PathLike):
    """Yield an empty temporary directory beside ``path``, removed when the block ends, however it ends.

    Named like the temporaries of :func:`atomic_path` (:data:`TEMP_NAME`), so what a killed job leaves is
    removed by :func:`remove_orphans` and by the next writer of ``path`` (:func:`remove_stale_temps`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_table(table: pa.Table, path: str | os.PathLike) -> None:
    """Write a Parquet file atomically."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def write_json(obj, path: str | os.PathLike) -> None:
    write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", path)


# --- small JSON records a rule writes and the DAG reads (shard plans) ---------------------------------


def read_json_record(path, fields: Sequence[str], what: str) -> dict:
    """A JSON object a rule wrote (a shard plan) that input functions read while the DAG is
    built: it must hold ``fields``; a damaged one (cut short, not JSON, fields missing) is a :class:`ContractError`
    naming the file and ``what`` it is, never a bare ``JSONDecodeError``."""
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        if not isinstance(record, dict):
            raise ValueError(f"holds a {type(record).__name__}, not an object")
        missing = [name for name in fields if name not in record]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ContractError(f"{path}: damaged {what} ({exc})") from exc
    return record


def remove_damaged_records(paths, fields: Sequence[str], what: str, log=print) -> list[str]:
    """Remove each of ``paths`` that exists and is damaged (:func:`read_json_record`), naming it in the log; returns
    them. Run at a run's start, before the DAG reads them: the rule that writes one (a target of ``all``) then
    writes it again in the same command, nothing to delete by hand."""
    removed = []
    for path in paths:
        if not os.path.exists(path):
            continue
        try:
            read_json_record(path, fields, what)
        except ContractError as exc:
            os.remove(path)
            removed.append(str(path))
            log(f"WARNING {exc}; removed: this run writes it again")
    return removed


# --- keyed members of a batch job (cluster.batch, embed.batch) --------------------------------------


KEY_PATTERN = re.compile(r"[0-9a-f]{64}")


def _is_keys_entry(entry) -> bool:
    """An entry of a keys file: ``{"key": sha256, "sha256": [sha256 of each output, in order]}``."""
    if not isinstance(entry, dict) or set(entry) != {"key", "sha256"} or not isinstance(entry["sha256"], list):
        return False
    return all(isinstance(k, str) and KEY_PATTERN.fullmatch(k) for k in [entry["key"], *entry["sha256"]])


def read_keys(path, log=print) -> dict[str, dict]:
    """A batch job's keys file (``{member: {"key": sha256, "sha256": [its outputs' sha256]}}``); empty when it does
    not exist yet.

    Verified when read: a damaged file (not JSON, not an object of member names to such entries) is named in the
    log and treated as empty, so every member is recomputed (the same bytes: each is a function of its key's
    inputs) and the file is rewritten by the batch; nothing needs deleting by hand. A keys file of an older format
    (``{member: key}``, which vouched for the outputs by their names only) is treated the same way."""
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            keys = json.load(f)
        if not isinstance(keys, dict):
            raise ValueError(f"holds a {type(keys).__name__}, not an object {{member: entry}}")
        bad = [m for m, entry in keys.items() if not _is_keys_entry(entry)]
        if bad:
            raise ValueError(f"member {bad[0]!r} has no entry {{'key': sha256, 'sha256': [sha256, ...]}}")
    except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
        log(
            f"WARNING {path}: damaged keys file ({exc}); ignored: every member of this batch is computed again "
            "(the same bytes) and the file is rewritten"
        )
        return {}
    return keys


def write_keys(keys: dict, path) -> None:
    """Write a batch's keys file in a canonical order (members sorted), whatever order they were computed in."""
    write_json(dict(sorted(keys.items())), path)


def _changed_output(entry: dict, outputs) -> str:
    """Why ``outputs`` are not the files ``entry`` recorded when they were written (``""``: they are)."""
    if len(entry["sha256"]) != len(outputs):
        return f"{len(entry['sha256'])} output(s) recorded, {len(outputs)} expected"
    for path, recorded in zip(outputs, entry["sha256"], strict=True):
        found = file_sha256(path)
        if found != recorded:
            return f"{path} has sha256 {found[:12]}..., not the {recorded[:12]}... recorded when it was written"
    return ""


def keep_or_compute(keys: dict, keys_path, *, name: str, key: str, outputs, compute, log=print, unhashed=()) -> bool:
    """Run ``compute`` (a function of no arguments writing ``outputs`` and ``unhashed``) unless ``keys[name]`` has
    ``key``, every output exists and each of ``outputs`` has the sha256 recorded when it was written (``unhashed``:
    files that record durations, never the same bytes twice, only required to exist); returns whether it ran.
    ``keys`` is kept in ``keys_path`` so that the file never names a member whose files do not match its key:
    the entry is removed before ``compute`` and written back, with its outputs' sha256, after it."""
    entry = keys.get(name)
    if entry is not None and entry["key"] == key and all(os.path.exists(p) for p in [*outputs, *unhashed]):
        why = _changed_output(entry, list(outputs))
        if not why:
            log(f"{name}: up to date (same key {key[:12]}, the same files), kept")
            return False
        log(f"WARNING {name}: {why} ({keys_path}); computed again")
    if name in keys:
        del keys[name]
        write_keys(keys, keys_path)
    compute()
    keys[name] = {"key": key, "sha256": [file_sha256(p) for p in outputs]}
    write_keys(keys, keys_path)
    return True


# --- datasets -------------------------------------------------------------------------------


def dataset_tables(texts: list[str], splits: list[tuple[list[int], list[str]]]) -> tuple[pa.Table, pa.Table]:
    """Build the two contract tables from unique ``texts`` and ``splits`` of (text_ids, labels)."""
    texts_table = pa.table(
        {"text_id": pa.array(np.arange(len(texts), dtype=np.int32)), "text": pa.array(texts, pa.string())},
        schema=TEXTS_SCHEMA,
    )
    split_col, id_col, label_col = [], [], []
    for i, (ids, labels) in enumerate(splits):
        split_col.append(np.full(len(ids), i, dtype=np.int16))
        id_col.append(np.asarray(ids, dtype=np.int32))
        label_col.extend(labels)
    splits_table = pa.table(
        {
            "split": pa.array(np.concatenate(split_col) if split_col else np.array([], np.int16)),
            "text_id": pa.array(np.concatenate(id_col) if id_col else np.array([], np.int32)),
            "label": pa.array(label_col, pa.string()),
        },
        schema=SPLITS_SCHEMA,
    )
    return texts_table, splits_table


def validate_dataset(texts: pa.Table, splits: pa.Table, name: str) -> None:
    """Check the dataset contract; raise :class:`ContractError` naming the dataset and split."""
    if texts.schema.field("text_id").type != pa.int32() or texts.schema.field("text").type != pa.string():
        raise ContractError(f"{name}: texts must have text_id int32 and text string, got {texts.schema}")
    ids = texts.column("text_id").to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ContractError(f"{name}: text_id must be dense 0..n-1 in row order")
    if len(ids) == 0:
        raise ContractError(f"{name}: no texts")
    split = splits.column("split").to_numpy()
    tid = splits.column("text_id").to_numpy()
    labels = np.asarray(splits.column("label").to_pylist(), dtype=object)
    if tid.size and (tid.min() < 0 or tid.max() >= len(ids)):
        raise ContractError(f"{name}: splits reference text_id outside 0..{len(ids) - 1}")
    if split.size == 0:
        raise ContractError(f"{name}: no splits")
    for s in np.unique(split):
        mask = split == s
        n_labels = len(set(labels[mask]))
        if mask.sum() < 2 or n_labels < 2:
            raise ContractError(
                f"{name}: split {s} has {int(mask.sum())} items and {n_labels} label(s); "
                "a clustering split needs at least two items and two labels"
            )


def tecb_metadata(metadata: dict, *, ensure_ascii: bool = True) -> dict[str, str]:
    """The Parquet schema metadata that records ``metadata`` under ``tecb`` (JSON, sorted keys); the one
    writer of it, read back by :func:`read_tecb_metadata`."""
    return {"tecb": json.dumps(metadata, sort_keys=True, ensure_ascii=ensure_ascii)}


def read_tecb_metadata(schema: pa.Schema, path) -> dict:
    """The ``tecb`` metadata of a Parquet ``schema`` (of the file ``path``); ``{}`` when none; unreadable JSON is
    a :class:`ContractError` naming the file."""
    raw = (schema.metadata or {}).get(b"tecb")
    if raw is None:
        return {}
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ContractError(f"{path}: unreadable metadata ({exc}); delete the file and re-run the workflow") from exc


def write_dataset(
    texts: list[str],
    splits: list[tuple[list[int], list[str]]],
    texts_path,
    splits_path,
    name: str,
    provenance: dict | None = None,
):
    """Validate and atomically write a dataset's ``texts.parquet`` and ``splits.parquet``; ``provenance`` (JSON,
    sorted keys, no paths or times) goes into both files' schema metadata under ``tecb``."""
    texts_table, splits_table = dataset_tables(texts, splits)
    validate_dataset(texts_table, splits_table, name)
    if provenance is not None:
        meta = tecb_metadata(provenance, ensure_ascii=False)
        texts_table = texts_table.replace_schema_metadata(meta)
        splits_table = splits_table.replace_schema_metadata(meta)
    write_table(texts_table, texts_path)
    write_table(splits_table, splits_path)
    return texts_table, splits_table


def write_texts(texts: list[str], path, *, provenance: dict) -> None:
    """Atomically write texts without splits in the ``texts.parquet`` contract (e.g. unlabelled texts to train on),
    ``provenance`` in the schema metadata under ``tecb``."""
    table = pa.table(
        {"text_id": pa.array(np.arange(len(texts), dtype=np.int32)), "text": pa.array(texts, pa.string())},
        schema=TEXTS_SCHEMA,
    )
    write_table(table.replace_schema_metadata(tecb_metadata(provenance, ensure_ascii=False)), path)


def read_dataset(texts_path, splits_path) -> tuple[pa.Table, pa.Table]:
    """A dataset's two tables; an unreadable file is a :class:`ContractError` naming it (delete it and re-run)."""
    return _read_parquet(texts_path, "dataset texts"), read_splits(splits_path)


def read_splits(splits_path) -> pa.Table:
    """A dataset's ``splits.parquet``; an unreadable file is a :class:`ContractError` naming it."""
    return _read_parquet(splits_path, "dataset splits")


def dataset_provenance(path) -> dict:
    """The provenance a dataset file (``texts.parquet`` or ``splits.parquet``) records; ``{}`` when none."""
    return read_tecb_metadata(read_parquet_schema(path, "dataset"), path)


def iter_splits(splits: pa.Table):
    """Yield ``(split, text_ids, labels)`` per split, rows in file order."""
    split = splits.column("split").to_numpy()
    tid = splits.column("text_id").to_numpy()
    labels = np.asarray(splits.column("label").to_pylist(), dtype=object)
    for s in np.unique(split):
        mask = split == s
        yield int(s), tid[mask], labels[mask]


# --- embeddings -----------------------------------------------------------------------------


VECTORS_SHA256 = "vectors_sha256"  # metadata key: sha256 of the vectors' little-endian float32 bytes, in row order


IDS_SHA256 = "ids_sha256"  # reduced files: sha256 of the split (int16) then text_id (int32) columns, little-endian


def file_sha256(path: str | os.PathLike, block: int = 1 << 20) -> str:
    """The SHA-256 hex digest of a file's bytes (read in blocks of ``block`` bytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def _ids_sha256(split, ids) -> str:
    hasher = hashlib.sha256(np.ascontiguousarray(split, dtype="<i2").tobytes())
    hasher.update(np.ascontiguousarray(ids, dtype="<i4").tobytes())
    return hasher.hexdigest()


def vectors_hasher():
    """A running sha256 over vectors: call :func:`update_vectors_hash` per batch, in row order."""
    return hashlib.sha256()


def update_vectors_hash(hasher, vectors: np.ndarray) -> None:
    hasher.update(np.ascontiguousarray(vectors, dtype="<f4").tobytes())


def vectors_sha256(vectors: np.ndarray) -> str:
    hasher = vectors_hasher()
    update_vectors_hash(hasher, vectors)
    return hasher.hexdigest()


def _unreadable(path, what: str, exc: BaseException) -> ContractError:
    """The error for a Parquet file of the workflow that cannot be read: its path, and to delete it and re-run."""
    return ContractError(
        f"{path}: cannot read the {what} file ({exc}); it is damaged or not a {what} file: "
        "delete it and re-run the workflow to recompute it"
    )


def _read_parquet(path, what: str) -> pa.Table:
    """Read a Parquet file; an unreadable file is a :class:`ContractError` naming it and what to do."""
    try:
        return pq.read_table(path)
    except (OSError, pa.ArrowException, ValueError) as exc:  # ArrowInvalid, IOError on corrupt pages/footers
        raise _unreadable(path, what, exc) from exc


def read_parquet_schema(path, what: str) -> pa.Schema:
    """The schema of a Parquet file (its footer only); an unreadable file is a :class:`ContractError` naming it and
    what to do, as :func:`_read_parquet` says it (for input functions and resource estimates that look before a
    job runs)."""
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise _unreadable(path, what, exc) from exc


def read_parquet_columns(path, columns: list[str], what: str) -> pa.Table:
    """Some columns of a Parquet file; an unreadable file is a :class:`ContractError` naming it (as above)."""
    try:
        return pq.read_table(path, columns=columns)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise _unreadable(path, what, exc) from exc


def _require_columns(table: pa.Table, path, what: str, vector_column: str, id_columns: tuple) -> None:
    """Columns and types of an embeddings/reduced file; a damaged schema is a :class:`ContractError` naming the file."""
    try:
        fields = {field.name: field.type for field in table.schema}
    except UnicodeDecodeError as exc:
        raise ContractError(f"{path}: damaged schema ({exc}); delete the file and re-run the workflow") from exc
    for name in id_columns:
        if name not in fields or not pa.types.is_integer(fields[name]):
            raise ContractError(
                f"{path}: not a valid {what} file (integer column {name!r} expected; columns: "
                f"{', '.join(f'{k} {v}' for k, v in fields.items())})"
            )
    vec = fields.get(vector_column)
    if vec is None or not pa.types.is_fixed_size_list(vec) or vec.value_type != pa.float32():
        raise ContractError(
            f"{path}: not a valid {what} file (column {vector_column!r} of fixed_size_list<float32> "
            f"expected; columns: {', '.join(f'{k} {v}' for k, v in fields.items())})"
        )


def nonfinite_rows(matrix: np.ndarray) -> np.ndarray:
    """Indices of the rows holding a NaN or an infinity."""
    return np.flatnonzero(~np.isfinite(matrix).all(axis=1))


def _check_vectors(path, matrix: np.ndarray, ids: np.ndarray, meta: dict, what: str, split=None) -> None:
    """Checksum (when recorded), then finiteness: errors name the file and the first bad text_id."""
    expected = meta.get(VECTORS_SHA256)
    if expected is not None and vectors_sha256(matrix) != expected:
        raise ContractError(
            f"{path}: the {what} do not match the checksum recorded in the file "
            f"({VECTORS_SHA256}); the file is corrupt: delete it and re-run the workflow"
        )
    _refuse_nonfinite(
        matrix,
        ids,
        split,
        lambda n, at, text_id: (
            f"{path}: {n} of {len(matrix)} {what} contain NaN or infinity, first at {at}text_id "
            f"{text_id}; recompute them (for embeddings: check the model, e.g. fp16 overflow; for reductions: the input "
            "embeddings)"
        ),
    )


def _refuse_nonfinite(matrix: np.ndarray, ids, split, message) -> None:
    """A :class:`ContractError` when rows of ``matrix`` hold NaN or infinity, worded by ``message(n, at, text_id)``:
    how many rows, where the first is (``"split S, "``, or "" without ``split``) and its text_id."""
    bad = nonfinite_rows(matrix)
    if len(bad):
        at = f"split {int(split[bad[0]])}, " if split is not None else ""
        raise ContractError(message(len(bad), at, int(ids[bad[0]])))


def read_embeddings(path, text_ids=None) -> tuple[np.ndarray, dict]:
    """Return the embedding matrix (row = text_id) and the provenance metadata of an embeddings file.

    Verified on reading: rows in text_id order 0..n-1, as many rows as the metadata's ``n_texts``, the
    vectors' sha256 (``vectors_sha256``, when recorded), no NaN/inf; ``text_ids`` (e.g. all ids a
    dataset's splits use) must each have a row. Every failure is a :class:`ContractError` naming the file.
    """
    table = _read_parquet(path, "embeddings")
    meta = read_tecb_metadata(table.schema, path)
    _require_columns(table, path, "embeddings", "embedding", ("text_id",))
    ids = table.column("text_id").to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        bad = int(np.flatnonzero(ids != np.arange(len(ids)))[0])
        raise ContractError(f"{path}: rows must be in text_id order 0..n-1; row {bad} has text_id {int(ids[bad])}")
    if "n_texts" in meta and int(meta["n_texts"]) != len(ids):
        raise ContractError(
            f"{path}: {len(ids)} vectors but the file records n_texts={meta['n_texts']}; "
            "delete it and re-run the workflow"
        )
    col = table.column("embedding").combine_chunks()
    dim = col.type.list_size
    matrix = col.flatten().to_numpy(zero_copy_only=False).reshape(len(ids), dim).astype(np.float32, copy=False)
    _check_vectors(path, matrix, ids, meta, "embedding vectors")
    if text_ids is not None and len(text_ids):
        text_ids = np.asarray(text_ids)
        missing = text_ids[(text_ids < 0) | (text_ids >= len(ids))]
        if missing.size:
            raise ContractError(
                f"{path}: no vector for text_id {int(missing.min())} ({np.unique(missing).size} "
                f"text_id(s) without a vector; the file has {len(ids)} rows): it was computed for "
                "another version of the dataset; delete it and re-run the workflow"
            )
    return matrix, meta


def embedding_schema(dim: int, metadata: dict) -> pa.Schema:
    return pa.schema(
        [("text_id", pa.int32()), ("embedding", pa.list_(pa.float32(), dim))],
        metadata=tecb_metadata(metadata),
    )


def embedding_batch(schema: pa.Schema, start: int, vectors: np.ndarray) -> pa.RecordBatch:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = vectors.shape[1]
    ids = pa.array(np.arange(start, start + len(vectors), dtype=np.int32))
    emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)
    return pa.record_batch([ids, emb], schema=schema)


# --- reduced coordinates --------------------------------------------------------------------


def reduced_table(parts: list[tuple[int, np.ndarray, np.ndarray]], metadata: dict, path=None) -> pa.Table:
    """``parts`` = [(split, text_ids, coords)]; coords stored as list<float32> column ``x``.

    The metadata also records ``vectors_sha256`` (the coordinates' float32 bytes in row order);
    NaN/inf coordinates are refused (a :class:`ContractError` naming ``path``, the file the table is for,
    and the split and text_id).
    """
    split = np.concatenate([np.full(len(ids), s, np.int16) for s, ids, _ in parts])
    ids = np.concatenate([np.asarray(ids, np.int32) for _, ids, _ in parts])
    coords = np.concatenate([np.asarray(c, np.float32) for _, _, c in parts])
    where = f"{path}: " if path is not None else ""
    _refuse_nonfinite(
        coords,
        ids,
        split,
        lambda n, at, text_id: (
            f"{where}{n} reduced coordinates are NaN or infinite, first at {at}text_id {text_id} "
            "(UMAP gives NaN to points disconnected from every other)"
        ),
    )
    dim = coords.shape[1]
    x = pa.FixedSizeListArray.from_arrays(pa.array(coords.reshape(-1)), dim)
    metadata = {**metadata, VECTORS_SHA256: vectors_sha256(coords), IDS_SHA256: _ids_sha256(split, ids)}
    schema = pa.schema(
        [("split", pa.int16()), ("text_id", pa.int32()), ("x", pa.list_(pa.float32(), dim))],
        metadata=tecb_metadata(metadata),
    )
    return pa.table([pa.array(split), pa.array(ids), x], schema=schema)


def read_reduced(path) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Return ``{split: (text_ids, coords)}`` from a reduced file, verified like :func:`read_embeddings`."""
    table = _read_parquet(path, "reduced")
    meta = read_tecb_metadata(table.schema, path)
    _require_columns(table, path, "reduced", "x", ("split", "text_id"))
    split = table.column("split").to_numpy()
    ids = table.column("text_id").to_numpy()
    col = table.column("x").combine_chunks()
    coords = col.flatten().to_numpy(zero_copy_only=False).reshape(len(ids), col.type.list_size)
    if IDS_SHA256 in meta and _ids_sha256(split, ids) != meta[IDS_SHA256]:
        raise ContractError(
            f"{path}: the split/text_id columns do not match the checksum recorded in the file "
            f"({IDS_SHA256}); the file is corrupt: delete it and re-run the workflow"
        )
    _check_vectors(path, coords, ids, meta, "reduced coordinates", split=split)
    return {int(s): (ids[split == s], coords[split == s]) for s in np.unique(split)}


# --- score files (one configuration's per-split scores) ---------------------------------------------

SCORES_SHA256 = "scores_sha256"  # metadata key: sha256 of the scores' columns and rows (:func:`scores_sha256`)


def scores_sha256(table: pa.Table) -> str:
    """The sha256 of a score table's content: its column names and its rows, as JSON (exact for floats)."""
    record = {"columns": table.column_names, "rows": table.to_pylist()}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def score_slot(path) -> str:
    """Which configuration a score file is, from its place ``.../{model}/{dataset}/{reduction}/{algorithm}.parquet``
    (the workflow's ``score_path``): ``"model/dataset/reduction/algorithm"``."""
    parts = Path(path).with_suffix("").parts
    return "/".join(parts[-4:])


def score_table(rows: list[dict], path) -> pa.Table:
    """One configuration's score table for the file ``path``, recording, as embeddings record their vectors'
    sha256, its content's sha256 (``scores_sha256``) and which configuration it is (``configuration``:
    :func:`score_slot`); :func:`check_scores` verifies both where the tables read it."""
    table = pa.Table.from_pylist(rows)
    meta = {SCORES_SHA256: scores_sha256(table), "configuration": score_slot(path)}
    return table.replace_schema_metadata(tecb_metadata(meta))


def _scores_problem(path, configuration: str) -> str | None:
    """Why the score file ``path`` is not what its writer wrote for ``configuration`` (None: it is); an unreadable
    file is a :class:`ContractError` naming it."""
    table = _read_parquet(path, "scores")
    meta = read_tecb_metadata(table.schema, path)
    recorded = meta.get("configuration")
    if recorded is not None and recorded != configuration:
        return f"{path}: holds the scores of {recorded}, not of {configuration} (a file copied over it)"
    if SCORES_SHA256 in meta and scores_sha256(table) != meta[SCORES_SHA256]:
        return f"{path}: its scores are not the ones written (sha256 differs from its record: edited or damaged)"
    return None


def check_scores(path, configuration: str) -> None:
    """Verify a score file: readable, its content the sha256 its writer recorded, and written for ``configuration``
    (``"model/dataset/reduction/algorithm"``; another configuration's file copied over it is refused). A file
    without the record (written before it existed) passes. A failure is a :class:`ContractError` naming the file."""
    problem = _scores_problem(path, configuration)
    if problem:
        raise ContractError(f"{problem}; a re-run of the same command removes and recomputes it")


def _fingerprint(path) -> list[int]:
    """What changes whenever a file's bytes do, whoever writes them: its inode, size, modification and status-change
    times (``cp -p`` keeps the modification time, never the status-change time)."""
    st = os.stat(path)
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def remove_wrong_scores(files: dict, log=print, cache=None) -> list[str]:
    """Remove each score file of ``files`` (path -> its configuration, ``"model/dataset/reduction/algorithm"``)
    that exists and fails :func:`check_scores` (unreadable, edited, another configuration's), naming it in the log;
    returns them. Run at a run's start: the job that writes one then writes it again in the same command. ``cache``
    (a JSON file): the fingerprints of the files that passed (:func:`_fingerprint`), so a start reads only the
    files written or touched since."""
    try:
        passed = json.loads(Path(cache).read_text()) if cache else {}
    except (OSError, ValueError):
        passed = {}
    removed, now = [], {}
    for path, configuration in files.items():
        try:
            fingerprint = _fingerprint(path)
        except FileNotFoundError:
            continue
        if passed.get(str(path)) == fingerprint:
            now[str(path)] = fingerprint
            continue
        try:
            problem = _scores_problem(path, configuration)
        except ContractError as exc:
            problem = str(exc)
        if problem:
            os.remove(path)
            removed.append(str(path))
            log(f"WARNING {problem}; removed: this run computes it again")
        else:
            now[str(path)] = fingerprint
    if cache and now != passed:
        write_json(now, cache)
    return removed
