"""Embed a dataset's unique texts with one model into results/embeddings/{model}/{dataset}.parquet."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import torch

from tecb.embed import embed_dataset
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
embed_dataset(snakemake.input.texts, snakemake.output[0], snakemake.params.spec, snakemake.params.options,
              seed=snakemake.params.seed, log=log)
