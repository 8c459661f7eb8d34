"""Model specs (issue 15.1): each option really changes what the encoder sees or returns, and is recorded.

Small local models built from a config: the tiny BERT, saved as a plain checkpoint or as a
sentence-transformers model (with prompts / a Normalize module), and one with remote code.
"""

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb.embed import encode as embed
from tecb.embed.spec import directory_digest, encoder_settings, resolve_prompt
from tecb.embed.tiny_bert import create_tiny_bert

TEXTS = [
    f"Buch {i}: " + "ein langer Satz über Krimis und Sport " * (i % 5) + ("Roman" if i % 2 else "Fußball")
    for i in range(24)
]
QUIET = {"log": lambda *a: None}

#: each test loads the tiny BERT as a sentence-transformers model, most encode: the whole file runs in make test
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return create_tiny_bert(tmp_path_factory.mktemp("spec") / "tiny", TEXTS, seed=5, vocab_size=300)


@pytest.fixture(scope="module")
def st_dir(tiny_dir, tmp_path_factory):
    """The tiny BERT saved as a sentence-transformers model: CLS pooling, Normalize, two prompts."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules

    word = modules.Transformer(str(tiny_dir))
    model = SentenceTransformer(
        modules=[word, modules.Pooling(word.get_embedding_dimension(), "cls"), modules.Normalize()],
        prompts={"clustering": "Thema: ", "query": "Frage: "},
        device="cpu",
    )
    out = tmp_path_factory.mktemp("st") / "tiny-st"
    model.save(str(out))
    return out


def write_texts(path, texts):
    pq.write_table(pa.table({"text_id": pa.array(range(len(texts)), pa.int32()), "text": texts}), path)
    return path


def run(tmp_path, spec, texts=TEXTS, name="out", **kwargs):
    texts_path = write_texts(tmp_path / f"{name}-texts.parquet", texts)
    out = tmp_path / f"{name}.parquet"
    meta = embed.embed_dataset(
        embed.EmbedJob.from_spec(texts_path, out, spec, {"device": "cpu", "batch_size": 4}, **{"seed": 42, **kwargs}),
        **QUIET,
    )
    table = pq.read_table(out)
    stored = json.loads(table.schema.metadata[b"tecb"])
    assert stored == json.loads(json.dumps(meta))
    return np.array(table.column("embedding").to_pylist(), dtype=np.float32), stored


def plain(tiny_dir):
    return embed.load_sentence_transformer(str(tiny_dir), device="cpu")


# --- prompts ---------------------------------------------------------------------------------


def test_literal_prompt_reaches_the_encoder(tmp_path, tiny_dir):
    vectors, meta = run(tmp_path, {"kind": "local", "path": str(tiny_dir), "prompt": "Thema: "})
    model = plain(tiny_dir)
    for i in (0, 7, 23):
        with_prefix = model.encode(["Thema: " + TEXTS[i]])[0]  # the prompt typed in front, no prompt option
        np.testing.assert_allclose(vectors[i], with_prefix, atol=1e-5)
        assert not np.allclose(vectors[i], model.encode([TEXTS[i]])[0], atol=1e-3)
    assert meta["prompt"] == "Thema: " and meta["prompt_name"] is None


def test_prompt_name_uses_the_models_own_prompt(tmp_path, st_dir):
    vectors, meta = run(tmp_path, {"kind": "local", "path": str(st_dir), "prompt_name": "clustering"})
    model = embed.load_sentence_transformer(str(st_dir), device="cpu")
    np.testing.assert_allclose(vectors[3], model.encode(["Thema: " + TEXTS[3]])[0], atol=1e-5)
    assert meta["prompt"] == "Thema: " and meta["prompt_name"] == "clustering"
    with pytest.raises(ValueError, match="not one of the model's prompts"):
        run(tmp_path, {"kind": "local", "path": str(st_dir), "prompt_name": "nope"}, name="bad")


def test_prompt_per_dataset_and_prompt_xor_prompt_name():
    prompts = {"default": "Texte: ", "BlurbsClusteringS2S": "Buchtitel: "}
    assert resolve_prompt(prompts, "BlurbsClusteringS2S") == "Buchtitel: "
    assert resolve_prompt(prompts, "TenKGnadClusteringS2S") == "Texte: "
    assert resolve_prompt({"BlurbsClusteringS2S": "x"}, "Other") is None
    assert (
        encoder_settings({"kind": "huggingface", "id": "a/b", "prompt": prompts}, {}, "BlurbsClusteringS2S")["prompt"]
        == "Buchtitel: "
    )
    with pytest.raises(ValueError, match="not both"):
        encoder_settings({"kind": "huggingface", "id": "a/b", "prompt": "x", "prompt_name": "query"})


# --- pooling and normalisation -----------------------------------------------------------------


def hidden_states(model_dir, text):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    batch = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        out = AutoModel.from_pretrained(model_dir).eval()(**batch).last_hidden_state[0].numpy()
    return out, batch["attention_mask"][0].numpy()


@pytest.mark.parametrize("mode", ["cls", "mean", "max", "lasttoken"])
def test_pooling_override_matches_pooling_by_hand(tmp_path, tiny_dir, mode):
    vectors, meta = run(tmp_path, {"kind": "local", "path": str(tiny_dir), "pooling": mode})
    tokens, mask = hidden_states(tiny_dir, TEXTS[6])
    by_hand = {
        "cls": tokens[0],
        "mean": tokens[mask == 1].mean(axis=0),
        "max": tokens[mask == 1].max(axis=0),
        "lasttoken": tokens[mask == 1][-1],
    }[mode]
    np.testing.assert_allclose(vectors[6], by_hand, atol=1e-5)
    assert meta["pooling"] == mode and meta["pooling_override"] == mode


def test_pooling_override_replaces_a_sentence_transformers_models_own_pooling(tmp_path, st_dir):
    own, meta_own = run(tmp_path, {"kind": "local", "path": str(st_dir)}, name="own")
    mean, meta_mean = run(tmp_path, {"kind": "local", "path": str(st_dir), "pooling": "mean"}, name="mean")
    tokens, mask = hidden_states(st_dir, TEXTS[2])
    for vec, ref in ((own[2], tokens[0]), (mean[2], tokens[mask == 1].mean(axis=0))):
        np.testing.assert_allclose(vec, ref / np.linalg.norm(ref), atol=1e-5)  # the model's Normalize stays
    assert meta_own["pooling"] == "cls" and meta_mean["pooling"] == "mean"


def test_normalize_true_gives_unit_norms_false_removes_the_models_normalize(tmp_path, tiny_dir, st_dir):
    raw, meta_raw = run(tmp_path, {"kind": "local", "path": str(tiny_dir)}, name="raw")
    unit, meta_unit = run(tmp_path, {"kind": "local", "path": str(tiny_dir), "normalize": True}, name="unit")
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-2)
    np.testing.assert_allclose(unit, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-5)
    assert not meta_raw["normalized"] and meta_unit["normalized"] and meta_unit["normalize"] is True

    own, meta_own = run(tmp_path, {"kind": "local", "path": str(st_dir)}, name="own")
    off, meta_off = run(tmp_path, {"kind": "local", "path": str(st_dir), "normalize": False}, name="off")
    np.testing.assert_allclose(np.linalg.norm(own, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(own, off / np.linalg.norm(off, axis=1, keepdims=True), atol=1e-5)
    assert meta_own["normalized"] and not meta_off["normalized"]


# --- lengths, kwargs, remote code --------------------------------------------------------------


def test_max_seq_length_truncates_and_long_text_statistics(tmp_path, tiny_dir):
    from transformers import AutoTokenizer

    vectors, meta = run(tmp_path, {"kind": "local", "path": str(tiny_dir), "max_seq_length": 12})
    n = np.array([len(ids) for ids in AutoTokenizer.from_pretrained(tiny_dir)(TEXTS)["input_ids"]])
    assert meta["max_seq_length"] == 12 and (n > 12).any() and (n <= 12).any()
    assert meta["truncated_fraction"] == pytest.approx(np.mean(n > 12), abs=1e-6)
    assert meta["token_coverage"] == pytest.approx(np.minimum(n, 12).sum() / n.sum(), abs=1e-6)
    assert meta["tokens_total"] == n.sum() and meta["tokens_max"] == n.max() and meta["n_truncated"] == (n > 12).sum()
    long = int(np.argmax(n))
    tokens, _ = hidden_states(tiny_dir, TEXTS[long])
    assert not np.allclose(vectors[long], tokens.mean(axis=0), atol=1e-4)  # the full text was not encoded
    _, full = run(tmp_path, {"kind": "local", "path": str(tiny_dir)}, name="full")
    assert full["truncated_fraction"] == 0.0 and full["token_coverage"] == 1.0 and full["max_seq_length"] == 512


def test_prompt_counts_toward_the_token_statistics(tmp_path, tiny_dir):
    _, bare = run(tmp_path, {"kind": "local", "path": str(tiny_dir)}, name="bare")
    _, prompted = run(tmp_path, {"kind": "local", "path": str(tiny_dir), "prompt": "Thema: "}, name="prompted")
    assert prompted["tokens_total"] > bare["tokens_total"]


@pytest.mark.parametrize("folder", ["plain checkpoint", "sentence-transformers"])
def test_model_and_tokenizer_kwargs_reach_from_pretrained(folder, tiny_dir, st_dir):
    """Both loading routes (a plain checkpoint wrapped by us, a sentence-transformers folder loaded by
    SentenceTransformer) pass model_kwargs and tokenizer_kwargs on to from_pretrained."""
    path = str(tiny_dir if folder == "plain checkpoint" else st_dir)
    assert embed.is_sentence_transformers_dir(path) == (folder == "sentence-transformers")
    plain = embed.load_encoder(encoder_settings({"kind": "local", "path": path}), device="cpu")
    assert plain[0].auto_model.config._attn_implementation != "eager" and plain.max_seq_length != 9
    settings = encoder_settings(
        {
            "kind": "local",
            "path": path,
            "model_kwargs": {"attn_implementation": "eager"},
            "tokenizer_kwargs": {"model_max_length": 9},
        }
    )
    model = embed.load_encoder(settings, device="cpu")
    assert model[0].auto_model.config._attn_implementation == "eager"
    assert model[0].tokenizer.model_max_length == 9 and model.max_seq_length == 9


REMOTE_CONFIG = """from transformers import BertConfig


