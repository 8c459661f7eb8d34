"""German-like datasets in the shape of the paper's Table 1, for a dress rehearsal of the paper's CPU side.

The demo's generator (:mod:`tecb.data.demo`: its vocabularies, title and sentence templates) writes one
custom-format Parquet file per dataset (columns ``text``, ``label``, ``split``; a text is one row per split it is
in) with the paper's numbers (``reference/paper_table1.csv``): unique samples, split count, smallest and largest
split, fewest and most classes; text lengths near the published average characters. The split sizes between
the smallest and the largest are those ``benchmarks/paper_run_projection.py`` projects (:func:`split_plan`), so a
run of these files can be set against that projection job by job. These are *custom* datasets: nothing built
from them counts as the paper's data (``tecb.data.datasets.paper_comparison``).

    python -m tecb.data.paper_scale resources/paper-scale      # six .parquet files, seed 42
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from tecb.data import demo
from tecb.data.datasets import PAPER_SOURCES
from tecb.io import atomic_path

DATASETS = tuple(PAPER_SOURCES)  # the paper's six, in its order
TABLE1 = Path(__file__).resolve().parents[3] / "reference" / "paper_table1.csv"
# Blurbs' eight one-genre splits partition the largest split (as benchmarks/paper_run_projection.py)
GENRE_SHARES = (0.47, 0.17, 0.13, 0.09, 0.06, 0.04, 0.03, 0.0108)
SYLLABLES = (
    "ber gen wal dor hau sen lin feld burg stein mark bach horn tal kir wei land rich mer sto fen "
    "hof grün alt neu kla ro sa li mo ta ne ka ri lo"
).split()


def table1(path: str | Path = TABLE1) -> dict[str, dict]:
    """The paper's Table 1 rows by dataset, numbers as ints."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = {r["dataset"]: r for r in csv.DictReader(f)}
    return {name: {k: (v if k in ("dataset", "target") else int(v)) for k, v in r.items()} for name, r in rows.items()}


def split_plan(row: dict, *, seed: int = 42) -> list[tuple[int, int, str]]:
    """``(size, classes, kind)`` per split of a Table 1 ``row``: the projection's split sizes (its
    ``paper_split_sizes``), the largest and smallest set to the table's; kind ``fine`` (every class),
    ``coarse`` (Blurbs' genre level) or ``genre`` (one Blurbs genre, its fine classes)."""
    rng = np.random.default_rng(seed)
    name, n_max, n_min = row["dataset"], row["split_size_max"], row["split_size_min"]
    c_min, c_max = row["classes_min"], row["classes_max"]
    if name.startswith("Blurbs"):
        shares = np.array(GENRE_SHARES)
        genre = np.maximum(n_min, np.round(shares / shares.sum() * n_max)).astype(int)
        fractions = rng.uniform(0.1, 1.0, 20)
        target = 9.85 * row["unique_samples"] - genre.sum()
        rand = np.minimum(n_max, np.round(fractions * n_max * target / (fractions * n_max).sum())).astype(int)
        rand[np.argmax(rand)] = n_max
        fine = _genre_classes(c_max, c_min)
        plan = [
            (int(s), c_max if i % 2 == 0 else len(GENRE_SHARES), "fine" if i % 2 == 0 else "coarse")
            for i, s in enumerate(rand)
        ]
        plan += [(int(s), int(c), f"genre {g}") for g, (s, c) in enumerate(zip(genre, fine))]
        return plan
    if name.startswith("TenKGnad"):
        rng.uniform(0.1, 1.0, 20)  # the projection draws Blurbs' fractions first
        fractions = rng.uniform(0.1, 1.0, 10)
        n = row["unique_samples"]
        sizes = np.clip(np.round(fractions * n * 4.47 * n / (fractions * n).sum()), n_min, n_max).astype(int)
        sizes[np.argmax(sizes)], sizes[np.argmin(sizes)] = n_max, n_min
        return [(int(s), c_max, "fine") for s in sizes]
    sizes = np.round(np.linspace(n_max, n_min, row["splits"])).astype(int)
    classes = np.round(np.linspace(c_max, c_min, row["splits"])).astype(int)
    return [(int(s), int(c), "fine") for s, c in zip(sizes, classes)]


