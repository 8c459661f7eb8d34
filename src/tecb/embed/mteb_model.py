"""``kind: mteb``: any model of MTEB's registry by its name, run through MTEB's own loader and model wrapper
(issue 37).

A ``models.<key>`` entry ``{kind: mteb, name: <an MTEB model name>}`` takes everything that decides its vectors
from mteb's ``ModelMeta`` (package data, offline): the revision, the loader and its arguments (prompts,
instruction template, dtype, ``trust_remote_code``), and for the tables the parameters, embedding size, maximum
tokens, licence, open weights and training datasets. The texts of a dataset are encoded by the wrapper mteb's
loader returns, called as mteb's clustering evaluator calls it (``encode(DataLoader, task_metadata=<the task>,
hf_split, hf_subset)``, no prompt type), so prompts and instructions are chosen and applied exactly as MTEB
applies them for that task (:func:`encode_texts`).

The mteb task of a dataset (whose metadata the wrapper reads: its name, type and prompt) is the dataset's own
name when mteb has a task of that name (the paper's Blurbs and TenKGnad datasets); the German Reddit datasets
follow mteb's (English) Reddit clustering classes (:data:`DATASET_TASKS`, as :mod:`tecb.scoring.mteb_v2` does); any
other dataset needs ``task:`` on the model entry (a task name, or a mapping dataset -> task name with an optional
``default``).

``path:`` points at local weights (air-gapped nodes); without it the prefetch rule downloads the pinned revision.
``revision:`` and ``prompt:`` set by the user override mteb's and are listed in :func:`overrides` (the tables'
notes). Only this module and the embed/config-check code paths of ``kind: mteb`` import mteb.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Mapping

from tecb.embed.options import CHUNK_SIZE, resolve_prompt

#: Datasets of the benchmark that are not mteb task names -> the mteb task whose metadata their prompts come from:
#: our German Reddit datasets follow mteb's (English) Reddit clustering classes (tecb.scoring.mteb_v2.RECIPES).
DATASET_TASKS = {"RedditClusteringS2S": "RedditClustering", "RedditClusteringP2P": "RedditClusteringP2P"}
#: mteb's German clustering tasks: a model trained on one of these was trained on the data it is scored on there.
GERMAN_TASKS = ("BlurbsClusteringS2S", "BlurbsClusteringP2P", "TenKGnadClusteringS2S", "TenKGnadClusteringP2P")
#: The split and subset mteb's clustering evaluator passes to ``encode`` for the German tasks.
HF_SPLIT, HF_SUBSET = "test", "default"


@functools.lru_cache(maxsize=1)
def registry_names() -> tuple[str, ...]:
    """The model names of mteb's registry (package data)."""
    import mteb

    return tuple(sorted(m.name for m in mteb.get_model_metas() if m.name))


def closest_names(name: str, n: int = 5) -> list[str]:
    """The registry's names closest to ``name`` (difflib ratio, case-insensitive; the model part alone too)."""
    names = registry_names()
    lower = {x.lower(): x for x in names}
    found = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.5)
    tail = name.lower().rsplit("/", 1)[-1]
    tails = {x.lower().rsplit("/", 1)[-1]: x.lower() for x in names}
    found += [tails[t] for t in difflib.get_close_matches(tail, list(tails), n=n, cutoff=0.6)]
    return list(dict.fromkeys(lower[f] for f in found))[:n]


def model_meta(name: str):
    """mteb's ``ModelMeta`` of ``name``; ``KeyError`` naming the closest registered names when mteb does not know it."""
    import mteb

    if name not in registry_names():
        close = closest_names(name)
        hint = f"; closest names: {', '.join(close)}" if close else ""
        raise KeyError(f"{name!r} is not a model of mteb's registry (mteb {mteb.__version__}){hint}")
    return mteb.get_model_meta(name)


