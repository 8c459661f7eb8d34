"""Seconds per optimizer step of the study's training jobs on real German text (issue 42, item 3: "one step
budget per dataset sized from a measured calibration").

For each (model, method, dataset) it builds the very training object a pre-training job uses
(:class:`tecb.adapt.pretrain._Training`, with the study's settings from ``--config``), draws batches of the dataset's
own texts in a seeded random order (so the lengths are the dataset's), runs one untimed warm-up step and then
``--steps`` timed optimizer steps, and writes the median seconds per step, texts per second and what one epoch
would take.

    nice python benchmarks/training_calibration.py --run results/real --config config/real-study.yaml \
        --out benchmarks/training_calibration.md

Needs the real run's datasets (results/real/datasets/) and the packaged models (resources/real/models/).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

from tecb.adapt.pretrain import _Training
from tecb.adapt.runtime import resolve_device
from tecb.config import layered_config
from tecb.configcheck import validated_config
from tecb.embed.encode import read_texts

ROOT = Path(__file__).resolve().parent.parent


def time_steps(method: str, model_dir: Path, params: dict, texts: list[str], *, steps: int, seed: int) -> list[float]:
    """Seconds of each of ``steps`` optimizer steps (after one warm-up step) on batches of ``texts``."""
    device = resolve_device("cpu")
    training = _Training(method, model_dir, dict(params, seed=seed), device, len(texts), 1)
    training.module.train()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    size = training.batch_size * training.accum
    seconds = []
    for i in range(steps + 1):
        idx = order[(i * size) % len(texts) :][:size]
        started = time.perf_counter()
        for start in range(0, len(idx), training.batch_size):
            loss = training.loss([texts[j] for j in idx[start : start + training.batch_size]], rng) / training.accum
            loss.backward()
        training._optimizer_step()
        if i:
            seconds.append(time.perf_counter() - started)
    return seconds


def write(rows: list[tuple], args) -> None:
    """The table of the rows measured so far (written after each, so a stopped calibration keeps them)."""
    lines = [
        "# Training calibration: seconds per optimizer step on real German text",
        "",
        f"Written by `benchmarks/training_calibration.py` on {datetime.date.today()} ({platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__}, {args.threads} thread(s), the settings of "
        f"`{args.config}` incl. `max_length` and `freeze_word_embeddings`): median of {args.steps} timed steps after "
        "one warm-up, batches drawn from the dataset's own texts. One epoch = every text once. "
        f"{args.conditions}",
        "",
        "| dataset | texts | model | method | texts/step | s/step | texts/s | one epoch (min) |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for dataset, n, model, method, size, per_step, steps_per_epoch in rows:
        lines.append(
            f"| {dataset} | {n} | {model} | {method} | {size} | {per_step:.2f} | {size / per_step:.1f} | "
            f"{steps_per_epoch * per_step / 60:.1f} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="results/real", help="a real run's results folder (its datasets/)")
    parser.add_argument("--config", default="config/real-study.yaml")
    parser.add_argument("--models", default="resources/real/models")
    parser.add_argument("--datasets", nargs="*", help="default: the study's")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--conditions", default="", help="what else ran on the machine, said in the table")
    parser.add_argument("--out", default="benchmarks/training_calibration.md")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = layered_config(ROOT, ROOT, ["config/real.yaml", args.config])
    study = validated_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")["pretrain"]
    folders = {"e5-small-trainable": "multilingual-e5-small", "minilm": "all-MiniLM-L6-v2"}
    rows = []
    for dataset in args.datasets or study["datasets"]:
        texts = read_texts(Path(args.run) / "datasets" / dataset / "texts.parquet")
        for model in study["models"]:
            for method, params in study["methods"].items():
                params = {k: v for k, v in params.items() if k not in ("epochs", "budget", "table_epochs")}
                seconds = time_steps(
                    method, Path(args.models) / folders[model], params, texts, steps=args.steps, seed=0
                )
                size = int(params["batch_size"]) * int(params.get("grad_accum", 1))
                rows.append(
                    (dataset, len(texts), model, method, size, statistics.median(seconds), -(-len(texts) // size))
                )
                print(rows[-1], flush=True)
                write(rows, args)
    print(Path(args.out).read_text())


if __name__ == "__main__":
    main()
