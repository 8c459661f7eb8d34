"""MTEB v2's clustering protocol on one (model, dataset)'s embeddings (src/tecb/scoring/mteb_v2.py)."""

from threadpoolctl import threadpool_limits

from tecb.runlog import finish, open_log
from tecb.scoring import mteb_v2

log = open_log(snakemake.log[0])
p = snakemake.params
with threadpool_limits(snakemake.threads):
    mteb_v2.run(
        snakemake.input.embeddings,
        snakemake.input.splits,
        snakemake.output[0],
        dataset=snakemake.wildcards.dataset,
        seed=p.seed,
        max_documents=p.max_documents,
        log=log,
        **p.options,
    )
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
