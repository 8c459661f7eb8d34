"""Reductions per design §5: seeded, per split, configurable."""

import subprocess
import sys

import numpy as np
import pytest

from tecb.cluster import reduce


# UMAP's compiled code from the session's numba cache (tests/conftest.py), as the workflow's jobs load it
@pytest.fixture(autouse=True)
def _umap_compiled_for_the_slow_tests(request):
    """UMAP's compiled code from the session's numba cache for the UMAP tests (marked slow); the fast lane's PCA
    and small-data tests never load or compile it (~20 CPU-s)."""
    if request.node.get_closest_marker("slow"):
        request.getfixturevalue("umap_compilation_cached")


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 60))
    return (centres[rng.integers(0, 4, 200)] + rng.normal(scale=0.3, size=(200, 60))).astype(np.float32)


def _principal_coordinates(x, k):
    """The oracle: centre the rows, take numpy's SVD; the scores on the first k right singular vectors."""
    centred = np.asarray(x, np.float64) - np.asarray(x, np.float64).mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:k].T


def _same_up_to_sign(got, expected, atol=1e-4):
    """Principal axes have no sign: flip each of ``expected``'s columns to ``got``'s before comparing."""
    signs = np.sign(np.sum(got * expected, axis=0))
    np.testing.assert_allclose(got, expected * signs, atol=atol)


@pytest.mark.slow
def test_pca_gives_the_principal_coordinates_seeded_and_2d(x):
    # by hand: four points on the line y = 2x around (2.5, 5); the first axis is (1, 2)/sqrt(5), so the first
    # coordinate is (t - 2.5) * sqrt(5) for t = 1..4 (sign free) and the second is 0 (no spread across the line)
    line = np.array([[1, 2], [2, 4], [3, 6], [4, 8]], np.float32)
    got = reduce.reduce(line, "pca", seed=42)
    assert abs(got[0, 0]) == pytest.approx(1.5 * np.sqrt(5), rel=1e-6)
    _same_up_to_sign(got[:, :1], np.array([[-1.5], [-0.5], [0.5], [1.5]]) * np.sqrt(5), atol=1e-5)
    np.testing.assert_allclose(got[:, 1], 0, atol=1e-5)
    # the 200 x 60 blobs: numpy's SVD of the centred rows
    a, b = reduce.reduce(x, "pca", seed=42), reduce.reduce(x, "pca", seed=42)
    assert a.shape == (200, 2) and a.dtype == np.float32
    assert np.array_equal(a, b)
    _same_up_to_sign(a, _principal_coordinates(x, 2))
    assert a[:, 0].var() > a[:, 1].var()  # the first axis carries the most variance


@pytest.mark.slow  # UMAP: numba compilation and layouts, seconds each
@pytest.mark.parametrize("method", ["umap", "pca_umap"])
def test_umap_reductions_are_bit_identical_across_runs(x, method):
    a = reduce.reduce(x, method, seed=42)
    b = reduce.reduce(x, method, seed=42)
    assert a.shape == (200, 2)
    assert np.array_equal(a, b)


@pytest.mark.slow  # UMAP: numba compilation and layouts, seconds each
def test_config_params_reach_umap(x):
    five = reduce.reduce(x, "umap", n_components=5, n_neighbors=10, seed=42)
    assert five.shape == (200, 5)
    assert not np.array_equal(reduce.reduce(x, "umap", n_neighbors=10, seed=42), reduce.reduce(x, "umap", seed=42))


@pytest.mark.slow  # UMAP: numba compilation and layouts, seconds each
def test_pca_umap_is_pca_then_umap(x):
    """Against an independent pipeline: scikit-learn's PCA(50), then UMAP (2-D, cosine, 15 neighbours, same
    seed) computing its own neighbours (no tecb small-data route), seeded spectral init as in the workflow."""
    from sklearn.decomposition import PCA

    from tecb.cluster.spectral import seeded_umap_class

    projected = PCA(n_components=50, random_state=42).fit_transform(x).astype(np.float32)
    expected = seeded_umap_class()(n_components=2, metric="cosine", n_neighbors=15, random_state=42)
    expected = expected.fit_transform(projected).astype(np.float32)
    got = reduce.reduce(x, "pca_umap", pca_components=50, seed=42)
    assert got.shape == (200, 2)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_bad_reduction_specs_are_clear_errors(x):
    with pytest.raises(ValueError, match="unknown reduction method 'tsne'"):
        reduce.reduce(x, "tsne", seed=42)
    with pytest.raises(ValueError, match="'pca' takes only n_components; got n_neighbors"):
        reduce.reduce(x, "pca", n_neighbors=5, seed=42)


