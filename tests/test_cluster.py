"""Clustering algorithms, degenerate results, the memory guard, determinism, config-only additions."""

import numpy as np
import pytest
import yaml
from helpers import ALGORITHMS as SPECS
from helpers import SCORE_COLUMNS, blobs, job_counts
from sklearn.datasets import make_blobs

from tecb.cluster import algorithms as cluster
from tecb.cluster.algorithms import MemoryLimitError, check_memory, memory_estimate, score_splits


def run(name, x, y, seed=42, logs=None):
    log = logs.append if logs is not None else lambda m: None
    return score_splits([(0, x, y)], SPECS[name], seed=seed, log=log)[0]


@pytest.mark.parametrize("name", list(SPECS))
def test_each_algorithm_finds_well_separated_blobs(name):
    x, y = blobs()
    row = run(name, x, y)
    assert row["v_measure"] > 0.9, row
    assert row["degenerate"] is False
    assert set(row) >= set(SCORE_COLUMNS)
    assert "seconds" not in row  # durations live in the timings file: score files are identical across reruns


def test_kmeans_and_agglomerative_on_high_dimensional_blobs():
    x, y = blobs(n=400, dim=64, centers=5)
    for name in ("kmeans", "agglomerative"):
        assert run(name, x, y)["v_measure"] > 0.9


@pytest.mark.slow
def test_same_config_gives_bit_identical_scores():
    x, y = blobs(n=800)
    x = x + np.random.default_rng(1).normal(scale=6, size=x.shape).astype(np.float32)  # overlapping: not trivial
    for name in SPECS:
        a, b = run(name, x, y), run(name, x, y)
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
    row = score_splits(
        [(0, x, y)], {"method": "dbstream", "params": {"clustering_threshold": 1000.0}}, log=logs.append, seed=42
    )[0]
    assert row["n_clusters"] == 1 and row["degenerate"] is True and row["v_measure"] == 0.0
    assert any("WARNING" in m and "degenerate" in m for m in logs)
    assert cluster.degenerate(5, 5) == "one cluster per text" and cluster.degenerate(3, 10) == ""


def test_memory_guard_estimates_and_refuses_before_running():
    # high-dim Ward: two n(n-1)/2 float64 distance matrices (condensed + scipy's working copy): 2 x 2.7 GB at 26k
    assert check_memory("agglomerative", 26000, 768, 8) == pytest.approx(5.73, abs=0.05)
    with pytest.raises(MemoryLimitError, match=r"agglomerative on 26000 points.*~5.7 GB.*cluster.max_memory_gb = 4"):
        check_memory("agglomerative", 26000, 768, 4)
    # low-dim Ward (fastcluster.linkage_vector) is linear: well under 10 MB at 26k x 2
    assert memory_estimate("agglomerative", 26000, 2) < 10e6
    # another linkage runs scikit-learn itself: quadratic again
    assert memory_estimate("agglomerative", 26000, 2, {"linkage": "average"}) / 1e9 == pytest.approx(5.4, abs=0.05)
    assert memory_estimate("minibatch_kmeans", 26000, 768) < 0.2e9
    check_memory("agglomerative", 10**6, 768, None)  # no limit


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown clustering method 'spectral'.*import path"):
        cluster.cluster(np.zeros((4, 2)), "spectral", 2, seed=42)


