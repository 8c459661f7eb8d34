# Config cross-checks, targets and input functions of the rules in pretrain.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


def check_pretrain_config():
    """Cross-references of the `pretrain` section, reported with the offending key."""
    if not PRETRAIN["enabled"]:
        return
    for model in PT_MODELS:
        if model not in config["models"]:
            raise ValueError(
                f"config: pretrain.models names {model!r}, not a key of `models`"
            )
        if model_spec(model)["kind"] not in ("huggingface", "local", "tiny-bert"):
            raise ValueError(
                f"config: pretrain.models.{model} must be a transformer checkpoint, not tfidf"
            )
    for dataset in PT_DATASETS:
        if dataset not in config["datasets"]:
            raise ValueError(
                f"config: pretrain.datasets names {dataset!r}, not a key of `datasets`"
            )
    algorithm = PRETRAIN["algorithm"]
    if (algorithm, "none") not in CONFIGURATIONS:
        raise ValueError(
            f"config: pretrain.algorithm = {algorithm!r} needs the configuration ({algorithm}, none) for its baseline"
        )


def pretrain_outputs():
    """Every file of the pretrain_report rule (targets of `rule all` when pre-training is enabled)."""
    outs = [pretrain_path("scores.parquet"), pretrain_path("figure2.png")]
    for stem in ("table5", "best_epochs", "table5_vs_paper"):
        outs += [pretrain_path(f"{stem}.{ext}") for ext in PT_TABLE_FORMATS + ["html"]]
    return outs


def pretrain_unlabelled_path(dataset):
    return pretrain_path("unlabelled", f"{dataset}.parquet")


def pretrain_train_texts(wildcards):
    """The texts a pretrain job trains on when not its dataset's own: the source's unlabelled books."""
    if wildcards.dataset in PRETRAIN["unlabelled"]:
        return pretrain_unlabelled_path(wildcards.dataset)
    return []


def pretrain_model_dir(wildcards):
    """The model directory a pretrain job starts from (model_spec's path)."""
    return model_spec(wildcards.model)["path"]
