"""A seeded spectral initialisation for UMAP, so the same input gives bit-identical coordinates.

Why: umap-learn (0.5.x) initialises the layout with the eigenvectors of the graph Laplacian
(``scipy.sparse.linalg.eigsh``, start vector ``v0 = ones``). When the Lanczos iteration breaks down --
which happens whenever the Laplacian has repeated eigenvalues, i.e. whenever a split contains
duplicate rows (identical texts give identical embeddings; a clique of identical points is a
perfectly symmetric subgraph) -- ARPACK asks for a fresh random start vector. SciPy (>= 1.15, C
ARPACK) draws it from ``rng``, and umap does not pass one, so it comes from OS entropy: a different
initial layout, hence different coordinates, in every process. scikit-learn's ``SpectralEmbedding``
(used by umap to place disconnected components) has the same gap.

The fix here keeps umap's algorithm and its random stream unchanged and only passes a seeded
``rng`` to every eigensolver call: :func:`spectral_layout` mirrors ``umap.spectral.spectral_layout``
(connected graph, and the multi-component layout), and :func:`seeded_umap_class` returns a subclass
of ``umap.UMAP`` that computes its ``init="spectral"`` through it (``_fit_embed_data`` is umap's
documented hook for subclasses). Where ARPACK never restarts, the result is bit-identical to stock
umap; where it does, it is the same in every process.

"Deterministic" means: same input, same seed, same machine (CPU instruction set), same library
versions (numpy/scipy/numba/umap-learn/pynndescent/scikit-learn, BLAS) and same thread count.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg

_CLASS = None


def _eigsh_rng(seed):
    return np.random.default_rng(seed)


def _pruned_graph(graph, n_epochs, densmap: bool):
    """The graph exactly as ``umap.umap_.simplicial_set_embedding`` prunes it before its initialisation."""
    graph = graph.tocoo(copy=True)
    graph.sum_duplicates()
    default_epochs = 500 if graph.shape[0] <= 10000 else 200
    if densmap:
        default_epochs += 200
    if n_epochs is None:
        n_epochs = default_epochs
    n_epochs_max = max(n_epochs) if isinstance(n_epochs, list) else n_epochs
    if n_epochs_max > 10:
        graph.data[graph.data < (graph.data.max() / float(n_epochs_max))] = 0.0
    else:
        graph.data[graph.data < (graph.data.max() / float(default_epochs))] = 0.0
    graph.eliminate_zeros()
    return graph


def _connected_layout(graph, dim, random_state, seed):
    """Mirror of ``umap.spectral._spectral_layout`` (init="random", method=None) with a seeded eigsh."""
    sqrt_deg = np.sqrt(np.asarray(graph.sum(axis=0)).squeeze())
    n = graph.shape[0]
    identity = scipy.sparse.identity(n, dtype=np.float64)
    d = scipy.sparse.spdiags(1.0 / sqrt_deg, 0, n, n)
    lap = identity - d * graph * d
    if not scipy.sparse.issparse(lap):
        lap = np.asarray(lap)
    k = dim + 1
    num_lanczos_vectors = max(2 * k + 1, int(np.sqrt(n)))
    try:
        x0 = random_state.normal(size=(n, k))  # drawn as umap does, so the random stream stays the same
        x0[:, 0] = sqrt_deg / np.linalg.norm(sqrt_deg)
        if n < 2000000:
            eigenvalues, eigenvectors = scipy.sparse.linalg.eigsh(
                lap,
                k,
                which="SM",
                ncv=num_lanczos_vectors,
                tol=1e-4,
                v0=np.ones(n),
                maxiter=n * 5,
                rng=_eigsh_rng(seed),
            )
        else:
            with warnings.catch_warnings():
                warnings.filterwarnings(
                    category=UserWarning, action="error", message=r"(?ms).*not reaching the requested tolerance"
                )
                eigenvalues, eigenvectors = scipy.sparse.linalg.lobpcg(
                    lap, np.asarray(x0), largest=False, tol=1e-4, maxiter=5 * n
                )
        order = np.argsort(eigenvalues)[1:k]
        return eigenvectors[:, order]
    except (scipy.sparse.linalg.ArpackError, UserWarning):
        warnings.warn(
            "Spectral initialisation failed (eigensolver); falling back to random initialisation", stacklevel=2
        )
        return random_state.uniform(low=-10.0, high=10.0, size=(n, dim))


def _meta_spectral_embedding(affinity, dim, random_state, seed):
    """Mirror of scikit-learn's ``SpectralEmbedding(affinity="precomputed")`` (ARPACK branch), seeded."""
    from sklearn.utils.extmath import _deterministic_vector_sign_flip

    n_components = dim + 1
    laplacian, dd = scipy.sparse.csgraph.laplacian(affinity, normed=True, return_diag=True)
    laplacian = np.array(laplacian)
    laplacian.flat[:: laplacian.shape[0] + 1] = 1
    v0 = random_state.uniform(-1, 1, laplacian.shape[0])
    _, diffusion_map = scipy.sparse.linalg.eigsh(
        laplacian, k=n_components, sigma=-1e-5, which="LM", tol=0, v0=v0, rng=_eigsh_rng(seed)
    )
    embedding = diffusion_map.T[:n_components] / dd
    embedding = _deterministic_vector_sign_flip(embedding)
    return embedding[1:n_components].T


