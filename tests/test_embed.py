"""Embed stage: exactness against SentenceTransformer.encode, OOM halving, metadata, atomic writes."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import EMBED_TEXTS as TEXTS
from helpers import write_texts

from tecb.embed import encode as embed
from tecb.embed.tiny_bert import create_tiny_bert


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return create_tiny_bert(tmp_path_factory.mktemp("m") / "tiny", TEXTS, seed=1)


@pytest.fixture(scope="module")
def model(tiny_dir):
    return embed.load_sentence_transformer(str(tiny_dir), device="cpu")


def read_vectors(path):
    table = pq.read_table(path)
    assert table.schema.field("text_id").type == pa.int32()
    assert table.schema.field("embedding").type == pa.list_(pa.float32(), table.column("embedding").type.list_size)
    assert table.column("text_id").to_pylist() == list(range(table.num_rows))
    return np.array(table.column("embedding").to_pylist(), dtype=np.float32), json.loads(table.schema.metadata[b"tecb"])


@pytest.mark.slow
@pytest.mark.parametrize("batch_size,chunk_size", [(1, 7), (4, 10), (32, 4096)])
def test_vectors_equal_single_text_encode(model, batch_size, chunk_size):
    got = np.concatenate([v for _, v in embed.encode_transformer(model, TEXTS, batch_size, chunk_size)])
    for i in (0, 5, 13, 44):
        ref = model.encode([TEXTS[i]], convert_to_numpy=True)[0]
        np.testing.assert_allclose(got[i], ref, atol=1e-5)
    assert got.shape[0] == len(TEXTS)


class OOMAbove:
    """Wraps the transformer's forward: CUDA-style out-of-memory error for batches above ``limit`` rows."""

    def __init__(self, model, limit):
        self.auto = model[0].auto_model
        self.inner, self.limit, self.batches, self.rows = self.auto.forward, limit, [], 0

    def __call__(self, *args, **kwargs):
        n = int(kwargs["input_ids"].shape[0])
        self.batches.append(n)
        if n > self.limit:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.rows += n
        return self.inner(*args, **kwargs)

    def __enter__(self):
        self.auto.forward = self
        return self

    def __exit__(self, *exc):
        self.auto.forward = self.inner


@pytest.mark.slow
def test_oom_halves_batch_size_and_encodes_each_text_once(model):
    state, logs = {}, []
    with OOMAbove(model, limit=5) as fake:
        got = np.concatenate(
            [v for _, v in embed.encode_transformer(model, TEXTS, 32, 20, log=logs.append, state=state)]
        )
    assert state["final_batch_size"] == 4 and fake.batches[:4] == [20, 16, 8, 4]
    assert fake.rows == len(TEXTS)  # forward passes = unique texts: the OOM hits the first (longest) batch
    assert any("halved to 4" in line for line in logs)
    for i in (3, 44):
        np.testing.assert_allclose(got[i], model.encode([TEXTS[i]])[0], atol=1e-5)


@pytest.mark.slow
def test_other_errors_and_oom_at_batch_one_propagate(model):
    class Broken:
        def encode(self, texts, **kwargs):
            raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        list(embed.encode_transformer(Broken(), TEXTS, 8))
    with OOMAbove(model, limit=0), pytest.raises(RuntimeError, match="out of memory"):
        list(embed.encode_transformer(model, TEXTS, 4))


