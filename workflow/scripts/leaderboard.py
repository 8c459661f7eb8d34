"""MTEB's published German clustering scores beside the project's (issue 37): tables/leaderboard.{csv,md}."""

import pandas as pd

from tecb.io import write_text
from tecb.report import leaderboard as L
from tecb.report.render import markdown_table_html
from tecb.report.tables import summarize
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, inp = snakemake.params, snakemake.input
ours = L.ours_paper(summarize(pd.read_parquet(inp.scores)), p.tasks)
if inp.v2:
    ours = pd.concat([ours, L.ours_v2(pd.read_csv(inp.v2))], ignore_index=True)
identities = {m: tuple(v) for m, v in p.identities.items()}
table = L.leaderboard(L.read_published(inp.published), ours, identities, p.names, missing=L.read_missing(inp.published))
write_text(table.round(6).to_csv(index=False), snakemake.output.csv)
write_text(L.to_markdown(table), snakemake.output.md)
write_text(markdown_table_html(L.to_markdown(table), L.CAPTION), snakemake.output.html)
log(L.to_markdown(table))
