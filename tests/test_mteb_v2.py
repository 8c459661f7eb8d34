"""Our MTEB v2 clustering score equals mteb 2.x's own v2 task classes on the same embeddings (issues 15.4, 21.1).

mteb is the oracle: each test hands mteb's task class the same splits, as mteb's legacy rows (one row per split:
sentences, labels), runs the class's own ``dataset_transform`` and mteb's public ``mteb.evaluate`` with an encoder
that returns our vectors by text, and compares every bootstrap's V-measure and AMI with ours, exactly. Datasets are
built here by the project's builders from raw files in the real formats (``tecb.data.demo`` writers), no network.
"""

import importlib.metadata

import numpy as np
import pandas as pd
import pytest
from helpers import LookupEncoder

from tecb.scoring import mteb_v2

mteb = pytest.importorskip("mteb")
from datasets import Dataset, DatasetDict  # noqa: E402


def legacy_rows(texts, splits):
    """The splits as mteb's legacy clustering rows (what the hub datasets hold): one row per split."""
    groups = [g for _, g in splits.groupby("split", sort=True)]
    return DatasetDict(
        {
            "test": Dataset.from_dict(
                {
                    "sentences": [[texts[i] for i in g.text_id] for g in groups],
                    "labels": [list(g.label) for g in groups],
                }
            )
        }
    )


def mteb_task(task_name, texts, splits, *, n_bootstraps, sample_size, limits=None):
    """mteb's task class with our splits loaded as its hub data and its own dataset_transform run."""
    task = mteb.get_task(task_name)
    task.n_clusters, task.max_documents_per_cluster = n_bootstraps, sample_size
    task.dataset = legacy_rows(texts, splits)
    task.dataset_transform()
    for key, value in (limits or {}).items():
        setattr(task, key, value)
    task.data_loaded = True
    return task


def mteb_scores(task, vectors):
    """mteb's public evaluation of ``task`` with an encoder returning ``vectors`` (text -> vector)."""
    encoder = LookupEncoder(vectors)
    result = mteb.evaluate(encoder, task, cache=None, co2_tracker=False, show_progress_bar=False)
    (task_result,) = result.task_results
    (scores,) = task_result.scores["test"]
    return scores, encoder.seen


def clustered_vectors(texts, splits, dim=16, seed=0):
    """One vector per text: the centre of its first label plus noise (a clustering that is neither trivial nor
    perfect); returns ``x`` (by text_id) and ``{text: vector}`` for the encoder."""
    rng = np.random.default_rng(seed)
    first = splits.drop_duplicates("text_id").set_index("text_id").label.to_dict()
    labels = [first.get(i, "unused") for i in range(len(texts))]
    centres = {lab: rng.normal(size=dim) for lab in sorted(set(labels))}
    x = np.stack([centres[lab] + rng.normal(scale=1.5, size=dim) for lab in labels]).astype(np.float32)
    return x, {t: x[i] for i, t in enumerate(texts)}


