"""Preflight: the files, models and classes a planned run uses, checked before any job starts.

The schema check (:mod:`tecb.configcheck`) sees the config only; this looks at what the config points to, cheaply:

- every source a configured dataset uses: the file exists (a missing file is an error even when an older
  dataset built from it exists), opens in its format and encoding, and has what its builder needs (custom
  TSV/CSV/Parquet/JSONL: the configured text/label/split columns, every record readable, no ``NaN`` label, two
  labels per split; GermEval: the zip or folder opens and holds labelled ``blurbs_*.txt`` files; One Million
  Posts: an SQLite file with table ``Articles``; 10kGNAD: its csv rows; Reddit: the Parquet schema;
  published splits: the JSON Lines records);
- every ``kind: local`` model folder: weights and ``config.json`` present, ``config.json`` parses with the right
  types (``hidden_size`` an integer, ...);
- every other model kind's paths and names: a hub ``id`` of the form owner/name, the ``path`` of ``mteb`` and
  ``static`` models, a ``precomputed`` model's files, a ``distill_from`` folder or transformer model key, a
  ``python`` object that imports (:func:`model_entry_problems`);
- every import-path algorithm a configuration uses: a clusterer (``fit_predict``, or ``fit`` setting ``labels_``).

Files a rule of the workflow writes (downloads, the demo's inputs) are checked only once they exist; nothing is
downloaded. Each message names the config key, the file and what to change. A check that passed is remembered
in ``.snakemake/tecb-preflight/cache.json`` under the file's path, size and modification time (and the settings
checked), so a second start reads no file again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tecb.config import ConfigError
from tecb.embed.spec import TRANSFORMER_KINDS

CACHE_DIR = Path(".snakemake") / "tecb-preflight"
CACHE_VERSION = 1
WEIGHT_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
#: config.json keys a BERT-like checkpoint needs as integers (checked where present) and those that must be present.
CONFIG_INTS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
)
CONFIG_REQUIRED = ("model_type",)


class PreflightError(ConfigError):
    """Something the config points to cannot be used; the message lists every problem with its key and file."""


# --- fingerprints and the cache --------------------------------------------------------------------------------


def file_stat(path) -> list:
    """``[size, mtime_ns]`` of a file, or of every file of a folder (sorted by name): what the cache is keyed on."""
    path = Path(path)
    if path.is_dir():
        return [[str(p.relative_to(path)), *file_stat(p)] for p in sorted(path.rglob("*")) if p.is_file()]
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _key(kind: str, paths, settings) -> str:
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    blob = json.dumps(
        [CACHE_VERSION, kind, [[os.path.realpath(p), file_stat(p)] for p in paths], settings],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class Cache:
    """Keys of checks that passed, in one small JSON file; a damaged or missing file is an empty cache."""

    def __init__(self, folder: str | os.PathLike | None):
        self.path = Path(folder) / "cache.json" if folder is not None else None
        self.passed: dict[str, str] = {}
        self.dirty = False
        if self.path is not None and self.path.is_file():
            try:
                self.passed = dict(json.loads(self.path.read_text(encoding="utf-8")))
            except (ValueError, TypeError, OSError):
                self.passed = {}

    def run(self, kind: str, paths, settings, check: Callable[[], None], what: str) -> None:
        """``check()`` unless a check of ``kind`` on the same files (same size and mtime) and settings passed."""
        key = _key(kind, paths, settings)
        if key in self.passed:
            return
        check()
        self.passed[key] = what
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        from tecb.io import write_json

        write_json(self.passed, self.path)


def sha256_of(path, *, cache_dir) -> str:
    """SHA-256 of a file's content (a folder: of its files' names and contents), remembered under the file's path,
    size and mtime in ``cache_dir`` (so a run start hashes a large source once; ``None``: not remembered)."""
    path = Path(path)
    store = Path(cache_dir) / "sha256.json" if cache_dir is not None else None
    known = {}
    if store is not None and store.is_file():
        try:
            known = dict(json.loads(store.read_text(encoding="utf-8")))
        except (ValueError, TypeError, OSError):
            known = {}
    key = _key("sha256", path, None)
    if key in known:
        return known[key]
    from tecb.io import file_sha256

    if path.is_dir():
        total = hashlib.sha256()
        for p in sorted(q for q in path.rglob("*") if q.is_file()):
            total.update(f"{p.relative_to(path).as_posix()}\0{file_sha256(p)}\n".encode())
        digest = total.hexdigest()
    else:
        digest = file_sha256(path)
    if store is not None:
        from tecb.io import write_json

        write_json({**known, key: digest}, store)
    return digest


# --- what the planned run uses ---------------------------------------------------------------------------------


def used_sources(config: dict) -> dict[str, list[str]]:
    """``{source name: [dataset names]}`` of the sources the configured datasets build from."""
    out: dict[str, list[str]] = {}
    for name, dataset in (config.get("datasets") or {}).items():
        if isinstance(dataset, dict) and dataset.get("source") in (config.get("sources") or {}):
            out.setdefault(dataset["source"], []).append(name)
    return out


def used_algorithms(config: dict) -> list[str]:
    keys = [c.get("algorithm") for c in config.get("configurations") or [] if isinstance(c, dict)]
    return [k for k in dict.fromkeys(keys) if k in (config.get("algorithms") or {})]


def used_models(config: dict) -> list[str]:
    models = list(config.get("models") or {})
    if (config.get("pretrain") or {}).get("enabled"):
        models += [m for m in config["pretrain"].get("models", []) if m in (config.get("models") or {})]
    return list(dict.fromkeys(models))


# --- sources ---------------------------------------------------------------------------------------------------


def _paths(path) -> list[str]:
    return [str(p) for p in path] if isinstance(path, (list, tuple)) else [str(path)]


#: The dataset keys that decide how a custom file is read (part of the cache key of its check).
#: A custom dataset entry's keys that say how its file is read: the fields of :class:`tecb.data.sources.custom.Layout`
CUSTOM_SETTINGS = ("text_column", "label_column", "split_column", "format", "sep", "quoting")


def _check_custom(path, dataset: dict, name: str, source_name: str) -> None:
    """Read a custom file whole, with the build's own reader and the dataset's settings; then its labels."""
    from tecb.data.sources import custom

    key = f"datasets.{name} (source {source_name})"
    if Path(path).is_dir():
        raise PreflightError(f"{key}: {path} is a folder; a custom source is one TSV, CSV, Parquet or JSONL file")
    layout = custom.Layout(**{k: dataset[k] for k in CUSTOM_SETTINGS if dataset.get(k)})  # unset: the defaults
    text_column, label_column, split_column = layout.text_column, layout.label_column, layout.split_column
    try:
        texts, labels, splits = layout.read(path)
    except (ValueError, OSError) as err:
        msg = str(err)
        if "no column" in msg:
            named = [("text_column", text_column), ("label_column", label_column), ("split_column", split_column)]
            which = [f"datasets.{name}.{k}" for k, v in named if v is not None and f"no column {v!r}" in msg]
            msg += f"; set {' / '.join(which) or f'datasets.{name}.text_column / label_column'} to one of its columns"
        raise PreflightError(f"{key}: {msg}") from None
    if split_column is None:
        if len(set(labels)) < 2:
            raise PreflightError(
                f"{key}: {path}: column {label_column!r} has {len(set(labels))} distinct label(s) in {len(labels)} "
                "record(s); clustering needs at least two: check `label_column` or the file"
            )
        return
    groups: dict[str, set] = {}
    counts: dict[str, int] = {}
    for value, label in zip(splits, labels):
        groups.setdefault(value, set()).add(label)
        counts[value] = counts.get(value, 0) + 1
    for value in sorted(groups):
        if len(groups[value]) < 2 or counts[value] < 2:
            raise PreflightError(
                f"{key}: {path}: split {split_column}={value!r} has {counts[value]} record(s) and "
                f"{len(groups[value])} label(s); a clustering split needs at least two of each: check "
                f"`split_column` / `label_column` or the file"
            )


def _check_germeval(path, key: str) -> None:
    from tecb.data.sources import germeval

    try:
        source = germeval.read_blurbs_source(path)
    except (ValueError, OSError) as err:
        raise PreflightError(f"{key}: {err}") from None
    if not source.books:
        raise PreflightError(
            f"{key}: {path}: no labelled books in {', '.join(f.short for f in source.files) or 'any file'}; "
            "point the path to the GermEval 2019 Task 1 zip, or a folder with blurbs_train/dev/test.txt"
        )


def _check_sqlite(path, key: str) -> None:
    import sqlite3

    from tecb.data.sources import gnad

    p = Path(path)
    if p.is_dir():
        raise PreflightError(f"{key}: {path} is a folder; million_posts needs the corpus.sqlite3 file inside it")
    if not gnad.is_sqlite(p):
        raise PreflightError(
            f"{key}: {path} is not an SQLite database (it does not start with the SQLite header); million_posts "
            "needs corpus.sqlite3 of the One Million Posts corpus: delete it and download it again, or fix the path"
        )
    con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        con.execute(gnad.QUERY.split(" WHERE ")[0] + " LIMIT 1").fetchall()
    except sqlite3.DatabaseError as err:
        raise PreflightError(
            f"{key}: {path}: cannot read table Articles (ID_Article, Path, Title, Body) ({err}); is it the One "
            "Million Posts corpus.sqlite3? A damaged file: delete it and download it again"
        ) from None
    finally:
        con.close()


def _check_10kgnad(paths, key: str) -> None:
    from tecb.data.sources import gnad

    try:
        files, _ = gnad.csv_files(paths)
        for f in files:
            gnad.read_10kgnad_csv(f)
    except (ValueError, OSError) as err:
        raise PreflightError(f"{key}: {err}") from None


def _check_reddit(path, key: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tecb.data.sources.reddit import SUBMISSIONS_SCHEMA

    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException, ValueError) as err:
        raise PreflightError(
            f"{key}: {path}: cannot read as Parquet ({err}); the Reddit source needs the submissions.parquet the "
            "rehydration writes: delete a damaged file and rehydrate again, or fix the path"
        ) from None
    missing = [f.name for f in SUBMISSIONS_SCHEMA if f.name not in schema.names]
    required = [n for n in ("title", "selftext", "subreddit") if n in missing]
    if required:
        raise PreflightError(
            f"{key}: {path}: no column(s) {', '.join(required)} (columns: {', '.join(schema.names)}); the Reddit "
            "source needs the submissions.parquet written by the rehydrate_reddit rule"
        )


def _check_published(path, key: str) -> None:
    from tecb.data.sources import published

    try:
        published.read_splits(path)
    except (ValueError, OSError) as err:
        raise PreflightError(f"{key}: {err}") from None


#: builder -> check of its source file(s), ``check(path, key)``; custom files: :func:`_check_custom`.
SOURCE_CHECKS = {
    "germeval2019": _check_germeval,
    "million_posts": _check_sqlite,
    "10kgnad_csv": _check_10kgnad,
    "reddit": _check_reddit,
    "published": _check_published,
}


def source_problems(
    config: dict, produced: Callable[[str], bool], cache: Cache, source_paths: dict | None = None
) -> list[str]:
    """Problems of the sources the configured datasets use (see the module docstring)."""
    from tecb.data.datasets import BUILDERS, builder_of

    out = []
    sources = config.get("sources") or {}
    for source_name, dataset_names in used_sources(config).items():
        source = sources.get(source_name) or {}
        path = (source_paths or {}).get(source_name) or source.get("path")
        if not path:
            continue  # downloaded by a rule: checked once it exists
        key = f"sources.{source_name}.path"
        missing = [p for p in _paths(path) if not os.path.exists(p)]
        if missing:
            if all(produced(p) for p in missing):
                continue  # a rule of the workflow writes it (a download, the demo's inputs)
            gone = ", ".join(p for p in missing if not produced(p))
            out.append(
                f"{key}: {gone} does not exist (used by datasets {', '.join(dataset_names)}); fix the path "
                f"(a relative path starts at the working directory, {os.getcwd()})"
            )
            continue
        for name in dataset_names:
            dataset = config["datasets"][name]
            builder = builder_of(source_name, source, dataset)
            if builder not in BUILDERS:
                continue  # tecb.configcheck.builder_errors
            if builder == "custom":
                settings = {k: dataset.get(k) for k in CUSTOM_SETTINGS}
                check = partial(_check_custom, path, dataset, name, source_name)
            elif builder in SOURCE_CHECKS:
                settings, check = None, partial(SOURCE_CHECKS[builder], path, key)
            else:
                continue
            try:
                cache.run(builder, _paths(path), settings, check, f"datasets.{name}")
            except PreflightError as err:
                if str(err) not in out:
                    out.append(str(err))
    return out


# --- local models ----------------------------------------------------------------------------------------------


def _transformer_folder(folder: Path) -> Path:
    """The folder holding config.json: the model itself, or a sentence-transformers model's Transformer module."""
    modules = folder / "modules.json"
    if modules.is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ValueError(f"{modules}: not valid JSON ({err})") from None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and str(entry.get("type", "")).endswith("Transformer"):
                sub = folder / str(entry.get("path", ""))
                if (sub / "config.json").is_file() or not (folder / "config.json").is_file():
                    return sub
    return folder


