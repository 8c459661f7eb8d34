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
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tecb import io
from tecb.adapt import protocol as proto
from tecb.adapt.pretrain import Scoring
from tecb.adapt.training import CONTROLS

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
    (``disjoint``'s category halves). ``oracle`` (the positive control) trains on the evaluated dataset's own
    labels (:func:`tecb.adapt.protocol.oracle_plan`). A control (``random_head``) gets no training data and the
    evaluation of its variant (:func:`tecb.adapt.protocol.control_plan`)."""
    method, variant, seed, protocol = job.method, job.variant, job.seed, job.protocol
    instance_size = job.settings.get("instance_size")
    if variant not in proto.known_variants(method):
        raise ValueError(f"adapt: method {method} does not run under protocol {variant!r}")
    if method in CONTROLS:  # no training data; the evaluation of the methods it controls
        return proto.control_plan(evaluated, variant, min_categories=protocol["min_categories"], split_seed=split_seed)
    if variant == "lodo":
        return proto.lodo_plan(evaluated, others, instance_size=instance_size, rounds=protocol["rounds"], seed=seed)
    if variant == "oracle":  # the positive control: the evaluated labels, on purpose
        return proto.oracle_plan(evaluated, instance_size=instance_size, rounds=protocol["rounds"], seed=seed)
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
        data, extra = _argue_data(job, evaluated, others, posts)
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


def _argue_data(job: Job, evaluated: proto.LabelledData, others: list[proto.LabelledData], posts):
    """argue's training pairs for its objective (the job's variant) and their record: transductive, no label."""
    siblings = [o for o in others if proto.same_corpus(evaluated, o)]
    siamese = int(job.settings.get("siamese_epochs", 0))
    data = proto.argue_plan(
        evaluated.texts,
        posts,
        objective=job.variant,
        siamese_objectives=job.settings.get("siamese_objectives", ()) if siamese else (),
        companions=[t for o in siblings for t in o.texts],
        limits=proto.PairLimits(
            min_words=job.protocol["order_min_words"],
            max_order_pairs=job.protocol["max_order_pairs"],
            max_reply_pairs=job.protocol["max_reply_pairs"],
            max_similarity_pairs=job.protocol["max_similarity_pairs"],
        ),
        seed=job.seed,
    )
    counts = {o: sum(1 for p in data.pairs if p[3] == o) for o in proto.ARGUE_OBJECTIVES}
    extra = {
        "objective": job.variant,
        "pairs": counts,
        "reply_source": "forum posts (Posts table)" if posts is not None else None,
        "companion_datasets": [o.name for o in siblings],
    }
    return data, extra


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


def score_vectors(
    vectors, splits, *, algorithm: dict, seed: int, log=print, predictions: list | None = None
) -> list[dict]:
    """Per-split score rows of ``vectors`` (rows: the texts the splits' ids point to); ``predictions`` (a list,
    when given) gets each split's ``(split, predicted clusters)`` (states x texts at ``restarts`` > 1)."""
    from tecb.cluster.algorithms import cluster_splits

    points = (
        (s, vectors[np.asarray(ids, dtype=np.int64)], np.asarray(labels, dtype=object)) for s, ids, labels in splits
    )
    rows, _, predicted = cluster_splits(points, algorithm, seed=seed, log=log)
    if predictions is not None:
        predictions.extend(predicted)
    return rows


def labels_table(steps, splits):
    """A training job's labels file: ``step``, then the cluster stage's columns (:func:`tecb.cluster.algorithms.
    labels_table`: ``split``, ``text_id``, ``cluster``, ``state`` at R > 1) and ``label``, each split's true
    labels, so the file is read without the job's plan. ``steps``: ``[(step, [(split, predicted)])]``;
    ``splits``: the evaluation's ``(split, text ids, labels)`` (text ids: positions in its texts)."""
    import pyarrow as pa

    from tecb.cluster.algorithms import labels_table as cluster_labels

    ids = {int(s): np.asarray(i) for s, i, _ in splits}
    gold = {int(s): np.asarray(y, dtype=object) for s, _, y in splits}
    tables = []
    for step, predicted in steps:
        table = cluster_labels(predicted, ids)
        states = [np.atleast_2d(np.asarray(p)).shape[0] for _, p in predicted]
        label = (
            np.concatenate([np.tile(gold[int(sp)], n) for (sp, _), n in zip(predicted, states)]) if predicted else []
        )
        table = table.add_column(0, "step", pa.array(np.full(table.num_rows, step, dtype=np.int64)))
        tables.append(table.append_column("label", pa.array([str(v) for v in label], pa.string())))
    return pa.concat_tables(tables) if tables else empty_labels()


