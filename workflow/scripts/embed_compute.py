"""Make one (model, dataset)'s embedding-cache entry {cache_dir}/{key}.parquet (params.owner names the run's model
and dataset with that key), under the entry's lock: an entry that another run finished meanwhile is kept, not
computed again (tecb.embed.cache.fill_entry). The entry is embedded as embed.py embeds a run's file or, for a
sharded model (embed.shard_size), merged from the run's shards as embed_merge.py merges them: the same bytes."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.embed.cache import fill_entry
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
model, dataset = snakemake.params.owner["model"], snakemake.params.owner["dataset"]
log(f"cache entry of {model} / {dataset}")


def merge(paths):
    from tecb.embed.shard import merge_job

    merge_job(snakemake.input.shards, snakemake.input.timings, **paths, log=log)


def compute(paths):
    from threadpoolctl import threadpool_limits

    from tecb.embed.encode import embed_dataset
    from tecb.embed.job import embed_job

    if snakemake.params.settings["kind"] != "tfidf":  # a TF-IDF job never imports torch (as embed.py)
        import torch

        torch.set_num_threads(snakemake.threads)
    with threadpool_limits(snakemake.threads):  # BLAS on the job's threads, as embed.py (issue 21.6)
        # the file names its key (as every embeddings file) and no run's folder
        job = embed_job(
            snakemake, embeddings=paths["embeddings"], timings=paths["timings"], cache_key=snakemake.wildcards.key,
            owner=(model, dataset),
        )  # fmt: skip
        embed_dataset(job, log=log)


sharded = "shards" in snakemake.input.keys()
fill_entry(
    os.path.dirname(snakemake.output.embeddings), snakemake.wildcards.key, merge if sharded else compute, log=log
)
finish()  # skip the interpreter teardown: every output is written
