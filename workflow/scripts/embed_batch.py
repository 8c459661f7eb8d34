"""Embed every dataset of one model (embed.batch: true) into results/{run}/embeddings/{model}/{dataset}.parquet,
each as an embed job would, skipping the datasets whose key is unchanged (tecb.embed.job.run_embed_batch_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.job import run_embed_batch_job
from tecb.runlog import finish, open_log

run_embed_batch_job(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown: every output is written
