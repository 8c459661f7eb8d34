# Input and resources functions of the rules in embed_cache.smk (config embed.cache_dir), which includes this
# file first. Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.

import glob
import json
from types import SimpleNamespace

from tecb.embed.cache import entry_paths, is_finished

EMBED_CACHE = config["embed"].get("cache_dir")


def embed_key_path(model, dataset):
    """The cache key of one (model, dataset) of this run (checkpoint embed_key)."""
    return result("embeddings", model, f"{dataset}.key.json")


def cache_entry_input(wildcards):
    """The cache entry a run's embeddings file is linked from: its key is known once embed_key has run. Only the
    vectors are an input: the entry's timings file (written by the same job) is linked too, but as an input its
    modification time could make the run's link look older than an input."""
    key_file = checkpoints.embed_key.get(**wildcards).output[0]
    with open(key_file) as f:
        return {
            "embeddings": entry_paths(EMBED_CACHE, json.load(f)["key"])["embeddings"]
        }


_KEY_OWNERS = {}


def key_owner(key):
    """The (model, dataset) of this run whose embedding has cache key ``key`` (from the run's key files)."""
    if key not in _KEY_OWNERS:
        for path in sorted(glob.glob(embed_key_path("*", "*"))):
            with open(path) as f:
                record = json.load(f)
            if record["model"] in MODELS and record["dataset"] in DATASETS:
                _KEY_OWNERS.setdefault(
                    record["key"], (record["model"], record["dataset"])
                )
    return _KEY_OWNERS.get(key)


def cache_compute_input(wildcards):
    """What computing a cache entry reads. A finished entry (its record matches its files) is never planned again
    (write-once store): the input named then exists nowhere and no rule makes it, so Snakemake takes the entry as
    a source file (verified in full before it is linked: embed_cached.py).
    """
    entry = entry_paths(EMBED_CACHE, wildcards.key)
    if is_finished(EMBED_CACHE, wildcards.key):
        return {"cached": entry["embeddings"] + ".is-cached"}
    owner = key_owner(wildcards.key)
    if owner is None:
        raise ValueError(
            f"embed.cache_dir: no (model, dataset) of this run has cache key {wildcards.key}"
        )
    wc = SimpleNamespace(model=owner[0], dataset=owner[1])
    return {
        "texts": texts_path(wc.dataset),
        "model": model_input(wc),
        "digest": model_digest_input(wc),
        "key": embed_key_path(wc.model, wc.dataset),
    }


def cache_owner(wildcards):
    """{"model": ..., "dataset": ...} of a cache entry being computed (params of embed_compute)."""
    owner = key_owner(wildcards.key) or (None, None)
    return {"model": owner[0], "dataset": owner[1]}


def cache_gpus(wildcards):
    """GPUs computing a cache entry asks for: as the embed rule (none for TF-IDF)."""
    owner = key_owner(wildcards.key)
    return gpus_for(SimpleNamespace(model=owner[0])) if owner else 0


def cache_settings(wildcards):
    """The resolved model settings of a cache entry being computed (as the embed rule's params)."""
    owner = cache_owner(wildcards)
    if owner["model"] is None:
        return None
    return encoder_settings(
        model_spec(owner["model"]), config["embed"], owner["dataset"]
    )


def cache_seed(wildcards):
    """The TF-IDF seed of a cache entry being computed (None for neural models)."""
    owner = cache_owner(wildcards)
    if owner["model"] is None or model_spec(owner["model"])["kind"] != "tfidf":
        return None
    return SEED
