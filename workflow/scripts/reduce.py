"""Reduce a (model, dataset)'s embeddings per split with one configured reduction."""

import os

# numba reads its cache directory when it is first imported: set it before anything imports numba.
# It is not a param (where compiled code is cached does not change any result).
CACHE = snakemake.config["cluster"].get("numba_cache")
if CACHE:
    os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(CACHE)

import pyarrow.parquet as pq  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from tecb import io  # noqa: E402
from tecb.cluster import reduce
from tecb.runlog import finish, open_log  # noqa: E402

log = open_log(snakemake.log[0])
spec, seed = dict(snakemake.params.spec), snakemake.params.seed
if CACHE and spec["method"] != "pca":
    log(f"numba cache: {CACHE} ({reduce.cache_umap_compilation()} umap/pynndescent functions cached)")
splits = list(io.iter_splits(pq.read_table(snakemake.input.splits)))
embeddings, meta = io.read_embeddings(snakemake.input.embeddings, text_ids=[i for _, ids, _ in splits for i in ids])
log(f"== {snakemake.wildcards.reduction}: {spec}")
with threadpool_limits(snakemake.threads):
    parts = list(reduce.reduce_splits(embeddings, splits, spec, seed=seed, log=log))
io.write_table(
    io.reduced_table(
        parts, {"reduction": snakemake.wildcards.reduction, **spec, "seed": seed}, path=snakemake.output[0]
    ),
    snakemake.output[0],
)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
