"""Continue pre-training one model on one dataset (WWM or TSDAE) and score it at each scheduled epoch."""

import torch

from tecb.adapt.pretrain import run
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
run(
    snakemake.input.model,
    snakemake.input.texts,
    snakemake.input.splits,
    snakemake.output.scores,
    snakemake.output.checkpoint,
    snakemake.wildcards.method,
    snakemake.params.method_params,
    snakemake.params.epochs,
    snakemake.params.algorithm,
    int(snakemake.wildcards.seed),
    device=snakemake.params.device,
    eval_batch_size=snakemake.params.eval_batch_size,
    log=log,
    eval_seed=snakemake.params.eval_seed,
    timings_path=snakemake.output.timings,
)
