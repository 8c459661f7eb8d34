"""benchmarks/test_durations.py: pytest's --durations pieces summed per test file, and the kept table is the one
it renders from the kept log (benchmarks/test_durations_4e44832.txt, the baseline docs/testing.md quotes)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BENCH = ROOT / "benchmarks"


def _from_benchmarks(module) -> bool:
    return BENCH in Path(getattr(module, "__file__", None) or "/").parents


def _script(name: str):
    """The benchmark script ``benchmarks/{name}.py`` as a module (the folder is not a package), loaded with the
    folder first on sys.path as ``python benchmarks/{name}.py`` has it, for its imports of sibling scripts. The
    worker's sys.path and sys.modules are left as they were: with the folder on the path, a later ``import
    coverage`` in numba found a script of that name, and the worker's UMAP tests failed."""
    path_before, modules_before = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_script", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path_before
        for loaded in set(sys.modules) - modules_before:
            if _from_benchmarks(sys.modules[loaded]):
                del sys.modules[loaded]
    return module


def test_loading_a_script_leaves_the_workers_imports_as_they_were():
    path_before = list(sys.path)
    assert _script("suite_cpu").rule_of  # suite_cpu imports its sibling job_overhead
    assert sys.path == path_before
    assert not [k for k, m in sys.modules.items() if _from_benchmarks(m)]


@pytest.mark.slow
def test_no_script_is_found_by_the_imports_of_the_libraries_the_scripts_use():
    """``python benchmarks/X.py`` puts the folder first on sys.path, so a script named like a module that a
    library imports, even an optional one it tries (numba tries ``coverage``), is found in its place."""
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


def _module():
    return _script("test_durations")


def test_pieces_are_summed_per_file():
    lines = [
        "12.50s setup    tests/test_a.py::test_x",
        " 2.25s call     tests/test_a.py::test_x[p-1]",
        "1.00s teardown tests/test_b.py::test_y",
        "0.50s call     tests/test_a.py::test_z",
        "=== 3 passed in 20.00s ===",
        "not a piece: 9.99s",
    ]
    seconds, pieces, every = _module().per_file(lines)
    assert seconds == {"tests/test_a.py": 15.25, "tests/test_b.py": 1.0}
    assert pieces == {"tests/test_a.py": 3, "tests/test_b.py": 1} and len(every) == 4


def test_a_log_without_durations_gives_its_summary_and_cpu(tmp_path):
    log = tmp_path / "ci.txt"
    log.write_text(
        "1 failed, 9 passed, 2 warnings in 120.50s (0:02:00)\n"
        "\tUser time (seconds): 100.00\n\tSystem time (seconds): 20.00\n"
    )
    text = _module().render(log, title="CI", top=5)
    assert "1 failed, 9 passed, 2 warnings in 120.50 s." in text and "(`/usr/bin/time -v`): 2.0 min." in text
    assert "|" not in text


# --- benchmarks/suite_cpu.py: the suite's CPU per kind of process and per test file ---------------------------


def _suite_cpu():
    return _script("suite_cpu")


def test_a_process_record_is_kept_as_its_rule_and_test_file():
    suite = _suite_cpu()
    job = {"argv0": "/tmp/p/.snakemake/scripts/tmpab12cd.cluster.py", "test": "tests/test_a.py::test_x (call)"}
    seconds = {"total": 2.0, "startup": 0.1, "imports": 1.5, "compile": 0.0}
    assert suite.reduce_record(job | seconds) == {"kind": "cluster", "file": "tests/test_a.py"} | seconds
    worker = suite.reduce_record({"argv0": "-c", "test": ""} | seconds)
    assert worker["kind"] == suite.WORKER and worker["file"] == ""
    text = suite.render([suite.reduce_record(job | seconds), worker], title="T")
    assert "in 2 processes." in text and "Workflow jobs: 1 processes, 2 s (0.0 min), 2 s of it overhead (80 %)" in text
    assert (
        "| cluster | 1 | 2.0 | 50.0% | 1.6 | 80 |" in text and "| `tests/test_a.py` | 2.0 | 50.0% | cluster 2 |" in text
    )


def test_the_kept_suite_profile_is_rendered_from_its_records():
    title = (
        "CPU of the test suite per process and per test file: profiled clean-clone run of 9fd27c6 "
        "(stop 53, before real runs became forks)"
    )
    suite = _suite_cpu()
    rendered = suite.render(suite.read_records(str(BENCH / "suite_cpu_9fd27c6.jsonl.gz")), title=title)
    assert rendered == (BENCH / "suite_cpu_9fd27c6.md").read_text()


def test_the_kept_table_after_the_forked_runs_is_rendered_from_its_log():
    title = (
        "Test time per file: .ci/run on a clean clone of 4e44832 (stop 53: real runs as forks, units in measured order)"
    )
    rendered = _module().render(BENCH / "test_durations_4e44832.txt", title=title, top=25)
    assert rendered == (BENCH / "test_durations_by_file_4e44832.md").read_text()
