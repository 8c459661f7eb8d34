"""MTEB v2's clustering protocol, as a second scoring mode beside the paper's per-split k-means (issue 15.4, 21.1).

MTEB 2.x scores its ``*.v2`` clustering tasks not per split but on one pool built by the task class's
``dataset_transform`` and scored by ``AbsTaskClustering._evaluate_subset``. Each of our datasets follows the mteb
task class of its kind (:func:`recipe_name`; :data:`RECIPES` holds what each class does):

1. **Pool** from the splits (in split order, rows in file order), one of two ways:

   - ``first_label`` (``mteb.abstasks.clustering._convert_to_fast``: ``BlurbsClusteringP2P.v2``,
     ``TenKGnadClustering{S2S,P2P}.v2``, and our custom datasets): each text once, with the label of its first
     occurrence; more than ``max_pool`` texts are sampled down (``random.Random(seed).sample``).
   - ``all_items`` (``BlurbsClusteringS2S.v2``, ``RedditClustering.v2``, ``RedditClusteringP2P.v2``): every item of
     every split with its label (a text in several splits is pooled several times); then, where the task does
     so, labels with one item dropped (``drop_singletons``) and a stratified subsample of ``stratify`` items
     (``AbsTask.stratified_subsampling``: ``datasets``' ``train_test_split(stratify_by_column=...)``, labels
     encoded in sorted order, ``numpy.random.default_rng(seed)``; :func:`stratified_subsample`).

2. **Downsample**: ``max_documents`` texts drawn with the task's ``random.Random(seed)`` (a permutation when the pool
   is smaller: the draw still consumes the generator), or ``int(max_fraction * n)``, or all (no draw).
3. **Bootstrap** (``_evaluate_clustering_bootstrapped``): per label level, ``n_bootstraps`` draws of
   ``sample_size`` texts *with replacement* (the same ``random.Random``, continued), ``MiniBatchKMeans(n_clusters =
   labels of the level, batch_size=512, n_init=1, k-means++, random_state=seed)``, V-measure and AMI. The task's
   score is the mean over all levels' bootstraps.

Which mteb class a dataset follows: Blurbs (GermEval 2019) and TenKGnad (One Million Posts or the 10kGNAD csv) built
here or loaded as the paper's published splits follow their German ``*.v2`` task; mteb has no German Reddit task,
so our Reddit S2S/P2P follow mteb's (English) ``RedditClustering.v2`` / ``RedditClusteringP2P.v2`` classes (the
same construction: all posts of a few subreddits per split); a custom dataset follows the generic conversion of a
legacy clustering dataset (``_convert_to_fast``, all pooled texts scored), which is what mteb's
``AbsTaskClustering`` does with a ``*.v2`` task that sets neither limit. A score is *comparable* with the mteb
leaderboard's task only when the pool is that task's published dataset at its revision, the seed is mteb's (42)
and the options are mteb's (:func:`comparability`).

``tests/test_mteb_v2.py`` runs mteb 2.26's own task classes (``dataset_transform`` + ``mteb.evaluate``) on the same
embeddings and checks that every bootstrap's V-measure and AMI are equal, for each kind.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tecb.scoring.mteb import MTEB_SEED, MTEB_VERSION

#: What each mteb task class does to build and score its pool (mteb/tasks/clustering/{deu,eng}/*.py);
#: ``dataset``: the hub dataset and revision the task loads (its published pool), ``None`` = not a German task.
RECIPES = {
    "BlurbsClusteringS2S.v2": {
        "pooling": "all_items",
        "drop_singletons": True,
        "stratify": 2048,
        "max_documents": 2048,
        "max_fraction": None,
        "dataset": ("slvnwhrl/blurbs-clustering-s2s", "22793b6a6465bf00120ad525e38c51210858132c"),
    },
    "BlurbsClusteringP2P.v2": {
        "pooling": "first_label",
        "drop_singletons": False,
        "stratify": None,
        "max_documents": 2048,
        "max_fraction": None,
        "dataset": ("slvnwhrl/blurbs-clustering-p2p", "a2dd5b02a77de3466a3eaa98ae586b5610314496"),
    },
    "TenKGnadClusteringS2S.v2": {
        "pooling": "first_label",
        "drop_singletons": False,
        "stratify": None,
        "max_documents": 10267,
        "max_fraction": None,
        "dataset": ("slvnwhrl/tenkgnad-clustering-s2s", "6cddbe003f12b9b140aec477b583ac4191f01786"),
    },
    "TenKGnadClusteringP2P.v2": {
        "pooling": "first_label",
        "drop_singletons": False,
        "stratify": None,
        "max_documents": 10275,
        "max_fraction": None,
        "dataset": ("slvnwhrl/tenkgnad-clustering-p2p", "5c59e41555244b7e45c9a6be2d720ab4bafae558"),
    },
    # English tasks: their recipe, for our German Reddit datasets (mteb has no German Reddit task)
    "RedditClustering.v2": {
        "pooling": "all_items",
        "drop_singletons": False,
        "stratify": 2048,
        "max_documents": None,
        "max_fraction": None,
        "dataset": None,
    },
    "RedditClusteringP2P.v2": {
        "pooling": "all_items",
        "drop_singletons": True,
        "stratify": None,
        "max_documents": None,
        "max_fraction": 0.04,
        "dataset": None,
    },
    # a custom dataset: the generic conversion of a legacy clustering dataset, all pooled texts
    "custom": {
        "pooling": "first_label",
        "drop_singletons": False,
        "stratify": None,
        "max_documents": None,
        "max_fraction": None,
        "dataset": None,
    },
}
DEFAULTS = {"n_bootstraps": 10, "sample_size": 16_384, "batch_size": 512, "max_depth": None, "max_pool": 100_000}

# builder (tecb.data.datasets.BUILDERS) and text variant -> the mteb task class of that kind
_BY_BUILDER = {
    ("germeval2019", "s2s"): "BlurbsClusteringS2S.v2",
    ("germeval2019", "p2p"): "BlurbsClusteringP2P.v2",
    ("million_posts", "s2s"): "TenKGnadClusteringS2S.v2",
    ("million_posts", "p2p"): "TenKGnadClusteringP2P.v2",
    ("10kgnad_csv", "p2p"): "TenKGnadClusteringP2P.v2",
    ("reddit", "s2s"): "RedditClustering.v2",
    ("reddit", "p2p"): "RedditClusteringP2P.v2",
}
# our paper dataset names -> task, for files that record no provenance
_BY_NAME = {
    "BlurbsClusteringS2S": "BlurbsClusteringS2S.v2",
    "BlurbsClusteringP2P": "BlurbsClusteringP2P.v2",
    "TenKGnadClusteringS2S": "TenKGnadClusteringS2S.v2",
    "TenKGnadClusteringP2P": "TenKGnadClusteringP2P.v2",
    "RedditClusteringS2S": "RedditClustering.v2",
    "RedditClusteringP2P": "RedditClusteringP2P.v2",
}


def recipe_name(dataset: str, provenance: dict | None) -> str:
    """The key of :data:`RECIPES` a dataset follows: by the builder and text variant its files record, the hub
    repo of published splits, else (no provenance) by the paper's dataset name, else ``custom``."""
    prov = provenance or {}
    builder = prov.get("builder")
    if builder == "published":
        repo = prov.get("repo_id")
        return next((k for k, r in RECIPES.items() if r["dataset"] and r["dataset"][0] == repo), "custom")
    if builder == "custom":
        return "custom"
    if builder is not None:
        return _BY_BUILDER.get((builder, prov.get("text")), "custom")
    return _BY_NAME.get(dataset, "custom")


