"""Fetch a published dataset's test.jsonl from the hub at its pinned revision (design §6)."""

from tecb.data.sources import published
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
repo_id, revision = published.resolve(snakemake.wildcards.source, dict(snakemake.params.spec))
published.hub_download(repo_id, revision, snakemake.output[0], log=log)
