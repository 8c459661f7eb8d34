"""The training methods' leak-free protocol (tecb.adapt.protocol): no evaluated text or label reaches training."""

from __future__ import annotations

import sqlite3

import pytest

from tecb.adapt import protocol as proto
from tecb.adapt.jobs import Job, build_plan
from tecb.data import demo
from tecb.data.datasets import build
from tecb.data.sources.gnad import read_posts

PROTOCOL = {
    "instance_size": 20,
    "rounds": 2,
    "min_categories": 4,
    "argue_objectives": ["order", "reply"],
    "order_min_words": 4,
    "max_order_pairs": None,
    "max_reply_pairs": None,
    "max_similarity_pairs": None,
}


def plan_for(method, variant, evaluated, posts, others=(), instance_size=PROTOCOL["instance_size"]):
    """:func:`build_plan` with what every plan of these tests shares: the protocol above, training and split
    seed 42."""
    job = Job(method, variant, evaluated.name, 42, {"instance_size": instance_size}, PROTOCOL)
    return build_plan(job, evaluated=evaluated, others=list(others), posts=posts, split_seed=42)


def labelled(name, source, built) -> proto.LabelledData:
    splits = tuple((i, tuple(int(t) for t in ids), tuple(labels)) for i, (ids, labels) in enumerate(built.splits))
    schemes = tuple(built.label_schemes) if built.label_schemes is not None else None
    return proto.LabelledData(name, source, tuple(built.texts), splits, schemes)


def test_label_schemes_are_the_declared_ones_read_from_the_files(tmp_path):
    """A coarse and a fine split sharing a label string: declared, they stay two schemes (instances never mix
    them); only without a declaration are they inferred as one. The files carry the declaration."""
    from tecb import io

    texts = [f"buch {i}" for i in range(8)]
    splits = [(list(range(8)), ["Krimi", "Krimi", "Roman", "Roman"] * 2), (list(range(8)), ["Krimi", "Thriller"] * 4)]
    io.write_dataset(texts, splits, tmp_path / "t.parquet", tmp_path / "s.parquet", "B",
                     provenance={"split_label_schemes": ["coarse", "fine"]})  # fmt: skip
    declared = proto.read_labelled("B", "src", tmp_path / "t.parquet", tmp_path / "s.parquet")
    assert declared.schemes == ("coarse", "fine") and declared.label_schemes() == ["coarse", "fine"]
    assert sorted(proto.scheme_items(declared)) == ["coarse", "fine"]
    assert len(proto.scheme_items(declared)["fine"]) == 8  # "buch 0" is Krimi in both schemes: not ambiguous
    io.write_dataset(texts, splits, tmp_path / "t2.parquet", tmp_path / "s2.parquet", "B", provenance={})
    inferred = proto.read_labelled("B", "src", tmp_path / "t2.parquet", tmp_path / "s2.parquet")
    assert inferred.schemes is None and list(proto.scheme_items(inferred)) == ["labels of split 0"]
    # inferred as one scheme, a text with two labels is ambiguous and left out: only books 0 and 4 (Krimi twice)
    assert proto.scheme_items(inferred)["labels of split 0"] == [("buch 0", "Krimi"), ("buch 4", "Krimi")]


def test_builders_declare_label_schemes_in_the_provenance(demo_datasets):
    data, _ = demo_datasets
    assert set(data["BlurbsClusteringS2S"].schemes) == {"d=0 genre", "d=1 genre"}
    assert set(data["TenKGnadClusteringS2S"].schemes) == {"category"}


@pytest.fixture(scope="module")
def demo_datasets(tmp_path_factory):
    """Five demo datasets built from the demo's raw files with the paper's rules, and the forum posts."""
    paths = demo.write_all(tmp_path_factory.mktemp("raw"), seed=42)
    specs = {
        "BlurbsClusteringS2S": ("germeval2019", "s2s", {}),
        "BlurbsClusteringP2P": ("germeval2019", "p2p", {}),
        "TenKGnadClusteringS2S": ("million_posts", "s2s", {}),
        "TenKGnadClusteringP2P": ("million_posts", "p2p", {}),
        "RedditClusteringP2P": ("reddit", "p2p", {"min_subreddits": 4, "max_subreddits": 8}),
    }
    data = {
        name: labelled(name, source, build(source, paths[source], text, seed=42, **options))
        for name, (source, text, options) in specs.items()
    }
    return data, read_posts(paths["million_posts"])


