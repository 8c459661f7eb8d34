# Embeddings -> reductions -> clusterings -> scores (design §4, §5).
# A reduction is computed once per (model, dataset) and shared by every algorithm; one cluster job
# per (model, dataset) runs all configured (algorithm, reduction) pairs and writes one file each.


rule reduce:
    input:
        embeddings="results/embeddings/{model}/{dataset}.parquet",
        splits="results/datasets/{dataset}/splits.parquet",
    output:
        [reduced_path("{model}", "{dataset}", reduction) for reduction in REDUCTIONS],
    log:
        "logs/reduce/{model}/{dataset}.log",
    benchmark:
        "results/benchmarks/reduce/{model}/{dataset}.tsv"
    conda:
        "../../envs/cluster.yaml"
    threads: 1
    params:
        reductions={r: config["reductions"][r] for r in REDUCTIONS},
        seed=SEED,
        numba_cache=config["cluster"]["numba_cache"],
    script:
        "../scripts/reduce.py"


rule cluster:
    input:
        embeddings="results/embeddings/{model}/{dataset}.parquet",
        splits="results/datasets/{dataset}/splits.parquet",
        reduced=[
            reduced_path("{model}", "{dataset}", reduction) for reduction in REDUCTIONS
        ],
    output:
        [
            score_path("{model}", "{dataset}", reduction, algorithm)
            for algorithm, reduction in CONFIGURATIONS
        ],
    log:
        "logs/cluster/{model}/{dataset}.log",
    benchmark:
        "results/benchmarks/cluster/{model}/{dataset}.tsv"
    conda:
        "../../envs/cluster.yaml"
    threads: config["cluster"]["threads"]
    params:
        configurations=CONFIGURATIONS,
        reductions=REDUCTIONS,
        algorithms=config["algorithms"],
        seed=SEED,
        max_memory_gb=config["cluster"]["max_memory_gb"],
    script:
        "../scripts/cluster.py"


rule collect_scores:
    """Every per-split score in one long table."""
    input:
        score_files(),
    output:
        "results/scores.parquet",
    log:
        "logs/collect_scores.log",
    conda:
        "../../envs/tables.yaml"
    script:
        "../scripts/collect_scores.py"
