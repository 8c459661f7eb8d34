"""Clustering algorithms with the paper's parameters (design §5).

``kmeans`` and ``agglomerative`` are told the number of labels of the split; ``hdbscan`` and
``dbstream`` are not. Every algorithm is seeded where it takes a seed.
"""

from __future__ import annotations

import time

import numpy as np

from tecb.metrics import score

METHODS = ("minibatch_kmeans", "agglomerative", "hdbscan", "dbstream")


class MemoryLimitError(RuntimeError):
    """A clustering would need more memory than the configured limit (``cluster.max_memory_gb``)."""


def memory_estimate(method: str, n: int, dim: int) -> int:
    """Bytes a clustering of ``n`` points in ``dim`` dimensions needs beyond its input, roughly.

    Agglomerative (no connectivity) builds the condensed pairwise distance matrix, n(n-1)/2 float64
    (2.7 GB at n = 26,000), and scipy's linkage works on a copy of it: 2 x that (5.4 GB at 26k; the
    benchmark measured +1.2 GB at n = 13,000, estimate 1.35 GB), plus a float64 copy of the input.
    The others are linear in ``n``.
    """
    copy = n * dim * 8
    if method == "agglomerative":
        return n * (n - 1) * 8 + copy
    return copy


def check_memory(method: str, n: int, dim: int, max_memory_gb: float | None, where: str = "") -> float:
    """Raise :class:`MemoryLimitError` if :func:`memory_estimate` exceeds ``max_memory_gb``; return the GB."""
    gb = memory_estimate(method, n, dim) / 1e9
    if max_memory_gb is not None and gb > max_memory_gb:
        raise MemoryLimitError(
            f"{where}{method} on {n} points x {dim} dims needs ~{gb:.1f} GB (O(n^2) pairwise distances), "
            f"above the limit cluster.max_memory_gb = {max_memory_gb}; raise the limit in the config "
            "(if the machine has the memory) or drop this configuration for this dataset")
    return gb


def minibatch_kmeans(x, n_clusters, seed=42, batch_size=500, n_init="auto", **params):
    """MiniBatchKMeans exactly as MTEB's clustering evaluator runs it."""
    from sklearn.cluster import MiniBatchKMeans

    model = MiniBatchKMeans(n_clusters=n_clusters, batch_size=batch_size, n_init=n_init, random_state=seed, **params)
    return model.fit(x).labels_


def agglomerative(x, n_clusters, seed=42, **params):
    """AgglomerativeClustering (ward, euclidean) with the number of labels as ``n_clusters``."""
    from sklearn.cluster import AgglomerativeClustering

    return AgglomerativeClustering(n_clusters=n_clusters, **params).fit_predict(x)


def hdbscan(x, n_clusters=None, seed=42, **params):
    """HDBSCAN with the ``hdbscan`` package defaults; noise is labelled -1."""
    import hdbscan as hdbscan_lib

    return hdbscan_lib.HDBSCAN(**params).fit_predict(np.asarray(x, dtype=np.float64))


def dbstream(x, n_clusters=None, seed=42, **params):
    """river's DBSTREAM: one pass of ``learn_one`` over the rows in order, then ``predict_one`` for each."""
    from river import cluster

    model = cluster.DBSTREAM(**params)
    rows = [dict(enumerate(map(float, row))) for row in np.asarray(x)]
    for row in rows:
        model.learn_one(row)
    return np.array([model.predict_one(row) for row in rows])


ALGORITHMS = {
    "minibatch_kmeans": minibatch_kmeans,
    "agglomerative": agglomerative,
    "hdbscan": hdbscan,
    "dbstream": dbstream,
}


def cluster(x: np.ndarray, method: str, n_clusters: int, seed: int = 42, **params) -> np.ndarray:
    """Cluster the rows of ``x`` with a named method; return one label per row."""
    if method not in ALGORITHMS:
        raise ValueError(f"unknown clustering method {method!r}; known: {', '.join(METHODS)}")
    return np.asarray(ALGORITHMS[method](x, n_clusters, seed=seed, **params))


