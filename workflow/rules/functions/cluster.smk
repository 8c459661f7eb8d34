# Input, threads and resources functions of the rules in cluster.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


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
    return attempt * job_memory_mb(spec["method"], spec["params"], input.splits, points)


def reduce_mem_mb(wildcards, input, attempt):
    """The reduction's memory estimate at the largest split, x attempt."""
    from tecb.cluster.reduce import job_memory_mb

    return attempt * job_memory_mb(
        config["reductions"][wildcards.reduction], input.splits, input.embeddings
    )


def score_files():
    """Every score file, in the order of SCORE_KEYS (collect_scores' input)."""
    return [score_path(*key) for key in SCORE_KEYS]
