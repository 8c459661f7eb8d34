"""The scripts in benchmarks/ run as ``python benchmarks/X.py``, which puts the folder first on sys.path: no script
may be named like a module that a library imports, even an optional one it tries (numba tries ``coverage``: a
script of that name once broke CI's UMAP tests)."""

from __future__ import annotations

import importlib.machinery
import subprocess
import sys

import pytest
from conftest import ROOT

BENCH = ROOT / "benchmarks"


@pytest.mark.slow
def test_no_script_is_found_by_the_imports_of_the_libraries_the_scripts_use():
    stems = {p.stem for p in BENCH.glob("*.py")}
    assert not stems & set(sys.stdlib_module_names)
    others = [p for p in sys.path if p and p != str(BENCH)]
    assert not [s for s in stems if importlib.machinery.PathFinder.find_spec(s, others)]
    code = (
        "import os, sys, numba, umap, hdbscan, river, sklearn, pandas, pyarrow.parquet\n"
        "print(sorted(k for k, m in sys.modules.items() if (getattr(m, '__file__', None) or '').startswith(os.getcwd())))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=BENCH, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert found == "[]"
