"""The shards of a dataset into results/{run}/shards/{dataset}.json (tecb.embed.shard.plan_shards): its number of
texts and the [start, stop) ranges of whole chunks of about embed.shard_size texts each."""

from tecb.embed.shard import plan_shards
from tecb.io import write_json
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
plan = plan_shards(
    snakemake.input.texts, shard_size=snakemake.params.shard_size, chunk_size=snakemake.params.chunk_size
)
log(f"{plan['n_texts']} texts in {len(plan['shards'])} shard(s): {plan['shards']}")
write_json(plan, snakemake.output[0])
finish()  # skip the interpreter teardown: every output is written