def _genre_classes(total: int, smallest: int) -> list[int]:
    """Fine classes per Blurbs genre: ``total`` spread by the genre shares, none under ``smallest``."""
    shares = np.array(GENRE_SHARES)
    counts = np.maximum(smallest, np.floor(shares / shares.sum() * total)).astype(int)
    counts[0] += total - counts.sum()
    return counts.tolist()


def _word(rng) -> str:
    return "".join(rng.choice(SYLLABLES, int(rng.integers(2, 4)))).capitalize()


def _vocabulary(rng, n_labels: int) -> list[tuple[list[str], list[str]]]:
    """Per label: phrases (some of the demo's, some made-up compounds) and sentences of its own."""
    specs = [s for genres in demo.BLURB_GENRES.values() for s in genres.values()]
    specs += list(demo.NEWS_TOPICS.values()) + list(demo.SUBREDDITS.values())
    pool_words = [w for s in specs for w in demo._phrases(s)[0]]
    pool_own = [o for s in specs for o in demo._phrases(s)[1]]
    out = []
    for k in range(n_labels):
        words, own = demo._phrases(specs[k % len(specs)])
        made = [f"{('der', 'die', 'das')[int(rng.integers(3))]} {_word(rng)}" for _ in range(12)]
        extra = list(rng.choice(pool_words, 6, replace=False))
        out.append((list(words) + made + extra, list(own) + list(rng.choice(pool_own, 2, replace=False))))
    return out


def _texts(rng, vocab, labels: np.ndarray, avg_chars: int, p2p: bool) -> list[str]:
    """One unique text per entry of ``labels``: a title (S2S), or a title and a paragraph (P2P), about
    ``avg_chars`` characters on average."""
    seen, out = set(), []
    for label in labels:
        words, own = vocab[label]
        for attempt in range(1000):
            if not p2p:  # a phrase, lengthened by more phrases up to about its drawn length
                title, goal = demo._cap(rng.choice(words)), avg_chars * rng.uniform(0.5, 1.3) - 6
                if len(title) > goal + 8:  # short titles drop the article
                    title = demo._cap(title.split(" ", 1)[-1])
                while len(title) < goal:
                    title += f" {rng.choice(('und', 'mit', 'über', 'gegen', 'nach'))} {rng.choice(words)}"
                text = title if attempt < 20 else f"{title} {attempt}"
            else:
                title = demo._title(rng, words)
                n = max(1, int(round(rng.uniform(0.5, 1.5) * avg_chars / 48)))
                text = f"{title} {demo._paragraph(rng, words, own, n)}"
            if text not in seen:
                break
        seen.add(text)
        out.append(text)
    return out


def _label_sizes(n_texts: int, n_labels: int, plan, rng) -> np.ndarray:
    """Texts per label, skewed (Zipf 0.6) so that the ``c`` largest labels hold every ``c``-class split."""
    w = (np.arange(1, n_labels + 1) ** -0.6)[rng.permutation(n_labels)]
    sizes = np.maximum(1, np.floor(w / w.sum() * n_texts)).astype(int)
    sizes[np.argmax(sizes)] += n_texts - sizes.sum()
    return sizes