def task_name(spec: Mapping, dataset: str | None) -> str | None:
    """The mteb task name of ``dataset`` for a ``kind: mteb`` entry: its ``task`` (a name, or a mapping
    dataset -> name with ``default``), else :data:`DATASET_TASKS`, else the dataset's own name (pure: whether mteb
    knows it is :func:`entry_errors`'s check)."""
    task = spec.get("task")
    if isinstance(task, str):
        return task
    if isinstance(task, Mapping):
        if dataset in task:
            return task[dataset]
        if task.get("default"):
            return task["default"]
    if dataset is None:
        return None
    return DATASET_TASKS.get(dataset, dataset)


@functools.lru_cache(maxsize=64)
def task_metadata(name: str):
    """The ``TaskMetadata`` of mteb's task ``name`` (``KeyError`` when mteb has none)."""
    import mteb

    try:
        return mteb.get_task(name).metadata
    except (KeyError, ValueError) as error:
        raise KeyError(f"{name!r} is not an mteb task ({error})") from None


def entry_errors(key: str, spec: Mapping, datasets) -> list[str]:
    """Config errors of a ``kind: mteb`` entry, before any job: a name mteb does not know (with the closest names),
    a dataset without an mteb task, a task that is not a clustering task, a ``prompt`` the loader cannot take."""
    name = spec.get("name")
    if not name:
        return [f"models.{key}: kind mteb needs `name` (a model name of mteb's registry)"]
    try:
        meta = model_meta(name)
    except KeyError as error:
        return [f"models.{key}.name: {error.args[0]}"]
    out = []
    if meta.loader is None:
        out.append(f"models.{key}.name: mteb has no implementation (loader) for {name!r}; it cannot be run")
    elif spec.get("prompt") is not None and not takes_prompt(meta):
        out.append(
            f"models.{key}.prompt: mteb's loader for {name!r} ({loader_name(meta)}) does not choose prompts from "
            "model_prompts (an instruction or custom wrapper); a prompt override cannot apply: remove `prompt`, or "
            "run the model as kind huggingface"
        )
    for dataset in datasets:
        task = task_name(spec, dataset)
        try:
            metadata = task_metadata(task)
        except KeyError:
            out.append(
                f"models.{key}: dataset {dataset!r} has no mteb task of that name; set `task:` on the model "
                f"(an mteb clustering task whose prompt applies, or a mapping dataset -> task), e.g. task: "
                f"{{{dataset}: BlurbsClusteringS2S}}"
            )
            continue
        if metadata.type != "Clustering":
            out.append(f"models.{key}.task: {task!r} is a {metadata.type} task, not a clustering task")
    return out


def resolved_revision(spec: Mapping) -> str | None:
    """The revision a ``kind: mteb`` entry runs: its own ``revision`` (an override) or mteb's."""
    return spec.get("revision") or model_meta(spec["name"]).revision


def overrides(spec: Mapping) -> list[str]:
    """What a ``kind: mteb`` entry sets over mteb's metadata, as notes for the tables (empty: exactly mteb's)."""
    meta = model_meta(spec["name"])
    out = []
    if spec.get("revision") and spec["revision"] != meta.revision:
        out.append(f"revision {spec['revision']} (mteb: {meta.revision})")
    if spec.get("prompt") is not None:
        out.append(f"prompt {spec['prompt']!r} given in the config (not mteb's)")
    if spec.get("path"):
        # the folder's name only: the tables are meant for sharing, an absolute path is the user's machine's
        folder = os.path.basename(os.path.normpath(str(spec["path"])))
        out.append(f"weights from a local folder ({folder}; mteb's revision {meta.revision} assumed, not verified)")
    return out


def loader_name(meta) -> str:
    """``module.qualname`` of a ModelMeta's loader (a class, a function or a partial)."""
    loader = getattr(meta.loader, "func", meta.loader)
    return f"{loader.__module__}.{getattr(loader, '__qualname__', type(loader).__name__)}"


