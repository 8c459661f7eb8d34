# The embedding cache shared by run folders (config embed.cache_dir; docs/slurm.md "Embedding cache").
# With it, a run's embeddings/{model}/{dataset}.parquet is linked from {cache_dir}/{key}.parquet, where the key
# (checkpoint embed_key: a cheap local job) covers the model's resolved settings, its files and the texts'
# sha256 (tecb.embed.cache). embed_compute fills a missing entry (the GPU job); an existing entry is a source
# file, so a second run folder with the same model and texts plans no embedding job.


include: "functions/embed_cache.smk"


if EMBED_CACHE:

    localrules:
        embed_key,
        embed_cached,

    ruleorder: embed_cached > embed

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
        conda:
            "../../envs/embed.yaml"
        params:
            settings=lambda wildcards: encoder_settings(
                model_spec(wildcards.model), config["embed"], wildcards.dataset
            ),
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
        conda:
            "../../envs/embed.yaml"
        script:
            "../scripts/embed_cached.py"

    rule embed_compute:
        """A missing cache entry: each unique text once (as the embed rule), under the entry's lock, atomically."""
        input:
            unpack(cache_compute_input),
        output:
            # update(): a job never deletes an entry another run finished after this one planned it (its script
            # then keeps the entry: tecb.embed.cache.fill_entry, under the entry's lock)
            embeddings=update(os.path.join(EMBED_CACHE, "{key}.parquet")),
            timings=update(os.path.join(EMBED_CACHE, "{key}.timings.json")),
        log:
            shared_log("embed_compute", "{key}.log"),
        benchmark:
            os.path.join(EMBED_CACHE, "{key}.benchmark.tsv")
        wildcard_constraints:
            key="[0-9a-f]{64}",
        conda:
            "../../envs/embed.yaml"
        threads: config["embed"]["threads"]
        resources:
            gpu=cache_gpus,
        params:
            owner=cache_owner,
            settings=cache_settings,
            seed=cache_seed,
        script:
            "../scripts/embed_compute.py"
