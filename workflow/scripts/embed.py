"""Embed a dataset's unique texts with one model into results/{run}/embeddings/{model}/{dataset}.parquet
(its duration into results/{run}/timings/embed/{model}/{dataset}.json).

params.settings are the resolved settings that decide the vectors (tecb.embed.spec.encoder_settings);
how the job runs (batch size, device) comes from the config here, so changing it does not re-embed.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from threadpoolctl import threadpool_limits

from tecb.embed.cache import ModelFiles, embedding_key
from tecb.embed.encode import EmbedJob, embed_dataset
from tecb.embed.spec import job_embed_options, recorded_digest
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
if snakemake.params.settings["kind"] != "tfidf":  # a TF-IDF job never imports torch (~1.6 s CPU)
    import torch

    torch.set_num_threads(snakemake.threads)
embed_options = job_embed_options(snakemake.config, model=snakemake.wildcards.model)
digest = recorded_digest(snakemake.input.get("digest"))
# what decides the vectors (the whole dataset's texts), recorded in the file: tecb.embed.cache.embedding_key
key = embedding_key(
    settings=snakemake.params.settings,
    seed=snakemake.params.seed,
    texts=snakemake.input.texts,
    model=ModelFiles(
        kind=snakemake.params.settings["kind"],
        path=snakemake.input.model[0] if snakemake.input.model else None,
        digest=snakemake.input.digest[0] if snakemake.input.digest else None,
    ),
)
# BLAS/OpenMP on exactly the job's threads, not on every core of the machine: the TF-IDF SVD's vectors depend on
# the BLAS thread count (benchmarks/blas_kernels.md), so this keeps them equal across machines (issue 21.6)
with threadpool_limits(snakemake.threads):
    job = EmbedJob(
        texts=snakemake.input.texts,
        embeddings=snakemake.output.embeddings,
        model_spec=snakemake.params.settings,
        embed_options=embed_options,
        seed=snakemake.params.seed,  # the run's seed for TF-IDF, None for models that use none
        dataset=snakemake.wildcards.dataset,
        model_digest=digest,
        timings=snakemake.output.timings,
        cache_key=key,
    )
    embed_dataset(job, log=log)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
