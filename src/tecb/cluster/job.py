"""How a cluster-stage job runs (config ``cluster``), resolved in one place: :class:`ClusterRun`.

The workflow resolves it while building the DAG (:meth:`ClusterRun.from_config`: the threads each job declares,
:meth:`ClusterRun.method_threads`), each job script from its Snakemake job (:meth:`ClusterRun.from_job`: the threads
Snakemake gave the job, the memory guard, numba's cache folder). None of these changes a result, so none is a param
(changing one reruns nothing), and no script reads the config itself.

Light (os and dataclasses only): the reduce and cluster_batch scripts point numba at its cache folder here
(:meth:`ClusterRun.use_numba_cache`) before anything imports numba.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ClusterRun:
    """``threads``: the cores of a job whose method uses several (``cluster.threads`` while the DAG is built; in a
    job, the threads Snakemake gave it); ``max_memory_gb``: the memory guard's limit (``cluster.max_memory_gb``);
    ``numba_cache``: the folder of umap's compiled code (``cluster.numba_cache``; None: no disk cache)."""

    threads: int
    max_memory_gb: float | None = None
    numba_cache: str | None = None

    @classmethod
    def from_config(cls, config) -> ClusterRun:
        """The options of the filled config's ``cluster`` section."""
        section = config["cluster"]
        return cls(
            threads=int(section["threads"]),
            max_memory_gb=section.get("max_memory_gb"),
            numba_cache=section.get("numba_cache") or None,
        )

    @classmethod
    def from_job(cls, job) -> ClusterRun:
        """A job's options (``job``: the ``snakemake`` object of a script): the config's, on the threads the job
        was given (what the DAG declared, scaled down to ``--cores`` by Snakemake)."""
        return replace(cls.from_config(job.config), threads=int(job.threads))

    def method_threads(self, method: str) -> int:
        """The cores a clustering with ``method`` uses (:func:`tecb.cluster.algorithms.threads_used`): one for
        Ward's linkage and DBSTREAM, else :attr:`threads`."""
        from tecb.cluster.algorithms import threads_used

        return threads_used(method, self.threads)

    def use_numba_cache(self) -> None:
        """Point numba at :attr:`numba_cache` (``NUMBA_CACHE_DIR``, made absolute) when one is set. Numba reads it
        when it is first imported: a job calls this before anything imports numba."""
        if self.numba_cache:
            os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(self.numba_cache)


def run_cluster_job(job, *, log) -> None:
    """What the ``cluster`` rule's script calls (``job``: the ``snakemake`` object of the script): one
    (model, dataset, reduction, algorithm) clustered split by split (:func:`tecb.cluster.algorithms.run_configuration`)
    with BLAS/OpenMP held to the job's threads (:meth:`ClusterRun.from_job`)."""
    from threadpoolctl import threadpool_limits

    from tecb.cluster.algorithms import ClusterFiles, run_configuration

    w, out, run = job.wildcards, job.output, ClusterRun.from_job(job)
    with threadpool_limits(run.threads):  # BLAS/OpenMP use exactly the job's threads
        run_configuration(
            job.params.spec,
            files=ClusterFiles(
                splits=job.input.splits,
                scores=out.scores,
                timings=out.timings,
                labels=out.labels,
                embeddings=job.input.get("embeddings"),
                reduced=job.input.get("reduced"),
            ),
            seed=job.params.seed,
            threads=run.threads,
            max_memory_gb=run.max_memory_gb,
            log=log,
            where=f"{w.model}/{w.dataset} ({w.algorithm}, {w.reduction}): ",
        )


def run_reduce_job(job, *, log) -> None:
    """What the ``reduce`` rule's script calls (``job``: the ``snakemake`` object of the script): numba pointed at
    its cache folder before anything imports it (:meth:`ClusterRun.use_numba_cache`), then one (model, dataset)'s
    embeddings reduced split by split (:func:`tecb.cluster.reduce.run_reduction`)."""
    run = ClusterRun.from_job(job)
    run.use_numba_cache()
    from tecb.cluster import reduce

    if run.numba_cache:
        log(f"numba cache: {run.numba_cache}")
    reduce.run_reduction(
        dict(job.params.spec),
        files=reduce.ReduceFiles(embeddings=job.input.embeddings, splits=job.input.splits, reduced=job.output[0]),
        reduction=job.wildcards.reduction,
        seed=job.params.seed,
        threads=run.threads,
        cache_umap=bool(run.numba_cache),
        log=log,
    )
