"""A run's embeddings (and embed timings) file from its cache entry: a hard link, or a copy (tecb.embed.cache),
once the entry is verified against its record; a damaged entry is moved aside and named, never linked."""

import os

from tecb.embed.cache import entry_paths, link_or_copy, quarantine, verify_entry
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
entry = snakemake.input.embeddings
cache_dir, key = os.path.dirname(entry), os.path.basename(entry).removesuffix(".parquet")
why = verify_entry(cache_dir, key)
if why:
    message = quarantine(cache_dir, key, why)
    if message:
        log(f"ERROR {message}")
        raise SystemExit(f"{snakemake.output.embeddings}: {message}")
sources = entry_paths(cache_dir, key)
for name in ("embeddings", "timings"):
    link_or_copy(sources[name], snakemake.output[name])
    log(f"{snakemake.output[name]} <- {sources[name]}")
finish()  # skip the interpreter teardown: every output is written
