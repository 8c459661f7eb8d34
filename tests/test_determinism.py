"""Issue 12 item 1: the same embeddings give bit-identical reduced coordinates in separate processes.

The matrices are built so that umap-learn's stock spectral initialisation is not reproducible: six groups
of 16 identical rows (identical texts) make six disconnected cliques whose Laplacians have repeated
eigenvalues, so ARPACK restarts from a random vector (OS entropy in scipy >= 1.15 unless seeded); a tiny
split of 7 identical texts does the same. Each process must give the same bytes.
"""

import subprocess
import sys

import numpy as np
import pytest

from tecb.cluster import reduce

# UMAP's compiled code from the session's numba cache (tests/conftest.py), as the workflow's jobs load it
pytestmark = pytest.mark.usefixtures("umap_compilation_cached")

SCRIPT = r"""
import sys, numpy as np, warnings
warnings.filterwarnings("ignore")
from tecb.cluster import reduce
reduce.cache_umap_compilation()  # as a job: umap's code from NUMBA_CACHE_DIR (the test session's cache)
rng = np.random.default_rng(0)
base = rng.normal(size=(8, 32)).astype(np.float32)
cases = {
    "duplicates": np.repeat(base[:6], 16, axis=0),
    "duplicates+noise": np.concatenate([np.repeat(base[:6], 16, axis=0),
                                        rng.normal(size=(30, 32)).astype(np.float32)]),
    "tiny": np.repeat(base[:1], 7, axis=0),
}
for name, x in cases.items():
    for method in ("umap", "pca_umap", "pca"):
        out = reduce.reduce(x, method, seed=42)
        assert out.dtype == np.float32 and out.shape == (len(x), 2), (name, method, out.shape)
        print(name, method, out.tobytes().hex())
"""


def _run():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict((" ".join(line.split()[:2]), line.split()[2]) for line in proc.stdout.splitlines())


@pytest.mark.slow
def test_reductions_are_bit_identical_in_separate_processes():
    first, second = _run(), _run()
    assert len(first) == 9
    differing = [key for key in first if first[key] != second.get(key)]
    assert not differing, f"coordinates differ between two processes for: {differing}"


@pytest.mark.slow
def test_same_process_repeats_are_identical_with_duplicates():
    x = np.repeat(np.random.default_rng(1).normal(size=(6, 20)).astype(np.float32), 16, axis=0)
    assert np.array_equal(reduce.reduce(x, "umap", seed=42), reduce.reduce(x, "umap", seed=42))


@pytest.mark.slow
def test_seeded_init_equals_stock_umap_where_stock_is_deterministic():
    """The fix changes nothing but the eigensolver's restart vectors: on data without ties the result is stock umap's."""
    import umap

    rng = np.random.default_rng(0)
    x = (rng.normal(size=(4, 30))[rng.integers(0, 4, 150)] + rng.normal(scale=0.3, size=(150, 30))).astype(np.float32)
    stock = umap.UMAP(n_components=2, metric="cosine", random_state=42, n_neighbors=15).fit_transform(x)
    assert np.array_equal(reduce.reduce(x, "umap", seed=42), stock.astype(np.float32))


@pytest.mark.slow
@pytest.mark.parametrize("n_groups", [3, 6])  # <= 2*dim components: fixed meta layout; more: spectral meta layout
def test_multi_component_layout_is_seeded(n_groups):
    from tecb.cluster.spectral import seeded_umap_class

    x = np.repeat(np.random.default_rng(2).normal(size=(n_groups, 20)).astype(np.float32), 16, axis=0)
    cls = seeded_umap_class()
    runs = [cls(n_components=2, metric="cosine", random_state=7, n_neighbors=15).fit_transform(x) for _ in range(2)]
    assert np.isfinite(runs[0]).all()
    assert np.array_equal(runs[0], runs[1])
