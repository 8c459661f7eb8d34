# What every stage needs: the library on PYTHONPATH, every path pattern (design §4), the config's shared
# lookups, helpers used by 3+ stages, the targets of `all`. The input, params and resources
# functions of a stage's rules are in workflow/rules/functions/STAGE.smk, included by STAGE.smk.

import atexit
import os
import re


def put_library_on_pythonpath():
    """Let jobs import tecb from src/ where it is not pip-installed (conda envs, cluster nodes)."""
    paths = [os.path.join(PROJECT_DIR, "src"), os.environ.get("PYTHONPATH", "")]
    os.environ.update(PYTHONPATH=os.pathsep.join(p for p in paths if p))


put_library_on_pythonpath()


def project_path(path):
    """A file the config names (tables.reference, ...): relative to the working directory where it is there, else
    to the project folder (the workflow's own reference/ when it runs as a module from another folder).
    """
    if not path or os.path.isabs(path) or os.path.exists(path):
        return path
    own = os.path.join(PROJECT_DIR, path)
    return own if os.path.exists(own) else path


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


def shard_plan_path(dataset):
    """The shards a dataset's texts are embedded in (checkpoint embed_plan, config embed.shard_size)."""
    return result("shards", f"{dataset}.json")


def shard_path(model, dataset, start, stop):
    """One shard's embeddings (texts start..stop-1), merged into embedding_path by embed_merge."""
    return result("shards", model, dataset, f"{start}-{stop}.parquet")


def embed_batch_keys_path(model):
    """The keys of a model's embedding batch (tecb.embed.batch): which datasets' files are up to date."""
    return result("embeddings", model, "batch_keys.json")


def reduced_path(model, dataset, reduction):
    return result("reduced", model, dataset, f"{reduction}.parquet")


def score_path(model, dataset, reduction, algorithm):
    return result("scores", model, dataset, reduction, f"{algorithm}.parquet")


def timing_path(model, dataset, reduction, algorithm):
    return result("timings", model, dataset, reduction, f"{algorithm}.parquet")


def labels_path(model, dataset, reduction, algorithm):
    return result("labels", model, dataset, reduction, f"{algorithm}.parquet")


def cluster_keys_path(model, dataset):
    """The keys of a (model, dataset)'s cluster batch (config cluster.batch; tecb.cluster.batch)."""
    return result("cluster_keys", model, f"{dataset}.json")


SCORES = result("scores.parquet")


def chance_path(dataset):
    """The random-partition scores of a dataset (rule chance)."""
    return result("chance", f"{dataset}.parquet")


def chance_mteb_v2_path(dataset):
    """The MTEB v2 protocol on random vectors for a dataset (rule chance_mteb_v2)."""
    return result("chance", f"{dataset}.mteb_v2.parquet")


def table_path(stem, ext):
    return result("tables", f"{stem}.{ext}")


def figure_path(*parts):
    return result("figures", *parts)


def mteb_task(dataset):
    """The mteb task name a dataset's paper-protocol results are stored under, else None (custom tecb.* name)."""
    from tecb.report.mteb_results import mteb_task_of

    return mteb_task_of(
        config["datasets"][dataset],
        config["sources"],
        kmeans=algorithm_spec("kmeans") if "kmeans" in config["algorithms"] else None,
        seed=config["seed"],
    )


def mteb_path(model, dataset):
    """MTEB's own layout: mteb/results/{model_dir}/{revision}/{MtebTask}.json (mteb.ResultCache(results/{run}/mteb))
    or, for a dataset that is no mteb task's pool, mteb/custom/results/{model_dir}/{revision}/tecb.{dataset}.json.
    """
    from tecb.report.mteb_results import result_relpath

    return result(
        "mteb",
        result_relpath(model, config["models"][model], dataset, mteb_task(dataset)),
    )


def mteb_meta_path(model, custom):
    """The model_meta.json beside a model's MTEB result files (in the mteb-named or the custom cache)."""
    from tecb.report.mteb_results import meta_relpath

    return result("mteb", meta_relpath(model, config["models"][model], custom))


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


def pretrain_labels_path(model, method, dataset, seed):
    """A pretrain job's predicted clusters at each evaluated epoch (Table 5's text-level bootstrap)."""
    return pretrain_path(model, method, dataset, f"seed{seed}.labels.parquet")


def pretrain_checkpoint_dir(model, method, dataset, seed):
    return result("checkpoints", model, method, dataset, f"seed{seed}")


def adapt_path(*parts):
    return result("adapt", *parts)


def adapt_score_path(model, method, variant, dataset, seed):
    return adapt_path(model, method, variant, dataset, f"seed{seed}.parquet")


