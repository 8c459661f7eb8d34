"""Reduce a (model, dataset)'s embeddings per split with one configured reduction
(tecb.cluster.job.run_reduce_job: numba's cache folder is set before anything imports numba)."""

from tecb.cluster.job import run_reduce_job
from tecb.runlog import finish, open_log

run_reduce_job(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
