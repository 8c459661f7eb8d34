"""One arm on a model's frozen, cached embeddings (tecb.adapt.frozen_jobs.run_frozen_job)."""

from tecb.adapt.frozen_jobs import run_frozen_job
from tecb.runlog import open_log

run_frozen_job(snakemake, log=open_log(snakemake.log[0]))
