"""Declared memory: reduce jobs' mem_mb and the resources check's verdicts (benchmarks/check_resources.py)."""

import importlib.util
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

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
