"""Declared memory: reduce jobs' mem_mb and the resources check's verdicts (benchmarks/check_resources.py)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tecb.cluster import algorithms, reduce

ROOT = Path(__file__).resolve().parents[1]


def _inputs(tmp_path, n=300, dim=16):
    splits = pa.table({"split": pa.array([0] * n, pa.int16()), "text_id": pa.array(range(n), pa.int32())})
    pq.write_table(splits, tmp_path / "splits.parquet")
    vectors = np.zeros((n, dim), dtype=np.float32)
    emb = pa.table({"embedding": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dim)})
    pq.write_table(emb, tmp_path / "emb.parquet")
    return tmp_path / "splits.parquet", tmp_path / "emb.parquet"


def test_reduce_jobs_declare_headroom_and_umaps_imports(tmp_path):
    splits, emb = _inputs(tmp_path)
    pca = reduce.job_memory_mb({"method": "pca", "n_components": 2}, splits, emb)
    umap = reduce.job_memory_mb({"method": "umap", "n_components": 2}, splits, emb)
    assert pca >= algorithms.HEADROOM * 500  # Python and imports, with the headroom
    assert umap - pca >= algorithms.HEADROOM * reduce.UMAP_IMPORTS_MB
    # the demo's largest UMAP job peaked at 526 MB: its declaration holds with the check's 1.25 margin
    assert umap >= 1.25 * 526
    assert reduce.job_memory_mb({"method": "umap"}, tmp_path / "missing.parquet", emb) == 500  # before the inputs


def test_check_resources_verdicts():
    spec = importlib.util.spec_from_file_location("check_resources", ROOT / "benchmarks" / "check_resources.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    assert check.verdict({"declared": 1250, "peak": 1000.0}) == "ok"
    assert check.verdict({"declared": 1249, "peak": 1000.0}) == "FAIL"
    assert check.verdict({"declared": None, "peak": 10.0}).startswith("FAIL")
    assert check.verdict({"declared": 500, "peak": None}) == "no measurement"


def _grown_mb(setup: str, step: str, *, total: bool = False) -> float:
    """MB the peak RSS (VmHWM: ru_maxrss outlives exec) of a fresh Python grows by while ``step`` runs (after
    ``setup``): a job's own growth; ``total``: the whole peak, imports included."""
    hwm = "int(next(x for x in open('/proc/self/status') if x.startswith('VmHWM')).split()[1])"
    code = f"{setup}\nr0 = {0 if total else hwm}\n{step}\nprint(({hwm} - r0) / 1024)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def test_reading_a_points_file_fits_the_declared_share(tmp_path):
    """A cluster or reduce job reads its points file whole at ~4.5 x the file plus ~100 MB of Arrow's first pool
    blocks (within BASE_MB with the ~200 MB of imports): the declaration counts FILE_READ_FACTOR x the file. Twice
    the file, the count before, is below what a 31 MB file takes (at paper scale the k-means job on raw Reddit S2S
    peaked at 1,049 MB of 1,197 declared)."""
    from tecb import io

    n, dim = 10_000, 768
    vectors = np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)
    table = pa.table(
        {
            "text_id": pa.array(range(n), pa.int32()),
            "embedding": pa.FixedSizeListArray.from_arrays(vectors.ravel(), dim),
        },
        schema=io.embedding_schema(dim, {"n_texts": n}),
    )
    pq.write_table(table, tmp_path / "emb.parquet")
    file_mb = (tmp_path / "emb.parquet").stat().st_size / 1e6
    grown = _grown_mb(
        "from tecb import io\nimport pyarrow.parquet", f"io.read_embeddings({str(tmp_path / 'emb.parquet')!r})"
    )
    assert 2 * file_mb + 120 < grown <= algorithms.FILE_READ_FACTOR * file_mb + 120


def test_tfidf_vocabulary_size_is_the_vectorizers():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from tecb.embed.job import tfidf_vocabulary_size

    texts = [
        "Über die Straße, ging er: a b ab äb ÄB straße",
        "x",
        "",
        "Ein Buch über Bücher über Bücher.",
        "zola\u0301 ü",
    ]
    assert tfidf_vocabulary_size(texts) == len(TfidfVectorizer(ngram_range=(1, 2)).fit(texts).vocabulary_) == 23


