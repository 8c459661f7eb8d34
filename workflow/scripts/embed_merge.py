"""A dataset's shards (in text order) merged into the run's embeddings file, byte for byte the one embed.py writes,
and their timings added up (tecb.embed.shard). A cache entry of a sharded model is merged by embed_compute.py."""

from tecb.embed.shard import merge_job
from tecb.runlog import finish, open_log

inp, out = snakemake.input, snakemake.output
merge_job(inp.shards, inp.timings, embeddings=out.embeddings, timings=out.timings, log=open_log(snakemake.log[0]))
finish()  # skip the interpreter teardown: every output is written