def empty_labels():
    """The labels file of a job that scored nothing (skipped): its columns, no row."""
    import pyarrow as pa

    return pa.table(
        {
            "step": pa.array([], pa.int64()),
            "split": pa.array([], pa.int16()),
            "text_id": pa.array([], pa.int32()),
            "cluster": pa.array([], pa.int32()),
            "label": pa.array([], pa.string()),
        }
    )


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
    the protocol record in its metadata), ``model_out`` (the adapted model with ``protocol.json``), ``timings``.
    ``resume``: where the job keeps its training state while it runs (:func:`resume_of`; a killed job started
    again continues from it; removed when the job ends; None: none kept)."""

    model_dir: str | Path
    datasets: dict
    scores: str | Path
    model_out: str | Path
    timings: str | Path
    posts: str | Path | None = None
    benchmark_embeddings: str | Path | None = None
    resume: str | Path | None = None
    #: the predicted clusters of step 0 and of the last step (:func:`labels_table`; None: not written)
    labels: str | Path | None = None


def run(
    job: Job,
    *,
    scoring: Scoring,
    files: Files,
    encoder: dict | None,
    device: str,
    strict: bool = False,
    resume_every: int | None = None,
    log=print,
) -> None:
    """Workflow entry point: build the job's leak-free training data, train, score, write :class:`Files`'
    outputs. ``encoder``: the model's resolved embed settings (:func:`tecb.embed.spec.encoder_settings`: prompt,
    pooling, normalize, dtype, trust_remote_code, model/tokenizer/encode kwargs; None: the bare folder), so the
    base model is loaded and encoded as the embed stage does. ``strict``: a run that did not do what its method
    says (:func:`what_ran`) fails instead of being flagged in its outputs. ``resume_every``: optimizer steps
    between saves of the training state to ``files.resume`` (``adapt.resume_every``), keyed by :func:`resume_key`."""
    from tecb.adapt.runtime import resolve_device, seeded_global_rngs
    from tecb.adapt.training import RunOptions, TrainingRun, train
    from tecb.embed.encode import encode_options

    started = time.perf_counter()
    device = resolve_device(device)
    evaluated, plan = _read_plan(job, files, split_seed=scoring.seed)
    meta = _meta(job, files, scoring)
    if isinstance(plan, str):  # the variant does not apply to this dataset: say so in every output
        _write_skipped(job, plan, meta, files, log)
        return
    meta["protocol"] = plan.record
    log(f"{job.method}/{job.variant} on {job.dataset}: {json.dumps(plan.record, sort_keys=True)}")
    encoder, settings, bench_length = _resolve_lengths(job, files, scoring, encoder, meta)
    base_check = _base_check(files, evaluated, plan, bench_length, meta, float32=_float32(device, encoder), log=log)
    evaluation = _Evaluation(plan, scoring, encode_options(encoder), base_check, meta, log)
    training = TrainingRun(
        method=job.method, base_model_dir=encoder, data=plan.training, settings=settings, seed=job.seed
    )
    key = resume_key(meta, plan, scoring, files)
    training = replace(training, resume_path=files.resume, resume_every=resume_every, resume_key=key)
    with seeded_global_rngs(job.seed):
        result = train(
            training,
            device=device,
            output_dir=str(files.model_out),
            eval_every=scoring.every,
            evaluate=evaluation,
            log=log,
            options=RunOptions(save_max_length=meta["eval_max_length"], job_started=started),
        )
    rows = _scored_rows(result["history"], evaluation.calls)
    _write_outputs(job, result, rows, meta, files, strict=strict, log=log)
    if files.labels is not None:
        io.write_table(evaluation.labels(rows, log), files.labels)
    _write_timings(job, result, device, evaluation.seconds, started, files.timings)


def run_adapt_job(job, *, log) -> None:
    """What the ``adapt`` rule's script calls (``job``: the ``snakemake`` object of the script): :class:`Job`,
    :class:`Scoring` and :class:`Files` from its wildcards, params, inputs and outputs, the resume file from
    :func:`resume_of`, then :func:`run` on the job's threads."""
    import torch

    torch.set_num_threads(job.threads)
    p, i, out, w = job.params, job.input, job.output, job.wildcards
    resume_path, resume_every = resume_of(job)  # how the job runs, not a param: changing it reruns nothing
    files = Files(
        model_dir=i.model,
        datasets={n: (s, t, sp) for n, s, t, sp in zip(p.names, p.sources, i.texts, i.splits)},
        scores=out.scores,
        model_out=out.model,
        timings=out.timings,
        posts=i.get("posts"),
        benchmark_embeddings=i.benchmark,
        resume=resume_path,
        labels=out.get("labels"),
    )
    run(
        Job(w.method, w.variant, w.dataset, int(w.seed), dict(p.settings), dict(p.protocol), p.text_kind),
        scoring=Scoring(dict(p.algorithm), p.eval_seed, p.eval_batch_size, p.eval_max_length, p.eval_every),
        files=files,
        encoder=dict(p.encoder),
        device=p.device,
        strict=p.strict,
        resume_every=resume_every,
        log=log,
    )