def test_tfidf_embed_declaration_covers_the_svd_of_texts_and_vocabulary(tmp_path):
    """TF-IDF's TruncatedSVD holds (texts + vocabulary) x (dim + 10) float64 blocks: 3,000 texts of 8 words from
    5,000 have a vocabulary 8x the texts, so an estimate of the texts alone falls short; the declared estimate
    holds. At paper scale the TF-IDF embed_batch job (undeclared: Snakemake's 1,000 MB) peaked at 1,438 MB."""
    from tecb.embed.job import BASE_MB, HEADROOM, memory_estimate_mb, tfidf_vocabulary_size

    assert HEADROOM == algorithms.HEADROOM  # the same margin as the cluster and reduce jobs'
    rng = np.random.default_rng(0)
    words = [f"wort{i}" for i in range(5000)]
    texts = [" ".join(rng.choice(words, 8)) for _ in range(3000)]
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    grown = _grown_mb(
        f"import json\nfrom tecb.embed.encode import tfidf_vectors\nimport sklearn.decomposition\n"
        f"texts = json.load(open({str(tmp_path / 'texts.json')!r}))",
        "tfidf_vectors(texts, dim=256, seed=0)",
    )
    settings, text_bytes = {"kind": "tfidf", "dim": 256}, sum(len(t) + 4 for t in texts)
    vocabulary = tfidf_vocabulary_size(texts)
    assert vocabulary > 8 * len(texts)
    assert memory_estimate_mb(settings, n_texts=3000, text_bytes=text_bytes) - BASE_MB < grown
    assert grown <= memory_estimate_mb(settings, n_texts=3000, text_bytes=text_bytes, vocabulary=vocabulary) - BASE_MB
    # the paper-scale job's largest dataset (RedditClusteringP2P: 40,305 texts, 35.6 MB, 16,356 n-grams)
    paper = memory_estimate_mb({"kind": "tfidf", "dim": 768}, n_texts=40_305, text_bytes=35_600_000, vocabulary=16_356)
    assert HEADROOM * paper >= 1.25 * 1438


def test_embed_jobs_declare_by_kind_and_texts(tmp_path):
    from tecb import io
    from tecb.embed.job import BASE_MB, TORCH_BASE_MB, job_memory_mb

    texts = [f"Text {i} über Bücher" for i in range(200)]
    io.write_texts(texts, tmp_path / "texts.parquet", provenance={})
    tfidf = {"kind": "tfidf", "dim": 64}
    assert job_memory_mb(tfidf, texts=[tmp_path / "missing.parquet"]) == BASE_MB  # before the texts exist
    assert job_memory_mb(tfidf, texts=tmp_path / "texts.parquet") > algorithms.HEADROOM * BASE_MB
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights.bin").write_bytes(b"0" * 50_000_000)
    bert = job_memory_mb({"kind": "tiny-bert"}, texts=[tmp_path / "texts.parquet"], model=[tmp_path / "model"])
    assert bert >= algorithms.HEADROOM * (TORCH_BASE_MB + 100)  # torch, and the weights twice


