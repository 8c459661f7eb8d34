"""The "trained on this data" flag (models table, Table 2's §) from mteb's training-data metadata, for every task
whose data a dataset of the run is: the German clustering tasks of its corpus (S2S and P2P share their texts), or a
dataset named as any mteb task; tested on mteb's registry models whose metadata names a German task."""

from __future__ import annotations

import pytest

from tecb.embed import mteb_model

mteb = pytest.importorskip("mteb")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
GERMAN_RETRIEVAL = "MIRACLRetrieval"  # multilingual, German included: the German task most registry models name


def _trained(training):
    return mteb.get_model_meta(MINILM).model_copy(update={"training_datasets": training, "adapted_from": None})


def test_a_corpus_seen_through_either_task_flags_both():
    p2p = _trained({"TenKGnadClusteringP2P"})
    assert mteb_model.trained_on(p2p, "TenKGnadClusteringS2S") == "yes"  # the same articles
    assert mteb_model.trained_on(p2p, "TenKGnadClusteringP2P") == "yes"
    assert mteb_model.trained_on(p2p, "BlurbsClusteringS2S") == "no"
    # the paper's German Reddit is not mteb's English Reddit data, whatever the names share
    assert mteb_model.trained_on(_trained({"RedditClusteringP2P"}), "RedditClusteringP2P") == "unknown"
    assert mteb_model.trained_on(p2p, "MyNews") == "unknown"


@pytest.mark.slow
def test_registry_models_that_name_a_german_task_are_flagged_for_it():
    flagged, known = [], 0
    for meta in mteb.get_model_metas():
        training = meta.get_training_datasets()
        if not training:
            continue
        known += 1
        flag = mteb_model.trained_on(meta, GERMAN_RETRIEVAL)
        assert flag == ("yes" if {GERMAN_RETRIEVAL, f"{GERMAN_RETRIEVAL}.v2"} & set(training) else "no"), meta.name
        flagged += [meta.name] if flag == "yes" else []
        # every model with training metadata gets a known flag on the paper's German tasks
        assert mteb_model.trained_on(meta, "BlurbsClusteringP2P") in ("yes", "no"), meta.name
    assert known > 100 and len(flagged) > 10, (known, len(flagged))
