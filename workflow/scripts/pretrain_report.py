"""Table 5, best epochs, the comparison with the paper and Figure 2 from the pre-training scores
(tecb.report.job.run_pretrain_report_job)."""

from tecb.report.job import run_pretrain_report_job
from tecb.runlog import open_log

run_pretrain_report_job(snakemake, log=open_log(snakemake.log[0]))
