"""Clustering algorithms, degenerate results, the memory guard, determinism, config-only additions."""

import numpy as np
import pytest
import yaml
from sklearn.datasets import make_blobs

from tecb import cluster
from tecb.cluster import MemoryLimitError, check_memory, memory_estimate, score_splits

SPECS = {
    "kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}},
    "agglomerative": {"method": "agglomerative"},
    "hdbscan": {"method": "hdbscan"},
    "dbstream": {"method": "dbstream"},
}


def blobs(n=600, dim=2, centers=4, seed=0):
    """Well-separated blobs; in 2-D compact like UMAP output (DBSTREAM's default radius is 1)."""
    x, y = make_blobs(n_samples=n, centers=[[0, 0], [20, 0], [0, 20], [20, 20]][:centers] if dim == 2 else centers,
                      n_features=dim, cluster_std=0.5 if dim == 2 else 1.0, random_state=seed)
    return x.astype(np.float32), np.array([f"c{v}" for v in y], dtype=object)


def run(name, x, y, seed=42, logs=None):
    log = (logs.append if logs is not None else lambda m: None)
    return score_splits([(0, x, y)], SPECS[name], seed=seed, log=log)[0]


@pytest.mark.parametrize("name", list(SPECS))
def test_each_algorithm_finds_well_separated_blobs(name):
    x, y = blobs()
    row = run(name, x, y)
    assert row["v_measure"] > 0.9, row
    assert row["degenerate"] is False
    assert set(row) >= {"split", "n_texts", "n_labels", "n_clusters", "noise_fraction", "v_measure", "homogeneity",
                        "completeness", "ami", "ari", "seconds", "degenerate"}


def test_kmeans_and_agglomerative_on_high_dimensional_blobs():
    x, y = blobs(n=400, dim=64, centers=5)
    for name in ("kmeans", "agglomerative"):
        assert run(name, x, y)["v_measure"] > 0.9


def test_same_config_gives_bit_identical_scores():
    x, y = blobs(n=800)
    x = x + np.random.default_rng(1).normal(scale=6, size=x.shape).astype(np.float32)  # overlapping: not trivial
    for name in SPECS:
        a, b = run(name, x, y), run(name, x, y)
        a.pop("seconds"), b.pop("seconds")
        assert a == b, name


def test_hdbscan_noise_is_reported():
    x, y = blobs()
    rng = np.random.default_rng(3)
    x = np.vstack([x, rng.uniform(-40, 60, size=(60, 2)).astype(np.float32)])  # scattered outliers
    y = np.concatenate([y, rng.choice(["c0", "c1"], 60).astype(object)])
    logs = []
    row = run("hdbscan", x, y, logs=logs)
    assert 0 < row["noise_fraction"] < 0.5
    assert any("noise" in m for m in logs)


def test_degenerate_one_cluster_is_scored_flagged_and_logged():
    x, y = blobs()
    logs = []
    # a DBSTREAM radius larger than the data puts everything into one micro-cluster
    row = score_splits([(0, x, y)], {"method": "dbstream", "params": {"clustering_threshold": 1000.0}},
                       log=logs.append)[0]
    assert row["n_clusters"] == 1 and row["degenerate"] is True and row["v_measure"] == 0.0
    assert any("WARNING" in m and "degenerate" in m for m in logs)
    assert cluster.degenerate(5, 5) == "one cluster per text" and cluster.degenerate(3, 10) == ""


def test_memory_guard_estimates_and_refuses_before_running():
    # two n(n-1)/2 float64 distance matrices (pdist + scipy's working copy): 2 x 2.7 GB at 26k texts
    assert memory_estimate("agglomerative", 26000, 2) / 1e9 == pytest.approx(5.4, abs=0.05)
    assert memory_estimate("minibatch_kmeans", 26000, 768) < 0.2e9
    assert check_memory("agglomerative", 26000, 768, 8) == pytest.approx(5.57, abs=0.05)
    with pytest.raises(MemoryLimitError, match=r"agglomerative on 26000 points.*~5.6 GB.*cluster.max_memory_gb = 4"):
        check_memory("agglomerative", 26000, 768, 4)
    check_memory("agglomerative", 10**6, 2, None)  # no limit


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown clustering method 'spectral'"):
        cluster.cluster(np.zeros((4, 2)), "spectral", 2)


def test_new_algorithm_and_reduction_by_config_alone(tmp_path):
    """`kmeans20` (other params) and a `umap5` reduction appear in the DAG with no code change."""
    from conftest import ROOT, copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    cfg = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    cfg["reductions"]["umap5"] = {"method": "umap", "n_components": 5, "n_neighbors": 10}
    cfg["algorithms"]["kmeans20"] = {"method": "minibatch_kmeans", "params": {"batch_size": 20, "n_init": 3}}
    cfg["configurations"] += [{"algorithm": "kmeans20", "reduction": "umap5"},
                              {"algorithm": "hdbscan", "reduction": "umap5"}]
    (work / "config/extra.yaml").write_text(yaml.safe_dump(cfg))
    out = run_snakemake(work, "--configfile", "config/extra.yaml", "-n", "--cores", "1", "-p").stdout
    assert "results/reduced/tfidf/TenKGnadClusteringS2S/umap5.parquet" in out
    assert "results/scores/tfidf/TenKGnadClusteringS2S/umap5/kmeans20.parquet" in out
    cfg["cluster"] = {**cfg.get("cluster", {}), "max_memory_gb": -1}
    (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
    bad = run_snakemake(work, "--configfile", "config/bad.yaml", "-n", "--cores", "1", check=False)
    assert bad.returncode != 0 and "max_memory_gb" in bad.stdout
