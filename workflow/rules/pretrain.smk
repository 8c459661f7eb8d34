# Adaptive pre-training (paper Table 5, Figure 2): continue pre-training a model on one dataset's
# texts with WWM or TSDAE, score k-means on raw embeddings at each scheduled epoch.


rule pretrain:
    """Continue pre-training one model on one dataset's unique texts with one method and seed."""
    input:
        texts="results/datasets/{dataset}/texts.parquet",
        splits="results/datasets/{dataset}/splits.parquet",
        model=pretrain_model_dir,
    output:
        scores="results/pretrain/{model}/{method}/{dataset}/seed{seed}.parquet",
        checkpoint=directory("resources/pretrain/{model}/{method}/{dataset}/seed{seed}"),
    log:
        "logs/pretrain/{model}/{method}/{dataset}/seed{seed}.log",
    benchmark:
        "results/benchmarks/pretrain/{model}/{method}/{dataset}/seed{seed}.tsv"
    wildcard_constraints:
        model=alternatives(PT_MODELS),
        method=alternatives(PT_METHODS),
        dataset=alternatives(PT_DATASETS),
        seed=r"-?\d+",
    conda:
        "../../envs/pretrain.yaml"
    threads: PRETRAIN.get("threads", 2)
    resources:
        gpu=1,
    params:
        method_params=lambda wildcards: {
            k: v
            for k, v in PRETRAIN["methods"][wildcards.method].items()
            if k not in ("epochs", "budget", "table_epochs")
        },
        epochs=lambda wildcards: PRETRAIN["methods"][wildcards.method]["epochs"],
        algorithm=lambda wildcards: config["algorithms"][PRETRAIN["algorithm"]],
        device=PRETRAIN.get("device", "auto"),
        eval_batch_size=PRETRAIN.get("eval_batch_size", 32),
    script:
        "../scripts/pretrain.py"


rule pretrain_report:
    """Table 5 (mean, SD, delta vs. the un-adapted model), best epochs, the paper comparison, Figure 2."""
    input:
        scores=expand(
            pretrain_score_path("{model}", "{method}", "{dataset}", "{seed}"),
            model=PT_MODELS,
            method=PT_METHODS,
            dataset=PT_DATASETS,
            seed=PT_SEEDS,
        ),
        baselines=[
            score_path(m, d, "none", PRETRAIN.get("algorithm", "kmeans"))
            for m in PT_MODELS
            for d in PT_DATASETS
        ],
        reference=PRETRAIN.get("reference", "reference/paper_table5.csv"),
    output:
        pretrain_outputs(),
    log:
        "logs/pretrain/report.log",
    conda:
        "../../envs/pretrain.yaml"
    params:
        baseline_keys=[(m, d) for m in PT_MODELS for d in PT_DATASETS],
        table_epochs={
            m: s["table_epochs"] for m, s in PRETRAIN.get("methods", {}).items()
        },
        budgets={m: s["budget"] for m, s in PRETRAIN.get("methods", {}).items()},
        model_names={m: s.get("name", m) for m, s in config["models"].items()},
    script:
        "../scripts/pretrain_report.py"
