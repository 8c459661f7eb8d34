"""Tiny BERT: deterministic, a plain HF checkpoint that loads with mean pooling."""

import hashlib

from tecb.embed import encode as embed
from tecb.embed.tiny_bert import create_tiny_bert

CORPUS = ["Der Hund bellt.", "Die Katze schläft auf dem Sofa.", "Bücher über Sport und Kultur."] * 5


def digest(path):
    return hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()


def test_tiny_bert_is_deterministic_and_plain_checkpoint(tmp_path):
    a = create_tiny_bert(tmp_path / "a", CORPUS, seed=3, vocab_size=200)
    b = create_tiny_bert(tmp_path / "b", CORPUS, seed=3, vocab_size=200)
    assert digest(a) == digest(b) and (a / "vocab.txt").read_text() == (b / "vocab.txt").read_text()
    assert not (a / "modules.json").exists()
    model = embed.load_sentence_transformer(str(a), device="cpu")
    assert embed.pooling_mode(model) == "mean"
    assert model.encode(["Der Hund"]).shape == (1, 64)
    c = create_tiny_bert(tmp_path / "c", CORPUS, seed=4, vocab_size=200)
    assert digest(c) != digest(a)


def test_wordpiece_vocab_deterministic_and_bounded():
    from tecb.embed.tiny_bert import wordpiece_vocab

    v = wordpiece_vocab(CORPUS, 60)
    assert v == wordpiece_vocab(list(reversed(CORPUS)), 60)
    assert v[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and "##ü" in v and "ü" in v
    assert len(v) == 60 and len(set(v)) == 60


def test_tiny_bert_tokenizer_knows_its_vocabulary(tmp_path):
    """Regression: transformers 5 ignored `vocab_file=`, leaving 5 special tokens and every word [UNK]."""
    from transformers import AutoTokenizer

    from tecb.embed.tiny_bert import create_tiny_bert

    path = create_tiny_bert(tmp_path / "tiny", ["Die Kommissarin ermittelt am Tatort"] * 3, seed=42)
    tokenizer = AutoTokenizer.from_pretrained(path)
    lines = (path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert tokenizer.vocab_size == len(lines) > 5
    assert "[UNK]" not in tokenizer.tokenize("Die Kommissarin ermittelt")
