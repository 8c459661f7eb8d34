# Input, threads and resources functions of the rules in cluster.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.

from tecb.cluster.job import ClusterRun

# --- the cluster stage's switch, read here and only here -----------------------------------------------------
# cluster.batch chooses the granularity of the jobs that write a (model, dataset)'s reductions, scores, labels,
# timings, MTEB v2 score and cluster view, never their bytes: one cluster_batch job per (model, dataset), or one
# reduce job per reduction, one cluster job per configuration, one mteb_v2 and one cluster_view job. The wildcard
# constraints below give each file exactly one writer (the rules all exist; no ruleorder).
CLUSTER_BATCH = config["cluster"]["batch"]
#: how the stage's jobs run (tecb.cluster.job): cluster.threads, read here and only here (a job script reads its
#: own threads from Snakemake, ClusterRun.from_job)
CLUSTER_RUN = ClusterRun.from_config(config)
#: models whose (model, dataset) units one cluster_batch job makes
CLUSTER_BATCH_MODELS = MODELS if CLUSTER_BATCH else []
#: models whose units the per-step jobs make (reduce, cluster, mteb_v2, cluster_view)
CLUSTER_STEP_MODELS = [m for m in MODELS if m not in CLUSTER_BATCH_MODELS]


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


def algorithm_threads(algorithm):
    """Ward and DBSTREAM run on one core; the others get `cluster.threads` (BLAS/OpenMP, HDBSCAN workers)."""
    return CLUSTER_RUN.method_threads(config["algorithms"][algorithm]["method"])


def cluster_threads(wildcards):
    """The threads of one configuration's cluster job (algorithm_threads)."""
    return algorithm_threads(wildcards.algorithm)


def algorithm_memory_mb(algorithm, splits, points):
    """The memory guard's estimate for `algorithm` at the largest split (+ Python and the input)."""
    from tecb.cluster.algorithms import job_memory_mb

    spec = config["algorithms"][algorithm]
    return job_memory_mb(spec["method"], spec["params"], splits, points)


def cluster_mem_mb(wildcards, input, attempt):
    """algorithm_memory_mb x attempt (a retry gets more); re-evaluated once the inputs exist."""
    points = input.reduced if wildcards.reduction != "none" else input.embeddings
    return attempt * algorithm_memory_mb(wildcards.algorithm, input.splits, points)


def reduce_mem_mb(wildcards, input, attempt):
    """The reduction's memory estimate at the largest split, x attempt."""
    from tecb.cluster.reduce import job_memory_mb

    return attempt * job_memory_mb(
        config["reductions"][wildcards.reduction], input.splits, input.embeddings
    )


#: minutes a cluster / cluster_batch job is given at one restart (SLURM's --time): measured use with a wide margin
#: (the slowest step, Ward on raw 26k x 768, 225 s on one core: benchmarks/cluster_results_26k.md; docs/slurm.md)
CLUSTER_MINUTES = 20
CLUSTER_BATCH_MINUTES = 60


def restarted(algorithm):
    """Whether scoring.restarts repeats `algorithm`'s clustering (a stochastic method, R > 1)."""
    from tecb.cluster.algorithms import stochastic

    spec = config["algorithms"][algorithm]
    return RESTARTS > 1 and stochastic(spec["method"], spec.get("params"))


def cluster_runtime(wildcards, attempt):
    """A cluster job's minutes: CLUSTER_MINUTES, x scoring.restarts for a stochastic method (R full clusterings)."""
    return CLUSTER_MINUTES * (RESTARTS if restarted(wildcards.algorithm) else 1)


def cluster_batch_runtime(wildcards, attempt):
    """A cluster_batch job's minutes: CLUSTER_BATCH_MINUTES, x scoring.restarts when one of its configurations is
    stochastic (an upper bound: its reductions and deterministic configurations run once).
    """
    any_restarted = any(restarted(a) for a, _ in CONFIGURATIONS)
    return CLUSTER_BATCH_MINUTES * (RESTARTS if any_restarted else 1)


def score_files():
    """Every score file, in the order of SCORE_KEYS (collect_scores' input)."""
    return [score_path(*key) for key in SCORE_KEYS]


# --- cluster.batch: every reduction and configuration of one (model, dataset) in one job (rule cluster_batch) ---


def cluster_batch_members(wildcards):
    """One (reduction, algorithm, spec) per configuration, in the order of CONFIGURATIONS: the batch's params,
    so changing one configuration reruns the batch (which recomputes only that one). Not the cores: they
    change no result (as for a per-configuration job)."""
    return [
        {"reduction": r, "algorithm": a, "spec": algorithm_spec(a)}
        for a, r in CONFIGURATIONS
    ]


def cluster_batch_threads(wildcards):
    """The most threads any of its configurations runs on (each runs on its own threads, as its own job
    would; a reduction on one, as a reduce job)."""
    return max([1] + [algorithm_threads(a) for a, _ in CONFIGURATIONS])


def cluster_batch_mem_mb(wildcards, input, attempt):
    """The largest memory estimate of its reductions and configurations (they run one after the other), x
    attempt. A clustering of reduced points is estimated at the embeddings' shape (the reduced file does not
    exist before the job; a reduction has no more dimensions), plus umap's imports when the batch reduces
    with UMAP (they stay loaded)."""
    from tecb.cluster.reduce import UMAP_IMPORTS_MB, job_memory_mb

    reductions = [config["reductions"][r] for r in REDUCTIONS]
    umap_mb = UMAP_IMPORTS_MB if any(s["method"] != "pca" for s in reductions) else 0
    return attempt * max(
        [job_memory_mb(s, input.splits, input.embeddings) for s in reductions]
        + [
            umap_mb + algorithm_memory_mb(a, input.splits, input.embeddings)
            for a, _ in CONFIGURATIONS
        ]
    )


def cluster_batch_step_inputs():
    """The files the batch's steps after clustering read besides its own inputs: the texts, for a cluster view."""
    return {"texts": texts_path("{dataset}")} if INSPECT["clusters"] else {}


def cluster_batch_step_outputs():
    """The batch's steps after clustering (tecb.cluster.batch): MTEB v2's score with scoring.protocols mteb_v2,
    the cluster view with inspect.clusters; update() as the batch's other outputs."""
    outputs = {}
    if MTEB_V2:
        outputs["mteb_v2"] = update(mteb_v2_path("{model}", "{dataset}"))
    if INSPECT["clusters"]:
        view = report(
            cluster_view_path("{model}", "{dataset}"),
            caption="../report/clusters.rst",
            category="Clusters",
            subcategory="{model}",
            labels={"model": "{model}", "dataset": "{dataset}"},
        )
        outputs["view"] = update(view)
    return outputs


def cluster_batch_step_params(wildcards):
    """The settings of the batch's steps after clustering, only of those it runs (a setting of a step that is off
    reruns nothing)."""
    steps = {}
    if MTEB_V2:
        steps["mteb_v2"] = {
            "options": MTEB_V2_OPTIONS,
            "max_documents": mteb_v2_max_documents(wildcards),
        }
    if INSPECT["clusters"]:
        steps["view"] = {
            "labels": labels_path(
                wildcards.model, wildcards.dataset, VIEW_CONFIG[1], VIEW_CONFIG[0]
            ),
            "title": view_title(wildcards),
            "split": INSPECT["split"],
            "top_terms": INSPECT["top_terms"],
        }
    return steps
