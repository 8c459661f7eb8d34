# The content-addressed store shared by run folders (config embed.cache_dir; docs/slurm.md "Embedding cache").
# With it, a run's embeddings/{model}/{dataset}.parquet of a model EMBED_WRITERS (functions/embed.smk) gives to
# embed_cached is
# linked from {cache_dir}/{key}.parquet, where the key (checkpoint embed_key: a cheap local job) covers the model's
# resolved settings, its files and the texts' sha256, never a path (tecb.embed.cache). embed_compute fills a
# missing entry (the GPU job; from the run's shards for a sharded model); a finished entry is no rule's output
# (the key's wildcard constraint), so a second run folder with the same model and texts plans no embedding job.
# Batch jobs (embed.batch) fill and link their entries themselves (tecb.embed.batch).


include: "functions/embed_cache.smk"


localrules:
    embed_key,
    embed_cached,


checkpoint embed_key:
    """The cache key of one (model, dataset): what decides its embedding file's bytes."""
    input:
        texts=texts_path("{dataset}"),
        model=model_input,
        digest=model_digest_input,
    output:
        embed_key_path("{model}", "{dataset}"),
    log:
        log_path("embed_key", "{model}", "{dataset}.log"),
    wildcard_constraints:
        model=alternatives(embed_models(writer="embed_cached")),
    conda:
        "../../envs/embed.yaml"
    params:
        settings=embed_settings,
        seed=embed_seed,
        kind=model_kind,
    script:
        "../scripts/embed_key.py"


rule embed_cached:
    """A run's embeddings file: the cache entry of its key, hard-linked (or copied)."""
    input:
        unpack(cache_entry_input),
    output:
        embeddings=embedding_path("{model}", "{dataset}"),
        timings=job_timing_path("embed", "{model}", "{dataset}"),
    log:
        log_path("embed_cached", "{model}", "{dataset}.log"),
    wildcard_constraints:
        model=alternatives(embed_models(writer="embed_cached")),
    conda:
        "../../envs/embed.yaml"
    script:
        "../scripts/embed_cached.py"


rule embed_compute:
    """A missing cache entry: each unique text once (as the embed rule) or the run's shards merged (a sharded
    model), under the entry's lock, atomically."""
    input:
        unpack(cache_compute_input),
    output:
        # update(): a job never deletes an entry another run finished after this one planned it (its script
        # then keeps the entry: tecb.embed.cache.fill_entry, under the entry's lock)
        embeddings=update(cache_entry_path("{key}", "embeddings")),
        timings=update(cache_entry_path("{key}", "timings")),
    log:
        shared_log("embed_compute", "{key}.log"),
    benchmark:
        cache_entry_path("{key}", "benchmark")
    wildcard_constraints:
        key=UNFINISHED_KEY,
    conda:
        "../../envs/embed.yaml"
    threads: cache_threads
    resources:
        gpu=cache_gpus,
    params:
        owner=cache_owner,
        settings=cache_settings,
        seed=cache_seed,
    script:
        "../scripts/embed_compute.py"
