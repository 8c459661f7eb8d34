# Embeddings trained for clustering (Table 6): SimCSE, ClusterNS, COB, its triplet baseline and argue-style pair
# objectives, one job per (model, method, protocol variant, dataset, seed) under the leak-free protocol of
# src/tecb/adapt/protocol.py; the report rule writes Table 6, the training curves and the costs.


ADAPT = config.get("adapt", {})
AD_MODELS = list(ADAPT.get("models", []))
AD_METHODS = list(ADAPT.get("methods", {}))
AD_DATASETS = list(ADAPT.get("datasets") or DATASETS)
AD_SEEDS = [int(s) for s in ADAPT.get("seeds", [SEED])]
AD_PROTOCOL = ADAPT.get("protocol", {})
AD_TABLE_FORMATS = ["md", "csv", "tex"]


def adapt_variants(method):
    """The protocol variants of a method (tecb.adapt.protocol.variants_of)."""
    from tecb.adapt.protocol import variants_of

    return variants_of(method, AD_PROTOCOL.get("supervised", ["lodo", "disjoint"]))


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


def adapt_path(*parts):
    return result("adapt", *parts)


def adapt_score_path(model, method, variant, dataset, seed):
    return adapt_path(model, method, variant, dataset, f"seed{seed}.parquet")


def adapt_model_path(model, method, variant, dataset, seed):
    return result("checkpoints", model, f"{method}-{variant}", dataset, f"seed{seed}")


def adapt_timing_path(model, method, variant, dataset, seed):
    return job_timing_path("adapt", model, method, variant, dataset, f"seed{seed}")


def adapt_source_of(dataset):
    return config["datasets"][dataset]["source"]


def adapt_train_datasets(wildcards):
    """The datasets a job reads: the evaluated one first, then (lodo) every other configured dataset of another
    source; the protocol drops what shares a text or a label with the evaluated one."""
    names = [wildcards.dataset]
    if wildcards.variant == "lodo":
        names += [
            d
            for d in DATASETS
            if adapt_source_of(d) != adapt_source_of(wildcards.dataset)
        ]
    return names


def adapt_reply_source():
    """The forum's corpus.sqlite3 (argue's reply pairs), or None."""
    name = AD_PROTOCOL.get("reply_source")
    if not name or name not in config["sources"]:
        return None
    if "reply" not in AD_PROTOCOL.get("argue_objectives", ["order", "reply"]):
        return None
    return source_path(name)


def adapt_inputs(wildcards):
    names = adapt_train_datasets(wildcards)
    inputs = {
        "texts": [texts_path(d) for d in names],
        "splits": [splits_path(d) for d in names],
        "model": model_spec(wildcards.model)["path"],
    }
    posts = adapt_reply_source()
    if wildcards.method == "argue" and posts:
        inputs["posts"] = posts
    return inputs


def check_adapt_config():
    """Cross-references of the `adapt` section, reported with the offending key."""
    if not ADAPT.get("enabled"):
        return
    for model in AD_MODELS:
        if model not in config["models"]:
            raise ValueError(
                f"config: adapt.models names {model!r}, not a key of `models`"
            )
        if model_spec(model)["kind"] not in ("huggingface", "local", "tiny-bert"):
            raise ValueError(
                f"config: adapt.models.{model} must be a transformer checkpoint, not tfidf"
            )
    for dataset in AD_DATASETS:
        if dataset not in config["datasets"]:
            raise ValueError(
                f"config: adapt.datasets names {dataset!r}, not a key of `datasets`"
            )
        if "lodo" in AD_VARIANTS and not [
            d for d in DATASETS if adapt_source_of(d) != adapt_source_of(dataset)
        ]:
            raise ValueError(
                f"config: adapt.protocol.supervised has lodo, but no configured dataset has a source other than "
                f"{dataset}'s ({adapt_source_of(dataset)}) to train on"
            )
    if ADAPT["algorithm"] not in config["algorithms"]:
        raise ValueError(
            f"config: adapt.algorithm = {ADAPT['algorithm']!r} is not a key of `algorithms`"
        )
    if not AD_METHODS:
        raise ValueError("config: adapt.methods is empty")


check_adapt_config()


def adapt_outputs():
    outs = [adapt_path("scores.parquet"), adapt_path("figure_training.png")]
    outs += [adapt_path(f"table6.{ext}") for ext in AD_TABLE_FORMATS + ["html"]]
    outs += [result("timings", "adapt", f"costs.{ext}") for ext in ("md", "csv")]
    return outs


rule adapt:
    """Train one model with one method under one protocol variant for one evaluated dataset and seed."""
    input:
        unpack(adapt_inputs),
    output:
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
    threads: ADAPT.get("threads", 2)
    resources:
        gpu=1,
    params:
        names=adapt_train_datasets,
        sources=lambda wildcards: [
            adapt_source_of(d) for d in adapt_train_datasets(wildcards)
        ],
        settings=lambda wildcards: ADAPT["methods"][wildcards.method],
        protocol=AD_PROTOCOL,
        algorithm=lambda wildcards: config["algorithms"][
            ADAPT.get("algorithm", "kmeans")
        ],
        device=ADAPT.get("device", "auto"),
        eval_every=ADAPT.get("eval_every"),
        eval_batch_size=ADAPT.get("eval_batch_size", 32),
        eval_max_length=lambda wildcards: ADAPT.get("eval_max_length")
        or config["models"][wildcards.model].get("max_seq_length"),
        eval_seed=SEED,
    script:
        "../scripts/adapt.py"


rule adapt_report:
    """Table 6 (adapted vs base model, intervals, paired tests), the training curves and the training costs."""
    input:
        scores=[adapt_score_path(*key) for key in AD_RUNS],
        timings=[adapt_timing_path(*key) for key in AD_RUNS],
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
        costs=[result("timings", "adapt", f"costs.{ext}") for ext in ("md", "csv")],
    log:
        log_path("adapt", "report.log"),
    conda:
        "../../envs/pretrain.yaml"
    params:
        jobs=AD_RUNS,
        formats=AD_TABLE_FORMATS,
        statistics=config.get("tables", {}).get("statistics", {}),
        seed=SEED,
        model_names={m: MODEL_NAMES.get(m, m) for m in AD_MODELS},
    script:
        "../scripts/adapt_report.py"
