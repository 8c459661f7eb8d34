"""Download a raw source (resumable, SHA-256 checked); extract one member of an archive if asked."""

from tecb.data import download
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
params = snakemake.params
output = snakemake.output
download.fetch(
    params.url,
    output[0],
    sha256=params.sha256,
    member=getattr(params, "member", None),
    archive=output.get("archive"),
    log=log,
)
