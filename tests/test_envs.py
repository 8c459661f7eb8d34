"""The conda environments of the rules (envs/*.yaml, used by `snakemake --sdm conda`) pin the same versions as
requirements.txt (what the tests run against), and every rule names an environment that exists.
`make check-envs` runs this file alone."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*([A-Za-z0-9_.\-\[\]]+)\s*==\s*([^\s;#]+)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()


def requirement_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = PIN.match(line)
        if m:
            pins[_norm(m.group(1))] = m.group(2)
    m = re.search(r"torch==([^\s]+)", (ROOT / "Makefile").read_text())  # torch is pinned in the Makefile
    if m:
        pins["torch"] = m.group(1)
    return pins


def env_pins(path: Path) -> tuple[dict[str, str], list[str]]:
    """``{package: version}`` of an env file's pip list, and the entries that are not pinned with ``==``."""
    spec = yaml.safe_load(path.read_text())
    pins, unpinned = {}, []
    for dep in spec.get("dependencies", []):
        if isinstance(dep, dict):
            for item in dep.get("pip", []):
                m = PIN.match(item)
                if m:
                    pins[_norm(m.group(1))] = m.group(2)
                else:
                    unpinned.append(item)
    return pins, unpinned


ENV_FILES = sorted((ROOT / "envs").glob("*.yaml"))


@pytest.mark.parametrize("env_file", ENV_FILES, ids=[p.stem for p in ENV_FILES])
def test_env_pins_match_requirements(env_file):
    required = requirement_pins()
    pins, unpinned = env_pins(env_file)
    assert pins, f"{env_file.name}: no pinned pip packages"
    assert not unpinned, f"{env_file.name}: not pinned with ==: {unpinned}"
    wrong = {}
    for name, version in pins.items():
        if name in required:
            expected = required[name]
        else:  # a dependency of a requirement, pinned in the env: the version installed beside the requirements
            try:
                expected = metadata.version(name)
            except metadata.PackageNotFoundError:
                expected = "(not installed here)"
        if version != expected:
            wrong[name] = f"{version} in {env_file.name}, {expected} in requirements.txt / the venv"
    assert not wrong, wrong


def test_every_rule_names_an_existing_env():
    rules = sorted((ROOT / "workflow" / "rules").glob("*.smk"))
    named = set()
    for smk in rules:
        for rel in re.findall(r'conda:\s*\n\s*"([^"]+)"', smk.read_text()):
            path = (smk.parent / rel).resolve()
            assert path.is_file(), f"{smk.name}: conda env {rel} does not exist"
            named.add(path)
    assert named, "no rule names a conda env"
    assert named <= {p.resolve() for p in ENV_FILES}


def test_pin_parsing():
    pins = requirement_pins()
    assert pins["snakemake"] and pins["torch"]
    assert _norm("sentence_transformers") == _norm("Sentence-Transformers") == "sentence-transformers"
