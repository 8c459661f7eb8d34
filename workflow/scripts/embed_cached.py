"""A run's embeddings (and embed timings) file from its cache entry: a hard link, or a copy (tecb.embed.cache)."""

from tecb.embed.cache import link_or_copy
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
for name in ("embeddings", "timings"):
    link_or_copy(snakemake.input[name], snakemake.output[name])
    log(f"{snakemake.output[name]} <- {snakemake.input[name]}")
finish()  # skip the interpreter teardown: every output is written