@pytest.mark.slow
def test_embed_dataset_tiny_model_metadata(tmp_path, tiny_dir, model, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    (tiny_dir / ".tecb_revision").write_text("0" * 40 + "\n")
    texts = write_texts(tmp_path / "texts.parquet", TEXTS)
    out = tmp_path / "emb" / "D.parquet"
    spec = {"kind": "tiny-bert", "path": str(tiny_dir), "batch_size": 3}
    timings = tmp_path / "timings" / "embed" / "D.json"
    meta = embed.embed_dataset(
        embed.EmbedJob.from_spec(texts, out, spec, {"device": "cpu", "batch_size": 32}, seed=42, timings=timings),
        log=lambda *a: None,
    )
    import os

    assert "HF_HUB_OFFLINE" not in os.environ  # no process-wide changes: the workflow's script sets it
    vectors, stored = read_vectors(out)
    assert stored == json.loads(json.dumps(meta))
    assert stored["n_texts"] == stored["n_texts_encoded"] == len(TEXTS)
    assert stored["dim"] == vectors.shape[1] == 64
    assert stored["revision"] == "0" * 40 and stored["pooling"] == "mean" and stored["device"] == "cpu"
    assert stored["dtype"] == "float32" and stored["batch_size"] == 3 and stored["final_batch_size"] == 3
    assert stored["max_seq_length"] == 512 and "torch" in stored["versions"]
    assert not [k for k in stored if "second" in k]  # no durations in the file: reruns give the same bytes
    took = json.loads(timings.read_text())
    assert took["seconds"] >= 0 and took["n_texts"] == len(TEXTS)
    first = out.read_bytes()
    embed.embed_dataset(
        embed.EmbedJob.from_spec(texts, out, spec, {"device": "cpu", "batch_size": 32}, seed=42), log=lambda *a: None
    )
    assert out.read_bytes() == first
    np.testing.assert_allclose(vectors[17], model.encode([TEXTS[17]])[0], atol=1e-5)
    assert not [p for p in out.parent.iterdir() if p.name != out.name]  # no scratch left behind


def _lsa_by_hand(texts, k):
    """TF-IDF + LSA from their definitions, without scikit-learn: lower-cased words of 2+ characters and their
    bigrams; weight (1 + ln tf) * (ln((1 + n) / (1 + df)) + 1), each row scaled to unit length; then numpy's
    exact SVD, the texts' coordinates U_k S_k."""
    import math
    import re
    from collections import Counter

    docs = []
    for text in texts:
        words = re.findall(r"(?u)\b\w\w+\b", text.lower())
        docs.append(Counter(words + [f"{a} {b}" for a, b in zip(words, words[1:])]))
    vocabulary = sorted(set().union(*docs))
    df = {w: sum(w in d for d in docs) for w in vocabulary}
    n = len(texts)
    m = np.array(
        [
            [(1 + math.log(d[w])) * (math.log((1 + n) / (1 + df[w])) + 1) if w in d else 0.0 for w in vocabulary]
            for d in docs
        ]
    )
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    return u[:, :k] * s[:k], s[:k]


def test_embed_dataset_tfidf(tmp_path):
    texts = write_texts(tmp_path / "texts.parquet", TEXTS)
    out = tmp_path / "tfidf.parquet"
    embed.embed_dataset(
        embed.EmbedJob.from_spec(texts, out, {"kind": "tfidf", "dim": 4}, {}, seed=42), log=lambda *a: None
    )
    vectors, meta = read_vectors(out)
    assert vectors.shape == (len(TEXTS), 4) and meta["n_texts_encoded"] == len(TEXTS) and meta["model"] == "tfidf"
    # the LSA of the texts' TF-IDF computed by hand: the same singular values (the vectors' column norms) and the
    # same inner products between texts (axes have no sign). Randomised SVD is close, not exact: 4 dimensions,
    # where the 4th and 5th singular values (1.16, 1.01) are well apart; plain tf, unigrams only or unscaled
    # rows are off by 0.3, 0.6 and 60 in the inner products
    expected, singular_values = _lsa_by_hand(TEXTS, 4)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=0), singular_values, rtol=1e-3)
    np.testing.assert_allclose(vectors @ vectors.T, expected @ expected.T, atol=0.02)
    again = tmp_path / "again.parquet"
    embed.embed_dataset(
        embed.EmbedJob.from_spec(texts, again, {"kind": "tfidf", "dim": 4}, {}, seed=42), log=lambda *a: None
    )
    np.testing.assert_array_equal(vectors, read_vectors(again)[0])


def test_interrupted_write_leaves_nothing(tmp_path):
    out = tmp_path / "x.parquet"

    def batches():
        yield 0, np.ones((10, 4), np.float32)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        embed.write_embeddings(out, batches(), 20, {})
    assert list(tmp_path.iterdir()) == []


def test_short_or_unordered_batches_fail_and_leave_nothing(tmp_path):
    out = tmp_path / "x.parquet"
    with pytest.raises(ValueError, match="encoded 10 texts, expected 20"):
        embed.write_embeddings(out, iter([(0, np.ones((10, 4), np.float32))]), 20, {})
    with pytest.raises(ValueError, match="text_id order"):
        embed.write_embeddings(out, iter([(5, np.ones((10, 4), np.float32))]), 10, {})
    assert list(tmp_path.iterdir()) == []


def test_existing_output_survives_failed_rewrite(tmp_path):
    out = tmp_path / "x.parquet"
    embed.write_embeddings(out, iter([(0, np.ones((3, 2), np.float32))]), 3, {"run": 1})
    with pytest.raises(ValueError):
        embed.write_embeddings(out, iter([(0, np.zeros((2, 2), np.float32))]), 3, {"run": 2})
    assert read_vectors(out)[1]["run"] == 1


def test_io_reader_reads_our_file(tmp_path):
    from tecb import io

    out = tmp_path / "x.parquet"
    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    embed.write_embeddings(out, iter([(0, v[:3]), (3, v[3:])]), 4, {"model": "m"})
    matrix, meta = io.read_embeddings(out)
    np.testing.assert_array_equal(matrix, v)
    assert meta["model"] == "m" and meta["dim"] == 3 and meta["n_texts_encoded"] == 4
    assert pq.ParquetFile(out).metadata.num_row_groups == 2  # streamed: one row group per batch


def test_half_precision_load_and_cpu_stays_float32(tmp_path, tiny_dir):
    import torch

    half = embed.load_sentence_transformer(str(tiny_dir), loading=embed.Loading(dtype="bfloat16"), device="cpu")
    assert next(half.parameters()).dtype == torch.bfloat16
    texts = write_texts(tmp_path / "texts.parquet", TEXTS[:5])
    meta = embed.embed_dataset(
        embed.EmbedJob.from_spec(
            texts,
            tmp_path / "o.parquet",
            {"kind": "local", "path": str(tiny_dir), "dtype": "bfloat16"},
            {"device": "cpu", "batch_size": 32},
            seed=42,
        ),
        log=lambda *a: None,
    )
    assert meta["dtype"] == "float32" and meta["device"] == "cpu"  # fp16/bf16 apply on CUDA only
