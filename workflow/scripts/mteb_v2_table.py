"""The MTEB v2 table: models x datasets, mean ± SD over the bootstraps, and its long CSV."""

from tecb.report import mteb_v2
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, out = snakemake.params, snakemake.output
files = mteb_v2.TableFiles(
    results=dict(zip(map(tuple, p.pairs), snakemake.input[: len(p.pairs)])),
    chance=dict(zip(p.datasets, snakemake.input.chance)) if snakemake.input.chance else None,
    table={**dict(zip(p.formats, out.table)), "html": out.html},
    long=out.long,
)
mteb_v2.render_table(files, p.model_names, p.datasets, confidence=p.confidence, log=log)
