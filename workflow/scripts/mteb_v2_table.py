"""The MTEB v2 table: models x datasets, mean ± SD over the bootstraps."""

from tecb import mteb_v2
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p = snakemake.params
stem = snakemake.output[0].removesuffix(".md")  # the first output is {stem}.md
mteb_v2.render_table(dict(zip(map(tuple, p.pairs), snakemake.input)), p.model_names, p.datasets, stem, log=log)
