"""The unlabelled books of a dataset's source, as texts to pre-train on (pretrain.unlabelled)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb import io
from tecb.data.datasets import unlabelled_blurb_texts
from tecb.embed.encode import read_texts
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
texts, provenance = unlabelled_blurb_texts(
    snakemake.input.source,
    snakemake.params.variant,
    evaluated=read_texts(snakemake.input.evaluated),
    n_texts=snakemake.params.n_texts,
    seed=snakemake.params.seed,
)
log(f"{len(texts)} unlabelled texts to train on: {provenance}")
io.write_texts(texts, snakemake.output.texts, provenance=provenance)
