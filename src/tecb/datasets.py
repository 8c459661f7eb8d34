"""Raw sources -> datasets (``texts.parquet`` + ``splits.parquet``, design §4 and §6).

A builder reads a source, applies the paper's selection rules, draws splits over *items* with a
seeded generator and returns a :class:`Dataset`; :func:`assemble` maps item texts to dense, unique
``text_id`` values, so a text is stored (and later embedded) once however many splits use it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tecb import splits as recipes
from tecb.sources import germeval, gnad, reddit

VARIANTS = ("s2s", "p2p")


@dataclass
class Dataset:
    texts: list[str]
    splits: list[tuple[list[int], list[str]]]
    split_names: list[str] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    n_items: int = 0


def assemble(item_texts: list[str], split_items: list[tuple[np.ndarray, list[str]]]) -> tuple[list[str], list]:
    """Map the items used by the splits to unique texts; ``text_id`` follows first use in item order."""
    used = sorted({int(i) for idx, _ in split_items for i in idx})
    text_ids: dict[str, int] = {}
    item_to_id = {}
    for i in used:
        item_to_id[i] = text_ids.setdefault(item_texts[i], len(text_ids))
    splits = [([item_to_id[int(i)] for i in idx], list(labels)) for idx, labels in split_items]
    return list(text_ids), splits


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"text variant must be one of {VARIANTS}, got {variant!r}")


def _random_splits(labels, n_splits, rng, low, high):
    labels = np.asarray(labels, dtype=object)
    return [(idx, labels[idx].tolist()) for idx in recipes.random_fraction_splits(len(labels), n_splits, rng, low, high)]


def build_blurbs(path, variant: str, seed: int = 42, n_splits: int = 10, low: float = 0.1, high: float = 1.0) -> Dataset:
    """Blurbs S2S/P2P from the GermEval 2019 zip: 10 coarse (d=0), 10 fine (d=1), one split per d=0 genre."""
    _check_variant(variant)
    kept, dropped = germeval.select_books(germeval.read_blurbs(path))
    if not kept:
        raise ValueError(f"{path}: no book passes the selection rules (dropped: {dict(dropped)})")
    rng = np.random.default_rng(seed)
    coarse = [b.genre0 for b in kept]
    fine = [b.genre1 for b in kept]
    split_items = _random_splits(coarse, n_splits, rng, low, high) + _random_splits(fine, n_splits, rng, low, high)
    names = [f"coarse {i}" for i in range(n_splits)] + [f"fine {i}" for i in range(n_splits)]
    for genre, idx in recipes.within_group_splits(coarse, fine):
        split_items.append((idx, [fine[i] for i in idx]))
        names.append(f"within {genre}")
    texts = [b.title if variant == "s2s" else f"{b.title}\n{b.body}" for b in kept]
    unique, splits = assemble(texts, split_items)
    return Dataset(unique, splits, names, dropped, len(kept))


def build_tenkgnad(path, variant: str, seed: int = 42, n_splits: int = 10, low: float = 0.1, high: float = 1.0) -> Dataset:
    """TenKGnad S2S/P2P from a One Million Posts ``corpus.sqlite3``: 10 random-fraction splits."""
    _check_variant(variant)
    articles = gnad.read_articles(path)
    if not articles:
        raise ValueError(f"{path}: no newsroom articles")
    dropped = Counter()
    if variant == "p2p":
        kept = [a for a in articles if a.description or a.paragraphs]
        dropped["no description or copytext"] = len(articles) - len(kept)
        articles = kept
    rng = np.random.default_rng(seed)
    split_items = _random_splits([a.label for a in articles], n_splits, rng, low, high)
    texts = [a.s2s() if variant == "s2s" else a.p2p() for a in articles]
    unique, splits = assemble(texts, split_items)
    return Dataset(unique, splits, [f"random {i}" for i in range(n_splits)], dropped, len(articles))


def build_tenkgnad_csv(paths, variant: str = "p2p", seed: int = 42, n_splits: int = 10, low: float = 0.1, high: float = 1.0) -> Dataset:
    """TenKGnad P2P from the 10kGNAD csv files (no titles: P2P only)."""
    if variant != "p2p":
        raise ValueError("the 10kGNAD csv files hold no titles: they can only build the P2P variant")
    rows = [row for p in ([paths] if isinstance(paths, str) else paths) for row in gnad.read_10kgnad_csv(p)]
    rng = np.random.default_rng(seed)
    split_items = _random_splits([label for label, _ in rows], n_splits, rng, low, high)
    unique, splits = assemble([text for _, text in rows], split_items)
    return Dataset(unique, splits, [f"random {i}" for i in range(n_splits)], Counter(), len(rows))


def build_reddit(path, variant: str, seed: int = 42, n_splits: int = 10, low: int = 10, high: int = 50) -> Dataset:
    """Reddit S2S/P2P from ``submissions.parquet``: each split = all posts of 10-50 drawn subreddits."""
    _check_variant(variant)
    rows, dropped = reddit.usable_submissions(reddit.read_submissions(path), str(path))
    if not rows:
        raise ValueError(f"{path}: no usable submissions")
    rng = np.random.default_rng(seed)
    subs = [r["subreddit"] for r in rows]
    split_items = [(idx, [subs[i] for i in idx]) for idx in recipes.group_draw_splits(subs, n_splits, rng, low, high)]
    texts = [r["title"] if variant == "s2s" else f"{r['title']} {r['selftext']}".strip() for r in rows]
    unique, splits = assemble(texts, split_items)
    return Dataset(unique, splits, [f"subreddits {i}" for i in range(n_splits)], Counter(dropped), len(rows))


BUILDERS = {
    "germeval2019": build_blurbs,
    "million_posts": build_tenkgnad,
    "10kgnad_csv": build_tenkgnad_csv,
    "reddit": build_reddit,
}


def build(source: str, path, variant: str, seed: int = 42, **recipe) -> Dataset:
    """Build a dataset from the named ``source`` kind (a key of :data:`BUILDERS`)."""
    if source not in BUILDERS:
        raise ValueError(f"unknown dataset source {source!r}; known: {', '.join(BUILDERS)}")
    return BUILDERS[source](path, variant, seed=seed, **recipe)


def describe(dataset: Dataset, name: str) -> str:
    """A short log text: sizes, labels per split, drop reasons."""
    lines = [f"{name}: {dataset.n_items} items, {len(dataset.texts)} unique texts, {len(dataset.splits)} splits"]
    for i, (ids, labels) in enumerate(dataset.splits):
        tag = dataset.split_names[i] if i < len(dataset.split_names) else str(i)
        lines.append(f"  split {i} ({tag}): {len(ids)} items, {len(set(labels))} labels")
    for reason, n in sorted(dataset.dropped.items()):
        if n:
            lines.append(f"  dropped ({reason}): {n}")
    return "\n".join(lines)
