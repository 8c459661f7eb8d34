"""scoring.restarts (issue 53 item 1): each split clustered in R seeded states of a stochastic algorithm, its scores
the means over the states and each state's V-measure kept; R = 1 is the paper's one run, row for row; the cluster
batch writes the bytes the per-configuration job writes."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import ALGORITHMS, blobs, three_configurations_layer

from tecb import io
from tecb.cluster import batch
from tecb.cluster.algorithms import (
    ClusterFiles,
    cluster_splits,
    labels_table,
    minibatch_kmeans,
    restart_seeds,
    run_configuration,
    stochastic,
    with_restarts,
)
from tecb.cluster.metrics import score
from tecb.report.mteb_results import MTEB_KMEANS, mteb_task_of

QUIET = {"log": lambda message: None}


class SeedParity:
    """A seeded "clusterer" whose partition is chosen by its seed's parity: even = the gold split of four texts
    [a, a, b, b], odd = the crossed one (V-measure 0, ARI -1/2 by hand)."""

    def __init__(self, n_clusters=2, random_state=None):
        self.random_state = random_state

    def fit_predict(self, x):
        return np.array([0, 0, 1, 1] if self.random_state % 2 == 0 else [0, 1, 0, 1])


PARITY = {"method": f"{__name__}.SeedParity"}
GOLD = np.array(["a", "a", "b", "b"], dtype=object)


def test_state_zero_is_the_seed_and_the_states_are_a_function_of_the_seed():
    assert restart_seeds(42, 1) == [42]
    # pinned: another derivation changes every score at R > 1
    assert restart_seeds(42, 3) == [42, 4091952314, 233227757]
    assert restart_seeds(42, 10)[:3] == restart_seeds(42, 3)
    assert len(set(restart_seeds(42, 10))) == 10 and restart_seeds(7, 3)[1:] != restart_seeds(42, 3)[1:]
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="restarts must be an integer >= 1"):
            restart_seeds(42, bad)


def test_one_restart_leaves_the_spec_as_configured():
    spec = ALGORITHMS["kmeans"]
    assert with_restarts(spec, 1) == spec and "restarts" not in with_restarts(spec, 1)
    assert with_restarts(spec, 10) == {**spec, "restarts": 10}
    with pytest.raises(ValueError):
        with_restarts(spec, 0)


def test_which_methods_are_stochastic():
    assert stochastic("minibatch_kmeans") and stochastic("dbstream")
    assert not stochastic("agglomerative") and not stochastic("hdbscan")
    assert stochastic("sklearn.cluster.SpectralClustering")
    assert not stochastic("sklearn.cluster.SpectralClustering", {"random_state": 0})  # every state the same
    assert not stochastic("sklearn.cluster.Birch")  # takes no random_state


def test_the_row_holds_the_mean_and_each_states_value_by_hand():
    rows, _, predictions = cluster_splits([(0, np.zeros((4, 2)), GOLD)], {**PARITY, "restarts": 3}, seed=42, **QUIET)
    (row,) = rows
    # seeds 42, 4091952314 (even), 233227757 (odd): the gold partition twice, the crossed one once
    assert row["restarts"] == 3
    assert row["v_measure_restarts"] == [1.0, 1.0, 0.0]
    assert row["v_measure"] == pytest.approx(2 / 3)
    assert row["homogeneity"] == pytest.approx(2 / 3) and row["completeness"] == pytest.approx(2 / 3)
    assert row["ari"] == pytest.approx((1 + 1 - 0.5) / 3)  # the crossed partition's ARI is -1/2
    crossed = score(GOLD, [0, 1, 0, 1])["ami"]
    assert row["ami"] == pytest.approx((1 + 1 + crossed) / 3)
    # the counts are state 0's; the predictions every state's, state 0 first
    assert row["n_clusters"] == 2 and not row["degenerate"]
    assert predictions[0][1].tolist() == [[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 0, 1]]


def test_the_labels_file_holds_every_states_predictions_at_several_restarts():
    """At R > 1 a ``state`` column (int16) and each state's rows, split by split (the text-level bootstrap
    recomputes each state's V-measure from them); at R = 1 the table has the three columns it always had."""
    rows, _, predictions = cluster_splits(
        [(0, np.zeros((4, 2)), GOLD), (3, np.zeros((4, 2)), GOLD)], {**PARITY, "restarts": 3}, seed=42, **QUIET
    )
    ids = {0: [10, 11, 12, 13], 3: [11, 12, 13, 14]}
    table = labels_table(predictions, ids)
    assert table.schema.names == ["split", "text_id", "cluster", "state"]
    assert table.schema.field("state").type == pa.int16() and table.schema.field("split").type == pa.int16()
    frame = table.to_pandas()
    assert len(frame) == 2 * 3 * 4
    assert frame.split.tolist() == [0] * 12 + [3] * 12
    assert frame.state.tolist() == ([0] * 4 + [1] * 4 + [2] * 4) * 2
    assert frame.text_id.tolist() == ids[0] * 3 + ids[3] * 3
    # each state's V-measure recomputed from its rows is the row's v_measure_restarts
    for row in rows:
        part = frame[frame.split == row["split"]]
        again = [score(GOLD, g.cluster.to_numpy())["v_measure"] for _, g in part.groupby("state")]
        assert again == row["v_measure_restarts"]
    one = labels_table(cluster_splits([(0, np.zeros((4, 2)), GOLD)], PARITY, seed=42, **QUIET)[2], ids)
    assert one.schema.names == ["split", "text_id", "cluster"]
    assert one.column("cluster").to_pylist() == [0, 0, 1, 1]
    # a deterministic method at R > 1: one state, still with the column (the run's files share one format)
    det = {"method": "sklearn.cluster.Birch", "params": {"threshold": 0.01}, "restarts": 3}
    table = labels_table(cluster_splits([(0, np.eye(4)[[0, 0, 1, 1]], GOLD)], det, seed=42, **QUIET)[2], ids)
    assert table.column("state").to_pylist() == [0, 0, 0, 0]


