# Embeddings trained for clustering (Table 6): SimCSE, ClusterNS, COB, its triplet baseline and argue-style pair
# objectives, one job per (model, method, protocol variant, dataset, seed) under the leak-free protocol of
# src/tecb/adapt/protocol.py; the report rule writes Table 6, the training curves and the costs.


include: "functions/adapt.smk"


ADAPT = config["adapt"]  # every key filled by the schema's defaults
AD_MODELS = list(ADAPT["models"])
AD_METHODS = list(ADAPT["methods"])
AD_DATASETS = list(ADAPT["datasets"] or DATASETS)
AD_SEEDS = [int(s) for s in ADAPT["seeds"]]
AD_PROTOCOL = ADAPT["protocol"]
AD_TABLE_FORMATS = ["md", "csv", "tex"]


# (model, method, variant, dataset, seed) of every training job
AD_RUNS = [
    (m, method, variant, d, s)
    for m in AD_MODELS
    for method in AD_METHODS
    for variant in adapt_variants(method)
    for d in AD_DATASETS
    for s in AD_SEEDS
]
AD_VARIANTS = sorted({key[2] for key in AD_RUNS})
# arms on the models' frozen, cached embeddings (tecb.adapt.frozen_jobs): Table 6 rows beside the methods
AD_FROZEN = list(ADAPT["frozen"]["arms"])
AD_FROZEN_MODELS = list(
    ADAPT["frozen"]["models"] or AD_MODELS
)  # any kind: only cached vectors are read
AD_FROZEN_RUNS = [
    (m, arm, frozen_variant(arm), d, s)
    for m in AD_FROZEN_MODELS
    for arm in AD_FROZEN
    for d in AD_DATASETS
    for s in AD_SEEDS
]
AD_REPORTED = AD_RUNS + AD_FROZEN_RUNS


rule adapt:
    """Train one model with one method under one protocol variant for one evaluated dataset and seed."""
    input:
        unpack(adapt_inputs),
    output:
        **adapt_labels_output(),
        # beside it, while the job runs: {model}.resume.pt, the training state a killed job continues from
        # (tecb.adapt.jobs.resume_of; adapt.resume_every changes no byte, so it is no param)
        scores=adapt_score_path(
            "{model}", "{method}", "{variant}", "{dataset}", "{seed}"
        ),
        model=directory(
            adapt_model_path("{model}", "{method}", "{variant}", "{dataset}", "{seed}")
        ),
        timings=adapt_timing_path(
            "{model}", "{method}", "{variant}", "{dataset}", "{seed}"
        ),
    log:
        log_path(
            "adapt", "{model}", "{method}", "{variant}", "{dataset}", "seed{seed}.log"
        ),
    benchmark:
        benchmark_path(
            "adapt", "{model}", "{method}", "{variant}", "{dataset}", "seed{seed}.tsv"
        )
    wildcard_constraints:
        model=alternatives(AD_MODELS),
        method=alternatives(AD_METHODS),
        variant=alternatives(AD_VARIANTS),
        dataset=alternatives(AD_DATASETS),
        seed=r"-?\d+",
    conda:
        "../../envs/pretrain.yaml"
    threads: ADAPT["threads"]
    resources:
        gpu=int(ADAPT["device"] != "cpu"),  # device cpu: no GPU asked, jobs run side by side
    params:
        names=adapt_train_datasets,
        sources=lambda wildcards: [
            adapt_source_of(d) for d in adapt_train_datasets(wildcards)
        ],
        settings=adapt_settings,
        # the settings the embed stage loads and encodes the model with (one code path: step 0 is its score)
        encoder=embed_settings,
        protocol=adapt_job_protocol,
        algorithm=lambda wildcards: algorithm_spec(ADAPT["algorithm"]),
        device=ADAPT["device"],
        eval_every=ADAPT["eval_every"],
        eval_batch_size=ADAPT["eval_batch_size"],
        eval_max_length=lambda wildcards: ADAPT["eval_max_length"]
        or config["models"][wildcards.model].get("max_seq_length"),
        eval_seed=SEED,
        strict=ADAPT["strict"],
        text_kind=lambda wildcards: config["datasets"][wildcards.dataset].get("text"),
    script:
        "../scripts/adapt.py"


