"""Write the demo's raw inputs in the real source formats."""

from tecb.data import demo as demo_data
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
out = snakemake.output
demo_data.write_germeval_zip(out.germeval, seed=snakemake.params.seed)
demo_data.write_million_posts_sqlite(out.million_posts, seed=snakemake.params.seed)
demo_data.write_reddit_submissions(out.reddit, seed=snakemake.params.seed)
log(f"wrote {out.germeval}, {out.million_posts}, {out.reddit}")