@pytest.mark.workflow
def test_new_algorithm_and_reduction_by_config_alone(tmp_path):
    """`kmeans20` (other params) and a `umap5` reduction appear in the DAG with no code change."""
    from conftest import ROOT, copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    cfg = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    cfg["reductions"]["umap5"] = {"method": "umap", "n_components": 5, "n_neighbors": 10}
    cfg["algorithms"]["kmeans20"] = {"method": "minibatch_kmeans", "params": {"batch_size": 20, "n_init": 3}}
    cfg["configurations"] += [
        {"algorithm": "kmeans20", "reduction": "umap5"},
        {"algorithm": "hdbscan", "reduction": "umap5"},
    ]
    (work / "config/extra.yaml").write_text(yaml.safe_dump(cfg))
    out = run_snakemake(work, "--configfile", "config/extra.yaml", "-n", "--cores", "1", "-p").stdout
    assert "results/demo/reduced/tfidf/TenKGnadClusteringS2S/umap5.parquet" in out
    assert "results/demo/scores/tfidf/TenKGnadClusteringS2S/umap5/kmeans20.parquet" in out
    cfg["cluster"] = {**cfg.get("cluster", {}), "max_memory_gb": -1}
    (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
    bad = run_snakemake(work, "--configfile", "config/bad.yaml", "-n", "--cores", "1", check=False)
    assert bad.returncode != 0 and "max_memory_gb" in bad.stdout


@pytest.mark.workflow
def test_import_path_algorithm_by_config_alone(tmp_path):
    """An estimator named by import path is planned like a built-in one; a bad path stops `snakemake -n`
    before any job, naming the key."""
    from conftest import ROOT, copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    cfg = yaml.safe_load((ROOT / "config/demo.yaml").read_text())
    cfg["algorithms"]["spectral"] = {
        "method": "sklearn.cluster.SpectralClustering",
        "params": {"affinity": "nearest_neighbors"},
    }
    cfg["configurations"] += [{"algorithm": "spectral", "reduction": "none"}]
    (work / "config/spectral.yaml").write_text(yaml.safe_dump(cfg))
    out = run_snakemake(work, "--configfile", "config/spectral.yaml", "-n", "--cores", "1").stdout
    assert "results/demo/scores/tfidf/TenKGnadClusteringS2S/none/spectral.parquet" in out
    for bad in ("sklearn.cluster.NoSuchClustering", "no_such_package.Clustering"):
        cfg["algorithms"]["spectral"]["method"] = bad
        (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
        proc = run_snakemake(work, "--configfile", "config/bad.yaml", "-n", "--cores", "1", check=False)
        assert proc.returncode != 0, proc.stdout[-2000:]
        assert "algorithms.spectral.method" in proc.stdout and bad in proc.stdout
        assert "Job stats" not in proc.stdout and "rule " not in proc.stdout  # no job was planned
    cfg["algorithms"]["spectral"] = {"method": "sklearn.cluster.SpectralClustering", "params": {"afinity": "rbf"}}
    (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(work, "--configfile", "config/bad.yaml", "-n", "--cores", "1", check=False)
    assert proc.returncode != 0 and "algorithms.spectral.params" in proc.stdout and "afinity" in proc.stdout


# --- exact, faster Ward: the same partition as scikit-learn's AgglomerativeClustering -------------------------


def _ward_inputs():
    rng = np.random.default_rng(7)
    emb, _ = make_blobs(n_samples=500, centers=12, n_features=384, cluster_std=4.0, random_state=1)
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)  # unit-norm, like sentence embeddings
    raw = rng.normal(size=(450, 96)).astype(np.float32) * 0.05 + 0.3  # small distances on large norms
    umap_like, _ = make_blobs(n_samples=700, centers=9, n_features=2, cluster_std=1.5, random_state=2)
    umap_like = umap_like.astype(np.float32)
    grid = np.array([[i, j] for i in range(18) for j in range(18)], dtype=np.float32)  # many exactly tied distances
    return {
        "embeddings-384d": emb,
        "embeddings-with-duplicate-rows": np.vstack([emb, emb[:120], emb[:40]]),
        "near-duplicates-96d": np.vstack([raw, raw[:80] + np.float32(1e-6)]),
        "umap-like-2d": umap_like,
        "umap-like-2d-with-duplicates": np.vstack([umap_like, umap_like[:200], umap_like[:60]]),
        "grid-2d-ties": grid,
        "grid-2d-ties-and-duplicates": np.vstack([grid, grid[:90]]),
        "pca-like-5d": rng.normal(size=(600, 5)).astype(np.float32) * [10, 5, 2, 1, 0.5],
    }


WARD_INPUTS = _ward_inputs()


@pytest.mark.parametrize("name", list(WARD_INPUTS))
def test_ward_gives_scikit_learns_partition(name):
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import adjusted_rand_score

    x = WARD_INPUTS[name]
    expected_route = "vector" if x.shape[1] <= cluster.LOW_DIM else "blas"
    assert cluster.ward_route(x.shape[1]) == expected_route
    for k in (2, 9, 31):
        reference = AgglomerativeClustering(n_clusters=k).fit_predict(x)
        ours = cluster.cluster(x, "agglomerative", k, seed=42)
        assert len(np.unique(ours)) == k
        assert adjusted_rand_score(reference, ours) == 1.0, (name, k)


def test_ward_ties_fall_back_to_scikit_learns_route_and_are_logged():
    grid = WARD_INPUTS["grid-2d-ties"]
    logs = []
    cluster.ward(grid, 7, log=logs.append)
    assert any("tied merge heights" in m for m in logs)
    logs.clear()
    cluster.ward(WARD_INPUTS["umap-like-2d"], 7, log=logs.append)  # continuous data: no ties, no fallback
    assert logs == []
    with pytest.raises(MemoryLimitError, match="tied merge heights"):
        cluster.ward(grid, 7, max_memory_gb=1e-6)
    # equal tiny bottom merges (float32 points one ulp apart, common in UMAP output) commute: no fallback
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import adjusted_rand_score

    base = WARD_INPUTS["umap-like-2d"][:300]
    pairs = np.vstack([base, base + np.spacing(base) * [1, 0]]).astype(np.float32)
    logs.clear()
    ours = cluster.ward(pairs, 9, log=logs.append)
    assert logs == [] and adjusted_rand_score(AgglomerativeClustering(n_clusters=9).fit_predict(pairs), ours) == 1.0


def test_pairwise_condensed_matches_pdist_and_duplicates_are_exactly_zero():
    from scipy.spatial.distance import pdist

    x = WARD_INPUTS["embeddings-with-duplicate-rows"]
    ours, ref = cluster.pairwise_condensed(x, block=64), pdist(x.astype(np.float64))
    assert np.allclose(ours, ref, rtol=0, atol=1e-12)
    assert np.array_equal(ours == 0, ref == 0)  # duplicates tie exactly, as in pdist


def test_other_linkages_still_run_scikit_learn():
    from sklearn.cluster import AgglomerativeClustering

    x = WARD_INPUTS["umap-like-2d"]
    ours = cluster.cluster(x, "agglomerative", 5, linkage="average", seed=42)
    assert np.array_equal(ours, AgglomerativeClustering(n_clusters=5, linkage="average").fit_predict(x))


# --- algorithms by import path ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_import_path_estimator_is_told_n_clusters_and_seed():
    from sklearn.cluster import SpectralClustering

    x, y = blobs(n=300)
    row = score_splits(
        [(0, x, y)],
        {
            "method": "sklearn.cluster.SpectralClustering",
            "params": {"affinity": "nearest_neighbors", "n_neighbors": 10},
        },
        seed=42,
    )[0]
    assert row["n_clusters"] == 4 and row["v_measure"] > 0.9  # told n_clusters = number of labels
    ours = cluster.cluster(x, "sklearn.cluster.SpectralClustering", 4, seed=3, affinity="nearest_neighbors")
    ref = SpectralClustering(n_clusters=4, random_state=3, affinity="nearest_neighbors").fit_predict(x)
    assert np.array_equal(ours, ref)
    # no n_clusters/random_state in its signature: not passed (DBSCAN), fit + labels_ only is enough too
    assert len(cluster.cluster(x, "sklearn.cluster.DBSCAN", 4, eps=2.0, seed=42)) == len(x)


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"method": "spectral"}, r"algorithms\.bad\.method = 'spectral'.*import path"),
        ({"method": "sklearn.nocluster.Foo"}, r"algorithms\.bad\.method.*cannot import module 'sklearn.nocluster'"),
        ({"method": "sklearn.cluster.Nope"}, r"algorithms\.bad\.method.*has no attribute 'Nope'"),
        ({"method": "sklearn.cluster.k_means"}, r"algorithms\.bad\.method.*is not a class"),
        ({"method": "collections.OrderedDict"}, r"algorithms\.bad\.method.*neither fit_predict nor fit"),
        (
            {"method": "sklearn.cluster.SpectralClustering", "params": {"n_clustres": 3}},
            r"algorithms\.bad\.params: sklearn.cluster.SpectralClustering takes no parameter\(s\) n_clustres",
        ),
    ],
)
def test_import_path_algorithms_are_validated_up_front(spec, message):
    with pytest.raises(ValueError, match=message):
        cluster.validate_algorithm("bad", spec)


