"""The long-text table: share of texts truncated at max_seq_length (token coverage) per model and dataset."""

from tecb.io import write_text
from tecb.report.extras import truncation_table
from tecb.report.render import to_html
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p = snakemake.params
table = truncation_table(dict(zip(map(tuple, p.pairs), snakemake.input)), p.model_names, p.datasets)
write_text(table.to_csv(), snakemake.output.csv)
write_text(
    to_html(
        table,
        caption="Texts truncated at the model's max_seq_length, in percent of the dataset's texts "
        "(in brackets: the share of all tokens the encoder saw).",
        footnotes=["n/a: not recorded (TF-IDF has no length limit)."],
    ),
    snakemake.output.html,
)
log(table.to_string())
