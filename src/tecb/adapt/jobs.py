"""One training job of the workflow: build the leak-free training data, train, score base and adapted model.

:func:`run` is what the ``adapt`` rule calls, one job per (model, method, protocol variant, dataset, seed). The
training scores the base model (step 0), the model every ``eval_every`` optimizer steps and the adapted model
(its last step), all on the same evaluation splits (the variant's,
:mod:`tecb.adapt.protocol`) exactly as the benchmark scores a model: encoded by
:func:`tecb.embed.encode.encode_transformer`, clustered and scored split by split by
:func:`tecb.cluster.algorithms.score_splits`, at the sequence length the benchmark embeds with. Durations go to
the timings file only.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tecb import io
from tecb.adapt import protocol as proto
from tecb.adapt.pretrain import Scoring

SCORE_COLUMNS = ("step", "split", "n_texts", "n_labels", "n_clusters", "v_measure", "homogeneity", "completeness")


def build_plan(
    job: Job,
    *,
    evaluated: proto.LabelledData,
    others: list[proto.LabelledData],
    posts,
    split_seed: int,
) -> proto.Plan | str:
    """The variant's :class:`tecb.adapt.protocol.Plan` for ``job`` (or why it cannot be built: ``disjoint`` on a
    dataset with too few categories). Read from the job: ``method``, ``variant``, the training ``seed``,
    ``protocol`` (the ``adapt.protocol`` section) and, from the method's ``settings``, ``instance_size`` (the
    supervised method's documents per clustering instance) and argue's ``siamese_objectives`` (pairs built beside
    its objective's for the siamese phase, where ``siamese_epochs`` is not 0). ``split_seed``: the config's seed
    (``disjoint``'s category halves)."""
    method, variant, seed, protocol = job.method, job.variant, job.seed, job.protocol
    instance_size = job.settings.get("instance_size")
    if variant not in proto.variants_of(method, proto.VARIANTS[1:], proto.ARGUE_OBJECTIVES):
        raise ValueError(f"adapt: method {method} does not run under protocol {variant!r}")
    if variant == "lodo":
        return proto.lodo_plan(evaluated, others, instance_size=instance_size, rounds=protocol["rounds"], seed=seed)
    if variant == "disjoint":
        return proto.disjoint_plan(
            evaluated,
            instance_size=instance_size,
            rounds=protocol["rounds"],
            min_categories=protocol["min_categories"],
            seed=seed,
            split_seed=split_seed,
        )
    if method == "argue":  # the variant is the objective; all of argue's data is transductive (no label)
        siblings = [o for o in others if proto.same_corpus(evaluated, o)]
        siamese = int(job.settings.get("siamese_epochs", 0))
        data = proto.argue_plan(
            evaluated.texts,
            posts,
            objective=variant,
            siamese_objectives=job.settings.get("siamese_objectives", ()) if siamese else (),
            companions=[t for o in siblings for t in o.texts],
            limits=proto.PairLimits(
                min_words=protocol["order_min_words"],
                max_order_pairs=protocol["max_order_pairs"],
                max_reply_pairs=protocol["max_reply_pairs"],
                max_similarity_pairs=protocol["max_similarity_pairs"],
            ),
            seed=seed,
        )
        counts = {o: sum(1 for p in data.pairs if p[3] == o) for o in proto.ARGUE_OBJECTIVES}
        extra = {
            "objective": variant,
            "pairs": counts,
            "reply_source": "forum posts (Posts table)" if posts is not None else None,
            "companion_datasets": [o.name for o in siblings],
        }
    else:
        data = proto.unsupervised_plan(evaluated.texts)
        extra = {"texts": len(data.texts)}
    record = {
        "variant": "transductive",
        "labels_seen": "none",
        "train_datasets": [evaluated.name],
        **extra,
        "eval_splits": len(evaluated.splits),
    }
    return proto.Plan(data, evaluated.texts, evaluated.splits, record)


def encode(model, texts, *, batch_size: int, encode_kwargs: dict | None = None) -> np.ndarray:
    """``texts`` encoded as the embed stage encodes them (:func:`tecb.embed.encode.encode_transformer` with the
    model's encode options: prompt, normalisation, extra keyword arguments)."""
    import torch

    from tecb.embed.encode import encode_transformer

    was_training = model.training
    with torch.no_grad():
        vectors = np.concatenate(
            [v for _, v in encode_transformer(model, list(texts), batch_size, encode_kwargs=encode_kwargs)]
        )
    model.train(was_training)
    return vectors


def score_vectors(vectors, splits, *, algorithm: dict, seed: int, log=print) -> list[dict]:
    """Per-split score rows of ``vectors`` (rows: the texts the splits' ids point to)."""
    from tecb.cluster.algorithms import score_splits

    points = (
        (s, vectors[np.asarray(ids, dtype=np.int64)], np.asarray(labels, dtype=object)) for s, ids, labels in splits
    )
    return score_splits(points, algorithm, seed=seed, log=log)


def evaluate(
    model, texts, splits, *, algorithm: dict, batch_size: int, seed: int, encode_kwargs: dict | None = None, log=print
) -> list[dict]:
    """Per-split score rows of ``model`` (a SentenceTransformer) on ``splits`` over ``texts``."""
    vectors = encode(model, texts, batch_size=batch_size, encode_kwargs=encode_kwargs)
    return score_vectors(vectors, splits, algorithm=algorithm, seed=seed, log=log)


def check_base_vectors(vectors, texts, benchmark_path, *, all_texts, float32: bool) -> dict:
    """Assert that the base model's vectors (step 0) are the embed stage's: ``benchmark_path`` is the benchmark's
    embeddings file of the evaluated dataset (rows in ``all_texts`` order), ``texts`` the encoded ones (all of them
    or a subset). Compared row by row after L2 normalisation (k-means and the metrics see the same geometry);
    tolerance 1e-4 in float32 (padding and batch order), 2e-2 where the benchmark embedded in half precision.
    Returns the record; raises ``AssertionError`` naming the largest difference."""
    matrix, _ = io.read_embeddings(benchmark_path)
    bench = np.asarray(matrix, dtype=np.float64)
    if len(bench) != len(all_texts):
        raise AssertionError(f"{benchmark_path}: {len(bench)} vectors for {len(all_texts)} texts")
    row = {t: i for i, t in enumerate(all_texts)}
    bench = bench[np.asarray([row[t] for t in texts], dtype=np.int64)]
    ours = np.asarray(vectors, dtype=np.float64)

    def unit(x):
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    diff = float(np.max(np.abs(unit(ours) - unit(bench)))) if len(ours) else 0.0
    tolerance = 1e-4 if float32 else 2e-2
    if not diff <= tolerance:
        raise AssertionError(
            f"step 0 is not the benchmark's base model: its vectors differ from {benchmark_path} by up to {diff:.2e} "
            f"(tolerance {tolerance:g}); the adapt stage must load and encode the model as the embed stage does"
        )
    return {"benchmark_embeddings": str(benchmark_path), "max_abs_diff": round(diff, 8), "tolerance": tolerance}


def is_p2p(dataset: str, text_kind: str | None) -> bool:
    """Whether a dataset's texts are paragraphs (title and text): its config's ``text``, else its name."""
    if text_kind:
        return str(text_kind).lower() == "p2p"
    return dataset.upper().endswith("P2P")


def what_ran(method: str, result: dict) -> list[str]:
    """Warnings about what a training run really did (empty: it ran as its method says): a ClusterNS run whose
    in-batch clustering never started trained plain SimCSE."""
    warnings = []
    if method == "clusterns":
        info = result.get("phases", {}).get("clusterns", {})
        if info.get("clustering_started_at") is None:
            warnings.append(
                f"clusterns never clustered in {info.get('batches', 0)} batches (the mean in-batch cosine never fell "
                "to similarity_threshold, or the batch was smaller than n_clusters): it trained plain SimCSE"
            )
    return warnings


def _no_durations(obj):
    """``obj`` without keys naming durations (seconds): what is compared across reruns records none."""
    if isinstance(obj, dict):
        return {k: _no_durations(v) for k, v in obj.items() if "second" not in k}
    if isinstance(obj, list):
        return [_no_durations(v) for v in obj]
    return obj


def _rows(step: int, scored: list[dict], loss=None) -> list[dict]:
    return [{"step": int(step), **{k: r[k] for k in SCORE_COLUMNS[1:]}, "loss": loss} for r in scored]


def _write_scores(rows: list[dict], meta: dict, path) -> None:
    import pyarrow as pa

    schema = pa.schema(
        [("step", pa.int64()), ("split", pa.int64())]
        + [(c, pa.int64()) for c in ("n_texts", "n_labels", "n_clusters")]
        + [(c, pa.float64()) for c in ("v_measure", "homogeneity", "completeness", "loss")]
    )
    table = pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
    io.write_table(table.replace_schema_metadata({"tecb": json.dumps(meta, sort_keys=True)}), path)


@dataclass(frozen=True)
class Job:
    """What one training job trains: ``method`` under protocol ``variant`` (argue: its objective) for the evaluated
    ``dataset`` with training ``seed``. ``settings``: the method's (schema-filled); ``protocol``: the
    ``adapt.protocol`` section; ``text_kind``: the dataset's ``text`` (``p2p``: methods with a ``p2p_max_length``
    train at that length, None meaning the benchmark's)."""

    method: str
    variant: str
    dataset: str
    seed: int
    settings: dict
    protocol: dict
    text_kind: str | None = None


@dataclass(frozen=True)
class Files:
    """A job's files. Inputs: ``model_dir`` (the base model), ``datasets`` (name -> ``(source, texts_path,
    splits_path)`` of the evaluated dataset and of every other dataset the job may read), ``posts`` (the forum's
    ``corpus.sqlite3``, argue's reply pairs, or None), ``benchmark_embeddings`` (the embed stage's file of the
    evaluated dataset: step 0 is asserted against it, None: not checked). Outputs: ``scores`` (per step and split,
    the protocol record in its metadata), ``model_out`` (the adapted model with ``protocol.json``), ``timings``."""

    model_dir: str | Path
    datasets: dict
    scores: str | Path
    model_out: str | Path
    timings: str | Path
    posts: str | Path | None = None
    benchmark_embeddings: str | Path | None = None


def run(
    job: Job,
    *,
    scoring: Scoring,
    files: Files,
    encoder: dict | None,
    device: str,
    strict: bool = False,
    log=print,
) -> None:
    """Workflow entry point: build the job's leak-free training data, train, score, write :class:`Files`'
    outputs. ``encoder``: the model's resolved embed settings (:func:`tecb.embed.spec.encoder_settings`: prompt,
    pooling, normalize, dtype, trust_remote_code, model/tokenizer/encode kwargs; None: the bare folder), so the
    base model is loaded and encoded as the embed stage does. ``strict``: a run that did not do what its method
    says (:func:`what_ran`) fails instead of being flagged in its outputs."""
    method, variant, dataset, seed = job.method, job.variant, job.dataset, job.seed
    settings, model_dir = job.settings, files.model_dir
    algorithm, eval_seed, eval_max_length = scoring.algorithm, scoring.seed, scoring.max_length
    out_path, model_out, timings_path = files.scores, files.model_out, files.timings
    from tecb.adapt.pretrain import resolve_device, seeded_global_rngs
    from tecb.adapt.training import load_base
    from tecb.data.sources.gnad import read_posts
    from tecb.embed.encode import encode_options

    started = time.perf_counter()
    device = resolve_device(device)
    loaded = {name: proto.read_labelled(name, src, t, s) for name, (src, t, s) in files.datasets.items()}
    evaluated = loaded[dataset]
    others = [d for name, d in loaded.items() if name != dataset]
    posts = read_posts(files.posts) if (files.posts and method == "argue") else None
    plan = build_plan(job, evaluated=evaluated, others=others, posts=posts, split_seed=eval_seed)
    meta = {
        "method": method,
        "variant": variant,
        "dataset": dataset,
        "seed": seed,
        "eval_seed": eval_seed,
        "base_model": str(model_dir),
        "settings": settings,
        "algorithm": algorithm,
    }
    if isinstance(plan, str):  # the variant does not apply to this dataset: say so in every output
        log(f"{method}/{variant} on {dataset}: skipped: {plan}")
        meta["protocol"] = {"variant": variant, "skipped": plan}
        _write_scores([], meta, out_path)
        with io.atomic_dir(model_out) as tmp:
            io.write_json(meta, Path(tmp) / "protocol.json")
        io.write_json({"method": method, "variant": variant, "seed": seed, "skipped": plan}, timings_path)
        return
    meta["protocol"] = plan.record
    log(f"{method}/{variant} on {dataset}: {json.dumps(plan.record, sort_keys=True)}")
    encoder = dict(encoder) if encoder else {"path": str(model_dir)}
    encoder.setdefault("path", str(model_dir))
    encode_kwargs = encode_options(encoder)
    bench_length = load_base(encoder, device="cpu").max_seq_length  # the length the embed stage embeds with
    if eval_max_length is None:
        eval_max_length = bench_length
    meta["eval_max_length"] = eval_max_length
    meta["encoder"] = {k: v for k, v in encoder.items() if k != "path"}
    settings = dict(settings)
    if "p2p_max_length" in settings and is_p2p(dataset, job.text_kind):  # P2P: training sees the text, not the title
        settings["max_length"] = settings["p2p_max_length"] or bench_length
    meta["train_max_length"] = int(settings["max_length"])

    def step0_check(vectors) -> dict:
        if files.benchmark_embeddings is None:
            return {"skipped": "no benchmark embeddings given"}
        if eval_max_length != bench_length:
            return {"skipped": f"adapt.eval_max_length {eval_max_length} is not the benchmark's {bench_length}"}
        record = check_base_vectors(
            vectors,
            plan.eval_texts,
            files.benchmark_embeddings,
            all_texts=evaluated.texts,
            float32=not (device.startswith("cuda") and encoder.get("dtype", "float32") != "float32"),
        )
        log(f"step 0 is the benchmark's base model: vectors within {record['max_abs_diff']:.1e} of its embeddings")
        return record

    calls: list[tuple[float, list[dict]]] = []
    eval_seconds = 0.0

    def during_training(model) -> float:
        """Score the model in memory at the benchmark's sequence length (training may truncate shorter)."""
        nonlocal eval_seconds
        t0 = time.perf_counter()
        trained_length, model.max_seq_length = model.max_seq_length, eval_max_length
        try:
            vectors = encode(model, plan.eval_texts, batch_size=scoring.batch_size, encode_kwargs=encode_kwargs)
        finally:
            model.max_seq_length = trained_length
        if not calls:  # step 0: the base model, which must be the benchmark's
            meta["step0_check"] = step0_check(vectors)
        scored = score_vectors(vectors, plan.eval_splits, algorithm=algorithm, seed=eval_seed, log=log)
        eval_seconds += time.perf_counter() - t0
        mean = float(np.mean([r["v_measure"] for r in scored]))
        log(f"evaluation {len(calls)}: mean V-measure {mean:.4f}")
        calls.append((mean, scored))
        return mean

    from tecb.adapt.training import TrainingRun, train

    with seeded_global_rngs(seed):
        result = train(
            TrainingRun(method=method, base_model_dir=encoder, data=plan.training, settings=settings, seed=seed),
            device=device,
            output_dir=str(model_out),
            eval_every=scoring.every,
            evaluate=during_training,
            log=log,
            save_max_length=eval_max_length,
        )
    rows = []
    pending = iter(calls)
    # the scored steps of the history, in order, each with the rows of the call that gave its score (a step
    # scored twice keeps the later score, as the history does)
    for h in (h for h in result["history"] if h.get("score") is not None):
        for mean, scored in pending:
            if mean == h["score"]:
                rows += _rows(int(h["step"]), scored, h.get("loss"))
                break
        else:
            raise RuntimeError(f"no evaluation gave the score {h['score']} of step {h['step']}")
    meta["warnings"] = what_ran(method, result)
    for warning in meta["warnings"]:
        log(f"WARNING: {warning}")
    if strict and meta["warnings"]:
        raise RuntimeError(f"adapt.strict: {'; '.join(meta['warnings'])}")
    steps = sorted({r["step"] for r in rows})
    if not steps or steps[0] != 0 or steps[-1] != int(result["steps"]):
        raise RuntimeError(f"training scored steps {steps}: the base model (0) and the last step are needed")
    meta["training"] = _no_durations({k: v for k, v in result.items() if k != "history"})
    meta["history"] = _no_durations(result["history"])
    io.write_json(meta, Path(model_out) / "protocol.json")
    _write_scores(rows, meta, out_path)
    io.write_json(
        {
            "method": method,
            "variant": variant,
            "seed": seed,
            "steps": int(result["steps"]),
            "device": result.get("device", device),
            "train_seconds": round(float(result.get("seconds", 0.0)), 3),
            "eval_seconds": round(eval_seconds, 3),
            "total_seconds": round(time.perf_counter() - started, 3),
        },
        timings_path,
    )
