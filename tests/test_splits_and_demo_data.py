import numpy as np

from tecb.data import datasets, splits
from tecb.data import demo as demo_data


def test_random_fraction_splits_sizes_and_determinism():
    a = splits.random_fraction_splits(200, 10, np.random.default_rng(42))
    b = splits.random_fraction_splits(200, 10, np.random.default_rng(42))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    for idx in a:
        assert 20 <= len(idx) <= 200 and len(set(idx.tolist())) == len(idx)


def test_group_draw_splits_take_all_items_of_drawn_groups():
    groups = [f"g{i % 12}" for i in range(240)]
    for idx in splits.group_draw_splits(groups, 10, np.random.default_rng(1), 4, 8):
        drawn = {groups[i] for i in idx}
        assert 4 <= len(drawn) <= 8
        assert len(idx) == sum(g in drawn for g in groups)


def test_demo_data_is_deterministic_and_in_the_real_formats(tmp_path):
    first = demo_data.write_all(tmp_path / "a", seed=42)
    second = demo_data.write_all(tmp_path / "b", seed=42)
    for key in first:
        if key != "million_posts":  # sqlite files embed no randomness but page layout may differ: compare content
            assert first[key].read_bytes() == second[key].read_bytes(), key
    import zipfile

    with zipfile.ZipFile(first["germeval2019"]) as zf:
        names = {n.split("/")[-1] for n in zf.namelist()}
        text = zf.read([n for n in zf.namelist() if n.endswith("blurbs_train.txt")][0]).decode()
    assert {"blurbs_train.txt", "blurbs_dev.txt", "blurbs_test.txt", "hierarchy.txt"} <= names
    assert "<root" not in text and "Literatur & Unterhaltung" in text and "&quot;" in text and "\u00ad" in text


def test_demo_datasets_build_with_the_paper_rules(tmp_path):
    paths = demo_data.write_all(tmp_path, seed=42)
    blurbs = datasets.build("germeval2019", paths["germeval2019"], "p2p", seed=42)
    assert sum(blurbs.dropped.values()) == 3  # the three records the selection rules must drop
    assert len(blurbs.splits) == 20 + len(demo_data.BLURB_GENRES)
    news = datasets.build("million_posts", paths["million_posts"], "s2s", seed=42)
    assert {label for _, labels in news.splits for label in labels} == set(demo_data.NEWS_TOPICS)
