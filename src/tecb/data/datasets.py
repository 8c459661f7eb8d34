"""Raw sources -> datasets (``texts.parquet`` + ``splits.parquet``, design §4 and §6).

A builder reads a source, applies the paper's selection rules, draws splits over *items* with a
seeded generator and returns a :class:`Dataset`; :func:`assemble` maps item texts to dense, unique
``text_id`` values, so a text is stored (and later embedded) once however many splits use it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tecb.data import splits as recipes
from tecb.data.sources import custom, germeval, gnad, published, reddit
from tecb.io import file_sha256

VARIANTS = ("s2s", "p2p")


@dataclass
class Dataset:
    texts: list[str]
    splits: list[tuple[list[int], list[str]]]
    split_names: list[str] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)
    n_items: int = 0
    provenance: dict = field(default_factory=dict)  # where the dataset comes from (written into its files)
    notes: list[str] = field(default_factory=list)  # log lines about the source, before the selection counts
    label_schemes: list[str] | None = None  # each split's label scheme, where the builder knows (label_schemes)
    # each split's design where a dataset mixes designs (Blurbs: coarse, fine, within-genre); written into the
    # provenance as ``split_kinds`` (read by the statistics: tecb.report.stats), not into the splits' rows
    split_kinds: list[str] | None = None


def assemble(item_texts: list[str], split_items: list[tuple[np.ndarray, list[str]]]) -> tuple[list[str], list]:
    """Map the items used by the splits to unique texts; ``text_id`` follows first use in item order."""
    used = sorted({int(i) for idx, _ in split_items for i in idx})
    text_ids: dict[str, int] = {}
    item_to_id = {}
    for i in used:
        item_to_id[i] = text_ids.setdefault(item_texts[i], len(text_ids))
    splits = [([item_to_id[int(i)] for i in idx], list(labels)) for idx, labels in split_items]
    return list(text_ids), splits


def split_label_conflicts(splits: list[tuple[list[int], list[str]]]) -> dict[int, list[str]]:
    """Texts given two or more different labels inside one split: ``{text_id: sorted labels}`` over all splits."""
    out: dict[int, set[str]] = {}
    for ids, labels in splits:
        seen: dict[int, set[str]] = {}
        for i, label in zip(ids, labels):
            seen.setdefault(int(i), set()).add(label)
        for i, labs in seen.items():
            if len(labs) > 1:
                out.setdefault(i, set()).update(labs)
    return {i: sorted(labs) for i, labs in sorted(out.items())}


def label_schemes(splits: list[tuple[list[int], list[str]]], declared: list[str] | None = None) -> list[str]:
    """The label scheme of each split: ``declared`` (by a builder that knows), else inferred.

    Splits of one scheme label the same kind of class, so one text should carry one label in all of them.
    Builders declare it: Blurbs has two (``d=0 genre`` for its 10 coarse splits, ``d=1 genre`` for its
    10 fine and its within-genre splits), TenKGnad (``category``), Reddit (``subreddit``) and a custom file
    without ``split_column`` (``label``) one. Otherwise (published splits, a custom ``split_column``) splits
    that share at least one label are one scheme, transitively (``labels of split 0``: named by its first split).
    """
    if declared is not None:
        if len(declared) != len(splits):
            raise ValueError(f"{len(declared)} label schemes declared for {len(splits)} splits")
        return list(declared)
    parent = list(range(len(splits)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, (_, labels) in enumerate(splits):
        for label in set(labels):
            a, b = root(i), root(first_with.setdefault(label, i))
            parent[max(a, b)] = min(a, b)  # a component's root is its first split
    return [f"labels of split {root(i)}" for i in range(len(splits))]


def label_conflicts(
    splits: list[tuple[list[int], list[str]]], schemes: list[str] | None = None
) -> dict[int, list[str]]:
    """Identical texts with different labels within the dataset: ``{text_id: sorted labels}``.

    Within the dataset means among all splits of one label scheme (:func:`label_schemes`; ``schemes`` gives each
    split's, else they are inferred): Blurbs gives a book its d=0 genre in some splits and its d=1 genre in others
    on purpose, which is no conflict; the same text labelled ``a`` in one split and ``b`` in another of the same
    scheme is (as is a text with two labels inside one split). The rule for them: kept, each item with its own
    label, as in the paper's published splits; the count and examples go to the build log and the count into the
    dataset's provenance (``texts_with_conflicting_labels``).
    """
    schemes = label_schemes(splits, schemes)
    seen: dict[tuple[str, int], set[str]] = {}
    for scheme, (ids, labels) in zip(schemes, splits):
        for i, label in zip(ids, labels):
            seen.setdefault((scheme, int(i)), set()).add(label)
    out: dict[int, set[str]] = {}
    for (_, i), labs in seen.items():
        if len(labs) > 1:
            out.setdefault(i, set()).update(labs)
    return {i: sorted(labs) for i, labs in sorted(out.items())}


def _file_entry(path, records: int | None = None, name: str | None = None, **extra) -> dict:
    """Provenance of one source file: its name (no folders: outputs carry no absolute paths) and SHA-256."""
    entry = {"file": name or Path(path).name, "sha256": file_sha256(path)}
    if records is not None:
        entry["records"] = int(records)
    return {**entry, **extra}


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"text variant must be one of {VARIANTS}, got {variant!r}")


def _check_raw_inputs(path, variant: str, builder: str) -> None:
    """A raw builder's checks of its arguments: a known text variant, one file or folder."""
    _check_variant(variant)
    _single_path(path, builder)


def _random_splits(labels, n_splits, rng, min_fraction, max_fraction):
    labels = np.asarray(labels, dtype=object)
    return [
        (idx, labels[idx].tolist())
        for idx in recipes.random_fraction_splits(len(labels), n_splits, rng, min_fraction, max_fraction)
    ]


def _blurbs_provenance(path, source, dropped) -> dict:
    """The provenance of a Blurbs dataset: the files read, whether they are the whole source (all three labelled
    files, enough books) and, if not, why; the duplicate books dropped."""
    files = [{"file": f.short, "sha256": f.sha256, "records": f.books, "labelled": f.labelled} for f in source.files]
    if source.archive_sha256:
        files.insert(0, {"file": Path(path).name, "sha256": source.archive_sha256})
    n_books = len(source.books)
    labelled = {Path(f.short.rsplit(":", 1)[-1]).name.removesuffix(".gz") for f in source.files if f.labelled}
    missing = [n for n in ("blurbs_train.txt", "blurbs_dev.txt", "blurbs_test.txt") if n not in labelled]
    full, why = n_books >= FULL_SOURCE["germeval2019"][0] and not missing, ""
    if not full:
        why = (
            f"{n_books:,} labelled books"
            + (f", no labelled {', '.join(missing)}" if missing else "")
            + f"; {FULL_SOURCE['germeval2019'][1]}"
        )
    prov = {
        "origin": "raw",
        "source_files": files,
        "records": n_books,
        "full_source": full,
        "partial_because": why,
        "duplicate_books_dropped": sum(n for r, n in dropped.items() if r.startswith("duplicate book")),
    }
    return prov


def build_blurbs(
    path, variant: str, *, seed: int, n_splits: int = 10, min_fraction: float = 0.1, max_fraction: float = 1.0
) -> Dataset:
    """Blurbs S2S/P2P from the GermEval 2019 zip: 10 coarse (d=0), 10 fine (d=1), one split per d=0 genre."""
    _check_raw_inputs(path, variant, "germeval2019")
    source = germeval.read_blurbs_source(path)
    if not source.books:
        unlabelled = ", ".join(f.name for f in source.files if not f.labelled and f.books)
        empty = ", ".join(f.name for f in source.files if not f.books)
        raise ValueError(
            f"{path}: no labelled books (unlabelled files: {unlabelled or 'none'}"
            + (f"; files without any <book> record: {empty}" if empty else "")
            + ")"
        )
    kept, dropped = germeval.select_books(source.books)
    if not kept:
        raise ValueError(f"{path}: no book passes the selection rules (dropped: {dict(dropped)})")
    rng = np.random.default_rng(seed)
    coarse = [b.genre0 for b in kept]
    fine = [b.genre1 for b in kept]
    split_items = _random_splits(coarse, n_splits, rng, min_fraction, max_fraction) + _random_splits(
        fine, n_splits, rng, min_fraction, max_fraction
    )
    names = [f"coarse {i}" for i in range(n_splits)] + [f"fine {i}" for i in range(n_splits)]
    within = recipes.within_group_splits(coarse, fine)
    for genre, idx in within:
        split_items.append((idx, [fine[i] for i in idx]))
        names.append(f"within {genre}")
    for genre in sorted(set(coarse) - {g for g, _ in within}):  # a one-label split cannot be clustered
        dropped[f"no within-genre split for {genre} (one d=1 genre; its books)"] = coarse.count(genre)
    texts = [blurb_text(b, variant) for b in kept]
    unique, splits = assemble(texts, split_items)
    notes = [
        "  books read per file (before the selection):",
        source.report(),
        f"  {len(source.books)} labelled books; selection keeps {len(kept)}",
    ]
    prov = _blurbs_provenance(path, source, dropped)
    schemes = ["d=0 genre"] * n_splits + ["d=1 genre"] * (len(splits) - n_splits)
    kinds = ["coarse"] * n_splits + ["fine"] * n_splits + ["within-genre"] * len(within)
    return Dataset(unique, splits, names, dropped, len(kept), prov, notes, schemes, kinds)


def blurb_text(book, variant: str) -> str:
    """A book's text in a Blurbs dataset: its title (s2s) or title and blurb (p2p)."""
    return book.title if variant == "s2s" else f"{book.title}\n{book.body}"


def unlabelled_blurb_texts(path, variant: str, *, evaluated: list[str], n_texts: int | None, seed: int):
    """Texts of the GermEval source's *unlabelled* books (files without ``<categories>``, e.g.
    ``blurbs_test_nolabel.txt``) for unsupervised training on books the benchmark never evaluates: titles (s2s)
    or title and blurb (p2p), as :func:`build_blurbs` writes them, in file order, duplicates and any text equal to
    one of ``evaluated`` dropped; ``n_texts`` (None: all) of them drawn by ``seed``, kept in file order.
    Returns ``(texts, provenance)``; no unlabelled book is an error naming the source."""
    _check_raw_inputs(path, variant, "germeval2019")
    source = germeval.read_blurbs_source(path)
    if not source.unlabelled:
        raise ValueError(f"{path}: no unlabelled blurbs file (a blurbs_*.txt whose books carry no <categories>)")
    evaluated = set(evaluated)
    seen, held_out, texts = set(evaluated), 0, []
    for book in source.unlabelled:
        text = blurb_text(book, variant)
        if not text.strip() or text in seen:
            held_out += text in evaluated
            continue
        seen.add(text)
        texts.append(text)
    available = len(texts)
    if n_texts is not None:
        if n_texts > available:
            raise ValueError(f"{path}: n_texts {n_texts} asked, {available} unlabelled texts available")
        keep = np.sort(np.random.default_rng(seed).choice(available, size=n_texts, replace=False))
        texts = [texts[i] for i in keep]
    provenance = {
        "files": [{"file": f.short or Path(f.name).name, "sha256": f.sha256} for f in source.files if not f.labelled],
        "books": len(source.unlabelled),
        "equal_to_an_evaluated_text": held_out,
        "distinct_texts": available,
        "kept": len(texts),
        "seed": seed,
        "variant": variant,
    }
    return texts, provenance


def _raw_provenance(source: str, files: list, records: int, what: str) -> dict:
    """The provenance of a dataset built from raw files: the ``files`` and the ``records`` read (``what``: their
    name), whether that is the whole source (:data:`FULL_SOURCE`) and, if not, why."""
    full = records >= FULL_SOURCE[source][0]
    return {
        "origin": "raw",
        "source_files": files,
        "records": records,
        "full_source": full,
        "partial_because": "" if full else f"{records:,} {what}; {FULL_SOURCE[source][1]}",
    }


def build_tenkgnad(
    path, variant: str, *, seed: int, n_splits: int = 10, min_fraction: float = 0.1, max_fraction: float = 1.0
) -> Dataset:
    """TenKGnad S2S/P2P from a One Million Posts ``corpus.sqlite3``: 10 random-fraction splits."""
    _check_raw_inputs(path, variant, "million_posts")
    articles = gnad.read_articles(path)
    if not articles:
        raise ValueError(f"{path}: no newsroom articles")
    n_read = len(articles)
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
    split_items = _random_splits([a.label for a in articles], n_splits, rng, min_fraction, max_fraction)
    texts = [a.s2s() if variant == "s2s" else a.p2p() for a in articles]
    unique, splits = assemble(texts, split_items)
    prov = _raw_provenance("million_posts", [_file_entry(path, n_read)], n_read, "newsroom articles")
    notes = [f"  {Path(path).name}: {n_read} newsroom articles read (before the selection)"]
    return Dataset(
        unique,
        splits,
        [f"random {i}" for i in range(n_splits)],
        dropped,
        len(articles),
        prov,
        notes,
        ["category"] * len(splits),
    )


def build_tenkgnad_csv(
    paths,
    variant: str = "p2p",
    *,
    seed: int,
    n_splits: int = 10,
    min_fraction: float = 0.1,
    max_fraction: float = 1.0,
) -> Dataset:
    """TenKGnad P2P from the 10kGNAD csv files (no titles: P2P only): train.csv then test.csv (``gnad.csv_files``)."""
    if variant != "p2p":
        raise ValueError("the 10kGNAD csv files hold no titles: they can only build the P2P variant")
    files, notes = gnad.csv_files(paths)
    rows, entries = [], []
    notes.append("  rows read per file, in this order (before the selection):")
    for p in files:
        got = gnad.read_10kgnad_csv(p)
        rows += got
        entries.append(_file_entry(p, len(got)))
        notes.append(f"    {p}: {len(got)} rows")
    rng = np.random.default_rng(seed)
    split_items = _random_splits([label for label, _ in rows], n_splits, rng, min_fraction, max_fraction)
    unique, splits = assemble([text for _, text in rows], split_items)
    prov = _raw_provenance("10kgnad_csv", entries, len(rows), "rows")
    return Dataset(
        unique,
        splits,
        [f"random {i}" for i in range(n_splits)],
        Counter(),
        len(rows),
        prov,
        notes,
        ["category"] * len(splits),
    )


def build_reddit(
    path, variant: str, *, seed: int, n_splits: int = 10, min_subreddits: int = 10, max_subreddits: int = 50
) -> Dataset:
    """Reddit S2S/P2P from ``submissions.parquet``: each split = all posts of 10-50 drawn subreddits."""
    _check_raw_inputs(path, variant, "reddit")
    table = reddit.read_submissions(path)
    rows, dropped = reddit.usable_submissions(table, str(path))
    if not rows:
        raise ValueError(f"{path}: no usable submissions")
    rng = np.random.default_rng(seed)
    subs = [r["subreddit"] for r in rows]
    split_items = [
        (idx, [subs[i] for i in idx])
        for idx in recipes.group_draw_splits(subs, n_splits, rng, min_subreddits, max_subreddits)
    ]
    texts = [r["title"] if variant == "s2s" else f"{r['title']} {r['selftext']}".strip() for r in rows]
    unique, splits = assemble(texts, split_items)
    prov = _raw_provenance("reddit", [_file_entry(path, table.num_rows)], table.num_rows, "submissions")
    notes = [f"  {Path(path).name}: {table.num_rows} submissions read (before the selection)"]
    return Dataset(
        unique,
        splits,
        [f"subreddits {i}" for i in range(n_splits)],
        Counter(dropped),
        len(rows),
        prov,
        notes,
        ["subreddit"] * len(splits),
    )


def build_published(path, variant: str | None = None, *, seed: int) -> Dataset:
    """The paper's published splits (``test.jsonl``, one split per line): loaded as they are, no re-sampling."""
    _single_path(path, "published")
    split_texts = published.read_splits(path)
    items = [t for sentences, _ in split_texts for t in sentences]
    split_items, start = [], 0
    for sentences, labels in split_texts:
        split_items.append((np.arange(start, start + len(sentences)), labels))
        start += len(sentences)
    unique, splits = assemble(items, split_items)
    prov = {"origin": "published", "source_files": [_file_entry(path, len(split_texts))]}
    return Dataset(
        unique,
        splits,
        [f"published {i}" for i in range(len(splits))],
        Counter(),
        len(items),
        prov,
        [f"  {Path(path).name}: {len(split_texts)} splits, {len(items)} items"],
    )


def build_custom(
    path,
    variant: str | None = None,
    *,
    seed: int,
    layout: custom.Layout | None = None,
    recipe: recipes.FractionRecipe | None = None,
) -> Dataset:
    """Your own file, read as ``layout`` says: one split per value of its ``split_column``, else the ``recipe``'s
    random samples (``n_splits`` of ``min_fraction``..``max_fraction`` of the rows each). None: the spec's
    defaults (``Layout()``, ``FractionRecipe()``). A config entry's options become these two by
    :func:`custom_options`."""
    _single_path(path, "custom")
    layout, recipe = layout or custom.Layout(), recipe or recipes.FractionRecipe()
    split_column, label_column = layout.split_column, layout.label_column
    texts, labels, split_values = layout.read(path)
    if split_column is not None:
        names = sorted(set(split_values))
        values = np.asarray(split_values, dtype=object)
        split_items = [(np.flatnonzero(values == name), None) for name in names]
        split_items = [(idx, [labels[i] for i in idx]) for idx, _ in split_items]
        names = [f"{split_column}={name}" for name in names]
    else:
        rng = np.random.default_rng(seed)
        split_items = _random_splits(labels, recipe.n_splits, rng, recipe.min_fraction, recipe.max_fraction)
        names = [f"random {i}" for i in range(recipe.n_splits)]
    unique, splits = assemble(texts, split_items)
    prov = {"origin": "custom", "source_files": [_file_entry(path, len(texts))]}
    schemes = None if split_column is not None else [label_column] * len(splits)  # split_column: inferred
    return Dataset(
        unique, splits, names, Counter(), len(texts), prov, [f"  {Path(path).name}: {len(texts)} records read"], schemes
    )


def custom_options(options: dict) -> dict:
    """A custom dataset entry's options (its config keys, :data:`OPTIONS`) as :func:`build_custom`'s keywords: the
    file's :class:`tecb.data.sources.custom.Layout` and the random :class:`tecb.data.splits.FractionRecipe`."""
    recipe = {k: v for k, v in options.items() if k in RECIPE}
    layout = {k: v for k, v in options.items() if k not in RECIPE}
    return {"layout": custom.Layout(**layout), "recipe": recipes.FractionRecipe(**recipe)}


BUILDERS = {
    "germeval2019": build_blurbs,
    "million_posts": build_tenkgnad,
    "10kgnad_csv": build_tenkgnad_csv,
    "reddit": build_reddit,
    "published": build_published,
    "custom": build_custom,
}
#: What each builder's texts are, per text variant: Table 1's "Target" column (tecb.report.tables.table1).
TARGETS = {
    "germeval2019": {"s2s": "book titles", "p2p": "book titles + blurbs"},
    "million_posts": {"s2s": "news article titles", "p2p": "news article titles + texts"},
    "10kgnad_csv": {"p2p": "news article texts (lead + body, no titles)"},
    "reddit": {"s2s": "submission titles", "p2p": "submission titles + texts"},
}


def target_text(provenance: Mapping) -> str | None:
    """What a built dataset's texts are, from its provenance (builder and text variant); None where the builder
    does not say (published splits, your own files)."""
    return TARGETS.get(provenance.get("builder"), {}).get(provenance.get("text"))


# options of a config dataset entry each builder accepts (besides path, text variant and seed)
OPTIONS = {
    "published": (),
    "custom": (
        "text_column",
        "label_column",
        "split_column",
        "format",
        "sep",
        "quoting",
        "n_splits",
        "min_fraction",
        "max_fraction",
    ),
}
RECIPE = ("n_splits", "min_fraction", "max_fraction")  # random fractions of the items
REDDIT_RECIPE = ("n_splits", "min_subreddits", "max_subreddits")  # all posts of a random number of subreddits


def recipe_keys(builder: str) -> tuple[str, ...]:
    """The split recipe's keys of a raw-source builder (each key has one unit: a fraction or a count)."""
    return REDDIT_RECIPE if builder == "reddit" else RECIPE


# keys any dataset entry may have; `text` only with the raw-source builders (not in OPTIONS)
COMMON_KEYS = ("source", "builder")

# The paper's split recipes (design §6) and what counts as the full raw source (thresholds below the public
# releases' sizes, so a complete copy passes and a sample or a partial download does not).
PAPER_RECIPES = {
    "germeval2019": {"n_splits": 10, "min_fraction": 0.1, "max_fraction": 1.0},
    "million_posts": {"n_splits": 10, "min_fraction": 0.1, "max_fraction": 1.0},
    "reddit": {"n_splits": 10, "min_subreddits": 10, "max_subreddits": 50},
}
FULL_SOURCE = {
    "germeval2019": (
        20_000,
        "the full GermEval 2019 Task 1 data has ~20,800 labelled books in blurbs_train, blurbs_dev and blurbs_test",
    ),
    "million_posts": (10_000, "the full One Million Posts corpus has ~10,300 newsroom articles"),
    "10kgnad_csv": (10_000, "the full 10kGNAD has 10,273 rows in train.csv + test.csv"),
    "reddit": (36_000, "a full rehydration gets at least 90% of the paper's 40,759 submission ids"),
}
# the paper's datasets: raw builder and published source of each
PAPER_SOURCES = {
    "BlurbsClusteringS2S": ("germeval2019", "s2s", "published_blurbs_s2s"),
    "BlurbsClusteringP2P": ("germeval2019", "p2p", "published_blurbs_p2p"),
    "TenKGnadClusteringS2S": ("million_posts", "s2s", "published_tenkgnad_s2s"),
    "TenKGnadClusteringP2P": ("million_posts", "p2p", "published_tenkgnad_p2p"),
    "RedditClusteringS2S": ("reddit", "s2s", None),
    "RedditClusteringP2P": ("reddit", "p2p", None),
}


def check_entry(name: str, dataset: dict, builder: str) -> None:
    """Refuse keys of ``datasets.<name>`` that do not apply to its builder, naming the key (config validation)."""
    allowed = set(COMMON_KEYS) | set(OPTIONS.get(builder, recipe_keys(builder) + ("text",)))
    if builder == "custom" and dataset.get("split_column") is not None:
        allowed -= set(RECIPE)  # splits come from the column: no random recipe
    for key in dataset:
        if key not in allowed and dataset[key] is not None:
            extra = " (splits come from split_column)" if builder == "custom" and key in RECIPE else ""
            raise ValueError(
                f"config: datasets.{name}.{key} does not apply to builder {builder!r}{extra}; "
                f"it takes: {', '.join(sorted(allowed - set(COMMON_KEYS))) or 'no options'}"
            )
    if builder not in OPTIONS and dataset.get("text") is None:
        raise ValueError(f"config: datasets.{name} (builder {builder!r}) needs `text: s2s` or `text: p2p`")
    if builder == "10kgnad_csv" and dataset.get("text") == "s2s":
        raise ValueError(f"config: datasets.{name}.text: the 10kGNAD csv files hold no titles; use `text: p2p`")
    if dataset.get("quoting") not in (None, *custom.QUOTING):
        raise ValueError(f"config: datasets.{name}.quoting must be one of {', '.join(custom.QUOTING)}")


# keys of a `sources:` entry each builder uses (besides `builder`); others are config errors
SOURCE_KEYS = {
    "germeval2019": ("path", "url", "sha256"),
    "million_posts": ("path", "url", "sha256"),
    "10kgnad_csv": ("path",),
    "custom": ("path",),
    "published": ("path", "repo_id", "revision"),
    "reddit": (
        "path",
        "ids_url",
        "ids_sha256",
        "ids_path",
        "praw_site",
        "user_agent",
        "oauth_url",
        "reddit_url",
        "max_retries",
        "backoff_seconds",
    ),
}


def check_source(name: str, source: dict, builder: str) -> None:
    """Refuse keys of ``sources.<name>`` that its builder does not use (e.g. `url` on a custom file), naming it."""
    allowed = SOURCE_KEYS.get(builder)
    if allowed is None:
        return
    for key, value in source.items():
        if key != "builder" and key not in allowed and value is not None:
            raise ValueError(
                f"config: sources.{name}.{key} does not apply to builder {builder!r}; it takes: {', '.join(allowed)}"
            )
    if isinstance(source.get("path"), list) and builder != "10kgnad_csv":
        raise ValueError(f"config: sources.{name}.path is a list; only a 10kgnad_csv source takes several files")


def _single_path(path, builder: str) -> None:
    if not isinstance(path, (str, Path)):
        raise ValueError(
            f"builder {builder!r} reads one file or folder, got {len(path)} paths; "
            "a list of files works only for 10kgnad_csv"
        )


def paper_comparison(name: str, prov: dict) -> str:
    """Why dataset ``name`` with provenance ``prov`` cannot be set beside the paper's numbers ("" = it can).

    Comparable: the paper's published splits of that dataset (repo and revision of design §6; a local copy only
    when :func:`published_check` verified it), or a build from the full raw source by the paper's builder and
    text variant with the paper's split recipe (any seed).
    """
    if name not in PAPER_SOURCES:
        return "not one of the paper's datasets"
    builder, variant, published_source = PAPER_SOURCES[name]
    origin = prov.get("origin")
    if origin == "published":
        if prov.get("revision_unverified_because"):
            return f"published splits other than the paper's: {prov['revision_unverified_because']}"
        pinned = published.PUBLISHED.get(published_source or "", (None, None))
        have = (prov.get("repo_id"), prov.get("revision"))
        return "" if have == pinned else f"published splits other than the paper's ({have[0]}@{have[1]})"
    if origin != "raw":
        return f"a {origin or 'custom'} dataset, not the paper's source"
    if prov.get("builder") != builder:
        if prov.get("builder") == "10kgnad_csv":
            return "built from the 10kGNAD csv files: no titles, so not the paper's P2P text"
        return f"built by {prov.get('builder')!r}, not from the paper's source ({builder})"
    if prov.get("text") != variant:
        return f"text variant {prov.get('text')}, the paper's {name} is {variant}"
    reasons = []
    if not prov.get("full_source"):
        reasons.append(f"built from part of the source ({prov.get('partial_because')})")
    recipe = {k: prov.get("recipe", {}).get(k) for k in PAPER_RECIPES[builder]}
    if recipe != PAPER_RECIPES[builder]:
        reasons.append(f"split recipe {recipe} differs from the paper's {PAPER_RECIPES[builder]}")
    return "; ".join(reasons)


def published_check(name: str, dataset: Dataset, local: bool) -> dict:
    """``revision_check`` (and ``revision: None`` when it fails) for published splits loaded as ``name``.

    Downloaded from the hub at the pinned revision: the revision stands. A local copy (a `path` in the config):
    its hub revision cannot be verified offline, so it counts as the paper's published splits only when its
    statistics equal the paper's Table 1 row of that dataset (unique texts, number of splits, smallest and
    largest split, fewest and most classes: :data:`tecb.data.sources.published.PAPER_TABLE1`); otherwise the revision
    is recorded as unverified (``None``, with ``revision_unverified_because``): not comparable to the paper, and
    MTEB result files get ``tecb-sha256:<content>`` as dataset revision.
    """
    if not local:
        return {"revision_check": "downloaded from the hub at this revision"}
    paper_source = PAPER_SOURCES.get(name, (None, None, None))[2]
    stats = published.statistics(dataset.texts, dataset.splits)
    if paper_source is None:
        why = f"a local test.jsonl, and {name} is none of the paper's published datasets to check it against"
    else:
        diffs = published.table1_differences(paper_source, stats)
        if not diffs:
            return {
                "revision_check": "local test.jsonl whose statistics equal the paper's Table 1 "
                f"({', '.join(f'{k} {v}' for k, v in stats.items())})"
            }
        why = f"the local test.jsonl does not match the paper's Table 1 statistics: {diffs}"
    return {"revision": None, "revision_check": f"unverified ({why})", "revision_unverified_because": why}


def mark_local_published(spec: dict, dataset: dict, sources: dict) -> dict:
    """A build's source spec (``{source: {...}}``, paths left out) with ``local: True`` added where the dataset
    is published splits read from the config's local ``path`` (see :func:`published_check`)."""
    name = dataset["source"]
    source = sources.get(name) or {}
    if builder_of(name, source, dataset) != "published" or not source.get("path"):
        return spec
    return {**spec, name: {**spec.get(name, {}), "local": True}}


def builder_of(source_name: str, source: dict | None, dataset: dict) -> str:
    """The builder of a dataset entry: its `builder`, else its source's `builder`, else the source's name."""
    name = dataset.get("builder") or (source or {}).get("builder") or source_name
    if name not in BUILDERS and name in published.PUBLISHED:
        return "published"
    return name


def build(source: str, path, variant: str | None, *, seed: int, **options) -> Dataset:
    """Build a dataset with the named builder (a key of :data:`BUILDERS`); ``options`` come from the config entry."""
    if source not in BUILDERS:
        raise ValueError(f"unknown dataset builder {source!r}; known: {', '.join(BUILDERS)}")
    allowed = OPTIONS.get(source, recipe_keys(source))
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"builder {source!r} does not take {', '.join(unknown)} (it takes: {', '.join(allowed) or 'nothing'})"
        )
    if variant is None and source not in OPTIONS:
        raise ValueError(f"builder {source!r} needs `text: s2s` or `text: p2p`")
    if source == "custom":
        options = custom_options(options)
    return BUILDERS[source](path, variant, seed=seed, **options)


