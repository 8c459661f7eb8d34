"""Concatenate all per-split score files into the run's scores.parquet."""

from tecb.report.table_files import collect_scores
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
collect_scores(snakemake.input, snakemake.params.score_keys, snakemake.output[0], log=log)