def evaluated_texts_and_labels(plan):
    texts = {plan.eval_texts[i] for _, ids, _ in plan.eval_splits for i in ids}
    labels = {label for _, _, labels in plan.eval_splits for label in labels}
    return texts, labels


@pytest.mark.parametrize("variant", ["lodo", "disjoint"])
@pytest.mark.parametrize("method", ["cob", "triplet"])
def test_supervised_training_never_sees_an_evaluated_text_or_label(demo_datasets, method, variant):
    data, posts = demo_datasets
    built = 0
    for name, evaluated in data.items():
        others = [d for n, d in data.items() if n != name]
        plan = plan_for(method, variant, evaluated, posts, others=others)
        assert not isinstance(plan, str), plan
        built += 1
        eval_texts, eval_labels = evaluated_texts_and_labels(plan)
        train_texts = {t for texts, _ in plan.training.instances for t in texts}
        train_labels = {label for _, labels in plan.training.instances for label in labels}
        assert plan.training.instances and not plan.training.texts and not plan.training.pairs
        assert not train_texts & eval_texts
        assert not {x.casefold() for x in train_labels} & {x.casefold() for x in eval_labels}
        if variant == "disjoint":
            # ... and nothing of the evaluated splits' texts, whatever their label
            assert plan.record["train_datasets"] == [name]
            assert set(plan.record["train_labels"]).isdisjoint(plan.record["eval_labels"])
        else:
            # the sibling built from the same source (same documents, same labels) is left out
            assert all(data[n].source != evaluated.source for n in plan.record["train_datasets"])
            assert plan.eval_splits == evaluated.splits  # all of the dataset's splits, unchanged
        for texts, labels in plan.training.instances:
            assert len(texts) == PROTOCOL["instance_size"] == len(labels) and len(set(labels)) >= 2
    assert built == len(data)


@pytest.mark.parametrize("variant", ["lodo", "disjoint"])
def test_the_random_head_control_trains_on_nothing_and_is_evaluated_as_cob(demo_datasets, variant):
    """The control (random_head) runs under the supervised variants, sees no text to train on and no label, and
    is evaluated on exactly the texts and splits COB's plan of that variant evaluates; a dataset too small for
    ``disjoint`` is skipped for the same reason."""
    data, posts = demo_datasets
    assert proto.variants_of("random_head", ["lodo", "disjoint"]) == ["lodo", "disjoint"]
    for name, evaluated in data.items():
        others = [d for n, d in data.items() if n != name]
        control = plan_for("random_head", variant, evaluated, posts, others=others)
        cob = plan_for("cob", variant, evaluated, posts, others=others)
        assert (control.eval_texts, control.eval_splits) == (cob.eval_texts, cob.eval_splits)
        assert control.training == type(control.training)()  # no text, instance or pair
        assert control.record["labels_seen"] == "none" and control.record["variant"] == variant
        assert control.record["eval_splits"] == cob.record["eval_splits"]
    small = proto.LabelledData("D", "s", ("a", "b", "c"), ((0, (0, 1, 2), ("x", "y", "z")),))
    reason = proto.control_plan(small, "disjoint", min_categories=4, split_seed=42)
    assert reason == proto.disjoint_plan(small, instance_size=2, rounds=1, min_categories=4, seed=1, split_seed=42)