def adapt_labels_path(model, method, variant, dataset, seed):
    """A training job's predicted clusters of step 0 and its last step (Table 6's text-level bootstrap)."""
    return adapt_path(model, method, variant, dataset, f"seed{seed}.labels.parquet")


def adapt_costs_path(ext):
    """The training jobs' costs (time per job and method) beside the run's other timings."""
    return result("timings", "adapt", f"costs.{ext}")


def adapt_model_path(model, method, variant, dataset, seed):
    return result("checkpoints", model, f"{method}-{variant}", dataset, f"seed{seed}")


def adapt_timing_path(model, method, variant, dataset, seed):
    return job_timing_path("adapt", model, method, variant, dataset, f"seed{seed}")


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
    """A prefetched hub model: shared by all runs (and by a model's prompt variants, {model}@{variant})."""
    return f"resources/models/{model.split('@')[0]}"


def built_model_dir(model):
    """A model built from this run's datasets (tiny-bert): under the run's results."""
    return result("models", model)


def model_digest_path(model):
    """A `kind: local` model's content hash (the model_digest rule)."""
    return result("models", f"{model}.sha256.json")


SEED = config["seed"]
DATASETS = list(config["datasets"])
MODELS = list(config["models"])
# display names (tables, figures, report): not an input of any expensive job
MODEL_NAMES = {m: spec.get("name", m) for m, spec in config["models"].items()}
MODEL_NOTES = {
    m: spec["note"] for m, spec in config["models"].items() if spec.get("note")
}
CONFIGURATIONS = [(c["algorithm"], c["reduction"]) for c in config["configurations"]]
REDUCTIONS = sorted({r for _, r in CONFIGURATIONS if r != "none"})
# the per-(model, dataset) steps after clustering (rules mteb_v2 and cluster_view, or inside cluster_batch)
MTEB_V2 = "mteb_v2" in config["scoring"]["protocols"]
INSPECT = config["inspect"]
# the configuration a cluster view shows: inspect.algorithm / inspect.reduction if configured, else the first
VIEW_CONFIG = (INSPECT["algorithm"], INSPECT["reduction"])
if VIEW_CONFIG not in CONFIGURATIONS:
    VIEW_CONFIG = CONFIGURATIONS[0]
# MTEB v2's options (rules mteb_v2, chance_mteb_v2, cluster_batch); max_documents is per dataset
MTEB_V2_OPTIONS = {
    k: v for k, v in config["scoring"]["mteb_v2"].items() if k != "max_documents"
}

# scoring.restarts: the seeded states of each stochastic clustering per split (tecb.cluster.algorithms); at 1 the
# specs are the config's own, so params, cache keys and score bytes are as without the setting
RESTARTS = config["scoring"]["restarts"]


def algorithm_spec(algorithm):
    """The spec a job clusters and scores with: algorithms.<algorithm> under scoring.restarts (with_restarts)."""
    from tecb.cluster.algorithms import with_restarts

    return with_restarts(config["algorithms"][algorithm], RESTARTS)


def mteb_v2_max_documents(wildcards):
    return config["scoring"]["mteb_v2"]["max_documents"].get(wildcards.dataset)


def view_title(wildcards):
    """The heading of a (model, dataset)'s cluster view (rules cluster_view, cluster_batch)."""
    shown = "raw" if VIEW_CONFIG[1] == "none" else VIEW_CONFIG[1]
    return f"{MODEL_NAMES.get(wildcards.model, wildcards.model)} / {wildcards.dataset} / {VIEW_CONFIG[0]} on {shown} embeddings"


