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
from tecb.sources import custom, germeval, gnad, published, reddit

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
    within = recipes.within_group_splits(coarse, fine)
    for genre, idx in within:
        split_items.append((idx, [fine[i] for i in idx]))
        names.append(f"within {genre}")
    for genre in sorted(set(coarse) - {g for g, _ in within}):  # a one-label split cannot be clustered
        dropped[f"no within-genre split for {genre} (one d=1 genre; its books)"] = coarse.count(genre)
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
    if variant == "s2s":
        kept = [a for a in articles if a.title]
        dropped["empty title"] = len(articles) - len(kept)
        articles = kept
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


def build_published(path, variant: str | None = None, seed: int = 42) -> Dataset:
    """The paper's published splits (``test.jsonl``, one split per line): loaded as they are, no re-sampling."""
    split_texts = published.read_splits(path)
    items = [t for sentences, _ in split_texts for t in sentences]
    split_items, start = [], 0
    for sentences, labels in split_texts:
        split_items.append((np.arange(start, start + len(sentences)), labels))
        start += len(sentences)
    unique, splits = assemble(items, split_items)
    return Dataset(unique, splits, [f"published {i}" for i in range(len(splits))], Counter(), len(items))


def build_custom(path, variant: str | None = None, seed: int = 42, text_column: str = "text",
                 label_column: str = "label", split_column: str | None = None, format: str | None = None,
                 n_splits: int = 10, low: float = 0.1, high: float = 1.0) -> Dataset:
    """Your own file: one split per value of ``split_column``, else ``n_splits`` random ``low``..``high`` samples."""
    texts, labels, split_values = custom.read_rows(path, text_column, label_column, split_column, format)
    if split_column is not None:
        names = sorted(set(split_values))
        values = np.asarray(split_values, dtype=object)
        split_items = [(np.flatnonzero(values == name), None) for name in names]
        split_items = [(idx, [labels[i] for i in idx]) for idx, _ in split_items]
        names = [f"{split_column}={name}" for name in names]
    else:
        rng = np.random.default_rng(seed)
        split_items = _random_splits(labels, n_splits, rng, low, high)
        names = [f"random {i}" for i in range(n_splits)]
    unique, splits = assemble(texts, split_items)
    return Dataset(unique, splits, names, Counter(), len(texts))


BUILDERS = {
    "germeval2019": build_blurbs,
    "million_posts": build_tenkgnad,
    "10kgnad_csv": build_tenkgnad_csv,
    "reddit": build_reddit,
    "published": build_published,
    "custom": build_custom,
}
# options of a config dataset entry each builder accepts (besides path, text variant and seed)
OPTIONS = {
    "published": (),
    "custom": ("text_column", "label_column", "split_column", "format", "n_splits", "low", "high"),
}
RECIPE = ("n_splits", "low", "high")


def builder_of(source_name: str, source: dict | None, dataset: dict) -> str:
    """The builder of a dataset entry: its `builder`, else its source's `builder`, else the source's name."""
    name = dataset.get("builder") or (source or {}).get("builder") or source_name
    if name not in BUILDERS and name in published.PUBLISHED:
        return "published"
    return name


def build(source: str, path, variant: str | None, seed: int = 42, **options) -> Dataset:
    """Build a dataset with the named builder (a key of :data:`BUILDERS`); ``options`` come from the config entry."""
    if source not in BUILDERS:
        raise ValueError(f"unknown dataset builder {source!r}; known: {', '.join(BUILDERS)}")
    allowed = OPTIONS.get(source, RECIPE)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"builder {source!r} does not take {', '.join(unknown)} (it takes: {', '.join(allowed) or 'nothing'})")
    if variant is None and source not in OPTIONS:
        raise ValueError(f"builder {source!r} needs `text: s2s` or `text: p2p`")
    return BUILDERS[source](path, variant, seed=seed, **options)


def build_from_config(name: str, dataset: dict, sources: dict, path, seed: int = 42) -> Dataset:
    """Build the config entry ``datasets.<name>`` (with ``sources``) from the raw file at ``path``."""
    source_name = dataset["source"]
    builder = builder_of(source_name, sources.get(source_name), dataset)
    keys = OPTIONS.get(builder, RECIPE)
    options = {k: dataset[k] for k in keys if dataset.get(k) is not None}
    if builder == "10kgnad_csv" and dataset.get("text") == "s2s":
        raise ValueError(f"dataset {name}: the 10kGNAD csv files hold no titles; use `text: p2p`")
    built = build(builder, path, dataset.get("text"), seed=seed, **options)
    for i, (ids, labels) in enumerate(built.splits):
        if len(ids) < 2 or len(set(labels)) < 2:
            tag = built.split_names[i] if i < len(built.split_names) else str(i)
            raise ValueError(f"dataset {name}: split {i} ({tag}) has {len(ids)} items and {len(set(labels))} "
                             "label(s); a clustering split needs at least two of each")
    return built


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
