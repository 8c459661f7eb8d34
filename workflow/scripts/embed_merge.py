"""A dataset's shards (in text order) merged into the run's embeddings file, byte for byte the one embed.py writes,
and their timings added up (tecb.embed.shard). A cache entry of a sharded model is merged by embed_compute.py."""

from tecb.embed.shard import merge_shards, merge_timings
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
meta = merge_shards(list(snakemake.input.shards), snakemake.output.embeddings)
timings = merge_timings(list(snakemake.input.timings), snakemake.output.timings)
log(f"{len(snakemake.input.shards)} shard(s), {meta['n_texts']} texts, vectors_sha256 {meta['vectors_sha256']}")
log(f"shards' seconds: {timings['shard_seconds']}")
finish()  # skip the interpreter teardown: every output is written
