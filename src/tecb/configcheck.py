"""Config checks at startup: credentials, the JSON schema (defaults filled in), method parameters and every
reference of one section to another. The one room where the config is validated: the workflow's Snakefile calls
:func:`workflow_config` before any rule is defined, and its ``.smk`` files check nothing (tests/test_configcheck.py).

Every message names the offending key as a dotted path (``algorithms.kmeans.params.n_int``) and never
prints a value that could be a credential: unlike ``snakemake.utils.validate``, whose message dumps the
failing part of the config (``On instance['sources']['reddit']: {... 'client_secret': ...}``), a schema
error here shows key names, expected types and allowed values only.

Run it by hand on a config file (a YAML syntax error shows the file, line and column)::

    python -m tecb.configcheck my.yaml            # checked over the defaults, as snakemake would merge it
"""

from __future__ import annotations

import copy
import difflib
import functools
import os
import re
import sys
from pathlib import Path

import yaml

from tecb.config import ConfigError, layered_config, load_yaml

# --- credentials ---------------------------------------------------------------------------------

_SECRET_WORDS = {
    "token",
    "tokens",
    "pwd",
    "pass",
    "passwd",
    "apikey",
    "clientid",
    "credential",
    "credentials",
    "passphrase",
    "cookie",
    "cookies",
    "username",
    "authorization",
    "bearer",
    "jwt",
}
_SECRET_PAIRS = {"clientid", "apikey", "accesskey", "privatekey", "secretkey"}  # two words: ``hf_api_key``
_SECRET_KEYS = {"auth", "oauth"}  # only as the whole name (``oauth_url`` is an address)


def looks_like_credential(key) -> bool:
    """Whether a config key's name says it holds a credential (``client_secret``, ``password``, ``api_key``,
    ``praw-client-id``, ...): judged by its words (split at ``_``, ``-``, ``.``, ...), never by its value."""
    name = str(key).lower()
    words = [w for w in re.split(r"[^a-z0-9]+", name) if w]
    pairs = {a + b for a, b in zip(words, words[1:])}
    return (
        "_".join(words) in _SECRET_KEYS
        or any(w in _SECRET_WORDS for w in words)
        or bool(pairs & _SECRET_PAIRS)
        or any("secret" in w or "passw" in w for w in words)
    )


def credential_keys(config, parts: tuple = ()) -> list[str]:
    """Dotted paths of every key, at any depth, whose name looks like a credential."""
    found = []
    if isinstance(config, dict):
        for key, value in config.items():
            if looks_like_credential(key):
                found.append(_dotted(parts + (str(key),)))
            else:
                found += credential_keys(value, parts + (str(key),))
    elif isinstance(config, list):
        for i, value in enumerate(config):
            found += credential_keys(value, parts + (i,))
    return found


def check_credentials(config) -> None:
    keys = credential_keys(config)
    if keys:
        raise ConfigError(
            "credentials do not belong in the config (it is copied into logs, job scripts and provenance): remove "
            + ", ".join(keys)
            + " (value not shown). Reddit credentials go in praw.ini or the praw_client_id / "
            "praw_client_secret environment variables (README: Reddit)."
        )


# --- JSON schema ---------------------------------------------------------------------------------


