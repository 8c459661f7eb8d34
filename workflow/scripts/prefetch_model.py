"""Download a Hugging Face model snapshot into resources/models/{model} and record its commit."""

from tecb.hub import prefetch_model
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
spec = snakemake.params.spec
prefetch_model(spec["id"], snakemake.output[0], revision=spec.get("revision"), log=log)
