"""Jobs of the arms on frozen vectors (:mod:`tecb.adapt.frozen`): a model's cached embeddings of one evaluated
dataset (the embed stage's file) and the arm's fitting data in, the base and the arm scored on the same splits out,
in the training jobs' score format (step 0: the base, step 1: the arm), so Table 6 reads them as rows beside the
methods (:func:`tecb.report.adapt_tables.collect`).

What each arm may see (its protocol variant, :data:`VARIANTS`): ``transductive`` (the evaluated texts' vectors, no
label: whitening, all-but-the-top, self-training), ``oracle`` (the positive control: a head per split on that
split's own labels, a leak on purpose), ``disjoint`` (a head on the training half of the categories, scored on the
other half, as COB's ``disjoint``: :func:`tecb.adapt.protocol.disjoint_items`) and ``unseen_books`` (title -> text
pairs of books the benchmark never evaluates, :func:`unseen_pairs`; on an S2S dataset only).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tecb import io
from tecb.adapt import frozen
from tecb.adapt import protocol as proto

#: each arm's protocol variant (the Table 6 key's third part)
VARIANTS = {
    "whitening": "transductive",
    "all_but_the_top": "transductive",
    "self_training": "transductive",
    "label_head": "oracle",
    "disjoint_supcon": "disjoint",
    "title_blurb_ridge": "unseen_books",
    "title_blurb_infonce": "unseen_books",
}
#: the arms fitted on unseen (title, text) pairs
PAIR_ARMS = ("title_blurb_ridge", "title_blurb_infonce")


def unseen_pairs(source_path, *, evaluated: set[str], max_pairs: int | None, seed: int) -> tuple[list, list, dict]:
    """``(titles, texts, provenance)`` of the GermEval source's unlabelled books (never evaluated): each book's title
    (the S2S text) with its title + blurb (the P2P text), as :func:`tecb.data.datasets.blurb_text` writes them; a
    pair whose title or text is one of ``evaluated`` (every configured dataset's texts) is dropped, duplicates
    too; ``max_pairs`` (None: all) drawn by ``seed``, kept in file order."""
    from tecb.data.datasets import blurb_text
    from tecb.data.sources import germeval

    source = germeval.read_blurbs_source(source_path)
    if not source.unlabelled:
        raise ValueError(f"{source_path}: no unlabelled blurbs file (a blurbs_*.txt whose books carry no <categories>)")
    seen, dropped, titles, texts = set(), 0, [], []
    for book in source.unlabelled:
        title, text = blurb_text(book, "s2s"), blurb_text(book, "p2p")
        if not title.strip() or title == text or title in seen:
            continue
        if title in evaluated or text in evaluated:
            dropped += 1
            continue
        seen.add(title)
        titles.append(title)
        texts.append(text)
    available = len(titles)
    if max_pairs is not None and max_pairs < available:
        keep = np.sort(np.random.default_rng(seed).choice(available, size=int(max_pairs), replace=False))
        titles, texts = [titles[i] for i in keep], [texts[i] for i in keep]
    provenance = {
        "books": len(source.unlabelled),
        "dropped_as_evaluated": dropped,
        "distinct_pairs": available,
        "kept": len(titles),
        "seed": seed,
    }
    return titles, texts, provenance


def write_pairs(titles, texts, title_vectors, text_vectors, provenance: dict, path) -> None:
    """The embedded pairs: ``title``, ``text`` and their vectors, the provenance in the metadata."""
    import pyarrow as pa

    table = pa.table(
        {
            "title": titles,
            "text": texts,
            "title_vector": [list(map(float, v)) for v in np.asarray(title_vectors)],
            "text_vector": [list(map(float, v)) for v in np.asarray(text_vectors)],
        }
    )
    io.write_table(table.replace_schema_metadata(io.tecb_metadata(provenance)), path)


def read_pairs(path) -> tuple[np.ndarray, np.ndarray, dict]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    x = np.asarray(table.column("title_vector").to_pylist(), dtype=np.float64)
    y = np.asarray(table.column("text_vector").to_pylist(), dtype=np.float64)
    return x, y, io.read_tecb_metadata(table.schema, path)


def embed_pairs(titles, texts, *, model_spec: dict, embed_options: dict, datasets: tuple[str, str], seed, workdir):
    """Both sides embedded exactly as the embed stage embeds a dataset's texts, any kind of model
    (:func:`tecb.embed.encode.embed_dataset`; ``datasets``: the S2S and the P2P dataset whose per-dataset settings,
    e.g. a prompt, the titles and the texts get); ``workdir``: a scratch folder for the two files."""
    from tecb.embed.encode import EmbedJob, embed_dataset

    out = []
    for name, side, dataset in (("titles", titles, datasets[0]), ("texts", texts, datasets[1])):
        texts_file, vectors_file = Path(workdir) / f"{name}.parquet", Path(workdir) / f"{name}.vectors.parquet"
        io.write_texts(list(side), texts_file, provenance={"what": f"unseen books' {name}"})
        embed_dataset(
            EmbedJob.from_spec(
                texts=texts_file,
                embeddings=vectors_file,
                model_spec=model_spec,
                embed_options=embed_options,
                seed=seed,
                dataset=dataset,
            ),  # fmt: skip
            log=lambda *a: None,
        )
        out.append(np.asarray(io.read_embeddings(vectors_file)[0], dtype=np.float64))
    return out


def fit_arm(arm: str, *, vectors, evaluated: proto.LabelledData, all_vectors, settings: dict, seed: int, pairs=None):
    """Fit ``arm`` on what its variant allows; return ``(transform(split) -> vectors of the split's rows, info)``
    where a split is ``(split, ids, labels)`` over the rows of ``vectors`` (the evaluated texts'); ``all_vectors``:
    the rows of every text of ``evaluated`` (a label-disjoint head's training items are outside the evaluation)."""
    if arm in ("whitening", "all_but_the_top", "self_training"):
        if arm == "whitening":
            head = frozen.fit_whitening(vectors, n_components=settings.get("n_components"))
        elif arm == "all_but_the_top":
            d = settings.get("n_components") or frozen.default_top(vectors.shape[1])
            head = frozen.fit_all_but_the_top(vectors, n_components=d)
        else:
            k = settings.get("n_clusters") or _median_labels(evaluated)
            head = frozen.fit_self_training(vectors, n_clusters=k, seed=seed, **_head_settings(settings))
        out = head.transform(vectors)
        return (lambda split: out[np.asarray(split[1], dtype=np.int64)]), head.info
    if arm == "label_head":  # the positive control: one head per split, on that split's own labels

        def per_split(split):
            rows = vectors[np.asarray(split[1], dtype=np.int64)]
            head = _fit_label_head(rows, list(split[2]), settings, seed=seed)
            per_split.info.append(head.info)
            return head.transform(rows)

        per_split.info = []
        return per_split, {"per_split": per_split.info, **{k: v for k, v in settings.items() if k != "kind"}}
    if arm == "disjoint_supcon":
        items = pairs  # (texts, labels) of the training half, from disjoint_items
        row = {t: i for i, t in enumerate(evaluated.texts)}
        x = all_vectors[np.asarray([row[t] for t, _ in items], dtype=np.int64)]
        head = _fit_label_head(x, [label for _, label in items], {**settings, "kind": "supcon"}, seed=seed)
        out = head.transform(vectors)
        return (lambda split: out[np.asarray(split[1], dtype=np.int64)]), {**head.info, "items": len(items)}
    if arm in PAIR_ARMS:
        x, y = pairs
        if arm == "title_blurb_ridge":
            head = frozen.fit_ridge_map(x, y, alpha=float(settings.get("alpha", 1.0)))
        else:
            head = frozen.fit_infonce_map(x, y, seed=seed, **_head_settings(settings))
        out = head.transform(vectors)
        return (lambda split: out[np.asarray(split[1], dtype=np.int64)]), head.info
    raise ValueError(f"unknown frozen arm {arm!r}; known: {', '.join(VARIANTS)}")


def _head_settings(settings: dict) -> dict:
    keys = ("kind", "dim", "epochs", "lr", "batch_size", "temperature")
    return {k: settings[k] for k in keys if k in settings and settings[k] is not None}


def _fit_label_head(x, labels, settings: dict, *, seed: int) -> frozen.Head:
    """:func:`tecb.adapt.frozen.fit_label_head` with the settings set (:func:`_head_settings`); the rest defaults."""
    given = _head_settings(settings)
    kind = given.pop("kind", "supcon")
    return frozen.fit_label_head(x, labels, kind=kind, training=frozen.HeadTraining(**given), seed=seed)


def _median_labels(evaluated: proto.LabelledData) -> int:
    """The self-training head's K where none is set: the median number of labels of the dataset's splits (the
    k-means of the benchmark is given each split's own; one head serves every split)."""
    return max(2, int(np.median([len(set(labels)) for _, _, labels in evaluated.splits])))


@dataclass(frozen=True)
class FrozenJob:
    """One arm on one dataset and seed: ``dataset`` is ``(name, source, texts.parquet, splits.parquet)``,
    ``embeddings`` the model's cached embeddings of it (the embed stage's file), ``pairs`` the embedded unseen
    pairs (:func:`write_pairs`; pair arms only), ``scores_out`` and ``timings_out`` the files :func:`run` writes."""

    arm: str
    dataset: tuple[str, str, str, str]
    embeddings: Any
    settings: dict
    seed: int
    algorithm: dict
    eval_seed: int
    protocol: dict
    text_kind: str | None
    scores_out: Any
    timings_out: Any
    pairs: Any = None
    #: where the base's and the arm's predicted clusters go (:func:`tecb.adapt.jobs.labels_table`; None: nowhere)
    labels_out: Any = None


def run(job: FrozenJob, *, log=print) -> None:
    """One arm on one dataset and seed (:class:`FrozenJob`). Writes the scores (step 0 base, step 1 the arm, every
    split of the arm's evaluation) with the job's record in their metadata, and the timings."""
    from tecb.adapt.jobs import _rows, _write_scores, empty_labels, is_p2p, labels_table

    started = time.perf_counter()
    arm, seed, settings, algorithm = job.arm, job.seed, job.settings, job.algorithm
    name, source, texts_path, splits_path = job.dataset
    evaluated = proto.read_labelled(name, source, texts_path, splits_path)
    matrix, _ = io.read_embeddings(job.embeddings)
    vectors = all_vectors = np.asarray(matrix, dtype=np.float64)
    variant = VARIANTS[arm]
    meta = {"method": arm, "variant": variant, "dataset": name, "seed": seed, "eval_seed": job.eval_seed}
    meta.update(settings=settings, algorithm=algorithm, embeddings=str(job.embeddings))
    texts, splits, record, fit_data = _plan(arm, evaluated, job.protocol, job.eval_seed, job.text_kind, job.pairs,
                                            is_p2p)  # fmt: skip
    if isinstance(record, str):  # the arm does not apply: every output says why
        log(f"{arm} on {name}: skipped: {record}")
        meta["protocol"] = {"variant": variant, "skipped": record}
        _write_scores([], meta, job.scores_out)
        if job.labels_out is not None:
            io.write_table(empty_labels(), job.labels_out)
        io.write_json({"method": arm, "variant": variant, "seed": seed, "skipped": record}, job.timings_out)
        return
    if texts is not evaluated.texts:  # a re-indexed subset (disjoint): its rows of the dataset's vectors
        row = {t: i for i, t in enumerate(evaluated.texts)}
        vectors = vectors[np.asarray([row[t] for t in texts], dtype=np.int64)]
    log(f"{arm}/{variant} on {name}: {record}")
    t0 = time.perf_counter()
    transform, info = fit_arm(arm, vectors=vectors, evaluated=evaluated, all_vectors=all_vectors, settings=settings,
                              seed=seed, pairs=fit_data)  # fmt: skip
    predicted: tuple[list, list] = ([], [])
    base_rows, arm_rows = _score_base_and_arm(job, vectors, splits, transform, log, predicted)
    fit_seconds = time.perf_counter() - t0
    meta["protocol"] = record
    meta["training"] = {"method": arm, "steps": 0, "device": "cpu", "precision": "float64", "settings": settings,
                        "phases": {arm: info}}  # fmt: skip
    log(
        f"{arm} on {name}: mean V-measure {np.mean([r['v_measure'] for r in base_rows]):.4f} (base) -> "
        f"{np.mean([r['v_measure'] for r in arm_rows]):.4f}"
    )
    _write_scores(_rows(0, base_rows) + _rows(1, arm_rows), meta, job.scores_out)
    if job.labels_out is not None:
        io.write_table(labels_table([(0, predicted[0]), (1, predicted[1])], splits), job.labels_out)
    _write_timings(job, fit_seconds, started)


def _score_base_and_arm(job: FrozenJob, vectors, splits, transform, log, predicted=([], [])) -> tuple[list, list]:
    """The base vectors' score rows and the arm's (its vectors of each split, scored on that split alone); each
    split's predicted clusters go to ``predicted`` (the base's, the arm's)."""
    from tecb.adapt.jobs import score_vectors

    draw = {"algorithm": job.algorithm, "seed": job.eval_seed, "log": log}
    base_rows = score_vectors(vectors, splits, **draw, predictions=predicted[0])
    adapted = [(s, list(range(len(ids))), labels) for s, ids, labels in splits]
    arm_rows = [
        score_vectors(transform(split), [adapted[i]], **draw, predictions=predicted[1])[0]
        for i, split in enumerate(splits)
    ]
    return base_rows, arm_rows


def _write_timings(job: FrozenJob, fit_seconds: float, started: float) -> None:
    """The job's timings file (all on the CPU, no training step)."""
    io.write_json(
        {
            "method": job.arm,
            "variant": VARIANTS[job.arm],
            "seed": job.seed,
            "steps": 0,
            "device": "cpu",
            "train_seconds": round(fit_seconds, 3),
            "eval_seconds": 0.0,
            "total_seconds": round(time.perf_counter() - started, 3),
            "processes": 1,
        },
        job.timings_out,
    )


def _plan(arm, evaluated, protocol, split_seed, text_kind, pairs, is_p2p):
    """``(eval texts, eval splits, record or the reason it does not apply, fitting data)`` of an arm."""
    variant = VARIANTS[arm]
    base = {"variant": variant, "train_datasets": [evaluated.name] if variant != "unseen_books" else []}
    if variant == "transductive":
        record = {**base, "labels_seen": "none", "fitted_on": "the evaluated texts' vectors (no label)"}
        return evaluated.texts, evaluated.splits, {**record, "eval_splits": len(evaluated.splits)}, None
    if variant == "oracle":
        record = {**base, "labels_seen": proto.ORACLE_LEAK, "fitted_on": "each split's own labels (one head each)"}
        return evaluated.texts, evaluated.splits, {**record, "eval_splits": len(evaluated.splits)}, None
    if variant == "disjoint":
        plan = proto.disjoint_items(evaluated, min_categories=protocol["min_categories"], split_seed=split_seed)
        if isinstance(plan, str):
            return None, None, plan, None
        items, eval_texts, eval_splits, record = plan
        return eval_texts, eval_splits, {**record, "items": len(items)}, items
    if is_p2p(evaluated.name, text_kind):
        return None, None, "a title -> text map applies to titles (S2S datasets) only", None
    x, y, provenance = read_pairs(pairs)
    record = {**base, "labels_seen": "none", "fitted_on": "unseen books' (title, title + blurb) pairs",
              "pairs": provenance}  # fmt: skip
    return evaluated.texts, evaluated.splits, {**record, "eval_splits": len(evaluated.splits)}, (x, y)


def run_frozen_job(job, *, log) -> None:
    """What the ``adapt_frozen`` rule's script calls (``job``: the ``snakemake`` object)."""
    import torch

    torch.set_num_threads(job.threads)
    p, i, out, w = job.params, job.input, job.output, job.wildcards
    job_spec = FrozenJob(
        arm=w.method,
        dataset=(w.dataset, p.source, i.texts, i.splits),
        embeddings=i.embeddings,
        settings=dict(p.settings),
        seed=int(w.seed),
        algorithm=dict(p.algorithm),
        eval_seed=p.eval_seed,
        protocol=dict(p.protocol),
        text_kind=p.text_kind,
        pairs=i.get("pairs"),
        scores_out=out.scores,
        timings_out=out.timings,
        labels_out=out.get("labels"),
    )
    run(job_spec, log=log)


def run_pairs_job(job, *, log) -> None:
    """What the ``adapt_frozen_pairs`` rule's script calls: the unseen pairs embedded with the model."""
    from tecb.embed.encode import read_texts

    p, i = job.params, job.input
    evaluated = {t for path in i.evaluated for t in read_texts(path)}
    titles, texts, provenance = unseen_pairs(i.source, evaluated=evaluated, max_pairs=p.max_pairs, seed=p.seed)
    log(f"{len(titles)} unseen (title, text) pairs: {provenance}")
    with tempfile.TemporaryDirectory(dir=Path(job.output.pairs).parent) as tmp:
        x, y = embed_pairs(titles, texts, model_spec=dict(p.model_spec), embed_options=dict(p.embed_options),
                           datasets=tuple(p.datasets), seed=p.vector_seed, workdir=tmp)  # fmt: skip
    write_pairs(titles, texts, x, y, provenance, job.output.pairs)
