# Helpers and input functions shared by the rules. Paths follow design §4.

import os
import re


def put_library_on_pythonpath():
    """Let jobs import tecb from src/ where it is not pip-installed (conda envs, cluster nodes)."""
    paths = [os.path.join(workflow.basedir, "src"), os.environ.get("PYTHONPATH", "")]
    os.environ.update(PYTHONPATH=os.pathsep.join(p for p in paths if p))


put_library_on_pythonpath()


# --- paths: every results/ and logs/ pattern of the workflow is written here, once -----------
# A run writes under results/{run}/ and logs/{run}/ (`run: null`: results/ and logs/). Jobs that write
# under resources/ (downloads, hub models, Reddit) are shared by all runs and log under logs/ itself.

# The schema refuses run names that are folders inside results/ (its `run` entry lists them).
RUN = config.get("run") or ""
RESULTS = f"results/{RUN}" if RUN else "results"
LOGS = f"logs/{RUN}" if RUN else "logs"


def result(*parts):
    """A path under this run's results folder: result("tables", "table1.md")."""
    return os.path.join(RESULTS, *parts)


def log_path(*parts):
    """A log file of a job writing under results/: logs/{run}/..."""
    return os.path.join(LOGS, *parts)


def shared_log(*parts):
    """A log file of a job writing under resources/ (shared by all runs)."""
    return os.path.join("logs", *parts)


def benchmark_path(step, *parts):
    """A `benchmark:` file: results/{run}/benchmarks/{step}/..."""
    return result("benchmarks", step, *parts)


def texts_path(dataset):
    return result("datasets", dataset, "texts.parquet")


def splits_path(dataset):
    return result("datasets", dataset, "splits.parquet")


def embedding_path(model, dataset):
    return result("embeddings", model, f"{dataset}.parquet")


def reduced_path(model, dataset, reduction):
    return result("reduced", model, dataset, f"{reduction}.parquet")


def score_path(model, dataset, reduction, algorithm):
    return result("scores", model, dataset, reduction, f"{algorithm}.parquet")


def timing_path(model, dataset, reduction, algorithm):
    return result("timings", model, dataset, reduction, f"{algorithm}.parquet")


def labels_path(model, dataset, reduction, algorithm):
    return result("labels", model, dataset, reduction, f"{algorithm}.parquet")


SCORES = result("scores.parquet")


def table_path(stem, ext):
    return result("tables", f"{stem}.{ext}")


def figure_path(*parts):
    return result("figures", *parts)


def mteb_path(model, dataset):
    """MTEB's own layout (mteb.ResultCache(results/{run}/mteb) loads it): results/{model_dir}/{revision}/tecb.{dataset}.json."""
    from tecb.report.mteb_results import result_relpath

    return result(
        "mteb", "results", result_relpath(model, config["models"][model], dataset)
    )


def mteb_meta_path(model):
    """The model_meta.json beside a model's MTEB result files."""
    from tecb.report.mteb_results import model_folder

    return result(
        "mteb",
        "results",
        model_folder(model, config["models"][model]),
        "model_meta.json",
    )


def report_path(name):
    return result("report", name)


def mteb_v2_path(model, dataset):
    """MTEB v2 protocol scores of one (model, dataset) (scoring.smk)."""
    return result("mteb_v2", model, f"{dataset}.parquet")


def cluster_view_path(model, dataset):
    """The clusters-vs-labels page of one (model, dataset) (inspect.smk)."""
    return result("report", "clusters", model, f"{dataset}.html")


def pretrain_path(*parts):
    return result("pretrain", *parts)


def pretrain_score_path(model, method, dataset, seed):
    return pretrain_path(model, method, dataset, f"seed{seed}.parquet")


def pretrain_checkpoint_dir(model, method, dataset, seed):
    return result("checkpoints", model, method, dataset, f"seed{seed}")


def job_timing_path(step, *keys):
    """Durations of an embed or pretrain job (JSON): results/{run}/timings/{step}/{key}/.../{last key}.json."""
    return result("timings", step, *keys[:-1], f"{keys[-1]}.json")


