"""Our k-means V-measure per split equals MTEB's clustering evaluator exactly (same embeddings)."""

import numpy as np
import pytest
from helpers import LookupEncoder

mteb = pytest.importorskip("mteb")
from datasets import Dataset  # noqa: E402
from mteb.timing import TimingStack  # noqa: E402

from tecb.cluster.algorithms import score_splits  # noqa: E402

KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}  # config/config.yaml


def make_splits(seed=0):
    """Overlapping, noisy clusters (V-measure well below 1) and splits of 120..1500 rows, shuffled."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 9, size=1500)
    centres = rng.normal(size=(9, 48))
    x = (centres[labels] + rng.normal(scale=2.5, size=(1500, 48))).astype(np.float32)
    splits = []
    for s, n in enumerate([120, 499, 501, 1000, 1500]):
        ids = rng.permutation(1500)[:n]
        splits.append((s, ids, np.array([f"label{c}" for c in labels[ids]], dtype=object)))
    return x, splits


@pytest.mark.slow
def test_kmeans_v_measure_equals_mteb_legacy_clustering_evaluator():
    x, splits = make_splits()
    task = mteb.get_task("BlurbsClusteringS2S")  # AbsTaskClusteringLegacy -> ClusteringEvaluator
    data = Dataset.from_dict(
        {
            "sentences": [[f"t{i}" for i in ids] for _, ids, _ in splits],
            "labels": [list(labels) for _, _, labels in splits],
        }
    )
    encoder = LookupEncoder({f"t{i}": x[i] for i in range(len(x))})
    theirs = task._evaluate_subset(
        encoder, data, encode_kwargs={"batch_size": 64}, hf_split="test", hf_subset="default", timer=TimingStack()
    )["v_measures"]
    assert encoder.calls == len(splits)
    ours = [
        r["v_measure"]
        for r in score_splits(((s, x[ids], lab) for s, ids, lab in splits), KMEANS, seed=42, log=lambda m: None)
    ]
    assert ours == theirs  # exact, not approximate
    assert all(0.2 < v < 0.99 for v in ours), ours  # a non-trivial clustering, so equality means something
    other_seed = [
        r["v_measure"]
        for r in score_splits(((s, x[ids], lab) for s, ids, lab in splits), KMEANS, seed=7, log=lambda m: None)
    ]
    assert other_seed != theirs  # the comparison is sensitive to the seed
