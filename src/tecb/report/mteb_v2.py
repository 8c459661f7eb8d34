"""MTEB v2's clustering protocol, as a second scoring mode beside the paper's per-split k-means (issue 15.4).

MTEB 2.x scores its ``*.v2`` clustering tasks (e.g. ``BlurbsClusteringP2P.v2``) not per split but on one pool:

1. **Pool** (``mteb.abstasks.clustering._convert_to_fast``): the texts of all splits, in split order, each text once
   with the label of its first occurrence (Blurbs texts appear in a main-genre and a secondary-genre split: the
   first wins); more than ``max_pool`` texts are sampled down (``random.Random(seed).sample``).
2. **Downsample** (``AbsTaskClustering._evaluate_subset``): ``max_documents`` texts drawn with the task's
   ``random.Random(seed)`` (the order of the draw matters for what follows), or a fraction of the pool, or all.
3. **Bootstrap** (``_evaluate_clustering_bootstrapped``): per label level (a label may be a list: hierarchical
   labels), ``n_bootstraps`` times draw ``sample_size`` texts *with replacement* (the same ``random.Random``,
   continued), fit ``MiniBatchKMeans(n_clusters = labels of the level, batch_size=512, n_init=1, k-means++,
   random_state=seed)`` and score V-measure and AMI. The task's score is the mean over all levels' bootstraps.

:func:`score` reproduces this exactly from precomputed embeddings (``tests/test_mteb_v2.py`` checks equality with
mteb 2.26's own evaluator). :data:`MTEB_V2_DOCUMENTS` has MTEB's per-task ``max_document_to_embed``. Not reproduced:
``BlurbsClusteringS2S.v2`` builds its pool differently (no de-duplication, singleton labels removed, then a
stratified subsample by ``datasets``' ``train_test_split``); we pool it like the other tasks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pandas as pd

# max_document_to_embed of MTEB's German v2 clustering tasks (mteb/tasks/clustering/deu/*.py); other datasets: all
MTEB_V2_DOCUMENTS = {
    "BlurbsClusteringS2S": 2048,
    "BlurbsClusteringP2P": 2048,
    "TenKGnadClusteringS2S": 10267,
    "TenKGnadClusteringP2P": 10275,
}
DEFAULTS = {"n_bootstraps": 10, "sample_size": 16_384, "batch_size": 512, "max_depth": None, "max_pool": 100_000}


def pool_splits(splits: pd.DataFrame, max_pool: int = 100_000, *, seed: int) -> pd.DataFrame:
    """The pooled texts of a dataset's ``splits`` (columns ``split``, ``text_id``, ``label``): ``text_id``,
    ``label``, each text once with the label of its first occurrence (splits in ascending order, rows in file
    order), sampled down to ``max_pool`` texts as MTEB's ``_convert_to_fast`` does."""
    order = sorted(splits["split"].unique())
    rows = pd.concat([splits[splits["split"] == s] for s in order], ignore_index=True)
    pooled = rows.drop_duplicates("text_id", keep="first")[["text_id", "label"]].reset_index(drop=True)
    if len(pooled) > max_pool:
        idx = random.Random(seed).sample(range(len(pooled)), max_pool)
        pooled = pooled.iloc[idx].reset_index(drop=True)
    return pooled


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
    """Score one (model, dataset) with MTEB v2's protocol and write its rows (``level, bootstrap, v_measure, ami``,
    plus ``n_texts``, ``n_labels``) to ``out_path``. ``max_documents`` defaults to MTEB's value for the dataset's
    name (:data:`MTEB_V2_DOCUMENTS`), else all texts."""
    import pyarrow as pa

    from tecb.io import read_embeddings, write_table

    opts = {**DEFAULTS, **options}
    x, _ = read_embeddings(embeddings_path)
    pooled = pool_splits(pd.read_parquet(splits_path), max_pool=opts.pop("max_pool"), seed=seed)
    if max_documents is None:
        max_documents = MTEB_V2_DOCUMENTS.get(dataset)
    rows = score(x[pooled.text_id.to_numpy()], pooled.label.tolist(), seed=seed, max_documents=max_documents, **opts)
    n_texts = min(len(pooled), max_documents) if max_documents is not None else len(pooled)
    rows.insert(2, "n_texts", np.int32(n_texts))
    rows.insert(3, "n_labels", np.int32(pooled.label.nunique()))
    rows = rows.astype({"level": "int16", "bootstrap": "int16"})
    write_table(pa.Table.from_pandas(rows, preserve_index=False).replace_schema_metadata(None), out_path)
    s = summary(rows)
    log(
        f"{dataset}: MTEB v2 V-measure {s['v_measure']:.4f} ± {s['v_measure_std']:.4f} over {len(rows)} bootstraps "
        f"of {opts['sample_size']} from {n_texts} pooled texts"
    )
    return rows


