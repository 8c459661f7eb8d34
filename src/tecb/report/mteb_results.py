"""Results in MTEB's own format, loadable by mteb 2.x (``mteb.ResultCache(cache_path).load_results()``).

Layout (what ``ResultCache`` reads under its ``results/`` folder)::

    {cache}/results/{model_dir}/{revision}/{task}.json   one file per (model, dataset)
    {cache}/results/{model_dir}/{revision}/model_meta.json   name and revision of the model

Written for one configuration, by default k-means on raw embeddings (what MTEB's clustering evaluator
does): ``main_score`` = ``v_measure`` = mean V-measure over the splits (0..1), ``v_measure_std`` their
standard deviation, ``v_measures`` the per-split values in split order.

- Task names carry the prefix ``tecb.`` (``tecb.RedditClusteringP2P``): our datasets are rebuilt or new, so a
  name must never pass for one of MTEB's own tasks (MTEB's ``RedditClusteringP2P`` is an English task).
- ``dataset_revision`` is the hub revision only for the paper's published splits loaded as they are; a dataset
  built here gets ``tecb-sha256:<content hash>`` (see :func:`tecb.data.datasets.content_hash`), never a hub revision.
- ``model_dir`` is the Hugging Face id with ``/`` -> ``__`` (MTEB's convention), else ``tecb__{key}``;
  ``revision`` the configured model revision, else ``no_revision_available`` (MTEB's placeholder). The commit
  actually used (from the embeddings file) is recorded in the result's ``tecb`` block.
- Nothing varying (times, dates, paths) is written: the files are byte-identical across reruns.
"""

from __future__ import annotations

# numpy/pandas/pyarrow are imported inside the functions: the workflow imports this module to name its outputs
from pathlib import Path

TASK_PREFIX = "tecb."
NO_REVISION = "no_revision_available"


def task_name(dataset: str) -> str:
    """The MTEB task name of a dataset: ``tecb.{dataset}``."""
    return f"{TASK_PREFIX}{dataset}"


def model_identity(model: str, spec: dict) -> tuple[str, str]:
    """``(name, revision)`` MTEB records for config model ``model``: the hub id (else ``tecb/{key}``) and the
    configured revision (else ``no_revision_available``)."""
    kind = spec["kind"]  # filled by the config schema's default
    name = spec["id"] if kind == "huggingface" and spec.get("id") else f"tecb/{model}"
    if "@" in model and not name.endswith(model[model.index("@") :]):  # a prompt variant: its own results folder
        name += model[model.index("@") :]
    revision = spec.get("revision") or NO_REVISION
    return name, str(revision)


def model_folder(model: str, spec: dict) -> str:
    """``{model_dir}/{revision}``: where MTEB looks for the model's results, relative to ``{cache}/results``."""
    name, revision = model_identity(model, spec)
    return f"{name.replace('/', '__').replace(' ', '_')}/{revision.replace('/', '__')}"


def result_relpath(model: str, spec: dict, dataset: str) -> str:
    return f"{model_folder(model, spec)}/{task_name(dataset)}.json"


def model_meta(model: str, spec: dict) -> dict:
    """The ``model_meta.json`` MTEB reads (``name``, ``revision``; the rest informative)."""
    name, revision = model_identity(model, spec)
    return {
        "name": name,
        "revision": revision,
        "release_date": None,
        "languages": None,
        "framework": ["Sentence Transformers"] if spec["kind"] != "tfidf" else [],
        "tecb": {"model": model, "kind": spec["kind"], "display_name": spec.get("name")},
    }


def dataset_revision(dataset: str, provenance: dict | None) -> str:
    """The hub revision for the paper's published splits loaded as they are, else ``tecb-sha256:<content>``."""
    prov = provenance or {}
    if prov.get("origin") == "published" and prov.get("revision"):
        return str(prov["revision"])
    if prov.get("content_sha256"):
        return f"tecb-sha256:{prov['content_sha256']}"
    return "tecb-unknown"


def mteb_result(
    scores,
    model: str,
    dataset: str,
    algorithm: str = "kmeans",
    reduction: str = "none",
    model_id: str | None = None,
    model_revision: str | None = None,
    provenance: dict | None = None,
    resolved_revision: str | None = None,
) -> dict:
    """The MTEB result object of one (model, dataset) from the long scores table."""
    import numpy as np

    sub = scores[
        (scores.model == model)
        & (scores.dataset == dataset)
        & (scores.algorithm == algorithm)
        & (scores.reduction == reduction)
    ].sort_values("split")
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
    prov = provenance or {}
    return {
        "dataset_revision": dataset_revision(dataset, prov),
        "task_name": task_name(dataset),
        "mteb_version": None,
        "scores": {"test": [score]},
        "evaluation_time": None,  # timings live in results/timings/ (scores are byte-identical across reruns)
        "kg_co2_emissions": None,
        "tecb": {
            "model": model,
            "model_id": model_id,
            "model_revision": model_revision,
            "resolved_revision": resolved_revision,
            "dataset": dataset,
            "algorithm": algorithm,
            "reduction": reduction,
            "n_splits": int(len(values)),
            "dataset_origin": prov.get("origin"),
            "comparable_to_paper": prov.get("comparable_to_paper"),
            "not_comparable_because": prov.get("not_comparable_because"),
            "published": (
                {"repo_id": prov.get("repo_id"), "revision": prov.get("revision")}
                if prov.get("origin") == "published"
                else None
            ),
        },
    }


def write_mteb_results(
    scores_path,
    models: dict[str, dict],
    targets,
    algorithm: str = "kmeans",
    reduction: str = "none",
    log=print,
    provenance: dict[str, dict] | None = None,
    meta_targets=(),
    resolved_revisions: dict[str, str | None] | None = None,
) -> list[Path]:
    """Write one MTEB JSON per ``(model, dataset, path)`` of ``targets`` and ``model_meta.json`` per
    ``(model, path)`` of ``meta_targets``; ``models`` maps keys to config specs, ``provenance`` datasets to
    the provenance their files record (:func:`tecb.io.dataset_provenance`)."""
    import pandas as pd

    from tecb.io import write_json

    scores = pd.read_parquet(scores_path)
    folders: dict[str, str] = {}
    for model in dict.fromkeys(m for m, *_ in targets):
        folder = model_folder(model, models[model])
        other = next((k for k, f in folders.items() if f == folder), None)
        if other is not None:
            raise ValueError(
                f"config: models {other!r} and {model!r} have the same hub id and revision, so their "
                f"MTEB results would share {folder}/; give one of them a `revision` or another `id`"
            )
        folders[model] = folder
    paths = []
    for model, dataset, path in targets:
        spec = models[model]
        write_json(
            mteb_result(
                scores,
                model,
                dataset,
                algorithm,
                reduction,
                spec.get("id") or spec.get("path"),
                spec.get("revision"),
                (provenance or {}).get(dataset),
                (resolved_revisions or {}).get(model),
            ),
            path,
        )
        paths.append(Path(path))
    for model, path in meta_targets:
        write_json(model_meta(model, models[model]), path)
        paths.append(Path(path))
    log(f"{len(paths)} MTEB files ({algorithm}/{reduction})")
    return paths
