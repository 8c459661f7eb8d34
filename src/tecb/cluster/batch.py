"""Every clustering configuration of one (model, dataset) in one process (``cluster.batch: true``).

On small data a clustering takes a fraction of the second that starting Python and importing scikit-learn
costs (benchmarks/demo_overhead.md), so one process runs them all. Reruns stay exact: each configuration
("member") has a key of everything that decides its files (the algorithm's spec, the seed, the sha256 of
the points and splits it reads, the versions of the clustering libraries; not the cores, which change no
result, as in a per-configuration job), kept in the batch's keys file. The rule marks its outputs
``update()`` (Snakemake keeps them when the batch reruns and restores them if it fails); a member whose key
is unchanged and whose files exist is kept as it is, the others are computed with
:func:`tecb.cluster.algorithms.run_configuration`, the function a per-configuration job runs, so the files
are the same bytes either way.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata

#: Libraries whose version can change a clustering's labels.
LIBRARIES = ("numpy", "scipy", "scikit-learn", "hdbscan", "river", "fastcluster", "threadpoolctl")


def library_versions() -> dict[str, str]:
    """``{distribution: version}`` of :data:`LIBRARIES` (``"-"`` for one that is not installed)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "-"
    return versions


def member_key(*, spec: dict, seed: int, points_sha256: str, splits_sha256: str, versions: dict) -> str:
    """The sha256 of everything that decides one configuration's scores and labels."""
    record = {
        "spec": spec,
        "seed": seed,
        "points": points_sha256,
        "splits": splits_sha256,
        "versions": versions,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def read_keys(path) -> dict[str, str]:
    """The keys file of a batch (``{member: key}``); empty when it does not exist yet."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        keys = json.load(f)
    if not isinstance(keys, dict):
        raise ValueError(f"{path}: a batch's keys file holds an object {{member: key}}")
    return keys


def batch_members(configurations: list[dict], inputs, outputs, *, cluster_threads: int, max_threads: int) -> list[dict]:
    """The members of :func:`run_batch` from the rule's ``configurations`` (``reduction``, ``algorithm``,
    ``spec``), its inputs (``embeddings``, ``reduced_{reduction}``) and its outputs (lists ``scores``,
    ``timings``, ``labels`` in the order of ``configurations``). A member runs on the threads its own job
    would declare (:func:`~tecb.cluster.algorithms.threads_used` of ``cluster_threads``), scaled down to the
    batch job's ``max_threads`` as Snakemake scales a job's threads down to ``--cores``."""
    from tecb.cluster.algorithms import threads_used

    members = []
    for c, scores, timings, labels in zip(configurations, outputs.scores, outputs.timings, outputs.labels, strict=True):
        r = c["reduction"]
        points = {"embeddings_path": inputs.embeddings} if r == "none" else {"reduced_path": inputs[f"reduced_{r}"]}
        members.append(
            {
                "name": f"{r}/{c['algorithm']}",
                "spec": c["spec"],
                "threads": min(threads_used(c["spec"]["method"], cluster_threads), max_threads),
                **points,
                "scores": scores,
                "timings": timings,
                "labels": labels,
            }
        )
    return members


def run_batch(
    members: list[dict],
    *,
    splits_path,
    keys_path,
    seed: int,
    max_memory_gb: float | None,
    log=print,
    where: str = "",
) -> list[str]:
    """Cluster every member that is not already up to date; returns the names of the members computed.

    A member is a dict: ``name`` (``reduction/algorithm``), ``spec`` (the algorithm), ``threads`` (the
    cores it runs on, as its own job would), exactly one of ``embeddings_path`` / ``reduced_path``, and
    its three outputs ``scores``, ``timings``, ``labels``. The keys file never names a member whose files
    do not match its key: the member's entry is removed before its files are rewritten and written back
    after them.
    """
    from threadpoolctl import threadpool_limits

    from tecb import io
    from tecb.cluster.algorithms import run_configuration
    from tecb.data.download import sha256_of

    versions = library_versions()
    digests: dict[str, str] = {}

    def digest(path) -> str:
        if path not in digests:
            digests[path] = sha256_of(path)
        return digests[path]

    names = [m["name"] for m in members]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}a batch names a member twice: {names}")
    # members no longer in the batch are dropped (written with the first change, or at the end)
    keys = {name: key for name, key in read_keys(keys_path).items() if name in names}
    computed = []
    for member in members:
        name = member["name"]
        points = member.get("reduced_path") or member.get("embeddings_path")
        key = member_key(
            spec=member["spec"],
            seed=seed,
            points_sha256=digest(points),
            splits_sha256=digest(splits_path),
            versions=versions,
        )
        outputs = [member["scores"], member["timings"], member["labels"]]
        if keys.get(name) == key and all(os.path.exists(p) for p in outputs):
            log(f"{name}: up to date (same key {key[:12]}), kept")
            continue
        if name in keys:
            del keys[name]
            io.write_json(keys, keys_path)
        log(f"{name}: clustering on {member['threads']} thread(s)")
        with threadpool_limits(member["threads"]):  # BLAS/OpenMP: the threads its own job would declare
            run_configuration(
                splits_path,
                member["spec"],
                member["scores"],
                member["timings"],
                member["labels"],
                embeddings_path=member.get("embeddings_path"),
                reduced_path=member.get("reduced_path"),
                seed=seed,
                threads=member["threads"],
                max_memory_gb=max_memory_gb,
                log=log,
                where=f"{where}{name}: ",
            )
        keys[name] = key
        io.write_json(keys, keys_path)
        computed.append(name)
    io.write_json(keys, keys_path)
    log(f"{len(computed)} of {len(members)} configurations computed, {len(members) - len(computed)} kept")
    return computed
