"""Continue pre-training one model on one dataset (WWM or TSDAE) and score it at each scheduled epoch
(tecb.adapt.pretrain.run_pretrain_job)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

from tecb.adapt.pretrain import run_pretrain_job
from tecb.runlog import open_log

run_pretrain_job(snakemake, log=open_log(snakemake.log[0]))
