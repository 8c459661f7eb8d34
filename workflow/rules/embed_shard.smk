# Sharded embedding of big corpora (config embed.shard_size; docs/slurm.md "Big corpora: sharded embedding").
# A transformer model's (model, dataset) is embedded by one embed_shard job (GPU) per range of whole chunks
# (checkpoint embed_plan: a local job that counts the dataset's texts), and embed_merge (cheap, CPU) writes the
# shards as the run's embeddings file: byte for byte the file one embed job writes (tecb.embed.shard). Other
# kinds (TF-IDF fits on all texts) are embedded as without sharding. With the embedding cache (embed.cache_dir),
# embed_merge reuses the store's entry or merges the shards into it: the shards are the run's own, embedded in
# every run (docs/slurm.md "Embedding cache").
# Which models are sharded: unit "shard" of EMBED_WRITERS (functions/embed.smk); embed.smk includes this file only
# where the table names one.


include: "functions/embed_shard.smk"


localrules:
    embed_plan,


checkpoint embed_plan:
    """The shards of a dataset: [start, stop) text ranges of whole chunks, about embed.shard_size texts each."""
    input:
        texts=texts_path("{dataset}"),
    output:
        shard_plan_path("{dataset}"),
    log:
        log_path("embed_plan", "{dataset}.log"),
    wildcard_constraints:
        dataset=alternatives(DATASETS),
    conda:
        "../../envs/embed.yaml"
    params:
        shard_size=plan_shard_size,
        chunk_size=config["embed"]["chunk_size"],
    script:
        "../scripts/embed_plan.py"


rule embed_shard:
    """One shard of a (model, dataset): texts start..stop-1 embedded as the embed rule embeds them all."""
    input:
        texts=texts_path("{dataset}"),
        model=model_input,
        digest=model_digest_input,
    output:
        embeddings=temp(shard_path("{model}", "{dataset}", "{start}", "{stop}")),
        # temp(), as the shard: merged into the (model, dataset)'s timings, which list each shard's seconds
        timings=temp(
            job_timing_path("embed_shard", "{model}", "{dataset}", "{start}-{stop}")
        ),
    log:
        log_path("embed_shard", "{model}", "{dataset}", "{start}-{stop}.log"),
    benchmark:
        benchmark_path("embed_shard", "{model}", "{dataset}", "{start}-{stop}.tsv")
    wildcard_constraints:
        model=alternatives(embed_models(unit="shard")),
        dataset=alternatives(DATASETS),
        start=r"\d+",
        stop=r"\d+",
    conda:
        model_env
    threads: EMBED_THREADS
    resources:
        gpu=gpus_for,
        mem_mb=embed_shard_mem_mb,
    params:
        settings=embed_settings,
        seed=embed_seed,
        start=lambda wildcards: int(wildcards.start),
        stop=lambda wildcards: int(wildcards.stop),
    script:
        "../scripts/embed_shard.py"
