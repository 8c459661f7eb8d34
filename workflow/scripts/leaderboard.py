"""MTEB's published German clustering scores beside the project's (issue 37): tables/leaderboard.{csv,md}
(tecb.report.job.run_leaderboard_job)."""

from tecb.report.job import run_leaderboard_job
from tecb.runlog import open_log

run_leaderboard_job(snakemake, log=open_log(snakemake.log[0]))