@pytest.mark.slow
def test_transformer_embed_declaration_covers_long_texts(tmp_path):
    """A transformer's embed job holds the tokenizer's encodings of a 4,096-text chunk and a heap its forward
    passes leave fragmented, growing with the texts it encodes: 4,096 TenKGnad P2P-like texts (10.7 MB, the
    paper-scale generator's) fail the resources check (declared >= 1.25 x peak) with the declaration before issue
    56 (1.3 x (1,000 MB + 10 x their bytes + twice the model)) and pass it now (:data:`tecb.embed.job.ENCODE_FACTOR`);
    the paper-scale tiny-BERT embed_batch job peaked at 1,980 MB of the 1,771 MB then declared."""
    from tecb import io
    from tecb.data import paper_scale
    from tecb.embed.job import TORCH_BASE_MB, job_memory_mb, memory_estimate_mb
    from tecb.embed.spec import model_files
    from tecb.embed.tiny_bert import create_tiny_bert

    rows = paper_scale.build(paper_scale.table1()["TenKGnadClusteringP2P"], seed=42)
    texts = list(dict.fromkeys(rows["text"]))[:4096]
    io.write_texts(texts, tmp_path / "texts.parquet", provenance={})
    model = create_tiny_bert(tmp_path / "tiny", texts, seed=0)
    text_bytes, model_bytes = sum(len(t.encode()) for t in texts), sum(os.path.getsize(p) for p in model_files(model))
    peak = _grown_mb(
        "import torch\ntorch.set_num_threads(2)\nfrom tecb.embed.encode import EmbedJob, embed_dataset\n"
        f"job = EmbedJob.from_spec({str(tmp_path / 'texts.parquet')!r}, {str(tmp_path / 'e.parquet')!r}, "
        f"{{'kind': 'tiny-bert', 'path': {str(model)!r}}}, {{'device': 'cpu', 'batch_size': 32}}, seed=None)",
        "embed_dataset(job, log=lambda *a: None)",
        total=True,  # torch's imports are the base's share
    )
    before = TORCH_BASE_MB + (10 * text_bytes + 2 * model_bytes) / 1e6  # the estimate before issue 56
    settings = {"kind": "tiny-bert"}
    now = memory_estimate_mb(settings, n_texts=len(texts), text_bytes=text_bytes, model_bytes=model_bytes)
    declared = job_memory_mb(settings, texts=tmp_path / "texts.parquet", model=model)
    assert declared >= algorithms.HEADROOM * now - 1
    # benchmarks/check_resources.py's verdict: declared >= 1.25 x peak (the peak varies by a few % from run to run)
    assert algorithms.HEADROOM * before < 1.25 * peak <= declared


def test_embed_shard_declares_its_rows(tmp_path):
    """An embed_shard job embeds its rows' texts (reading the whole column): declared by their bytes, far below the
    whole dataset's embed job's for a shard of short texts."""
    from tecb import io
    from tecb.embed.job import ENCODE_FACTOR, TEXT_FACTOR, TORCH_BASE_MB, job_memory_mb

    texts = [f"kurz {i}" for i in range(900)] + [f"{i} " + "lang " * 2000 for i in range(100)]  # long: 900..999
    io.write_texts(texts, tmp_path / "texts.parquet", provenance={})
    settings, path = {"kind": "tiny-bert"}, tmp_path / "texts.parquet"
    whole = job_memory_mb(settings, texts=path)
    head = job_memory_mb(settings, texts=path, rows=(0, 900))
    tail = job_memory_mb(settings, texts=path, rows=(900, 1000))
    long_bytes = sum(len(t) + 4 for t in texts[900:])
    assert head < algorithms.HEADROOM * (TORCH_BASE_MB + 2 + long_bytes / 1e6)  # the column once, its rows' own
    assert tail >= algorithms.HEADROOM * (TORCH_BASE_MB + (TEXT_FACTOR + ENCODE_FACTOR) * long_bytes / 1e6)
    assert head < whole < tail  # the whole column besides its rows


@pytest.mark.slow
def test_build_dataset_declaration_covers_a_paper_scale_source(tmp_path):
    """A build_dataset job holds its raw file's rows and their text several times over: TenKGnad P2P as the
    paper-scale generator writes it (48,463 rows, 127 MB of text) peaks within the estimate and its declaration
    with the check's 1.25 margin (the flat 1,000 MB default held the paper-scale jobs by 1.17 at the tightest)."""
    from tecb.data import paper_scale
    from tecb.data.datasets import BUILD_HEADROOM, build_memory_mb

    path = paper_scale.write_all(tmp_path, seed=42, datasets=["TenKGnadClusteringP2P"])["TenKGnadClusteringP2P"]
    spec = {"source": "s", "split_column": "split"}
    peak = _grown_mb(
        "from tecb.data import datasets\nimport pyarrow, numpy",
        f"datasets.build_from_config('D', {spec!r}, {{'s': {{'builder': 'custom', 'path': {str(path)!r}}}}}, "
        f"{str(path)!r}, seed=42)",
        total=True,
    )
    declared = build_memory_mb(path)
    assert peak <= declared / BUILD_HEADROOM and declared >= 1.25 * peak
    assert build_memory_mb(tmp_path / "missing.parquet") == int(BUILD_HEADROOM * 200)  # before the download


