"""The unseen (title, title + blurb) pairs embedded with a model (tecb.adapt.frozen_jobs.run_pairs_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.adapt.frozen_jobs import run_pairs_job
from tecb.runlog import open_log

run_pairs_job(snakemake, log=open_log(snakemake.log[0]))
