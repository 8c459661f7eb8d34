"""Reduce and cluster one (model, dataset) with every configuration, then score it with MTEB v2 and write its
cluster view where configured (cluster.batch: true), rerunning only what changed (tecb.report.cluster_batch)."""

from tecb.cluster.job import ClusterRun

run = ClusterRun.from_job(snakemake)  # the job's threads: the most any configuration declares
run.use_numba_cache()  # numba reads its cache folder when it is first imported: before anything imports numba

from tecb.report.cluster_batch import run_cluster_batch  # noqa: E402
from tecb.runlog import finish, open_log  # noqa: E402

run_cluster_batch(snakemake, run, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown: every output is written