def build_from_config(name: str, dataset: dict, sources: dict, path, *, seed: int) -> Dataset:
    """Build the config entry ``datasets.<name>`` (with ``sources``) from the raw file at ``path``."""
    source_name = dataset["source"]
    source = sources.get(source_name) or {}
    builder = builder_of(source_name, source, dataset)
    check_entry(name, dataset, builder)
    keys = OPTIONS.get(builder, recipe_keys(builder))
    options = {k: dataset[k] for k in keys if dataset.get(k) is not None}
    if builder != "10kgnad_csv" and not isinstance(path, (str, Path)) and len(path) == 1:
        path = path[0]
    built = build(builder, path, dataset.get("text"), seed=seed, **options)
    for i, (ids, labels) in enumerate(built.splits):
        if len(ids) < 2 or len(set(labels)) < 2:
            tag = built.split_names[i] if i < len(built.split_names) else str(i)
            raise ValueError(
                f"dataset {name}: split {i} ({tag}) has {len(ids)} items and {len(set(labels))} "
                "label(s); a clustering split needs at least two of each"
            )
    prov = {"dataset": name, "builder": builder, "source": source_name, **built.provenance}
    if builder == "published":
        default = published.PUBLISHED.get(source_name, (None, None))
        prov["repo_id"] = source.get("repo_id") or default[0]
        prov["revision"] = source.get("revision") or default[1]
        prov.update(published_check(name, built, local=bool(source.get("path") or source.get("local"))))
        built.notes.append(f"  revision: {prov['revision_check']}")
    elif builder == "custom":
        prov.update({k: options[k] for k in sorted(options)})
        if "split_column" not in options:
            prov["seed"] = seed
    else:
        recipe = {
            **(PAPER_RECIPES.get(builder) or {"n_splits": 10, "min_fraction": 0.1, "max_fraction": 1.0}),
            **{k: options[k] for k in recipe_keys(builder) if k in options},
        }
        prov.update(text=dataset.get("text"), rules="paper", seed=seed, recipe=recipe)
    schemes = label_schemes(built.splits, built.label_schemes)
    prov["label_schemes"] = sorted(set(schemes))
    if built.label_schemes is not None:  # declared by the builder: each split's, for readers (tecb.adapt.protocol)
        prov["split_label_schemes"] = list(built.label_schemes)
    if built.split_kinds:
        prov["split_kinds"] = list(built.split_kinds)
    prov["texts_with_conflicting_labels"] = len(label_conflicts(built.splits, schemes))
    prov["texts_with_conflicting_labels_in_a_split"] = len(split_label_conflicts(built.splits))
    why = paper_comparison(name, prov)
    prov["comparable_to_paper"] = not why
    prov["not_comparable_because"] = why
    prov["content_sha256"] = content_hash(built.texts, built.splits)
    built.provenance = prov
    return built


