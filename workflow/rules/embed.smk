# Datasets -> embeddings: each unique text once per model (design §4, §5, §8).


localrules:
    prefetch_model,


rule prefetch_model:
    """Download a hub model once (needs internet: run on a login node); embed jobs then run offline."""
    output:
        directory("resources/models/{model}"),
    log:
        "logs/prefetch_model/{model}.log",
    wildcard_constraints:
        model=alternatives(models_of_kind("huggingface")),
    conda:
        "../../envs/embed.yaml"
    params:
        spec=lambda wildcards: config["models"][wildcards.model],
    script:
        "../scripts/prefetch_model.py"


rule tiny_bert:
    """A tiny BERT from a config with a fixed seed, its vocabulary trained on the benchmark's texts."""
    input:
        texts=expand("results/datasets/{dataset}/texts.parquet", dataset=DATASETS),
    output:
        directory("resources/models/{model}"),
    log:
        "logs/tiny_bert/{model}.log",
    wildcard_constraints:
        model=alternatives(models_of_kind("tiny-bert")),
    conda:
        "../../envs/embed.yaml"
    params:
        seed=SEED,
    script:
        "../scripts/tiny_bert.py"


rule embed:
    """Each unique text once: length-sorted batches (halved on CUDA OOM), streamed to Parquet, offline."""
    input:
        texts="results/datasets/{dataset}/texts.parquet",
        model=model_input,
    output:
        "results/embeddings/{model}/{dataset}.parquet",
    log:
        "logs/embed/{model}/{dataset}.log",
    benchmark:
        "results/benchmarks/embed/{model}/{dataset}.tsv"
    conda:
        "../../envs/embed.yaml"
    threads: config["embed"]["threads"]
    resources:
        gpu=gpus_for,
    params:
        spec=lambda wildcards: model_spec(wildcards.model),
        options=config["embed"],
        seed=SEED,
    script:
        "../scripts/embed.py"
