# The writer of a run's embeddings/{model}/{dataset}.parquet of the models EMBED_WRITERS (functions/embed.smk)
# gives to `embed`: one job per (model, dataset). Included by embed.smk only where the table names one.


rule embed:
    """Each unique text once: length-sorted batches (halved on CUDA OOM), streamed to Parquet, offline."""
    input:
        texts=texts_path("{dataset}"),
        model=model_input,
        digest=model_digest_input,
    output:
        embeddings=embedding_path("{model}", "{dataset}"),
        timings=job_timing_path("embed", "{model}", "{dataset}"),
    log:
        log_path("embed", "{model}", "{dataset}.log"),
    benchmark:
        benchmark_path("embed", "{model}", "{dataset}.tsv")
    wildcard_constraints:
        model=alternatives(embed_models(writer="embed")),
    conda:
        model_env
    threads: EMBED_THREADS
    resources:
        gpu=gpus_for,
        mem_mb=embed_mem_mb,
    params:
        settings=embed_settings,
        seed=embed_seed,
    script:
        "../scripts/embed.py"
