"""Run every configured (algorithm, reduction) on one (model, dataset) and score each split."""

from threadpoolctl import threadpool_limits

from tecb.cluster import run_configurations
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p = snakemake.params
with threadpool_limits(snakemake.threads):
    run_configurations(snakemake.input.embeddings, snakemake.input.splits, dict(zip(p.reductions, snakemake.input.reduced)),
                       p.configurations, p.algorithms, snakemake.output, seed=p.seed, log=log,
                       max_memory_gb=p.max_memory_gb)
