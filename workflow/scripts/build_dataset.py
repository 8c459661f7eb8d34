"""Build one dataset's texts.parquet and splits.parquet from its raw source (or its published splits)."""

from tecb import io
from tecb.data import datasets
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
name = snakemake.wildcards.dataset
source = snakemake.input.source
source = source if isinstance(source, str) else list(source)  # 10kgnad_csv may name several files
dataset = datasets.build_from_config(
    name, dict(snakemake.params.spec), dict(snakemake.params.source), source, seed=snakemake.params.seed
)
log(datasets.describe(dataset, name))
io.write_dataset(
    dataset.texts, dataset.splits, snakemake.output.texts, snakemake.output.splits, name, provenance=dataset.provenance
)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
