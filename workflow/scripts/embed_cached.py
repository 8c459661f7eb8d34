"""A run's embeddings (and embed timings) file from its cache entry: a hard link, or a copy (tecb.embed.cache)."""

import os

from tecb.embed.cache import entry_paths, link_or_copy
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
entry = snakemake.input.embeddings
sources = entry_paths(os.path.dirname(entry), os.path.basename(entry).removesuffix(".parquet"))
for name in ("embeddings", "timings"):
    link_or_copy(sources[name], snakemake.output[name])
    log(f"{snakemake.output[name]} <- {sources[name]}")
finish()  # skip the interpreter teardown: every output is written
