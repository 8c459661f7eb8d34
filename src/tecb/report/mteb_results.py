"""Results in MTEB's own format, which mteb 2.x loads and validates (``mteb.ResultCache``, ``TaskResult``).

Two result caches under ``results/{run}/mteb/``, each in mteb's layout
(``results/{model_dir}/{revision}/{task}.json`` beside ``model_meta.json``)::

    mteb/results/...          results under mteb's own task names: the paper protocol (k-means on raw
                              embeddings, mean V-measure over the splits = mteb's legacy clustering evaluator)
                              on the published pool of an mteb task. mteb.ResultCache("results/{run}/mteb")
                              .load_results(validate_and_filter=True) loads them and TaskResult.task works.
    mteb/custom/results/...   everything else, under custom task names ``tecb.{dataset}``: our datasets are
                              rebuilt or new, so a name must never pass for one of mteb's tasks (mteb's
                              ``RedditClusteringP2P`` is an English task). mteb's registry does not know these
                              names, so they live in their own cache: ResultCache(".../mteb/custom")
                              .load_results() loads them; with ``validate_and_filter=True`` pass the task
                              objects (an mteb task class named ``tecb.{dataset}``, docs/outputs.md).

Which cache a dataset's results go to is decided from the config before any job runs (:func:`mteb_task_of`):
mteb's task name only for the paper's published splits *downloaded* at mteb's revision, scored with mteb's
k-means (``minibatch_kmeans``, batch 500, ``n_init: auto``) and mteb's seed 42; a local copy of the splits
(its hub revision cannot be verified offline), any other build, seed or k-means goes to the custom cache.

- ``main_score`` = ``v_measure`` = mean V-measure over the splits (0..1), ``v_measure_std`` their (population)
  standard deviation, ``v_measures`` the per-split values in split order.
- ``mteb_version``: :data:`MTEB_VERSION`, the mteb whose evaluator these numbers equal (tests/test_mteb_oracle.py,
  tests/test_mteb_v2.py check it against the installed mteb; the workflow never imports mteb).
- ``dataset_revision`` is the hub revision only for the paper's published splits loaded as they are; a dataset
  built here gets ``tecb-sha256:<content hash>`` (see :func:`tecb.data.datasets.content_hash`), never a hub revision.
- ``model_dir`` is the Hugging Face id with ``/`` -> ``__`` (MTEB's convention), else ``tecb__{key}``;
  ``revision`` the configured model revision, else ``no_revision_available`` (MTEB's placeholder). The result's
  ``tecb`` block records the same name and revision (never a local path) and the commit actually used.
- Nothing varying (times, dates, paths) is written: the files are byte-identical across reruns.
"""

from __future__ import annotations

# numpy/pandas/pyarrow are imported inside the functions: the workflow imports this module to name its outputs
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tecb.scoring.mteb import MTEB_SEED, MTEB_VERSION

TASK_PREFIX = "tecb."
NO_REVISION = "no_revision_available"
#: mteb's legacy clustering evaluator (ClusteringEvaluator): MiniBatchKMeans(batch_size=500, n_init="auto")
MTEB_KMEANS = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}
#: (hub dataset, revision) of mteb's German clustering tasks -> the legacy task scored by the paper protocol
MTEB_TASKS = {
    ("slvnwhrl/blurbs-clustering-s2s", "22793b6a6465bf00120ad525e38c51210858132c"): "BlurbsClusteringS2S",
    ("slvnwhrl/blurbs-clustering-p2p", "a2dd5b02a77de3466a3eaa98ae586b5610314496"): "BlurbsClusteringP2P",
    ("slvnwhrl/tenkgnad-clustering-s2s", "6cddbe003f12b9b140aec477b583ac4191f01786"): "TenKGnadClusteringS2S",
    ("slvnwhrl/tenkgnad-clustering-p2p", "5c59e41555244b7e45c9a6be2d720ab4bafae558"): "TenKGnadClusteringP2P",
}
CUSTOM_ROOT = "custom"  # the custom-named results' cache, inside results/{run}/mteb/
#: the (algorithm, reduction) of the paper protocol: k-means on raw embeddings
PAPER_CONFIGURATION = ("kmeans", "none")


def task_name(dataset: str) -> str:
    """The custom MTEB task name of a dataset: ``tecb.{dataset}``."""
    return f"{TASK_PREFIX}{dataset}"


