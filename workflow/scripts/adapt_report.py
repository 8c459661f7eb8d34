"""Table 6, the training curves and the training costs from the training jobs' scores."""

from tecb.report.adapt_tables import ReportInputs, render
from tecb.report.stats import Statistics
from tecb.report.tables import split_kinds, split_overlaps
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
out, p = snakemake.output, snakemake.params
outputs = {
    "scores": out.scores,
    "figure": out.figure,
    "table6": {**dict(zip(p.formats, out.table6)), "html": out.table6_html},
    "costs": dict(zip(("md", "csv"), out.costs)),
    "contrasts": dict(zip(p.formats, out.contrasts)),
}
inputs = ReportInputs(
    keys=p.jobs,
    scores=snakemake.input.scores,
    timings=snakemake.input.timings,
    chance=dict(zip(p.datasets, snakemake.input.chance)),  # empty when tables.chance is off
)
kinds = split_kinds(p.datasets, snakemake.input.splits)  # Blurbs' designs, as Table 2 stratifies them
overlaps = split_overlaps(p.datasets, snakemake.input.splits, kinds)  # splits subsampled from one pool
render(
    inputs,
    outputs,
    statistics=Statistics.from_config(p.statistics, seed=p.seed, design_effects=overlaps),
    model_names=p.model_names,
    split_kinds=kinds,
    contrasts_declared=p.contrasts,
    log=log,
)
