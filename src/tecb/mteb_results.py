"""Results in MTEB's JSON format (one file per (model, dataset)) so numbers can be set beside the MTEB
leaderboard. Written for one configuration, by default k-means on raw embeddings (what MTEB's clustering
evaluator does): ``main_score`` = ``v_measure`` = mean V-measure over the splits (0..1), ``v_measure_std``
their standard deviation, ``v_measures`` the per-split values in split order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tecb.io import write_json

# The revisions of the paper's published datasets on the Hugging Face hub (design §6).
DATASET_REVISIONS = {
    "BlurbsClusteringS2S": "22793b6a6465bf00120ad525e38c51210858132c",
    "BlurbsClusteringP2P": "a2dd5b02a77de3466a3eaa98ae586b5610314496",
    "TenKGnadClusteringS2S": "6cddbe003f12b9b140aec477b583ac4191f01786",
    "TenKGnadClusteringP2P": "5c59e41555244b7e45c9a6be2d720ab4bafae558",
}


def mteb_result(scores: pd.DataFrame, model: str, dataset: str, algorithm: str = "kmeans",
                reduction: str = "none", model_id: str | None = None, model_revision: str | None = None) -> dict:
    """The MTEB result object of one (model, dataset) from the long scores table."""
    sub = scores[(scores.model == model) & (scores.dataset == dataset) & (scores.algorithm == algorithm)
                 & (scores.reduction == reduction)].sort_values("split")
    if sub.empty:
        raise ValueError(f"no scores for model {model!r}, dataset {dataset!r}, {algorithm}/{reduction}")
    values = sub["v_measure"].astype(float).to_numpy()
    score = {
        "v_measure": float(np.mean(values)),
        "v_measure_std": float(np.std(values)),  # MTEB uses numpy's (population) std
        "v_measures": [float(v) for v in values],
        "main_score": float(np.mean(values)),
        "hf_subset": "default",
        "languages": ["deu-Latn"],
    }
    return {
        "dataset_revision": DATASET_REVISIONS.get(dataset),
        "task_name": dataset,
        "mteb_version": None,
        "scores": {"test": [score]},
        "evaluation_time": float(sub["seconds"].sum()) if "seconds" in sub else None,
        "kg_co2_emissions": None,
        "tecb": {"model": model, "model_id": model_id, "model_revision": model_revision, "algorithm": algorithm,
                 "reduction": reduction, "n_splits": int(len(values))},
    }


def write_mteb_results(scores_path, models: dict[str, dict], datasets, outdir, algorithm: str = "kmeans",
                       reduction: str = "none", log=print) -> list[Path]:
    """Write ``outdir/{model}/{dataset}.json`` for every configured pair; ``models`` maps keys to config specs."""
    scores = pd.read_parquet(scores_path)
    paths = []
    for model, spec in models.items():
        for dataset in datasets:
            path = Path(outdir) / model / f"{dataset}.json"
            write_json(mteb_result(scores, model, dataset, algorithm, reduction, spec.get("id") or spec.get("path"),
                                   spec.get("revision")), path)
            paths.append(path)
    log(f"{len(paths)} MTEB result files ({algorithm}/{reduction}) -> {outdir}")
    return paths
