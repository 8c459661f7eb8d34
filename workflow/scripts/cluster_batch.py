"""Cluster one (model, dataset) with every configuration (cluster.batch: true), rerunning only what changed."""

from tecb.cluster.batch import batch_members, run_batch
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
w, inp, out = snakemake.wildcards, snakemake.input, snakemake.output
run_batch(
    batch_members(
        snakemake.params.members,
        inp,
        out,
        cluster_threads=snakemake.config["cluster"]["threads"],
        max_threads=snakemake.threads,
    ),
    splits_path=inp.splits,
    keys_path=out.member_keys,
    seed=snakemake.params.seed,
    max_memory_gb=snakemake.config["cluster"]["max_memory_gb"],
    log=log,
    where=f"{w.model}/{w.dataset}: ",
)
finish()  # skip the interpreter teardown: every output is written