def alternatives(names):
    """A wildcard constraint matching exactly ``names`` (and nothing when empty)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


# --- targets -------------------------------------------------------------------------------


def unit_outputs():
    """Every file of a (model, dataset) that the aggregates are made from: embeddings, reductions, per-configuration
    scores, labels and timings, and the batch jobs' keys files. `all` names them so that a missing one (after a
    configuration, dataset or model is added, or a file deleted) always plans its writer, whatever the rerun
    triggers: Snakemake plans a job for a missing output only when the target asks for the file or a job that reads
    it runs, and an aggregate whose own output exists does not (with `--rerun-triggers mtime`, without
    .snakemake/, in a copied run folder), whether one job or a batch (update() outputs) writes the file.
    """
    units = sorted({(m, d) for m, d, _, _ in SCORE_KEYS})
    files = [embedding_path(m, d) for m, d in units]
    files += [job_timing_path("embed", m, d) for m, d in units]
    files += sorted({reduced_path(m, d, r) for m, d, r, _ in SCORE_KEYS if r != "none"})
    for key in SCORE_KEYS:
        files += [score_path(*key), timing_path(*key), labels_path(*key)]
    files += [
        embed_batch_keys_path(m)
        for m in sorted({m for m, _ in units})
        if EMBED_WRITERS[m]["writer"] == "embed_batch"
    ]
    if CLUSTER_BATCH:
        files += [cluster_keys_path(m, d) for m, d in units]
    return files


def kept_files():
    """The other files a later run relies on and no aggregate names as a target (so that a deleted one is written
    again by the same command, whatever the rerun triggers): each dataset's texts and splits, the chance draws
    (tables.chance), the shard plans (embed.shard_size), the
    per-(model, dataset) MTEB v2 scores and the html tables. tests/test_kept_files.py deletes each kind of file a run keeps.
    """
    units = sorted({(m, d) for m, d, _, _ in SCORE_KEYS})
    files = [texts_path(d) for d in DATASETS] + [splits_path(d) for d in DATASETS]
    files += chance_inputs(None)
    if embed_models(unit="shard"):
        files += [shard_plan_path(d) for d in DATASETS]
    if MTEB_V2:
        files += chance_mteb_v2_inputs(None) + [mteb_v2_path(m, d) for m, d in units]
    # the html beside the tables' and the runtimes' other formats (a job's other outputs are not written again
    # when only they are missing)
    files += [table_path(s, "html") for s in TABLE_STEMS + EXTRA_TABLE_STEMS]
    files += [report_path("runtimes.html")]
    return files


def all_outputs():
    """The targets of the Snakefile's `all` rule: the final outputs each stage's .smk lists, and the files they
    are made from (unit_outputs) and the other files a later run relies on (kept_files).
    """
    # TABLE_FILES (tables.smk) and REPORT_TARGETS (report.smk): tables, figures, MTEB JSON, report pieces
    outputs = [SCORES] + TABLE_FILES + REPORT_TARGETS + unit_outputs() + kept_files()
    outputs += (
        SCORING_OUTPUTS + INSPECT_OUTPUTS
    )  # scoring.smk (MTEB v2), inspect.smk (cluster views)
    if config["pretrain"]["enabled"]:
        outputs += pretrain_outputs()  # workflow/rules/pretrain.smk
    if config["adapt"]["enabled"]:
        outputs += adapt_outputs()  # workflow/rules/adapt.smk
    return outputs


# --- before any job ------------------------------------------------------------------------


def start_problem():
    """What runs before any job (in the main process; docs/reliability.md), and why this run may not start (None:
    it may). A run alive in this folder refuses a second run, whatever its run name, and `--unlock` (Snakemake would
    remove the live run's locks); a dry run may look (tecb.unlock.start_refusal). The locks a killed run left are
    removed when no run is alive (tecb.unlock.remove_stale_locks); a damaged shard plan is named and
    removed, written again by this run (dag_records: never a bare JSONDecodeError), and so is a score file that is not
    what its writer recorded (tecb.io.remove_wrong_scores); the files, local models and
    import-path algorithms the config points to are checked (tecb.preflight: columns, formats, encodings,
    config.json types, clusterers; cached by file fingerprint)."""
    from tecb.io import remove_damaged_records, remove_wrong_scores
    from tecb.preflight import CACHE_DIR, PreflightError, run_preflight
    from tecb.unlock import (
        LOOK_ONLY_FLAGS,
        forget_run,
        record_run,
        remove_stale_locks,
        start_refusal,
    )

    def say(message):
        print(message, file=sys.stderr)

    unlocking = "--unlock" in sys.argv
    looking = workflow.output_settings.dryrun or LOOK_ONLY_FLAGS & set(sys.argv)
    if not (unlocking or looking):
        # this run's record (its pid and start time), written before it looks for others (two starts at once
        # see each other) and removed when the process exits, after Snakemake has released its locks
        atexit.register(forget_run, os.path.abspath("."))
        record_run(".")
    if unlocking or not looking:
        refusal = start_refusal(".", unlocking=unlocking)
        if refusal:
            return refusal
    remove_stale_locks(".", log=say)
    for paths, fields, what in dag_records():
        remove_damaged_records(paths, fields, what, log=say)
    # a score file that is not what its writer recorded (edited, damaged, another configuration's): removed, so
    # this run computes it again before the tables read it (tecb.io.check_scores)
    remove_wrong_scores(
        {score_path(*k): "/".join(k) for k in SCORE_KEYS},
        log=say,
        cache=CACHE_DIR / "scores.json",
    )
    sources = sorted({d["source"] for d in config["datasets"].values()})
    try:
        run_preflight(
            config,
            produced=produced_by_a_rule,
            cache_dir=CACHE_DIR,
            source_paths={s: source_path(s) for s in sources},
        )
    except PreflightError as error:
        return str(error)
    return None
