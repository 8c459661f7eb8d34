# Report items of the rules in tables.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


def table_report(stem):
    """The HTML rendering of a table, as a report item with its caption."""
    return report(
        table_path(stem, "html"),
        caption=f"../report/{stem.replace('_vs_paper', '')}.rst",
        category="Tables",
        subcategory="beside the paper" if stem.endswith("_vs_paper") else "this run",
        labels={"table": stem},
    )


def chance_inputs(wildcards):
    """The chance file of every dataset when tables.chance is on."""
    if not config["tables"]["chance"]["enabled"]:
        return []
    return [chance_path(d) for d in DATASETS]


def statistics_labels():
    """Whether the statistics read the saved predictions (tables.statistics and its labels on): Table 2's, Table
    5's, Table 6's and their contrasts' text-level bootstrap (tecb.report.bootstrap)."""
    statistics = config["tables"]["statistics"]
    return bool(statistics["enabled"] and statistics["labels"])


def table2_labels_keys():
    """(model, dataset, reduction, algorithm) of Table 2's configuration for every model and dataset: the labels
    files its statistics bootstrap over texts (tecb.report.bootstrap); none when tables.statistics or its
    labels are off.
    """
    if not statistics_labels():
        return []
    table2 = config["tables"]["table2"]
    return [
        [m, d, table2["reduction"], table2["algorithm"]]
        for m in MODELS
        for d in DATASETS
    ]


def table2_labels(wildcards):
    """The labels file of each of :func:`table2_labels_keys`, in its order."""
    return [labels_path(*key) for key in table2_labels_keys()]


def tables_mem_mb(wildcards, input, attempt):
    """The tables job's memory by its inputs (tecb.report.bootstrap.job_memory_mb: the text-level bootstrap's
    weights and tables at the largest pool and split of Table 2's labels files), x attempt; re-evaluated once the
    inputs exist."""
    from tecb.report.bootstrap import job_memory_mb

    keys = table2_labels_keys()
    return attempt * job_memory_mb(
        dict(zip(DATASETS, input.splits)),
        [(key[1], path) for key, path in zip(keys, input.labels)],
    )


def chance_mteb_v2_inputs(wildcards):
    """The v2 chance file of every dataset when tables.chance is on (read by the mteb_v2_table rule)."""
    if not config["tables"]["chance"]["enabled"]:
        return []
    return [chance_mteb_v2_path(d) for d in DATASETS]


# --- kind: mteb (issue 37) -----------------------------------------------------------------


def trained_on(wildcards=None):
    """Model key -> datasets whose data a `kind: mteb` model was trained on (Table 2's marks; imports mteb only
    for configs with such a model)."""
    mteb_models = models_of_kind("mteb")
    if not mteb_models:
        return {}
    from tecb.embed.mteb_model import model_meta, trained_on as flag

    out = {}
    for m in mteb_models:
        meta = model_meta(config["models"][m]["name"])
        out[m] = [d for d in DATASETS if flag(meta, d) == "yes"]
    return out


def model_identities(wildcards=None):
    """Model key -> (name, revision) as mteb's results name it (tecb.report.mteb_results.model_identity)."""
    from tecb.report.mteb_results import model_identity

    return {m: list(model_identity(m, spec)) for m, spec in config["models"].items()}


def models_for_tables():
    """The models' entries as the models table's job reads them: a local `path` by its folder's name only (the
    report lists the params of the jobs writing its items, and tables and report are meant for sharing).
    """
    return {
        key: (
            {**spec, "path": os.path.basename(os.path.normpath(str(spec["path"])))}
            if spec.get("path")
            else spec
        )
        for key, spec in config["models"].items()
    }
