"""Embed one (model, dataset) into its embedding-cache entry {cache_dir}/{key}.parquet (as embed.py does into a
run's file; params.owner names the run's model and dataset with that key), under the entry's lock: an entry that
another run finished meanwhile is kept, not computed again (tecb.embed.cache.fill_entry)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from threadpoolctl import threadpool_limits

from tecb.embed.cache import fill_entry
from tecb.embed.encode import embed_dataset
from tecb.embed.spec import job_embed_options, recorded_digest
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
model, dataset = snakemake.params.owner["model"], snakemake.params.owner["dataset"]
embed_options = job_embed_options(snakemake.config, model=model)
digest = recorded_digest(snakemake.input.get("digest"))
log(f"cache entry of {model} / {dataset}")


def compute(paths):
    if snakemake.params.settings["kind"] != "tfidf":  # a TF-IDF job never imports torch (as embed.py)
        import torch

        torch.set_num_threads(snakemake.threads)
    with threadpool_limits(snakemake.threads):  # BLAS on the job's threads, as embed.py (issue 21.6)
        embed_dataset(
            snakemake.input.texts,
            paths["embeddings"],
            snakemake.params.settings,
            embed_options,
            seed=snakemake.params.seed,  # the run's seed for TF-IDF, None for models that use none
            log=log,
            dataset=dataset,
            model_digest=digest,
            timings_path=paths["timings"],
        )


fill_entry(os.path.dirname(snakemake.output.embeddings), snakemake.wildcards.key, compute, log=log)
finish()  # skip the interpreter teardown: every output is written
