"""Train one model with one method under one protocol variant for one evaluated dataset and seed (Table 6;
tecb.adapt.jobs.run_adapt_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.adapt.jobs import run_adapt_job
from tecb.runlog import open_log

run_adapt_job(snakemake, log=open_log(snakemake.log[0]))
