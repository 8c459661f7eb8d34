# Targets and input functions of the rules in adapt.smk (its path functions are in
# common.smk), which includes this file first. Kept apart from the rules: `snakemake --lint` flags a file that
# mixes rules and functions.


def adapt_variants(method):
    """The jobs' variants of a method (tecb.adapt.protocol.variants_of): its protocol variants, argue's objectives."""
    from tecb.adapt.protocol import variants_of

    return variants_of(
        method,
        AD_PROTOCOL["supervised"],
        AD_PROTOCOL["argue_objectives"],
        ADAPT["methods"].get("simcse", {}).get("augmentation"),
    )


def adapt_job_protocol(wildcards):
    """The protocol settings a job reads: not the lists of variants and objectives that run (a job's own is its
    wildcard), so a variant added to the config reruns no finished job (params are a rerun trigger).
    """
    return {
        key: value
        for key, value in AD_PROTOCOL.items()
        if key not in ("supervised", "argue_objectives")
    }


def adapt_settings(wildcards):
    """One job's method settings (tecb.adapt.protocol.arm_settings: a SimCSE arm named by its view trains with it),
    with adapt.freeze_word_embeddings where it is true."""
    from tecb.adapt.protocol import arm_settings
    from tecb.adapt.training import CONTROLS

    settings = arm_settings(
        wildcards.method, wildcards.variant, ADAPT["methods"][wildcards.method]
    )
    if ADAPT["freeze_word_embeddings"] and wildcards.method not in CONTROLS:
        # only where set: a job of the default trains as before (its params unchanged)
        settings = {**settings, "freeze_word_embeddings": True}
    return settings


def adapt_source_of(dataset):
    return config["datasets"][dataset]["source"]


def adapt_train_datasets(wildcards):
    """The datasets a job reads: the evaluated one first, then (lodo) every other configured dataset; the protocol
    leaves out those of the evaluated dataset's corpus (text containment) and drops what shares a text or a label
    with the evaluated one."""
    from tecb.adapt.training import CONTROLS

    names = [wildcards.dataset]
    # lodo trains on the others (a control trains on nothing); argue reads them for its sibling datasets' texts
    lodo = wildcards.variant == "lodo" and wildcards.method not in CONTROLS
    if lodo or wildcards.method == "argue":
        names += [d for d in DATASETS if d != wildcards.dataset]
    return names


def adapt_reply_source():
    """The forum's corpus.sqlite3 (argue's reply pairs), or None."""
    name = AD_PROTOCOL["reply_source"]
    if not name or name not in config["sources"]:
        return None
    if "reply" not in AD_PROTOCOL["argue_objectives"]:
        return None
    return source_path(name)


def adapt_inputs(wildcards):
    names = adapt_train_datasets(wildcards)
    inputs = {
        "texts": [texts_path(d) for d in names],
        "splits": [splits_path(d) for d in names],
        "model": model_spec(wildcards.model)["path"],
        # the benchmark's embeddings of the evaluated dataset: step 0 is asserted to be them
        "benchmark": embedding_path(wildcards.model, wildcards.dataset),
    }
    posts = adapt_reply_source()
    if wildcards.method == "argue" and posts:
        inputs["posts"] = posts
    return inputs


def adapt_outputs():
    outs = [adapt_path("scores.parquet"), adapt_path("figure_training.png")]
    outs += [adapt_path(f"table6.{ext}") for ext in AD_TABLE_FORMATS + ["html"]]
    outs += [adapt_costs_path(ext) for ext in ("md", "csv")]
    return outs


def frozen_variant(arm):
    """An arm's protocol variant (tecb.adapt.frozen_jobs.VARIANTS): the Table 6 key's third part."""
    from tecb.adapt.frozen_jobs import VARIANTS

    return VARIANTS[arm]


def frozen_inputs(wildcards):
    """A frozen arm's inputs: the model's cached embeddings of the dataset, its texts and splits, and for a
    title->blurb arm the embedded unseen pairs."""
    from tecb.adapt.frozen_jobs import PAIR_ARMS

    inputs = {
        "embeddings": embedding_path(wildcards.model, wildcards.dataset),
        "texts": texts_path(wildcards.dataset),
        "splits": splits_path(wildcards.dataset),
    }
    if wildcards.method in PAIR_ARMS:
        inputs["pairs"] = frozen_pairs_path(wildcards.model)
    return inputs


def frozen_pairs_path(model):
    return adapt_path("frozen_pairs", f"{model}.parquet")


def frozen_pair_datasets():
    """The configured S2S and P2P dataset of adapt.frozen.pairs_source (the other kind's where it has only one)."""
    # tecb.configcheck: a configured dataset has this source
    source = ADAPT["frozen"]["pairs_source"]
    of_source = [d for d, e in config["datasets"].items() if e.get("source") == source]
    kinds = {d: (config["datasets"][d].get("text") or "").lower() for d in of_source}
    return [
        ([d for d in of_source if kinds[d] == kind] or of_source)[0]
        for kind in ("s2s", "p2p")
    ]


def adapt_labels_output():
    """The `labels` output of the adapt and adapt_frozen rules where tables.statistics.labels is on, else none
    (so a results folder made before the jobs kept their predictions is complete without them).
    """
    if not statistics_labels():
        return {}
    path = adapt_labels_path("{model}", "{method}", "{variant}", "{dataset}", "{seed}")
    return {"labels": path}