@pytest.mark.parametrize("method", ["cob", "triplet"])
def test_oracle_trains_on_every_evaluated_category_and_only_the_evaluated_texts(demo_datasets, method):
    """The positive control leaks on purpose: its instances hold only the evaluated dataset's texts, each with its
    own label there, every category of the scheme ``disjoint`` halves; no other dataset is read; evaluation on all
    the splits, as lodo; the record names the leak."""
    data, posts = demo_datasets
    for name, evaluated in data.items():
        others = [d for n, d in data.items() if n != name]
        plan = plan_for(method, "oracle", evaluated, posts, others=others)
        assert not isinstance(plan, str), plan
        assert plan.eval_texts == evaluated.texts and plan.eval_splits == evaluated.splits
        scheme = plan.record["label_scheme"]
        own = {  # (text, label) of every item of the scheme in the evaluated dataset
            (evaluated.texts[i], label)
            for s, (_, ids, labels) in zip(evaluated.label_schemes(), evaluated.splits)
            if s == scheme
            for i, label in zip(ids, labels)
        }
        categories = {label for _, label in own}
        items = {(t, label) for texts, labels in plan.training.instances for t, label in zip(texts, labels)}
        assert items and items <= own  # the evaluated texts with their evaluated labels, nothing else
        assert {label for _, label in items} == categories == set(plan.record["train_labels"])  # every category
        assert plan.record["categories"] == len(categories) >= 2
        assert plan.record["leak"] == "evaluated labels (positive control)"
        assert plan.record["variant"] == "oracle" and plan.record["train_datasets"] == [name]
        assert plan.record["instances"] == len(plan.training.instances)
        # the scheme is disjoint's: the one it halves (the dataset's scheme with the most categories)
        disjoint = plan_for(method, "disjoint", evaluated, posts)
        if not isinstance(disjoint, str):
            assert disjoint.record["label_scheme"] == scheme
            assert set(disjoint.record["train_labels"]) | set(disjoint.record["eval_labels"]) == categories
        # its control: the untrained head on the same (all) splits
        control = plan_for("random_head", "oracle", evaluated, posts)
        assert (control.eval_texts, control.eval_splits) == (plan.eval_texts, plan.eval_splits)
        assert control.training == type(control.training)() and control.record["labels_seen"] == "none"


def test_oracle_by_hand_and_not_in_the_default_variants():
    """A hand-made dataset: a coarse (2 labels) and a fine (4 labels) scheme; oracle takes the fine one, leaves out
    the text labelled twice in it, cuts the 7 others into instances of 3 (seeded), and says when no instance exists."""
    texts = tuple(f"t{i}" for i in range(8))
    fine = (0, (0, 1, 2, 3, 4, 5, 6, 7, 7), ("a", "b", "c", "d", "a", "b", "c", "d", "a"))  # t7 twice: ambiguous
    coarse = (1, tuple(range(8)), ("x", "y") * 4)
    data = proto.LabelledData("D", "s", texts, (fine, coarse), ("fine", "coarse"))
    plan = proto.oracle_plan(data, instance_size=3, rounds=1, seed=0)
    assert plan.record["label_scheme"] == "fine" and plan.record["train_labels"] == ["a", "b", "c", "d"]
    assert plan.record["dropped_items"] == {"ambiguous_label": 2}  # (t7, d) and (t7, a)
    assert len(plan.training.instances) == 2  # 7 items, instances of 3, the remainder dropped
    label_of = dict(zip(texts, ("a", "b", "c", "d", "a", "b", "c")))
    for ts, labels in plan.training.instances:
        assert "t7" not in ts and [label_of[t] for t in ts] == list(labels)
    assert plan.eval_splits == data.splits and plan.record["eval_splits"] == 2
    assert plan.training.instances == proto.oracle_plan(data, instance_size=3, rounds=1, seed=0).training.instances
    assert "no clustering instance" in proto.oracle_plan(data, instance_size=9, rounds=1, seed=0)
    assert "oracle" in proto.VARIANTS and proto.variants_of("triplet") == ["lodo", "disjoint"]
    assert proto.variants_of("random_head", ["lodo", "oracle"]) == ["lodo", "oracle"]


