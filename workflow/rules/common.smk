# Helpers and input functions shared by the rules. Paths follow design §4.

import os
import re


def put_library_on_pythonpath():
    """Let jobs import tecb from src/ where it is not pip-installed (conda envs, cluster nodes)."""
    paths = [os.path.join(workflow.basedir, "src"), os.environ.get("PYTHONPATH", "")]
    os.environ.update(PYTHONPATH=os.pathsep.join(p for p in paths if p))


put_library_on_pythonpath()


SEED = config["seed"]
DATASETS = list(config["datasets"])
MODELS = list(config["models"])
CONFIGURATIONS = [(c["algorithm"], c["reduction"]) for c in config["configurations"]]
REDUCTIONS = sorted({r for _, r in CONFIGURATIONS if r != "none"})


def check_config():
    """Cross-references the JSON schema cannot express, reported with the offending key."""
    for name, ds in config["datasets"].items():
        if ds["source"] not in config["sources"]:
            raise ValueError(
                f"config: datasets.{name}.source = {ds['source']!r} is not a key of `sources`"
            )
    for algorithm, reduction in CONFIGURATIONS:
        if algorithm not in config["algorithms"]:
            raise ValueError(
                f"config: configuration ({algorithm}, {reduction}) names an unknown algorithm"
            )
        if reduction != "none" and reduction not in config["reductions"]:
            raise ValueError(
                f"config: configuration ({algorithm}, {reduction}) names an unknown reduction"
            )
    for key, model in config["models"].items():
        kind = model.get("kind", "huggingface")
        if kind == "huggingface" and "id" not in model:
            raise ValueError(f"config: models.{key} (kind huggingface) needs an `id`")
        if kind == "local" and "path" not in model:
            raise ValueError(f"config: models.{key} (kind local) needs a `path`")


check_config()


def models_of_kind(*kinds):
    return [
        m
        for m, spec in config["models"].items()
        if spec.get("kind", "huggingface") in kinds
    ]


def alternatives(names):
    """A wildcard constraint matching exactly ``names`` (and nothing when empty)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


# --- datasets ------------------------------------------------------------------------------


def source_path(source):
    """Where a source's raw file is: the config's local `path`, else the download target."""
    spec = config["sources"].get(source, {})
    if spec.get("path"):
        return spec["path"]
    if (
        spec.get("repo_id")
        or spec.get("builder") == "published"
        or source.startswith("published_")
    ):
        return f"resources/published/{source}/test.jsonl"
    defaults = {
        "germeval2019": "resources/downloads/germeval2019t1-public-data-final.zip",
        "million_posts": "resources/downloads/million_post_corpus/corpus.sqlite3",
        "reddit": "resources/reddit/submissions.parquet",
    }
    if source not in defaults:
        raise ValueError(
            f"config: sources.{source} has no `path` and nothing to download"
        )
    return defaults[source]


def dataset_source(wildcards):
    return source_path(config["datasets"][wildcards.dataset]["source"])


def dataset_source_spec(wildcards):
    """The parts of a dataset's source entry that decide how it is built (not how it is fetched)."""
    name = config["datasets"][wildcards.dataset]["source"]
    spec = config["sources"].get(name, {})
    return {
        name: {k: spec[k] for k in ("builder", "repo_id", "revision") if spec.get(k)}
    }


def texts_path(dataset):
    return f"results/datasets/{dataset}/texts.parquet"


def splits_path(dataset):
    return f"results/datasets/{dataset}/splits.parquet"


# --- models --------------------------------------------------------------------------------


def model_spec(model):
    spec = dict(config["models"][model])
    spec.setdefault("kind", "huggingface")
    if spec["kind"] in ("huggingface", "tiny-bert"):
        spec["path"] = f"resources/models/{model}"
    return spec


def model_input(wildcards):
    """The model directory an embed job reads (none for TF-IDF)."""
    spec = model_spec(wildcards.model)
    return [] if spec["kind"] == "tfidf" else [spec["path"]]


def gpus_for(wildcards):
    return 0 if model_spec(wildcards.model)["kind"] == "tfidf" else 1


# --- clustering ----------------------------------------------------------------------------


def reduced_path(model, dataset, reduction):
    return f"results/reduced/{model}/{dataset}/{reduction}.parquet"


def score_path(model, dataset, reduction, algorithm):
    return f"results/scores/{model}/{dataset}/{reduction}/{algorithm}.parquet"


def score_files():
    return [
        score_path(m, d, r, a)
        for m in MODELS
        for d in DATASETS
        for a, r in CONFIGURATIONS
    ]


# --- targets -------------------------------------------------------------------------------


TABLES = expand("results/tables/table{n}.{ext}", n=[1, 2, 3], ext=["md", "csv", "tex"])


def all_outputs():
    # TABLE_FILES (tables.smk) and REPORT_TARGETS (report.smk): tables, figures, MTEB JSON, report pieces
    outputs = ["results/scores.parquet"] + TABLE_FILES + REPORT_TARGETS
    if config.get("pretrain", {}).get("enabled"):
        outputs += pretrain_outputs()  # workflow/rules/pretrain.smk
    return outputs


# --- adaptive pre-training (workflow/rules/pretrain.smk) --------------------------------------


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


# --- report items ------------------------------------------------------------------------


def table_report(stem):
    """The HTML rendering of a table, as a report item with its caption."""
    return report(
        f"results/tables/{stem}.html",
        caption=f"../report/{stem.replace('_vs_paper', '')}.rst",
        category="Tables",
        subcategory="beside the paper" if stem.endswith("_vs_paper") else "this run",
        labels={"table": stem},
    )
