"""A dataset's shards (in text order) merged into one embeddings file, byte for byte the one embed.py writes, and
their timings added up (tecb.embed.shard): a run's embeddings file, or a missing entry of the embedding cache
(written under the entry's lock, kept if another run finished it meanwhile: tecb.embed.cache.fill_entry)."""

import os

from tecb.embed.cache import fill_entry
from tecb.embed.shard import merge_shards, merge_timings
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])


def merge(paths):
    meta = merge_shards(list(snakemake.input.shards), paths["embeddings"])
    timings = merge_timings(list(snakemake.input.timings), paths["timings"])
    log(f"{len(snakemake.input.shards)} shard(s), {meta['n_texts']} texts, vectors_sha256 {meta['vectors_sha256']}")
    log(f"shards' seconds: {timings['shard_seconds']}")


if "key" in snakemake.wildcards.keys():  # rule embed_compute_merge: a cache entry
    fill_entry(os.path.dirname(snakemake.output.embeddings), snakemake.wildcards.key, merge, log=log)
else:
    merge({"embeddings": snakemake.output.embeddings, "timings": snakemake.output.timings})
finish()  # skip the interpreter teardown: every output is written