def degenerate(n_clusters: int, n_texts: int) -> str:
    """Why a clustering is degenerate ('' if it is not): one cluster for all, or one cluster per text."""
    if n_clusters <= 1:
        return "one cluster for all texts"
    if n_clusters >= n_texts:
        return "one cluster per text"
    return ""


def score_splits(points_by_split, spec: dict, seed: int = 42, log=print) -> list[dict]:
    """Cluster every split and score it; ``points_by_split`` yields ``(split, points, labels)``.

    A degenerate clustering (see :func:`degenerate`) is scored, flagged (``degenerate`` column) and
    logged as a warning; HDBSCAN noise (-1) counts as one cluster and its share is ``noise_fraction``.
    """
    spec = dict(spec)
    method = spec.pop("method")
    params = spec.pop("params", {}) or {}
    rows = []
    for split, points, labels in points_by_split:
        n_labels = len(set(labels.tolist()))
        start = time.perf_counter()
        predicted = cluster(points, method, n_labels, seed=seed, **params)
        seconds = time.perf_counter() - start
        row = {"split": int(split), **score(labels, predicted), "seconds": round(seconds, 4)}
        why = degenerate(row["n_clusters"], row["n_texts"])
        row["degenerate"] = bool(why)
        if why:
            log(f"WARNING split {split}: degenerate result, {method} gave {why} ({len(labels)} texts)")
        if row["noise_fraction"] > 0:
            log(f"split {split}: {row['noise_fraction']:.1%} of the texts are noise (-1, scored as one cluster)")
        log(f"split {split}: {len(labels)} texts, {n_labels} labels -> {row['n_clusters']} clusters, "
            f"V-measure {row['v_measure']:.4f} ({seconds:.2f} s)")
        rows.append(row)
    return rows


def run_configurations(embeddings_path, splits_path, reduced_paths: dict, configurations, algorithms: dict,
                       outputs, seed: int = 42, log=print, max_memory_gb: float | None = None) -> None:
    """Score every ``(algorithm, reduction)`` of ``configurations`` on one (model, dataset).

    ``reduced_paths`` maps reduction names to reduced files (``none`` = the raw embeddings);
    ``outputs`` holds one score file per configuration, in the same order. The memory of every
    (configuration, split) is estimated first: above ``max_memory_gb`` nothing runs.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tecb import io

    embeddings, _ = io.read_embeddings(embeddings_path)
    splits = list(io.iter_splits(pq.read_table(splits_path)))
    reduced = {name: io.read_reduced(path) for name, path in reduced_paths.items()}
    for algorithm, reduction in configurations:
        dim = embeddings.shape[1] if reduction == "none" else next(iter(reduced[reduction].values()))[1].shape[1]
        n = max(len(ids) for _, ids, _ in splits)
        gb = check_memory(algorithms[algorithm]["method"], n, dim, max_memory_gb,
                          where=f"{embeddings_path}: configuration ({algorithm}, {reduction}), largest split: ")
        log(f"memory estimate ({algorithm}, {reduction}): {gb:.2f} GB at the largest split ({n} texts)")
    for (algorithm, reduction), out in zip(configurations, outputs):
        log(f"== {algorithm} on {reduction}")
        if reduction == "none":
            points = ((s, embeddings[ids], labels) for s, ids, labels in splits)
        else:
            points = ((s, _aligned(reduced[reduction], s, ids), labels) for s, ids, labels in splits)
        rows = score_splits(points, algorithms[algorithm], seed=seed, log=log)
        io.write_table(pa.Table.from_pylist(rows), out)


def _aligned(reduced: dict, split: int, ids) -> np.ndarray:
    """Coordinates of one split, checked to be in the split's row order."""
    red_ids, coords = reduced[split]
    if not np.array_equal(red_ids, ids):
        raise ValueError(f"reduced coordinates of split {split} do not match the split's rows")
    return coords
