"""The leak-free protocol of the training methods: what each method trains on, what it is evaluated on.

Four variants; every output records which one it ran under (:class:`Plan.record`):

- ``transductive`` (``simcse``, ``clusterns``, ``argue``): the evaluated dataset's unique texts, never a label, as
  the paper's Table 5 trains WWM/TSDAE. :func:`unsupervised_plan` and :func:`argue_plan` never receive labels.
  ``argue`` trains on sentence pairs: *order* pairs built from the evaluated texts themselves
  (:func:`order_pairs`) and *reply* pairs from the One Million Posts forum (:func:`reply_pairs`: unlabelled posts,
  none of them a text of any dataset).
- ``lodo`` (``cob``, ``triplet``): leave one dataset out. Clustering instances (:func:`clustering_instances`) from the
  labelled splits of the *other* configured datasets; every dataset of the evaluated dataset's corpus is left out
  too, decided by text containment (:func:`same_corpus`; ``TenKGnadClusteringP2P`` holds the titles of
  ``TenKGnadClusteringS2S`` inside its texts, whatever the two source keys are called). Any training item whose text is one of the evaluated texts, or whose label is one of
  the evaluated labels (compared case-folded), is dropped and counted. Evaluation: all splits of the dataset.
- ``disjoint`` (``cob``, ``triplet``): label-disjoint inside the evaluated dataset. Its categories (of the label
  scheme with the most categories) are shuffled and halved; training instances come from the items of the first
  half, evaluation from its splits restricted to the second half (a split keeping fewer than two labels is
  dropped), and no text of the evaluation reaches training. The halving uses the config's ``seed``, so every
  training seed is evaluated on the same categories. Needs ``min_categories`` categories.
- ``oracle`` (``cob``, ``triplet``): the positive control, which leaks on purpose. Clustering instances from the
  evaluated dataset's own labelled texts, every category of the scheme ``disjoint`` halves, evaluated on all its
  splits as ``lodo``. It is an upper reference: if training can move the score at all, it moves it here
  (:func:`oracle_plan`). Never a method's result.

A control (``random_head``) trains on nothing; it runs under the supervised variants and is evaluated on exactly
their splits (:func:`control_plan`), so that a COB or triplet row can be read against it (under ``oracle`` it is
the untrained head the positive control starts from).

Clustering instances follow COB's paper (Kashyapi & Dietz 2021, 20NG): the labelled items, shuffled, cut into
groups of ``instance_size`` (50) documents, the remainder dropped; one instance never mixes datasets or label
schemes (Blurbs labels its books once by coarse and once by fine genre). The schemes are the ones the dataset's
builder declared (provenance ``split_label_schemes``); only a dataset without them (published splits, a custom
``split_column``) has them inferred from shared label strings. Everything is drawn from
``numpy.random.default_rng(seed)``: the same inputs and seed give the same data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


def _training_data(**parts):
    """A :class:`tecb.adapt.training.TrainingData` (imported here: torch stays out of a protocol-only import)."""
    from tecb.adapt.training import TrainingData

    return TrainingData(**parts)


VARIANTS = ("transductive", "lodo", "disjoint", "oracle")
# variants whose rows are controls, not results: ``oracle`` trains on the evaluated labels (a positive control)
POSITIVE_CONTROLS = ("oracle",)
SUPERVISED = ("cob", "triplet")
UNSUPERVISED = ("simcse", "clusterns", "argue")
ARGUE_OBJECTIVES = ("similarity", "order", "reply")


#: SimCSE's views (``methods.simcse.augmentation``); a list of them runs one arm per view, each a job variant
SIMCSE_VIEWS = ("dropout", "cropping")


def variants_of(
    method: str,
    supervised_variants: Sequence[str] = ("lodo", "disjoint"),
    argue_objectives: Sequence[str] = (),
    simcse_views: str | Sequence[str] | None = None,
) -> list[str]:
    """The variants a method runs under, one job each: ``transductive`` for simcse and clusterns, the given
    supervised variants for cob and triplet and for their control (random_head: evaluated as they are), and for argue
    its pair objectives (one model per objective, as the argueBERT paper trains; all of them transductive). SimCSE
    with a list of views (``simcse_views``: its ``augmentation`` setting) runs one arm per view, named by it (all
    transductive); a single view is the ``transductive`` arm."""
    if method == "simcse" and simcse_views is not None and not isinstance(simcse_views, str):
        unknown = sorted(set(simcse_views) - set(SIMCSE_VIEWS))
        if unknown or not simcse_views:
            raise ValueError(f"adapt: simcse augmentation {list(simcse_views)}: known views {', '.join(SIMCSE_VIEWS)}")
        return list(dict.fromkeys(simcse_views))
    if method == "argue":
        unknown = sorted(set(argue_objectives) - set(ARGUE_OBJECTIVES))
        if unknown:
            raise ValueError(f"adapt: unknown argue objectives {unknown}; known: {', '.join(ARGUE_OBJECTIVES)}")
        return list(argue_objectives)
    if method in UNSUPERVISED:
        return ["transductive"]
    from tecb.adapt.training import CONTROLS  # evaluated as the methods they control

    if method in SUPERVISED + CONTROLS:
        return list(supervised_variants)
    raise ValueError(f"unknown training method {method!r}; known: {', '.join(UNSUPERVISED + SUPERVISED + CONTROLS)}")


def known_variants(method: str) -> list[str]:
    """Every variant ``method`` can run under in some configuration (what a job's variant is checked against):
    :func:`variants_of` with every protocol variant, argue objective and SimCSE view, and SimCSE's single-view
    ``transductive`` arm."""
    variants = variants_of(method, VARIANTS[1:], ARGUE_OBJECTIVES, SIMCSE_VIEWS)
    return variants + ["transductive"] if method == "simcse" else variants


def arm_settings(method: str, variant: str, settings: dict) -> dict:
    """The settings one job trains with: the method's, and for a SimCSE arm named by its view (see
    :func:`variants_of`) that view as its ``augmentation``."""
    if method == "simcse" and variant in SIMCSE_VIEWS:
        return {**settings, "augmentation": variant}
    return dict(settings)


@dataclass(frozen=True)
class LabelledData:
    """One dataset as the workflow stores it: unique texts and its splits ``(split, text_ids, labels)``."""

    name: str
    source: str
    texts: tuple[str, ...]
    splits: tuple[tuple[int, tuple[int, ...], tuple[str, ...]], ...]
    # each split's label scheme as its builder declared it (provenance ``split_label_schemes``); None: inferred
    schemes: tuple[str, ...] | None = None

    def label_schemes(self) -> list[str]:
        """Each split's label scheme: the declared ones, else inferred (:func:`tecb.data.datasets.label_schemes`)."""
        from tecb.data.datasets import label_schemes

        declared = list(self.schemes) if self.schemes is not None else None
        return label_schemes([(list(ids), list(labels)) for _, ids, labels in self.splits], declared)


