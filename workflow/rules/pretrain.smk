# Adaptive pre-training (paper Table 5, Figure 2): continue pre-training a model on one dataset's
# texts with WWM or TSDAE, score k-means on raw embeddings at each scheduled epoch.

PRETRAIN = config.get("pretrain", {})
PT_MODELS = list(PRETRAIN.get("models", []))
PT_METHODS = list(PRETRAIN.get("methods", {}))
PT_DATASETS = list(PRETRAIN.get("datasets") or DATASETS)
PT_SEEDS = [int(s) for s in PRETRAIN.get("seeds", [SEED])]


def check_pretrain_config():
    """Cross-references of the `pretrain` section, reported with the offending key."""
    if not PRETRAIN.get("enabled"):
        return
    for model in PT_MODELS:
        if model not in config["models"]:
            raise ValueError(f"config: pretrain.models names {model!r}, not a key of `models`")
        if model_spec(model)["kind"] not in ("huggingface", "local", "tiny-bert"):
            raise ValueError(f"config: pretrain.models.{model} must be a transformer checkpoint, not tfidf")
    for dataset in PT_DATASETS:
        if dataset not in config["datasets"]:
            raise ValueError(f"config: pretrain.datasets names {dataset!r}, not a key of `datasets`")
    algorithm = PRETRAIN["algorithm"]
    if (algorithm, "none") not in CONFIGURATIONS:
        raise ValueError(
            f"config: pretrain.algorithm = {algorithm!r} needs the configuration ({algorithm}, none) for its baseline"
        )


check_pretrain_config()


def pretrain_score_path(model, method, dataset, seed):
    return f"results/pretrain/{model}/{method}/{dataset}/seed{seed}.parquet"


def pretrain_outputs():
    outs = ["results/pretrain/scores.parquet", "results/pretrain/figure2.png"]
    for stem in ("table5", "best_epochs", "table5_vs_paper"):
        outs += [f"results/pretrain/{stem}.{ext}" for ext in ("md", "csv", "tex")]
    return outs


def pretrain_model_dir(wildcards):
    return model_spec(wildcards.model)["path"]


rule pretrain:
    """Continue pre-training one model on one dataset's unique texts with one method and seed."""
    input:
        texts="results/datasets/{dataset}/texts.parquet",
        splits="results/datasets/{dataset}/splits.parquet",
        model=pretrain_model_dir,
    output:
        scores="results/pretrain/{model}/{method}/{dataset}/seed{seed}.parquet",
        checkpoint=directory("resources/pretrain/{model}/{method}/{dataset}/seed{seed}"),
    wildcard_constraints:
        model=alternatives(PT_MODELS),
        method=alternatives(PT_METHODS),
        dataset=alternatives(PT_DATASETS),
        seed=r"-?\d+",
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
    threads: PRETRAIN.get("threads", 2)
    resources:
        gpu=1,
    log:
        "logs/pretrain/{model}/{method}/{dataset}/seed{seed}.log",
    benchmark:
        "results/benchmarks/pretrain/{model}/{method}/{dataset}/seed{seed}.tsv"
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
    params:
        baseline_keys=[(m, d) for m in PT_MODELS for d in PT_DATASETS],
        table_epochs={m: s["table_epochs"] for m, s in PRETRAIN.get("methods", {}).items()},
        budgets={m: s["budget"] for m, s in PRETRAIN.get("methods", {}).items()},
        model_names={m: s.get("name", m) for m, s in config["models"].items()},
    log:
        "logs/pretrain/report.log",
    script:
        "../scripts/pretrain_report.py"
