"""A dataset's shards (in text order) merged into the run's embeddings file, byte for byte the one embed.py writes,
and their timings added up (tecb.embed.shard); with embed.cache_dir, the store's entry of the shards' key, reused
or merged into it (tecb.embed.job.run_merge_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.job import run_merge_job
from tecb.runlog import finish, open_log

run_merge_job(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown: every output is written
