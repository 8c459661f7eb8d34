"""Train one model with one method under one protocol variant for one evaluated dataset and seed (Table 6)."""

import torch

from tecb.adapt.jobs import run
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
p, i, out, w = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards
run(
    method=w.method,
    variant=w.variant,
    model_dir=i.model,
    dataset=w.dataset,
    encoder=dict(p.encoder),
    benchmark_embeddings=i.benchmark,
    datasets={n: (s, t, sp) for n, s, t, sp in zip(p.names, p.sources, i.texts, i.splits)},
    posts_path=i.get("posts"),
    settings=dict(p.settings),
    protocol=dict(p.protocol),
    algorithm=dict(p.algorithm),
    seed=int(w.seed),
    eval_seed=p.eval_seed,
    device=p.device,
    eval_every=p.eval_every,
    eval_batch_size=p.eval_batch_size,
    eval_max_length=p.eval_max_length,
    strict=p.strict,
    text_kind=p.text_kind,
    out_path=out.scores,
    model_out=out.model,
    timings_path=out.timings,
    log=log,
)
