"""Tiny local models, so the whole workflow runs where no model hub can be reached.

:func:`create_tiny_bert` trains a small WordPiece vocabulary on a corpus and initialises a 2-layer
BERT from a config with a fixed seed. The result is a plain Hugging Face checkpoint (no
``modules.json``), so the embed stage loads it exactly like GBERT: through sentence-transformers,
with mean pooling.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tecb.io import atomic_dir


def create_tiny_bert(
    out_dir: str | Path,
    corpus: Iterable[str],
    seed: int = 42,
    vocab_size: int = 2000,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 2,
    max_position_embeddings: int = 512,
) -> Path:
    """Write a tiny, randomly initialised BERT checkpoint with its tokenizer into ``out_dir``."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        wordpiece = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
        wordpiece.train_from_iterator(list(corpus), vocab_size=vocab_size, min_frequency=1, show_progress=False)
        wordpiece.save_model(str(tmp))
        tokenizer = BertTokenizerFast(vocab_file=str(tmp / "vocab.txt"), do_lower_case=False,
                                      model_max_length=max_position_embeddings)
        tokenizer.save_pretrained(tmp)
        torch.manual_seed(seed)
        config = BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=hidden_size,
            num_hidden_layers=num_layers,
            num_attention_heads=num_heads,
            intermediate_size=4 * hidden_size,
            max_position_embeddings=max_position_embeddings,
        )
        BertModel(config).save_pretrained(tmp)
    return out_dir
