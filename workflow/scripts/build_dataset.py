"""Build one dataset's texts.parquet and splits.parquet from its raw source."""

from tecb import datasets, io
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
spec = dict(snakemake.params.spec)
recipe = {k: spec[k] for k in ("n_splits", "low", "high") if k in spec}
builder = spec.get("builder", spec["source"])
dataset = datasets.build(builder, snakemake.input.source, spec["text"], seed=snakemake.params.seed, **recipe)
io.write_dataset(dataset.texts, dataset.splits, snakemake.output.texts, snakemake.output.splits,
                 snakemake.wildcards.dataset)
log(datasets.describe(dataset, snakemake.wildcards.dataset))
