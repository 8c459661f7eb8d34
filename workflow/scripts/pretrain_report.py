"""Table 5, best epochs, the comparison with the paper and Figure 2 from the pre-training scores."""

from pathlib import Path

from tecb.pretrain_tables import render
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
baselines = {tuple(key): path for key, path in zip(snakemake.params.baseline_keys, snakemake.input.baselines)}
render(snakemake.input.scores, baselines, snakemake.input.reference, snakemake.params.table_epochs,
       snakemake.params.budgets, Path(snakemake.output[0]).parent, snakemake.params.model_names, log=log)
