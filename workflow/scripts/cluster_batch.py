"""Reduce and cluster one (model, dataset) with every configuration (cluster.batch: true), rerunning only what
changed."""

import os

# numba reads its cache directory when it is first imported: set it before anything imports numba (as reduce.py).
CACHE = snakemake.config["cluster"].get("numba_cache")
if CACHE:
    os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(CACHE)

from tecb.cluster.batch import batch_members, batch_reductions, run_batch  # noqa: E402
from tecb.runlog import finish, open_log  # noqa: E402

log = open_log(snakemake.log[0])
w, inp, out = snakemake.wildcards, snakemake.input, snakemake.output
reductions = batch_reductions(snakemake.params.reductions, out)
run_batch(
    batch_members(
        snakemake.params.members,
        inp,
        out,
        reduced={r["name"]: r["out"] for r in reductions},
        cluster_threads=snakemake.config["cluster"]["threads"],
        max_threads=snakemake.threads,
    ),
    reductions=reductions,
    embeddings_path=inp.embeddings,
    splits_path=inp.splits,
    keys_path=out.member_keys,
    seed=snakemake.params.seed,
    max_memory_gb=snakemake.config["cluster"]["max_memory_gb"],
    cache_umap=bool(CACHE),
    log=log,
    where=f"{w.model}/{w.dataset}: ",
)
finish()  # skip the interpreter teardown: every output is written
