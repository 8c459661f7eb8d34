# Input functions of the rules in embed_shard.smk (config embed.shard_size), which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.

from tecb.io import ContractError, read_json_record

# SHARD_SIZE and the sharded models (unit "shard" of EMBED_WRITERS): functions/embed.smk, the embed stage's table


def plan_shard_size(wildcards):
    """embed.shard_size, except for a dataset planned before whose sharded models' embeddings all exist: its plan's
    own size, so a new shard size re-plans (and re-embeds, to the same bytes) only what is still to embed.
    """
    path = shard_plan_path(wildcards.dataset)
    done = all(
        os.path.exists(embedding_path(m, wildcards.dataset))
        for m in embed_models(unit="shard")
    )
    if done and os.path.exists(path):
        try:
            return read_json_record(path, ("shard_size",), "shard plan")["shard_size"]
        except (
            ContractError
        ):  # removed at the start (dag_records) unless damaged since: planned anew
            pass
    return SHARD_SIZE


def embed_shard_mem_mb(wildcards, input, attempt):
    """An embed_shard job's memory (tecb.embed.job.job_memory_mb: its rows' texts, the whole column read once)
    x attempt; re-evaluated once the texts exist."""
    from tecb.embed.job import job_memory_mb

    rows = (int(wildcards.start), int(wildcards.stop))
    settings = model_settings(wildcards.model, wildcards.dataset)
    return attempt * job_memory_mb(
        settings, texts=input.texts, model=input.model, rows=rows
    )


def shard_ranges_of(dataset):
    """The [start, stop) ranges of a dataset's shards: known once its plan (checkpoint embed_plan) has run."""
    path = checkpoints.embed_plan.get(dataset=dataset).output[0]
    return read_json_record(path, ("shards",), "shard plan")["shards"]


def shard_inputs(model, dataset):
    """The shards' embeddings and timings files of one (model, dataset), in text order."""
    ranges = shard_ranges_of(dataset)
    return {
        "shards": [shard_path(model, dataset, a, b) for a, b in ranges],
        "timings": [
            job_timing_path("embed_shard", model, dataset, f"{a}-{b}")
            for a, b in ranges
        ],
    }


def merge_input(wildcards):
    """What the embed_merge job of a run's (model, dataset) reads: its shards."""
    return shard_inputs(wildcards.model, wildcards.dataset)
