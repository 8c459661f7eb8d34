"""The random-partition floor of one dataset: scores of seeded random partitions of each split."""

from tecb.runlog import open_log
from tecb.scoring.chance import run

log = open_log(snakemake.log[0])
run(snakemake.input.splits, snakemake.output[0], n_draws=snakemake.params.n_draws, seed=snakemake.params.seed, log=log)
