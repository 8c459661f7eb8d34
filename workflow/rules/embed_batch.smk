# The writer of a run's embeddings/{model}/{dataset}.parquet of the models EMBED_WRITERS (functions/embed.smk)
# gives to `embed_batch`: one job per model. Included by embed.smk only where the table names one.


# embed.batch: every dataset of one model in one job; update(): a rerun keeps the datasets whose key is
# unchanged (tecb.embed.batch), so reruns stay exact. With embed.cache_dir each dataset is the store's entry of
# its key, reused or computed, as an embed job's (tecb.embed.cache.serve_from_entry).
rule embed_batch:
    """Every dataset of one model, each as an embed job would (same bytes), embedding only what changed."""
    input:
        texts=[texts_path(d) for d in DATASETS],
        model=model_input,
        digest=model_digest_input,
    output:
        embeddings=update([embedding_path("{model}", d) for d in DATASETS]),
        timings=update([job_timing_path("embed", "{model}", d) for d in DATASETS]),
        batch_keys=update(embed_batch_keys_path("{model}")),
    log:
        log_path("embed", "{model}", "batch.log"),
    benchmark:
        benchmark_path("embed", "{model}", "batch.tsv")
    wildcard_constraints:
        model=alternatives(embed_models(writer="embed_batch")),
    conda:
        model_env
    threads: EMBED_THREADS
    resources:
        gpu=gpus_for,
        mem_mb=embed_mem_mb,
    params:
        datasets=DATASETS,
        settings=lambda wildcards: {
            d: model_settings(wildcards.model, d) for d in DATASETS
        },
        seed=embed_seed,
        kind=model_kind,
    script:
        "../scripts/embed_batch.py"