def collect(files) -> pd.DataFrame:
    """``{(model, dataset): path}`` of :func:`run` files -> one row per (model, dataset): mean and SD of V-measure
    and AMI over the bootstraps (MTEB's ``v_measure``, ``v_measure_std``, ...), ``n_texts``, ``n_bootstraps``."""
    rows = []
    for (model, dataset), path in files.items():
        df = pd.read_parquet(path)
        rows.append(
            {
                "model": model,
                "dataset": dataset,
                **summary(df),
                "n_texts": int(df.n_texts.iloc[0]),
                "n_bootstraps": len(df),
            }
        )
    return pd.DataFrame(
        rows, columns=["model", "dataset", "v_measure", "v_measure_std", "ami", "ami_std", "n_texts", "n_bootstraps"]
    )


def render_table(
    files,
    model_names,
    datasets,
    table_paths,
    long_path,
    metric: str = "v_measure",
    log=print,
    chance: dict | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The MTEB v2 table (models x datasets, ``metric`` x 100, "± SD over bootstraps") to ``table_paths`` (format
    -> path: ``md``, ``csv``, ``tex``, ``html``) and one row per (model, dataset) to the CSV ``long_path``; the
    rule passes its declared outputs. ``files`` as for :func:`collect`. ``chance`` (dataset -> path of
    :func:`tecb.report.chance_v2.mteb_v2_chance`) adds the chance row (not in the CSV) and marks ‡ the cells not
    above its ``confidence`` range."""
    from tecb.io import write_text
    from tecb.report import render as R
    from tecb.report import tables as T

    long = collect(files)
    summary = long.assign(reduction="none", algorithm="mteb_v2")
    table = T.table2(summary, model_names, algorithm="mteb_v2", reduction="none", datasets=datasets, metric=metric)
    sd = summary.pivot_table(index="model", columns="dataset", values=f"{metric}_std", aggfunc="mean") * 100
    suffix = pd.DataFrame("", index=table.index, columns=table.columns, dtype=object)
    names = dict(model_names or {})
    for model in sd.index:
        for dataset in sd.columns:
            name = names.get(model, model)
            if name in suffix.index and dataset in suffix.columns and pd.notna(table.at[name, dataset]):
                suffix.at[name, dataset] = f" ± {sd.at[model, dataset]:.2f}"
    label = "V-measure" if metric == "v_measure" else metric.upper()
    notes = [
        "MTEB v2 protocol (src/tecb/report/mteb_v2.py): the texts of all splits pooled (each once, first label), "
        "drawn down to MTEB's per-task size (2048 for Blurbs; all texts otherwise), then k-means on bootstrap "
        "samples drawn with replacement; mean ± SD over the bootstraps, as MTEB reports it. Comparable with MTEB's *.v2 "
        "tasks (not with Table 2), except BlurbsClusteringS2S.v2, whose pool MTEB builds differently."
    ]
    plain = table
    if chance:
        from tecb.report.chance import add_chance_row, mteb_v2_chance_cells

        cells = mteb_v2_chance_cells(
            {d: pd.read_parquet(p) for d, p in chance.items()},
            metric=metric,
            confidence=confidence,
            averages=T.average_groups([c for c in datasets if c in chance]),
        )
        table, suffix = add_chance_row(table, suffix, cells)
        notes.append(
            f"{T.CHANCE_ROW}: this protocol run on seeded random vectors (each k-means partition then a random "
            f"partition with the level's number of clusters): mean and the range over the draws; ‡: not above "
            "that range's upper end."
        )
    R.write_formats(
        table,
        {k: v for k, v in table_paths.items() if k != "csv"},
        f"MTEB v2 clustering: {label} x 100 per model and dataset.",
        mark_best=True,
        footnotes=notes,
        suffix=suffix,
    )
    if "csv" in table_paths:
        write_text(R.to_csv(plain), table_paths["csv"])
    write_text(long.round(6).to_csv(index=False), long_path)
    log(R.to_markdown(table, mark_best=True, suffix=suffix))
    return table
