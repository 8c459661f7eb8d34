# Adaptive pre-training (paper Table 5, Figure 2): continue pre-training a model on one dataset's
# texts with WWM or TSDAE, score k-means on raw embeddings at each scheduled epoch.


include: "functions/pretrain.smk"


PRETRAIN = config["pretrain"]  # every key filled by the schema's defaults
PT_MODELS = list(PRETRAIN["models"])
PT_METHODS = list(PRETRAIN["methods"])
PT_DATASETS = list(PRETRAIN["datasets"] or DATASETS)
PT_SEEDS = [int(s) for s in PRETRAIN["seeds"]]


# (model, method, dataset, seed) of every pre-training job; the tables' formats beside their .html
PT_RUNS = [
    (m, method, d, s)
    for m in PT_MODELS
    for method in PT_METHODS
    for d in PT_DATASETS
    for s in PT_SEEDS
]
PT_TABLE_FORMATS = ["md", "csv", "tex"]


rule pretrain:
    """Continue pre-training one model on one dataset's unique texts with one method and seed."""
    input:
        texts=texts_path("{dataset}"),
        splits=splits_path("{dataset}"),
        model=pretrain_model_dir,
        train_texts=pretrain_train_texts,
    output:
        **pretrain_labels_output(),
        scores=pretrain_score_path("{model}", "{method}", "{dataset}", "{seed}"),
        checkpoint=directory(
            pretrain_checkpoint_dir("{model}", "{method}", "{dataset}", "{seed}")
        ),
        timings=job_timing_path(
            "pretrain", "{model}", "{method}", "{dataset}", "seed{seed}"
        ),
    log:
        log_path("pretrain", "{model}", "{method}", "{dataset}", "seed{seed}.log"),
    benchmark:
        benchmark_path("pretrain", "{model}", "{method}", "{dataset}", "seed{seed}.tsv")
    wildcard_constraints:
        model=alternatives(PT_MODELS),
        method=alternatives(PT_METHODS),
        dataset=alternatives(PT_DATASETS),
        seed=r"-?\d+",
    conda:
        "../../envs/pretrain.yaml"
    threads: PRETRAIN["threads"]
    resources:
        gpu=int(PRETRAIN["device"] != "cpu"),  # device cpu: no GPU asked, jobs run side by side
    params:
        method_params=lambda wildcards: {
            k: v
            for k, v in PRETRAIN["methods"][wildcards.method].items()
            if k not in ("epochs", "budget", "table_epochs")
        },
        epochs=lambda wildcards: PRETRAIN["methods"][wildcards.method]["epochs"],
        algorithm=lambda wildcards: algorithm_spec(PRETRAIN["algorithm"]),
        device=PRETRAIN["device"],
        eval_batch_size=PRETRAIN["eval_batch_size"],
        eval_seed=SEED,
        resume_every=PRETRAIN["resume_every"],
    script:
        "../scripts/pretrain.py"


rule pretrain_unlabelled_texts:
    """The unlabelled books of a dataset's source (pretrain.unlabelled), to train on books never evaluated."""
    input:
        source=dataset_source,
        evaluated=texts_path("{dataset}"),
    output:
        texts=pretrain_unlabelled_path("{dataset}"),
    log:
        log_path("pretrain", "unlabelled", "{dataset}.log"),
    wildcard_constraints:
        dataset=alternatives(PT_DATASETS),
    conda:
        "../../envs/datasets.yaml"
    params:
        variant=lambda wildcards: config["datasets"][wildcards.dataset]["text"],
        n_texts=lambda wildcards: PRETRAIN["unlabelled"][wildcards.dataset]["n_texts"],
        seed=SEED,
    script:
        "../scripts/pretrain_unlabelled.py"


rule pretrain_report:
    """Table 5 (mean, SD, delta vs. the un-adapted model), best epochs, the paper comparison, Figure 2."""
    input:
        scores=[pretrain_score_path(*key) for key in PT_RUNS],
        baselines=[
            score_path(m, d, "none", PRETRAIN["algorithm"])
            for m in PT_MODELS
            for d in PT_DATASETS
        ],
        reference=project_path(PRETRAIN["reference"]),
        splits=[splits_path(d) for d in PT_DATASETS],  # their provenance: comparable with the paper's?
        # tables.statistics.labels: the predictions the text-level bootstrap of Table 5 and its contrasts reads
        labels=pretrain_report_labels,
        baseline_labels=pretrain_report_baseline_labels,
    output:
        scores=pretrain_path("scores.parquet"),
        figure2=report(
            pretrain_path("figure2.png"),
            caption="../report/figure2.rst",
            category="Adaptive pre-training",
            labels={"item": "Figure 2"},
        ),
        table5=[pretrain_path(f"table5.{ext}") for ext in PT_TABLE_FORMATS],
        table5_html=report(
            pretrain_path("table5.html"),
            caption="../report/table5.rst",
            category="Adaptive pre-training",
            labels={"item": "Table 5"},
        ),
        best_epochs=[pretrain_path(f"best_epochs.{ext}") for ext in PT_TABLE_FORMATS],
        best_epochs_html=report(
            pretrain_path("best_epochs.html"),
            caption="../report/best_epochs.rst",
            category="Adaptive pre-training",
            labels={"item": "best epochs"},
        ),
        table5_vs_paper=[
            pretrain_path(f"table5_vs_paper.{ext}") for ext in PT_TABLE_FORMATS
        ],
        table5_vs_paper_html=report(
            pretrain_path("table5_vs_paper.html"),
            caption="../report/table5.rst",
            category="Adaptive pre-training",
            labels={"item": "Table 5 beside the paper"},
        ),
        contrasts=[pretrain_path(f"contrasts.{ext}") for ext in PT_TABLE_FORMATS],
    log:
        log_path("pretrain", "report.log"),
    conda:
        "../../envs/pretrain.yaml"
    params:
        seed_keys=PT_RUNS,
        formats=PT_TABLE_FORMATS,
        baseline_keys=[(m, d) for m in PT_MODELS for d in PT_DATASETS],
        table_epochs={m: s["table_epochs"] for m, s in PRETRAIN["methods"].items()},
        budgets={m: s["budget"] for m, s in PRETRAIN["methods"].items()},
        model_names={
            m: MODEL_NAMES[m]
            for m in PT_MODELS
            if m in MODEL_NAMES  # pre-training off: its models may be gone
        },
        datasets=PT_DATASETS,
        statistics=config["tables"]["statistics"],
        contrasts=config["tables"]["contrasts"],
        seed=SEED,
    script:
        "../scripts/pretrain_report.py"
