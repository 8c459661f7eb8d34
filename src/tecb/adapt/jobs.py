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
from pathlib import Path

import numpy as np

from tecb import io
from tecb.adapt import protocol as proto

SCORE_COLUMNS = ("step", "split", "n_texts", "n_labels", "n_clusters", "v_measure", "homogeneity", "completeness")


def build_plan(
    *,
    method: str,
    variant: str,
    evaluated: proto.LabelledData,
    others: list[proto.LabelledData],
    posts,
    settings: dict,
    instance_size: int | None,
    seed: int,
) -> proto.Plan | str:
    """The variant's :class:`tecb.adapt.protocol.Plan` for ``method`` (or why it cannot be built: ``disjoint`` on a
    dataset with too few categories). ``settings``: the ``adapt.protocol`` section; ``instance_size``: the
    supervised method's own (documents per clustering instance)."""
    if variant not in proto.variants_of(method, proto.VARIANTS[1:]):
        raise ValueError(f"adapt: method {method} does not run under protocol {variant!r}")
    if variant == "lodo":
        return proto.lodo_plan(evaluated, others, instance_size=instance_size, rounds=settings["rounds"], seed=seed)
    if variant == "disjoint":
        return proto.disjoint_plan(
            evaluated,
            instance_size=instance_size,
            rounds=settings["rounds"],
            min_categories=settings["min_categories"],
            seed=seed,
        )
    splits = evaluated.splits
    if method == "argue":
        data = proto.argue_plan(
            evaluated.texts,
            posts,
            objectives=settings["argue_objectives"],
            min_words=settings["order_min_words"],
            max_order_pairs=settings["max_order_pairs"],
            max_reply_pairs=settings["max_reply_pairs"],
            seed=seed,
        )
        counts = {o: sum(1 for p in data.pairs if p[3] == o) for o in proto.ARGUE_OBJECTIVES}
        extra = {"pairs": counts, "reply_source": "forum posts (Posts table)" if posts is not None else None}
    else:
        data = proto.unsupervised_plan(evaluated.texts)
        extra = {"texts": len(data.texts)}
    record = {
        "variant": "transductive",
        "labels_seen": "none",
        "train_datasets": [evaluated.name],
        **extra,
        "eval_splits": len(splits),
    }
    return proto.Plan(data, evaluated.texts, splits, record)


def evaluate(model, texts, splits, *, algorithm: dict, batch_size: int, seed: int, log=print) -> list[dict]:
    """Per-split score rows of ``model`` (a SentenceTransformer) on ``splits`` over ``texts``."""
    import torch

    from tecb.cluster.algorithms import score_splits
    from tecb.embed.encode import encode_transformer

    was_training = model.training
    with torch.no_grad():
        vectors = np.concatenate([v for _, v in encode_transformer(model, list(texts), batch_size)])
    model.train(was_training)
    points = (
        (s, vectors[np.asarray(ids, dtype=np.int64)], np.asarray(labels, dtype=object)) for s, ids, labels in splits
    )
    return score_splits(points, algorithm, seed=seed, log=log)


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


def run(
    *,
    method: str,
    variant: str,
    model_dir,
    dataset: str,
    datasets: dict,
    posts_path,
    settings: dict,
    protocol: dict,
    algorithm: dict,
    seed: int,
    eval_seed: int,
    device: str,
    eval_every: int | None,
    eval_batch_size: int,
    eval_max_length: int | None,
    out_path,
    model_out,
    timings_path,
    log=print,
) -> None:
    """Workflow entry point. ``datasets``: name -> ``(source, texts_path, splits_path)`` of ``dataset`` and of
    every other dataset the variant may train on; ``posts_path``: the forum's ``corpus.sqlite3`` (argue's reply
    pairs) or None. Writes the per-(step, split) scores (``out_path``, the protocol record in its metadata), the
    adapted model with ``protocol.json`` (``model_out``) and the durations (``timings_path``)."""
    from tecb.adapt.pretrain import resolve_device, seeded_global_rngs
    from tecb.data.sources.gnad import read_posts
    from tecb.embed.encode import load_sentence_transformer

    started = time.perf_counter()
    device = resolve_device(device)
    loaded = {name: proto.read_labelled(name, src, t, s) for name, (src, t, s) in datasets.items()}
    evaluated = loaded[dataset]
    others = [d for name, d in loaded.items() if name != dataset]
    posts = read_posts(posts_path) if (posts_path and method == "argue") else None
    plan = build_plan(
        method=method,
        variant=variant,
        evaluated=evaluated,
        others=others,
        posts=posts,
        settings=protocol,
        instance_size=settings.get("instance_size"),
        seed=seed,
    )
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
    if eval_max_length is None:  # the length the benchmark embeds with: the model's own
        eval_max_length = load_sentence_transformer(str(model_dir), device="cpu").max_seq_length
    meta["eval_max_length"] = eval_max_length
    calls: list[tuple[float, list[dict]]] = []
    eval_seconds = 0.0

    def during_training(model) -> float:
        """Score the model in memory at the benchmark's sequence length (training may truncate shorter)."""
        nonlocal eval_seconds
        t0 = time.perf_counter()
        trained_length, model.max_seq_length = model.max_seq_length, eval_max_length
        try:
            scored = evaluate(
                model,
                plan.eval_texts,
                plan.eval_splits,
                algorithm=algorithm,
                batch_size=eval_batch_size,
                seed=eval_seed,
                log=log,
            )
        finally:
            model.max_seq_length = trained_length
        eval_seconds += time.perf_counter() - t0
        mean = float(np.mean([r["v_measure"] for r in scored]))
        log(f"evaluation {len(calls)}: mean V-measure {mean:.4f}")
        calls.append((mean, scored))
        return mean

    from tecb.adapt.training import train

    with seeded_global_rngs(seed):
        result = train(
            method=method,
            base_model_dir=str(model_dir),
            data=plan.training,
            settings=settings,
            seed=seed,
            device=device,
            output_dir=str(model_out),
            eval_every=eval_every,
            evaluate=during_training,
            log=log,
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
