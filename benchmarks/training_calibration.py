"""Optimizer steps per CPU-second of every training arm of the study on real German text (issue 54, item 2: "a
calibration of steps per CPU-second per method (median of >= 5 steps) that sizes each budget").

For the trainable multilingual-e5-small on Blurbs S2S it builds the very objects the study's jobs train: Table 5's
TSDAE and WWM (:class:`tecb.adapt.pretrain._Training`, ``pretrain.methods`` of ``--configs``) and Table 6's arms
(SimCSE dropout and crop, ClusterNS, COB on its disjoint instances, argue's pair phase and siamese phase: each
method's own ``phases`` on the data its protocol builds, ``tecb.adapt.jobs.build_plan``), all with the word
embeddings frozen as the study trains them, in one process on one thread. Each arm runs one untimed warm-up step,
then ``--steps`` timed optimizer steps; the table gives the median CPU seconds of a step (``time.process_time``: what
other processes on the machine take is left out, as far as one thread can leave it out), the steps per CPU-second,
the spread and the wall-clock median, with the load average before and after.

    nice python benchmarks/training_calibration.py --run results/real --out benchmarks/training_calibration.md

Needs the real run's Blurbs S2S and P2P datasets (results/real/datasets/; P2P: argue's companion blurbs) and the
packaged models (resources/real/models/).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

from tecb.adapt import jobs, protocol, training
from tecb.adapt.pretrain import _Training
from tecb.config import layered_config
from tecb.configcheck import validated_config
from tecb.embed.encode import read_texts

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ["config/real.yaml", "config/real-study.yaml", "config/real-study-s2s.yaml", "config/real-study-adapt.yaml"]
#: Table 6's arms: (method, variant) as the study's jobs name them
ARMS = [
    ("simcse", "dropout"),
    ("simcse", "cropping"),
    ("clusterns", "transductive"),
    ("cob", "disjoint"),
    ("argue", "similarity"),
]


def timed(step, steps: int) -> tuple[list[float], list[float]]:
    """``(cpu seconds, wall seconds)`` of each of ``steps`` calls of ``step()`` after one untimed warm-up call."""
    cpu, wall = [], []
    for i in range(steps + 1):
        c, w = time.process_time(), time.perf_counter()
        step()
        if i:
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
    return cpu, wall


def pretrain_step(method: str, model_dir: Path, params: dict, texts: list[str], seed: int):
    """A step function of a Table 5 job (its optimizer step over ``batch_size x grad_accum`` of ``texts``), the
    texts per step and the steps per epoch."""
    training = _Training(method, model_dir, dict(params, seed=seed), "cpu", len(texts), 1)
    training.module.train()
    rng = np.random.default_rng(seed)
    order, size, at = rng.permutation(len(texts)), training.batch_size * training.accum, [0]

    def step():
        idx = order[(at[0] * size) % len(texts) :][:size]
        at[0] += 1
        for start in range(0, len(idx), training.batch_size):
            loss = training.loss([texts[j] for j in idx[start : start + training.batch_size]], rng) / training.accum
            loss.backward()
        training._optimizer_step()

    return step, size, training.steps_per_epoch


def arm_steps(method: str, variant: str, model_dir: Path, adapt: dict, data: dict, seed: int) -> list[tuple]:
    """``[(phase name, step function, texts per step, steps per epoch)]`` of a Table 6 arm: its phases as its job builds them (the
    study's settings, word embeddings frozen), each step one batch's loss and optimizer step."""
    settings = protocol.arm_settings(method, variant, adapt["methods"][method])
    job = jobs.Job(method, variant, "BlurbsClusteringS2S", seed, settings, adapt["protocol"], "s2s")
    plan = jobs.build_plan(job, evaluated=data["s2s"], others=[data["p2p"]], posts=None, split_seed=42)
    model = training.load_base(model_dir, device="cpu", max_seq_length=settings.get("max_length"))
    training.freeze_word_embeddings(model)
    rng = np.random.default_rng(seed)
    phases = training.method_module(method).phases(
        model=model, data=plan.training, settings=settings, rng=rng, device="cpu"
    )
    out = []
    for phase in phases:
        params, optimizer, scheduler, epochs = training._start_phase(
            phase, model, rng, "cpu", training.Progress(None, 1e9)
        )
        batches, counter = epochs[0], itertools.count()

        def step(phase=phase, batches=batches, tools=(params, optimizer, scheduler), count=counter):
            loss = phase.loss(batches[next(count) % len(batches)])
            if loss is not None:
                training._optimizer_step(loss, tools[0], tools[1], tools[2], None, phase.max_grad_norm)

        # texts per step: a batch of texts (SimCSE, ClusterNS), of pairs (argue: two texts each), or of clustering
        # instances of ``instance_size`` documents each (COB)
        per_item = {"argue": 2, "cob": settings.get("instance_size")}.get(method, 1)
        out.append((phase.name, step, len(batches[0]) * per_item, len(batches)))
    return out


def write(rows: list[dict], args, loads: list) -> None:
    """The table of the rows measured so far (written after each, so a stopped calibration keeps them)."""
    lines = [
        "# Training calibration: optimizer steps per CPU-second of each training arm on real German text",
        "",
        f"Written by `benchmarks/training_calibration.py` on {datetime.date.today()} ({platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__}, 1 thread, one process under `nice`): the trainable "
        "multilingual-e5-small on Blurbs S2S (1,808 titles) with the settings of "
        f"{', '.join(f'`{c}`' for c in CONFIGS)} and the word embeddings frozen (as the study trains them). Per "
        f"arm: one untimed warm-up step, then the median of {args.steps} timed optimizer steps in CPU seconds "
        "(`time.process_time`), its min-max, and the wall-clock median; the last two columns: what one job of "
        f"{args.budget:.0f} CPU-s (one thread) holds at that pace. "
        f"Load average (1, 5, 15 min) before: {loads[0]}, after: {loads[-1]}. {args.conditions}",
        "",
        "| table | arm | phase | texts per step | steps per epoch | CPU-s per step (median) | min-max | steps per CPU-s "
        f"| wall-s (median) | steps in {args.budget:.0f} CPU-s | epochs in {args.budget:.0f} CPU-s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['table']} | {r['arm']} | {r['phase']} | {r['size']} | {r['per_epoch']} | {r['cpu']:.2f} "
            f"| {r['low']:.2f}-{r['high']:.2f} | {1 / r['cpu']:.3f} | {r['wall']:.2f} | {int(args.budget / r['cpu'])} "
            f"| {args.budget / r['cpu'] / r['per_epoch']:.1f} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="results/real", help="a real run's results folder (its datasets/)")
    parser.add_argument("--models", default="resources/real/models")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--budget", type=float, default=600.0, help="CPU seconds per job the last columns size")
    parser.add_argument("--conditions", default="", help="what else ran on the machine, said in the table")
    parser.add_argument("--out", default="benchmarks/training_calibration.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = validated_config(layered_config(ROOT, ROOT, CONFIGS), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    model_dir = Path(args.models) / "multilingual-e5-small"
    folder = Path(args.run) / "datasets"
    data = {
        kind: protocol.read_labelled(
            name, "germeval2019", folder / name / "texts.parquet", folder / name / "splits.parquet"
        )
        for kind, name in (("s2s", "BlurbsClusteringS2S"), ("p2p", "BlurbsClusteringP2P"))
    }
    texts = read_texts(folder / "BlurbsClusteringS2S" / "texts.parquet")
    rows, loads = [], [tuple(round(x, 2) for x in os.getloadavg())]

    def add(table, arm, phase, step, size, per_epoch):
        cpu, wall = timed(step, args.steps)
        rows.append(
            {"table": table, "arm": arm, "phase": phase, "size": size, "per_epoch": per_epoch, "cpu": statistics.median(cpu),
             "low": min(cpu), "high": max(cpu), "wall": statistics.median(wall)}
        )  # fmt: skip
        print(rows[-1], flush=True)
        loads.append(tuple(round(x, 2) for x in os.getloadavg()))
        write(rows, args, loads)

    for method in ("tsdae", "wwm"):
        params = {
            k: v
            for k, v in config["pretrain"]["methods"][method].items()
            if k not in ("epochs", "budget", "table_epochs")
        }
        step, size, per_epoch = pretrain_step(method, model_dir, dict(params, freeze_word_embeddings=True), texts, 42)
        add("5", method, method, step, size, per_epoch)
    adapt = dict(config["adapt"])
    for method, variant in ARMS:
        for phase, step, size, per_epoch in arm_steps(method, variant, model_dir, adapt, data, seed=42):
            add("6", f"{method}/{variant}", phase, step, size, per_epoch)
    print(Path(args.out).read_text())


if __name__ == "__main__":
    main()
