"""MTEB-format results (mteb.ResultCache layout) per (model, dataset) for k-means on raw embeddings
(tecb.report.job.run_mteb_results_job)."""

from tecb.report.job import run_mteb_results_job
from tecb.runlog import open_log

run_mteb_results_job(snakemake, log=open_log(snakemake.log[0]))