def mteb_task_of(dataset: dict, sources: dict, *, kmeans: dict | None, seed: int) -> str | None:
    """The mteb task whose numbers the paper protocol gives for config entry ``dataset`` (``datasets.<name>``;
    ``sources`` the config's, ``kmeans`` the config's ``algorithms.kmeans``), else ``None`` (custom name).

    Only the paper's published splits downloaded from the hub at mteb's revision (no local ``path``: a local
    copy's revision cannot be verified offline), mteb's k-means (:data:`MTEB_KMEANS`) and mteb's seed 42."""
    from tecb.data.datasets import builder_of
    from tecb.data.sources.published import PUBLISHED

    name = dataset["source"]
    source = sources.get(name) or {}
    if builder_of(name, source, dataset) != "published" or source.get("path") or source.get("local"):
        return None
    default = PUBLISHED.get(name, (None, None))
    task = MTEB_TASKS.get((source.get("repo_id") or default[0], source.get("revision") or default[1]))
    used = {k: (kmeans or {}).get(k) for k in MTEB_KMEANS}
    restarts = (kmeans or {}).get("restarts", 1)  # scoring.restarts > 1 averages states: not mteb's one run
    if task is None or seed != MTEB_SEED or used != MTEB_KMEANS or restarts != 1:
        return None
    return task


def model_identity(model: str, spec: dict) -> tuple[str, str]:
    """``(name, revision)`` MTEB records for config model ``model``: the hub id (else ``tecb/{key}``: a local or
    TF-IDF model, never its folder) and the configured revision (else ``no_revision_available``); a ``kind: mteb``
    model: its mteb name and revision."""
    kind = spec["kind"]  # filled by the config schema's default
    if kind == "mteb":  # mteb's own name and the revision it runs (the config's override, else mteb's)
        if spec.get("revision"):
            return spec["name"], str(spec["revision"])
        from tecb.embed.mteb_model import resolved_revision

        return spec["name"], str(resolved_revision(spec))
    hub_id = spec.get("id") if kind == "huggingface" else None
    if hub_id and (hub_id.startswith(("/", ".", "~")) or "\\" in hub_id):  # a folder, not a hub id
        hub_id = None
    name = hub_id or f"tecb/{model}"
    if "@" in model and not name.endswith(model[model.index("@") :]):  # a prompt variant: its own results folder
        name += model[model.index("@") :]
    revision = spec.get("revision") or NO_REVISION
    return name, str(revision)


def model_folder(model: str, spec: dict) -> str:
    """``{model_dir}/{revision}``: where MTEB looks for the model's results, relative to ``{cache}/results``."""
    name, revision = model_identity(model, spec)
    return f"{name.replace('/', '__').replace(' ', '_')}/{revision.replace('/', '__')}"


def result_relpath(model: str, spec: dict, dataset: str, mteb_task: str | None) -> str:
    """Where a (model, dataset) result goes, relative to ``results/{run}/mteb``: mteb's cache under the task's own
    name (``mteb_task``), else the custom cache under ``tecb.{dataset}``."""
    if mteb_task:
        return f"results/{model_folder(model, spec)}/{mteb_task}.json"
    return f"{CUSTOM_ROOT}/results/{model_folder(model, spec)}/{task_name(dataset)}.json"


def meta_relpath(model: str, spec: dict, custom: bool) -> str:
    """The ``model_meta.json`` of a model in the mteb-named (``custom=False``) or the custom cache."""
    return f"{CUSTOM_ROOT + '/' if custom else ''}results/{model_folder(model, spec)}/model_meta.json"


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


def _checked_revision(dataset: str, prov: dict, mteb_task: str | None) -> str:
    """The dataset's revision (:func:`dataset_revision`); a ValueError where the config names an mteb task whose
    pool has another revision."""
    revision = dataset_revision(dataset, prov)
    if mteb_task is not None:
        expected = next(rev for (_, rev), task in MTEB_TASKS.items() if task == mteb_task)
        if revision != expected:
            raise ValueError(
                f"dataset {dataset}: the config names mteb's {mteb_task} pool, but its splits file records "
                f"revision {revision} (mteb: {expected}); rebuild the dataset"
            )
    return revision


def _test_score(values) -> dict:
    """MTEB's score entry of the test split from the per-split V-measures."""
    import numpy as np

    return {
        "v_measure": float(np.mean(values)),
        "v_measure_std": float(np.std(values)),  # MTEB uses numpy's (population) std
        "v_measures": [float(v) for v in values],
        "main_score": float(np.mean(values)),
        "hf_subset": "default",
        "languages": ["deu-Latn"],
    }


