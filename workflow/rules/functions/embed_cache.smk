# Input, params and resources functions of the rules in embed_cache.smk (config embed.cache_dir), which includes
# this file first. Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.

import glob
from types import SimpleNamespace

from tecb.io import read_json_record

from tecb.embed.cache import entry_paths, finished_keys, key_owners, owner_of


def unfinished_key_constraint():
    """The key wildcard of embed_compute: any key but those of the store's finished entries, so a finished entry is
    the output of no job and Snakemake takes it as a source file (verified in full before it is linked,
    embed_cached.py). Listed by the main process only: a cluster job runs the job it was given (its script keeps
    an entry another run finished meanwhile: tecb.embed.cache.fill_entry)."""
    if not EMBED_CACHE:
        return alternatives([])
    finished = finished_keys(EMBED_CACHE) if workflow.is_main_process else []
    # a key is 64 characters: a lookahead of a whole key excludes exactly that key
    return (f"(?!{alternatives(finished)})" if finished else "") + "[0-9a-f]{64}"


UNFINISHED_KEY = unfinished_key_constraint()


def cache_entry_input(wildcards):
    """The cache entry a run's embeddings file is linked from: its key is known once embed_key has run. Only the
    vectors are an input: the entry's timings file (written by the same job) is linked too, but as an input its
    modification time could make the run's link look older than an input."""
    key_file = checkpoints.embed_key.get(**wildcards).output[0]
    record = read_json_record(key_file, ("key",), "embedding cache key file")
    return {"embeddings": cache_entry_path(record["key"], "embeddings")}


_KEY_OWNERS = {}


def run_key_owners(key):
    """Cache key -> (model, dataset) of this run's key files (tecb.embed.cache.key_owners), read again while
    ``key`` is not among them."""
    if key not in _KEY_OWNERS:
        found = key_owners(
            sorted(glob.glob(embed_key_path("*", "*"))),
            models=embed_models(writer="embed_cached"),
            datasets=DATASETS,
        )
        _KEY_OWNERS.update({k: v for k, v in found.items() if k not in _KEY_OWNERS})
    return _KEY_OWNERS


def key_owner(key):
    """The (model, dataset) of this run whose embedding has cache key ``key``, or None."""
    return run_key_owners(key).get(key)


def cache_compute_input(wildcards):
    """What computing a cache entry reads: the shards of the run's (model, dataset) with that key for a sharded
    model (functions/embed_shard.smk), else its texts and model, as an embed job."""
    owner = owner_of(run_key_owners(wildcards.key), wildcards.key)
    if EMBED_WRITERS[owner[0]]["unit"] == "shard":
        return shard_inputs(*owner)
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


def cache_sharded(wildcards):
    """Whether a cache entry being computed is merged from shards (a cheap CPU job)."""
    model = cache_owner(wildcards)["model"]
    return model is not None and EMBED_WRITERS[model]["unit"] == "shard"


def cache_threads(wildcards):
    """The threads computing a cache entry uses: an embed job's; one to merge shards."""
    return 1 if cache_sharded(wildcards) else EMBED_THREADS


def cache_gpus(wildcards):
    """GPUs computing a cache entry asks for: as the embed rule (none for TF-IDF), none to merge shards."""
    owner = key_owner(wildcards.key)
    if owner is None or cache_sharded(wildcards):
        return 0
    return gpus_for(SimpleNamespace(model=owner[0]))


def cache_settings(wildcards):
    """The resolved model settings of a cache entry being computed (as the embed rule's params)."""
    owner = cache_owner(wildcards)
    if owner["model"] is None:
        return None
    return model_settings(owner["model"], owner["dataset"])


def cache_seed(wildcards):
    """The seed of a cache entry being computed: its model's embed_seed (the run's for TF-IDF, else None)."""
    owner = cache_owner(wildcards)
    return embed_seed(SimpleNamespace(**owner)) if owner["model"] else None