@dataclass(frozen=True)
class Plan:
    """What one job trains on and evaluates on, and the record of how both were chosen."""

    training: object  # tecb.adapt.training.TrainingData
    eval_texts: tuple[str, ...]  # the texts the evaluation encodes (indices below point here)
    eval_splits: tuple[tuple[int, tuple[int, ...], tuple[str, ...]], ...]
    record: dict = field(default_factory=dict)


def read_labelled(name: str, source: str, texts_path, splits_path) -> LabelledData:
    """A dataset's ``texts.parquet`` and ``splits.parquet`` as :class:`LabelledData`."""
    import pyarrow.parquet as pq

    from tecb import io

    texts = pq.read_table(texts_path)
    ids = texts.column("text_id").to_numpy()
    if not np.array_equal(ids, np.arange(len(ids))):
        raise ValueError(f"{texts_path}: text_id must be 0..n-1 in order")
    splits = tuple(
        (int(s), tuple(int(i) for i in tid), tuple(str(x) for x in labels))
        for s, tid, labels in io.iter_splits(pq.read_table(splits_path))
    )
    declared = io.dataset_provenance(splits_path).get("split_label_schemes")
    if declared is not None and len(declared) != len(splits):
        raise ValueError(f"{splits_path}: {len(declared)} declared label schemes for {len(splits)} splits")
    schemes = tuple(str(x) for x in declared) if declared is not None else None
    return LabelledData(name, source, tuple(texts.column("text").to_pylist()), splits, schemes)