def _plain(value):
    """JSON-friendly copy of loader arguments (enums by value, dtypes by name)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return getattr(value, "value", value)
    return str(value).replace("torch.", "")


def settings(spec: Mapping, dataset: str | None, embed_options: Mapping | None = None) -> dict:
    """What decides a ``kind: mteb`` model's vectors for ``dataset`` (the embed job's params; see tecb.embed.spec);
    ``embed_options``: the ``embed`` section (its ``chunk_size``: the texts encoded per wrapper call)."""
    import mteb

    meta = model_meta(spec["name"])
    chunk_size = int((embed_options or {}).get("chunk_size") or CHUNK_SIZE)
    return {
        "kind": "mteb",
        "name": spec["name"],
        "path": str(spec["path"]) if spec.get("path") else None,
        "revision": resolved_revision(spec),
        "task": task_name(spec, dataset),
        "prompt": resolve_prompt(spec.get("prompt"), dataset),
        "loader": loader_name(meta),
        "loader_kwargs": _plain(meta.loader_kwargs),
        "mteb_version": mteb.__version__,
        **({"chunk_size": chunk_size} if chunk_size != CHUNK_SIZE else {}),  # the default: not a setting
    }


def load_wrapper(settings: Mapping, device: str | None = None):
    """The model wrapper mteb's loader returns for the entry, its ``mteb_model_meta`` set as ``ModelMeta.load_model``
    sets it; from ``settings["path"]`` when given (the prefetched or local weights, no hub access)."""
    meta = model_meta(settings["name"])
    if meta.loader is None:
        raise ValueError(f"mteb has no implementation (loader) for {settings['name']!r}")
    source = settings.get("path") or settings["name"]
    kwargs = dict(meta.loader_kwargs)
    if device is not None:
        kwargs["device"] = device
    # a local folder is that revision's files already; the revision argument is for the hub
    wrapper = meta.loader(source, revision=None if settings.get("path") else settings.get("revision"), **kwargs)
    wrapper.mteb_model_meta = meta.model_copy(update={"loader_kwargs": kwargs})
    if settings.get("prompt") is not None:
        set_prompt(wrapper, settings["task"], settings["prompt"])
    return wrapper


def takes_prompt(meta) -> bool:
    """Whether a prompt override can apply: mteb's loader is its plain sentence-transformers wrapper (or a subclass),
    which chooses the prompt from ``model_prompts`` (instruction and custom wrappers build theirs otherwise)."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    loader = getattr(meta.loader, "func", meta.loader)
    return isinstance(loader, type) and issubclass(loader, SentenceTransformerEncoderWrapper)


