"""Fetch (or read a local copy of) the Reddit submission id list and write it deduplicated."""

from tecb.data import rehydrate
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
params = snakemake.params
rehydrate.prepare_ids(snakemake.output.ids, path=params.path, url=params.url, sha256=params.sha256, log=log)
