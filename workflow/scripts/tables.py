"""Render Tables 1-3 from the scores and the datasets."""

from tecb.runlog import open_log
from tecb.tables import render_tables

log = open_log(snakemake.log[0])
p = snakemake.params
render_tables(snakemake.input.scores, p.datasets, snakemake.input.texts, snakemake.input.splits, p.model_names,
              p.configurations, p.table2, "results/tables", log=log)
