"""Confusion view and c-TF-IDF top terms (issue 15.6, report part) on constructed clusters."""

import numpy as np
import pandas as pd
import pytest

from tecb.report import confusion as C


def test_ctfidf_matches_bertopic_formula_and_finds_the_distinctive_terms():
    docs = {0: ["Fußball Tor Tor", "Tor Spiel"], 1: ["Wahl Partei", "Partei Regierung Spiel"]}
    terms = C.ctfidf(docs, top_n=10, stop_words=())
    # by hand: counts per cluster; A = int(mean words per cluster) = int((5 + 5) / 2) = 5
    counts = {0: {"fußball": 1, "tor": 3, "spiel": 1}, 1: {"wahl": 1, "partei": 2, "regierung": 1, "spiel": 1}}
    f_t = {"fußball": 1, "tor": 3, "spiel": 2, "wahl": 1, "partei": 2, "regierung": 1}
    for c, cnt in counts.items():
        total = sum(cnt.values())
        expected = {t: n / total * np.log(1 + 5 / f_t[t]) for t, n in cnt.items()}
        got = dict(terms[c])
        assert got.keys() == expected.keys()
        for t in expected:
            assert got[t] == pytest.approx(expected[t])
    assert terms[0][0][0] == "tor" and terms[1][0][0] == "partei"
    # "spiel" occurs in both clusters: lower weight than an equally frequent term unique to one
    assert dict(terms[1])["spiel"] < dict(terms[1])["wahl"]


def test_ctfidf_stop_words_numbers_and_empty():
    terms = C.ctfidf({0: ["und der 2023 Haus"], 1: ["die das Auto 12"]})
    assert [t for t, _ in terms[0]] == ["haus"] and [t for t, _ in terms[1]] == ["auto"]
    assert C.ctfidf({0: ["und"], 1: ["der"]}) == {0: [], 1: []}


def test_confusion_orders_clusters_and_labels_by_size():
    table = C.confusion(["a", "a", "b", "b", "b", "c"], [1, 1, 0, 0, 1, 2])
    # by hand: cluster 1 = {a, a, b} (3 texts), cluster 0 = {b, b} (2), cluster 2 = {c} (1); labels b (3), a (2), c (1)
    assert list(table.index) == [1, 0, 2] and list(table.columns) == ["b", "a", "c"]
    assert table.to_numpy().tolist() == [[1, 2, 0], [2, 0, 0], [0, 0, 1]]
    # ties: equal sizes in cluster-id and label order, not in the order they first occur
    table = C.confusion(["z", "y", "z", "y", "x", "x"], [5, 5, 3, 3, 9, 9])
    # clusters 3, 5, 9 and labels x, y, z have two texts each; 3 = {z, y}, 5 = {z, y}, 9 = {x, x}
    assert list(table.index) == [3, 5, 9] and list(table.columns) == ["x", "y", "z"]
    assert table.to_numpy().tolist() == [[0, 1, 1], [0, 1, 1], [2, 0, 0]]


def _dataset():
    texts = pd.DataFrame(
        {
            "text_id": np.arange(8, dtype=np.int32),
            "text": [
                "Bundesliga Tor Sieg",
                "Tor Elfmeter Bundesliga",
                "Trainer Tor",
                "Wahl Koalition",
                "Koalition Kanzler",
                "Wahl Parlament",
                "Rezept Kuchen",
                "Kuchen backen",
            ],
        }
    )
    rows = {"split": [0] * 4 + [1] * 8, "text_id": [0, 3, 6, 7] + list(range(8))}  # split 0: four texts; 1: all
    label = ["Sport", "Politik", "Essen", "Essen"] + ["Sport"] * 3 + ["Politik"] * 3 + ["Essen"] * 2
    splits = pd.DataFrame({**rows, "label": label})
    labels = pd.DataFrame({**rows, "cluster": np.array([0, 1, 2, 2, 5, 5, 5, 3, 3, 3, 7, 7], dtype=np.int32)})
    return texts, splits, labels


def test_cluster_view_on_a_labels_file(tmp_path):
    texts, splits, labels = _dataset()
    for name, df in (("texts", texts), ("splits", splits), ("labels", labels)):
        df.to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "view.html"
    inputs = [tmp_path / f"{name}.parquet" for name in ("texts", "splits", "labels")]
    C.write_view(*inputs, out, title="tfidf / Demo", log=lambda m: None)
    html = out.read_text()
    assert "Split 1: 8 texts" in html and "V-measure 1.0000" in html  # the largest split, a perfect clustering
    assert "tor" in html and "koalition" in html and "kuchen" in html
    view = C.cluster_view(texts, splits, labels)
    assert view["split"] == 1 and list(view["confusion"].index) == [3, 5, 7]  # ties: by id
    assert view["terms"][5][0][0] == "tor" and view["terms"][7][0][0] == "kuchen"
    assert C.cluster_view(texts, splits, labels, split=0)["split"] == 0
    with pytest.raises(ValueError, match="no split 9"):
        C.cluster_view(texts, splits, labels, split=9)
    with pytest.raises(ValueError, match="do not match"):
        C.cluster_view(texts, splits, labels[labels.text_id != 2])
    # a text twice in a split (duplicates): rows are aligned by position
    dup_splits = pd.concat([splits, splits.iloc[[4]]], ignore_index=True)
    dup_labels = pd.concat([labels, labels.iloc[[4]]], ignore_index=True)
    assert C.cluster_view(texts, dup_splits, dup_labels)["confusion"].values.sum() == 9
    first = out.read_bytes()
    C.write_view(*inputs, out, title="tfidf / Demo", log=lambda m: None)
    assert out.read_bytes() == first
    # scoring.restarts > 1: the labels file holds every state's rows; the view is state 0's (the seed's run)
    shuffled = labels.assign(cluster=labels.cluster.to_numpy()[::-1])
    states = pd.concat([labels.assign(state=0), shuffled.assign(state=1)], ignore_index=True)
    again = C.cluster_view(texts, splits, states.astype({"state": np.int16}))
    assert again["scores"] == view["scores"] and again["confusion"].equals(view["confusion"])


def test_noise_cluster_is_named():
    texts, splits, labels = _dataset()
    labels.loc[labels.cluster == 7, "cluster"] = -1
    html = C.render(C.cluster_view(texts, splits, labels), "x")
    assert "<th>noise</th>" in html


def test_truncation_table_from_embedding_metadata(tmp_path):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tecb.report.extras import truncation_table

    paths = {}
    for model, meta in (("bert", {"truncated_fraction": 0.125, "token_coverage": 0.9}), ("tfidf", {})):
        for d in ("TenKGnadClusteringP2P", "BlurbsClusteringS2S"):
            t = pa.table({"text_id": pa.array([0], pa.int32())}).replace_schema_metadata({"tecb": json.dumps(meta)})
            paths[(model, d)] = tmp_path / f"{model}_{d}.parquet"
            pq.write_table(t, paths[(model, d)])
    table = truncation_table(paths, {"bert": "BERT", "tfidf": "TF-IDF"})
    assert list(table.columns) == ["BlurbsClusteringS2S", "TenKGnadClusteringP2P"]
    assert table.at["BERT", "TenKGnadClusteringP2P"] == "12.5% (90.0%)"
    assert table.at["TF-IDF", "BlurbsClusteringS2S"] == "n/a"
