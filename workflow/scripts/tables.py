"""Render Tables 1-3 (and, with the paper's reference, the tables beside the paper) from scores and datasets,
to the files the rule declares: per table its formats (params.formats) and its html, the CSV-only files as CSV."""

from tecb.report.table_files import TableInputs, TableSettings, render_tables
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
outputs = {stem: {**dict(zip(p.formats, out[stem])), "html": out[f"{stem}_html"]} for stem in p.tables}
outputs.update({stem: {"csv": out[stem]} for stem in p.csv_tables})
reference, reference_table1 = inp.reference or [None, None]
settings = TableSettings(
    datasets=p.datasets,
    model_names=p.model_names,
    model_notes=p.model_notes,
    configurations=[tuple(c) for c in p.configurations],
    table2=p.table2,
    metrics=p.metrics,
    statistics=p.statistics if p.statistics["enabled"] else None,
    seed=p.seed,
    per_kind=p.per_kind,
    trained_on=p.trained_on,
)
inputs = TableInputs(
    scores=inp.scores,
    texts=inp.texts,
    splits=inp.splits,
    chance=list(inp.chance) if p.chance else None,
    reference=reference,
    reference_table1=reference_table1,
)
render_tables(settings, inputs, outputs=outputs, log=log)