def test_lodo_drops_items_sharing_a_text_or_label_with_the_evaluated_dataset():
    evaluated = proto.LabelledData("A", "src-a", ("t1", "t2", "t3"), ((0, (0, 1, 2), ("x", "y", "x")),))
    other = proto.LabelledData(
        "B",
        "src-b",
        ("t1", "u1", "u2", "u3", "u4", "u5"),
        ((0, (0, 1, 2, 3, 4, 5), ("p", "X", "p", "q", "q", "p")),),
    )
    # the same corpus under another source key (as published datasets name S2S and P2P apart): the evaluated texts
    # are inside its texts (title inside title + body), its labels spelt differently
    sibling = proto.LabelledData(
        "A2",
        "src-a-p2p",
        ("t1 body one", "t2 body two", "t3 body three", "s4"),
        ((0, (0, 1, 2, 3), ("m", "n", "m", "n")),),
    )
    plan = proto.lodo_plan(evaluated, [other, sibling], instance_size=2, rounds=1, seed=0)
    assert plan.record["train_datasets"] == ["B"] and plan.record["left_out_same_corpus"] == ["A2"]
    assert plan.record["dropped_items"] == {"same_text": 1, "same_label": 1}
    seen = {t for texts, _ in plan.training.instances for t in texts}
    assert seen <= {"u2", "u3", "u4", "u5"} and seen


def test_lodo_leaves_out_the_sibling_under_published_style_source_keys(demo_datasets):
    """Published datasets give S2S and P2P their own source keys (mteb/blurbs-clustering-s2s, -p2p); the sibling is
    still left out (its texts contain the evaluated titles), even with its labels spelt apart so that no label
    equality stops the leak; datasets of other corpora are used."""
    data, _ = demo_datasets
    published = {
        name: proto.LabelledData(
            name,
            f"mteb/{name.lower()}",  # every dataset its own source key
            d.texts,
            tuple((s, ids, tuple(f"{name[:3]}:{x}" for x in ls)) for s, ids, ls in d.splits),
        )
        for name, d in data.items()
    }
    for evaluated, sibling in (
        ("BlurbsClusteringS2S", "BlurbsClusteringP2P"),
        ("TenKGnadClusteringP2P", "TenKGnadClusteringS2S"),
    ):
        others = [d for n, d in published.items() if n != evaluated]
        plan = proto.lodo_plan(published[evaluated], others, instance_size=10, rounds=1, seed=0)
        assert plan.record["left_out_same_corpus"] == [sibling]
        assert sibling not in plan.record["train_datasets"] and len(plan.record["train_datasets"]) == 3
        assert proto.same_corpus(published[evaluated], published[sibling])
        assert not proto.same_corpus(published[evaluated], published["RedditClusteringP2P"])
    assert proto.contained_share(["ab  c", "zz"], ["xx ab c yy"]) == 0.5  # whitespace normalised, hand-counted


def test_disjoint_halves_the_categories_and_reports_too_few():
    texts = tuple(f"text {i}" for i in range(40))
    labels = tuple("abcdefgh"[i % 8] for i in range(40))
    data = proto.LabelledData(
        "D", "s", texts, ((0, tuple(range(40)), labels), (1, tuple(range(0, 40, 2)), labels[::2]))
    )
    plan = proto.disjoint_plan(data, instance_size=5, rounds=1, min_categories=4, seed=3, split_seed=42)
    assert len(plan.record["train_labels"]) == 4 and len(plan.record["eval_labels"]) == 4
    # the halves come from the config's seed: another training seed, the same evaluated categories (other instances)
    again = proto.disjoint_plan(data, instance_size=5, rounds=1, min_categories=4, seed=4, split_seed=42)
    assert again.record["eval_labels"] == plan.record["eval_labels"] and again.eval_splits == plan.eval_splits
    assert again.training.instances != plan.training.instances
    other_split = [
        proto.disjoint_plan(data, instance_size=5, rounds=1, min_categories=4, seed=3, split_seed=s).record[
            "eval_labels"
        ]
        for s in range(5)
    ]
    assert len({tuple(x) for x in other_split}) > 1  # the split seed does decide the halves
    train = {label for _, ls in plan.training.instances for label in ls}
    assert train <= set(plan.record["train_labels"])
    assert {label for _, _, ls in plan.eval_splits for label in ls} <= set(plan.record["eval_labels"])
    assert "fewer than" in proto.disjoint_plan(data, instance_size=5, rounds=1, min_categories=9, seed=3, split_seed=0)


