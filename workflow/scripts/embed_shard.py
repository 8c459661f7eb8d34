"""Embed one shard of a dataset (texts params.start..params.stop-1) with one model into
results/{run}/shards/{model}/{dataset}/{start}-{stop}.parquet, as embed.py embeds all of them (tecb.embed.shard)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import json

import torch
from threadpoolctl import threadpool_limits

from tecb.embed.shard import embed_shard
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)  # transformer kinds only (tecb.embed.shard.SHARDABLE_KINDS)
embed_options = dict(snakemake.config.get("embed", {}))
model_batch_size = snakemake.config["models"][snakemake.wildcards.model].get("batch_size")
if model_batch_size:
    embed_options["batch_size"] = model_batch_size
digest = None
if snakemake.input.get("digest"):
    with open(snakemake.input.digest[0]) as f:
        digest = json.load(f)["sha256"]
log(f"shard {snakemake.params.start}..{snakemake.params.stop} of {snakemake.wildcards.dataset}")
with threadpool_limits(snakemake.threads):  # BLAS on the job's threads, as embed.py (issue 21.6)
    embed_shard(
        snakemake.input.texts,
        snakemake.output.embeddings,
        snakemake.params.settings,
        embed_options,
        start=snakemake.params.start,
        stop=snakemake.params.stop,
        seed=42,  # unused by transformer kinds (TF-IDF is never sharded)
        log=log,
        dataset=snakemake.wildcards.dataset,
        model_digest=digest,
        timings_path=snakemake.output.timings,
    )
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
