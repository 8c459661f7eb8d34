"""One arm on a model's frozen, cached embeddings (tecb.adapt.frozen_jobs.run_frozen_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.adapt.frozen_jobs import run_frozen_job
from tecb.runlog import open_log

run_frozen_job(snakemake, log=open_log(snakemake.log[0]))
