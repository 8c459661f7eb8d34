"""MTEB-format result JSON per (model, dataset) for k-means on raw embeddings."""

from tecb.mteb_results import write_mteb_results
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
write_mteb_results(snakemake.input.scores, snakemake.params.models, snakemake.params.datasets, "results/mteb",
                   log=log)