def test_clustering_instances_cut_shuffled_groups_and_drop_the_remainder():
    group = [(f"t{i}", "ab"[i % 2]) for i in range(23)]
    instances = proto.clustering_instances([group], instance_size=5, rounds=2, seed=1)
    assert len(instances) == 8  # 23 // 5 per round
    first_round = [t for texts, _ in instances[:4] for t in texts]
    assert len(set(first_round)) == 20  # no item twice within a round
    assert instances == proto.clustering_instances([group], instance_size=5, rounds=2, seed=1)
    assert instances != proto.clustering_instances([group], instance_size=5, rounds=2, seed=2)
    one_label = [(f"t{i}", "a") for i in range(10)]
    assert proto.clustering_instances([one_label], instance_size=5, rounds=1, seed=0) == ()


def test_unsupervised_training_data_has_no_labels(demo_datasets):
    data, posts = demo_datasets
    evaluated = data["TenKGnadClusteringP2P"]
    for method, variant in (
        ("simcse", "transductive"),
        ("clusterns", "transductive"),
        ("argue", "order"),
        ("argue", "reply"),
    ):
        plan = plan_for(method, variant, evaluated, posts)
        assert plan.record["labels_seen"] == "none" and not plan.training.instances
        assert plan.record["variant"] == "transductive"
        assert plan.eval_splits == evaluated.splits
        if method == "argue":
            assert {p[2] for p in plan.training.pairs} == {0, 1}  # pair labels: order/edge, not categories
            assert {p[3] for p in plan.training.pairs} == {variant}  # one model per objective
            assert plan.training.objective == variant and plan.record["objective"] == variant
            labels = {label for _, _, ls in evaluated.splits for label in ls}
            assert not {p[0] for p in plan.training.pairs} & labels
        else:
            assert set(plan.training.texts) == set(evaluated.texts) and not plan.training.pairs
    # the builders take no labels: relabelling the dataset changes nothing
    relabelled = proto.LabelledData(
        evaluated.name,
        evaluated.source,
        evaluated.texts,
        tuple((s, ids, tuple("?" for _ in ls)) for s, ids, ls in evaluated.splits),
    )
    a = plan_for("argue", "order", evaluated, posts, instance_size=None)
    b = plan_for("argue", "order", relabelled, posts, instance_size=None)
    assert a.training == b.training


def test_order_pairs_are_consecutive_segments_in_or_out_of_order():
    text = "Erster Satz hier. Zweiter Satz folgt. Dritter Satz endet."
    pairs = proto.order_pairs([text], min_words=4, max_pairs=None, seed=0)
    sentences = ["Erster Satz hier.", "Zweiter Satz folgt.", "Dritter Satz endet."]
    assert len(pairs) == 2
    for (a, b, label, objective), (first, second) in zip(pairs, zip(sentences, sentences[1:])):
        assert objective == "order"
        assert (a, b) == ((first, second) if label == 1 else (second, first))
    labels = [p[2] for p in proto.order_pairs([text] * 200, min_words=4, max_pairs=None, seed=0)]
    assert 150 < sum(labels) < 250  # about half swapped
    # one sentence: cut at the middle word; too short: no pair
    assert proto.segments("eins zwei drei vier fünf", min_words=4) == ["eins zwei", "drei vier fünf"]
    assert proto.segments("zu kurz", min_words=4) == []
    assert len(proto.order_pairs([text] * 10, min_words=4, max_pairs=5, seed=0)) == 5


