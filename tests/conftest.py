"""Shared fixtures: running the workflow in a temporary copy of the project."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ["Snakefile", "workflow", "config", "envs", "profiles", "reference"]
SHARED = ROOT.parent / "shared"  # present beside the checkout in CI; tests using it skip without it


def copy_project(dest: Path) -> Path:
    """Copy what a user clones (Snakefile, workflow/, config/, profiles/, reference/) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, dest / name)
    return dest


def run_snakemake(workdir: Path, *args: str, check: bool = True, timeout: int = 900, env: dict | None = None):
    """Run ``python -m snakemake`` in ``workdir``; return the CompletedProcess (stdout+stderr in .stdout)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-6000:]}")
    return proc


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """The offline demo, run once per test session in a fresh copy of the project; yields its directory."""
    workdir = copy_project(tmp_path_factory.mktemp("demo"))
    run_snakemake(workdir, "--configfile", "config/demo.yaml", "--cores", "2", "--resources", "gpu=1")
    return workdir