def _component_layout(data, n_components, labels, dim, random_state, metric, metric_kwds, seed):
    """Mirror of ``umap.spectral.component_layout`` for vector data (not precomputed distances)."""
    from sklearn.metrics import pairwise_distances

    centroids = np.empty((n_components, data.shape[1]), dtype=np.float64)
    for label in range(n_components):
        centroids[label] = data[labels == label].mean(axis=0)
    from umap.distances import SPECIAL_METRICS
    from umap.spectral import pairwise_special_metric

    if metric in SPECIAL_METRICS:
        distance_matrix = pairwise_special_metric(centroids, metric=metric, kwds=metric_kwds)
    else:
        distance_matrix = pairwise_distances(centroids, metric=metric, **(metric_kwds or {}))
    affinity = np.exp(-(distance_matrix**2))
    embedding = _meta_spectral_embedding(affinity, dim, random_state, seed)
    embedding /= embedding.max()
    return embedding


def _multi_component_layout(data, graph, n_components, labels, dim, random_state, metric, metric_kwds, seed):
    """Mirror of ``umap.spectral.multi_component_layout`` with seeded eigensolvers."""
    from sklearn.metrics import pairwise_distances

    result = np.empty((graph.shape[0], dim), dtype=np.float32)
    if n_components > 2 * dim:
        meta = _component_layout(data, n_components, labels, dim, random_state, metric, metric_kwds, seed)
    else:
        k = int(np.ceil(n_components / 2.0))
        base = np.hstack([np.eye(k), np.zeros((k, dim - k))])
        meta = np.vstack([base, -base])[:n_components]
    csr = graph.tocsr()
    for label in range(n_components):
        mask = labels == label
        component_graph = csr[mask, :].tocsc()[:, mask].tocoo()
        distances = pairwise_distances([meta[label]], meta)
        data_range = distances[distances > 0.0].min() / 2.0
        if component_graph.shape[0] < 2 * dim or component_graph.shape[0] <= dim + 1:
            result[mask] = (
                random_state.uniform(low=-data_range, high=data_range, size=(component_graph.shape[0], dim))
                + meta[label]
            )
        else:
            embedding = _connected_layout(component_graph, dim, random_state, seed)
            embedding = embedding * (data_range / np.max(np.abs(embedding)))
            result[mask] = embedding + meta[label]
    return result


def spectral_layout(data, graph, dim, random_state, metric="euclidean", metric_kwds=None, seed=0):
    """Seeded mirror of ``umap.spectral.spectral_layout``: every eigensolver restart draws from ``seed``.

    ``random_state`` (a ``numpy.random.RandomState``) is consumed exactly as umap consumes it.
    """
    n_components, labels = scipy.sparse.csgraph.connected_components(graph)
    if n_components > 1:
        return _multi_component_layout(data, graph, n_components, labels, dim, random_state, metric, metric_kwds, seed)
    return _connected_layout(graph, dim, random_state, seed)


def noisy_scale_coords(coords, random_state, max_coord=10.0, noise=0.0001):
    """As ``umap.umap_.noisy_scale_coords`` (scale to ``max_coord``, add tiny seeded noise)."""
    expansion = max_coord / np.abs(coords).max()
    coords = (coords * expansion).astype(np.float32)
    return coords + random_state.normal(scale=noise, size=coords.shape).astype(np.float32)


def seeded_umap_class():
    """``umap.UMAP`` subclass whose ``init="spectral"`` is computed by :func:`spectral_layout`.

    Only ``random_state`` given as an int is made deterministic (it seeds the eigensolvers);
    everything else, including the optimisation, is umap's own code.
    """
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    import umap

    class SeededSpectralUMAP(umap.UMAP):
        def _fit_embed_data(self, X, n_epochs, init, random_state, **kwargs):
            if (
                isinstance(init, str)
                and init == "spectral"
                and isinstance(self.random_state, (int, np.integer))
                and self.metric != "precomputed"
                and not scipy.sparse.issparse(X)
            ):
                graph = _pruned_graph(self.graph_, n_epochs, bool(self.densmap))
                coords = spectral_layout(
                    X,
                    graph,
                    self.n_components,
                    random_state,
                    metric=self._input_distance_func,
                    metric_kwds=self._metric_kwds,
                    seed=int(self.random_state),
                )
                init = noisy_scale_coords(coords, random_state, max_coord=10, noise=0.0001)
            return super()._fit_embed_data(X, n_epochs, init, random_state, **kwargs)

    _CLASS = SeededSpectralUMAP
    return _CLASS