def comparability(recipe: str, provenance: dict | None, *, seed: int, options: dict, max_documents) -> str:
    """Why a v2 score is not the number mteb's leaderboard task would give for the same model ("" = it is).

    Comparable: a German ``*.v2`` task's recipe on that task's published dataset at its revision (a local copy
    only when verified: :func:`tecb.data.datasets.published_check`), mteb's seed 42, mteb's options (10 bootstraps
    of 16,384 texts, k-means batch 512, all levels, pool cap 100,000) and the task's number of documents."""
    spec = RECIPES[recipe]
    prov = provenance or {}
    if spec["dataset"] is None:
        if recipe == "custom":
            return "a custom dataset: mteb has no such task"
        return f"mteb's {recipe} is English Reddit; mteb has no German Reddit task (its recipe is applied here)"
    reasons = []
    have = (prov.get("repo_id"), prov.get("revision"))
    if prov.get("origin") != "published":
        reasons.append(f"the pool is built here ({prov.get('builder') or 'unknown source'}), not {spec['dataset'][0]}")
    elif prov.get("revision_unverified_because") or have != spec["dataset"]:
        reasons.append(f"published splits {have[0]}@{have[1]}, not {spec['dataset'][0]}@{spec['dataset'][1]}")
    if seed != MTEB_SEED:
        reasons.append(f"seed {seed} (mteb: {MTEB_SEED})")
    changed = {k: v for k, v in options.items() if DEFAULTS.get(k) != v}
    if changed:
        reasons.append("options " + ", ".join(f"{k}={v} (mteb: {DEFAULTS.get(k)})" for k, v in sorted(changed.items())))
    if max_documents is not None and max_documents != spec["max_documents"]:
        reasons.append(f"max_documents={max_documents} (mteb: {spec['max_documents']})")
    return "; ".join(reasons)