def test_builtin_and_good_import_path_specs_validate():
    cluster.validate_algorithm("kmeans", SPECS["kmeans"])
    cluster.validate_algorithm(
        "spectral", {"method": "sklearn.cluster.SpectralClustering", "params": {"affinity": "nearest_neighbors"}}
    )


# --- one configuration per job: scores, timings and predicted labels --------------------------------------------


def test_run_configuration_writes_scores_timings_and_labels(tmp_path):
    import pyarrow.parquet as pq

    from tecb import io

    x, y = blobs(n=120)
    ids = [np.arange(0, 80), np.arange(40, 120)]
    _, splits = io.dataset_tables([f"t{i}" for i in range(120)], [(i, list(y[i])) for i in ids])
    io.write_table(splits, tmp_path / "splits.parquet")
    io.write_table(
        io.reduced_table([(s, i, x[i]) for s, i in enumerate(ids)], {"reduction": "pca"}), tmp_path / "pca.parquet"
    )
    out = {k: tmp_path / f"{k}.parquet" for k in ("scores", "timings", "labels")}
    runs = []
    for _ in range(2):
        cluster.run_configuration(
            SPECS["hdbscan"],
            files=cluster.ClusterFiles(tmp_path / "splits.parquet", **out, reduced=tmp_path / "pca.parquet"),
            threads=1,
            log=lambda m: None,
            seed=42,
        )
        runs.append(out["scores"].read_bytes())
    assert runs[0] == runs[1]  # no durations in the score file: identical across reruns
    scores, timings, labels = (pq.read_table(out[k]) for k in ("scores", "timings", "labels"))
    assert "seconds" not in scores.column_names and scores.column("split").to_pylist() == [0, 1]
    assert timings.schema.names == ["split", "seconds"] and min(timings.column("seconds").to_pylist()) >= 0
    assert labels.schema.names == ["split", "text_id", "cluster"]
    assert str(labels.schema.field("cluster").type) == "int32"
    assert labels.column("text_id").to_pylist() == list(ids[0]) + list(ids[1])
    # the saved labels are each text's own prediction: on these well-separated blobs every cluster holds one
    # gold label, and the gold labels of the ids against the saved clusters give the scores file's V-measure
    # (scikit-learn's, from the two files, not from the job's in-memory arrays)
    from sklearn.metrics import v_measure_score

    saved = labels.to_pandas()
    for s, split_ids in enumerate(ids):
        pred = saved[saved.split == s].cluster.to_numpy()
        gold = y[split_ids]
        assert all(len(set(gold[pred == c])) == 1 for c in set(pred) - {-1}), s
        assert scores.column("v_measure").to_pylist()[s] == pytest.approx(v_measure_score(gold, pred))
        assert scores.column("v_measure").to_pylist()[s] > 0.9
    assert cluster.split_shape(tmp_path / "splits.parquet", tmp_path / "pca.parquet") == (80, 2)
    mb = cluster.job_memory_mb("agglomerative", {}, tmp_path / "splits.parquet", tmp_path / "pca.parquet")
    assert cluster.HEADROOM * cluster.BASE_MB < mb < cluster.HEADROOM * (cluster.BASE_MB + 5)
    assert (
        cluster.job_memory_mb("agglomerative", {}, tmp_path / "missing.parquet", tmp_path / "pca.parquet")
        == cluster.BASE_MB
    )  # before the inputs exist (Snakemake evaluates again before running the job)


