"""The long-text table: share of texts truncated at max_seq_length (token coverage) per model and dataset
(tecb.report.job.run_truncation_job)."""

from tecb.report.job import run_truncation_job
from tecb.runlog import open_log

run_truncation_job(snakemake, log=open_log(snakemake.log[0]))