def set_prompt(wrapper, task: str, prompt: str) -> None:
    """A ``prompt:`` override: the wrapper's prompt for ``task`` (its ``model_prompts``); refused for a wrapper
    that does not choose its prompt from them."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    if not isinstance(wrapper, SentenceTransformerEncoderWrapper):
        raise ValueError(
            f"prompt override: mteb's wrapper {type(wrapper).__name__} has no model_prompts; leave `prompt` unset"
        )
    wrapper.model_prompts = {**(wrapper.model_prompts or {}), task: prompt}


def applied_prompt(wrapper, task: str) -> str | None:
    """The prompt text the wrapper prepends for clustering task ``task`` (mteb's own rule, no prompt type): its
    ``model_prompts`` by mteb's ``get_prompt_name``, or for an instruction wrapper its formatted task instruction;
    ``None`` when it adds none."""
    metadata = task_metadata(task)
    if hasattr(wrapper, "get_task_instruction") and getattr(wrapper, "instruction_template", None):
        return wrapper.get_task_instruction(metadata, None) or None
    return expected_prompt(getattr(wrapper, "model_prompts", None), task)


def expected_prompt(model_prompts: Mapping | None, task: str) -> str | None:
    """The prompt mteb's ``SentenceTransformerEncoderWrapper`` uses for clustering task ``task`` given the
    loader's ``model_prompts`` (mteb's ``get_prompt_name`` with no prompt type, as its clustering evaluator calls)."""
    from mteb.models.abs_encoder import get_prompt_name

    if not model_prompts:
        return None
    name = get_prompt_name(dict(model_prompts), task_metadata(task), None)
    return model_prompts.get(name) if name else None


def encode_texts(wrapper, texts: list[str], task: str, batch_size: int):
    """``texts`` -> float32 vectors by the wrapper, called as mteb's clustering evaluator calls it."""
    import numpy as np
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    metadata = task_metadata(task)
    loader = create_dataloader(
        Dataset.from_dict({"text": list(texts)}), task_metadata=metadata, input_column="text", batch_size=batch_size
    )
    vectors = wrapper.encode(
        loader,
        task_metadata=metadata,
        hf_split=HF_SPLIT,
        hf_subset=HF_SUBSET,
        batch_size=batch_size,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


# --- metadata for the tables ----------------------------------------------------------------


#: The German tasks whose texts come from one corpus: S2S and P2P share their books (Blurbs) and articles (TenKGnad),
#: so a model trained on either task's data has seen the other's texts.
SAME_TEXTS = {
    "BlurbsClusteringS2S": ("BlurbsClusteringS2S", "BlurbsClusteringP2P"),
    "BlurbsClusteringP2P": ("BlurbsClusteringS2S", "BlurbsClusteringP2P"),
    "TenKGnadClusteringS2S": ("TenKGnadClusteringS2S", "TenKGnadClusteringP2P"),
    "TenKGnadClusteringP2P": ("TenKGnadClusteringS2S", "TenKGnadClusteringP2P"),
}


def data_tasks(dataset: str) -> tuple[str, ...]:
    """The mteb tasks whose data ``dataset`` is: the German tasks of its corpus (:data:`SAME_TEXTS`), else the task
    of that name when mteb has one (a dataset named as an mteb task, of any language or type); ``()`` for the rest
    (our Reddit, your own datasets). A model's ``task:`` only picks its prompt: it says nothing about the data."""
    if dataset in SAME_TEXTS:
        return SAME_TEXTS[dataset]
    if dataset in DATASET_TASKS:  # the paper's German Reddit: mteb's Reddit tasks only lend it their prompts
        return ()
    try:
        task_metadata(dataset)
    except KeyError:
        return ()
    return (dataset,)


def trained_on(meta, dataset: str) -> str:
    """``yes`` / ``no`` / ``unknown``: whether the model was trained on the data of ``dataset``, from mteb's
    ``training_datasets`` (with the datasets mteb counts as the same, ``get_training_datasets``), for every task
    whose data the dataset is (:func:`data_tasks`, ``.v2`` included); ``unknown`` where mteb lists no training data
    or the dataset is no mteb task's data."""
    tasks = data_tasks(dataset)
    training = meta.get_training_datasets() if tasks else None
    if training is None:
        return "unknown"
    return "yes" if {f"{t}{v}" for t in tasks for v in ("", ".v2")} & set(training) else "no"


def model_card(spec: Mapping, datasets) -> dict:
    """The models table's row of a ``kind: mteb`` entry: mteb's metadata and a trained-on flag per dataset."""
    meta = model_meta(spec["name"])
    training = meta.get_training_datasets()
    return {
        "mteb_name": meta.name,
        "revision": resolved_revision(spec),
        "n_parameters": meta.n_parameters,
        "embed_dim": meta.embed_dim if not isinstance(meta.embed_dim, (list, tuple)) else max(meta.embed_dim),
        "max_tokens": int(meta.max_tokens) if meta.max_tokens else None,
        "license": meta.license,
        "open_weights": meta.open_weights,
        "use_instructions": meta.use_instructions,
        "n_training_datasets": None if training is None else len(training),
        **{f"trained_on:{d}": trained_on(meta, d) for d in datasets},
        "notes": "; ".join(overrides(spec)),
    }
