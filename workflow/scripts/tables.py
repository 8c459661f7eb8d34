"""Render Tables 1-3 (and, with the paper's reference, the tables beside the paper) from scores and datasets,
to the files the rule declares: per table its formats (params.formats) and its html, the statistics as CSV."""

from tecb.report.tables import render_tables
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
outputs = {stem: {**dict(zip(p.formats, out[stem])), "html": out[f"{stem}_html"]} for stem in p.tables}
outputs.update({stem: {"csv": out[stem]} for stem in p.csv_tables})
reference, reference_table1 = inp.reference or [None, None]
render_tables(
    inp.scores,
    p.datasets,
    inp.texts,
    inp.splits,
    p.model_names,
    p.configurations,
    p.table2,
    outputs,
    reference,
    reference_table1,
    log=log,
    statistics=p.statistics if p.statistics["enabled"] else None,
    metrics=p.metrics,
    seed=p.seed,
)