def write_embeddings(x, path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tecb.io import embedding_batch, embedding_schema

    schema = embedding_schema(x.shape[1], {"model": "fake"})
    pq.write_table(pa.Table.from_batches([embedding_batch(schema, 0, x)]), path)


def build(tmp_path, name, entry, raw):
    """Build dataset ``name`` from ``raw`` through the project's builder and write its files."""
    from tecb.data.datasets import build_from_config
    from tecb.io import write_dataset

    built = build_from_config(name, entry, {}, raw, seed=42)
    folder = tmp_path / name
    folder.mkdir()
    write_dataset(
        built.texts, built.splits, folder / "texts.parquet", folder / "splits.parquet", name, built.provenance
    )
    return built.texts, pd.read_parquet(folder / "splits.parquet"), folder / "splits.parquet"


@pytest.fixture(scope="module")
def raw_sources(tmp_path_factory):
    from tecb.data import demo

    d = tmp_path_factory.mktemp("raw")
    custom = d / "custom.csv"
    rng = np.random.default_rng(5)
    labels = rng.choice(["sport", "kultur", "politik", "wetter", "technik"], size=400)
    pd.DataFrame({"text": [f"{lab} Meldung {i}" for i, lab in enumerate(labels)], "label": labels}).to_csv(
        custom, index=False
    )
    return {
        "germeval2019": demo.write_germeval_zip(d / "germeval2019.zip", seed=42),
        "million_posts": demo.write_million_posts_sqlite(d / "corpus.sqlite3", seed=42),
        # enough posts that the pooled Reddit S2S items exceed mteb's stratified 2048
        "reddit": demo.write_reddit_submissions(d / "submissions.parquet", posts_per_subreddit=70, seed=42),
        "custom": custom,
    }


KINDS = [
    # our dataset, its config entry, the mteb task class it follows, mteb task attributes for the custom kind
    ("BlurbsClusteringS2S", {"source": "germeval2019", "text": "s2s"}, "BlurbsClusteringS2S.v2", None),
    ("BlurbsClusteringP2P", {"source": "germeval2019", "text": "p2p"}, "BlurbsClusteringP2P.v2", None),
    ("TenKGnadClusteringS2S", {"source": "million_posts", "text": "s2s"}, "TenKGnadClusteringS2S.v2", None),
    ("TenKGnadClusteringP2P", {"source": "million_posts", "text": "p2p"}, "TenKGnadClusteringP2P.v2", None),
    (
        "RedditClusteringS2S",
        {"source": "reddit", "text": "s2s", "min_subreddits": 4, "max_subreddits": 8},
        "RedditClustering.v2",
        None,
    ),
    (
        "RedditClusteringP2P",
        {"source": "reddit", "text": "p2p", "min_subreddits": 4, "max_subreddits": 8},
        "RedditClusteringP2P.v2",
        None,
    ),
    # a custom dataset: _convert_to_fast pooling (TenKGnad's class) with neither limit set = all texts
    (
        "MyNews",
        {"source": "custom"},
        "TenKGnadClusteringS2S.v2",
        {"max_document_to_embed": None, "max_fraction_of_documents_to_embed": None},
    ),
]


def test_mteb_version_is_the_installed_one():
    """The version the module says it reproduces is the mteb the equality tests run against."""
    assert mteb_v2.MTEB_VERSION == importlib.metadata.version("mteb")


def test_recipes_are_mteb_task_attributes():
    """Each recipe's limits and published dataset are those of mteb's task class of that name."""
    for name, spec in mteb_v2.RECIPES.items():
        if name == "custom":
            continue
        task = mteb.get_task(name)
        assert task.max_document_to_embed == spec["max_documents"], name
        if spec["max_fraction"] is not None:
            assert task.max_fraction_of_documents_to_embed == spec["max_fraction"], name
        if spec["dataset"] is not None:
            assert (task.metadata.dataset["path"], task.metadata.dataset["revision"]) == spec["dataset"], name
        assert task.seed == mteb_v2.MTEB_SEED
        assert (task.n_clusters, task.max_documents_per_cluster, task.k_mean_batch_size) == (
            mteb_v2.DEFAULTS["n_bootstraps"],
            mteb_v2.DEFAULTS["sample_size"],
            mteb_v2.DEFAULTS["batch_size"],
        )


def synthetic_splits(seed=0):
    """Overlapping splits (texts recur with another label scheme, as in Blurbs), a few singleton labels, more
    than 2048 items in all so the stratified subsample is drawn."""
    rng = np.random.default_rng(seed)
    n_texts = 2500
    fine = rng.integers(0, 40, size=n_texts)
    rows = []
    for s, n in enumerate([900, 1400, 700, 600]):
        ids = rng.permutation(n_texts)[:n]
        coarse = s in (0, 2)
        rows += [{"split": s, "text_id": int(i), "label": f"g{fine[i] % 6}" if coarse else f"f{fine[i]}"} for i in ids]
    rows += [{"split": 3, "text_id": 7, "label": "solo-a"}, {"split": 1, "text_id": 8, "label": "solo-b"}]
    return [f"text {i}" for i in range(n_texts)], pd.DataFrame(rows)


@pytest.mark.parametrize(
    "recipe", ["BlurbsClusteringS2S.v2", "BlurbsClusteringP2P.v2", "RedditClusteringP2P.v2", "RedditClustering.v2"]
)
@pytest.mark.slow
def test_pool_equals_mteb_dataset_transform(recipe):
    """Pooling, singleton dropping and the stratified subsample equal the mteb class's dataset_transform."""
    texts, splits = synthetic_splits()
    if recipe == "RedditClustering.v2":  # mteb's stratified split refuses singleton labels: none here
        splits = splits[~splits.label.str.startswith("solo")]
    task = mteb.get_task(recipe)
    task.dataset = legacy_rows(texts, splits)
    task.dataset_transform()
    data = task.dataset["test"]
    theirs = list(data["labels"])
    if hasattr(data.features["labels"], "names"):  # the stratified subsample encodes the labels
        theirs = [data.features["labels"].names[i] for i in theirs]
    ours = mteb_v2.pool_splits(splits, recipe=recipe, seed=42)
    assert [texts[i] for i in ours.text_id] == list(data["sentences"])
    assert list(ours.label) == theirs
    spec = mteb_v2.RECIPES[recipe]
    if spec["drop_singletons"]:
        assert not ours.label.str.startswith("solo").any()
    if spec["stratify"]:
        assert len(ours) == 2048
    if spec["pooling"] == "all_items" and not spec["stratify"]:
        assert len(ours) == len(splits) - 2 * spec["drop_singletons"]  # every item of every split
    # the pool depends on the seed where it draws
    if spec["stratify"]:
        assert list(mteb_v2.pool_splits(splits, recipe=recipe, seed=7).text_id) != list(ours.text_id)


def test_first_label_pool_cap_equals_convert_to_fast():
    from mteb.abstasks.clustering import _convert_to_fast

    texts, splits = synthetic_splits()
    theirs = _convert_to_fast(legacy_rows(texts, splits), "sentences", "labels", seed=42, max_size=500)["test"]
    small = mteb_v2.pool_splits(splits, recipe="custom", seed=42, max_pool=500)
    assert [texts[i] for i in small.text_id] == theirs["sentences"] and list(small.label) == theirs["labels"]


def test_stratified_subsample_errors_like_mteb():
    with pytest.raises(ValueError, match="label 'b' has one item"):
        mteb_v2.stratified_subsample(["a"] * 10 + ["b"], 5, seed=42)
    with pytest.raises(ValueError, match="3 labels need"):
        mteb_v2.stratified_subsample(["a", "a", "b", "b", "c", "c"], 4, seed=42)
    assert list(mteb_v2.stratified_subsample(["a", "b"], 2, seed=42)) == [0, 1]  # nothing to draw


@pytest.mark.slow
@pytest.mark.parametrize("name,entry,task_name,limits", KINDS, ids=[k[0] for k in KINDS])
def test_run_equals_mteb_task(tmp_path, raw_sources, name, entry, task_name, limits):
    """Every dataset kind: our scores equal mteb's task class (dataset_transform + mteb.evaluate), bootstrap by
    bootstrap, on datasets built by the project's builders from raw files in the real formats."""
    texts, splits, splits_path = build(tmp_path, name, entry, raw_sources[entry["source"]])
    x, vectors = clustered_vectors(texts, splits)
    write_embeddings(x, tmp_path / "emb.parquet")
    options = {"n_bootstraps": 3, "sample_size": 1500}
    ours = mteb_v2.run(
        tmp_path / "emb.parquet", splits_path, tmp_path / "out.parquet", dataset=name, seed=42, log=print, **options
    )
    task = mteb_task(task_name, texts, splits, n_bootstraps=3, sample_size=1500, limits=limits)
    theirs, n_embedded = mteb_scores(task, vectors)
    assert ours.v_measure.tolist() == theirs["v_measures"]["Level 0"]  # exact, per bootstrap
    assert ours.ami.tolist() == theirs["ami_scores"]["Level 0"]
    s = mteb_v2.summary(ours)
    assert s["v_measure"] == theirs["v_measure"] and s["v_measure_std"] == theirs["v_measure_std"]
    assert s["ami"] == theirs["ami"]
    assert set(ours.n_texts) == {n_embedded}  # as many texts as mteb embedded
    assert 0.05 < s["v_measure"] < 0.98  # a non-trivial clustering, so equality means something
    info = mteb_v2.file_info(tmp_path / "out.parquet")
    assert info["mteb_task"] == ("custom" if limits else task_name)
    assert info["mteb_version"] == mteb_v2.MTEB_VERSION and info["comparable"] is False
    assert info["not_comparable_because"]  # built here (or Reddit/custom): never the leaderboard's pool
    if name == "BlurbsClusteringS2S":
        # the bug: every item of all 24 coarse + fine + within-genre splits pooled with its own label
        assert splits.label.nunique() > splits.drop_duplicates("text_id").label.nunique()
        assert set(ours.n_labels) == {splits.label.nunique()}
        assert len(splits) > 2048 and set(ours.n_texts) == {2048}
    if name == "RedditClusteringS2S":
        assert len(splits) > 2048 and set(ours.n_texts) == {2048}  # stratified subsample drawn
    if name == "RedditClusteringP2P":
        assert set(ours.n_texts) == {int(0.04 * len(splits))}


@pytest.mark.slow
def test_hierarchical_labels_equal_mteb_per_level():
    """Label levels (a label may be a list): each level scored on its own, as mteb does, through mteb.evaluate."""
    texts, splits = synthetic_splits(seed=3)
    pooled = mteb_v2.pool_splits(splits, recipe="custom", seed=42)
    labels = [[f"g{int(lab[1:]) % 6}", lab] if lab.startswith("f") else [lab] for lab in pooled.label]
    x, vectors = clustered_vectors(texts, splits)
    task = mteb.get_task("TenKGnadClusteringS2S.v2")
    task.max_document_to_embed, task.max_documents_per_cluster, task.n_clusters = 700, 1000, 3
    task.dataset = DatasetDict(
        {"test": Dataset.from_dict({"sentences": [texts[i] for i in pooled.text_id], "labels": labels})}
    )
    task.data_loaded = True
    theirs, _ = mteb_scores(task, vectors)
    rows = mteb_v2.score(
        x[pooled.text_id.to_numpy()], labels, seed=42, max_documents=700, sample_size=1000, n_bootstraps=3
    )
    assert sorted(rows.level.unique()) == [0, 1]
    for level in (0, 1):
        assert rows[rows.level == level].v_measure.tolist() == theirs["v_measures"][f"Level {level}"]
    assert mteb_v2.summary(rows)["v_measure"] == theirs["v_measure"]


def test_recipe_and_comparability():
    """Which mteb class a dataset follows, and that only the published pool with mteb's seed and options is
    comparable with the leaderboard."""
    published = {
        "builder": "published",
        "origin": "published",
        "repo_id": "slvnwhrl/blurbs-clustering-s2s",
        "revision": "22793b6a6465bf00120ad525e38c51210858132c",
    }
    assert mteb_v2.recipe_name("X", published) == "BlurbsClusteringS2S.v2"
    assert mteb_v2.recipe_name("X", {"builder": "germeval2019", "text": "p2p"}) == "BlurbsClusteringP2P.v2"
    assert mteb_v2.recipe_name("X", {"builder": "10kgnad_csv", "text": "p2p"}) == "TenKGnadClusteringP2P.v2"
    assert mteb_v2.recipe_name("X", {"builder": "custom"}) == "custom"
    assert mteb_v2.recipe_name("RedditClusteringS2S", None) == "RedditClustering.v2"
    assert mteb_v2.recipe_name("Mine", None) == "custom"
    defaults = dict(mteb_v2.DEFAULTS)
    ok = mteb_v2.comparability("BlurbsClusteringS2S.v2", published, seed=42, options=defaults, max_documents=None)
    assert ok == ""
    why = mteb_v2.comparability(
        "BlurbsClusteringS2S.v2", published, seed=1, options={**defaults, "sample_size": 2048}, max_documents=100
    )
    assert "seed 1" in why and "sample_size=2048" in why and "max_documents=100" in why
    local = {**published, "revision": None, "revision_unverified_because": "statistics differ"}
    assert "published splits" in mteb_v2.comparability(
        "BlurbsClusteringS2S.v2", local, seed=42, options=defaults, max_documents=None
    )
    raw = {"builder": "germeval2019", "origin": "raw", "text": "s2s"}
    assert "built here" in mteb_v2.comparability(
        "BlurbsClusteringS2S.v2", raw, seed=42, options=defaults, max_documents=None
    )
    assert "German Reddit" in mteb_v2.comparability(
        "RedditClustering.v2", {}, seed=42, options=defaults, max_documents=None
    )


@pytest.mark.slow
def test_run_writes_identical_bytes_in_separate_processes(tmp_path):
    """Same inputs and seed = identical bytes, two runs in separate processes, on a pool with duplicate rows (Blurbs
    S2S pools a text once per split it is in) and a stratified subsample."""
    import subprocess
    import sys
    from pathlib import Path

    texts, splits = synthetic_splits(seed=1)
    assert splits.text_id.duplicated().any()
    x, _ = clustered_vectors(texts, splits)
    splits.to_parquet(tmp_path / "splits.parquet")
    write_embeddings(x, tmp_path / "emb.parquet")
    # a model's v2 score and the v2 table's chance floor (the protocol on seeded random vectors)
    code = (
        "import sys; from tecb.scoring import mteb_v2; from tecb.scoring.chance import mteb_v2_chance; "
        "mteb_v2.run(sys.argv[1], sys.argv[2], sys.argv[3], dataset='BlurbsClusteringS2S', seed=42, "
        "sample_size=500, n_bootstraps=3, log=lambda m: None); "
        "mteb_v2_chance(sys.argv[2], sys.argv[3] + '.chance', dataset='BlurbsClusteringS2S', n_draws=2, seed=42, "
        "sample_size=500, n_bootstraps=3, log=lambda m: None)"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    outs = []
    for name, hash_seed in (("a.parquet", "0"), ("b.parquet", "4242")):  # set and dict orders differ between them
        out = tmp_path / name
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "emb.parquet"), str(tmp_path / "splits.parquet"), str(out)],
            check=True,
            env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": hash_seed},
        )
        outs.append((out.read_bytes(), Path(f"{out}.chance").read_bytes()))
    assert outs[0] == outs[1]
    info = mteb_v2.file_info(tmp_path / "a.parquet")
    assert info["mteb_task"] == "BlurbsClusteringS2S.v2" and info["n_pool"] == 2048
    rows = pd.read_parquet(tmp_path / "a.parquet")
    assert len(rows) == 3 and set(rows.n_texts) == {2048}
    with pytest.raises(ValueError, match="unknown option"):
        mteb_v2.score(x, ["a"] * len(x), seed=42, n_bootstrap=3)
