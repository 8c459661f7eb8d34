"""Concatenate all per-split score files into results/scores.parquet."""

from tecb.runlog import open_log
from tecb.tables import collect_scores

log = open_log(snakemake.log[0])
collect_scores(snakemake.input, snakemake.output[0], log=log)
