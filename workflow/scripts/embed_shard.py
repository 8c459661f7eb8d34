"""Embed one shard of a dataset (texts params.start..params.stop-1) with one model into
results/{run}/shards/{model}/{dataset}/{start}-{stop}.parquet, as embed.py embeds all of them (tecb.embed.shard)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.job import embed_job, job_embedding_key, job_threads
from tecb.embed.shard import embed_shard
from tecb.runlog import finish, open_log

log, p, out = open_log(snakemake.log[0]), snakemake.params, snakemake.output
log(f"shard {p.start}..{p.stop} of {snakemake.wildcards.dataset}")
with job_threads(snakemake, p.settings["kind"]):  # torch and BLAS on the job's threads, as embed.py (issue 21.6)
    # the key of the whole dataset's texts, as an embed job's (tecb.embed.cache.embedding_key)
    job = embed_job(snakemake, embeddings=out.embeddings, timings=out.timings, cache_key=job_embedding_key(snakemake))
    embed_shard(job, start=p.start, stop=p.stop, log=log)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
