"""Download a raw source (resumable, SHA-256 checked); extract one member of an archive if asked."""

from tecb import download
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
params = snakemake.params
download.fetch(params.url, snakemake.output[0], sha256=params.sha256,
               member=getattr(params, "member", None), log=log)