def build(row: dict, *, seed: int) -> dict[str, list]:
    """Rows ``{"text", "label", "split"}`` of one dataset in the shape of Table 1 ``row``."""
    rng = np.random.default_rng([seed, DATASETS.index(row["dataset"])])
    plan = split_plan(row, seed=seed)
    n_texts, n_labels = row["unique_samples"], row["classes_max"]
    p2p = row["dataset"].endswith("P2P")
    genres = None
    if row["dataset"].startswith("Blurbs"):  # fine labels by genre; texts per genre follow the genre splits
        fine = _genre_classes(n_labels, row["classes_min"])
        genres = np.repeat(np.arange(len(fine)), fine)
        genre_sizes = [s for s, _, kind in plan if kind.startswith("genre")]
        per_genre = np.round(np.array(genre_sizes) / sum(genre_sizes) * n_texts).astype(int)
        per_genre[0] += n_texts - per_genre.sum()
        label_sizes = np.concatenate(
            [np.full(c, n // c) + (np.arange(c) < n % c) for n, c in zip(per_genre, fine)]
        ).astype(int)
    else:
        label_sizes = _label_sizes(n_texts, n_labels, plan, rng)
    labels = np.repeat(np.arange(n_labels), label_sizes)
    rng.shuffle(labels)
    vocab = _vocabulary(rng, n_labels)
    texts = _texts(rng, vocab, labels, row["avg_chars"], p2p)
    by_label = [np.flatnonzero(labels == k) for k in range(n_labels)]
    covered = np.zeros(n_texts, bool)
    rows = {"text": [], "label": [], "split": []}
    # the largest splits first, so that the texts no split has drawn yet go into the next
    for i in sorted(range(len(plan)), key=lambda j: -plan[j][0]):
        size, classes, kind = plan[i]
        chosen = _choose_labels(kind, classes, size, label_sizes, genres, rng)
        members = _draw(chosen, size, by_label, covered, rng)
        covered[members] = True
        name = [f"genre {genres[k]}" for k in range(n_labels)] if kind == "coarse" else None
        for m in sorted(members):
            rows["text"].append(texts[m])
            rows["label"].append(name[labels[m]] if name else f"label {labels[m]}")
            rows["split"].append(f"{i:02d}")
    if not covered.all():
        raise ValueError(f"{row['dataset']}: {int((~covered).sum())} texts in no split")
    return rows


def _choose_labels(kind, classes, size, label_sizes, genres, rng) -> np.ndarray:
    if kind.startswith("genre"):
        return np.flatnonzero(genres == int(kind.split()[1]))
    if kind == "coarse" or classes == len(label_sizes):
        return np.arange(len(label_sizes))
    for _ in range(100):  # a random set of labels that holds the split, else the largest ones
        chosen = rng.choice(len(label_sizes), classes, replace=False)
        if label_sizes[chosen].sum() >= size:
            return np.sort(chosen)
    return np.sort(np.argsort(-label_sizes, kind="stable")[:classes])


def _draw(chosen, size, by_label, covered, rng) -> np.ndarray:
    """``size`` texts of the ``chosen`` labels: one of each label first, then texts no split has yet, then any."""
    pool = np.concatenate([by_label[k] for k in chosen])
    if len(pool) < size:
        raise ValueError(f"labels {chosen.tolist()} hold {len(pool)} texts, the split needs {size}")
    first = np.array([rng.choice(by_label[k]) for k in chosen])
    rest = np.setdiff1d(pool, first)
    rest = rng.permutation(rest)
    rest = np.concatenate([rest[~covered[rest]], rest[covered[rest]]])
    return np.concatenate([first, rest[: size - len(first)]])


def statistics(rows: dict[str, list]) -> dict:
    """Table 1's numbers of the rows written (unique texts, splits, sizes, classes, average characters)."""
    texts = set(rows["text"])
    sizes = Counter(rows["split"])
    classes = {s: set() for s in sizes}
    for label, split in zip(rows["label"], rows["split"]):
        classes[split].add(label)
    return {
        "unique_samples": len(texts),
        "splits": len(sizes),
        "split_size_min": min(sizes.values()),
        "split_size_max": max(sizes.values()),
        "classes_min": min(map(len, classes.values())),
        "classes_max": max(map(len, classes.values())),
        "avg_chars": round(sum(map(len, texts)) / len(texts)),
        "items": sum(sizes.values()),
    }


def write_all(outdir: str | Path, *, seed: int, datasets=DATASETS) -> dict[str, Path]:
    """Write ``{dataset}.parquet`` for each of ``datasets`` into ``outdir``; return their paths."""
    import pyarrow.parquet as pq

    outdir, table = Path(outdir), table1()
    paths = {}
    for name in datasets:
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table(build(table[name], seed=seed)), sink)
        data, paths[name] = sink.getvalue().to_pybytes(), outdir / f"{name}.parquet"
        if not paths[name].exists() or paths[name].read_bytes() != data:  # the same bytes: left as they are,
            with atomic_path(paths[name]) as tmp:  # so that a second `make paper-scale` reruns nothing
                Path(tmp).write_bytes(data)
    return paths


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "resources/paper-scale")
    for name, path in write_all(out, seed=42).items():
        print(name, path)