def content_hash(texts: list[str], splits) -> str:
    """SHA-256 of the dataset's content (texts, then each split's text ids and labels): its identity."""
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8") + b"\0")
    for i, (ids, labels) in enumerate(splits):
        digest.update(f"split {i}\n".encode())
        for t, label in zip(ids, labels):
            digest.update(f"{int(t)}\t".encode() + label.encode("utf-8") + b"\0")
    return digest.hexdigest()


def describe(dataset: Dataset, name: str, show_texts: bool = True, max_examples: int = 5) -> str:
    """A short log text: files read, sizes, labels per split, drop reasons, conflicting labels, provenance."""
    lines = [f"{name}: {dataset.n_items} items, {len(dataset.texts)} unique texts, {len(dataset.splits)} splits"]
    lines += dataset.notes
    for i, (ids, labels) in enumerate(dataset.splits):
        tag = dataset.split_names[i] if i < len(dataset.split_names) else str(i)
        lines.append(f"  split {i} ({tag}): {len(ids)} items, {len(set(labels))} labels")
    for reason, n in sorted(dataset.dropped.items()):
        if n:
            lines.append(f"  dropped ({reason}): {n}")
    prov = dataset.provenance
    show_texts = show_texts and prov.get("builder") != "reddit"  # raw Reddit text stays out of logs
    schemes = label_schemes(dataset.splits, dataset.label_schemes)
    conflicts = label_conflicts(dataset.splits, schemes)
    if conflicts:
        in_a_split = len(split_label_conflicts(dataset.splits))
        lines.append(
            f"  {len(conflicts)} texts have conflicting labels within the dataset (one text, two or more "
            f"labels among the splits of one label scheme: {', '.join(sorted(set(schemes)))}; "
            f"{in_a_split} of them inside one split). Kept: each item keeps its own label, as in the "
            "paper's published splits; examples:"
        )
        for tid, labels in list(conflicts.items())[:max_examples]:
            text = dataset.texts[tid]
            shown = (repr(text[:60] + ("..." if len(text) > 60 else "")) + " ") if show_texts else ""
            lines.append(f"    text_id {tid} {shown}labels {labels}")
    if prov.get("not_comparable_because"):
        lines.append(f"  not comparable to the paper: {prov['not_comparable_because']}")
    elif prov:
        lines.append("  comparable to the paper's dataset")
    return "\n".join(lines)


