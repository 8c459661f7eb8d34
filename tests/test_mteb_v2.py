"""Our MTEB v2 clustering score equals mteb 2.x's own v2 evaluator on the same embeddings (issue 15.4)."""

import numpy as np
import pandas as pd
import pytest

from tecb.report import mteb_v2

mteb = pytest.importorskip("mteb")
from datasets import Dataset, DatasetDict  # noqa: E402
from mteb.abstasks.clustering import _convert_to_fast  # noqa: E402
from mteb.timing import TimingStack  # noqa: E402


class LookupEncoder:
    """An MTEB encoder that returns fixed vectors for the texts it is given (no model, no network)."""

    mteb_model_meta = None

    def __init__(self, vectors):
        self.vectors = vectors

    def encode(self, inputs, **kwargs):
        return np.stack([self.vectors[text] for batch in inputs for text in batch["text"]])

    def similarity(self, a, b):
        raise NotImplementedError

    def similarity_pairwise(self, a, b):
        raise NotImplementedError


def make_dataset(n_texts=3000, n_labels=9, dim=24, seed=0):
    """Noisy clusters; splits that overlap (texts recur, with a different label scheme in later splits, as in
    Blurbs' main/secondary genre splits), so pooling has first occurrences to respect."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_labels, size=n_texts)
    centres = rng.normal(size=(n_labels, dim))
    x = (centres[labels] + rng.normal(scale=2.0, size=(n_texts, dim))).astype(np.float32)
    rows = []
    for s, n in enumerate([800, 1500, 2500, 1200]):
        ids = rng.permutation(n_texts)[:n]
        coarse = s >= 2  # later splits: a coarser label scheme for the same texts
        rows += [
            {"split": s, "text_id": int(i), "label": f"g{labels[i] % 3}" if coarse else f"l{labels[i]}"} for i in ids
        ]
    return x, pd.DataFrame(rows)


def _mteb_pool(splits):
    """The splits as MTEB's legacy rows (one row per split: sentences, labels), pooled by MTEB's own code."""
    rows = [g for _, g in splits.groupby("split", sort=True)]
    legacy = DatasetDict(
        {
            "test": Dataset.from_dict(
                {"sentences": [[f"t{i}" for i in g.text_id] for g in rows], "labels": [list(g.label) for g in rows]}
            )
        }
    )
    return _convert_to_fast(legacy, "sentences", "labels", seed=42)["test"]


def test_pooling_equals_mteb_convert_to_fast():
    _, splits = make_dataset()
    theirs = _mteb_pool(splits)
    ours = mteb_v2.pool_splits(splits, seed=42)
    assert [f"t{i}" for i in ours.text_id] == theirs["sentences"]
    assert list(ours.label) == theirs["labels"]
    assert ours.label.str.startswith("g").any() and ours.label.str.startswith("l").any()
    # the down-sampling of very large pools
    theirs_small = _convert_to_fast(
        DatasetDict(
            {
                "test": Dataset.from_dict(
                    {
                        "sentences": [[f"t{i}" for i in g.text_id] for _, g in splits.groupby("split")],
                        "labels": [list(g.label) for _, g in splits.groupby("split")],
                    }
                )
            }
        ),
        "sentences",
        "labels",
        seed=42,
        max_size=500,
    )["test"]
    small = mteb_v2.pool_splits(splits, max_pool=500, seed=42)
    assert [f"t{i}" for i in small.text_id] == theirs_small["sentences"]


@pytest.mark.slow
@pytest.mark.parametrize("task_name", ["BlurbsClusteringP2P.v2", "TenKGnadClusteringP2P.v2"])
def test_score_equals_mteb_v2_evaluator(task_name):
    x, splits = make_dataset()
    pooled = _mteb_pool(splits)
    task = mteb.get_task(task_name)  # AbsTaskClustering: downsample, 10 bootstraps of 16384, MiniBatchKMeans
    options = {}
    if task_name.startswith("TenKGnad"):  # keep MTEB's defaults for Blurbs; a smaller bootstrap here (time)
        task.max_documents_per_cluster = options["sample_size"] = 4000
    vectors = {f"t{i}": x[i] for i in range(len(x))}
    theirs = task._evaluate_subset(
        LookupEncoder(vectors),
        pooled,
        encode_kwargs={"batch_size": 256},
        hf_split="test",
        hf_subset="default",
        timer=TimingStack(),
    )
    ours_pool = mteb_v2.pool_splits(splits, seed=42)
    rows = mteb_v2.score(
        x[ours_pool.text_id.to_numpy()],
        ours_pool.label.tolist(),
        seed=42,
        max_documents=task.max_document_to_embed,
        **options,
    )
    assert task.max_document_to_embed == mteb_v2.MTEB_V2_DOCUMENTS[task_name.removesuffix(".v2")]
    assert rows.v_measure.tolist() == theirs["v_measures"]["Level 0"]  # exact, per bootstrap
    assert rows.ami.tolist() == theirs["ami_scores"]["Level 0"]
    s = mteb_v2.summary(rows)
    assert s["v_measure"] == theirs["v_measure"] and s["v_measure_std"] == theirs["v_measure_std"]
    assert s["ami"] == theirs["ami"]
    assert 0.1 < s["v_measure"] < 0.95  # a non-trivial clustering, so equality means something
    other = mteb_v2.score(
        x[ours_pool.text_id.to_numpy()],
        ours_pool.label.tolist(),
        seed=7,
        max_documents=task.max_document_to_embed,
        **(options | {"n_bootstraps": 1}),
    )
    assert other.v_measure[0] != theirs["v_measures"]["Level 0"][0]  # sensitive to the seed


@pytest.mark.slow
def test_hierarchical_labels_equal_mteb_per_level():
    x, splits = make_dataset(n_texts=900, seed=3)
    pooled = mteb_v2.pool_splits(splits, seed=42)
    # two levels: the coarse group, then the fine label (texts whose label is already coarse lack level 1)
    labels = [[f"g{int(lab[1:]) % 3}", lab] if lab.startswith("l") else [lab] for lab in pooled.label]
    task = mteb.get_task("TenKGnadClusteringS2S.v2")
    task.max_document_to_embed, task.max_documents_per_cluster, task.n_clusters = 700, 1000, 3
    names = [f"t{i}" for i in pooled.text_id]
    data = Dataset.from_dict({"sentences": names, "labels": labels})
    theirs = task._evaluate_subset(
        LookupEncoder({f"t{i}": x[i] for i in range(len(x))}),
        data,
        encode_kwargs={"batch_size": 256},
        hf_split="test",
        hf_subset="default",
        timer=TimingStack(),
    )
    rows = mteb_v2.score(
        x[pooled.text_id.to_numpy()], labels, seed=42, max_documents=700, sample_size=1000, n_bootstraps=3
    )
    assert sorted(rows.level.unique()) == [0, 1]
    for level in (0, 1):
        assert rows[rows.level == level].v_measure.tolist() == theirs["v_measures"][f"Level {level}"]
    assert mteb_v2.summary(rows)["v_measure"] == theirs["v_measure"]


@pytest.mark.slow
def test_run_writes_a_deterministic_file(tmp_path):
    import pyarrow as pa

    from tecb.io import embedding_batch, embedding_schema

    x, splits = make_dataset(n_texts=400, seed=1)
    splits.to_parquet(tmp_path / "splits.parquet")
    import pyarrow.parquet as pq

    schema = embedding_schema(x.shape[1], {"model": "fake"})

    pq.write_table(pa.Table.from_batches([embedding_batch(schema, 0, x)]), tmp_path / "emb.parquet")
    out = tmp_path / "a.parquet"
    rows = mteb_v2.run(
        tmp_path / "emb.parquet",
        tmp_path / "splits.parquet",
        out,
        dataset="MyDataset",
        sample_size=500,
        log=lambda m: None,
        seed=42,
    )
    assert len(rows) == 10 and set(rows.n_texts) == {len(mteb_v2.pool_splits(splits, seed=42))}
    first = out.read_bytes()
    mteb_v2.run(
        tmp_path / "emb.parquet",
        tmp_path / "splits.parquet",
        out,
        dataset="MyDataset",
        sample_size=500,
        log=lambda m: None,
        seed=42,
    )
    assert out.read_bytes() == first
    with pytest.raises(ValueError, match="unknown option"):
        mteb_v2.score(x, ["a"] * len(x), n_bootstrap=3, seed=42)