def test_reply_pairs_link_parent_and_reply_and_draw_unlinked_negatives():
    posts = [
        (1, None, "Wurzel eins"),
        (2, 1, "Antwort auf eins"),
        (3, 2, "Antwort auf Antwort"),
        (4, None, "Wurzel vier"),
        (5, 4, "Antwort auf vier"),
        (6, None, "Evaluierter Text"),
        (7, 6, "Antwort auf sechs"),
        (8, 99, "Eltern fehlen"),
        (9, None, "   "),
    ]
    pairs = proto.reply_pairs(posts, exclude_texts=["Evaluierter Text"], max_pairs=None, seed=0)
    positives = {(a, b) for a, b, label, _ in pairs if label == 1}
    assert positives == {
        ("Wurzel eins", "Antwort auf eins"),
        ("Antwort auf eins", "Antwort auf Antwort"),
        ("Wurzel vier", "Antwort auf vier"),
    }
    text_id = {t: i for i, _, t in posts}
    linked = {(p, q) for q, p, _ in posts if p is not None} | {(q, p) for q, p, _ in posts if p is not None}
    negatives = [(a, b) for a, b, label, _ in pairs if label == 0]
    assert len(negatives) == len(positives)
    for a, b in negatives:
        assert a != b and (text_id[a], text_id[b]) not in linked
        assert "Evaluierter Text" not in (a, b)
    assert all(objective == "reply" for *_, objective in pairs)


def test_demo_forum_is_in_the_real_schema(tmp_path):
    path = demo.write_million_posts_sqlite(tmp_path / "corpus.sqlite3", seed=42)
    con = sqlite3.connect(path)
    columns = [r[1] for r in con.execute("PRAGMA table_info(Posts)")]
    con.close()
    assert columns == [
        "ID_Post",
        "ID_Parent_Post",
        "ID_Article",
        "ID_User",
        "CreatedAt",
        "Status",
        "Headline",
        "Body",
        "PositiveVotes",
        "NegativeVotes",
    ]
    posts = read_posts(path)
    assert posts and all(t for _, _, t in posts) and "Gelöscht." not in {t for _, _, t in posts}
    assert any(parent is not None for _, parent, _ in posts)


def test_the_forum_leaves_the_demo_articles_and_their_datasets_as_they_were(tmp_path):
    """The TenKGnad datasets built from the demo's corpus.sqlite3 have the content they had before table Posts
    existed (hashes taken from the writer without it)."""
    from tecb.data.datasets import content_hash

    path = demo.write_million_posts_sqlite(tmp_path / "corpus.sqlite3", seed=42)
    expected = {
        "s2s": "52cf4b5c3cd203b8ae2868b30045665878ef10947bc8491e71ab6cf4c8341548",
        "p2p": "ec43a38587cdf33c8a400919efa57004c3a7822fa768e8b47fe4b5db99b37822",
    }
    for variant, digest in expected.items():
        built = build("million_posts", path, variant, seed=42)
        assert content_hash(built.texts, built.splits) == digest


def test_read_posts_names_the_missing_table(tmp_path):
    from tecb.data.sources.gnad import GnadFormatError

    path = tmp_path / "articles_only.sqlite3"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE Articles (ID_Article INTEGER)")
    con.close()
    with pytest.raises(GnadFormatError, match=r"articles_only.sqlite3: cannot read table Posts"):
        read_posts(path)


def test_similarity_pairs_by_hand():
    """argueBERT's similarity prediction, German analogue: a title above its blurb (two lines) gives (title, blurb);
    a news text of several sentences gives (first sentence, the rest); a lone title takes its rest from a companion
    text that begins with it (its sibling P2P dataset); each positive gets a negative with another text's rest."""
    texts = [
        "Der Titel\nDer Klappentext des Buches.",
        "Erster Satz der Meldung. Zweiter Satz. Dritter Satz.",
        "Nur ein Titel",
        "Ein Titel ohne Geschwister",
    ]
    companions = ["Nur ein Titel\nSein eigener Text steht hier."]
    pairs = proto.similarity_pairs(texts, companions, max_pairs=None, seed=0)
    positives = [(a, b) for a, b, label, _ in pairs if label == 1]
    assert positives == [
        ("Der Titel", "Der Klappentext des Buches."),
        ("Erster Satz der Meldung.", "Zweiter Satz. Dritter Satz."),
        ("Nur ein Titel", "Sein eigener Text steht hier."),
    ]
    rests = {b for _, b in positives}
    for (a, b, label, objective), (lead, own) in zip(pairs[1::2], positives):
        assert label == 0 and objective == "similarity" and a == lead and b in rests - {own}
    assert len(proto.similarity_pairs(texts, companions, max_pairs=2, seed=0)) == 4
    assert proto.similarity_pairs(["Nur ein Titel"], [], max_pairs=None, seed=0) == []


