"""Distil a local transformer into a static (model2vec) model: results/{run}/models/{model}/."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7)

import torch

from tecb.embed.encode import distill_static
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
torch.manual_seed(0)
log(str(distill_static(snakemake.params.source, snakemake.output[0], snakemake.params.pca_dims, log=log)))
