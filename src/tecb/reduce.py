"""Dimensionality reduction per split (design §5): ``pca``, ``umap``, ``pca_umap``.

Each reduction is fitted on one split's rows (its embeddings, in split order) and seeded, so the
same input gives the same coordinates. ``none`` means the raw embeddings and writes no file.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

METHODS = ("pca", "umap", "pca_umap")


def pca(x: np.ndarray, n_components: int = 2, seed: int = 42) -> np.ndarray:
    from sklearn.decomposition import PCA

    n = min(n_components, x.shape[0], x.shape[1])
    return PCA(n_components=n, random_state=seed).fit_transform(x).astype(np.float32)


def enable_numba_cache(cache_dir) -> bool:
    """Cache every numba function UMAP and pynndescent compile in ``cache_dir`` (call before importing umap).

    Most of umap's ``@numba.njit`` functions are not declared ``cache=True``, so each process
    re-compiles them (~10 s). Defaulting ``cache=True`` makes later processes load the same machine
    code from disk (results are identical). Returns False (and does nothing) if umap is already imported.
    """
    import sys

    if not cache_dir or "umap" in sys.modules:
        return False
    os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(cache_dir)
    import numba

    if getattr(numba, "_tecb_cache", False):
        return True
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
    originals = {"njit": numba.njit, "jit": numba.jit}

    def cached(name):
        def decorator(*args, **kwargs):
            kwargs.setdefault("cache", True)
            return originals[name](*args, **kwargs)
        return decorator

    numba.njit, numba.jit = cached("njit"), cached("jit")
    numba._tecb_cache = True
    return True


def umap(x: np.ndarray, n_components: int = 2, metric: str = "cosine", seed: int = 42, **params) -> np.ndarray:
    """UMAP with the paper's settings (2 components, cosine, other defaults) and a fixed seed.

    Further keyword arguments (``n_neighbors``, ``min_dist``, ...) go to ``umap.UMAP``.
    """
    import umap as umap_lib

    n_neighbors = min(params.pop("n_neighbors", 15), max(2, x.shape[0] - 1))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*overridden.*")
        reducer = umap_lib.UMAP(n_components=n_components, metric=metric, random_state=seed,
                                n_neighbors=n_neighbors, **params)
        return reducer.fit_transform(x).astype(np.float32)


def reduce(x: np.ndarray, method: str, seed: int = 42, n_components: int = 2, pca_components: int = 50,
           metric: str = "cosine", **params) -> np.ndarray:
    """Reduce ``x`` with a named method; ``pca_umap`` = PCA to ``pca_components`` dims, then UMAP."""
    if method == "pca":
        if params or pca_components != 50:
            extra = sorted(set(params) | ({"pca_components"} if pca_components != 50 else set()))
            raise ValueError(f"reduction method 'pca' takes only n_components; got {', '.join(extra)}")
        return pca(x, n_components, seed)
    if method == "umap":
        return umap(x, n_components, metric, seed, **params)
    if method == "pca_umap":
        return umap(pca(x, pca_components, seed), n_components, metric, seed, **params)
    raise ValueError(f"unknown reduction method {method!r}; known: {', '.join(METHODS)}")


def reduce_splits(embeddings: np.ndarray, splits, spec: dict, seed: int = 42, log=print):
    """Yield ``(split, text_ids, coords)`` for every split of a dataset (``splits`` from :func:`tecb.io.iter_splits`)."""
    spec = dict(spec)
    method = spec.pop("method")
    for split, ids, _labels in splits:
        coords = reduce(embeddings[ids], method, seed=seed, **spec)
        log(f"split {split}: {len(ids)} x {embeddings.shape[1]} -> {coords.shape[1]} ({method})")
        yield split, ids, coords