class TinyRemoteConfig(BertConfig):
    model_type = "tiny-remote"
"""
REMOTE_MODEL = '''from transformers import BertModel

from .configuration_tiny import TinyRemoteConfig


class TinyRemoteModel(BertModel):
    """Remote code that visibly changes the output: hidden states doubled."""

    config_class = TinyRemoteConfig

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        out.last_hidden_state = out.last_hidden_state * 2
        return out
'''


def test_trust_remote_code_runs_the_models_own_code(tmp_path, tiny_dir):
    import shutil

    remote = tmp_path / "remote"
    shutil.copytree(tiny_dir, remote)
    (remote / "configuration_tiny.py").write_text(REMOTE_CONFIG)
    (remote / "modeling_tiny.py").write_text(REMOTE_MODEL)
    config = json.loads((remote / "config.json").read_text())
    config.update(
        model_type="tiny-remote",
        architectures=["TinyRemoteModel"],
        auto_map={"AutoConfig": "configuration_tiny.TinyRemoteConfig", "AutoModel": "modeling_tiny.TinyRemoteModel"},
    )
    (remote / "config.json").write_text(json.dumps(config))
    with pytest.raises(Exception, match="(?i)trust_remote_code|remote code|tiny-remote"):
        run(tmp_path, {"kind": "local", "path": str(remote)}, name="refused")
    vectors, meta = run(tmp_path, {"kind": "local", "path": str(remote), "trust_remote_code": True}, name="remote")
    base = plain(tiny_dir).encode(TEXTS[:3])
    np.testing.assert_allclose(vectors[:3], 2 * base, atol=1e-5)
    assert meta["trust_remote_code"] is True
    # the same remote code inside a sentence-transformers directory (how hub models ship it)
    st = tmp_path / "remote-st"
    embed.load_sentence_transformer(str(remote), loading=embed.Loading(trust_remote_code=True), device="cpu").save(
        str(st)
    )
    for name in ("configuration_tiny.py", "modeling_tiny.py"):
        shutil.copy(remote / name, st / name)
    vectors, _ = run(tmp_path, {"kind": "local", "path": str(st), "trust_remote_code": True}, name="remote-st")
    np.testing.assert_allclose(vectors[:3], 2 * base, atol=1e-5)


# --- what decides a recompute -------------------------------------------------------------------


def test_settings_hold_every_option_but_not_the_display_name_or_batch_size():
    spec = {
        "kind": "huggingface",
        "name": "E5",
        "id": "intfloat/multilingual-e5-large",
        "revision": "abc",
        "prompt": "query: ",
        "trust_remote_code": False,
        "pooling": "mean",
        "normalize": True,
        "max_seq_length": 512,
        "model_kwargs": {"attn_implementation": "sdpa"},
        "tokenizer_kwargs": {"use_fast": True},
        "encode_kwargs": {"task": "x"},
        "dtype": "bfloat16",
        "batch_size": 64,
    }
    settings = encoder_settings(spec, {"dtype": "float32", "batch_size": 8, "device": "cuda", "threads": 4})
    assert encoder_settings({**spec, "name": "another name", "batch_size": 2}, {"threads": 1}) == settings
    for key, value in [
        ("prompt", "passage: "),
        ("revision", "def"),
        ("pooling", "cls"),
        ("normalize", False),
        ("max_seq_length", 256),
        ("model_kwargs", {}),
        ("tokenizer_kwargs", {}),
        ("encode_kwargs", {}),
        ("dtype", "float16"),
        ("trust_remote_code", True),
        ("id", "intfloat/other"),
    ]:
        assert encoder_settings({**spec, key: value}) != settings, key
    assert (
        encoder_settings({"kind": "huggingface", "id": "a/b"}, {"dtype": "float16"})["dtype"] == "float16"
    )  # embed default
    assert encoder_settings({"kind": "tfidf", "name": "x", "dim": 8}) == {"kind": "tfidf", "dim": 8}
    with pytest.raises(ValueError, match="pooling"):
        encoder_settings({"kind": "huggingface", "id": "a/b", "pooling": "median"})


def test_metadata_records_settings(tmp_path, tiny_dir):
    spec = {
        "kind": "local",
        "path": str(tiny_dir),
        "prompt": "Thema: ",
        "pooling": "cls",
        "normalize": True,
        "max_seq_length": 64,
        "model_kwargs": {"attn_implementation": "eager"},
        "revision": "v1",
        "encode_kwargs": {},
    }
    _, meta = run(tmp_path, spec, model_digest="f" * 64)
    assert meta["prompt"] == "Thema: " and meta["pooling"] == "cls" and meta["normalize"] is True
    assert meta["max_seq_length"] == 64 and meta["model_kwargs"] == {"attn_implementation": "eager"}
    assert meta["revision"] == "v1" and meta["model_sha256"] == "f" * 64 and meta["trust_remote_code"] is False
    assert meta["dtype"] == meta["dtype_requested"] == "float32"


def test_directory_digest_follows_content_not_timestamps(tmp_path, tiny_dir):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tiny_dir, copy)
    first = directory_digest(copy)
    assert first["sha256"] == directory_digest(tiny_dir)["sha256"] and "model.safetensors" in first["files"]
    os.utime(copy / "model.safetensors", (1, 1))
    assert directory_digest(copy)["sha256"] == first["sha256"]
    data = bytearray((copy / "model.safetensors").read_bytes())
    data[-1] ^= 1
    (copy / "model.safetensors").write_bytes(bytes(data))
    assert directory_digest(copy)["sha256"] != first["sha256"]


# --- progress and precision ---------------------------------------------------------------------


def test_progress_lines(tiny_dir):
    lines = []
    model = plain(tiny_dir)
    list(embed.encode_transformer(model, TEXTS, 4, chunk_size=10, log=lines.append))
    # a chunk's line each; a loaded machine may add heartbeat lines ("...; still working"), which are not chunks
    progress = [line for line in lines if line.startswith("encoded ") and "still working" not in line]
    assert [p.split()[1] for p in progress] == ["10/24", "20/24", "24/24"]
    assert "texts/s" in progress[0] and "ETA" in progress[0] and progress[-1].endswith("ETA 0:00:00")


def test_dtype_parity_on_cpu_bfloat16(tiny_dir):
    labels = ["Roman" if i % 2 else "Fußball" for i in range(len(TEXTS))]
    result = embed.dtype_parity(
        {"kind": "local", "path": str(tiny_dir)}, TEXTS, labels, dtype="bfloat16", device="cpu", seed=42
    )
    assert result["dtype_loaded"] == "bfloat16" and result["n_labels"] == 2
    assert result["max_abs_difference"] > 0  # really computed in bfloat16
    assert result["min_cosine"] > 0.98
    assert result["v_measure_difference"] == pytest.approx(result["v_measure_half"] - result["v_measure_float32"])
    assert result["seeds"] == [42, 43, 44, 45, 46] and result["v_measure_seed_std"] >= 0
    assert 0 <= result["v_measure_float32"] <= 1 and 0 <= result["v_measure_half"] <= 1


def test_job_embed_options_take_the_models_batch_size_and_digest_file(tmp_path):
    from tecb.embed.spec import job_embed_options, recorded_digest

    config = {"embed": {"batch_size": 32, "device": "cpu"}, "models": {"a": {"batch_size": 4}, "b": {}}}
    assert job_embed_options(config, model="a") == {"batch_size": 4, "device": "cpu"}
    assert job_embed_options(config, model="b") == {"batch_size": 32, "device": "cpu"}
    assert config["embed"]["batch_size"] == 32  # the config itself is not changed
    (tmp_path / "digest.json").write_text('{"sha256": "ab12", "files": 3}')
    assert recorded_digest([str(tmp_path / "digest.json")]) == "ab12"
    assert recorded_digest([]) is None and recorded_digest(None) is None
