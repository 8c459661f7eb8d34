"""Dimensionality reduction per split (design §5): ``pca``, ``umap``, ``pca_umap``.

Each reduction is fitted on one split's rows (its embeddings, in split order) and seeded, so the
same input gives the same coordinates. ``none`` means the raw embeddings and writes no file.
"""

from __future__ import annotations

import warnings

import numpy as np

METHODS = ("pca", "umap", "pca_umap")


def pca(x: np.ndarray, n_components: int = 2, seed: int = 42) -> np.ndarray:
    from sklearn.decomposition import PCA

    n = min(n_components, x.shape[0], x.shape[1])
    return PCA(n_components=n, random_state=seed).fit_transform(x).astype(np.float32)


def umap(x: np.ndarray, n_components: int = 2, metric: str = "cosine", seed: int = 42, **params) -> np.ndarray:
    """UMAP with the paper's settings (2 components, cosine, other defaults) and a fixed seed."""
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