@pytest.mark.slow
def test_one_restart_is_the_paper_row_and_state_zero_is_that_run():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 300)
    x = rng.normal(size=(300, 2)) + y[:, None] * 0.8
    labels = y.astype(str).astype(object)
    data = [(0, x, labels), (1, x[:200], labels[:200])]
    for name in ("kmeans", "dbstream"):
        spec = ALGORITHMS[name]
        one = cluster_splits(data, spec, seed=42, **QUIET)
        assert cluster_splits(data, with_restarts(spec, 1), seed=42, **QUIET)[0] == one[0]
        assert all("restarts" not in r and "v_measure_restarts" not in r for r in one[0])
        three, _, predictions = cluster_splits(data, with_restarts(spec, 3), seed=42, **QUIET)
        for r1, r3, (_, p1), (_, p3), (_, _, lab) in zip(one[0], three, one[2], predictions, data):
            assert r3["restarts"] == 3 and r3["v_measure_restarts"][0] == r1["v_measure"], name
            assert p3.shape == (3, len(p1)) and np.array_equal(p1, p3[0]), name  # state 0 is the one run
            assert [score(lab, p)["v_measure"] for p in p3] == r3["v_measure_restarts"], name
            assert r3["v_measure"] == pytest.approx(np.mean(r3["v_measure_restarts"]))
            assert len(set(r3["v_measure_restarts"])) > 1, name  # the states differ on this data
    # each k-means state is MiniBatchKMeans at that state's seed
    row = cluster_splits(data[:1], with_restarts(ALGORITHMS["kmeans"], 3), seed=42, **QUIET)[0][0]
    params = ALGORITHMS["kmeans"]["params"]
    direct = [score(labels, minibatch_kmeans(x, 5, seed=s, **params))["v_measure"] for s in restart_seeds(42, 3)]
    assert row["v_measure_restarts"] == direct


def test_a_deterministic_method_runs_once_and_says_so():
    x, y = blobs(n=120, seed=1)
    x = x + np.random.default_rng(1).normal(scale=6.0, size=x.shape).astype(np.float32)
    for name in ("agglomerative", "hdbscan"):
        (one,) = cluster_splits([(0, x, y)], ALGORITHMS[name], seed=42, **QUIET)[0]
        (ten,) = cluster_splits([(0, x, y)], with_restarts(ALGORITHMS[name], 10), seed=42, **QUIET)[0]
        assert ten["restarts"] == 1 and ten["v_measure_restarts"] == [one["v_measure"]], name
        assert {k: v for k, v in ten.items() if "restarts" not in k} == one, name


