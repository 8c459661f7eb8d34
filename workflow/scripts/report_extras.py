"""The configuration (credentials redacted) and the benchmark runtimes, for the report."""

from tecb.io import write_text
from tecb.report.extras import runtime_summary, runtimes, write_config
from tecb.report.render import to_html
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
write_config(snakemake.params.config, snakemake.output.config)
table = runtimes(snakemake.input.benchmarks, snakemake.params.benchmark_keys)
write_text(table.to_csv(index=False), snakemake.output.runtimes)
summary = runtime_summary(table)
write_text(
    to_html(summary, caption="Runtimes per step from the rules' benchmark files (seconds, MB)."),
    snakemake.output.summary,
)
log(summary.to_string())