def stratified_subsample(labels: Sequence, n_samples: int, *, seed: int) -> np.ndarray:
    """Indices of the ``n_samples`` items mteb's ``AbsTask.stratified_subsampling`` keeps, in its order.

    That is ``datasets``' ``train_test_split(test_size=n_samples, seed=seed, stratify_by_column=...)`` on labels
    encoded as sorted strings (``datasets.utils.stratify``, itself after scikit-learn's StratifiedShuffleSplit):
    per class an approximate-mode share of the train and test sizes (ties broken at random), each class's items
    permuted, the test part permuted; all from ``numpy.random.default_rng(seed)``. No subsample (all indices) when ``n_samples`` is
    at least the number of items, as in mteb.
    """
    labels = [str(x) for x in labels]
    n = len(labels)
    if n_samples >= n:
        return np.arange(n)
    names = sorted(set(labels))
    code = {name: i for i, name in enumerate(names)}
    y = np.array([code[x] for x in labels])
    rng = np.random.default_rng(seed)
    n_test, n_train = int(n_samples), n - int(n_samples)
    classes, y_indices = np.unique(y, return_inverse=True)
    counts = np.bincount(y_indices)
    if counts.min() < 2:
        raise ValueError(
            f"stratified subsample: label {names[int(np.argmin(counts))]!r} has one item (mteb's "
            "train_test_split refuses a class with fewer than 2 members)"
        )
    if min(n_train, n_test) < len(classes):
        raise ValueError(
            f"stratified subsample of {n_test} from {n} items: {len(classes)} labels need train and test sizes of "
            "at least that many (mteb's train_test_split refuses this pool)"
        )
    class_indices = np.split(np.argsort(y_indices, kind="mergesort"), np.cumsum(counts)[:-1])
    n_i = _approximate_mode(counts, n_train, rng)
    t_i = _approximate_mode(counts - n_i, n_test, rng)
    train, test = [], []
    for i in range(len(classes)):
        perm = class_indices[i].take(rng.permutation(counts[i]), mode="clip")
        train.extend(perm[: n_i[i]])
        test.extend(perm[n_i[i] : n_i[i] + t_i[i]])
    rng.permutation(train)  # drawn (and discarded) before the test order, as datasets does
    return np.asarray(rng.permutation(test), dtype=np.int64)


