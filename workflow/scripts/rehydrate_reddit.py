"""Rehydrate the Reddit submission ids with PRAW (resumable; credentials from praw.ini / praw_* vars)."""

from tecb.data import rehydrate
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
rehydrate.rehydrate(
    snakemake.input.ids,
    snakemake.output.submissions,
    snakemake.params.checkpoint,
    settings=dict(snakemake.params.settings),
    summary_path=snakemake.output.summary,
    log=log,
)
