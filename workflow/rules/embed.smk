# Datasets -> embeddings: each unique text once per model (design §4, §5, §8).
# An embed job's params are the resolved settings that decide its vectors (tecb.embed.spec):
# changing a prompt, pooling, revision, ... re-embeds; a display name, batch size, device or thread
# count does not. A local model's content is an input (model_digest), so overwriting its weights re-embeds.

from tecb.embed.spec import digest_paths, model_files


include: "functions/embed.smk"


localrules:
    prefetch_model,
    model_digest,


rule prefetch_model:
    """Download a hub model once (needs internet: run on a login node); embed jobs then run offline."""
    output:
        directory(hub_model_dir("{model}")),
    log:
        shared_log("prefetch_model", "{model}.log"),
    wildcard_constraints:
        model=alternatives(sorted(set(HUB_ENTRIES))),
    conda:
        "../../envs/embed.yaml"
    params:
        # what is downloaded (not the display name or the embedding settings)
        spec=lambda wildcards: {
            k: HUB_ENTRIES[wildcards.model].get(k)
            for k in ("id", "revision", "code_revisions")
        },
    script:
        "../scripts/prefetch_model.py"


rule model_digest:
    """A local model's content: sha256 of every file (weights, config, tokenizer), an input of its embed jobs."""
    input:
        lambda wildcards: [
            f for p in local_model_path(wildcards) for f in model_files(p)
        ],
    output:
        model_digest_path("{model}"),
    log:
        log_path("model_digest", "{model}.log"),
    wildcard_constraints:
        model=alternatives(
            [m for m, spec in config["models"].items() if digest_paths(spec)]
        ),
    conda:
        "../../envs/embed.yaml"
    params:
        path=local_model_path,
        stat=local_model_stat,
    script:
        "../scripts/model_digest.py"


rule tiny_bert:
    """A tiny BERT from a config with a fixed seed, its vocabulary trained on the benchmark's texts."""
    input:
        texts=[texts_path(d) for d in DATASETS],
    output:
        directory(built_model_dir("{model}")),
    log:
        log_path("tiny_bert", "{model}.log"),
    wildcard_constraints:
        model=alternatives(models_of_kind("tiny-bert")),
    conda:
        "../../envs/embed.yaml"
    params:
        seed=SEED,
    script:
        "../scripts/tiny_bert.py"


rule distill_static:
    """A static (model2vec) model distilled from a local transformer, without data (CPU)."""
    input:
        distill_source_inputs,
    output:
        directory(built_model_dir("{model}")),
    log:
        log_path("distill_static", "{model}.log"),
    benchmark:
        benchmark_path("distill_static", "{model}.tsv")
    wildcard_constraints:
        model=alternatives(
            [m for m, spec in config["models"].items() if spec.get("distill_from")]
        ),
    conda:
        "../../envs/embed.yaml"
    threads: EMBED_THREADS
    params:
        source=distill_source,
        pca_dims=lambda wildcards: config["models"][wildcards.model].get("pca_dims"),
    script:
        "../scripts/distill_static.py"


# The writers of a run's embeddings/{model}/{dataset}.parquet: embed (per dataset), embed_batch (per model),
# embed_merge (per shard) and embed_cached (a link from the store): each owns the models functions/embed.smk
# gives it (wildcard constraints), so every output has one writer whatever the switches.


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
        model=alternatives(EMBEDDED_MODELS),
    conda:
        model_env
    threads: EMBED_THREADS
    resources:
        gpu=gpus_for,
    params:
        settings=embed_settings,
        seed=embed_seed,
    script:
        "../scripts/embed.py"


# embed.batch: every dataset of one model in one job; update(): a rerun keeps the datasets whose key is
# unchanged (tecb.embed.batch), so reruns stay exact. With embed.cache_dir it fills the store's entries and
# links the run's files from them (an entry is an entry whoever computed it).
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
        model=alternatives(BATCHED_MODELS),
    conda:
        model_env
    threads: EMBED_THREADS
    resources:
        gpu=gpus_for,
    params:
        datasets=DATASETS,
        settings=lambda wildcards: {
            d: model_settings(wildcards.model, d) for d in DATASETS
        },
        seed=embed_seed,
        kind=model_kind,
    script:
        "../scripts/embed_batch.py"


# --- the content-addressed store shared by run folders (config embed.cache_dir): embed_cache.smk ----------


include: "embed_cache.smk"


# --- sharded embedding of big corpora (config embed.shard_size): embed_shard.smk --------------------------


include: "embed_shard.smk"