def _approximate_mode(class_counts: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    continuous = n_draws * class_counts / class_counts.sum()
    floored = np.floor(continuous)
    need = int(n_draws - floored.sum())
    if need > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (inds,) = np.where(remainder == value)
            add = min(len(inds), need)
            floored[rng.choice(inds, size=add, replace=False)] += 1
            need -= add
            if need == 0:
                break
    return floored.astype(np.int64)


def pool_splits(splits: pd.DataFrame, *, recipe: str, seed: int, max_pool: int = 100_000) -> pd.DataFrame:
    """The pool (columns ``text_id``, ``label``, in mteb's order) of a dataset's ``splits`` (columns ``split``,
    ``text_id``, ``label``; splits in ascending order, rows in file order), built as the mteb task class
    ``recipe`` (a key of :data:`RECIPES`) builds it; ``max_pool`` caps a ``first_label`` pool as
    ``_convert_to_fast`` does."""
    spec = RECIPES[recipe]
    order = sorted(splits["split"].unique())
    rows = pd.concat([splits[splits["split"] == s] for s in order], ignore_index=True)[["text_id", "label"]]
    if spec["pooling"] == "first_label":
        pooled = rows.drop_duplicates("text_id", keep="first").reset_index(drop=True)
        if len(pooled) > max_pool:
            idx = random.Random(seed).sample(range(len(pooled)), max_pool)
            pooled = pooled.iloc[idx].reset_index(drop=True)
        return pooled
    pooled = rows.reset_index(drop=True)
    if spec["drop_singletons"]:
        counts = pooled.label.value_counts()
        pooled = pooled[~pooled.label.isin(counts.index[counts == 1])].reset_index(drop=True)
    if spec["stratify"] is not None:
        pooled = pooled.iloc[stratified_subsample(pooled.label.tolist(), spec["stratify"], seed=seed)]
    return pooled.reset_index(drop=True)


def _levels(labels) -> list[list]:
    return [list(lab) if isinstance(lab, (list, tuple, np.ndarray)) else [lab] for lab in labels]


def bootstrapped(
    embeddings: np.ndarray,
    labels,
    *,
    rng: random.Random,
    seed: int,
    n_bootstraps: int = 10,
    sample_size: int = 16_384,
    batch_size: int = 512,
    max_depth: int | None = None,
) -> pd.DataFrame:
    """MTEB's ``_evaluate_clustering_bootstrapped``: one row per (level, bootstrap) with ``v_measure`` and ``ami``.

    ``rng`` is consumed as MTEB consumes it (``rng.choices`` per bootstrap). Texts lacking a level get the label
    -1 there; like MTEB (which compares a string array with the integer -1) they are kept when the labels are
    strings and left out only when the labels are numbers.
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics.cluster import adjusted_mutual_info_score, v_measure_score

    labels = _levels(labels)
    depth = max(map(len, labels))
    depth = min(max_depth, depth) if max_depth is not None else depth
    rows = []
    for level in range(depth):
        level_labels = np.array([lab[level] if len(lab) > level else -1 for lab in labels])
        valid = np.array([x != -1 for x in level_labels])
        level_labels, level_x = level_labels[valid], embeddings[valid]
        model = MiniBatchKMeans(
            n_clusters=np.unique(level_labels).size,
            batch_size=batch_size,
            init="k-means++",
            n_init=1,
            random_state=seed,
        )
        for b in range(n_bootstraps):
            idx = rng.choices(range(len(level_x)), k=sample_size)
            pred = model.fit_predict(level_x[idx])
            gold = level_labels[idx]
            rows.append(
                {
                    "level": level,
                    "bootstrap": b,
                    "v_measure": float(v_measure_score(gold, pred)),
                    "ami": float(adjusted_mutual_info_score(gold, pred)),
                }
            )
    return pd.DataFrame(rows, columns=["level", "bootstrap", "v_measure", "ami"])


def score(
    embeddings: np.ndarray,
    labels: Sequence,
    *,
    seed: int,
    max_documents: int | None = None,
    max_fraction: float | None = None,
    **options,
) -> pd.DataFrame:
    """MTEB v2's clustering score of pooled texts (``embeddings`` row i has ``labels[i]``; see :func:`pool_splits`).

    ``max_documents`` / ``max_fraction``: MTEB's ``max_document_to_embed`` / ``max_fraction_of_documents_to_embed``
    (at most one; neither = all texts, not drawn). ``options``: ``n_bootstraps``, ``sample_size``, ``batch_size``,
    ``max_depth``. Returns :func:`bootstrapped`'s rows; the task's score is their mean (:func:`summary`).
    """
    if max_documents is not None and max_fraction is not None:
        raise ValueError("give at most one of max_documents and max_fraction")
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    opts = {k: v for k, v in {**DEFAULTS, **options}.items() if k != "max_pool"}
    embeddings = np.asarray(embeddings)
    labels = list(labels)
    if len(labels) != len(embeddings):
        raise ValueError(f"{len(embeddings)} embeddings but {len(labels)} labels")
    rng = random.Random(seed)
    if max_documents is not None or max_fraction is not None:
        k = int(max_fraction * len(labels)) if max_fraction is not None else int(max_documents)
        idx = rng.sample(range(len(labels)), k=min(len(labels), k))
        embeddings, labels = embeddings[idx], [labels[i] for i in idx]
    return bootstrapped(embeddings, labels, rng=rng, seed=seed, **opts)


def summary(rows: pd.DataFrame) -> dict[str, float]:
    """MTEB's aggregate: mean and (population) standard deviation over all levels' bootstraps."""
    out = {}
    for metric in ("v_measure", "ami"):
        out[metric] = float(np.mean(rows[metric]))
        out[f"{metric}_std"] = float(np.std(rows[metric]))
    return out


def run(
    embeddings_path,
    splits_path,
    out_path,
    *,
    dataset: str,
    seed: int,
    max_documents: int | None = None,
    log=print,
    **options,
) -> pd.DataFrame:
    """Score one (model, dataset) with the mteb v2 task class of its kind (:func:`recipe_name`, from the
    provenance the splits file records) and write its rows (``level, bootstrap, n_texts, n_labels, v_measure,
    ami``) to ``out_path``, with the schema metadata ``tecb``: ``mteb_task`` (the recipe), ``mteb_version``,
    ``comparable`` and ``not_comparable_because`` (:func:`comparability`), ``n_pool``. ``max_documents`` replaces
    the task's limit (``max_document_to_embed`` or ``max_fraction_of_documents_to_embed``); ``None`` keeps it."""
    import pyarrow as pa

    from tecb.io import dataset_provenance, read_embeddings, write_table

    opts = _checked_options(options)
    provenance = dataset_provenance(splits_path)
    recipe = recipe_name(dataset, provenance)
    spec = RECIPES[recipe]
    why = comparability(recipe, provenance, seed=seed, options=opts, max_documents=max_documents)
    x, _ = read_embeddings(embeddings_path)
    pooled = pool_splits(pd.read_parquet(splits_path), max_pool=opts.pop("max_pool"), seed=seed, recipe=recipe)
    limit = _document_limit(spec, max_documents)
    rows = score(x[pooled.text_id.to_numpy()], pooled.label.tolist(), seed=seed, **limit, **opts)
    n = len(pooled)
    n_texts = _n_embedded(n, limit)
    rows.insert(2, "n_texts", np.int32(n_texts))
    rows.insert(3, "n_labels", np.int32(pooled.label.nunique()))
    rows = rows.astype({"level": "int16", "bootstrap": "int16"})
    meta = {
        "dataset": dataset,
        "mteb_task": recipe,
        "mteb_version": MTEB_VERSION,
        "comparable": not why,
        "not_comparable_because": why,
        "n_pool": n,
        "seed": seed,
    }
    table = pa.Table.from_pandas(rows, preserve_index=False)
    write_table(table.replace_schema_metadata({"tecb": json.dumps(meta, sort_keys=True)}), out_path)
    log(_summary_line(rows, meta, sample_size=opts["sample_size"], n_texts=n_texts))
    return rows


def _checked_options(options: dict) -> dict:
    """:data:`DEFAULTS` updated by ``options``; an unknown option is an error."""
    opts = {**DEFAULTS, **options}
    unknown = set(opts) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    return opts


def _document_limit(spec: dict, max_documents: int | None) -> dict:
    """How many documents a bootstrap embeds: ``max_documents`` where given, else the task recipe's limit."""
    if max_documents is not None:
        return {"max_documents": max_documents}
    return {"max_documents": spec["max_documents"], "max_fraction": spec["max_fraction"]}


def _summary_line(rows: pd.DataFrame, meta: dict, *, sample_size: int, n_texts: int) -> str:
    """The log line of one (model, dataset)'s score: its mean and spread, the recipe and its comparability."""
    s, why = summary(rows), meta["not_comparable_because"]
    return (
        f"{meta['dataset']} ({meta['mteb_task']} recipe; pool of {meta['n_pool']}): MTEB v2 V-measure "
        f"{s['v_measure']:.4f} ± {s['v_measure_std']:.4f} over {len(rows)} bootstraps of {sample_size} from "
        f"{n_texts} texts; "
        + ("comparable with mteb's task" if not why else f"not comparable with mteb's leaderboard: {why}")
    )


def _n_embedded(n: int, limit: dict) -> int:
    """How many of a pool of ``n`` texts the task embeds under ``limit`` (``max_documents``, ``max_fraction``)."""
    if limit.get("max_documents") is not None:
        return min(n, limit["max_documents"])
    if limit.get("max_fraction") is not None:
        return min(n, int(limit["max_fraction"] * n))
    return n


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How :func:`run` scores a dataset beyond its task class's recipe: ``max_documents`` (replaces the task's limit;
    None keeps it) and ``options`` (keys of :data:`DEFAULTS`)."""

    max_documents: int | None
    options: Mapping


def batch_step(
    embeddings_path,
    splits_path,
    out_path,
    *,
    dataset: str,
    seed: int,
    settings: Settings,
    threads: int,
    log=print,
) -> dict:
    """:func:`run` as a step of the (model, dataset)'s ``cluster_batch`` job (:func:`tecb.cluster.batch.run_batch`),
    with ``settings`` (:class:`Settings`), on the ``threads`` its own ``mteb_v2`` job would run on: the same file,
    without a process of its own."""
    max_documents, options = settings.max_documents, settings.options

    def compute():
        from threadpoolctl import threadpool_limits

        with threadpool_limits(threads):
            run(embeddings_path, splits_path, out_path, dataset=dataset, seed=seed, max_documents=max_documents,
                log=log, **options)  # fmt: skip

    return {
        "name": "mteb_v2",
        "spec": {"dataset": dataset, "max_documents": max_documents, "options": options},
        "inputs": [embeddings_path, splits_path],
        "outputs": [out_path],
        "libraries": ("numpy", "scipy", "scikit-learn", "threadpoolctl"),
        "compute": compute,
    }


def file_info(path) -> dict:
    """The ``tecb`` metadata :func:`run` writes into a result file (``{}`` for files written before it did)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[b"tecb"]) if b"tecb" in meta else {}
