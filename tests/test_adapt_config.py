"""The `adapt` section of the config schema: `methods` selects exactly what it lists, and values the training code
rejects are rejected by the schema check already."""

from __future__ import annotations

import pytest
from conftest import ROOT

from tecb.configcheck import load_schema, schema_errors

SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
BASE = {
    "datasets": {"D": {"source": "s", "text": "s2s"}},
    "models": {"m": {"kind": "tiny-bert"}},
    "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
}


def filled(adapt: dict) -> tuple[dict, list[str]]:
    config, messages = schema_errors({**BASE, "adapt": adapt}, SCHEMA)
    return config["adapt"], messages


def test_methods_selects_exactly_the_listed_ones():
    adapt, messages = filled({"enabled": True, "methods": {"simcse": {}, "cob": {"lr": 1e-4}}})
    assert not messages
    assert sorted(adapt["methods"]) == ["cob", "simcse"]  # no default fills triplet/clusterns/argue back in
    assert adapt["methods"]["simcse"]["batch_size"] == 64  # a listed method's own defaults are filled
    assert adapt["methods"]["cob"]["lr"] == 1e-4 and adapt["methods"]["cob"]["instance_size"] == 50


def test_methods_left_out_runs_all_five_and_the_control_with_their_defaults():
    adapt, messages = filled({"enabled": True})
    assert not messages
    assert sorted(adapt["methods"]) == ["argue", "clusterns", "cob", "random_head", "simcse", "triplet"]
    assert adapt["methods"]["clusterns"]["n_clusters"] == 128
    assert adapt["methods"]["random_head"] == {"projection_dim": 256} == {"projection_dim": SCHEMA_COB_WIDTH}


SCHEMA_COB_WIDTH = SCHEMA["properties"]["adapt"]["properties"]["methods"]["properties"]["cob"]["properties"][
    "projection_dim"
]["default"]


def test_the_random_head_control_is_checked_against_cob_and_triplets_head():
    """The control adds the head cob and triplet start from: a width of its own is named, key by key; it has no
    setting but the head's width (a misspelt one is rejected), and a head of width 0 is no control."""
    from tecb.configcheck import cross_key_errors

    adapt, messages = filled({"enabled": True, "methods": {"cob": {}, "triplet": {}, "random_head": {}}})
    assert not messages and not cross_key_errors({**BASE, "adapt": adapt})
    adapt, _ = filled({"enabled": True, "methods": {"cob": {"projection_dim": 128}, "random_head": {}}})
    errors = cross_key_errors({**BASE, "adapt": adapt})
    assert errors == [
        "adapt.methods.random_head.projection_dim = 256 is not adapt.methods.cob.projection_dim = 128: the control "
        "must add the head cob starts from; set them equal"
    ]
    for bad in ({"projection_dim": 0}, {"lr": 1e-3}):
        _, messages = filled({"enabled": True, "methods": {"random_head": bad}})
        assert any("adapt.methods.random_head" in m for m in messages), (bad, messages)


@pytest.mark.parametrize(
    ("method", "key", "value"),
    [
        ("clusterns", "hard_negative_weight", 0),  # log(0) in Eq. (2)
        ("clusterns", "n_clusters", 1),  # no second-nearest centroid
        ("clusterns", "n_clusters", "automatic"),  # a number or auto
        ("clusterns", "similarity_threshold", -0.1),
        ("clusterns", "similarity_threshold", "step0"),
        ("cob", "instance_size", 1),  # clustering_instances needs >= 2
        ("triplet", "instance_size", 1),
    ],
)
def test_values_the_code_rejects_are_rejected_by_the_schema(method, key, value):
    _, messages = filled({"enabled": True, "methods": {method: {key: value}}})
    assert any(f"adapt.methods.{method}.{key}" in m for m in messages), messages


def test_clusterns_k_and_sigma_take_auto_and_keep_their_defaults():
    adapt, messages = filled({"enabled": True, "methods": {"clusterns": {"n_clusters": "auto"}}})
    assert not messages
    assert adapt["methods"]["clusterns"]["n_clusters"] == "auto"
    assert adapt["methods"]["clusterns"]["similarity_threshold"] == 0.4  # the default, untouched
    adapt, messages = filled({"enabled": True, "methods": {"clusterns": {"similarity_threshold": "auto"}}})
    assert not messages
    assert (adapt["methods"]["clusterns"]["n_clusters"], adapt["methods"]["clusterns"]["similarity_threshold"]) == (
        128,
        "auto",
    )


def test_argue_similarity_on_titles_without_their_texts_is_refused_naming_the_keys():
    """argue's similarity objective on an S2S dataset needs its source's P2P dataset (the titles' own texts): without
    it a clear error names adapt.protocol.argue_objectives, the dataset and its source, before any job runs."""
    from tecb.configcheck import adapt_protocol_errors

    adapt, messages = filled({"enabled": True, "methods": {"argue": {}}})
    assert not messages and adapt["protocol"]["argue_objectives"] == ["similarity", "order"]
    errors = adapt_protocol_errors({**BASE, "adapt": adapt})
    assert len(errors) == 1 and errors[0].startswith("adapt.protocol.argue_objectives lists similarity"), errors
    assert "D has titles only" in errors[0] and "source 's'" in errors[0]
    companion = {**BASE, "datasets": {**BASE["datasets"], "DP": {"source": "s", "text": "p2p"}}}
    assert not adapt_protocol_errors({**companion, "adapt": {**adapt, "datasets": ["D"]}})
    other_source = {**BASE, "datasets": {**BASE["datasets"], "XP": {"source": "x", "text": "p2p"}}}
    assert adapt_protocol_errors({**other_source, "adapt": {**adapt, "datasets": ["D"]}})
    order_only = {**adapt, "protocol": {**adapt["protocol"], "argue_objectives": ["order"]}}
    assert not adapt_protocol_errors({**BASE, "adapt": order_only})
    without_argue, _ = filled({"enabled": True, "methods": {"simcse": {}}})
    assert not adapt_protocol_errors({**BASE, "adapt": without_argue})


def test_freeze_word_embeddings_and_head_lr_default_to_the_old_regime():
    adapt, messages = filled({"enabled": True})
    assert not messages and adapt["freeze_word_embeddings"] is False
    assert adapt["methods"]["cob"]["head_lr"] is None and adapt["methods"]["triplet"]["head_lr"] is None
    assert adapt["methods"]["argue"]["head_lr"] is None
    _, messages = filled({"enabled": True, "methods": {"cob": {"head_lr": 0}}})
    assert any("head_lr" in m for m in messages)