_REPLICATES = """
import numpy as np
from tecb.report.bootstrap import TablePairs
rng = np.random.default_rng(0)
pool, texts, labels, clusters = {shape}
members = rng.choice(pool, texts, replace=False)
key = ("m", "d", "none", "kmeans")
split = (members, rng.integers(0, labels, texts), rng.integers(0, clusters, (1, texts)))
pairs = TablePairs({{key: {{0: split}}}}, {{"d": np.arange(pool)}}, seed=1)
"""


@pytest.mark.parametrize(
    "shape",
    [(20_000, 500, 5, 5), (9_000, 9_000, 5, 5), (1_000, 1_000, 100, 100)],
    ids=["pool", "split", "cells"],
)
def test_bootstrap_memory_estimate_covers_the_measured_growth(shape):
    """The tables job's bootstrap (issue 56: the paper-scale tables job peaked at 1,388 MB on Snakemake's default
    1,000) grows with the pool's weights, the largest split and its contingency tables: one key's replicates
    measured in a fresh process where each term leads, against the estimate (no more than 30 % over).
    """
    from tecb.report.bootstrap import memory_estimate

    pool, texts, labels, clusters = shape
    grown = _grown_mb(_REPLICATES.format(shape=shape), "pairs._replicates(key)")
    estimate = memory_estimate(pool=pool, splits=[(texts, labels * clusters)]) / 2**20
    assert grown <= estimate <= 1.3 * grown


def _tables_inputs(tmp_path, pool, texts, labels):
    rng = np.random.default_rng(0)
    rows = [(0, t, t % labels) for t in range(texts)] + [(1, t, t % labels) for t in range(pool - texts, pool)]
    split, text_id, label = map(list, zip(*rows))
    pq.write_table(pa.table({"split": split, "text_id": text_id, "label": label}), tmp_path / "splits.parquet")
    cluster = list(rng.integers(0, labels, len(rows)))
    pq.write_table(pa.table({"split": split, "text_id": text_id, "cluster": cluster}), tmp_path / "labels.parquet")
    return {"d": tmp_path / "splits.parquet"}, [("d", tmp_path / "labels.parquet")]


def test_tables_job_declares_by_its_bootstrap_inputs(tmp_path):
    """The tables rule's mem_mb (tables_mem_mb, tables.smk): the house's headroom over Python and the largest
    key's bootstrap estimate, read from the splits and labels files; Snakemake's former default without them."""
    from tecb.report.bootstrap import TABLES_DEFAULT_MB, job_memory_mb, memory_estimate

    splits, labels = _tables_inputs(tmp_path, pool=3_000, texts=2_000, labels=20)
    assert job_memory_mb(splits, labels) == TABLES_DEFAULT_MB  # a small run: the old declaration stays
    # at 10,000 replicates: split 0 (2,000 texts, 20 labels x 20 clusters) of the pool of 3,000 sets the estimate
    estimate = memory_estimate(pool=3_000, splits=[(2_000, 20 * 20)], n_resamples=10_000)
    declared = job_memory_mb(splits, labels, n_resamples=10_000)
    assert declared == int(algorithms.HEADROOM * (algorithms.BASE_MB + -(-estimate // 1_000_000))) > TABLES_DEFAULT_MB
    assert job_memory_mb(splits, []) == TABLES_DEFAULT_MB  # tables.statistics.labels off
    assert job_memory_mb(splits, [("d", tmp_path / "missing.parquet")]) == TABLES_DEFAULT_MB  # before the inputs
    # the paper-scale tables job peaked at 1,388 MB on the flat 1,000 (before the bootstrap drew and tabulated
    # in blocks); its largest key now (BlurbsClusteringP2P: 18,084 texts, splits up to 16,425, 93 x 93 cells)
    paper = memory_estimate(pool=18_084, splits=[(16_425, 93 * 93)])
    assert int(algorithms.HEADROOM * (algorithms.BASE_MB + -(-paper // 1_000_000))) == 1_523
