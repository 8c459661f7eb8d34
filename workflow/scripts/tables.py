"""Render Tables 1-3 (and, with the paper's reference, the tables beside the paper) from scores and datasets."""

from pathlib import Path

from tecb.runlog import open_log
from tecb.tables import render_tables

log = open_log(snakemake.log[0])
p, inp = snakemake.params, snakemake.input
reference, reference_table1 = inp.reference or [None, None]
render_tables(inp.scores, p.datasets, inp.texts, inp.splits, p.model_names, p.configurations, p.table2,
              Path(snakemake.output.html[0]).parent, reference, reference_table1, log=log,
              statistics=p.statistics if p.statistics["enabled"] else None, metrics=p.metrics, seed=p.seed)
