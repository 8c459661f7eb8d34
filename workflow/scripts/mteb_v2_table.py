"""The MTEB v2 table: models x datasets, mean ± SD over the bootstraps, and its long CSV."""

from tecb.report import mteb_v2
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, out = snakemake.params, snakemake.output
table_paths = {**dict(zip(p.formats, out.table)), "html": out.html}
mteb_v2.render_table(
    dict(zip(map(tuple, p.pairs), snakemake.input)), p.model_names, p.datasets, table_paths, out.long, log=log
)
