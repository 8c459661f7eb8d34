"""Cluster one (model, dataset, reduction) with one algorithm: scores, timings and predicted labels per split
(tecb.cluster.job.run_cluster_job)."""

from tecb.cluster.job import run_cluster_job
from tecb.runlog import finish, open_log

run_cluster_job(snakemake, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
