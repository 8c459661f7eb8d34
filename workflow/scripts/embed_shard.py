"""Embed one shard of a dataset (texts params.start..params.stop-1) with one model into
results/{run}/shards/{model}/{dataset}/{start}-{stop}.parquet, as embed.py embeds all of them (tecb.embed.shard)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import torch
from threadpoolctl import threadpool_limits

from tecb.embed.cache import ModelFiles, embedding_key
from tecb.embed.encode import EmbedJob
from tecb.embed.shard import embed_shard
from tecb.embed.spec import job_embed_options, recorded_digest
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)  # transformer kinds only (tecb.embed.shard.SHARDABLE_KINDS)
embed_options = job_embed_options(snakemake.config, model=snakemake.wildcards.model)
digest = recorded_digest(snakemake.input.get("digest"))
# what decides the vectors (the whole dataset's texts), recorded in the file: tecb.embed.cache.embedding_key
key = embedding_key(
    settings=snakemake.params.settings,
    seed=None,  # transformer kinds use no seed (as embed_key gets: embed_seed)
    texts=snakemake.input.texts,
    model=ModelFiles(
        kind=snakemake.params.settings["kind"],
        path=snakemake.input.model[0] if snakemake.input.model else None,
        digest=snakemake.input.digest[0] if snakemake.input.digest else None,
    ),
)
log(f"shard {snakemake.params.start}..{snakemake.params.stop} of {snakemake.wildcards.dataset}")
with threadpool_limits(snakemake.threads):  # BLAS on the job's threads, as embed.py (issue 21.6)
    job = EmbedJob(
        texts=snakemake.input.texts,
        embeddings=snakemake.output.embeddings,
        model_spec=snakemake.params.settings,
        embed_options=embed_options,
        seed=None,  # transformer kinds use no seed (TF-IDF is never sharded)
        dataset=snakemake.wildcards.dataset,
        model_digest=digest,
        timings=snakemake.output.timings,
        cache_key=key,
    )
    embed_shard(job, start=snakemake.params.start, stop=snakemake.params.stop, log=log)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
