"""Cluster one (model, dataset, reduction) with one algorithm: scores, timings and predicted labels per split."""

from threadpoolctl import threadpool_limits

from tecb.cluster.algorithms import ClusterFiles, run_configuration
from tecb.cluster.job import ClusterRun
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
w, out, run = snakemake.wildcards, snakemake.output, ClusterRun.from_job(snakemake)
with threadpool_limits(run.threads):  # BLAS/OpenMP use exactly the job's threads
    run_configuration(
        snakemake.params.spec,
        files=ClusterFiles(
            splits=snakemake.input.splits,
            scores=out.scores,
            timings=out.timings,
            labels=out.labels,
            embeddings=snakemake.input.get("embeddings"),
            reduced=snakemake.input.get("reduced"),
        ),
        seed=snakemake.params.seed,
        threads=run.threads,
        max_memory_gb=run.max_memory_gb,
        log=log,
        where=f"{w.model}/{w.dataset} ({w.algorithm}, {w.reduction}): ",
    )
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
