"""Embed a dataset's unique texts with one model into results/{run}/embeddings/{model}/{dataset}.parquet
(its duration into results/{run}/timings/embed/{model}/{dataset}.json); with embed.cache_dir, the store's entry of
its key, reused or computed (tecb.embed.job.run_embed_job).

params.settings and params.seed decide the vectors (tecb.embed.spec); how the job runs (batch size, device, the
store) comes from the config through tecb.embed.job, so changing it does not re-embed.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.job import run_embed_job
from tecb.runlog import finish, open_log

run_embed_job(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
