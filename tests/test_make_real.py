"""`make real` checks its two data files before it installs anything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_real_names_a_missing_data_file_before_installing(tmp_path):
    for name in ("Makefile", "requirements.txt", "requirements-test.txt", "requirements-real.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    proc = subprocess.run(["make", "real"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "resources/real/germeval2019/blurbs_dev.txt is missing" in proc.stdout + proc.stderr
    assert not (tmp_path / ".venv").exists()  # nothing installed
    # with both files, the plan installs next (dry run: nothing runs)
    for path in ("resources/real/germeval2019/blurbs_dev.txt", "resources/real/10kgnad/test.csv"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n")
    plan = subprocess.run(["make", "-n", "real"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert plan.index("blurbs_dev.txt") < plan.index("setup")
