"""Table 6, the training curves and the training costs from the training jobs' scores
(tecb.report.job.run_adapt_report_job)."""

from tecb.report.job import run_adapt_report_job
from tecb.runlog import open_log

run_adapt_report_job(snakemake, log=open_log(snakemake.log[0]))