# Shared resources (downloads, hub models, Reddit rehydration, demo inputs): not under a run.
DOWNLOADS = {
    "germeval2019": "resources/downloads/germeval2019t1-public-data-final.zip",
    "million_posts": "resources/downloads/million_post_corpus/corpus.sqlite3",
}
MILLION_POSTS_ARCHIVE = (
    "resources/downloads/million_post_corpus/million_post_corpus.tar.bz2"
)
REDDIT_IDS = "resources/reddit/submission_ids.txt"
REDDIT_SUBMISSIONS = "resources/reddit/submissions.parquet"
REDDIT_SUMMARY = "resources/reddit/rehydrate_summary.json"
REDDIT_CHECKPOINT = "resources/reddit/checkpoint.jsonl"
DEMO_INPUTS = {
    "germeval": "resources/demo/germeval2019.zip",
    "million_posts": "resources/demo/corpus.sqlite3",
    "reddit": "resources/demo/submissions.parquet",
}


def published_path(source):
    return f"resources/published/{source}/test.jsonl"


def hub_model_dir(model):
    """A prefetched hub model: shared by all runs."""
    return f"resources/models/{model}"


def built_model_dir(model):
    """A model built from this run's datasets (tiny-bert): under the run's results."""
    return result("models", model)


SEED = config["seed"]
DATASETS = list(config["datasets"])
MODELS = list(config["models"])
# display names (tables, figures, report): not an input of any expensive job
MODEL_NAMES = {m: spec.get("name", m) for m, spec in config["models"].items()}
CONFIGURATIONS = [(c["algorithm"], c["reduction"]) for c in config["configurations"]]
REDUCTIONS = sorted({r for _, r in CONFIGURATIONS if r != "none"})


def check_config():
    """Cross-references the JSON schema cannot express, reported with the offending key."""
    from tecb.data.datasets import builder_of, check_entry, check_source

    for name, ds in config["datasets"].items():
        if ds["source"] not in config["sources"]:
            raise ValueError(
                f"config: datasets.{name}.source names no key of `sources` (known: {', '.join(config['sources'])})"
            )
        source = config["sources"][ds["source"]]
        builder = builder_of(ds["source"], source, ds)
        # keys that do not apply to the builder (e.g. `text:` on custom, `url:` on a custom file)
        check_entry(name, ds, builder)
        check_source(ds["source"], source, builder)
    for algorithm, reduction in CONFIGURATIONS:
        if algorithm not in config["algorithms"]:
            raise ValueError(
                f"config: configuration ({algorithm}, {reduction}) names an unknown algorithm"
            )
        if reduction != "none" and reduction not in config["reductions"]:
            raise ValueError(
                f"config: configuration ({algorithm}, {reduction}) names an unknown reduction"
            )
    from tecb.cluster.algorithms import validate_algorithm

    for key, spec in config["algorithms"].items():
        validate_algorithm(
            key, spec
        )  # import-path methods: importable class, params in its signature
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
        return published_path(source)
    defaults = {**DOWNLOADS, "reddit": REDDIT_SUBMISSIONS}
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


# --- models --------------------------------------------------------------------------------


def model_spec(model):
    spec = dict(config["models"][model])
    spec.setdefault("kind", "huggingface")
    if spec["kind"] == "huggingface":
        spec["path"] = hub_model_dir(model)
    elif spec["kind"] == "tiny-bert":
        spec["path"] = built_model_dir(model)
    return spec


def model_input(wildcards):
    """The model directory an embed job reads (none for TF-IDF)."""
    spec = model_spec(wildcards.model)
    return [] if spec["kind"] == "tfidf" else [spec["path"]]


def gpus_for(wildcards):
    return 0 if model_spec(wildcards.model)["kind"] == "tfidf" else 1


# local models (embed.smk, the model_digest rule): their files' content is an input of their embed jobs


def model_digest_path(model):
    return result("models", f"{model}.sha256.json")


def model_digest_input(wildcards):
    """The content hash an embed job depends on: a `kind: local` model's, else none."""
    kind = model_spec(wildcards.model)["kind"]
    return [model_digest_path(wildcards.model)] if kind == "local" else []


def local_model_path(wildcards):
    return config["models"][wildcards.model]["path"]