def test_argue_plan_builds_one_objective_and_the_siamese_ones_and_names_a_missing_one():
    texts = ["Der Titel\nDer Klappentext des Buches hat Sätze.", "Noch ein Titel\nNoch ein Text mit Worten hier."]
    limits = proto.PairLimits(min_words=4, max_order_pairs=None, max_reply_pairs=None)
    plan = proto.argue_plan(texts, None, objective="order", siamese_objectives=["similarity", "reply"],
                            limits=limits, seed=0)  # fmt: skip
    assert plan.objective == "order" and {p[3] for p in plan.pairs} == {"order", "similarity"}
    with pytest.raises(ValueError, match="no forum is configured"):
        proto.argue_plan(texts, None, objective="reply", limits=limits, seed=0)
    with pytest.raises(ValueError, match="no text has a lead"):
        proto.argue_plan(["eins", "zwei"], None, objective="similarity", limits=limits, seed=0)
    assert proto.variants_of("argue", ("lodo",), ["similarity", "order"]) == ["similarity", "order"]
    with pytest.raises(ValueError, match="unknown argue objectives"):
        proto.variants_of("argue", ("lodo",), ["nsp"])


def test_simcse_views_are_arms():
    """augmentation as a list: one SimCSE arm per view, named by it, each trained with its view; a single view
    stays the transductive arm."""
    assert proto.variants_of("simcse", ("lodo",), (), "dropout") == ["transductive"]
    assert proto.variants_of("simcse", ("lodo",), (), ["dropout", "cropping"]) == ["dropout", "cropping"]
    assert proto.variants_of("clusterns", ("lodo",), (), ["dropout", "cropping"]) == ["transductive"]
    with pytest.raises(ValueError, match="known views"):
        proto.variants_of("simcse", ("lodo",), (), ["mask"])
    settings = {"augmentation": ["dropout", "cropping"], "crop_ratio": 0.5}
    assert proto.arm_settings("simcse", "cropping", settings) == {"augmentation": "cropping", "crop_ratio": 0.5}
    assert proto.arm_settings("simcse", "transductive", {"augmentation": "dropout"}) == {"augmentation": "dropout"}
    assert settings["augmentation"] == ["dropout", "cropping"]  # not changed in place
    assert proto.known_variants("simcse") == ["dropout", "cropping", "transductive"]
    assert "transductive" not in proto.known_variants("cob")


@pytest.mark.slow  # builds Blurbs S2S and P2P from the real GermEval 2019 dev file
def test_argue_pairs_a_real_title_with_its_own_blurb_from_the_sibling_dataset():
    """argue's similarity objective on the real Blurbs S2S titles: a lone title takes its rest from Blurbs P2P (the
    same book's title above its blurb), so each pair is the book's own blurb (label 1) or another book's (0)."""
    import os

    from conftest import REAL_DATA

    from tecb.data.datasets import build_from_config

    if not REAL_DATA.exists():
        if os.environ.get("TECB_REQUIRE_REAL_DATA") == "1":
            pytest.fail(f"{REAL_DATA} is missing but TECB_REQUIRE_REAL_DATA=1")
        pytest.skip("no ../shared/data/real beside the checkout")
    path, sources = REAL_DATA / "germeval2019" / "blurbs_dev.txt", {"germeval2019": {}}
    s2s, p2p = (
        build_from_config(name, {"source": "germeval2019", "text": text}, sources, path, seed=42).texts
        for name, text in (("BlurbsClusteringS2S", "s2s"), ("BlurbsClusteringP2P", "p2p"))
    )
    own = dict(proto.lead_and_rest(t) for t in p2p if proto.lead_and_rest(t))
    pairs = proto.similarity_pairs(s2s, p2p, max_pairs=16, seed=42 + 2)
    assert len(pairs) == 32 and sum(label for _, _, label, _ in pairs) == 16
    for title, rest, label, _ in pairs:
        assert title in s2s and (rest == own[title]) == (label == 1)
