"""A ``cluster_batch`` job end to end (``cluster.batch: true``): the cluster stage's batch of one (model, dataset)
(:func:`tecb.cluster.batch.run_batch_job`: its reductions and configurations) with the report's steps on the same
(model, dataset) after them, where configured: MTEB v2's score (:func:`tecb.scoring.mteb_v2.batch_step`) and the
cluster view (:func:`tecb.report.confusion.batch_step`). Here, in the report's layer, because it uses both.

Light at import (tecb.cluster.batch only): the job points numba at its cache folder first
(:meth:`tecb.cluster.job.ClusterRun.use_numba_cache`), then imports this.
"""

from __future__ import annotations

from tecb.cluster.batch import run_batch_job


def batch_steps(job, *, threads: int, log=print) -> list[dict]:
    """The steps a cluster_batch ``job`` runs after its clusterings, from its params ``steps`` (``mteb_v2``: its
    ``max_documents`` and ``options``; ``view``: its ``labels``, ``title``, ``split`` and ``top_terms``): MTEB v2's
    score on ``threads`` (the ones its own job would run on), then the cluster view."""
    from tecb.report import confusion
    from tecb.scoring import mteb_v2

    w, inp, out, spec = job.wildcards, job.input, job.output, job.params.steps
    steps = []
    if "mteb_v2" in spec:
        v2 = spec["mteb_v2"]
        settings = mteb_v2.Settings(max_documents=v2["max_documents"], options=v2["options"])
        steps.append(
            mteb_v2.batch_step(
                inp.embeddings, inp.splits, out.mteb_v2, dataset=w.dataset, seed=job.params.seed, settings=settings,
                threads=threads, log=log,
            )
        )  # fmt: skip
    if "view" in spec:
        view = spec["view"]
        steps.append(
            confusion.batch_step(
                inp.texts, inp.splits, view["labels"], out.view, title=view["title"], split=view["split"],
                top_n=view["top_terms"], log=log,
            )
        )  # fmt: skip
    return steps


def run_cluster_batch(job, run, *, log=print) -> list[str]:
    """Run a cluster_batch ``job`` (the ``snakemake`` object of its script) as ``run`` (its
    :class:`~tecb.cluster.job.ClusterRun`) says: its batch with its :func:`batch_steps`; returns the names of the
    reductions, configurations and steps computed (the others were up to date)."""
    return run_batch_job(job, run, steps=batch_steps(job, threads=run.threads, log=log), log=log)
