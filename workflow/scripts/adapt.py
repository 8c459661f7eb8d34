"""Train one model with one method under one protocol variant for one evaluated dataset and seed (Table 6)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # compute jobs never reach the hub (design §7); set before any HF import

import torch

from tecb.adapt.jobs import Files, Job, Scoring, resume_of, run
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
p, i, out, w = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards
resume_path, resume_every = resume_of(snakemake)  # how the job runs, not a param: changing it reruns nothing
job = Job(w.method, w.variant, w.dataset, int(w.seed), dict(p.settings), dict(p.protocol), p.text_kind)
scoring = Scoring(dict(p.algorithm), p.eval_seed, p.eval_batch_size, p.eval_max_length, p.eval_every)
files = Files(
    model_dir=i.model,
    datasets={n: (s, t, sp) for n, s, t, sp in zip(p.names, p.sources, i.texts, i.splits)},
    scores=out.scores,
    model_out=out.model,
    timings=out.timings,
    posts=i.get("posts"),
    benchmark_embeddings=i.benchmark,
    resume=resume_path,
)
run(
    job,
    scoring=scoring,
    files=files,
    encoder=dict(p.encoder),
    device=p.device,
    strict=p.strict,
    resume_every=resume_every,
    log=log,
)
