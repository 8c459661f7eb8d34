"""Embed one shard of a dataset (texts params.start..params.stop-1) with one model into
results/{run}/shards/{model}/{dataset}/{start}-{stop}.parquet, as embed.py embeds all of them (tecb.embed.shard)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import torch
from threadpoolctl import threadpool_limits

from tecb.embed.job import embed_job, job_embedding_key
from tecb.embed.shard import embed_shard
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)  # transformer kinds only (tecb.embed.shard.SHARDABLE_KINDS)
p, out = snakemake.params, snakemake.output
log(f"shard {p.start}..{p.stop} of {snakemake.wildcards.dataset}")
with threadpool_limits(snakemake.threads):  # BLAS on the job's threads, as embed.py (issue 21.6)
    # the key of the whole dataset's texts, as an embed job's (tecb.embed.cache.embedding_key)
    job = embed_job(snakemake, embeddings=out.embeddings, timings=out.timings, cache_key=job_embedding_key(snakemake))
    embed_shard(job, start=p.start, stop=p.stop, log=log)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
