"""File contracts and atomic writing.

Every output is written to a temporary file next to its target and renamed into place, so an
interrupted job never leaves a file that looks complete (design §9).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
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
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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


def write_dataset(texts: list[str], splits: list[tuple[list[int], list[str]]], texts_path, splits_path, name: str):
    """Validate and atomically write a dataset's ``texts.parquet`` and ``splits.parquet``."""
    texts_table, splits_table = dataset_tables(texts, splits)
    validate_dataset(texts_table, splits_table, name)
    write_table(texts_table, texts_path)
    write_table(splits_table, splits_path)
    return texts_table, splits_table


def read_dataset(texts_path, splits_path) -> tuple[pa.Table, pa.Table]:
    return pq.read_table(texts_path), pq.read_table(splits_path)


def iter_splits(splits: pa.Table):
    """Yield ``(split, text_ids, labels)`` per split, rows in file order."""
    split = splits.column("split").to_numpy()
    tid = splits.column("text_id").to_numpy()
    labels = np.asarray(splits.column("label").to_pylist(), dtype=object)
    for s in np.unique(split):
        mask = split == s
        yield int(s), tid[mask], labels[mask]


# --- embeddings -----------------------------------------------------------------------------


def read_embeddings(path) -> tuple[np.ndarray, dict]:
    """Return the embedding matrix (row = text_id) and the provenance metadata of an embeddings file."""
    table = pq.read_table(path)
    ids = table.column("text_id").to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ContractError(f"{path}: rows must be in text_id order 0..n-1")
    col = table.column("embedding").combine_chunks()
    dim = col.type.list_size
    matrix = col.flatten().to_numpy(zero_copy_only=False).reshape(len(ids), dim)
    meta = json.loads((table.schema.metadata or {}).get(b"tecb", b"{}"))
    return matrix.astype(np.float32, copy=False), meta


def embedding_schema(dim: int, metadata: dict) -> pa.Schema:
    return pa.schema(
        [("text_id", pa.int32()), ("embedding", pa.list_(pa.float32(), dim))],
        metadata={"tecb": json.dumps(metadata, sort_keys=True)},
    )


def embedding_batch(schema: pa.Schema, start: int, vectors: np.ndarray) -> pa.RecordBatch:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = vectors.shape[1]
    ids = pa.array(np.arange(start, start + len(vectors), dtype=np.int32))
    emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)
    return pa.record_batch([ids, emb], schema=schema)


# --- reduced coordinates --------------------------------------------------------------------


def reduced_table(parts: list[tuple[int, np.ndarray, np.ndarray]], metadata: dict) -> pa.Table:
    """``parts`` = [(split, text_ids, coords)]; coords stored as list<float32> column ``x``."""
    split = np.concatenate([np.full(len(ids), s, np.int16) for s, ids, _ in parts])
    ids = np.concatenate([np.asarray(ids, np.int32) for _, ids, _ in parts])
    coords = np.concatenate([np.asarray(c, np.float32) for _, _, c in parts])
    dim = coords.shape[1]
    x = pa.FixedSizeListArray.from_arrays(pa.array(coords.reshape(-1)), dim)
    schema = pa.schema(
        [("split", pa.int16()), ("text_id", pa.int32()), ("x", pa.list_(pa.float32(), dim))],
        metadata={"tecb": json.dumps(metadata, sort_keys=True)},
    )
    return pa.table([pa.array(split), pa.array(ids), x], schema=schema)


def read_reduced(path) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Return ``{split: (text_ids, coords)}`` from a reduced file."""
    table = pq.read_table(path)
    split = table.column("split").to_numpy()
    ids = table.column("text_id").to_numpy()
    col = table.column("x").combine_chunks()
    coords = col.flatten().to_numpy(zero_copy_only=False).reshape(len(ids), col.type.list_size)
    return {int(s): (ids[split == s], coords[split == s]) for s in np.unique(split)}
