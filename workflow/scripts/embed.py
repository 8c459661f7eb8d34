"""Embed a dataset's unique texts with one model into results/{run}/embeddings/{model}/{dataset}.parquet
(its duration into results/{run}/timings/embed/{model}/{dataset}.json).

params.settings and params.seed decide the vectors (tecb.embed.spec); how the job runs (batch size, device) comes
from the config through tecb.embed.job, so changing it does not re-embed.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.encode import embed_dataset
from tecb.embed.job import embed_job, job_embedding_key, job_threads
from tecb.runlog import finish, open_log

log, out = open_log(snakemake.log[0]), snakemake.output
with job_threads(snakemake, snakemake.params.settings["kind"]):  # torch and BLAS on the job's threads (issue 21.6)
    job = embed_job(snakemake, embeddings=out.embeddings, timings=out.timings, cache_key=job_embedding_key(snakemake))
    embed_dataset(job, log=log)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