@pytest.mark.slow
def test_reduce_splits_fits_each_split(x):
    splits = [(0, np.arange(100), None), (1, np.arange(50, 200), None)]
    out = list(reduce.reduce_splits(x, splits, {"method": "pca", "n_components": 2}, log=lambda m: None, seed=42))
    assert [s for s, _, _ in out] == [0, 1]
    assert [ids.tolist() for _, ids, _ in out] == [list(range(100)), list(range(50, 200))]
    # fitted on each split's own rows (numpy's SVD of those rows alone), not on all rows and then cut
    for (_, _, coords), rows in zip(out, (x[:100], x[50:200])):
        _same_up_to_sign(coords, _principal_coordinates(rows, 2))
    fitted_on_all = _principal_coordinates(x, 2)[50:200]
    assert not np.allclose(np.abs(out[1][2]), np.abs(fitted_on_all), atol=1e-2)  # the case tells them apart


@pytest.mark.slow
def test_numba_cache_gives_identical_umap(tmp_path):
    """With umap's compiled code cached on disk (a second process loads it), UMAP's output is unchanged."""
    code = (
        "import os, sys; os.environ['NUMBA_CACHE_DIR'] = sys.argv[1]; import numpy as np, numba;"
        "from tecb.cluster import reduce; assert reduce.cache_umap_compilation() > 100;"
        "assert numba.njit.__module__.startswith('numba');"  # numba's decorators are not replaced
        "x = np.random.default_rng(0).normal(size=(80, 8)).astype(np.float32);"
        "sys.stdout.write(reduce.reduce(x, 'umap', seed=42).tobytes().hex())"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "nb")], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]  # the second one loads from the cache
    assert len(list((tmp_path / "nb").rglob("*.nbi"))) > 20  # umap's functions were written to the cache
    rng = np.random.default_rng(0).normal(size=(80, 8)).astype(np.float32)
    assert runs[0] == runs[1] == reduce.reduce(rng, "umap", seed=42).tobytes().hex()


def _stock_umap(x, metric="cosine"):
    """umap's own route (no precomputed neighbours), with the seeded initialisation used everywhere."""
    from tecb.cluster.spectral import seeded_umap_class

    reducer = seeded_umap_class()(
        n_components=2, metric=metric, random_state=42, n_neighbors=min(15, max(2, len(x) - 1))
    )
    return reducer.fit_transform(x).astype(np.float32)


@pytest.mark.slow  # UMAP: numba compilation and layouts, seconds each
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_small_split_neighbours_give_umaps_own_coordinates(x, metric):
    """The compiled small-data neighbour search changes nothing: same bytes as umap's pairwise route,
    on duplicate rows (identical texts), on PCA output and on a 7-row split of identical rows."""
    dups = x.copy()
    dups[20:90] = dups[3]
    cases = {
        "blobs": x,
        "duplicates": dups,
        "pca50": reduce.pca(np.repeat(x, 2, axis=1), 50, seed=42),
        "tiny": np.repeat(x[:1], 7, axis=0),
    }
    for name, points in cases.items():
        assert reduce.small_data_knn(points, 6 if name == "tiny" else 15, metric) is not None, name
        assert np.array_equal(reduce.umap(points, metric=metric, seed=42), _stock_umap(points, metric)), name


@pytest.mark.slow  # pynndescent's numba code, compiled or loaded in this process
def test_small_data_knn_applies_only_where_umap_computes_all_distances(x):
    assert reduce.small_data_knn(x, 15, "cosine") is not None
    assert reduce.small_data_knn(x[:10], 15, "cosine") is None  # fewer points than neighbours
    assert reduce.small_data_knn(np.zeros((reduce.SMALL_DATA, 2), np.float32), 15, "cosine") is None
    assert reduce.small_data_knn(x, 15, "no-such-metric") is None
