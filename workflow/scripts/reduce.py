"""Reduce a (model, dataset)'s embeddings per split with one configured reduction."""

from tecb.cluster.job import ClusterRun

# numba reads its cache directory when it is first imported: set it before anything imports numba.
# It is not a param (where compiled code is cached does not change any result).
run = ClusterRun.from_job(snakemake)
run.use_numba_cache()

from tecb.cluster import reduce  # noqa: E402
from tecb.runlog import finish, open_log  # noqa: E402

log = open_log(snakemake.log[0])
if run.numba_cache:
    log(f"numba cache: {run.numba_cache}")
reduce.run_reduction(
    dict(snakemake.params.spec),
    files=reduce.ReduceFiles(
        embeddings=snakemake.input.embeddings, splits=snakemake.input.splits, reduced=snakemake.output[0]
    ),
    reduction=snakemake.wildcards.reduction,
    seed=snakemake.params.seed,
    threads=run.threads,
    cache_umap=bool(run.numba_cache),
    log=log,
)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
