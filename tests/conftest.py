"""Shared fixtures: running the workflow in a temporary copy of the project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ["Snakefile", "workflow", "config", "envs", "profiles", "reference", ".test"]
SHARED = ROOT.parent / "shared"  # present beside the checkout in CI; tests using it skip without it


def copy_project(dest: Path) -> Path:
    """Copy what a user clones (Snakefile, workflow/, config/, profiles/, reference/; src/ linked) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = ROOT / name
        if src.is_dir():
            outputs = ("results", "resources", "logs", ".snakemake") if name == ".test" else ()  # of earlier runs
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", *outputs))
        elif src.exists():
            shutil.copy2(src, dest / name)
    # the library the jobs import (the Snakefile puts {workflow.basedir}/src first on sys.path and PYTHONPATH):
    # this checkout's, not whatever `pip install -e` points at
    (dest / "src").symlink_to(ROOT / "src", target_is_directory=True)
    return dest


# Whether the running test is marked `workflow` (set per test by the autouse fixture below): run_snakemake refuses
# to run in a test without the mark, so `make test-fast` (-m "not workflow") never starts snakemake.
_CURRENT_TEST = {"workflow": True}


@pytest.fixture(autouse=True)
def _note_workflow_marker(request):
    _CURRENT_TEST["workflow"] = request.node.get_closest_marker("workflow") is not None
    yield
    _CURRENT_TEST["workflow"] = True


def run_snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None):
    """Run ``python -m snakemake`` in ``workdir``; return the CompletedProcess (stdout+stderr in .stdout).

    No wall-clock limit: a slow machine must not fail a correct run (a hung run is stopped by the CI job's limit).
    Only for tests marked ``@pytest.mark.workflow``."""
    if not _CURRENT_TEST["workflow"]:
        raise AssertionError(
            "a test that runs snakemake must be marked @pytest.mark.workflow (make test-fast skips it)"
        )
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=full_env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-6000:]}")
    return proc


# The test suite's demo: config/demo.yaml with 5 of its 14 configurations, chosen so every algorithm, every
# reduction and both exact-Ward routes (raw = high-dimensional, reduced = low-dimensional) run once; the rest of
# the demo (6 datasets, 3 models, pre-training, MTEB v2, tables, figures, report) is as `make demo` runs it.
DEMO_TEST_CONFIGURATIONS = """configurations:  # tests/conftest.py: every algorithm and every reduction once
  - {algorithm: kmeans, reduction: none}
  - {algorithm: agglomerative, reduction: none}
  - {algorithm: agglomerative, reduction: umap}
  - {algorithm: hdbscan, reduction: pca_umap}
  - {algorithm: dbstream, reduction: pca}
"""


def shrink_demo_config(workdir: Path) -> None:
    """Replace the `configurations` list of ``workdir``'s config/demo.yaml by :data:`DEMO_TEST_CONFIGURATIONS`."""
    path = workdir / "config" / "demo.yaml"
    text, n = re.subn(r"^configurations:\n(?:  - .*\n)+", DEMO_TEST_CONFIGURATIONS, path.read_text(), flags=re.M)
    if n != 1:
        raise AssertionError("config/demo.yaml has no `configurations:` list of `  - {...}` lines to replace")
    path.write_text(text)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """The offline demo with :data:`DEMO_TEST_CONFIGURATIONS`, run once per test session in a fresh copy of the
    project; yields its directory. Outputs are under ``results/demo/`` (config/demo.yaml sets ``run: demo``);
    tests read the configurations from the copy's config/demo.yaml."""
    workdir = copy_project(tmp_path_factory.mktemp("demo"))
    shrink_demo_config(workdir)
    _CURRENT_TEST["workflow"] = True  # a session fixture: set up before the requesting test's own fixtures
    run_snakemake(workdir, "--configfile", "config/demo.yaml", "--cores", "2", "--resources", "gpu=1")
    return workdir
