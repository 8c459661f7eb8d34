"""Embed a dataset's unique texts with one model into results/{run}/embeddings/{model}/{dataset}.parquet
(its duration into results/{run}/timings/embed/{model}/{dataset}.json).

params.settings and params.seed decide the vectors (tecb.embed.spec); how the job runs (batch size, device) comes
from the config through tecb.embed.job, so changing it does not re-embed.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from threadpoolctl import threadpool_limits

from tecb.embed.encode import embed_dataset
from tecb.embed.job import embed_job, job_embedding_key
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
if snakemake.params.settings["kind"] != "tfidf":  # a TF-IDF job never imports torch (~1.6 s CPU)
    import torch

    torch.set_num_threads(snakemake.threads)
# BLAS/OpenMP on exactly the job's threads, not on every core of the machine: the TF-IDF SVD's vectors depend on
# the BLAS thread count (benchmarks/blas_kernels.md), so this keeps them equal across machines (issue 21.6)
with threadpool_limits(snakemake.threads):
    out = snakemake.output
    embed_dataset(
        embed_job(snakemake, embeddings=out.embeddings, timings=out.timings, cache_key=job_embedding_key(snakemake)),
        log=log,
    )
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
