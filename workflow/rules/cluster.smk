# Embeddings -> reductions -> clusterings -> scores (design §4, §5).
# One reduce job per (model, dataset, reduction), shared by every algorithm on it; one cluster job per
# (model, dataset, reduction, algorithm). Params hold only the resolved spec of that reduction/algorithm and
# the seed, so adding a configuration runs only its new jobs and changing one algorithm reruns only its jobs.
# cluster.batch: one cluster_batch job per (model, dataset) does its reductions and clusterings instead, and
# keys each one so a rerun recomputes only what changed (tecb.cluster.batch); which models: functions/cluster.smk.
# threads = the cores a job really uses; mem_mb = the memory guard's estimate; runtime = minutes, x scoring.restarts
# for a stochastic method (functions/cluster.smk).


include: "functions/cluster.smk"


# (model, dataset, reduction, algorithm) of every score file, in the order of score_files()
SCORE_KEYS = [(m, d, r, a) for m in MODELS for d in DATASETS for a, r in CONFIGURATIONS]


rule reduce:
    input:
        embeddings=embedding_path("{model}", "{dataset}"),
        splits=splits_path("{dataset}"),
    output:
        reduced_path("{model}", "{dataset}", "{reduction}"),
    log:
        log_path("reduce", "{model}", "{dataset}", "{reduction}.log"),
    benchmark:
        benchmark_path("reduce", "{model}", "{dataset}", "{reduction}.tsv")
    wildcard_constraints:
        model=alternatives(CLUSTER_STEP_MODELS),
        reduction=alternatives(REDUCTIONS),
    conda:
        "../../envs/cluster.yaml"
    threads: 1
    resources:
        mem_mb=reduce_mem_mb,
    params:
        spec=lambda wildcards: config["reductions"][wildcards.reduction],
        seed=SEED,
    script:
        "../scripts/reduce.py"


rule cluster:
    input:
        unpack(cluster_input),
    output:
        scores=score_path("{model}", "{dataset}", "{reduction}", "{algorithm}"),
        timings=timing_path("{model}", "{dataset}", "{reduction}", "{algorithm}"),
        labels=labels_path("{model}", "{dataset}", "{reduction}", "{algorithm}"),
    log:
        log_path("cluster", "{model}", "{dataset}", "{reduction}", "{algorithm}.log"),
    benchmark:
        benchmark_path(
            "cluster", "{model}", "{dataset}", "{reduction}", "{algorithm}.tsv"
        )
    wildcard_constraints:
        model=alternatives(CLUSTER_STEP_MODELS),
        reduction=alternatives(["none"] + REDUCTIONS),
        algorithm=alternatives(list(config["algorithms"])),
    conda:
        "../../envs/cluster.yaml"
    threads: cluster_threads
    resources:
        mem_mb=cluster_mem_mb,
        runtime=cluster_runtime,
    params:
        spec=lambda wildcards: algorithm_spec(wildcards.algorithm),
        seed=SEED,
    script:
        "../scripts/cluster.py"


# cluster.batch: every reduction and configuration of one (model, dataset) in one process, then its MTEB v2
# score and cluster view (instead of the mteb_v2 and cluster_view jobs); update(): a rerun keeps
# the reductions, configurations and steps whose key is unchanged (tecb.cluster.batch), so reruns stay
# exact.
rule cluster_batch:
    input:
        **cluster_batch_step_inputs(),
        embeddings=embedding_path("{model}", "{dataset}"),
        splits=splits_path("{dataset}"),
    output:
        **cluster_batch_step_outputs(),
        reduced=update([reduced_path("{model}", "{dataset}", r) for r in REDUCTIONS]),
        scores=update(
            [score_path("{model}", "{dataset}", r, a) for a, r in CONFIGURATIONS]
        ),
        timings=update(
            [timing_path("{model}", "{dataset}", r, a) for a, r in CONFIGURATIONS]
        ),
        labels=update(
            [labels_path("{model}", "{dataset}", r, a) for a, r in CONFIGURATIONS]
        ),
        member_keys=update(cluster_keys_path("{model}", "{dataset}")),
    log:
        log_path("cluster", "{model}", "{dataset}", "batch.log"),
    benchmark:
        benchmark_path("cluster", "{model}", "{dataset}", "batch.tsv")
    wildcard_constraints:
        model=alternatives(CLUSTER_BATCH_MODELS),
    conda:
        "../../envs/cluster.yaml"
    threads: cluster_batch_threads
    resources:
        mem_mb=cluster_batch_mem_mb,
        runtime=cluster_batch_runtime,
    params:
        reductions=[
            {"reduction": r, "spec": config["reductions"][r]} for r in REDUCTIONS
        ],
        members=cluster_batch_members,
        seed=SEED,
        steps=cluster_batch_step_params,
    script:
        "../scripts/cluster_batch.py"


rule collect_scores:
    """Every per-split score in one long table."""
    input:
        score_files(),
    output:
        SCORES,
    log:
        log_path("collect_scores.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        score_keys=SCORE_KEYS,
    script:
        "../scripts/collect_scores.py"