def _dotted(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _shown(instance, path: str = "") -> str:
    """How a value may appear in a message: numbers, booleans and null as they are; a string never (a
    credential may sit under any key, misspelt or not), only its type and length; containers by their keys."""
    if isinstance(instance, bool) or instance is None or isinstance(instance, (int, float)):
        return repr(instance)
    if isinstance(instance, str):
        return f"a string of {len(instance)} characters"
    if isinstance(instance, dict):
        return f"a mapping with keys {', '.join(map(str, instance))}" if instance else "an empty mapping"
    if isinstance(instance, list):
        return f"a list of {len(instance)} item(s)"
    return f"a {type(instance).__name__}"


def _schema_message(error) -> str:
    path = _dotted(error.absolute_path)
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = sorted(error.schema.get("properties", {}))
        lines = []
        for key in instance:
            if key in known or any(re.search(p, key) for p in error.schema.get("patternProperties", {})):
                continue
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            where = f"{path}.{key}" if error.absolute_path else str(key)
            lines.append(f"{where}: unknown key{hint}; known keys here: {', '.join(known)}")
        return "\n".join(lines)
    if "propertyNames" in error.schema_path:  # the instance is a key's name (a name, not a value): shown
        return f"{path}: {error.message}"
    if error.validator == "type":
        return f"{path}: expected {error.validator_value}, got {_shown(instance, path)}"
    if error.validator == "enum":
        return f"{path}: must be one of {', '.join(map(repr, error.validator_value))}; got {_shown(instance, path)}"
    message = error.message
    raw = repr(instance)
    if raw in message:
        message = message.replace(raw, _shown(instance, path))
    elif not isinstance(instance, (bool, int, float, type(None))):
        message = f"{_shown(instance, path)} is not valid here ({error.validator}: {error.validator_value!r})"
    return f"{path}: {message}"


def _validator_with_defaults(schema):
    """The schema's validator, filling in ``default`` values as it goes (as snakemake's ``validate`` does)."""
    from jsonschema import validators

    base = validators.validator_for(schema)
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(base, {"properties": set_defaults})(schema)


def schema_errors(config: dict, schema: dict) -> tuple[dict, list[str]]:
    """``(config with defaults, messages)``: the config is copied, never modified."""
    filled = copy.deepcopy(config)
    messages = []
    for error in sorted(_validator_with_defaults(schema).iter_errors(filled), key=lambda e: list(map(str, e.path))):
        message = _schema_message(error)
        if message and message not in messages:
            messages.append(message)
    return filled, messages


# --- method parameters ---------------------------------------------------------------------------

#: Constructor keywords of the built-in methods' estimators (checked against the installed packages
#: by tests/test_configcheck.py), minus what tecb sets itself.
ALGORITHM_PARAMS = {
    "minibatch_kmeans": (
        "sklearn.cluster.MiniBatchKMeans",
        frozenset(
            {
                "batch_size",
                "compute_labels",
                "init",
                "init_size",
                "max_iter",
                "max_no_improvement",
                "n_init",
                "reassignment_ratio",
                "tol",
                "verbose",
            }
        ),
    ),
    "agglomerative": (
        "sklearn.cluster.AgglomerativeClustering",
        frozenset(
            {
                "compute_distances",
                "compute_full_tree",
                "connectivity",
                "distance_threshold",
                "linkage",
                "memory",
                "metric",
            }
        ),
    ),
    "hdbscan": (
        "hdbscan.HDBSCAN",
        frozenset(
            {
                "algorithm",
                "allow_single_cluster",
                "alpha",
                "approx_min_span_tree",
                "branch_detection_data",
                "cluster_selection_epsilon",
                "cluster_selection_epsilon_max",
                "cluster_selection_method",
                "cluster_selection_persistence",
                "core_dist_n_jobs",
                "gen_min_span_tree",
                "leaf_size",
                "match_reference_implementation",
                "max_cluster_size",
                "memory",
                "metric",
                "min_cluster_size",
                "min_samples",
                "p",
                "prediction_data",
            }
        ),
    ),
    "dbstream": (
        "river.cluster.DBSTREAM",
        frozenset(
            {"cleanup_interval", "clustering_threshold", "fading_factor", "intersection_factor", "minimum_weight"}
        ),
    ),
}
#: Set by tecb, not by the config: the number of clusters (labels of the split) and the seed.
SET_BY_TECB = {
    "n_clusters": "the number of labels of each split",
    "random_state": "the config's `seed`",
    "seed": "the config's top-level `seed`",
}

#: ``umap.UMAP`` keywords a reduction may set (n_components and metric are keys of the reduction itself).
UMAP_PARAMS = frozenset(
    {
        "a",
        "angular_rp_forest",
        "b",
        "dens_frac",
        "dens_lambda",
        "dens_var_shift",
        "densmap",
        "disconnection_distance",
        "force_approximation_algorithm",
        "init",
        "learning_rate",
        "local_connectivity",
        "low_memory",
        "metric_kwds",
        "min_dist",
        "n_epochs",
        "n_jobs",
        "n_neighbors",
        "negative_sample_rate",
        "output_dens",
        "output_metric",
        "output_metric_kwds",
        "precomputed_knn",
        "repulsion_strength",
        "set_op_mix_ratio",
        "spread",
        "target_metric",
        "target_metric_kwds",
        "target_n_neighbors",
        "target_weight",
        "tqdm_kwds",
        "transform_mode",
        "transform_queue_size",
        "transform_seed",
        "unique",
        "verbose",
    }
)
REDUCTION_KEYS = {
    "pca": {"method", "n_components"},
    "umap": {"method", "n_components", "metric"},
    "pca_umap": {"method", "n_components", "metric", "pca_components"},
}


def _unknown(where: str, keys, known, owner: str) -> list[str]:
    out = []
    for key in keys:
        if key in known:
            continue
        if key in SET_BY_TECB:
            out.append(f"{where}.{key}: set by tecb ({SET_BY_TECB[key]}), not in the config")
            continue
        close = difflib.get_close_matches(str(key), sorted(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        out.append(f"{where}.{key}: {owner} has no parameter {key!r}{hint}; it takes: {', '.join(sorted(known))}")
    return out


def parameter_errors(config: dict) -> list[str]:
    """Unknown parameters of built-in algorithms and of reductions; what tecb sets, on import-path algorithms too
    (their other parameters are checked against the class: ``tecb.cluster.algorithms.validate_algorithm``)."""
    out = []
    for key, spec in (config.get("algorithms") or {}).items():
        if isinstance(spec, dict) and isinstance(spec.get("method"), str) and spec["method"] not in ALGORITHM_PARAMS:
            for name in spec.get("params") or {}:
                if name in SET_BY_TECB:
                    out.append(
                        f"algorithms.{key}.params.{name}: set by tecb ({SET_BY_TECB[name]}) for every method, "
                        f"{spec['method']} included; remove it from params"
                    )
        if not isinstance(spec, dict) or spec.get("method") not in ALGORITHM_PARAMS:
            continue
        owner, known = ALGORITHM_PARAMS[spec["method"]]
        out += _unknown(f"algorithms.{key}.params", (spec.get("params") or {}).keys(), known, owner)
    for key, spec in (config.get("reductions") or {}).items():
        if not isinstance(spec, dict) or spec.get("method") not in REDUCTION_KEYS:
            continue
        method = spec["method"]
        known = REDUCTION_KEYS[method] | (UMAP_PARAMS if method != "pca" else set())
        owner = "pca (sklearn PCA, only n_components)" if method == "pca" else f"{method} (umap.UMAP)"
        out += _unknown(f"reductions.{key}", spec.keys(), known, owner)
    return out


# --- keys that do not apply ---------------------------------------------------------------------


def model_kind_errors(config: dict) -> list[str]:
    """Keys of ``models.<key>`` that its kind does not use (``prompt`` on ``tfidf``): refused, not ignored."""
    from tecb.embed.spec import KIND_KEYS

    out = []
    for key, spec in (config.get("models") or {}).items():
        if not isinstance(spec, dict):
            continue
        kind = spec.get("kind", "huggingface")
        allowed = KIND_KEYS.get(kind)
        if allowed is None:
            continue  # an unknown kind is the schema's error
        for name in spec:
            if name in ("name", "kind") or name in allowed or spec[name] is None:
                continue
            users = [k for k, keys in KIND_KEYS.items() if name in keys]
            where = f" (it applies to kind {', '.join(users)})" if users else ""
            out.append(
                f"models.{key}.{name}: does not apply to kind {kind}{where}; remove it or change `kind`. "
                f"Kind {kind!r} takes: {', '.join(sorted(set(allowed) | {'name', 'kind'}))}"
            )
    return out


def mteb_model_errors(config: dict) -> list[str]:
    """``kind: mteb`` entries checked against mteb's registry before any job: a name mteb does not know (with the
    closest names), a dataset without an mteb task (tecb.embed.mteb_model.entry_errors). Imports mteb only when the
    config has such a model."""
    models = {k: s for k, s in (config.get("models") or {}).items() if isinstance(s, dict) and s.get("kind") == "mteb"}
    if not models:
        return []
    try:
        from tecb.embed.mteb_model import entry_errors
    except ImportError as error:
        return [f"models.{next(iter(models))}: kind mteb needs the mteb package ({error}); pip install mteb"]
    datasets = list(config.get("datasets") or {})
    return [message for key, spec in models.items() for message in entry_errors(key, spec, datasets)]


def builder_errors(config: dict) -> list[str]:
    """A dataset whose source names no builder: a file of your own needs ``builder: custom`` on its source."""
    from tecb.data.datasets import BUILDERS, builder_of
    from tecb.data.sources.custom import FORMATS

    out = []
    sources = config.get("sources") or {}
    for name, dataset in (config.get("datasets") or {}).items():
        if not isinstance(dataset, dict) or dataset.get("source") not in sources:
            continue  # an unknown source: dataset_reference_errors names it
        source_name = dataset["source"]
        source = sources.get(source_name) or {}
        builder = builder_of(source_name, source, dataset)
        if builder in BUILDERS:
            continue
        path = source.get("path")
        suffix = Path(path).name.lower().removesuffix(".gz") if isinstance(path, str) else ""
        custom = Path(suffix).suffix in FORMATS
        hint = (
            f"for a file of your own (here {path}) add `builder: custom` to sources.{source_name}"
            if custom or any(k in dataset for k in ("text_column", "label_column", "split_column"))
            else f"set `builder:` on sources.{source_name} to one of {', '.join(BUILDERS)}"
        )
        out.append(
            f"sources.{source_name}: has no `builder` and {source_name!r} is not a builder's name "
            f"(datasets.{name} uses it); {hint}"
        )
    return out


# --- constraints between keys (issue 46) ---------------------------------------------------------------------


#: ``(smallest, largest)`` keys of a dataset's split recipe, with the builders' defaults (``tecb.data.datasets``)
RANGE_KEYS = (("min_fraction", "max_fraction", 0.1, 1.0), ("min_subreddits", "max_subreddits", 10, 50))
#: config keys naming a folder tecb creates (``embed.cache_dir``, ``cluster.numba_cache``): never a file
FOLDER_KEYS = (("embed", "cache_dir"), ("cluster", "numba_cache"))


def cross_key_errors(config: dict) -> list[str]:
    """What the schema cannot say about one key alone, each named by its dotted key, before any job: a split
    recipe's smallest above its largest (``min_fraction`` > ``max_fraction``, with the defaults where one is not
    given), the same configuration (or seed) listed twice, and a folder key naming an existing regular file."""
    out = []
    for name, dataset in (config.get("datasets") or {}).items():
        if not isinstance(dataset, dict):
            continue
        for low_key, high_key, low_default, high_default in RANGE_KEYS:
            if low_key not in dataset and high_key not in dataset:
                continue
            low, high = dataset.get(low_key, low_default), dataset.get(high_key, high_default)
            if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
                out.append(
                    f"datasets.{name}.{low_key}: {low} is larger than {high_key} {high}"
                    f"{'' if high_key in dataset else ' (its default)'}; the smallest split cannot exceed the largest"
                )
    seen = {}
    for i, entry in enumerate(config.get("configurations") or []):
        if not isinstance(entry, dict):
            continue
        pair = (entry.get("algorithm"), entry.get("reduction"))
        if pair in seen:
            out.append(
                f"configurations[{i}]: the same algorithm and reduction as configurations[{seen[pair]}] (listed "
                "twice: the tables would hold it twice); remove one"
            )
        seen.setdefault(pair, i)
    for section in ("pretrain", "adapt"):
        seeds = (config.get(section) or {}).get("seeds")
        if isinstance(seeds, list) and len(set(map(str, seeds))) != len(seeds):
            twice = sorted({str(s) for s in seeds if seeds.count(s) > 1})
            out.append(f"{section}.seeds: {', '.join(twice)} listed twice; remove the repeats")
    out += unlabelled_errors(config) + random_head_errors(config)
    for section, key in FOLDER_KEYS:
        path = (config.get(section) or {}).get(key)
        if isinstance(path, str) and path and os.path.exists(path) and not os.path.isdir(path):
            out.append(f"{section}.{key}: names an existing file, not a folder; name a folder (tecb creates it)")
    return out


def random_head_errors(config: dict) -> list[str]:
    """``adapt.methods.random_head`` (a control) adds the head cob and triplet start from only where its
    ``projection_dim`` is theirs."""
    adapt = config.get("adapt") or {}
    methods = adapt.get("methods") or {}
    if not adapt.get("enabled") or not isinstance(methods.get("random_head"), dict):
        return []
    width = methods["random_head"].get("projection_dim", 256)
    return [
        f"adapt.methods.random_head.projection_dim = {width} is not adapt.methods.{m}.projection_dim = "
        f"{methods[m]['projection_dim']}: the control must add the head {m} starts from; set them equal"
        for m in ("cob", "triplet")
        if isinstance(methods.get(m), dict) and methods[m].get("projection_dim", width) != width
    ]


def unlabelled_errors(config: dict) -> list[str]:
    """``pretrain.unlabelled`` names datasets that pre-training runs and that are built from GermEval 2019 blurbs
    (the one source with an unlabelled file)."""
    from tecb.data.datasets import builder_of

    pretrain, datasets = config.get("pretrain") or {}, config.get("datasets") or {}
    trained = pretrain.get("datasets") or list(datasets)
    out = []
    for name in pretrain.get("unlabelled") or {}:
        dataset = datasets.get(name)
        if not isinstance(dataset, dict):
            out.append(f"pretrain.unlabelled.{name}: not a key of `datasets`")
        elif name not in trained:
            out.append(f"pretrain.unlabelled.{name}: not in pretrain.datasets ({', '.join(trained)})")
        elif (
            builder_of(dataset.get("source"), (config.get("sources") or {}).get(dataset.get("source")), dataset)
            != "germeval2019"
        ):
            out.append(
                f"pretrain.unlabelled.{name}: only datasets built from GermEval 2019 blurbs have unlabelled books"
            )
    return out


# --- references between sections: what the workflow's rules rely on (issue 45: validation in one room) ---------

#: sources a rule downloads (or rehydrates) when the config gives no `path`: the workflow's DOWNLOADS and Reddit
DOWNLOADED_SOURCES = ("germeval2019", "million_posts", "reddit")


def _raised(check, *args) -> list[str]:
    """The message of a library check that raises ``ValueError`` (without its ``config:`` prefix), or none."""
    try:
        check(*args)
    except ValueError as error:
        return [str(error).removeprefix("config: ")]
    return []


def dataset_reference_errors(config: dict) -> list[str]:
    """A dataset's source: a key of `sources`, with a path or something to download, whose keys and the dataset's
    apply to its builder (``tecb.data.datasets.check_entry``, ``check_source``)."""
    from tecb.data.datasets import BUILDERS, builder_of, check_entry, check_source

    out = []
    sources = config["sources"]
    for name, dataset in config["datasets"].items():
        source_name = dataset["source"]
        if source_name not in sources:
            out.append(f"datasets.{name}.source names no key of `sources` (known: {', '.join(sources)})")
            continue
        source = sources[source_name] or {}
        builder = builder_of(source_name, source, dataset)
        if builder not in BUILDERS:
            continue  # builder_errors names it
        out += _raised(check_entry, name, dataset, builder) + _raised(check_source, source_name, source, builder)
        fetched = source.get("repo_id") or builder == "published" or source_name.startswith("published_")
        if not source.get("path") and not fetched and source_name not in DOWNLOADED_SOURCES:
            out.append(f"sources.{source_name} has no `path` and nothing to download (datasets.{name} uses it)")
    return list(dict.fromkeys(out))


def configuration_errors(config: dict) -> list[str]:
    """Configurations naming an algorithm or reduction that is not configured; every algorithm's method (an
    import path: an importable class taking its params, ``tecb.cluster.algorithms.validate_algorithm``)."""
    from tecb.cluster.algorithms import validate_algorithm

    out = []
    for entry in config["configurations"]:
        algorithm, reduction = entry["algorithm"], entry["reduction"]
        if algorithm not in config["algorithms"]:
            out.append(f"configuration ({algorithm}, {reduction}) names an unknown algorithm")
        if reduction != "none" and reduction not in config["reductions"]:
            out.append(f"configuration ({algorithm}, {reduction}) names an unknown reduction")
    for key, spec in config["algorithms"].items():
        out += _raised(validate_algorithm, key, spec)
    return out


def model_entry_errors(config: dict) -> list[str]:
    """Keys a model's kind needs (``tecb.embed.spec.model_key_errors``: `id` of a hub model, `path` of a local
    one, ...); the keys it does not take are :func:`model_kind_errors`'."""
    from tecb.embed.spec import model_key_errors

    return [
        message
        for key, spec in config["models"].items()
        for message in model_key_errors(key, spec)
        if "does not apply to kind" not in message and "is not one of" not in message
    ]


def _run_models(config: dict) -> list[str]:
    """The model keys of the run: `{model}@{variant}` for a model with `prompt_variants` (as the workflow runs it)."""
    from tecb.embed.spec import expand_prompt_variants

    try:
        return list(expand_prompt_variants(config["models"]))
    except ValueError:
        return list(config["models"])  # prompt_variant_errors names it


def training_errors(config: dict, section: str) -> list[str]:
    """`pretrain` and `adapt` (when enabled): their models are configured transformer checkpoints
    (``tecb.embed.spec.TRANSFORMER_KINDS``), their datasets and algorithm configured; pre-training's algorithm has
    its raw-embedding configuration (the baseline)."""
    from tecb.embed.spec import TRANSFORMER_KINDS

    settings = config[section]
    if not settings.get("enabled"):
        return []
    out, models = [], _run_models(config)
    for model in settings["models"]:
        if model not in models:
            out.append(f"{section}.models names {model!r}, not a key of `models`")
        elif config["models"][model.split("@")[0]]["kind"] not in TRANSFORMER_KINDS:
            out.append(f"{section}.models.{model} must be a transformer checkpoint ({', '.join(TRANSFORMER_KINDS)})")
    out += [
        f"{section}.datasets names {d!r}, not a key of `datasets`"
        for d in settings["datasets"] or []
        if d not in config["datasets"]
    ]
    algorithm = settings["algorithm"]
    configurations = [(c["algorithm"], c["reduction"]) for c in config["configurations"]]
    if section == "pretrain" and (algorithm, "none") not in configurations:
        out.append(f"pretrain.algorithm = {algorithm!r} needs the configuration ({algorithm}, none) for its baseline")
    if section == "adapt" and algorithm not in config["algorithms"]:
        out.append(f"adapt.algorithm = {algorithm!r} is not a key of `algorithms`")
    return out + (adapt_protocol_errors(config) if section == "adapt" else [])


def adapt_protocol_errors(config: dict) -> list[str]:
    """`adapt`'s protocol: lodo needs a dataset to train on besides the evaluated one; argue's reply objective a
    configured forum source; at least one method."""
    from tecb.adapt.protocol import variants_of

    adapt, out = config["adapt"], []
    protocol = adapt["protocol"]
    if not adapt["methods"] and not adapt["frozen"]["arms"]:
        return ["adapt.methods is empty (and adapt.frozen.arms too: nothing to run)"]
    variants = {
        v for m in adapt["methods"] for v in variants_of(m, protocol["supervised"], protocol["argue_objectives"])
    }
    for dataset in adapt["datasets"] or config["datasets"]:
        if "lodo" in variants and not [d for d in config["datasets"] if d != dataset]:
            out.append(
                f"adapt.protocol.supervised has lodo, but no dataset other than {dataset} is configured to train on"
            )
    out += argue_companion_errors(config)
    out += [
        f"adapt.frozen.models names {m!r}, not a key of `models`"
        for m in adapt["frozen"]["models"] or []
        if m.split("@")[0] not in config["models"]
    ]
    if "title_blurb_ridge" in adapt["frozen"]["arms"] or "title_blurb_infonce" in adapt["frozen"]["arms"]:
        source = adapt["frozen"]["pairs_source"]
        if source not in config.get("sources", {}) or not any(
            e.get("source") == source for e in config["datasets"].values()
        ):
            out.append(
                f"adapt.frozen.arms has a title->blurb arm, but adapt.frozen.pairs_source = {source!r} is not a "
                "configured source of a configured dataset (its unlabelled books give the pairs)"
            )
    reply = protocol["reply_source"]
    if "argue" in adapt["methods"] and "reply" in protocol["argue_objectives"] and reply not in config["sources"]:
        out.append(
            "adapt.protocol.argue_objectives lists reply (one argue model trained on the forum's reply graph), but "
            f"adapt.protocol.reply_source = {reply!r} is not a configured source (a One Million Posts "
            "corpus.sqlite3); configure it or leave reply out"
        )
    return out


def _text_kind(name: str, entry: dict) -> str:
    """A dataset's text kind: its config's ``text``, else its name's ending (``...S2S`` / ``...P2P``)."""
    kind = str(entry.get("text") or "").lower()
    return kind or ("p2p" if name.upper().endswith("P2P") else "s2s" if name.upper().endswith("S2S") else "")


def argue_companion_errors(config: dict) -> list[str]:
    """argue's similarity objective pairs a title with the rest of its own text (its blurb or article): on an S2S
    dataset (titles alone) that rest comes from a companion, a configured P2P dataset of the same source; without
    one the pairs are cut from the few titles of two sentences (a replaced `datasets` dropped it silently)."""
    adapt = config["adapt"]
    if "argue" not in adapt["methods"] or "similarity" not in adapt["protocol"]["argue_objectives"]:
        return []
    datasets = config["datasets"]
    out = []
    for name in adapt["datasets"] or datasets:
        entry = datasets.get(name) or {}
        if _text_kind(name, entry) != "s2s":
            continue
        source = entry.get("source")
        if not [
            d for d, e in datasets.items() if d != name and e.get("source") == source and _text_kind(d, e) == "p2p"
        ]:
            out.append(
                f"adapt.protocol.argue_objectives lists similarity (a title against its own text), but {name} has "
                f"titles only and no P2P dataset of its source {source!r} is configured in `datasets` to take the "
                "texts from (argue's companion): add it to `datasets` (it is read, not evaluated, unless "
                "adapt.datasets lists it) or leave similarity out"
            )
    return out


def prompt_variant_errors(config: dict) -> list[str]:
    """A model's `prompt_variants` that cannot be resolved (``tecb.embed.spec.expand_prompt_variants``)."""
    from tecb.embed.spec import expand_prompt_variants

    return _raised(expand_prompt_variants, config["models"])


def reference_errors(config: dict) -> list[str]:
    """Every check of one section against another, on the config with the schema's defaults: what the workflow's
    rules rely on (before issue 45 checked in its .smk files, after the schema)."""
    return (
        dataset_reference_errors(config)
        + configuration_errors(config)
        + model_entry_errors(config)
        + prompt_variant_errors(config)
        + training_errors(config, "pretrain")
        + training_errors(config, "adapt")
    )


# --- all together --------------------------------------------------------------------------------


def load_schema(path) -> dict:
    """The config schema as a dict (a fresh copy each call). Parsed once per file version and process, with
    libyaml's safe loader where PyYAML has it: the pure-Python loader took ~0.23 CPU-s for the schema, paid by
    every ``snakemake`` invocation and every in-process check (the same data: ``tests/test_configcheck.py``)."""
    path = Path(path).resolve()
    return copy.deepcopy(_parsed_schema(str(path), path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _parsed_schema(path: str, mtime_ns: int) -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader


def validated_config(config: dict, schema_path) -> dict:
    """The config with the schema's defaults filled in, or a :class:`ConfigError` listing every problem.

    Order: credentials first (nothing else looks at a config holding one), then the schema, then the
    parameters of every method against what the method takes, the keys of each entry and the references between
    sections (:func:`reference_errors`).
    """
    check_credentials(config)
    filled, messages = schema_errors(config, load_schema(schema_path))
    if not messages:
        # the keys as given (the schema's defaults, e.g. trust_remote_code: false, are no one's mistake)
        messages = parameter_errors(filled) + model_kind_errors(config) + builder_errors(filled)
        messages += cross_key_errors(filled) + reference_errors(filled)
        messages = messages or mteb_model_errors(filled)
    if messages:
        shown = messages[:20] + ([f"... and {len(messages) - 20} more"] if len(messages) > 20 else [])
        raise ConfigError("invalid config:\n  " + "\n  ".join(m.replace("\n", "\n  ") for m in shown))
    schema = load_schema(schema_path)
    return schema_ordered(filled, schema, schema)


def workflow_config(config: dict, schema_path) -> dict:
    """The config the workflow runs (its Snakefile calls this, as :func:`check_config` does): every check of
    :func:`validated_config`, then each model with ``prompt_variants`` as one model per variant,
    ``{model}@{variant}`` (``tecb.embed.spec.expand_prompt_variants``). Raises :class:`ConfigError`."""
    from tecb.embed.spec import expand_prompt_variants

    checked = validated_config(config, schema_path)
    checked["models"] = expand_prompt_variants(checked["models"])
    return checked


def schema_ordered(value, node: dict, schema: dict):
    """``value`` with every mapping's keys in the schema's order (the keys it lists first, then the others as given),
    recursively: where a key was given (a config file, the paper's config) or filled in (a default) does not change
    the order, so neither a job's params (Snakemake compares their repr) nor the records that list them."""
    if isinstance(node, dict) and "$ref" in node:
        node = schema["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    if not isinstance(node, dict):
        return value
    if isinstance(value, dict):
        props = node.get("properties", {})
        entries = node.get("additionalProperties")
        order = [k for k in props if k in value] + [k for k in value if k not in props]
        return {
            k: schema_ordered(
                value[k], props[k] if k in props else entries if isinstance(entries, dict) else {}, schema
            )
            for k in order
        }
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [schema_ordered(v, node["items"], schema) for v in value]
    return value


def produced_by_the_workflow(path) -> bool:
    """Outside Snakemake: a relative path under ``resources/`` is written by the workflow's rules (downloads, the
    demo's inputs, the Reddit rehydration), so it may not exist yet."""
    parts = Path(path).parts
    return not Path(path).is_absolute() and bool(parts) and parts[0] == "resources"


def check_config(config: dict, schema_path, *, cache_dir, preflight: bool = True) -> dict:
    """Everything checked before a job starts, as ``python -m tecb.configcheck`` runs it: the schema, the
    parameters, keys and references between sections (:func:`workflow_config`, as the workflow), then the
    preflight of what the config points to (:mod:`tecb.preflight`; ``cache_dir`` keeps its passed checks,
    ``None``: no cache). Returns the config the workflow runs; raises :class:`ConfigError` listing the problems."""
    from tecb.preflight import run_preflight

    filled = workflow_config(config, schema_path)
    if preflight:
        run_preflight(filled, produced=produced_by_the_workflow, cache_dir=cache_dir)
    return filled


def main(argv=None) -> int:
    """``python -m tecb.configcheck [config.yaml ...]``: check config files merged over the defaults, then what
    they point to (files, local models, import-path algorithms: the preflight)."""
    from tecb.preflight import CACHE_DIR

    root = Path(__file__).resolve().parents[2]
    files = list(argv if argv is not None else sys.argv[1:])
    try:
        load_yaml(root / "config" / "config.yaml")
        for f in files:
            load_yaml(f)  # syntax errors with their line
        config = layered_config(root, Path.cwd(), files)
        check_config(config, root / "workflow" / "schemas" / "config.schema.yaml", cache_dir=CACHE_DIR)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"config OK: {', '.join(files) or 'config/config.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