def _data(tmp_path):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 160)
    x = (rng.normal(size=(160, 2)) + y[:, None]).astype(np.float32)
    ids = [np.arange(0, 100), np.arange(60, 160)]
    _, splits = io.dataset_tables([f"t{i}" for i in range(160)], [(i, [f"c{v}" for v in y[i]]) for i in ids])
    io.write_table(splits, tmp_path / "splits.parquet")
    points = tmp_path / "a.parquet"
    io.write_table(io.reduced_table([(s, i, x[i]) for s, i in enumerate(ids)], {"reduction": "a"}), points)
    return tmp_path / "splits.parquet", points


@pytest.mark.slow
def test_the_batch_writes_the_per_configuration_bytes_at_three_restarts(tmp_path):
    splits, points = _data(tmp_path)
    specs = {f"a/{name}": with_restarts(ALGORITHMS[name], 3) for name in ("kmeans", "agglomerative", "dbstream")}
    kinds = ("scores", "timings", "labels")
    members = []
    for name, spec in specs.items():
        out = {k: tmp_path / "batch" / k / f"{name.replace('/', '-')}.parquet" for k in kinds}
        members.append({"name": name, "spec": spec, "threads": 1, "reduced_path": points, **out})
    computed = batch.run_batch(
        batch.Batch(reductions=[], members=members),
        files=batch.BatchFiles(embeddings=None, splits=splits, keys=tmp_path / "batch" / "keys.json"),
        seed=42,
        max_memory_gb=None,
        cache_umap=False,
        **QUIET,
    )
    assert computed == list(specs)
    for member in members:
        # the batch's places under another folder: a score file records its configuration by its place's last four
        # parts (tecb.io.score_slot)
        name = member["name"].replace("/", "-")
        solo = [tmp_path / "solo" / tmp_path.name / "batch" / k / f"{name}.parquet" for k in kinds]
        run_configuration(
            member["spec"], files=ClusterFiles(splits, *solo, reduced=points), seed=42, threads=1, **QUIET
        )
        assert member["scores"].read_bytes() == solo[0].read_bytes(), member["name"]
        assert member["labels"].read_bytes() == solo[2].read_bytes(), member["name"]
        table = pq.read_table(member["scores"])
        assert table.schema.field("restarts").type == "int64"
        kind = table.schema.field("v_measure_restarts").type
        assert pa.types.is_list(kind) and kind.value_type == pa.float64()
        expected = 1 if member["name"] == "a/agglomerative" else 3
        assert table.column("restarts").to_pylist() == [expected, expected], member["name"]
        labels = pq.read_table(member["labels"]).to_pandas()  # every state's predictions, 100 texts per split
        assert labels.groupby(["split", "state"]).size().tolist() == [100] * 2 * expected, member["name"]
    # the restarts are part of each member's key: back at one restart every member is computed again
    keys = json.loads((tmp_path / "batch" / "keys.json").read_text())
    one = batch.member_key(
        spec=ALGORITHMS["kmeans"], seed=42, points_sha256=io.file_sha256(points),
        splits_sha256=io.file_sha256(splits), versions=batch.library_versions(),
    )  # fmt: skip
    assert keys["a/kmeans"]["key"] != one


def test_restart_averaged_scores_never_carry_an_mteb_task_name():
    dataset = {"source": "published_blurbs_s2s", "text": "s2s"}
    assert mteb_task_of(dataset, {}, kmeans=with_restarts(MTEB_KMEANS, 1), seed=42) == "BlurbsClusteringS2S"
    assert mteb_task_of(dataset, {}, kmeans=with_restarts(MTEB_KMEANS, 10), seed=42) is None