def mteb_result(
    scores,
    model: str,
    dataset: str,
    *,
    spec: dict,
    mteb_task: str | None,
    configuration: tuple[str, str] = PAPER_CONFIGURATION,
    provenance: dict | None = None,
    resolved_revision: str | None = None,
) -> dict:
    """The MTEB result object of one (model, dataset) from the long scores table; ``spec`` is the model's config
    entry, ``mteb_task`` the mteb task name it is stored under (:func:`mteb_task_of`; ``None`` = custom),
    ``configuration`` the ``(algorithm, reduction)`` whose scores it reports."""
    algorithm, reduction = configuration
    sub = _split_rows(scores, model, dataset, algorithm, reduction)
    prov = provenance or {}
    revision = _checked_revision(dataset, prov, mteb_task)
    values = sub["v_measure"].astype(float).to_numpy()
    score = _test_score(values)
    name, model_revision = model_identity(model, spec)
    return {
        "dataset_revision": revision,
        "task_name": mteb_task or task_name(dataset),
        "mteb_version": MTEB_VERSION,
        "scores": {"test": [score]},
        "evaluation_time": None,  # timings live in results/timings/ (scores are byte-identical across reruns)
        "kg_co2_emissions": None,
        "tecb": {
            "model": model,
            "model_id": name,
            "model_revision": model_revision,
            "resolved_revision": resolved_revision,
            "dataset": dataset,
            "algorithm": algorithm,
            "reduction": reduction,
            "n_splits": int(len(values)),
            "mteb_task": mteb_task,
            "not_mteb_task_because": None if mteb_task else not_mteb_because(prov),
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


def _check_distinct_folders(keys: list[str], models: dict[str, dict]) -> None:
    """Refuse two models whose MTEB results would share a folder (the same hub id and revision)."""
    folders: dict[str, str] = {}
    for model in dict.fromkeys(keys):
        folder = model_folder(model, models[model])
        other = next((k for k, f in folders.items() if f == folder), None)
        if other is not None:
            raise ValueError(
                f"config: models {other!r} and {model!r} have the same hub id and revision, so their "
                f"MTEB results would share {folder}/; give one of them a `revision` or another `id`"
            )
        folders[model] = folder


def _split_rows(scores, model: str, dataset: str, algorithm: str, reduction: str):
    """The long scores table's rows of one (model, dataset, configuration), by split; none is an error."""
    sub = scores[
        (scores.model == model)
        & (scores.dataset == dataset)
        & (scores.algorithm == algorithm)
        & (scores.reduction == reduction)
    ].sort_values("split")
    if sub.empty:
        raise ValueError(f"no scores for model {model!r}, dataset {dataset!r}, {algorithm}/{reduction}")
    return sub


def not_mteb_because(provenance: dict) -> str:
    """Why a result is stored under a custom name (the config decided it: :func:`mteb_task_of`)."""
    prov = provenance or {}
    if prov.get("origin") != "published":
        return f"a {prov.get('origin') or 'custom'} dataset built here, not an mteb task's published pool"
    if (prov.get("repo_id"), prov.get("revision")) not in MTEB_TASKS:
        return f"published splits {prov.get('repo_id')}@{prov.get('revision')}, not an mteb task's dataset"
    return (
        "the published pool, but read from a local copy (revision not verifiable offline), or scored with a seed "
        "or k-means other than mteb's"
    )


@dataclass(frozen=True, kw_only=True)
class ResultFiles:
    """The files of :func:`write_mteb_results`: it reads ``scores`` (the long scores table) and writes one MTEB JSON
    per ``(model, dataset, path)`` of ``results`` and one ``model_meta.json`` per ``(model, path)`` of ``metas``."""

    scores: str | Path
    results: Sequence[tuple]
    metas: Sequence[tuple] = ()


def write_mteb_results(
    files: ResultFiles,
    models: dict[str, dict],
    *,
    mteb_tasks: dict[str, str | None],
    configuration: tuple[str, str] = PAPER_CONFIGURATION,
    provenance: dict[str, dict] | None = None,
    resolved_revisions: dict[str, str | None] | None = None,
    log=print,
) -> list[Path]:
    """Write the files of ``files`` (:class:`ResultFiles`) for the ``configuration`` ``(algorithm, reduction)``;
    ``models`` maps keys to config specs, ``mteb_tasks`` datasets to their mteb task name or ``None``
    (:func:`mteb_task_of`), ``provenance`` datasets to the provenance their files record
    (:func:`tecb.io.dataset_provenance`), ``resolved_revisions`` models to the revision actually used."""
    import pandas as pd

    from tecb.io import write_json

    targets, (algorithm, reduction) = files.results, configuration
    scores = pd.read_parquet(files.scores)
    _check_distinct_folders([m for m, *_ in targets], models)
    paths = []
    for model, dataset, path in targets:
        result = mteb_result(
            scores,
            model,
            dataset,
            spec=models[model],
            mteb_task=mteb_tasks.get(dataset),
            configuration=configuration,
            provenance=(provenance or {}).get(dataset),
            resolved_revision=(resolved_revisions or {}).get(model),
        )
        write_json(result, path)
        paths.append(Path(path))
    for model, path in files.metas:
        write_json(model_meta(model, models[model]), path)
        paths.append(Path(path))
    named = sum(1 for _, d, _ in targets if mteb_tasks.get(d))
    log(
        f"{len(paths)} MTEB files ({algorithm}/{reduction}): {named} under mteb's task names, "
        f"{len(targets) - named} under tecb.* names in the custom cache"
    )
    return paths