def resume_of(job) -> tuple[str, int]:
    """Where a workflow job (``job``: the ``snakemake`` object of its script) keeps its training state and how often:
    beside the adapted model's folder (``{model}.resume.pt``, its output ``model``; not an output itself, which a
    failed job would lose), every ``adapt.resume_every`` optimizer steps. How the job runs, changing no byte of its
    results, so resolved here from the job and not a param of the rule: changing it reruns nothing."""
    return f"{job.output.model}.resume.pt", int(job.config["adapt"]["resume_every"])


def resume_key(meta: dict, plan: proto.Plan, scoring: Scoring, files: Files) -> str:
    """What a job's saved training state belongs to beside what the training itself keys it by
    (:func:`tecb.adapt.training.run_fingerprint`: method, base model settings, training data, settings, seed): the
    job's record (dataset, variant, lengths, the protocol), its scoring, the evaluated texts and splits, and the
    bytes of the benchmark's embeddings step 0 is checked against (the base model's content)."""
    from dataclasses import asdict

    from tecb.adapt import resume

    bench = files.benchmark_embeddings
    return resume.fingerprint(
        {
            "meta": meta,
            "scoring": asdict(scoring),
            "eval": resume.fingerprint([list(plan.eval_texts), list(plan.eval_splits)]),
            "benchmark_embeddings": io.file_sha256(bench) if bench is not None else None,
        }
    )


def _meta(job: Job, files: Files, scoring: Scoring) -> dict:
    """The start of the job's record (the adapted model's ``protocol.json``, the scores' metadata)."""
    return {
        "method": job.method,
        "variant": job.variant,
        "dataset": job.dataset,
        "seed": job.seed,
        "eval_seed": scoring.seed,
        "base_model": str(files.model_dir),
        "settings": job.settings,
        "algorithm": scoring.algorithm,
    }


def _read_plan(job: Job, files: Files, *, split_seed: int) -> tuple[proto.LabelledData, proto.Plan | str]:
    """The evaluated dataset and the job's plan (:func:`build_plan`; a str: why the variant does not apply)."""
    from tecb.data.sources.gnad import read_posts

    loaded = {name: proto.read_labelled(name, src, t, s) for name, (src, t, s) in files.datasets.items()}
    evaluated = loaded[job.dataset]
    others = [d for name, d in loaded.items() if name != job.dataset]
    posts = read_posts(files.posts) if (files.posts and job.method == "argue") else None
    return evaluated, build_plan(job, evaluated=evaluated, others=others, posts=posts, split_seed=split_seed)


