"""The chance floor of the MTEB v2 table for one dataset: the v2 protocol on seeded random vectors."""

from threadpoolctl import threadpool_limits

from tecb.runlog import open_log
from tecb.scoring.chance import mteb_v2_chance

log = open_log(snakemake.log[0])
p = snakemake.params
with threadpool_limits(snakemake.threads):
    mteb_v2_chance(
        snakemake.input.splits,
        snakemake.output[0],
        dataset=snakemake.wildcards.dataset,
        n_draws=p.n_draws,
        seed=p.seed,
        max_documents=p.max_documents,
        log=log,
        **p.options,
    )
