"""Model specs: the settings that decide an embedding, resolved once (design §4, §5).

:func:`encoder_settings` turns a ``models.<key>`` config entry (plus the ``embed`` defaults and the
dataset) into the plain values that decide the vectors: what is loaded (id/path, revision, remote
code, model and tokenizer keyword arguments, dtype), how texts are fed to it (prompt, maximum
sequence length, ``encode`` keyword arguments) and how token vectors become one vector (pooling,
normalisation). The embed rule passes exactly this as its params, so changing any of them recomputes
the embedding, while the display ``name`` and execution settings (batch size, device, threads: they
change the numbers only at float rounding level) do not. The same dict is recorded in each
embedding file's metadata.

:func:`directory_digest` hashes a local model's files, so overwriting its weights re-embeds.

Pure Python (``hashlib`` only): the Snakefile imports it while building the DAG.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from tecb.embed.options import CHUNK_SIZE, resolve_prompt  # noqa: F401  (re-exported: spec.CHUNK_SIZE)
from tecb.io import file_sha256  # noqa: F401  (re-exported: spec.file_sha256)

POOLING_MODES = ("mean", "cls", "max", "lasttoken", "mean_sqrt_len_tokens", "weightedmean")
DTYPES = ("float32", "float16", "bfloat16")
#: The model kinds are the keys of :data:`KIND_KEYS` (:data:`KINDS`, the schema's enum); these name groups of them.
#: Kinds run through sentence-transformers: checkpoints that pre-training and adaptation train, that a static model
#: is distilled from (``python``, ``precomputed`` and ``static`` are not).
TRANSFORMER_KINDS = ("huggingface", "local", "tiny-bert")
#: Kinds whose vectors come from no model folder or file: TF-IDF fits on the texts, a Python object is imported.
FILELESS_KINDS = ("tfidf", "python")
#: Kinds that never use a GPU (an embed job of theirs asks for none).
CPU_KINDS = ("tfidf", "static", "precomputed")
# keys of a model entry that are not embedding inputs: the display name, execution settings
NOT_INPUTS = ("name", "batch_size")


def encoder_settings(spec: Mapping, embed_options: Mapping | None = None, dataset: str | None = None) -> dict:
    """The resolved values that decide a model's vectors for ``dataset`` (see the module docstring).

    ``spec`` is a ``models.<key>`` entry (with ``path`` filled in for built or prefetched models);
    ``embed_options`` the ``embed`` section (its ``dtype`` is the default of a model's ``dtype``).
    """
    embed_options = embed_options or {}
    kind = spec["kind"]  # filled by the config schema's default
    if kind == "tfidf":
        return {"kind": "tfidf", "dim": int(spec.get("dim", 256))}
    if kind == "python":
        if spec.get("env"):  # its packages are in its own env, maybe not here: resolved in the job
            return {"kind": "python", "object": spec["object"], "kwargs": dict(spec.get("kwargs") or {})}
        return python_settings(spec)
    if kind == "precomputed":
        return {"kind": "precomputed", "path": str(spec["path"]), "texts": spec.get("texts")}
    if kind == "mteb":  # mteb's ModelMeta decides (imports mteb: only for configs with such a model)
        from tecb.embed.mteb_model import settings

        return settings(spec, dataset, embed_options)
    if kind == "static":
        return {
            "kind": "static",
            "path": str(spec["path"]) if spec.get("path") else None,
            "distill_from": spec.get("distill_from"),
            "pca_dims": spec.get("pca_dims") if spec.get("distill_from") else None,
        }
    if kind not in TRANSFORMER_KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    return _transformer_settings(spec, embed_options, dataset)


def _transformer_settings(spec: Mapping, embed_options: Mapping, dataset: str | None) -> dict:
    """:func:`encoder_settings` of a sentence-transformers model (``huggingface``, ``tiny-bert`` ...)."""
    kind = spec["kind"]
    prompt = resolve_prompt(spec.get("prompt"), dataset)
    prompt_name = spec.get("prompt_name")
    if prompt is not None and prompt_name is not None:
        raise ValueError(
            "a model takes `prompt` (a literal prefix) or `prompt_name` (one of its own prompts), not both"
        )
    pooling = spec.get("pooling")
    if pooling is not None and pooling not in POOLING_MODES:
        raise ValueError(f"pooling {pooling!r} is not one of {', '.join(POOLING_MODES)}")
    dtype = spec.get("dtype") or embed_options.get("dtype") or "float32"
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    max_seq_length = spec.get("max_seq_length")
    chunk_size = int(spec.get("chunk_size") or embed_options.get("chunk_size") or CHUNK_SIZE)
    return {
        "kind": kind,
        "id": spec.get("id"),
        "path": str(spec["path"]) if spec.get("path") else None,
        "revision": spec.get("revision"),
        "trust_remote_code": bool(spec.get("trust_remote_code", False)),
        "prompt": prompt,
        "prompt_name": prompt_name,
        "pooling": pooling,
        "normalize": spec.get("normalize"),
        "max_seq_length": int(max_seq_length) if max_seq_length else None,
        "model_kwargs": dict(spec.get("model_kwargs") or {}),
        "tokenizer_kwargs": dict(spec.get("tokenizer_kwargs") or {}),
        "encode_kwargs": dict(spec.get("encode_kwargs") or {}),
        "dtype": dtype,
        **({"chunk_size": chunk_size} if chunk_size != CHUNK_SIZE else {}),  # the default: as before the key
    }


# --- local model content --------------------------------------------------------------------

SKIP_DIRS = {".git", "__pycache__", ".cache", ".ipynb_checkpoints"}


def model_files(path: str | os.PathLike) -> list[str]:
    """The files of a model directory (or the file itself), sorted; caches and VCS folders skipped."""
    path = Path(path)
    if path.is_file():
        return [str(path)]
    if not path.is_dir():
        raise FileNotFoundError(f"model path {path} does not exist")
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [os.path.join(root, f) for f in files]
    return sorted(found)


def directory_digest(path: str | os.PathLike) -> dict:
    """``{"sha256": <digest of all files>, "files": {relative path: sha256}}`` of a model directory.

    The digest covers each file's relative path and content, so renaming, adding, removing or
    overwriting any weight, config or tokenizer file changes it; timestamps do not.
    """
    path = Path(path)
    base = path.parent if path.is_file() else path
    files = {os.path.relpath(f, base).replace(os.sep, "/"): file_sha256(f) for f in model_files(path)}
    total = hashlib.sha256()
    for name, digest in sorted(files.items()):
        total.update(f"{name}\0{digest}\n".encode())
    return {"sha256": total.hexdigest(), "files": files}


# --- model kinds: which keys each takes (config validation, issue 22) -----------------------

#: Keys of every model entry, whatever its kind.
COMMON_KEYS = frozenset({"name", "kind", "env", "note"})
#: Settings of the sentence-transformers path (huggingface, local, tiny-bert).
TRANSFORMER_KEYS = frozenset(
    {
        "batch_size",
        "dtype",
        "encode_kwargs",
        "instruction_template",
        "max_seq_length",
        "model_kwargs",
        "normalize",
        "pooling",
        "prompt",
        "prompt_name",
        "prompt_variants",
        "tokenizer_kwargs",
        "trust_remote_code",
    }
)
#: kind -> the keys a model entry of that kind may have (everything else is refused, naming the key).
KIND_KEYS = {
    "huggingface": COMMON_KEYS | TRANSFORMER_KEYS | {"id", "revision", "code_revisions"},
    "local": COMMON_KEYS | TRANSFORMER_KEYS | {"path"},
    "tiny-bert": COMMON_KEYS | TRANSFORMER_KEYS,
    "tfidf": COMMON_KEYS | {"dim"},
    "python": COMMON_KEYS | {"object", "kwargs", "batch_size"},
    "precomputed": COMMON_KEYS | {"path", "texts"},
    "static": COMMON_KEYS | {"path", "distill_from", "pca_dims", "batch_size"},
    # `name` is mteb's model name here (also the display name); the rest comes from mteb (tecb.embed.mteb_model)
    "mteb": COMMON_KEYS | {"path", "revision", "prompt", "task", "batch_size", "code_revisions"},
}
#: kind -> keys it cannot do without (one of the tuple's keys where it is a tuple).
KIND_REQUIRED = {
    "huggingface": ("id",),
    "local": ("path",),
    "python": ("object",),
    "precomputed": ("path",),
    "static": (("path", "distill_from"),),
    "mteb": ("name",),
}
KINDS = tuple(KIND_KEYS)
#: Keys the schema fills in on every model entry (their defaults): not refused on other kinds at that value.
FILLED_BY_SCHEMA = {"trust_remote_code": False}


def model_key_errors(key: str, spec: Mapping) -> list[str]:
    """Messages for keys of ``models.<key>`` that do not apply to its kind, or required ones missing."""
    kind = spec.get("kind", "huggingface")
    if kind not in KIND_KEYS:
        return [f"models.{key}.kind: {kind!r} is not one of {', '.join(KINDS)}"]
    out = [
        f"models.{key}.{k}: does not apply to kind {kind} (it takes: {', '.join(sorted(KIND_KEYS[kind]))})"
        for k, v in spec.items()
        if k not in KIND_KEYS[kind] and not (k in FILLED_BY_SCHEMA and v == FILLED_BY_SCHEMA[k])
    ]
    for need in KIND_REQUIRED.get(kind, ()):
        options = need if isinstance(need, tuple) else (need,)
        if not any(spec.get(k) is not None for k in options):
            out.append(f"models.{key}: kind {kind} needs `{'` or `'.join(options)}`")
    if kind == "static" and spec.get("path") and spec.get("distill_from"):
        out.append(f"models.{key}: kind static takes `path` (a static model) or `distill_from`, not both")
    return out


# --- kind: python --------------------------------------------------------------------------

OBJECT_PATTERN = "package.module:name"


def import_object(path: str, key: str | None = None):
    """The object named ``"package.module:name"`` (``name`` may be dotted: ``module:Class.factory``).

    Raises ``ValueError`` naming ``models.<key>.object`` when the path is malformed, the module does not
    import or has no such attribute.
    """
    import importlib

    where = f"models.{key}.object" if key else "object"
    if not isinstance(path, str) or path.count(":") != 1 or not all(path.split(":")):
        raise ValueError(f"{where}: {path!r} is not of the form {OBJECT_PATTERN!r}")
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import failure is reported with the key
        raise ValueError(
            f"{where}: cannot import module {module_name!r} ({type(error).__name__}: {error}); "
            "install its package in the workflow's environment or put its folder on PYTHONPATH"
        ) from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{where}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{where}: {path!r} is not callable (a class or a factory that builds the encoder)")
    return obj


def object_distribution(path: str) -> dict:
    """``{"name", "version"}`` of the installed distribution providing the object's module, or for a module
    found on ``PYTHONPATH`` only ``{"name": None, "version": None, "module_file": ..., "module_sha256": ...}``."""
    import importlib
    from importlib.metadata import packages_distributions, version

    module_name = path.partition(":")[0]
    top = module_name.split(".")[0]
    names = packages_distributions().get(top) or []
    if names:
        return {"name": names[0], "version": version(names[0])}
    module = importlib.import_module(module_name)
    source = getattr(module, "__file__", None)
    return {
        "name": None,
        "version": None,
        "module_file": source,
        "module_sha256": file_sha256(source) if source else None,
    }


def exposed_files(obj) -> list[str]:
    """Files an encoder object (class, factory or instance) says it loads: its ``files`` attribute
    (a list of paths, or a callable returning one); empty when it has none."""
    files = getattr(obj, "files", None)
    if files is None:
        return []
    if callable(files):
        files = files()
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    return sorted(str(f) for f in files)


def python_settings(spec: Mapping, key: str | None = None) -> dict:
    """What decides a ``kind: python`` model's vectors: object path, kwargs, providing package and version
    (a PYTHONPATH module: its file's sha256), and the sha256 of each file the object exposes."""
    obj = import_object(spec.get("object"), key)
    kwargs = spec.get("kwargs") or {}
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"models.{key}.kwargs: must be a mapping of keyword arguments")
    return {
        "kind": "python",
        "object": spec["object"],
        "kwargs": dict(kwargs),
        "package": object_distribution(spec["object"]),
        "files": {f: file_sha256(f) for f in exposed_files(obj)},
    }


def check_python_object(key: str, spec: Mapping) -> None:
    """Startup check of a ``kind: python`` model: the object imports and is a class or factory."""
    import_object(spec.get("object"), key)


# --- kind: precomputed, static -------------------------------------------------------------


def digest_paths(spec: Mapping) -> list[str]:
    """The files whose content decides a model's vectors and is hashed into its digest (empty if none):
    a local model's folder, a precomputed model's vector file (and texts file), a static model's folder."""
    kind = spec.get("kind", "huggingface")
    if kind == "local" or (kind in ("static", "mteb") and spec.get("path") and not spec.get("distill_from")):
        return [str(spec["path"])]
    if kind == "precomputed":
        return [str(spec["path"])] + ([str(spec["texts"])] if spec.get("texts") else [])
    return []


def paths_digest(paths) -> dict:
    """:func:`directory_digest` of several paths: ``{"sha256", "files": {path/relative: sha256}}``."""
    paths = [str(p) for p in paths]
    if len(paths) == 1:
        return directory_digest(paths[0])
    files = {}
    for p in paths:
        for name, digest in directory_digest(p)["files"].items():
            files[f"{Path(p).name}/{name}" if Path(p).is_dir() else name] = digest
    total = hashlib.sha256()
    for name, digest in sorted(files.items()):
        total.update(f"{name}\0{digest}\n".encode())
    return {"sha256": total.hexdigest(), "files": files}


# --- prompt variants (issue 22.6) -----------------------------------------------------------

#: mteb 2.26's instruction for a clustering task whose metadata sets no prompt (AbsTaskClustering.abstask_prompt):
#: what the leaderboard's instruction models were given on the German clustering tasks.
MTEB_GENERIC_CLUSTERING_INSTRUCTION = "Identify categories in user passages."
PROMPT_VARIANTS = ("none", "generic", "task")


def variant_prompt(spec: Mapping, variant: str):
    """The ``prompt`` of a model entry under a prompt variant: ``none`` (no prompt), ``generic`` (mteb's
    generic clustering instruction in the model's ``instruction_template``), ``task`` (its own ``prompt``)."""
    if variant == "none":
        return None
    if variant == "task":
        return spec.get("prompt")
    if variant == "generic":
        template = spec.get("instruction_template")
        if not template or "{instruction}" not in template:
            raise ValueError("prompt variant `generic` needs an `instruction_template` containing {instruction}")
        return template.format(instruction=MTEB_GENERIC_CLUSTERING_INSTRUCTION)
    raise ValueError(f"prompt variant {variant!r} is not one of {', '.join(PROMPT_VARIANTS)}")


def expand_prompt_variants(models: Mapping) -> dict:
    """``models`` with each entry that lists ``prompt_variants`` replaced by one entry per variant, keyed
    ``{model}@{variant}`` and named ``{name} [variant]``; entries without the option are kept as they are."""
    out = {}
    for key, spec in models.items():
        variants = spec.get("prompt_variants")
        if not variants:
            out[key] = dict(spec)
            continue
        for variant in variants:
            entry = {k: v for k, v in spec.items() if k not in ("prompt_variants", "prompt", "prompt_name")}
            if variant == "task" and spec.get("prompt_name") is not None:
                entry["prompt_name"] = spec["prompt_name"]
            try:
                entry["prompt"] = variant_prompt(spec, variant)
            except ValueError as error:
                raise ValueError(f"models.{key}.prompt_variants: {error}") from None
            entry["name"] = f"{spec.get('name', key)} [{variant}]"
            out[f"{key}@{variant}"] = entry
    return out


def batch_size_of(model_spec: Mapping, embed_options: Mapping) -> int:
    """A model's batch size, resolved here only: its entry's ``batch_size``, else ``embed.batch_size``. Not an
    embedding input (:data:`NOT_INPUTS`): changing it re-embeds nothing."""
    return int(model_spec.get("batch_size") or embed_options["batch_size"])


def run_options(model_spec: Mapping, embed_options: Mapping) -> dict:
    """How a model's embedding job runs, resolved once: ``embed_options`` (the ``embed`` section) with the model's
    own ``batch_size`` where its entry ``model_spec`` sets one (:func:`batch_size_of`); the encoders take it as
    given (:class:`tecb.embed.encode.EmbedJob`)."""
    options = dict(embed_options)
    if model_spec.get("batch_size"):
        options["batch_size"] = batch_size_of(model_spec, options)
    return options


def job_embed_options(config: Mapping, *, model: str) -> dict:
    """The :func:`run_options` of one model's embedding job from the filled config (an embed-stage job's,
    tecb.embed.job)."""
    return run_options(config["models"][model], config["embed"])


def encoder_device(embed_options: Mapping) -> str | None:
    """The device an embed job loads its encoder on, resolved here only from ``embed.device`` (``embed_options``:
    the ``embed`` section or a job's options): None for ``auto`` (or unset: the encoder's own choice, CUDA where
    there is one), else the device named (``cpu``, ``cuda:1``, ...). What the encoders load on
    (tecb.embed.encode) and what the embed jobs ask for (:func:`gpus_asked`) both come from here."""
    device = embed_options.get("device")
    return None if device in (None, "", "auto") else device


def gpus_asked(kind: str, embed_options: Mapping) -> int:
    """The GPUs an embed job of a model of ``kind`` asks for (its ``gpu`` resource): transformers may use one; a
    Python object too, unless its device (:func:`encoder_device`) is ``cpu``; TF-IDF, static and precomputed models
    never (:data:`CPU_KINDS`: on a CPU machine they run side by side under ``--resources gpu=1``)."""
    if kind in CPU_KINDS:
        return 0
    if kind == "python":
        return int(encoder_device(embed_options) != "cpu")
    return 1


def vector_seed(kind: str, seed: int) -> int | None:
    """The seed that decides a model's vectors, given the run's ``seed``: TF-IDF's (its SVD), None for every other
    kind (they use none; an embed job's ``seed`` param, part of its cache key)."""
    return seed if kind == "tfidf" else None


def recorded_digest(digest_files) -> str | None:
    """The sha256 in a model_digest job's JSON file (``digest_files``: the job's ``digest`` input, a list of at
    most one path), or None for a model without one."""
    if not digest_files:
        return None
    import json

    with open(digest_files[0]) as f:
        return json.load(f)["sha256"]