# --- declared memory (the build_dataset rule's mem_mb) ------------------------------------------------------------

#: MB a build_dataset job needs besides its data: Python, numpy and pyarrow (the smallest paper-scale job, 48,436
#: rows of 2.4 MB of text, peaked at 177 MB)
BUILD_BASE_MB = 200
#: bytes held per row of the raw file (its label, split and the Python objects of a row) and per byte of its text
#: (the file read, the rows' strings, the unique texts and the tables written): fitted on the paper-scale jobs (855
#: MB at 177,545 rows of 157 MB of text, 276 MB at 177,545 rows of 8.9 MB, 177 MB at 48,436 rows of 2.4 MB)
BUILD_ROW_BYTES, BUILD_TEXT_FACTOR = 600, 4
#: declared = BUILD_HEADROOM x estimate, the embed, cluster and reduce jobs' margin
BUILD_HEADROOM = 1.3


def source_size(path) -> tuple[int, int]:
    """``(rows, text bytes)`` of a raw source file: a Parquet file's rows and the UTF-8 bytes of its string columns
    (read column by column: its page sizes count a dictionary once), else its lines and its size (decompressed, for
    ``.gz``)."""
    import gzip

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = Path(path)
    if path.suffix == ".parquet":
        meta = pq.ParquetFile(path).schema_arrow
        strings = [f.name for f in meta if str(f.type) in ("string", "large_string")]
        size = 0
        for name in strings:
            size += int(pc.sum(pc.binary_length(pq.read_table(path, columns=[name]).column(name))).as_py() or 0)
        return pq.ParquetFile(path).metadata.num_rows, size
    rows = size = 0
    with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            rows, size = rows + block.count(b"\n"), size + len(block)
    return rows, size


def build_memory_mb(paths) -> int:
    """Memory to declare (Snakemake ``mem_mb``) for building a dataset from its raw file(s) ``paths``: BUILD_HEADROOM
    x (BUILD_BASE_MB + BUILD_ROW_BYTES x rows + BUILD_TEXT_FACTOR x text bytes, :func:`source_size`); a path that
    does not exist yet (a download) or a folder counts nothing (Snakemake evaluates again before the job runs)."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    rows = size = 0
    for path in paths:
        if Path(path).is_file():
            r, s = source_size(path)
            rows, size = rows + r, size + s
    return int(BUILD_HEADROOM * (BUILD_BASE_MB + -(-(BUILD_ROW_BYTES * rows + BUILD_TEXT_FACTOR * size) // 1_000_000)))
