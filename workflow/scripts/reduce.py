"""Reduce a (model, dataset)'s embeddings per split with every configured reduction."""

import pyarrow.parquet as pq

from tecb import io, reduce
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
if reduce.enable_numba_cache(snakemake.params.numba_cache):
    log(f"numba cache: {snakemake.params.numba_cache}")
embeddings, meta = io.read_embeddings(snakemake.input.embeddings)
splits = list(io.iter_splits(pq.read_table(snakemake.input.splits)))
for (name, spec), out in zip(snakemake.params.reductions.items(), snakemake.output):
    log(f"== {name}: {spec}")
    parts = list(reduce.reduce_splits(embeddings, splits, spec, seed=snakemake.params.seed, log=log))
    io.write_table(io.reduced_table(parts, {"reduction": name, **spec, "seed": snakemake.params.seed}), out)
