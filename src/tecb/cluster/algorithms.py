"""Clustering algorithms with the paper's parameters (design §5).

``kmeans`` and ``agglomerative`` are told the number of labels of the split; ``hdbscan`` and
``dbstream`` are not. Every algorithm is seeded where it takes a seed. Besides the four built-in
methods, ``method`` may be the import path of any scikit-learn-style estimator class
(``sklearn.cluster.SpectralClustering``): it is told ``n_clusters`` and ``random_state`` where its
signature takes them (see :func:`resolve_method`, :func:`validate_algorithm`).

Ward (``agglomerative`` with its defaults) runs on exact, faster routes that give scikit-learn's
partition (see :func:`ward`).
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

METHODS = ("minibatch_kmeans", "agglomerative", "hdbscan", "dbstream")

#: Ward on points with at most this many dimensions uses ``fastcluster.linkage_vector`` (O(n d) memory).
LOW_DIM = 8
#: Rows per block when the pairwise distances are computed with BLAS.
BLOCK = 256
#: Merge heights closer than this (relative) count as tied; see :func:`ward`.
TIE_RTOL = 1e-9


class MemoryLimitError(RuntimeError):
    """A clustering would need more memory than the configured limit (``cluster.max_memory_gb``)."""


# --- import-path algorithms ----------------------------------------------------------------------


def resolve_method(method: str):
    """The estimator class named by an import path such as ``sklearn.cluster.SpectralClustering``."""
    module_name, _, attr = method.rpartition(".")
    if not module_name:
        raise ValueError(
            f"unknown clustering method {method!r}; known: {', '.join(METHODS)} "
            "or the import path of an estimator class (e.g. sklearn.cluster.SpectralClustering)"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"clustering method {method!r}: cannot import module {module_name!r} ({err})") from err
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValueError(f"clustering method {method!r}: module {module_name!r} has no attribute {attr!r}")
    if not inspect.isclass(cls):
        raise ValueError(f"clustering method {method!r} is not a class")
    if not (hasattr(cls, "fit_predict") or hasattr(cls, "fit")):
        raise ValueError(f"clustering method {method!r} has neither fit_predict nor fit (with labels_)")
    return cls


def _signature_params(cls) -> tuple[set[str], bool]:
    """Keyword names of ``cls``'s constructor and whether it takes ``**kwargs``."""
    sig = inspect.signature(cls.__init__)
    names = {
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    }
    return names, any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())


def validate_algorithm(key: str, spec: dict) -> None:
    """Check one entry of the config's ``algorithms`` up front; errors name ``algorithms.<key>``.

    Built-in methods are accepted by name; an import path must name an importable class with
    ``fit_predict`` (or ``fit`` and ``labels_``) whose constructor accepts every key of ``params``.
    """
    method = spec.get("method")
    params = spec.get("params") or {}
    where = f"config: algorithms.{key}.method = {method!r}"
    if not isinstance(method, str) or not method:
        raise ValueError(f"config: algorithms.{key} needs a `method`")
    if method in METHODS:
        return
    try:
        cls = resolve_method(method)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    names, var_kw = _signature_params(cls)
    unknown = sorted(set(params) - names) if not var_kw else []
    if unknown:
        raise ValueError(
            f"config: algorithms.{key}.params: {method} takes no parameter(s) {', '.join(unknown)} "
            f"(it takes: {', '.join(sorted(names))})"
        )


def estimator_labels(x, method: str, n_clusters: int, *, seed: int, **params) -> np.ndarray:
    """Fit the estimator class at import path ``method``; told ``n_clusters``/``random_state`` if it takes them."""
    cls = resolve_method(method)
    names, _ = _signature_params(cls)
    kwargs = dict(params)
    if "n_clusters" in names:
        kwargs.setdefault("n_clusters", n_clusters)
    if "random_state" in names:
        kwargs.setdefault("random_state", seed)
    model = cls(**kwargs)
    if hasattr(model, "fit_predict"):
        return np.asarray(model.fit_predict(x))
    return np.asarray(model.fit(x).labels_)


# --- memory --------------------------------------------------------------------------------------