def _write_skipped(job: Job, reason: str, meta: dict, files: Files, log) -> None:
    """Every output of a job whose variant does not apply to its dataset, each saying so."""
    log(f"{job.method}/{job.variant} on {job.dataset}: skipped: {reason}")
    meta["protocol"] = {"variant": job.variant, "skipped": reason}
    _write_scores([], meta, files.scores)
    if files.labels is not None:
        io.write_table(empty_labels(), files.labels)
    with io.atomic_dir(files.model_out) as tmp:
        io.write_json(meta, Path(tmp) / "protocol.json")
    io.write_json({"method": job.method, "variant": job.variant, "seed": job.seed, "skipped": reason}, files.timings)


def _resolve_lengths(job: Job, files: Files, scoring: Scoring, encoder: dict | None, meta: dict):
    """The base model's encoder settings (its folder filled in), the method's settings (a P2P dataset's training
    length filled in) and the length the embed stage embeds with; records the evaluation length, the encoder and
    the training length in ``meta``."""
    from tecb.adapt.training import load_base

    encoder = dict(encoder) if encoder else {"path": str(files.model_dir)}
    encoder.setdefault("path", str(files.model_dir))
    bench_length = load_base(encoder, device="cpu").max_seq_length  # the length the embed stage embeds with
    meta["eval_max_length"] = bench_length if scoring.max_length is None else scoring.max_length
    meta["encoder"] = {k: v for k, v in encoder.items() if k != "path"}
    settings = dict(job.settings)
    if "p2p_max_length" in settings and is_p2p(
        job.dataset, job.text_kind
    ):  # P2P: training sees the text, not the title
        settings["max_length"] = settings["p2p_max_length"] or bench_length
    meta["train_max_length"] = int(settings["max_length"]) if "max_length" in settings else None  # a control: none
    return encoder, settings, bench_length


def _float32(device: str, encoder: dict) -> bool:
    """Whether the benchmark embedded in float32 (not half precision on a GPU)."""
    return not (device.startswith("cuda") and encoder.get("dtype", "float32") != "float32")


def _base_check(files: Files, evaluated, plan, bench_length: int, meta: dict, *, float32: bool, log):
    """The check of step 0's vectors against the benchmark's embeddings (:func:`check_base_vectors`), or the
    record of why it is skipped."""

    def check(vectors) -> dict:
        if files.benchmark_embeddings is None:
            return {"skipped": "no benchmark embeddings given"}
        if meta["eval_max_length"] != bench_length:
            return {"skipped": f"adapt.eval_max_length {meta['eval_max_length']} is not the benchmark's {bench_length}"}
        record = check_base_vectors(
            vectors, plan.eval_texts, files.benchmark_embeddings, all_texts=evaluated.texts, float32=float32
        )
        log(f"step 0 is the benchmark's base model: vectors within {record['max_abs_diff']:.1e} of its embeddings")
        return record

    return check


