"""Continue pre-training one model on one dataset (WWM or TSDAE) and score it at each scheduled epoch."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import torch

from tecb.adapt.pretrain import PretrainJob, run
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
job = PretrainJob(
    model_dir=snakemake.input.model,
    texts_path=snakemake.input.texts,
    splits_path=snakemake.input.splits,
    checkpoint_dir=snakemake.output.checkpoint,
    method=snakemake.wildcards.method,
    params=snakemake.params.method_params,
    eval_epochs=snakemake.params.epochs,
    algorithm=snakemake.params.algorithm,
    seed=int(snakemake.wildcards.seed),
    eval_seed=snakemake.params.eval_seed,
    device=snakemake.params.device,
    eval_batch_size=snakemake.params.eval_batch_size,
    # beside the checkpoint folder, not an output: a killed job started again continues from it
    resume_path=snakemake.output.checkpoint + ".resume.pt",
    resume_every=snakemake.params.resume_every,
    train_texts_path=snakemake.input.train_texts or None,  # none: the dataset's own texts
)
run(job, snakemake.output.scores, log=log, timings_path=snakemake.output.timings)