def ward_route(dim: int, params: dict | None = None) -> str:
    """How :func:`agglomerative` runs: ``vector`` (low-dim), ``blas`` (high-dim) or ``sklearn`` (non-Ward)."""
    params = params or {}
    default_ward = (
        set(params) <= {"linkage", "metric"}
        and params.get("linkage", "ward") == "ward"
        and params.get("metric", "euclidean") == "euclidean"
    )
    if not default_ward:
        return "sklearn"
    return "vector" if dim <= LOW_DIM else "blas"


def _condensed_bytes(n: int) -> int:
    return n * (n - 1) // 2 * 8


def memory_estimate(method: str, n: int, dim: int, params: dict | None = None) -> int:
    """Bytes a clustering of ``n`` points in ``dim`` dimensions needs beyond its input, roughly.

    Agglomerative (Ward) on few dimensions (``dim <= LOW_DIM``) runs ``fastcluster.linkage_vector``:
    a float64 copy of the input and O(n) work arrays (~0.4 MB at 26k x 2, where scikit-learn needs 5.4 GB).
    On more dimensions it builds the condensed pairwise distance matrix, n(n-1)/2 float64 (2.7 GB
    at n = 26,000), which scipy's linkage copies: 2 x that (5.4 GB at 26k; the benchmark measured
    +1.2 GB at n = 13,000, estimate 1.35 GB), plus the float64 input and the BLAS blocks. Other
    agglomerative settings run scikit-learn (the same two matrices). The others are linear in ``n``
    (an import-path estimator is assumed to be; its real needs are unknown).
    """
    copy = n * dim * 8
    if method == "agglomerative":
        route = ward_route(dim, params)
        if route == "vector":
            return 2 * copy + n * 10 * 8
        if route == "blas":
            return 2 * _condensed_bytes(n) + copy + 3 * min(BLOCK, n) * n * 8
        return 2 * _condensed_bytes(n) + copy
    return copy


def check_memory(
    method: str, n: int, dim: int, max_memory_gb: float | None, where: str = "", params: dict | None = None
) -> float:
    """Raise :class:`MemoryLimitError` if :func:`memory_estimate` exceeds ``max_memory_gb``; return the GB."""
    gb = memory_estimate(method, n, dim, params) / 1e9
    if max_memory_gb is not None and gb > max_memory_gb:
        raise MemoryLimitError(
            f"{where}{method} on {n} points x {dim} dims needs ~{gb:.1f} GB (O(n^2) pairwise distances), "
            f"above the limit cluster.max_memory_gb = {max_memory_gb}; raise the limit in the config "
            "(if the machine has the memory) or drop this configuration for this dataset"
        )
    return gb


def split_shape(splits_path, points_path) -> tuple[int, int]:
    """``(largest split's size, dimensions)`` of one (model, dataset, reduction), read without loading the points.

    ``points_path`` is an embeddings file or a reduced file (both store fixed-size vectors).
    """
    from tecb import io

    split = io.read_parquet_columns(splits_path, ["split"], "splits").column("split").to_numpy()
    n = int(np.bincount(split - split.min()).max()) if len(split) else 0
    what = "embeddings" if "embeddings" in str(points_path) else "reduced"
    schema = io.read_parquet_schema(points_path, what)
    name = "embedding" if "embedding" in schema.names else "x"
    if name not in schema.names or not hasattr(schema.field(name).type, "list_size"):
        raise io.ContractError(
            f"{points_path}: not a valid {what} file (no fixed-size vector column; columns: "
            f"{', '.join(schema.names)}): delete it and re-run the workflow to recompute it"
        )
    return n, int(schema.field(name).type.list_size)


#: Memory (MB) a job process needs besides the estimate: Python, numpy/scikit-learn/pyarrow and the input file.
BASE_MB = 500
#: Declared memory = HEADROOM x (BASE_MB + estimate): the estimates are approximate (the 26k-point Ward job
#: peaked at ~6.5 GB against 6.6 GB estimated) and benchmarks/check_resources.py wants declared >= 1.25 x peak.
HEADROOM = 1.3


def job_memory_mb(method: str, params: dict | None, splits_path, points_path, base_mb: int = BASE_MB) -> int:
    """Memory to declare (Snakemake ``mem_mb``) for clustering one (model, dataset, reduction) with ``method``.

    The same :func:`memory_estimate` as the guard, at the largest split, plus ``base_mb`` and
    :data:`FILE_READ_FACTOR` x the points file (it is read whole), times :data:`HEADROOM`. Before the inputs
    exist (DAG building) only ``base_mb``: Snakemake evaluates resources again when the job is ready to run.
    """
    return declared_memory_mb(lambda n, dim: memory_estimate(method, n, dim, params), splits_path, points_path, base_mb)