class _Evaluation:
    """The ``evaluate`` callback of the training: scores the model in memory at the benchmark's sequence length
    (training may truncate shorter); keeps each call's mean and rows (``calls``) and their time (``seconds``)."""

    def __init__(self, plan, scoring: Scoring, encode_kwargs: dict, base_check, meta: dict, log) -> None:
        self.plan, self.scoring, self.encode_kwargs = plan, scoring, encode_kwargs
        self.base_check, self.meta, self.log = base_check, meta, log
        self.calls: list[tuple[float, list[dict]]] = []
        self.seconds = 0.0
        #: the predictions of the first call (step 0, the base) and of the latest: ``[(split, predicted)]``
        self.predicted: dict = {}

    def __call__(self, model) -> float:
        t0 = time.perf_counter()
        trained_length, model.max_seq_length = model.max_seq_length, self.meta["eval_max_length"]
        try:
            vectors = encode(
                model, self.plan.eval_texts, batch_size=self.scoring.batch_size, encode_kwargs=self.encode_kwargs
            )
        finally:
            model.max_seq_length = trained_length
        if not self.calls:  # step 0: the base model, which must be the benchmark's
            self.meta["step0_check"] = self.base_check(vectors)
        predicted: list = []
        scored = score_vectors(
            vectors,
            self.plan.eval_splits,
            algorithm=self.scoring.algorithm,
            seed=self.scoring.seed,
            log=self.log,
            predictions=predicted,
        )
        self.predicted.setdefault("base", predicted)
        self.predicted["last"] = predicted
        self.seconds += time.perf_counter() - t0
        mean = float(np.mean([r["v_measure"] for r in scored]))
        self.log(f"evaluation {len(self.calls)}: mean V-measure {mean:.4f}")
        self.calls.append((mean, scored))
        return mean

    def state_dict(self) -> dict:
        """The calls so far, their time, step 0's check and the predictions kept: what a resumed training puts
        back."""
        return {
            "calls": self.calls,
            "seconds": self.seconds,
            "step0_check": self.meta.get("step0_check"),
            "predicted": self.predicted,
        }

    def load_state_dict(self, state: dict) -> None:
        self.calls, self.seconds = list(state["calls"]), state["seconds"]
        self.meta["step0_check"] = state["step0_check"]
        self.predicted = dict(state.get("predicted", {}))

    def labels(self, rows: list[dict], log):
        """The labels file (:func:`labels_table`) of step 0 and the last scored step of ``rows``; no row where the
        predictions kept are not those of the scores (the statistics then fall back to the analytic test)."""
        last = max(r["step"] for r in rows)
        scored = [r["v_measure"] for r in rows if r["step"] == last]
        if "last" not in self.predicted or not self.calls or [r["v_measure"] for r in self.calls[-1][1]] != scored:
            log(f"WARNING: the predictions kept are not those of step {last}'s scores: no labels written")
            return empty_labels()
        steps = [(0, self.predicted["base"]), (last, self.predicted["last"])]
        return labels_table(steps, self.plan.eval_splits)


def _scored_rows(history: list[dict], calls: list[tuple[float, list[dict]]]) -> list[dict]:
    """The scored steps of the history, in order, each with the rows of the call that gave its score (a step
    scored twice keeps the later score, as the history does)."""
    rows = []
    pending = iter(calls)
    for h in (h for h in history if h.get("score") is not None):
        for mean, scored in pending:
            if mean == h["score"]:
                rows += _rows(int(h["step"]), scored, h.get("loss"))
                break
        else:
            raise RuntimeError(f"no evaluation gave the score {h['score']} of step {h['step']}")
    return rows


def _write_outputs(job: Job, result: dict, rows: list[dict], meta: dict, files: Files, *, strict: bool, log) -> None:
    """The adapted model's ``protocol.json`` and the scores, after checking what ran and which steps were scored."""
    meta["warnings"] = what_ran(job.method, result)
    for warning in meta["warnings"]:
        log(f"WARNING: {warning}")
    if strict and meta["warnings"]:
        raise RuntimeError(f"adapt.strict: {'; '.join(meta['warnings'])}")
    steps = sorted({r["step"] for r in rows})
    if not steps or steps[0] != 0 or steps[-1] != int(result["history"][-1]["step"]):  # a control's: 1 (no update)
        raise RuntimeError(f"training scored steps {steps}: the base model (0) and the last step are needed")
    # how it ran, not what: a resumed job's record is an uninterrupted one's (its processes go to the timings)
    meta["training"] = _no_durations({k: v for k, v in result.items() if k not in ("history", "processes")})
    meta["history"] = _no_durations(result["history"])
    io.write_json(meta, Path(files.model_out) / "protocol.json")
    _write_scores(rows, meta, files.scores)


def _write_timings(job: Job, result: dict, device: str, eval_seconds: float, started: float, path) -> None:
    io.write_json(
        {
            "method": job.method,
            "variant": job.variant,
            "seed": job.seed,
            "steps": int(result["steps"]),
            "device": result.get("device", device),
            "train_seconds": round(float(result.get("seconds", 0.0)), 3),
            "eval_seconds": round(eval_seconds, 3),
            # every process's: a resumed job's earlier ones up to their last saved state, and this one's
            "total_seconds": round(float(result.get("earlier_seconds", 0.0)) + time.perf_counter() - started, 3),
            "processes": int(result.get("processes", 1)),
        },
        path,
    )
