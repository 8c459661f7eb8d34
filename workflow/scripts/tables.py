"""Render Tables 1-3 (and, with the paper's reference, the tables beside the paper) from scores and datasets,
to the files the rule declares (tecb.report.job.run_tables_job)."""

from tecb.report.job import run_tables_job
from tecb.runlog import open_log

run_tables_job(snakemake, log=open_log(snakemake.log[0]))
