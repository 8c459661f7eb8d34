"""UMAP scatter plots per (model, dataset), the Table 3 heatmap and the Table 2 averages bar chart
(tecb.report.job.run_figures_job)."""

from tecb.report.job import run_figures_job
from tecb.runlog import open_log

run_figures_job(snakemake, log=open_log(snakemake.log[0]))
