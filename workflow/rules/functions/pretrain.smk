# Targets and input functions of the rules in pretrain.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


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


def pretrain_report_labels(wildcards):
    """Every pretrain job's labels file, in PT_RUNS' order; none when tables.statistics.labels is off."""
    return (
        [pretrain_labels_path(*key) for key in PT_RUNS] if statistics_labels() else []
    )


def pretrain_report_baseline_labels(wildcards):
    """The un-adapted models' k-means/raw labels files, in the baselines' order; none when the labels are off."""
    if not statistics_labels():
        return []
    return [
        labels_path(m, d, "none", PRETRAIN["algorithm"])
        for m in PT_MODELS
        for d in PT_DATASETS
    ]


def pretrain_labels_output():
    """The pretrain rule's `labels` output where tables.statistics.labels is on, else none (so a results folder
    made before the jobs kept their predictions is complete without them)."""
    if not statistics_labels():
        return {}
    return {
        "labels": pretrain_labels_path("{model}", "{method}", "{dataset}", "{seed}")
    }
