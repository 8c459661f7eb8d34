# The writer of a run's embeddings/{model}/{dataset}.parquet of the sharded models EMBED_WRITERS
# (functions/embed.smk) gives to `embed_merge`: the shards of embed_shard.smk merged, byte for byte the file one
# embed job writes; with the store (embed.cache_dir), the store's entry of the shards' key, reused or merged into
# it (tecb.embed.job.run_merge_job). Included by embed.smk only where the table names one.


rule embed_merge:
    """A run's embeddings file from its shards, as one embed job writes it (its timings: the shards' sum)."""
    input:
        unpack(merge_input),
        # not read: named so that a prefetch is planned before the shards are (`--until prefetch_model`)
        model=model_input,
    output:
        embeddings=embedding_path("{model}", "{dataset}"),
        timings=job_timing_path("embed", "{model}", "{dataset}"),
    log:
        log_path("embed_merge", "{model}", "{dataset}.log"),
    benchmark:
        benchmark_path("embed", "{model}", "{dataset}.tsv")
    wildcard_constraints:
        model=alternatives(embed_models(writer="embed_merge")),
        dataset=alternatives(DATASETS),
    conda:
        "../../envs/embed.yaml"
    script:
        "../scripts/embed_merge.py"
