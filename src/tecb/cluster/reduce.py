"""Dimensionality reduction per split (design §5): ``pca``, ``umap``, ``pca_umap``.

Each reduction is fitted on one split's rows (its embeddings, in split order) and seeded, so the
same input gives the same coordinates. ``none`` means the raw embeddings and writes no file.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

METHODS = ("pca", "umap", "pca_umap")


def pca(x: np.ndarray, n_components: int = 2, *, seed: int) -> np.ndarray:
    from sklearn.decomposition import PCA

    n = min(n_components, x.shape[0], x.shape[1])
    return PCA(n_components=n, random_state=seed).fit_transform(x).astype(np.float32)


def cache_umap_compilation() -> int:
    """Turn on numba's on-disk cache for the compiled functions of umap and pynndescent; return how many.

    Most of umap's ``@numba.njit`` functions are not declared ``cache=True``, so every process compiles them
    again (30-37 s CPU of numba in a process running umap's small-split route and NN-descent without a cache;
    11-12 s with a warm cache, nearly all of it pynndescent's ``nn_descent``, which numba refuses to cache
    ("uses dynamic globals"); the process that fills an empty cache spends 37-54 s; measured:
    benchmarks/paper_run_projection.md). This
    calls numba's public ``Dispatcher.enable_caching()`` on those two packages' module-level functions only
    (nothing is replaced, numba's decorators and other packages are untouched), so a later process loads the
    same machine code from disk: identical results. The cache goes to ``NUMBA_CACHE_DIR`` if the process
    set it before importing numba (the reduce job does), else next to the packages or in the user cache.
    Call it in a job's process before the first UMAP; calling it again does nothing more.
    """
    import sys

    import pynndescent  # noqa: F401  (imports its modules)
    import umap  # noqa: F401
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    count = 0
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("umap", "pynndescent"):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, Dispatcher) and isinstance(obj._cache, NullCache):
                obj.enable_caching()
                count += 1
    return count


#: umap-learn computes all pairwise distances, instead of NN-descent, below this many points.
SMALL_DATA = 4096
_KERNELS: dict = {}


def _pairwise_kernel(metric: str):
    """A compiled loop calling umap's own distance function for every pair (memoised per metric)."""
    if metric not in _KERNELS:
        import numba
        from umap.distances import named_distances

        distance = named_distances[metric]

        @numba.njit
        def kernel(x):
            n = x.shape[0]
            upper = np.zeros((n, n), dtype=x.dtype)
            diagonal = np.empty(n, dtype=x.dtype)
            for i in range(n):
                for j in range(i + 1, n):
                    upper[i, j] = distance(x[i], x[j])
                diagonal[i] = distance(x[i], x[i])
            return upper, diagonal

        _KERNELS[metric] = kernel
    return _KERNELS[metric]


def small_data_knn(x: np.ndarray, n_neighbors: int, metric: str):
    """umap's exact nearest neighbours of a small split, computed in compiled code: ``(indices, distances)``.

    Below :data:`SMALL_DATA` points umap-learn (0.5) computes the full distance matrix with
    ``sklearn.metrics.pairwise_distances(x, metric=<umap's numba distance>)``, which calls the distance once
    per pair from Python (~11 s of a 13.6 s UMAP at 3,000 x 768). This computes the same matrix (the same
    compiled distance function on the same float32 rows, stored in the same dtype; ``==`` tested) in one
    compiled loop, then takes the neighbours exactly as umap does for a precomputed matrix (distances at or
    beyond the metric's disconnection distance become ``inf``; ``umap.utils.fast_knn_indices``), so UMAP
    given them as ``precomputed_knn`` builds the same graph and gives the same coordinates. ``None`` where
    umap would not take its small-data route (too many or too few points, a metric it does not name).
    """
    from umap.distances import named_distances
    from umap.umap_ import DISCONNECTION_DISTANCES
    from umap.utils import fast_knn_indices

    if not (n_neighbors < len(x) < SMALL_DATA) or metric not in named_distances:
        return None
    x = np.ascontiguousarray(x, dtype=np.float32)  # what umap.UMAP.fit passes on (check_array float32)
    upper, diagonal = _pairwise_kernel(metric)(x)
    dmat = upper + upper.T  # as scikit-learn's pairwise_distances assembles it
    dmat[np.diag_indices(len(x))] = diagonal
    dmat[dmat >= DISCONNECTION_DISTANCES.get(metric, np.inf)] = np.inf
    indices = fast_knn_indices(dmat, n_neighbors)
    distances = dmat[np.arange(len(x))[:, None], indices].copy()
    indices[distances == np.inf] = -1
    return indices, distances


def umap(x: np.ndarray, n_components: int = 2, metric: str = "cosine", *, seed: int, **params) -> np.ndarray:
    """UMAP with the paper's settings (2 components, cosine, other defaults) and a fixed seed.

    Further keyword arguments (``n_neighbors``, ``min_dist``, ...) go to ``umap.UMAP``. The spectral
    initialisation is seeded too (:mod:`tecb.cluster.spectral`): with duplicate rows, stock umap's eigensolver
    restarts from OS entropy and the coordinates differ in every process. Small splits get their exact
    neighbours from :func:`small_data_knn` (same coordinates as umap's own small-data route, 3-4x faster).
    """
    from tecb.cluster.spectral import seeded_umap_class

    n_neighbors = min(params.pop("n_neighbors", 15), max(2, x.shape[0] - 1))
    knn = None
    if not (set(params) & {"precomputed_knn", "force_approximation_algorithm", "unique", "metric_kwds"}):
        knn = small_data_knn(x, n_neighbors, metric)
    if knn is not None:
        params["precomputed_knn"] = (*knn, None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*overridden.*")
        warnings.filterwarnings("ignore", message=r".*precomputed_knn\[2\].*")
        reducer = seeded_umap_class()(
            n_components=n_components, metric=metric, random_state=seed, n_neighbors=n_neighbors, **params
        )
        return reducer.fit_transform(x).astype(np.float32)


def reduce(
    x: np.ndarray,
    method: str,
    *,
    seed: int,
    n_components: int = 2,
    pca_components: int = 50,
    metric: str = "cosine",
    **params,
) -> np.ndarray:
    """Reduce ``x`` with a named method; ``pca_umap`` = PCA to ``pca_components`` dims, then UMAP."""
    if method == "pca":
        if params or pca_components != 50:
            extra = sorted(set(params) | ({"pca_components"} if pca_components != 50 else set()))
            raise ValueError(f"reduction method 'pca' takes only n_components; got {', '.join(extra)}")
        return pca(x, n_components, seed=seed)
    if method == "umap":
        return umap(x, n_components, metric, seed=seed, **params)
    if method == "pca_umap":
        return umap(pca(x, pca_components, seed=seed), n_components, metric, seed=seed, **params)
    raise ValueError(f"unknown reduction method {method!r}; known: {', '.join(METHODS)}")


def memory_estimate(method: str, n: int, dim: int, n_neighbors: int = 15, **_spec) -> int:
    """Bytes one reduction of ``n`` points in ``dim`` dimensions needs beyond its input, roughly.

    A float64 copy of the split's rows (PCA centres it), and for UMAP the nearest-neighbour graph and its
    fuzzy union (pynndescent's heaps and candidate lists, ~2 KB a point with 15 neighbours; measured: 26k x
    768 peaked at ~560 MB above an idle Python, estimate 0.22 GB + the input).
    """
    copy = n * dim * 8
    if method == "pca":
        return 2 * copy
    return copy + n * 2000 * max(1, n_neighbors) // 15


#: What umap, pynndescent and numba's compiled code add to a job process (MB): a demo-sized UMAP job peaked at
#: 526 MB against ~280 MB for a clustering job (benchmarks/resources_check.md).
UMAP_IMPORTS_MB = 250


def job_memory_mb(spec: dict, splits_path, embeddings_path, base_mb: int = 500) -> int:
    """Memory to declare (Snakemake ``mem_mb``) for one reduce job: :func:`memory_estimate` at the largest
    split, ``base_mb`` (Python and imports; :data:`UMAP_IMPORTS_MB` more for UMAP) and
    :data:`tecb.cluster.algorithms.FILE_READ_FACTOR` x the embeddings file, times the clustering jobs' headroom
    (:data:`tecb.cluster.algorithms.HEADROOM`); ``base_mb`` before the inputs exist."""
    from tecb.cluster.algorithms import declared_memory_mb

    params = dict(spec)
    method = params.pop("method")
    return declared_memory_mb(
        lambda n, dim: memory_estimate(method, n, dim, **params),
        splits_path,
        embeddings_path,
        base_mb,
        imports_mb=UMAP_IMPORTS_MB if method != "pca" else 0,
    )


def reduce_splits(embeddings: np.ndarray, splits, spec: dict, *, seed: int, log=print):
    """Yield ``(split, text_ids, coords)`` for every split of a dataset (``splits`` from :func:`tecb.io.iter_splits`)."""
    spec = dict(spec)
    method = spec.pop("method")
    for split, ids, _labels in splits:
        log(f"split {split}: reducing {len(ids)} x {embeddings.shape[1]} with {method} ...")  # a long step says so
        coords = reduce(embeddings[ids], method, seed=seed, **spec)
        log(f"split {split}: {len(ids)} x {embeddings.shape[1]} -> {coords.shape[1]} ({method})")
        yield split, ids, coords


@dataclass(frozen=True)
class ReduceFiles:
    """A reduction's files: the (model, dataset)'s ``embeddings`` and ``splits`` (read) and the ``reduced`` file
    (written, :func:`tecb.io.reduced_table`)."""

    embeddings: str | Path
    splits: str | Path
    reduced: str | Path


def run_reduction(
    spec: dict,
    *,
    files: ReduceFiles,
    reduction: str,
    seed: int,
    threads: int,
    cache_umap: bool,
    log=print,
) -> None:
    """Reduce every split of one (model, dataset)'s embeddings with ``spec`` (named ``reduction``) and write the
    reduced file: what a reduce job does, and a batched job for each of its reductions.
    ``cache_umap``: a UMAP reduction first turns on numba's on-disk cache (:func:`cache_umap_compilation`;
    the process must have set ``NUMBA_CACHE_DIR`` before importing numba)."""
    import pyarrow.parquet as pq
    from threadpoolctl import threadpool_limits

    from tecb import io

    if cache_umap and spec["method"] != "pca":
        log(f"numba cache: {cache_umap_compilation()} umap/pynndescent functions newly cached")
    out = files.reduced
    splits = list(io.iter_splits(pq.read_table(files.splits)))
    embeddings, _meta = io.read_embeddings(files.embeddings, text_ids=[i for _, ids, _ in splits for i in ids])
    log(f"== {reduction}: {spec}")
    with threadpool_limits(threads):
        parts = list(reduce_splits(embeddings, splits, spec, seed=seed, log=log))
    io.write_table(io.reduced_table(parts, {"reduction": reduction, **spec, "seed": seed}, path=out), out)
