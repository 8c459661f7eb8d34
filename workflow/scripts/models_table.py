"""The models table: mteb's registry metadata of each model and its trained-on flag per dataset (issue 37)."""

from tecb.io import write_text
from tecb.report.model_table import CAPTION, models_table, to_markdown
from tecb.report.render import markdown_table_html
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
table = models_table(snakemake.params.models, snakemake.params.datasets)
write_text(table.to_csv(index=False), snakemake.output.csv)
write_text(to_markdown(table), snakemake.output.md)
write_text(markdown_table_html(to_markdown(table), CAPTION), snakemake.output.html)
log(to_markdown(table))
