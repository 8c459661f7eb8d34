"""Download a Hugging Face model snapshot into resources/models/{model} and record its commit.

Code repositories the model names in auto_map (jina v3, gte-multilingual, nomic v2) are copied into the
folder too (tecb.embed.hub.vendor_remote_code), so the offline embed jobs can load them.
"""

from tecb.embed.hub import prefetch_model
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
spec = snakemake.params.spec
prefetch_model(
    spec["id"], snakemake.output[0], revision=spec.get("revision"), log=log, code_revisions=spec.get("code_revisions")
)