def check_local_model(path, key: str) -> None:
    """A ``kind: local`` model folder: weights and a ``config.json`` with the right types; errors name the file."""
    folder = Path(path)
    if not folder.exists():
        raise PreflightError(f"{key}: {path} does not exist; set it to your model's folder")
    if not folder.is_dir():
        raise PreflightError(f"{key}: {path} is a file; set it to the model's folder (config.json, weights, tokenizer)")
    try:
        inner = _transformer_folder(folder)
    except ValueError as err:
        raise PreflightError(f"{key}: {err}") from None
    config_file = inner / "config.json"
    if not config_file.is_file():
        raise PreflightError(
            f"{key}: {path}: no config.json{' in ' + str(inner) if inner != folder else ''}; a local model is a "
            "folder saved by save_pretrained (Hugging Face) or SentenceTransformer.save"
        )
    try:
        cfg = json.loads(config_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise PreflightError(f"{key}: {config_file}: not valid JSON ({err}); save the model again") from None
    if not isinstance(cfg, dict):
        raise PreflightError(f"{key}: {config_file}: expected a JSON object")
    for name in CONFIG_REQUIRED:
        if not isinstance(cfg.get(name), str):
            raise PreflightError(f"{key}: {config_file}: field {name!r} is missing or not a string")
    for name in CONFIG_INTS:
        value = cfg.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise PreflightError(
                f"{key}: {config_file}: field {name!r} must be an integer, got a {type(value).__name__}; "
                "fix config.json or save the model again"
            )
    weights = [n for n in WEIGHT_FILES if (inner / n).is_file()]
    if not weights:
        raise PreflightError(
            f"{key}: {path}: no weights ({' or '.join(WEIGHT_FILES[:2])}) in {inner}; the folder is incomplete: "
            "copy the model's weight file(s) into it"
        )
    for name in weights:
        if (inner / name).stat().st_size == 0:
            raise PreflightError(f"{key}: {inner / name} is empty; copy the weights again")
    if "model.safetensors" in weights:
        _check_safetensors(inner / "model.safetensors", key)


def _check_safetensors(path: Path, key: str) -> None:
    """The safetensors header (8-byte length + JSON) is readable and the file holds all the data it declares."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        raw = fh.read(8)
        n = int.from_bytes(raw, "little") if len(raw) == 8 else -1
        ok = 0 < n <= size - 8
        header = fh.read(n) if ok else b""
    try:
        meta = json.loads(header) if ok else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise PreflightError(f"{key}: {path}: not a safetensors file (unreadable header); copy the weights again")
    end = max((int(v["data_offsets"][1]) for k, v in meta.items() if k != "__metadata__"), default=0)
    if 8 + n + end > size:
        raise PreflightError(
            f"{key}: {path}: truncated ({size} bytes, the header declares {8 + n + end}); copy the weights again"
        )


def model_problems(config: dict, cache: Cache) -> list[str]:
    out = []
    for model in used_models(config):
        spec = config["models"][model]
        if not isinstance(spec, dict) or spec.get("kind", "huggingface") != "local" or not spec.get("path"):
            continue
        key = f"models.{model}.path"
        path = spec["path"]
        try:
            if not os.path.exists(path):
                check_local_model(path, key)
            cache.run("local_model", [path], None, lambda p=path, k=key: check_local_model(p, k), key)
        except PreflightError as err:
            out.append(str(err))
    return out


# --- every model kind's paths and names (issue 44) ---------------------------------------------------------------

#: kinds whose `distill_from` model key may be a source of a static model (the transformers)
DISTILLABLE_KINDS = TRANSFORMER_KINDS


def _path_problem(key: str, path, *, want: str, what: str) -> str | None:
    """``None`` when ``path`` is a ``want`` ("folder", "file" or "path": either) that is not empty, else the message."""
    p = Path(str(path))
    if not p.exists():
        return f"{key}: {path} does not exist; set it to {what}"
    if want == "folder" and not p.is_dir():
        return f"{key}: {path} is a file; set it to {what}"
    if want == "file" and p.is_dir():
        return f"{key}: {path} is a folder; set it to {what}"
    if p.is_dir() and not any(f.is_file() for f in p.rglob("*")):
        return f"{key}: {path} is an empty folder; set it to {what}"
    return None


def model_entry_problems(config: dict, *, produced: Callable[[str], bool]) -> list[str]:
    """What each model of every kind names, checked before any job: a hub ``id`` of the right form (huggingface),
    the ``path`` of ``mteb`` and ``static`` models and the files of ``precomputed`` ones, a ``distill_from`` that is
    a transformer model's key or an existing folder, a ``python`` object that imports (not for a model with its
    own ``env``). ``kind: local`` folders are :func:`model_problems`'; paths a rule writes (``produced``) are skipped.
    """
    from tecb.embed.hub import REPO_ID
    from tecb.embed.spec import check_python_object

    models = config.get("models") or {}
    out: list[str] = []
    for model in used_models(config):
        spec = models[model]
        if not isinstance(spec, dict):
            continue
        kind, key = spec.get("kind", "huggingface"), f"models.{model.split('@')[0]}"  # variants: their model's key
        checks = []  # (config key, path, folder/file/path, what it should be)
        if kind == "huggingface" and isinstance(spec.get("id"), str) and not REPO_ID.match(spec["id"]):
            out.append(f"{key}.id: {spec['id']!r} is not a Hugging Face id (owner/name); for a folder use kind: local")
        if kind == "mteb" and spec.get("path"):
            what = f"the folder of {spec.get('name')}'s weights, or remove `path` to prefetch mteb's revision"
            checks.append((f"{key}.path", spec["path"], "path", what))
        if kind == "static" and spec.get("path"):
            checks.append((f"{key}.path", spec["path"], "folder", "a static model's folder (model2vec)"))
        if kind == "precomputed":
            for name in ("path", "texts"):
                if spec.get(name):
                    checks.append((f"{key}.{name}", spec[name], "file", "the file of vectors made elsewhere"))
        source = spec.get("distill_from") if kind == "static" else None
        if isinstance(source, str) and source in models:
            source_kind = (models[source] or {}).get("kind", "huggingface")
            if source_kind not in DISTILLABLE_KINDS:
                out.append(f"{key}.distill_from: {source!r} is a model of kind {source_kind}, not a transformer")
        elif isinstance(source, str):
            what = f"a transformer model's folder, or one of the models' keys ({', '.join(models)})"
            checks.append((f"{key}.distill_from", source, "folder", what))
        for name, path, want, what in checks:
            problem = None if produced(str(path)) else _path_problem(name, path, want=want, what=what)
            out += [problem] if problem else []
        if kind == "python" and not spec.get("env") and spec.get("object"):
            try:
                check_python_object(model, spec)
            except ValueError as err:
                out.append(str(err))
    return list(dict.fromkeys(out))  # a model's prompt variants ({model}@{variant}) share its keys


# --- import-path algorithms ------------------------------------------------------------------------------------

_TRIAL_POINTS = 24


def check_clusterer(key: str, spec: dict) -> None:
    """An import-path ``method`` must be a clusterer: ``fit_predict``, or ``fit`` that sets ``labels_`` (tried on
    a tiny seeded sample when the class has no ``fit_predict``)."""
    import inspect

    from tecb.cluster.algorithms import METHODS, resolve_method

    method = spec.get("method")
    if not isinstance(method, str) or method in METHODS:
        return
    where = f"algorithms.{key}.method = {method}"
    try:
        cls = resolve_method(method)
    except ValueError as err:
        raise PreflightError(f"{where}: {err}") from None
    if hasattr(cls, "fit_predict"):
        return
    kind = getattr(cls, "_estimator_type", None)
    if not hasattr(cls, "fit"):
        raise PreflightError(f"{where}: not a clusterer (no fit_predict, no fit); name a clustering estimator class")
    import numpy as np

    params = dict(spec.get("params") or {})
    names = set(inspect.signature(cls.__init__).parameters)
    if "n_clusters" in names:
        params["n_clusters"] = 2
    if "random_state" in names:
        params["random_state"] = 0
    x = np.random.default_rng(0).normal(size=(_TRIAL_POINTS, 2)) + np.repeat([[0, 0], [5, 5]], _TRIAL_POINTS // 2, 0)
    try:
        estimator = cls(**params)
        estimator.fit(x)
    except Exception as err:  # noqa: BLE001 - any failure of a user's class is reported, named
        if kind == "clusterer":
            return
        raise PreflightError(
            f"{where}: has no fit_predict, and fitting it on {_TRIAL_POINTS} sample points failed "
            f"({type(err).__name__}: {err}); is it a clustering estimator?"
        ) from None
    labels = getattr(estimator, "labels_", None)
    if labels is None or len(np.asarray(labels)) != _TRIAL_POINTS:
        what = f" (a {kind})" if kind else ""
        raise PreflightError(
            f"{where}: not a clusterer{what}: it has no fit_predict and its fit() sets no labels_; name a "
            "clustering estimator class (e.g. sklearn.cluster.SpectralClustering)"
        )


def algorithm_problems(config: dict, cache: Cache) -> list[str]:
    out = []
    for key in used_algorithms(config):
        spec = config["algorithms"][key]
        if not isinstance(spec, dict):
            continue
        try:
            cache.run(
                "clusterer",
                [],
                [spec.get("method"), spec.get("params")],
                lambda k=key, s=spec: check_clusterer(k, s),
                key,
            )
        except PreflightError as err:
            out.append(str(err))
    return out


# --- all together ----------------------------------------------------------------------------------------------


def preflight_problems(
    config: dict,
    *,
    produced: Callable[[str], bool],
    cache_dir: str | os.PathLike | None,
    source_paths: dict | None = None,
) -> list[str]:
    """Every problem of what ``config`` (validated, defaults filled in) points to; ``[]`` when all is well.

    ``produced(path)`` says whether a rule of the workflow writes ``path`` (a missing such file is not an error);
    ``source_paths`` overrides where a source's file is (the workflow's download targets); ``cache_dir`` holds the
    cache of passed checks (``None``: no cache).
    """
    cache = Cache(cache_dir)
    out = source_problems(config, produced, cache, source_paths)
    out += model_problems(config, cache)
    out += model_entry_problems(config, produced=produced)
    out += algorithm_problems(config, cache)
    try:
        cache.save()
    except OSError:
        pass  # a read-only working directory: checks run again next time
    return out


def run_preflight(config: dict, **kwargs) -> None:
    """:func:`preflight_problems`, raised as one :class:`PreflightError` listing them all."""
    problems = preflight_problems(config, **kwargs)
    if problems:
        raise PreflightError(
            "preflight (before any job): what the config points to cannot be used:\n  "
            + "\n  ".join(p.replace("\n", "\n  ") for p in problems)
        )


def source_fingerprint(path, *, cache_dir) -> dict:
    """``{path: sha256}`` of a source's file(s) (a folder: of its files), for the build rule's params: replacing
    the file or editing the path rebuilds the dataset, whatever the file's modification time."""
    return {str(p): sha256_of(p, cache_dir=cache_dir) for p in _paths(path)}
