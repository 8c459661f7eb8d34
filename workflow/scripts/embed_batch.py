"""Embed every dataset of one model (embed.batch: true) into results/{run}/embeddings/{model}/{dataset}.parquet,
each as an embed job would, skipping the datasets whose key is unchanged (tecb.embed.batch)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.batch import run_embed_batch
from tecb.embed.job import EmbedRun, job_model_files, job_threads
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
inp, out, p, run = snakemake.input, snakemake.output, snakemake.params, EmbedRun.from_job(snakemake)
members = [
    {"dataset": d, "settings": p.settings[d], "texts": texts, "embeddings": emb, "timings": timings}
    for d, texts, emb, timings in zip(p.datasets, inp.texts, out.embeddings, out.timings, strict=True)
]
with job_threads(snakemake, p.kind):  # torch and BLAS on the job's threads, as an embed job's (issue 21.6)
    run_embed_batch(
        members,
        embed_options=run.options,
        seed=p.seed,  # the run's seed for TF-IDF, None for models that use none
        model=job_model_files(snakemake),
        keys_path=out.batch_keys,
        cache_dir=run.cache_dir,  # the store's entries, filled and linked
        log=log,
    )
finish()  # skip the interpreter teardown: every output is written
