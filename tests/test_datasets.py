"""Split recipes and builders: counts, label sets, fraction ranges, determinism, S2S/P2P sharing splits."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from helpers import GNAD_CATEGORIES

from tecb.data import datasets, splits
from tecb.data import demo as demo_data


def _blurbs_zip(path, n_coarse=8, n_fine=3, per_fine=6, same_titles=0):
    """A GermEval-format zip with ``n_coarse`` d=0 genres of ``n_fine`` d=1 genres each (like the real 8); the
    last ``same_titles`` books take the titles of the first ones (another genre, another blurb)."""
    records, i, n = [], 0, n_coarse * n_fine * per_fine
    for c in range(n_coarse):
        for f in range(n_fine):
            for _k in range(per_fine):
                cats = [[(0, f"Genre {c} & Co"), (1, f"Fein {c}.{f}")]]
                title = f"Buch {i - (n - same_titles) if i >= n - same_titles else i}"
                records.append(demo_data._book_xml(title, f"Klappentext {i} &amp; mehr", cats, i))
                i += 1
    third = len(records) // 3
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("d/blurbs_train.txt", "".join(records[:third]))
        zf.writestr("d/blurbs_dev.txt", "".join(records[third : 2 * third]))
        zf.writestr("d/blurbs_test.txt", "".join(records[2 * third :]))
    return path, len(records)


def test_blurbs_28_splits_coarse_fine_within(tmp_path):
    path, n = _blurbs_zip(tmp_path / "g.zip")
    ds = datasets.build_blurbs(path, "s2s", seed=42)
    assert len(ds.splits) == 28 and ds.n_items == n
    coarse, fine, within = ds.splits[:10], ds.splits[10:20], ds.splits[20:]
    coarse_labels = {f"Genre {c} & Co" for c in range(8)}
    for ids, labels in coarse:
        assert set(labels) <= coarse_labels and 0.1 * n - 1 <= len(ids) <= n and len(set(ids)) == len(ids)
    for _ids, labels in fine:
        assert all(label.startswith("Fein ") for label in labels)
    assert len(within) == 8
    for c, (ids, labels) in enumerate(within):
        assert ds.split_names[20 + c] == f"within Genre {c} & Co"
        assert set(labels) == {f"Fein {c}.{f}" for f in range(3)} and len(ids) == 18
        assert all(ds.texts[t].startswith("Buch ") for t in ids)
    assert len({len(ids) for ids, _ in coarse}) > 1  # random fractions, not a fixed size


def test_blurbs_deterministic_and_s2s_p2p_share_splits(tmp_path):
    path, _ = _blurbs_zip(tmp_path / "g.zip")
    a, b = datasets.build_blurbs(path, "s2s", seed=42), datasets.build_blurbs(path, "s2s", seed=42)
    p2p = datasets.build_blurbs(path, "p2p", seed=42)
    assert a.splits == b.splits and a.texts == b.texts
    assert [labels for _, labels in a.splits] == [labels for _, labels in p2p.splits]
    assert [[a.texts[i] for i in ids] for ids, _ in a.splits] == [
        [p2p.texts[i].split("\n")[0] for i in ids] for ids, _ in p2p.splits
    ]
    assert p2p.texts[0] == "Buch 0\nKlappentext 0 & mehr" or "\n" in p2p.texts[0]
    assert datasets.build_blurbs(path, "s2s", seed=7).splits != a.splits


def test_random_fraction_splits_range():
    rng = np.random.default_rng(42)
    out = splits.random_fraction_splits(1000, 200, rng, 0.1, 1.0)
    sizes = [len(s) for s in out]
    assert min(sizes) >= 100 and max(sizes) <= 1000 and all(len(set(s)) == len(s) for s in out)
    with pytest.raises(ValueError, match="min_fraction <= max_fraction"):
        splits.random_fraction_splits(10, 1, rng, 0.5, 0.2)


def test_tenkgnad_10_splits_9_categories(tmp_path):
    path = demo_data.write_million_posts_sqlite(tmp_path / "corpus.sqlite3", articles_per_topic=10, seed=42)
    s2s, p2p = datasets.build_tenkgnad(path, "s2s", seed=42), datasets.build_tenkgnad(path, "p2p", seed=42)
    assert len(s2s.splits) == 10 == len(p2p.splits)
    assert {label for _, labels in s2s.splits for label in labels} == GNAD_CATEGORIES
    for ids, _labels in s2s.splits:
        assert 0.1 * s2s.n_items - 1 <= len(ids) <= s2s.n_items


def test_build_from_config_checks_variants_and_options(tmp_path):
    path, _ = _blurbs_zip(tmp_path / "g.zip")
    with pytest.raises(ValueError, match="needs `text: s2s`"):
        datasets.build_from_config("B", {"source": "germeval2019"}, {}, path, seed=42)
    with pytest.raises(ValueError, match="does not take text_column"):
        datasets.build("germeval2019", path, "s2s", text_column="x", seed=42)
    with pytest.raises(ValueError, match="no titles"):
        datasets.build_from_config("T", {"source": "10kgnad_csv", "text": "s2s"}, {}, path, seed=42)
    ds = datasets.build_from_config("B", {"source": "germeval2019", "text": "s2s", "n_splits": 2}, {}, path, seed=42)
    assert len(ds.splits) == 2 + 2 + 8


def test_within_genre_split_skipped_for_one_fine_genre_is_logged(tmp_path):
    path, _ = _blurbs_zip(tmp_path / "g.zip", n_coarse=3, n_fine=1)
    ds = datasets.build_blurbs(path, "s2s", n_splits=1, seed=42)
    assert len(ds.splits) == 2  # no within-genre splits: each coarse genre has one fine genre
    assert "no within-genre split for Genre 0 & Co" in datasets.describe(ds, "B")


# --- identical texts with different labels (issue 12 item 3) -------------------------------------------------


def test_blurbs_label_levels_are_no_conflict_but_same_titles_across_splits_are(tmp_path):
    """A book is labelled by its d=0 genre in the coarse splits and by its d=1 genre in the others: two label
    schemes, no conflict. Two books with one title (S2S: one text) in different genres conflict in both."""
    path, _ = _blurbs_zip(tmp_path / "g.zip")
    entry = {"source": "germeval2019", "text": "s2s"}
    clean = datasets.build_from_config("BlurbsClusteringS2S", entry, {}, str(path), seed=42)
    assert clean.provenance["texts_with_conflicting_labels"] == 0
    assert clean.provenance["label_schemes"] == ["d=0 genre", "d=1 genre"]
    path, _ = _blurbs_zip(tmp_path / "dup.zip", same_titles=2)
    ds = datasets.build_from_config("BlurbsClusteringS2S", entry, {}, str(path), seed=42)
    conflicts = datasets.label_conflicts(ds.splits, ds.label_schemes)
    assert [ds.texts[t] for t in conflicts] == ["Buch 0", "Buch 1"]
    assert conflicts[ds.texts.index("Buch 0")] == ["Fein 0.0", "Fein 7.2", "Genre 0 & Co", "Genre 7 & Co"]
    assert ds.provenance["texts_with_conflicting_labels"] == 2
    within = ds.provenance["texts_with_conflicting_labels_in_a_split"]
    assert 0 < within <= 2 and len(datasets.split_label_conflicts(ds.splits)) == within
    log = datasets.describe(ds, "BlurbsClusteringS2S")
    assert "2 texts have conflicting labels within the dataset" in log and "d=0 genre, d=1 genre" in log
    assert "'Buch 0' labels ['Fein 0.0', 'Fein 7.2', 'Genre 0 & Co', 'Genre 7 & Co']" in log
    p2p = datasets.build_from_config("BlurbsClusteringP2P", {**entry, "text": "p2p"}, {}, str(path), seed=42)
    assert p2p.provenance["texts_with_conflicting_labels"] == 0  # other blurbs: other texts


def test_conflicts_across_splits_of_one_scheme_only():
    splits = [
        ([0, 1, 2], ["a", "b", "a"]),  # text 0: a
        ([0, 3, 4], ["b", "a", "b"]),  # text 0: b in another split with the same labels: a conflict
        ([0, 5], ["x", "y"]),
    ]  # labels shared with no other split: its own scheme, no conflict
    assert datasets.label_schemes(splits) == ["labels of split 0"] * 2 + ["labels of split 2"]
    assert datasets.label_conflicts(splits) == {0: ["a", "b"]}
    assert datasets.split_label_conflicts(splits) == {}
    assert datasets.label_conflicts(splits, ["s"] * 3) == {0: ["a", "b", "x"]}  # declared: one scheme
    chain = [([0, 1], ["a", "b"]), ([2, 3], ["c", "d"]), ([0, 4], ["b", "c"])]  # split 2 links 0 and 1
    assert datasets.label_schemes(chain) == ["labels of split 0"] * 3
    with pytest.raises(ValueError, match="2 label schemes declared for 3 splits"):
        datasets.label_schemes(splits, ["a", "b"])


def test_reddit_conflicts_are_counted_across_splits_and_logged_by_text_id_only(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tecb.data.sources.reddit import SUBMISSIONS_SCHEMA

    subs = [f"sub{k}" for k in range(4)]
    rows = [
        {"id": f"p{k}_{j}", "subreddit": sub, "title": f"Titel {sub} {j}", "selftext": "", "created_utc": 0.0}
        for k, sub in enumerate(subs)
        for j in range(5)
    ]
    rows += [
        {"id": f"x{k}", "subreddit": sub, "title": "Geheime Frage", "selftext": "", "created_utc": 0.0}
        for k, sub in enumerate(subs[:2])
    ]  # one title in two subreddits
    path = tmp_path / "submissions.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SUBMISSIONS_SCHEMA), path)
    entry = {"source": "reddit", "text": "s2s", "n_splits": 3, "min_subreddits": 2, "max_subreddits": 4}
    ds = datasets.build_from_config("RedditClusteringS2S", entry, {}, str(path), seed=42)
    tid = ds.texts.index("Geheime Frage")
    in_splits = {lab for ids, labels in ds.splits for i, lab in zip(ids, labels) if i == tid}
    assert ds.label_schemes == ["subreddit"] * 3
    assert ds.provenance["texts_with_conflicting_labels"] == (1 if len(in_splits) > 1 else 0)
    assert len(in_splits) > 1  # the seed draws both subreddits (into one split or two)
    log = datasets.describe(ds, "RedditClusteringS2S")
    assert f"text_id {tid} labels ['sub0', 'sub1']" in log and "Geheime" not in log
