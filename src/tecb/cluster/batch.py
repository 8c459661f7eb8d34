"""Every reduction and clustering configuration of one (model, dataset) in one process (``cluster.batch: true``).

On small data a reduction or a clustering takes a fraction of the seconds that starting Python and importing
scikit-learn (and umap) cost (benchmarks/demo_overhead.md), so one process runs them all: first the
reductions, then the clusterings. Reruns stay exact: each reduction and each configuration ("member") has a
key of everything that decides its files (its spec, the seed, the sha256 of the files it reads, the versions
of the libraries that compute it; not the cores, which change no result, as in a per-configuration job), kept
in the batch's keys file. A clustering of reduced points is keyed by the reduced file's bytes, so a
reduction recomputed to the same bytes keeps its clusterings. The rule marks its outputs
``update()`` (Snakemake keeps them when the batch reruns and restores them if it fails); a member whose key
is unchanged and whose files are the bytes recorded when they were written (their sha256, in the keys file) is
kept as it is, the others are computed with
:func:`tecb.cluster.reduce.run_reduction` / :func:`tecb.cluster.algorithms.run_configuration`, the functions
a reduce job and a per-configuration cluster job run, so the files are the same bytes either way. After the
clusterings come the batch's other steps on the same (model, dataset), keyed the same way
(:func:`step_key`): MTEB v2's score (:func:`tecb.scoring.mteb_v2.batch_step`) and the cluster view
(:func:`tecb.report.confusion.batch_step`), which would otherwise be two more processes with the same imports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: Libraries whose version can change a clustering's labels.
LIBRARIES = ("numpy", "scipy", "scikit-learn", "hdbscan", "river", "fastcluster", "threadpoolctl")
#: Libraries whose version can change a reduction's coordinates.
REDUCE_LIBRARIES = ("numpy", "scipy", "scikit-learn", "umap-learn", "pynndescent", "numba", "threadpoolctl")
#: The key name of a reduction's member (names in the config cannot hold ":", so it never meets a
#: configuration's ``reduction/algorithm``).
REDUCE_PREFIX = "reduce:"


def library_versions(libraries=LIBRARIES) -> dict[str, str]:
    """``{distribution: version}`` of ``libraries`` (``"-"`` for one that is not installed)."""
    versions = {}
    for name in libraries:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "-"
    return versions


def member_key(*, spec: dict, seed: int, points_sha256: str, splits_sha256: str, versions: dict) -> str:
    """The sha256 of everything that decides one member's files: a configuration's scores and labels (its
    points: the embeddings or reduced file) or a reduction's coordinates (its points: the embeddings)."""
    record = {
        "spec": spec,
        "seed": seed,
        "points": points_sha256,
        "splits": splits_sha256,
        "versions": versions,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def step_key(*, spec: dict, seed: int, inputs_sha256: list[str], versions: dict) -> str:
    """The sha256 of everything that decides a step's files (:class:`Batch`'s ``steps``): its spec, the seed,
    the sha256 of each file it reads (in its order) and the versions of the libraries that compute it."""
    record = {"spec": spec, "seed": seed, "inputs": inputs_sha256, "versions": versions}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def batch_reductions(reductions: list[dict], outputs) -> list[dict]:
    """The reductions of a :class:`Batch` from the rule's ``reductions`` (``reduction``, ``spec``) and its
    output list ``reduced`` (in the same order)."""
    return [
        {"name": r["reduction"], "spec": r["spec"], "out": out}
        for r, out in zip(reductions, outputs.get("reduced", []), strict=True)
    ]


def batch_members(configurations: list[dict], inputs, outputs, *, reduced: dict, threads: int) -> list[dict]:
    """The members of a :class:`Batch` from the rule's ``configurations`` (``reduction``, ``algorithm``,
    ``spec``), its inputs (``embeddings``), the reduced file of each reduction (``reduced``: ``{reduction:
    path}``, the ``out`` of :func:`batch_reductions`) and its outputs (lists ``scores``, ``timings``,
    ``labels`` in the order of ``configurations``). A member runs on the threads its own job would be given: the
    batch job's ``threads`` (the most any member declares, scaled down to ``--cores`` by Snakemake), one for a
    method that runs on one core (:func:`~tecb.cluster.algorithms.threads_used`)."""
    from tecb.cluster.algorithms import threads_used

    members = []
    for c, scores, timings, labels in zip(configurations, outputs.scores, outputs.timings, outputs.labels, strict=True):
        r = c["reduction"]
        points = {"embeddings_path": inputs.embeddings} if r == "none" else {"reduced_path": reduced[r]}
        members.append(
            {
                "name": f"{r}/{c['algorithm']}",
                "spec": c["spec"],
                "threads": threads_used(c["spec"]["method"], threads),
                **points,
                "scores": scores,
                "timings": timings,
                "labels": labels,
            }
        )
    return members


@dataclass(frozen=True)
class Batch:
    """What one (model, dataset)'s batch computes, in this order. ``reductions`` (from :func:`batch_reductions`),
    each on one thread as a reduce job: a dict ``name`` (the reduction), ``spec``, ``out`` (its reduced file).
    ``members`` (from :func:`batch_members`): a dict ``name`` (``reduction/algorithm``), ``spec`` (the algorithm),
    ``threads`` (the cores it runs on, as its own job would), exactly one of ``embeddings_path`` /
    ``reduced_path``, and its three outputs ``scores``, ``timings``, ``labels``. ``steps``, after the clusterings
    whose files they may read: a dict ``name``, ``spec`` (what decides its files besides its inputs), ``inputs``
    (the files it reads), ``outputs``, ``libraries`` (whose versions enter its key) and ``compute`` (a function
    of no arguments writing ``outputs``)."""

    reductions: list[dict]
    members: list[dict]
    steps: Sequence[dict] = ()


@dataclass(frozen=True)
class BatchFiles:
    """A batch's own files: the (model, dataset)'s ``embeddings`` (what the reductions reduce) and ``splits``,
    and the ``keys`` file (the key of every reduction, member and step whose files are up to date)."""

    embeddings: str | Path | None
    splits: str | Path
    keys: str | Path


def run_batch_job(job, run, *, steps: Sequence[dict] = (), log=print) -> list[str]:
    """A cluster_batch job (``job``: the ``snakemake`` object of its script; ``run``: its
    :class:`~tecb.cluster.job.ClusterRun`) through :func:`run_batch`: the reductions and configurations of its
    params ``reductions`` and ``members`` (:func:`batch_reductions`, :func:`batch_members`, on the job's threads),
    then ``steps``, on its (model, dataset)'s ``embeddings`` and ``splits``, keyed in its output ``member_keys``."""
    w, inp, out, p = job.wildcards, job.input, job.output, job.params
    reductions = batch_reductions(p.reductions, out)
    reduced = {r["name"]: r["out"] for r in reductions}
    members = batch_members(p.members, inp, out, reduced=reduced, threads=run.threads)
    return run_batch(
        Batch(reductions=reductions, members=members, steps=steps),
        files=BatchFiles(embeddings=inp.embeddings, splits=inp.splits, keys=out.member_keys),
        seed=p.seed,
        max_memory_gb=run.max_memory_gb,
        cache_umap=bool(run.numba_cache),
        log=log,
        where=f"{w.model}/{w.dataset}: ",
    )


def run_batch(
    batch: Batch,
    *,
    files: BatchFiles,
    seed: int,
    max_memory_gb: float | None,
    cache_umap: bool,
    log=print,
    where: str = "",
) -> list[str]:
    """Reduce, cluster and run the steps of ``batch`` that are not already up to date; returns the names computed.

    ``cache_umap``: turn on numba's on-disk cache before a UMAP (:func:`tecb.cluster.reduce.run_reduction`). The
    keys file never names a reduction, member or step whose files do not match its key: the entry is removed
    before its files are rewritten and written back after them.
    """
    from threadpoolctl import threadpool_limits

    from tecb import io
    from tecb.cluster import reduce
    from tecb.cluster.algorithms import ClusterFiles, run_configuration
    from tecb.io import file_sha256

    reductions, members, steps = batch.reductions, batch.members, batch.steps
    embeddings_path, splits_path, keys_path = files.embeddings, files.splits, files.keys

    digests: dict[str, str] = {}

    def digest(path) -> str:
        if path not in digests:
            digests[path] = file_sha256(path)
        return digests[path]

    names = [REDUCE_PREFIX + r["name"] for r in reductions] + [m["name"] for m in members] + [s["name"] for s in steps]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}a batch names a member twice: {names}")
    # members no longer in the batch are dropped (written with the first change, or at the end)
    keys = {name: key for name, key in io.read_keys(keys_path, log=log).items() if name in names}
    computed = []

    def refresh(name: str, key: str, outputs: list, compute, unhashed=()) -> None:
        if io.keep_or_compute(
            keys, keys_path, name=name, key=key, outputs=outputs, compute=compute, log=log, unhashed=unhashed
        ):
            computed.append(name)

    versions = library_versions(REDUCE_LIBRARIES)
    for r in reductions:

        def compute_reduction(r=r):
            log(f"{REDUCE_PREFIX}{r['name']}: reducing on 1 thread")  # as a reduce job (threads: 1)
            reduce.run_reduction(
                r["spec"],
                files=reduce.ReduceFiles(embeddings=embeddings_path, splits=splits_path, reduced=r["out"]),
                reduction=r["name"],
                seed=seed,
                threads=1,
                cache_umap=cache_umap,
                log=log,
            )
            digests.pop(r["out"], None)  # its clusterings are keyed by the new bytes

        key = member_key(
            spec=r["spec"],
            seed=seed,
            points_sha256=digest(embeddings_path),
            splits_sha256=digest(splits_path),
            versions=versions,
        )
        refresh(REDUCE_PREFIX + r["name"], key, [r["out"]], compute_reduction)

    versions = library_versions()
    for member in members:

        def compute_clustering(member=member):
            log(f"{member['name']}: clustering on {member['threads']} thread(s)")
            with threadpool_limits(member["threads"]):  # BLAS/OpenMP: the threads its own job would declare
                run_configuration(
                    member["spec"],
                    files=ClusterFiles(
                        splits=splits_path,
                        scores=member["scores"],
                        timings=member["timings"],
                        labels=member["labels"],
                        embeddings=member.get("embeddings_path"),
                        reduced=member.get("reduced_path"),
                    ),
                    seed=seed,
                    threads=member["threads"],
                    max_memory_gb=max_memory_gb,
                    log=log,
                    where=f"{where}{member['name']}: ",
                )

        key = member_key(
            spec=member["spec"],
            seed=seed,
            points_sha256=digest(member.get("reduced_path") or member.get("embeddings_path")),
            splits_sha256=digest(splits_path),
            versions=versions,
        )
        # the timings record durations: never the same bytes twice, so only required to exist
        refresh(member["name"], key, [member["scores"], member["labels"]], compute_clustering, [member["timings"]])
    for step in steps:
        key = step_key(
            spec=step["spec"],
            seed=seed,
            inputs_sha256=[digest(path) for path in step["inputs"]],  # after the clusterings it may read
            versions=library_versions(step["libraries"]),
        )
        refresh(step["name"], key, list(step["outputs"]), step["compute"])
    io.write_keys(keys, keys_path)
    n_reduced = sum(name.startswith(REDUCE_PREFIX) for name in computed)
    n_steps = sum(name in {s["name"] for s in steps} for name in computed)
    if reductions:
        log(f"{n_reduced} of {len(reductions)} reductions computed, {len(reductions) - n_reduced} kept")
    n_clustered = len(computed) - n_reduced - n_steps
    log(f"{n_clustered} of {len(members)} configurations computed, {len(members) - n_clustered} kept")
    if steps:
        log(f"{n_steps} of {len(steps)} other steps computed ({', '.join(s['name'] for s in steps)})")
    return computed
