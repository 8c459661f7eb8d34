"""Create a tiny BERT checkpoint whose vocabulary is trained on the benchmark's texts."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import pyarrow.parquet as pq

from tecb.embed.tiny_bert import create_tiny_bert
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
corpus = [t for path in snakemake.input.texts for t in pq.read_table(path).column("text").to_pylist()]
create_tiny_bert(snakemake.output[0], corpus, seed=snakemake.params.seed)
log(f"tiny BERT with a vocabulary trained on {len(corpus)} texts -> {snakemake.output[0]}")
