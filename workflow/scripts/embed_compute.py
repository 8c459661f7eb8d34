"""Make one (model, dataset)'s entry of the embedding store, {cache_dir}/{key}.parquet, under the entry's lock:
embedded as embed.py embeds a run's file or merged from the run's shards (tecb.embed.job.fill_cache_entry)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.job import fill_cache_entry
from tecb.runlog import finish, open_log

fill_cache_entry(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown: every output is written
