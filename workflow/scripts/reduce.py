"""Reduce a (model, dataset)'s embeddings per split with one configured reduction."""

import os

# numba reads its cache directory when it is first imported: set it before anything imports numba.
# It is not a param (where compiled code is cached does not change any result).
CACHE = snakemake.config["cluster"].get("numba_cache")
if CACHE:
    os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(CACHE)

from tecb.cluster import reduce  # noqa: E402
from tecb.runlog import finish, open_log  # noqa: E402

log = open_log(snakemake.log[0])
if CACHE:
    log(f"numba cache: {CACHE}")
reduce.run_reduction(
    dict(snakemake.params.spec),
    files=reduce.ReduceFiles(
        embeddings=snakemake.input.embeddings, splits=snakemake.input.splits, reduced=snakemake.output[0]
    ),
    reduction=snakemake.wildcards.reduction,
    seed=snakemake.params.seed,
    threads=snakemake.threads,
    cache_umap=bool(CACHE),
    log=log,
)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
