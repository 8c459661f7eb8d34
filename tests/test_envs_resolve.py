"""Each conda environment's pip list resolves, on PyPI, to exactly its pins (python 3.11, this venv's).

What this cannot check: conda itself (the channels, the `python=3.11` and `pip` conda packages, building the
env); that needs a machine that reaches conda-forge (`snakemake --sdm conda` on `.test`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENVS = sorted((ROOT / "envs").glob("*.yaml"))
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^\s;]+)$")


def pip_lines(env_file: Path) -> list[str]:
    deps = yaml.safe_load(env_file.read_text())["dependencies"]
    for dep in deps:
        if isinstance(dep, dict) and "pip" in dep:
            return [str(line) for line in dep["pip"]]
    return []


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the envs pin python 3.11")
@pytest.mark.parametrize("env_file", ENVS, ids=[e.stem for e in ENVS])
def test_env_pip_list_resolves_to_its_pins(env_file, tmp_path):
    lines = pip_lines(env_file)
    assert lines, f"{env_file.name}: no pip list"
    pins = {}
    for line in lines:
        match = PIN.match(line.strip())
        assert match, f"{env_file.name}: {line!r} is not pinned as NAME==VERSION"
        pins[canonical(match.group(1))] = match.group(3)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(lines) + "\n")
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        + ["--report", str(report), "-r", str(requirements)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"{env_file.name} does not resolve:\n{result.stderr[-3000:]}"
    resolved = {
        canonical(item["metadata"]["name"]): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    for name, version in pins.items():
        # PEP 440: ==2.13.0 is met by a local build 2.13.0+cpu (the CPU torch wheel); the public version must match
        assert resolved.get(name, "").split("+")[0] == version, (
            f"{env_file.name}: {name}=={version} resolved to {resolved.get(name)}"
        )