@pytest.mark.workflow
def test_cluster_jobs_are_per_configuration_and_rerun_only_what_changed(tmp_path):
    """Adding a configuration runs only its job; changing one algorithm's params reruns only its jobs."""
    from conftest import copy_project, run_snakemake

    work = copy_project(tmp_path / "proj")
    layer = {
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 64}},
        "datasets": {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"}},
        "configurations": [
            {"algorithm": "kmeans", "reduction": "none"},
            {"algorithm": "agglomerative", "reduction": "umap"},
        ],
        "cluster": {"batch": False},  # one job per configuration (test_cluster_batch.py: batched)
    }

    def write(extra_configurations=(), **changes):
        cfg = {**layer, **changes}
        cfg["configurations"] = layer["configurations"] + list(extra_configurations)
        (work / "config/inc.yaml").write_text(yaml.safe_dump(cfg))
        return [
            f"results/demo/scores/tfidf/TenKGnadClusteringS2S/{c['reduction']}/{c['algorithm']}.parquet"
            for c in cfg["configurations"]
        ]

    def snake(targets, *args):
        return run_snakemake(
            work, "--configfile", "config/demo.yaml", "config/inc.yaml", "--cores", "2", *args, *targets
        ).stdout

    targets = write()
    snake(targets)
    for kind in ("scores", "timings", "labels"):
        assert (work / f"results/demo/{kind}/tfidf/TenKGnadClusteringS2S/umap/agglomerative.parquet").exists()
    assert job_counts(snake(targets, "-n")) == {}
    # a new configuration on an existing reduction: exactly one new cluster job, no reduce job
    targets = write([{"algorithm": "hdbscan", "reduction": "umap"}])
    assert job_counts(snake(targets, "-n")) == {"cluster": 1}
    # one algorithm's params change: only that algorithm's jobs
    targets = write(algorithms={"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 100}}})
    assert job_counts(snake(targets, "-n")) == {"cluster": 1}
    # cores and the memory limit are not results: nothing to do
    targets = write(cluster={"threads": 2, "max_memory_gb": 8, "batch": False})
    assert job_counts(snake(targets, "-n")) == {}
    # an import-path algorithm is checked before anything runs, naming the key
    write(algorithms={"spectral": {"method": "sklearn.cluster.SpectralClustring"}})
    bad = run_snakemake(work, "--configfile", "config/demo.yaml", "config/inc.yaml", "-n", check=False)
    assert bad.returncode != 0 and "algorithms.spectral.method" in bad.stdout and "SpectralClustring" in bad.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kmeans", "hdbscan"])
def test_cluster_threads_do_not_change_the_labels(name):
    """`cluster.threads` (schema default 4) is a resource, not a result setting: the methods that use it (k-means
    through BLAS/OpenMP, HDBSCAN's core-distance workers) give the same labels on 1 and on 4 threads, as a job
    runs them (threadpool_limits of its threads)."""
    from threadpoolctl import threadpool_limits

    x, y = blobs(n=3000, dim=64, centers=12)
    x = x + np.random.default_rng(3).normal(scale=3, size=x.shape).astype(np.float32)  # overlapping: not trivial
    labels = {}
    for threads in (1, 4):
        with threadpool_limits(threads):
            _, _, predictions = cluster.cluster_splits(
                [(0, x, y)], SPECS[name], seed=42, log=lambda m: None, threads=threads
            )
        labels[threads] = predictions[0][1]
    assert len(set(labels[1].tolist())) > 1
    assert labels[1].tobytes() == labels[4].tobytes()


@pytest.mark.slow
def test_run_configuration_holds_one_splits_rows_of_the_raw_embeddings_at_a_time(tmp_path):
    """40 splits of the same 1,000 texts x 256 dims (1 MB float32 each): all splits' rows copied at once took 40 MB
    (the paper's Blurbs: 28 splits, 178,475 split items, ~550 MB at 768 dims: its k-means job went over its
    declared memory); one split's rows at a time, the peak stays a few copies."""
    import tracemalloc

    import pyarrow.parquet as pq

    from tecb import io
    from tecb.embed import encode as embed

    rng = np.random.default_rng(0)
    n, dim, n_splits = 1000, 256, 40
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    labels = [f"l{i % 5}" for i in range(n)]
    _, splits = io.dataset_tables([f"t{i}" for i in range(n)], [(np.arange(n), labels)] * n_splits)
    io.write_table(splits, tmp_path / "splits.parquet")
    embed.write_embeddings(tmp_path / "emb.parquet", [(0, vectors)], n, {})
    out = {k: tmp_path / f"{k}.parquet" for k in ("scores", "timings", "labels")}
    files = cluster.ClusterFiles(tmp_path / "splits.parquet", **out, embeddings=tmp_path / "emb.parquet")
    copy = n * dim * 4
    tracemalloc.start()
    try:
        cluster.run_configuration(SPECS["kmeans"], files=files, threads=1, log=lambda m: None, seed=42)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(pq.read_table(out["scores"])) == n_splits
    assert peak < 15 * copy, f"peak {peak / copy:.1f} split copies"
