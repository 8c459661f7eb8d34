"""Table 1's "Target" column says what each dataset's builder read: the 10kGNAD csv files hold no titles, so a
TenKGnad P2P built from them is not "news article titles + texts" (the paper's words for its own build)."""

from __future__ import annotations

from tecb.data import datasets
from tecb.report.tables import TABLE1_TARGETS, table1

STATS = {"unique_samples": 40, "splits": 10, "split_size_min": 4, "split_size_max": 40}
STATS |= {"classes_min": 2, "classes_max": 4, "avg_chars": 30}


def test_every_builder_target_names_a_builder_and_its_variants():
    assert set(datasets.TARGETS) <= set(datasets.BUILDERS)
    assert datasets.TARGETS["10kgnad_csv"] == {"p2p": "news article texts (lead + body, no titles)"}
    # the paper's own builds read as the paper's Table 1 says
    for name, (builder, text) in {
        "BlurbsClusteringS2S": ("germeval2019", "s2s"),
        "TenKGnadClusteringP2P": ("million_posts", "p2p"),
        "RedditClusteringS2S": ("reddit", "s2s"),
    }.items():
        assert datasets.target_text({"builder": builder, "text": text}) == TABLE1_TARGETS[name]


def test_a_tenkgnad_p2p_from_the_csv_files_says_it_has_no_titles(tmp_path):
    csv = tmp_path / "test.csv"
    labels = ["Sport", "Kultur", "Inland", "Etat"]
    csv.write_text("".join(f"{labels[i % 4]};'Text {i} über {labels[i % 4]} und mehr.'\n" for i in range(40)))
    built = datasets.build_from_config(
        "TenKGnadClusteringP2P",
        {"source": "10kgnad", "text": "p2p"},
        {"10kgnad": {"builder": "10kgnad_csv"}},
        [str(csv)],
        seed=42,
    )
    target = datasets.target_text(built.provenance)
    assert target == "news article texts (lead + body, no titles)"
    t1 = table1([{"dataset": "TenKGnadClusteringP2P", **STATS}], {"TenKGnadClusteringP2P": target})
    assert t1.loc["TenKGnadClusteringP2P", "target"] == target
    # without a builder's word (published splits, own files): the paper's words for its names, as before
    assert datasets.target_text({"builder": "published"}) is None
    t1 = table1([{"dataset": "TenKGnadClusteringP2P", **STATS}], {"TenKGnadClusteringP2P": None})
    assert t1.loc["TenKGnadClusteringP2P", "target"] == "news article titles + texts"