#: Peak memory of reading a points file whole (:func:`tecb.io.read_embeddings`: Parquet's decoded pages, the Arrow
#: column, the matrix), in units of the file's size: ~4.5 x measured at 31-124 MB files (+ ~100 MB for Arrow's
#: pool, in :data:`BASE_MB`); the paper-scale k-means job on raw RedditClusteringS2S peaked at 1,049 MB when the
#: file counted twice (declared 1,197)
FILE_READ_FACTOR = 5


def declared_memory_mb(estimate, splits_path, points_path, base_mb: int, imports_mb: int = 0) -> int:
    """:data:`HEADROOM` x (``base_mb`` + ``imports_mb`` + ``estimate(n, dim)`` bytes at the largest split +
    :data:`FILE_READ_FACTOR` x the points file (read whole), in MB rounded up); only ``base_mb`` while the inputs do
    not exist yet. Shared by the cluster and reduce jobs."""
    import os

    if not (os.path.exists(splits_path) and os.path.exists(points_path)):
        return base_mb
    n, dim = split_shape(splits_path, points_path)
    extra = estimate(n, dim) + FILE_READ_FACTOR * os.path.getsize(points_path)
    return int(HEADROOM * (base_mb + imports_mb + -(-extra // 1_000_000)))


# --- exact Ward ----------------------------------------------------------------------------------


def pairwise_condensed(x: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Condensed Euclidean distances (as :func:`scipy.spatial.distance.pdist`) computed with BLAS.

    ``|a - b|^2 = |a|^2 + |b|^2 - 2 a.b`` in float64, block by block of rows; identical rows get exactly 0
    (as ``pdist`` gives), so duplicate texts tie exactly as they do in scikit-learn. Values agree with
    ``pdist`` to ~1e-13 (relative to the norms).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    n = len(x)
    _, inverse = np.unique(x, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    has_duplicates = len(np.unique(inverse)) < n
    sq = np.einsum("ij,ij->i", x, x)
    out = np.empty(n * (n - 1) // 2)
    pos = 0
    for a in range(0, n, block):
        b = min(n, a + block)
        d2 = x[a:b] @ x[a:].T
        d2 *= -2.0
        d2 += sq[a:b, None]
        d2 += sq[None, a:]
        np.maximum(d2, 0.0, out=d2)
        np.sqrt(d2, out=d2)
        for i in range(a, b):
            row = d2[i - a, i - a + 1 :]
            if has_duplicates:
                row[inverse[i + 1 :] == inverse[i]] = 0.0
            out[pos : pos + len(row)] = row
            pos += len(row)
    return out


def cut_tree(linkage: np.ndarray, n_clusters: int) -> np.ndarray:
    """Labels of the ``n_clusters`` clusters left after the first ``n - n_clusters`` merges of ``linkage``.

    This is how scikit-learn cuts its Ward tree (it undoes the last ``n_clusters - 1`` merges), not
    ``fcluster``'s height threshold, which gives fewer clusters when heights tie at the cut. Labels are
    numbered in the order of each cluster's first row.
    """
    n = len(linkage) + 1
    parent = np.arange(2 * n - 1)
    for m in range(n - n_clusters):
        parent[int(linkage[m, 0])] = n + m
        parent[int(linkage[m, 1])] = n + m
    roots = np.arange(n)
    while True:  # pointer jumping: every row ends at its cluster's root
        nxt = parent[roots]
        if np.array_equal(nxt, roots):
            break
        roots = nxt
    _, first, labels = np.unique(roots, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[labels.ravel()].astype(np.int64)


#: How many of the last merges (the top of the tree, which decides the cut) are checked for ties: TIE_TOP * n_clusters.
TIE_TOP = 10


def _tied(heights: np.ndarray, n_clusters: int) -> bool:
    """Whether merge heights tie (within :data:`TIE_RTOL`) near the top of the tree, where they decide the cut.

    Checked: the cut itself falling among the zero-height merges (more clusters than distinct points), and any
    two of the last ``TIE_TOP * n_clusters + 100`` positive heights being equal. Exact ties between tiny bottom
    merges (float32 coordinates an ulp apart) are common in UMAP output and are not checked: they join disjoint
    pairs, which commute.
    """
    n = len(heights) + 1
    if n_clusters > 1 and heights[n - n_clusters] <= 0.0:
        return True
    top = heights[-min(len(heights), TIE_TOP * n_clusters + 100) :]
    top = top[top > 0]
    return bool(len(top) > 1 and np.any(np.diff(top) <= TIE_RTOL * top[1:]))


def ward(
    x: np.ndarray, n_clusters: int, max_memory_gb: float | None = None, route: str | None = None, log=None
) -> np.ndarray:
    """Ward clustering into ``n_clusters`` with the same partition as ``sklearn.cluster.AgglomerativeClustering``.

    scikit-learn computes ``scipy.cluster.hierarchy.ward`` on ``pdist(x)`` and undoes the last
    ``n_clusters - 1`` merges. Routes:

    - ``blas`` (more than :data:`LOW_DIM` dims): the distances by BLAS (:func:`pairwise_condensed`),
      then scipy's Ward linkage: the same algorithm with the same tie-breaking, 3.5-4.6x less CPU at
      2,000-9,000 x 768 (median of 3 runs; benchmarks/paper_run_projection.md).
    - ``vector`` (few dims): ``fastcluster.linkage_vector`` (Ward from cluster centroids), O(n d) memory,
      6-11x less CPU at 2,000-9,000 x 2.

    Both compute the merge costs with different rounding than scikit-learn (~1e-13 relative). They
    give its partition unless two competing merge costs are that close; tied heights near the top of the
    tree (grids, duplicate rows at the cut; :func:`_tied`) are detected and then rerun on scikit-learn's
    own route (``pdist`` + scipy), which resolves ties as scikit-learn does. Identical rows get exactly
    zero distance on every route, so duplicate texts merge first, as in scikit-learn.
    """
    x = np.asarray(x)
    n = len(x)
    if n_clusters >= n or n < 2:
        return np.arange(n)
    if n_clusters < 1:
        raise ValueError(f"n_clusters must be at least 1, got {n_clusters}")
    route = route or ward_route(x.shape[1])
    x64 = np.ascontiguousarray(x, dtype=np.float64)
    z = _ward_linkage(x64, route)
    if route != "sklearn" and _tied(z[:, 2], n_clusters):
        if log:
            log(f"Ward: tied merge heights ({route} route); recomputing on scikit-learn's route for its tie-breaking")
        gb = (2 * _condensed_bytes(n) + x64.nbytes) / 1e9
        if max_memory_gb is not None and gb > max_memory_gb:
            raise MemoryLimitError(
                f"Ward on {n} points x {x.shape[1]} dims has tied merge heights; resolving them as scikit-learn "
                f"does needs ~{gb:.1f} GB (pdist), above cluster.max_memory_gb = {max_memory_gb}"
            )
        return ward(x64, n_clusters, max_memory_gb, route="sklearn")
    return cut_tree(z, n_clusters)


def _ward_linkage(x64: np.ndarray, route: str) -> np.ndarray:
    """Ward's linkage matrix of ``x64`` (float64, C order) on ``route`` (see :func:`ward`)."""
    from scipy.cluster import hierarchy

    if route == "vector":
        import fastcluster

        return fastcluster.linkage_vector(x64, method="ward")
    if route == "blas":
        return hierarchy.linkage(pairwise_condensed(x64), method="ward")
    if route == "sklearn":
        from scipy.spatial.distance import pdist

        return hierarchy.linkage(pdist(x64), method="ward")
    raise ValueError(f"unknown Ward route {route!r}")


# --- the algorithms ------------------------------------------------------------------------------


def minibatch_kmeans(x, n_clusters, *, seed, batch_size=500, n_init="auto", **params):
    """MiniBatchKMeans exactly as MTEB's clustering evaluator runs it."""
    from sklearn.cluster import MiniBatchKMeans

    model = MiniBatchKMeans(n_clusters=n_clusters, batch_size=batch_size, n_init=n_init, random_state=seed, **params)
    return model.fit(x).labels_


def agglomerative(x, n_clusters, *, seed, max_memory_gb=None, log=None, **params):
    """AgglomerativeClustering (ward, euclidean) with the number of labels as ``n_clusters``.

    With the defaults it runs :func:`ward` (scikit-learn's partition, faster); other ``params``
    (another linkage, a connectivity, ...) run scikit-learn itself.
    """
    x = np.asarray(x)
    if ward_route(x.shape[1], params) != "sklearn":
        return ward(x, n_clusters, max_memory_gb=max_memory_gb, log=log)
    from sklearn.cluster import AgglomerativeClustering

    return AgglomerativeClustering(n_clusters=n_clusters, **params).fit_predict(x)


def hdbscan(x, n_clusters=None, *, seed, threads=1, **params):
    """HDBSCAN with the ``hdbscan`` package defaults; noise is labelled -1.

    Its core-distance workers follow ``threads`` (the package's default starts 4 processes) unless
    ``core_dist_n_jobs`` is set; the labels do not depend on it.
    """
    import hdbscan as hdbscan_lib

    params.setdefault("core_dist_n_jobs", max(1, int(threads)))
    return hdbscan_lib.HDBSCAN(**params).fit_predict(np.asarray(x, dtype=np.float64))


def dbstream(x, n_clusters=None, *, seed, learn_order_seed=None, **params):
    """river's DBSTREAM: one pass of ``learn_one`` over the rows in order, then ``predict_one`` for each.

    DBSTREAM takes no seed but its result depends on the order it learns the rows in: ``learn_order_seed``
    (a restart's state, :func:`cluster_splits`) learns them in a seeded permutation instead; None = the rows'
    order, the paper's protocol. The labels are always predicted in the rows' order."""
    from river import cluster

    model = cluster.DBSTREAM(**params)
    rows = [dict(enumerate(map(float, row))) for row in np.asarray(x)]
    order = range(len(rows))
    if learn_order_seed is not None:
        order = np.random.default_rng(learn_order_seed).permutation(len(rows))
    for i in order:
        model.learn_one(rows[i])
    return np.array([model.predict_one(row) for row in rows])


ALGORITHMS = {
    "minibatch_kmeans": minibatch_kmeans,
    "agglomerative": agglomerative,
    "hdbscan": hdbscan,
    "dbstream": dbstream,
}

#: Methods that run on one core whatever they are given (Ward's linkage, river's pure Python).
SINGLE_THREADED = frozenset({"agglomerative", "dbstream"})


#: The scores of one state that a restart-averaged row holds as the mean over its states (:func:`cluster_splits`).
MEAN_SCORES = ("v_measure", "homogeneity", "completeness", "ami", "ari")


def stochastic(method: str, params: dict | None = None) -> bool:
    """Whether a clustering with ``method`` depends on a seed or on the order of its rows, so that restarts
    (``scoring.restarts``) give other partitions: MiniBatchKMeans (its seed), DBSTREAM (the order it learns the
    rows in) and an import-path estimator that takes ``random_state``; Ward and HDBSCAN are deterministic."""
    if method in ("minibatch_kmeans", "dbstream"):
        return True
    if method in ("agglomerative", "hdbscan"):
        return False
    return "random_state" in _signature_params(resolve_method(method))[0] and "random_state" not in (params or {})


def restart_seeds(seed: int, restarts: int) -> list[int]:
    """The seeds of ``restarts`` states of a clustering: ``seed`` itself first (state 0: one restart is the
    paper's protocol, unchanged), then state ``r`` seeded by ``SeedSequence(seed, spawn_key=(r,))``'s first 32-bit
    word (a pure function of ``seed`` and ``r``; the same states in every process)."""
    if int(restarts) != restarts or restarts < 1:
        raise ValueError(f"restarts must be an integer >= 1, got {restarts!r}")
    return [int(seed)] + [
        int(np.random.SeedSequence(int(seed), spawn_key=(r,)).generate_state(1)[0]) for r in range(1, int(restarts))
    ]


def with_restarts(spec: dict, restarts: int) -> dict:
    """The algorithm spec a clustering job runs under ``scoring.restarts``: ``spec`` itself at one restart (the
    paper's protocol: the same params, cache keys and bytes as without the setting), else ``spec`` with
    ``restarts`` (:func:`cluster_splits` reads it)."""
    restart_seeds(0, restarts)  # checks the value
    return dict(spec) if restarts == 1 else {**spec, "restarts": int(restarts)}


def threads_used(method: str, threads: int) -> int:
    """The cores a clustering with ``method`` really uses when allowed ``threads`` (for Snakemake's ``threads:``)."""
    return 1 if method in SINGLE_THREADED else max(1, int(threads))


def cluster(
    x: np.ndarray,
    method: str,
    n_clusters: int,
    *,
    seed: int,
    threads: int = 1,
    max_memory_gb: float | None = None,
    log=None,
    **params,
) -> np.ndarray:
    """Cluster the rows of ``x`` with a named method or an estimator's import path; one label per row."""
    if method == "agglomerative":
        labels = agglomerative(x, n_clusters, seed=seed, max_memory_gb=max_memory_gb, log=log, **params)
    elif method == "hdbscan":
        labels = hdbscan(x, n_clusters, seed=seed, threads=threads, **params)
    elif method in ALGORITHMS:
        labels = ALGORITHMS[method](x, n_clusters, seed=seed, **params)
    elif "." in method:
        labels = estimator_labels(x, method, n_clusters, seed=seed, **params)
    else:
        raise ValueError(
            f"unknown clustering method {method!r}; known: {', '.join(METHODS)} "
            "or the import path of an estimator class (e.g. sklearn.cluster.SpectralClustering)"
        )
    return np.asarray(labels)


def degenerate(n_clusters: int, n_texts: int) -> str:
    """Why a clustering is degenerate ('' if it is not): one cluster for all, or one cluster per text."""
    if n_clusters <= 1:
        return "one cluster for all texts"
    if n_clusters >= n_texts:
        return "one cluster per text"
    return ""


def restart_labels(x, method: str, n_clusters: int, *, seed: int, params: dict, **run) -> np.ndarray:
    """One restart state's labels (:func:`cluster_splits`): :func:`cluster` at the state's ``seed``; DBSTREAM,
    which takes no seed, learns the rows in the order that seed permutes them to (``learn_order_seed``)."""
    order = {"learn_order_seed": seed} if method == "dbstream" else {}
    return cluster(x, method, n_clusters, seed=seed, **run, **params, **order)


def state_seeds(seed: int, restarts: int, method: str, params: dict) -> list[int]:
    """The seeds a split is clustered with under ``restarts``: :func:`restart_seeds` for a :func:`stochastic`
    method, ``[seed]`` (one run) for a deterministic one."""
    seeds = restart_seeds(seed, restarts)
    return seeds if stochastic(method, params) else seeds[:1]


def restart_columns(states: list[dict]) -> tuple[dict, str]:
    """The columns of a row scored at R > 1 besides state 0's, and the log's note. ``states``: each state's
    :func:`tecb.cluster.metrics.score` (state 0 first; one for a deterministic method). Columns: the means over the
    states of :data:`MEAN_SCORES`, ``restarts`` (the states run) and ``v_measure_restarts`` (each state's
    V-measure, in order)."""
    values = [s["v_measure"] for s in states]
    columns = {
        **{m: float(np.mean([s[m] for s in states])) for m in MEAN_SCORES},
        "restarts": len(states),
        "v_measure_restarts": values,
    }
    if len(states) == 1:
        return columns, " (deterministic: 1 state)"
    return columns, f" (mean of {len(states)} states, {min(values):.4f}-{max(values):.4f})"


def cluster_splits(
    points_by_split, spec: dict, *, seed: int, log=print, threads: int = 1, max_memory_gb: float | None = None
):
    """Cluster every split and score it; ``points_by_split`` yields ``(split, points, labels)``.

    Returns ``(rows, timings, predictions)``: one score row per split (no durations, so score files
    are identical across reruns), ``[(split, seconds)]`` and ``[(split, predicted labels)]``.
    A degenerate clustering (see :func:`degenerate`) is scored, flagged (``degenerate`` column) and
    logged as a warning; HDBSCAN noise (-1) counts as one cluster and its share is ``noise_fraction``.

    ``spec["restarts"]`` (R, :func:`with_restarts`; absent or 1: the paper's protocol, as before): each split
    clustered in the states of :func:`state_seeds`, at R > 1 its row as :func:`restart_columns` says; the
    ``n_clusters``, ``noise_fraction`` and ``degenerate`` are state 0's, the seconds all states'. A split's
    predictions: one array at R = 1, else states x texts (state 0 first; :func:`labels_table` writes each).
    """
    from tecb.cluster.metrics import score

    spec = dict(spec)
    method = spec.pop("method")
    params = spec.pop("params", {}) or {}
    restarts = spec.pop("restarts", 1)
    seeds = state_seeds(seed, restarts, method, params)
    run = {"threads": threads, "max_memory_gb": max_memory_gb, "log": log}
    rows, timings, predictions = [], [], []
    for split, points, labels in points_by_split:
        n_labels = len(set(labels.tolist()))
        log(f"split {split}: {method} on {len(labels)} x {points.shape[1]} ...")  # a long step says what it does
        start = time.perf_counter()
        predicted = [cluster(points, method, n_labels, seed=seed, **run, **params)] + [
            restart_labels(points, method, n_labels, seed=s, params=params, **run) for s in seeds[1:]
        ]
        states = [score(labels, p) for p in predicted]
        seconds = time.perf_counter() - start
        row = {"split": int(split), **states[0]}
        why = degenerate(row["n_clusters"], row["n_texts"])
        row["degenerate"] = bool(why)
        if why:
            log(f"WARNING split {split}: degenerate result, {method} gave {why} ({len(labels)} texts)")
        if row["noise_fraction"] > 0:
            log(f"split {split}: {row['noise_fraction']:.1%} of the texts are noise (-1, scored as one cluster)")
        columns, spread = restart_columns(states) if restarts > 1 else ({}, "")
        row.update(columns)
        log(
            f"split {split}: {len(labels)} texts, {n_labels} labels -> {row['n_clusters']} clusters, "
            f"V-measure {row['v_measure']:.4f}{spread} ({seconds:.2f} s)"
        )
        rows.append(row)
        timings.append((int(split), seconds))
        predictions.append((int(split), np.stack(predicted) if restarts > 1 else predicted[0]))
    return rows, timings, predictions


def score_splits(points_by_split, spec: dict, *, seed: int, log=print, **kwargs) -> list[dict]:
    """The score rows of :func:`cluster_splits` (one per split)."""
    return cluster_splits(points_by_split, spec, seed=seed, log=log, **kwargs)[0]


def timings_table(timings):
    """``split`` int16, ``seconds`` float64: one row per split."""
    import pyarrow as pa

    return pa.table(
        {
            "split": pa.array([s for s, _ in timings], pa.int16()),
            "seconds": pa.array([round(float(t), 4) for _, t in timings], pa.float64()),
        }
    )


def labels_table(predictions, text_ids):
    """``split`` int16, ``text_id`` int32, ``cluster`` int32: the predicted cluster of every item, in split order.

    ``predictions``: ``[(split, labels)]`` as :func:`cluster_splits` returns them. Where a split's labels are a
    states x texts array (``scoring.restarts`` > 1), a fourth column ``state`` int16 (0 = the seed's run, the
    paper's) and each state's rows in turn, split by split; at one restart the table is as it always was."""
    import pyarrow as pa

    stacked = any(np.ndim(p) == 2 for _, p in predictions)
    states = [np.atleast_2d(np.asarray(p)) for _, p in predictions]
    splits = [np.full(p.size, s, dtype=np.int16) for (s, _), p in zip(predictions, states)]
    ids = [np.tile(np.asarray(text_ids[s], dtype=np.int32), len(p)) for (s, _), p in zip(predictions, states)]
    clusters = [p.astype(np.int32).ravel() for p in states]

    def cat(parts, dtype):
        return np.concatenate(parts) if parts else np.array([], dtype)

    columns = {
        "split": pa.array(cat(splits, np.int16)),
        "text_id": pa.array(cat(ids, np.int32)),
        "cluster": pa.array(cat(clusters, np.int32)),
    }
    if stacked:
        rows = [np.repeat(np.arange(len(p), dtype=np.int16), p.shape[1]) for p in states]
        columns["state"] = pa.array(cat(rows, np.int16))
    return pa.table(columns)


def load_points(splits_path, embeddings_path=None, reduced_path=None):
    """``[(split, text_ids, points, labels)]`` of one (model, dataset, reduction): :func:`iter_points` as a list."""
    splits, points = iter_points(splits_path, embeddings_path=embeddings_path, reduced_path=reduced_path)
    return [(s, ids, x, labels) for (s, ids, labels), x in zip(splits, points)]


def iter_points(splits_path, embeddings_path=None, reduced_path=None):
    """``([(split, text_ids, labels)], points of each split in that order)`` of one (model, dataset, reduction).

    ``reduced_path`` (a reduced file) is used when given, else the raw embeddings of ``embeddings_path``; both
    are read (and the reduced coordinates checked to be in the split's row order) before this returns. The raw
    embeddings' rows of a split are copied only when the iterator reaches it: holding every split's copy at once
    took 9.85 x the dataset's vectors for the paper's Blurbs (178,475 split items: ~550 MB at 768 dims), over the
    memory the job declares (:func:`job_memory_mb`: the largest split and the file).
    """
    from tecb import io

    if (embeddings_path is None) == (reduced_path is None):
        raise ValueError("give exactly one of embeddings_path and reduced_path")
    splits = list(io.iter_splits(io.read_splits(splits_path)))
    if reduced_path is None:
        embeddings, _ = io.read_embeddings(embeddings_path, text_ids=np.concatenate([ids for _, ids, _ in splits]))
        return splits, (embeddings[ids] for _, ids, _ in splits)
    reduced = io.read_reduced(reduced_path)
    out = []
    for s, ids, _ in splits:
        if s not in reduced:
            raise ValueError(f"{reduced_path}: no coordinates for split {s}")
        out.append(_aligned(reduced, s, ids, reduced_path))
    return splits, iter(out)


@dataclass(frozen=True)
class ClusterFiles:
    """A clustering configuration's files. Inputs: ``splits`` (the dataset's splits) and exactly one of
    ``embeddings`` (the raw embeddings) and ``reduced`` (a reduced file, :func:`load_points`). Outputs:
    ``scores`` (one row per split, no durations), ``timings`` (``split``, ``seconds``) and ``labels`` (the
    predicted labels: ``split``, ``text_id``, ``cluster``, and ``state`` at ``scoring.restarts`` > 1:
    :func:`labels_table`)."""

    splits: str | Path
    scores: str | Path
    timings: str | Path
    labels: str | Path
    embeddings: str | Path | None = None
    reduced: str | Path | None = None


def run_configuration(
    spec: dict,
    *,
    files: ClusterFiles,
    seed: int,
    threads: int,
    max_memory_gb: float | None = None,
    log=print,
    where: str = "",
) -> None:
    """Cluster and score every split of one (model, dataset, reduction) with one algorithm ``spec``.

    Writes the three output files of :class:`ClusterFiles`. The memory of the largest split is
    checked first (:func:`check_memory`): above ``max_memory_gb`` nothing runs.
    """

    from tecb import io

    splits, points = iter_points(files.splits, embeddings_path=files.embeddings, reduced_path=files.reduced)
    first = next(points)
    points = itertools.chain([first], points)
    n, dim = max(len(ids) for _, ids, _ in splits), first.shape[1]
    gb = check_memory(
        spec["method"], n, dim, max_memory_gb, where=f"{where}largest split: ", params=spec.get("params") or {}
    )
    log(f"memory estimate: {gb:.2f} GB at the largest split ({n} texts x {dim} dims)")
    del first  # one split's rows at a time (iter_points)
    rows, timings, predictions = cluster_splits(
        ((s, x, labels) for (s, _, labels), x in zip(splits, points)),
        spec,
        seed=seed,
        log=log,
        threads=threads,
        max_memory_gb=max_memory_gb,
    )
    text_ids = {s: ids for s, ids, _ in splits}
    io.write_table(io.score_table(rows, files.scores), files.scores)  # its sha256 recorded (io.check_scores)
    io.write_table(timings_table(timings), files.timings)
    io.write_table(labels_table(predictions, text_ids), files.labels)


def _aligned(reduced: dict, split: int, ids, path="reduced coordinates") -> np.ndarray:
    """Coordinates of one split, checked to be in the split's row order."""
    red_ids, coords = reduced[split]
    if not np.array_equal(red_ids, ids):
        if len(red_ids) != len(ids):
            detail = f"{len(red_ids)} rows for the split's {len(ids)} texts"
        else:
            bad = int(np.flatnonzero(np.asarray(red_ids) != np.asarray(ids))[0])
            detail = f"row {bad} has text_id {int(red_ids[bad])}, the split has text_id {int(ids[bad])}"
        raise ValueError(
            f"{path}: split {split} does not match the split's rows ({detail}); it was computed "
            "for another version of the dataset: delete it and re-run the workflow"
        )
    return coords
