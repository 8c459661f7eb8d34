"""Clusters vs gold labels of one split with each cluster's top terms (src/tecb/report/confusion.py)."""

from tecb.report.confusion import write_view
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
p, inp = snakemake.params, snakemake.input
write_view(
    inp.texts, inp.splits, inp.labels, snakemake.output[0], title=p.title, split=p.split, top_n=p.top_terms, log=log
)
finish()  # skip the interpreter teardown (~0.3 CPU-s a job): every output is written