def local_model_stat(wildcards):
    """Size and mtime of each file: a changed file reruns the digest even when its new mtime is older."""
    from tecb.embed.spec import model_files

    return {
        f: [os.stat(f).st_size, os.stat(f).st_mtime_ns]
        for f in model_files(local_model_path(wildcards))
    }


# --- clustering ----------------------------------------------------------------------------


def cluster_input(wildcards):
    """A cluster job reads the splits and either the raw embeddings (`none`) or one reduced file."""
    inputs = {"splits": splits_path(wildcards.dataset)}
    if wildcards.reduction == "none":
        inputs["embeddings"] = embedding_path(wildcards.model, wildcards.dataset)
    else:
        inputs["reduced"] = reduced_path(
            wildcards.model, wildcards.dataset, wildcards.reduction
        )
    return inputs


def cluster_threads(wildcards):
    """Ward and DBSTREAM run on one core; the others get `cluster.threads` (BLAS/OpenMP, HDBSCAN workers)."""
    from tecb.cluster.algorithms import threads_used

    method = config["algorithms"][wildcards.algorithm]["method"]
    return threads_used(method, config["cluster"]["threads"])


def cluster_mem_mb(wildcards, input, attempt):
    """The memory guard's estimate at the largest split (+ Python and the input), x attempt (a retry gets more);
    re-evaluated once the inputs exist."""
    from tecb.cluster.algorithms import job_memory_mb

    spec = config["algorithms"][wildcards.algorithm]
    points = input.reduced if wildcards.reduction != "none" else input.embeddings
    return attempt * job_memory_mb(
        spec["method"], spec.get("params") or {}, input.splits, points
    )


def reduce_mem_mb(wildcards, input, attempt):
    """The reduction's memory estimate at the largest split, x attempt."""
    from tecb.cluster.reduce import job_memory_mb

    return attempt * job_memory_mb(
        config["reductions"][wildcards.reduction], input.splits, input.embeddings
    )


# (model, dataset, reduction, algorithm) of every score file, in the order of score_files()
SCORE_KEYS = [(m, d, r, a) for m in MODELS for d in DATASETS for a, r in CONFIGURATIONS]


def score_files():
    return [score_path(*key) for key in SCORE_KEYS]


# --- targets -------------------------------------------------------------------------------


def all_outputs():
    # TABLE_FILES (tables.smk) and REPORT_TARGETS (report.smk): tables, figures, MTEB JSON, report pieces
    outputs = [SCORES] + TABLE_FILES + REPORT_TARGETS
    outputs += (
        SCORING_OUTPUTS + INSPECT_OUTPUTS
    )  # scoring.smk (MTEB v2), inspect.smk (cluster views)
    if config.get("pretrain", {}).get("enabled"):
        outputs += pretrain_outputs()  # workflow/rules/pretrain.smk
    if config.get("adapt", {}).get("enabled"):
        outputs += adapt_outputs()  # workflow/rules/adapt.smk
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


# (model, method, dataset, seed) of every pre-training job; the tables' formats beside their .html
PT_RUNS = [
    (m, method, d, s)
    for m in PT_MODELS
    for method in PT_METHODS
    for d in PT_DATASETS
    for s in PT_SEEDS
]
PT_TABLE_FORMATS = ["md", "csv", "tex"]


def pretrain_outputs():
    outs = [pretrain_path("scores.parquet"), pretrain_path("figure2.png")]
    for stem in ("table5", "best_epochs", "table5_vs_paper"):
        outs += [pretrain_path(f"{stem}.{ext}") for ext in PT_TABLE_FORMATS + ["html"]]
    return outs


def pretrain_model_dir(wildcards):
    return model_spec(wildcards.model)["path"]


# --- report items ------------------------------------------------------------------------


def table_report(stem):
    """The HTML rendering of a table, as a report item with its caption."""
    return report(
        table_path(stem, "html"),
        caption=f"../report/{stem.replace('_vs_paper', '')}.rst",
        category="Tables",
        subcategory="beside the paper" if stem.endswith("_vs_paper") else "this run",
        labels={"table": stem},
    )