@pytest.mark.workflow
def test_the_workflow_scores_alike_per_configuration_and_batched_at_three_restarts(tmp_path):
    """scoring.restarts reaches both execution modes (the cluster rule's params and cluster_batch's members): the
    same score and label bytes at R = 3, and changing R reruns the clusterings."""
    import yaml
    from conftest import copy_project, run_snakemake
    from helpers import job_counts

    work = copy_project(tmp_path / "proj")
    layer = {
        **three_configurations_layer(),
        "reductions": {"pca": {"method": "pca", "n_components": 2}},
        "scoring": {"restarts": 3},
    }
    where = "scores/tfidf/TenKGnadClusteringS2S/{r}/{a}.parquet"
    rels = [where.format(r=c["reduction"], a=c["algorithm"]) for c in layer["configurations"]]
    rels += [rel.replace("scores/", "labels/", 1) for rel in rels]

    def run(name, batched, *args, **changes):
        cfg = {**layer, "run": name, "cluster": {"threads": 1, "batch": batched}, **changes}
        (work / f"config/{name}.yaml").write_text(yaml.safe_dump(cfg))
        targets = [f"results/{name}/{rel}" for rel in rels]
        return run_snakemake(
            work, "--configfile", "config/demo.yaml", f"config/{name}.yaml", "--cores", "2", *args, *targets
        ).stdout

    run("perjob", False)
    run("batched", True)
    for rel in rels:
        assert (work / "results/batched" / rel).read_bytes() == (work / "results/perjob" / rel).read_bytes(), rel
    restarts = {
        c["algorithm"]: pq.read_table(work / "results/batched" / rels[i]).column("restarts").to_pylist()
        for i, c in enumerate(layer["configurations"])
    }
    assert restarts == {"kmeans": [3, 3], "agglomerative": [1, 1], "dbstream": [3, 3]}
    states = {
        c["algorithm"]: sorted(set(pq.read_table(work / "results/batched" / rels[3 + i]).column("state").to_pylist()))
        for i, c in enumerate(layer["configurations"])
    }
    assert states == {"kmeans": [0, 1, 2], "agglomerative": [0], "dbstream": [0, 1, 2]}  # every state's predictions
    # back to the paper's one run: the clusterings are computed again (the restarts are in their params), each
    # job given its one-restart minutes; at R = 3 a stochastic method's job gets 3 x those (SLURM's --time)
    one = run("perjob", False, "-n", scoring={"restarts": 1})
    assert job_counts(one).get("cluster") == 3
    assert _minutes(one, "cluster") == {"kmeans": 20, "agglomerative": 20, "dbstream": 20}
    three = run("perjob", False, "-n", "--forcerun", "cluster")
    assert _minutes(three, "cluster") == {"kmeans": 60, "agglomerative": 20, "dbstream": 60}
    batched = run("batched", True, "-n", scoring={"restarts": 1})
    assert job_counts(batched) == {"cluster_batch": 1} and _minutes(batched, "cluster_batch") == {"": 60}
    assert _minutes(run("batched", True, "-n", "--forcerun", "cluster_batch"), "cluster_batch") == {"": 180}


def _minutes(dry_run: str, rule: str) -> dict[str, int]:
    """``{algorithm: runtime}`` of the ``rule`` jobs a dry run lists (``""`` for a job without that wildcard)."""
    import re

    minutes = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        if not block.startswith(f"rule {rule}:"):
            continue
        algorithm = re.search(r"algorithm=(\w+)", block)
        minutes[algorithm.group(1) if algorithm else ""] = int(re.search(r"runtime=(\d+)", block).group(1))
    return minutes


def test_every_training_job_scores_under_scoring_restarts():
    """A job that clusters a trained model (pretrain, adapt, and the frozen arms: adapt_frozen) gets its algorithm
    through ``algorithm_spec`` (scoring.restarts applied), never the bare ``algorithms.<name>`` entry: the frozen
    arms once clustered each split once whatever scoring.restarts said (found in issue 54's three-dataset run)."""
    import re

    from conftest import ROOT

    params = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for line in smk.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*algorithm=lambda", line):
                params.append((smk.name, line.strip()))
    assert {name for name, _ in params} >= {"adapt.smk", "pretrain.smk"} and len(params) >= 3
    assert [p for p in params if "algorithm_spec(" not in p[1]] == []