rule adapt_frozen:
    """One arm on a model's frozen, cached embeddings of one evaluated dataset and seed: fitted as its variant
    allows, the base and the arm scored on the same splits (Table 6's format: step 0 and step 1).
    """
    input:
        unpack(frozen_inputs),
    output:
        **adapt_labels_output(),
        scores=adapt_score_path(
            "{model}", "{method}", "{variant}", "{dataset}", "{seed}"
        ),
        timings=adapt_timing_path(
            "{model}", "{method}", "{variant}", "{dataset}", "{seed}"
        ),
    log:
        log_path(
            "adapt", "{model}", "{method}", "{variant}", "{dataset}", "seed{seed}.log"
        ),
    wildcard_constraints:
        model=alternatives(AD_FROZEN_MODELS),
        method=alternatives(AD_FROZEN),
        variant=alternatives(sorted({key[2] for key in AD_FROZEN_RUNS})),
        dataset=alternatives(AD_DATASETS),
        seed=r"-?\d+",
    conda:
        "../../envs/pretrain.yaml"
    threads: ADAPT["threads"]
    params:
        source=lambda wildcards: adapt_source_of(wildcards.dataset),
        settings=lambda wildcards: ADAPT["frozen"][wildcards.method],
        protocol=adapt_job_protocol,
        algorithm=lambda wildcards: algorithm_spec(ADAPT["algorithm"]),
        eval_seed=SEED,
        text_kind=lambda wildcards: config["datasets"][wildcards.dataset].get("text"),
    script:
        "../scripts/adapt_frozen.py"


rule adapt_frozen_pairs:
    """The source's unlabelled books (never evaluated) as (title, title + blurb) pairs, embedded with the model as
    the embed stage embeds an S2S and a P2P dataset: what the title->blurb arms are fitted on.
    """
    input:
        source=source_path(ADAPT["frozen"]["pairs_source"]),
        evaluated=[texts_path(d) for d in DATASETS],
        model=model_input,
    output:
        pairs=frozen_pairs_path("{model}"),
    log:
        log_path("adapt", "frozen_pairs", "{model}.log"),
    wildcard_constraints:
        model=alternatives(AD_FROZEN_MODELS),
    conda:
        "../../envs/embed.yaml"
    threads: ADAPT["threads"]
    params:
        model_spec=lambda wildcards: model_spec(wildcards.model),
        embed_options=config["embed"],
        # the S2S and the P2P dataset of the source whose per-dataset settings the titles and the texts get
        datasets=lambda wildcards: frozen_pair_datasets(),
        vector_seed=embed_seed,
        max_pairs=ADAPT["frozen"]["max_pairs"],
        seed=SEED,
    script:
        "../scripts/adapt_frozen_pairs.py"


rule adapt_report:
    """Table 6 (adapted vs base model, intervals, paired tests), the training curves and the training costs."""
    input:
        scores=[adapt_score_path(*key) for key in AD_REPORTED],
        timings=[adapt_timing_path(*key) for key in AD_REPORTED],
        splits=[splits_path(d) for d in AD_DATASETS],
        # tables.statistics.labels: each job's predictions, Table 6's and the contrasts' text-level bootstrap
        labels=(
            [adapt_labels_path(*key) for key in AD_REPORTED]
            if statistics_labels()
            else []
        ),
        chance=(
            [chance_path(d) for d in AD_DATASETS]
            if config["tables"]["chance"]["enabled"]
            else []
        ),
    output:
        scores=adapt_path("scores.parquet"),
        figure=report(
            adapt_path("figure_training.png"),
            caption="../report/adapt_training.rst",
            category="Training for clustering",
            labels={"item": "V-measure over training steps"},
        ),
        table6=[adapt_path(f"table6.{ext}") for ext in AD_TABLE_FORMATS],
        table6_html=report(
            adapt_path("table6.html"),
            caption="../report/table6.rst",
            category="Training for clustering",
            labels={"item": "Table 6"},
        ),
        costs=[adapt_costs_path(ext) for ext in ("md", "csv")],
        contrasts=[adapt_path(f"contrasts.{ext}") for ext in AD_TABLE_FORMATS],
    log:
        log_path("adapt", "report.log"),
    conda:
        "../../envs/pretrain.yaml"
    params:
        jobs=AD_REPORTED,
        formats=AD_TABLE_FORMATS,
        statistics=config["tables"]["statistics"],
        contrasts=config["tables"]["contrasts"],
        seed=SEED,
        model_names={m: MODEL_NAMES.get(m, m) for m in AD_MODELS + AD_FROZEN_MODELS},
        datasets=AD_DATASETS,
    script:
        "../scripts/adapt_report.py"