# --- clustering instances (cob, triplet) ----------------------------------------------------------------


def scheme_items(data: LabelledData) -> dict[str, list[tuple[str, str]]]:
    """Per label scheme (declared by the dataset's builder, else inferred: :meth:`LabelledData.label_schemes`), its
    unique ``(text, label)`` items in first-seen order; a text with two labels inside one scheme is left out (its
    label is ambiguous)."""
    schemes = data.label_schemes()
    seen: dict[str, dict[int, set[str]]] = {}
    for scheme, (_, ids, labels) in zip(schemes, data.splits):
        bucket = seen.setdefault(scheme, {})
        for i, label in zip(ids, labels):
            bucket.setdefault(i, set()).add(label)
    return {
        scheme: [(data.texts[i], next(iter(labs))) for i, labs in bucket.items() if len(labs) == 1]
        for scheme, bucket in seen.items()
    }


def clustering_instances(
    groups: Sequence[Sequence[tuple[str, str]]], *, instance_size: int, rounds: int, seed: int
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """COB's many small clustering instances: per round, each group's items shuffled and cut into consecutive
    instances of ``instance_size`` (the remainder dropped, as the paper's 20NG sets of 50); an instance with fewer
    than two labels is skipped (nothing to separate). A group is one (dataset, label scheme)."""
    if instance_size < 2 or rounds < 1:
        raise ValueError(f"instance_size must be >= 2 and rounds >= 1, got {instance_size}, {rounds}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rounds):
        for items in groups:
            order = rng.permutation(len(items))
            for start in range(0, len(items) - instance_size + 1, instance_size):
                chosen = [items[j] for j in order[start : start + instance_size]]
                labels = tuple(label for _, label in chosen)
                if len(set(labels)) >= 2:
                    out.append((tuple(text for text, _ in chosen), labels))
    return tuple(out)


def _eval_all(data: LabelledData):
    return data.texts, data.splits


def _norm(text: str) -> str:
    return " ".join(text.split())


def contained_share(texts: Sequence[str], corpus: Sequence[str], *, sample: int = 200) -> float:
    """The share of ``texts`` (an evenly spaced sample of at most ``sample``, whitespace normalised) that occur
    inside some text of ``corpus``: a title inside its title + body, a text inside itself."""
    texts = [t for t in (_norm(t) for t in texts) if t]
    if not texts or not corpus:
        return 0.0
    picked = [texts[int(i)] for i in np.unique(np.linspace(0, len(texts) - 1, min(sample, len(texts))).astype(int))]
    joined = "\x00".join(_norm(t) for t in corpus)
    return sum(t in joined for t in picked) / len(picked)


def same_corpus(a: LabelledData, b: LabelledData, *, threshold: float = 0.5) -> bool:
    """Whether ``a`` and ``b`` are built from one corpus (siblings such as the S2S and P2P datasets of Blurbs or
    10kGNAD): at least ``threshold`` of one's texts are contained in the other's texts, in either direction. Decided
    by the texts, never by the source key (published-style sources name S2S and P2P apart)."""
    return max(contained_share(a.texts, b.texts), contained_share(b.texts, a.texts)) >= threshold


def lodo_plan(
    evaluated: LabelledData, others: Sequence[LabelledData], *, instance_size: int, rounds: int, seed: int
) -> Plan:
    """Leave one dataset out: instances from the other datasets, minus every dataset of the evaluated one's corpus
    (:func:`same_corpus`: text containment) and every item sharing a text or a (case-folded) label with the
    evaluated dataset; evaluation on all its splits."""
    eval_texts = set(evaluated.texts)
    eval_labels = {label.casefold() for _, _, labels in evaluated.splits for label in labels}
    groups, used, left_out = [], [], []
    dropped = {"same_text": 0, "same_label": 0}
    for other in others:
        if other.name == evaluated.name or same_corpus(evaluated, other):
            left_out.append(other.name)
            continue
        used.append(other.name)
        for items in scheme_items(other).values():
            kept = []
            for text, label in items:
                if text in eval_texts:
                    dropped["same_text"] += 1
                elif label.casefold() in eval_labels:
                    dropped["same_label"] += 1
                else:
                    kept.append((text, label))
            groups.append(kept)
    instances = clustering_instances(groups, instance_size=instance_size, rounds=rounds, seed=seed)
    if not instances:
        raise ValueError(
            f"lodo for {evaluated.name}: no clustering instance of {instance_size} items from the other datasets "
            f"({', '.join(used) or 'none configured beside its source'}); configure more datasets or lower "
            "adapt.protocol.instance_size"
        )
    texts, splits = _eval_all(evaluated)
    record = {
        "variant": "lodo",
        "labels_seen": "labels of other datasets only",
        "train_datasets": used,
        "left_out_same_corpus": [n for n in left_out if n != evaluated.name],
        "dropped_items": dropped,
        "instances": len(instances),
        "instance_size": instance_size,
        "rounds": rounds,
        "eval_splits": len(splits),
    }
    return Plan(_training_data(instances=instances), texts, splits, record)


def _evaluation_half(texts, splits, eval_half: set[str]) -> tuple[tuple, tuple]:
    """The splits cut to the evaluation half's labels (those that keep two labels), over their own texts re-indexed
    densely (the evaluation encodes only these): ``(eval_texts, eval_splits)``."""
    used_ids, eval_splits = set(), []
    for split, ids, labels in splits:
        keep = [(i, label) for i, label in zip(ids, labels) if label in eval_half]
        if len({label for _, label in keep}) >= 2:
            eval_splits.append((split, tuple(i for i, _ in keep), tuple(label for _, label in keep)))
            used_ids.update(i for i, _ in keep)
    order = sorted(used_ids)
    new_id = {old: new for new, old in enumerate(order)}
    eval_texts = tuple(texts[i] for i in order)
    return eval_texts, tuple((split, tuple(new_id[i] for i in ids), labels) for split, ids, labels in eval_splits)


def _training_half(texts, splits, train_half: set[str], *, held_out: set[str]) -> tuple[list, list]:
    """The splits' distinct (text, label) items of the training half's labels, and of those the ones kept: one
    label per text (a text labelled twice is ambiguous), and none of the ``held_out`` (evaluated) texts."""
    items = []
    for _, ids, labels in splits:
        items += [(texts[i], label) for i, label in zip(ids, labels) if label in train_half]
    unique = list(dict.fromkeys(items))
    labels_of: dict[str, set[str]] = {}
    for text, label in unique:
        labels_of.setdefault(text, set()).add(label)
    return unique, [(t, label) for t, label in unique if len(labels_of[t]) == 1 and t not in held_out]


def _largest_scheme(evaluated: LabelledData) -> tuple[str, list[str], list]:
    """The label scheme with the most categories (ties: the first name in sorted order), its categories sorted and
    its splits: the scheme ``disjoint`` halves and ``oracle`` trains on."""
    schemes = evaluated.label_schemes()
    by_scheme: dict[str, set[str]] = {}
    for scheme, (_, _, labels) in zip(schemes, evaluated.splits):
        by_scheme.setdefault(scheme, set()).update(labels)
    scheme = max(sorted(by_scheme), key=lambda s: len(by_scheme[s]))
    in_scheme = [split for s, split in zip(schemes, evaluated.splits) if s == scheme]
    return scheme, sorted(by_scheme[scheme]), in_scheme


def _disjoint_halves(evaluated: LabelledData, *, min_categories: int, split_seed: int):
    """``disjoint``'s halves: ``(scheme, train_half, eval_half, the scheme's splits, (eval_texts, eval_splits))``,
    or the reason there are none (too few categories, no split keeps two labels of the evaluation half)."""
    scheme, categories, in_scheme = _largest_scheme(evaluated)
    if len(categories) < min_categories:
        return f"{len(categories)} categories, fewer than adapt.protocol.min_categories = {min_categories}"
    shuffled = [categories[i] for i in np.random.default_rng(split_seed).permutation(len(categories))]
    train_half, eval_half = set(shuffled[: len(shuffled) // 2]), set(shuffled[len(shuffled) // 2 :])
    evaluation = _evaluation_half(evaluated.texts, in_scheme, eval_half)
    if not evaluation[1]:
        return "no split keeps two labels of the evaluation half"
    return scheme, train_half, eval_half, in_scheme, evaluation


def _disjoint_record(evaluated: LabelledData, halves: tuple, *, split_seed: int, dropped: int, drawn=None) -> dict:
    """The record of ``disjoint``'s ``halves`` (:func:`_disjoint_halves`) of ``evaluated``, ``dropped`` training
    items of the same text as an evaluated one; ``drawn`` (a plan's ``instances``, ``instance_size``, ``rounds``)
    also records whether the label schemes were declared. The keys in the order the files have always had."""
    scheme, train_half, eval_half, _, (_, eval_splits) = halves
    record = {
        "variant": "disjoint",
        "labels_seen": "training half of the categories only",
        "train_datasets": [evaluated.name],
        "label_scheme": scheme,
    }
    if drawn is not None:
        record["label_schemes_declared"] = evaluated.schemes is not None
    record |= {
        "split_seed": split_seed,
        "train_labels": sorted(train_half),
        "eval_labels": sorted(eval_half),
        "dropped_items": {"same_text": dropped},
    }
    return record | (drawn or {}) | {"eval_splits": len(eval_splits)}


def disjoint_plan(
    evaluated: LabelledData, *, instance_size: int, rounds: int, min_categories: int, seed: int, split_seed: int
) -> Plan | str:
    """Label-disjoint inside one dataset; returns the :class:`Plan`, or the reason it cannot be built (too few
    categories, no evaluation split or training instance left). The categories are halved with ``split_seed`` (the
    config's ``seed``: every training seed is evaluated on the same categories), the instances drawn with ``seed``
    (the training seed)."""
    halves = _disjoint_halves(evaluated, min_categories=min_categories, split_seed=split_seed)
    if isinstance(halves, str):
        return halves
    _, train_half, _, in_scheme, (eval_texts, eval_splits) = halves
    unique, kept = _training_half(evaluated.texts, in_scheme, train_half, held_out=set(eval_texts))
    instances = clustering_instances([kept], instance_size=instance_size, rounds=rounds, seed=seed)
    if not instances:
        return f"no clustering instance of {instance_size} items from the training half ({len(kept)} items)"
    drawn = {"instances": len(instances), "instance_size": instance_size, "rounds": rounds}
    record = _disjoint_record(evaluated, halves, split_seed=split_seed, dropped=len(unique) - len(kept), drawn=drawn)
    return Plan(_training_data(instances=instances), eval_texts, eval_splits, record)


def disjoint_items(evaluated: LabelledData, *, min_categories: int, split_seed: int):
    """``disjoint``'s halves as items for a head on frozen vectors (:mod:`tecb.adapt.frozen_jobs`): ``(training
    items (text, label) of the training half, eval_texts, eval_splits, record)``, cut exactly as
    :func:`disjoint_plan` cuts them (the same ``split_seed``: the same halves), or the reason there are none."""
    halves = _disjoint_halves(evaluated, min_categories=min_categories, split_seed=split_seed)
    if isinstance(halves, str):
        return halves
    _, train_half, _, in_scheme, (eval_texts, eval_splits) = halves
    unique, kept = _training_half(evaluated.texts, in_scheme, train_half, held_out=set(eval_texts))
    if len({label for _, label in kept}) < 2:
        return f"the training half keeps {len(kept)} items of fewer than 2 labels"
    record = _disjoint_record(evaluated, halves, split_seed=split_seed, dropped=len(unique) - len(kept))
    return kept, eval_texts, eval_splits, record


ORACLE_LEAK = "evaluated labels (positive control)"


def oracle_plan(evaluated: LabelledData, *, instance_size: int, rounds: int, seed: int) -> Plan | str:
    """The positive control: instances from the evaluated dataset's own labelled texts, every category of the
    scheme ``disjoint`` would halve (:func:`_largest_scheme`), one label per text (a text labelled twice in the
    scheme is left out), drawn with ``seed``; evaluation on all its splits, as ``lodo``. It leaks the evaluated
    labels on purpose (``leak`` in its record): an upper reference that training must move if it can move
    anything. Returns the :class:`Plan`, or the reason there is no instance."""
    scheme, categories, in_scheme = _largest_scheme(evaluated)
    unique, kept = _training_half(evaluated.texts, in_scheme, set(categories), held_out=set())
    instances = clustering_instances([kept], instance_size=instance_size, rounds=rounds, seed=seed)
    if not instances:
        return f"no clustering instance of {instance_size} items with two labels ({len(kept)} items)"
    texts, splits = _eval_all(evaluated)
    record = {
        "variant": "oracle",
        "labels_seen": "the evaluated dataset's own labels, all categories",
        "leak": ORACLE_LEAK,
        "train_datasets": [evaluated.name],
        "label_scheme": scheme,
        "label_schemes_declared": evaluated.schemes is not None,
        "categories": len(categories),
        "train_labels": categories,
        "dropped_items": {"ambiguous_label": len(unique) - len(kept)},
        "instances": len(instances),
        "instance_size": instance_size,
        "rounds": rounds,
        "eval_splits": len(splits),
    }
    return Plan(_training_data(instances=instances), texts, splits, record)


def control_plan(evaluated: LabelledData, variant: str, *, min_categories: int, split_seed: int) -> Plan | str:
    """A control's plan (:data:`tecb.adapt.training.CONTROLS`): no training data, and the evaluation of the
    supervised ``variant`` whose methods it controls, exactly as their plans cut it (``lodo``, ``oracle``: all the
    dataset's splits; ``disjoint``: the splits restricted to the evaluation half of the categories, or the reason
    there is none)."""
    record = {"variant": variant, "labels_seen": "none", "train_datasets": [], "trained_on": "nothing (a control)"}
    if variant in ("lodo", "oracle"):
        texts, splits = _eval_all(evaluated)
    else:
        halves = _disjoint_halves(evaluated, min_categories=min_categories, split_seed=split_seed)
        if isinstance(halves, str):
            return halves
        scheme, _, eval_half, _, (texts, splits) = halves
        record.update(label_scheme=scheme, split_seed=split_seed, eval_labels=sorted(eval_half))
    return Plan(_training_data(), texts, splits, {**record, "eval_splits": len(splits)})


# --- unsupervised (simcse, clusterns) -------------------------------------------------------------------


def unsupervised_plan(texts: Sequence[str]) -> object:
    """The evaluated dataset's unique texts, nothing else (no label is an argument)."""
    return _training_data(texts=tuple(dict.fromkeys(texts)))


# --- argue pairs ----------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"„»A-ZÄÖÜ0-9])")


def sentences(text: str) -> list[str]:
    """A text's sentences (split after . ! ? before an upper-case letter, a digit or an opening quote)."""
    return [x.strip() for x in _SENTENCE_END.split(text.strip()) if x.strip()]


def segments(text: str, *, min_words: int) -> list[str]:
    """The consecutive segments of a text for the order objective: its sentences; a text of one sentence with at
    least ``min_words`` words is cut at its middle word (ALBERT's segments need not be sentences); else none."""
    parts = sentences(text)
    if len(parts) >= 2:
        return parts
    words = text.split()
    if len(words) >= max(2, min_words):
        mid = len(words) // 2
        return [" ".join(words[:mid]), " ".join(words[mid:])]
    return []


def order_pairs(texts: Sequence[str], *, min_words: int, max_pairs: int | None, seed: int) -> list:
    """argueBERT's order objective (ALBERT's sentence order) on the given texts: for each consecutive segment pair,
    in order (label 1) or swapped (label 0) with probability 1/2; at most ``max_pairs`` (a seeded sample)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for text in texts:
        parts = segments(text, min_words=min_words)
        for a, b in zip(parts, parts[1:]):
            pairs.append((a, b, 1, "order") if rng.random() < 0.5 else (b, a, 0, "order"))
    if max_pairs is not None and len(pairs) > max_pairs:
        keep = np.sort(rng.choice(len(pairs), size=max_pairs, replace=False))
        pairs = [pairs[i] for i in keep]
    return pairs


def reply_pairs(posts, *, exclude_texts=(), max_pairs: int | None, seed: int) -> list:
    """argueBERT's graph-edge objective on the forum's reply graph: (parent, reply, 1) for each reply whose parent
    is known, and (parent, a random post that is neither the parent nor linked to it by a reply, 0).

    ``posts``: ``(id, parent_id or None, text)``; posts with an empty text, or a text in ``exclude_texts`` (the
    evaluated texts), are not used. At most ``max_pairs`` positive pairs (a seeded sample), each with its negative.
    """
    rng = np.random.default_rng(seed)
    exclude = set(exclude_texts)
    text_of = {int(p): t.strip() for p, _, t in posts if t and t.strip() and t.strip() not in exclude}
    edges = [(int(parent), int(p)) for p, parent, _ in posts if parent is not None and int(p) in text_of]
    edges = [(parent, p) for parent, p in edges if parent in text_of and parent != p]
    if max_pairs is not None and len(edges) > max_pairs:
        edges = [edges[i] for i in np.sort(rng.choice(len(edges), size=max_pairs, replace=False))]
    linked: dict[int, set[int]] = {}
    for parent, p in ((int(p_), int(q)) for q, p_, _ in posts if p_ is not None):
        linked.setdefault(parent, set()).add(p)
        linked.setdefault(p, set()).add(parent)
    ids = sorted(text_of)
    pairs = []
    for parent, p in edges:
        pairs.append((text_of[parent], text_of[p], 1, "reply"))
        forbidden = linked.get(parent, set()) | {parent}
        if len(forbidden) >= len(ids):
            continue
        while True:
            other = ids[int(rng.integers(len(ids)))]
            if other not in forbidden:
                break
        pairs.append((text_of[parent], text_of[other], 0, "reply"))
    return pairs


def lead_and_rest(text: str) -> tuple[str, str] | None:
    """A text's lead and the rest of it: the first line where it has several (a title above its text: Blurbs P2P),
    else its first sentence (a news article's teaser or lead: 10kGNAD); None for a text of one part (a title)."""
    lines = [line.strip() for line in text.strip().split("\n") if line.strip()]
    if len(lines) >= 2:
        return lines[0], " ".join(lines[1:])
    parts = sentences(text)
    if len(parts) >= 2:
        return parts[0], " ".join(parts[1:])
    return None


def similarity_pairs(texts: Sequence[str], companions: Sequence[str] = (), *, max_pairs: int | None, seed: int) -> list:
    """argueBERT's similarity prediction, a German analogue built from the sources (no label): (a text's lead, the
    rest of the same text, 1) and (that lead, the rest of another text, 0) -- a title or lead and its own article
    or blurb against another one's. A text of one part (a Blurbs S2S title) takes its rest from a ``companions``
    text (its sibling dataset's title + text) whose first line it is. At most ``max_pairs`` positive pairs (a seeded
    sample), each with its negative."""
    rest_of = {}
    for text in companions:
        parts = lead_and_rest(text)
        if parts:
            rest_of.setdefault(parts[0], parts[1])
    items = []
    for text in dict.fromkeys(t.strip() for t in texts):
        parts = lead_and_rest(text) or ((text, rest_of[text]) if text in rest_of else None)
        if parts:
            items.append(parts)
    if len(items) < 2:
        return []
    rng = np.random.default_rng(seed)
    if max_pairs is not None and len(items) > max_pairs:
        items = [items[i] for i in np.sort(rng.choice(len(items), size=max_pairs, replace=False))]
    pairs = []
    for i, (lead, rest) in enumerate(items):
        other = int(rng.integers(len(items) - 1))
        other += other >= i
        pairs.append((lead, rest, 1, "similarity"))
        pairs.append((lead, items[other][1], 0, "similarity"))
    return pairs


@dataclass(frozen=True, kw_only=True)
class PairLimits:
    """How many argue pairs are built (the ``adapt.protocol`` section's ``order_min_words`` and ``max_*_pairs``):
    ``min_words``: the words a one-sentence text needs to give an order pair (:func:`segments`); at most
    ``max_order_pairs`` order pairs, ``max_reply_pairs`` and ``max_similarity_pairs`` positive reply and
    similarity pairs (seeded samples; None: all)."""

    min_words: int
    max_order_pairs: int | None
    max_reply_pairs: int | None
    max_similarity_pairs: int | None = None


def argue_plan(
    texts: Sequence[str],
    posts,
    *,
    objective: str,
    siamese_objectives: Sequence[str] = (),
    companions: Sequence[str] = (),
    limits: PairLimits,
    seed: int,
) -> object:
    """One argue model's pairs: those of its ``objective`` (the pair phase) and of the ``siamese_objectives`` (the
    siamese phase): similarity pairs from the evaluated texts (and their ``companions``, the sibling datasets'
    texts), order pairs from the evaluated texts, reply pairs from the forum posts (``None``: no forum), each as
    many as ``limits`` allows. No label of any dataset is an argument. An objective without a pair is an error
    naming why."""
    if objective not in ARGUE_OBJECTIVES:
        raise ValueError(f"adapt: unknown argue objective {objective!r}; known: {', '.join(ARGUE_OBJECTIVES)}")
    min_words = limits.min_words
    builders = {
        "similarity": lambda: similarity_pairs(texts, companions, max_pairs=limits.max_similarity_pairs, seed=seed + 2),
        "order": lambda: order_pairs(texts, min_words=min_words, max_pairs=limits.max_order_pairs, seed=seed),
        "reply": lambda: (
            reply_pairs(posts, exclude_texts=texts, max_pairs=limits.max_reply_pairs, seed=seed + 1)
            if posts is not None
            else []
        ),
    }
    pairs = []
    for name in dict.fromkeys([objective, *siamese_objectives]):
        pairs += builders[name]() if name in builders else []
    if not any(p[3] == objective for p in pairs):
        why = {
            "similarity": "no text has a lead and a rest (two lines or sentences), and no sibling dataset gives a "
            "title its text",
            "order": f"no text has two segments (sentences, or one of {min_words}+ words)",
            "reply": "no forum is configured (adapt.protocol.reply_source) or it has no reply",
        }[objective]
        raise ValueError(f"argue/{objective}: no training pair: {why}")
    return _training_data(pairs=tuple(pairs), objective=objective)
