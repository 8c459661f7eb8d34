"""Reduce and cluster one (model, dataset) with every configuration, then score it with MTEB v2 and write its
cluster view where configured (cluster.batch: true), rerunning only what changed."""

import os

from tecb.cluster.job import ClusterRun

# numba reads its cache directory when it is first imported: set it before anything imports numba (as reduce.py).
run = ClusterRun.from_job(snakemake)  # the job's threads: the most any configuration declares
if run.numba_cache:
    os.environ["NUMBA_CACHE_DIR"] = os.path.abspath(run.numba_cache)

from tecb.cluster.batch import Batch, BatchFiles, batch_members, batch_reductions, run_batch  # noqa: E402
from tecb.report import confusion, mteb_v2  # noqa: E402
from tecb.runlog import finish, open_log  # noqa: E402

log = open_log(snakemake.log[0])
w, inp, out, p = snakemake.wildcards, snakemake.input, snakemake.output, snakemake.params
reductions = batch_reductions(p.reductions, out)
steps = []
if "mteb_v2" in p.steps:
    v2 = p.steps["mteb_v2"]
    steps.append(
        mteb_v2.batch_step(
            inp.embeddings, inp.splits, out.mteb_v2, dataset=w.dataset, seed=p.seed,
            settings=mteb_v2.Settings(max_documents=v2["max_documents"], options=v2["options"]), threads=run.threads,
            log=log,
        )
    )  # fmt: skip
if "view" in p.steps:
    view = p.steps["view"]
    steps.append(
        confusion.batch_step(
            inp.texts, inp.splits, view["labels"], out.view, title=view["title"], split=view["split"],
            top_n=view["top_terms"], log=log,
        )
    )  # fmt: skip
members = batch_members(
    p.members,
    inp,
    out,
    reduced={r["name"]: r["out"] for r in reductions},
    threads=run.threads,
)
run_batch(
    Batch(reductions=reductions, members=members, steps=steps),
    files=BatchFiles(embeddings=inp.embeddings, splits=inp.splits, keys=out.member_keys),
    seed=p.seed,
    max_memory_gb=run.max_memory_gb,
    cache_umap=bool(run.numba_cache),
    log=log,
    where=f"{w.model}/{w.dataset}: ",
)
finish()  # skip the interpreter teardown: every output is written
