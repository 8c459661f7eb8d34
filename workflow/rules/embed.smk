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


# The writers of a run's embeddings/{model}/{dataset}.parquet: embed (per dataset), embed_batch (per model) and
# embed_merge (per shard). EMBED_WRITERS (functions/embed.smk) names one per model; each writer's rules are in a
# file of their own, included only where that table names a model for them (a rule that can never match the
# config is not shown to it), and each owns the models the table gives it (wildcard constraints), so every output
# has one writer whatever the switches. With the store (embed.cache_dir) the same rules run: each job serves its
# files from the store's entries itself (tecb.embed.cache.serve_from_entry; docs/slurm.md "Embedding cache").
if embed_models(writer="embed"):

    include: "embed_dataset.smk"


if embed_models(writer="embed_batch"):

    include: "embed_batch.smk"


# sharded embedding of big corpora (config embed.shard_size): the shards, then embed_merge's run file
if embed_models(unit="shard"):

    include: "embed_shard.smk"
    include: "embed_merge.smk"
