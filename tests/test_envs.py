"""The conda environments of the rules (envs/*.yaml, used by `snakemake --sdm conda`) pin the same versions as
requirements.txt (what the tests run against), every rule names an environment that exists, and each rule's
environment provides what its script imports (a static check of the imports).
`make check-envs` runs this file alone."""

from __future__ import annotations

import ast
import functools
import re
import sys
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
PER_MODEL = "# tecb: per-model environment"


@pytest.mark.parametrize("env_file", ENV_FILES, ids=[p.stem for p in ENV_FILES])
def test_env_pins_match_requirements(env_file):
    required = requirement_pins()
    pins, unpinned = env_pins(env_file)
    assert pins, f"{env_file.name}: no pinned pip packages"
    assert not unpinned, f"{env_file.name}: not pinned with ==: {unpinned}"
    if (
        PER_MODEL in env_file.read_text()
    ):  # a model's own env (issue 22.4): its own versions (tests/test_model_kinds.py)
        return
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


@pytest.mark.plan
def test_every_rule_names_an_existing_env(workflow_rules):
    named = set()
    for name, rule in workflow_rules["rules"].items():
        if rule["conda"]:
            path = ((ROOT / rule["snakefile"]).parent / rule["conda"]).resolve()
            assert path.is_file(), f"rule {name} ({rule['snakefile']}): conda env {rule['conda']} does not exist"
            named.add(path)
    assert named, "no rule names a conda env"
    assert named <= {p.resolve() for p in ENV_FILES}


def test_pin_parsing():
    pins = requirement_pins()
    assert pins["snakemake"] and pins["torch"]
    assert _norm("sentence_transformers") == _norm("Sentence-Transformers") == "sentence-transformers"


# --- each rule's environment provides what its script imports ----------------------------------------------

# import name -> distribution, where they differ (else the import name, normalised)
DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "umap": "umap-learn",
    "PIL": "pillow",
    "huggingface_hub": "huggingface-hub",
    "sentence_transformers": "sentence-transformers",
    "fastcluster": "fastcluster",
    "hdbscan": "hdbscan",
}
SRC = ROOT / "src"


def _module_level(body):
    """Statements run at import: the module's, with those inside if/try/with blocks (not in def or class)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _module_level(handler.body)


def imported_modules(source: str, module_level_only: bool) -> set[str]:
    """Absolute imports of a Python source (``from tecb.pkg import x`` counts as ``tecb.pkg.x``)."""
    tree = ast.parse(source)
    nodes = _module_level(tree.body) if module_level_only else ast.walk(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tecb = node.module.split(".")[0] == "tecb"
            names |= {f"{node.module}.{a.name}" for a in node.names} if tecb else {node.module}
    return names


def _tecb_file(module: str) -> Path | None:
    for path in (SRC / (module.replace(".", "/") + ".py"), SRC / module.replace(".", "/") / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def _file_imports(path: Path) -> tuple[frozenset, frozenset]:
    """A file's module-level imports and all its imports, parsed once per test session (~30 rules share them)."""
    text = path.read_text()
    return frozenset(imported_modules(text, module_level_only=True)), frozenset(imported_modules(text, False))


def third_party_imports(script: Path) -> dict[str, str]:
    """``{top-level package: where}`` a rule's script needs at import: its own module-level imports and those of
    every tecb module it reaches (followed through imports at any level, as the job may call them)."""
    needed, seen, todo = {}, set(), [script]
    while todo:
        path = todo.pop()
        top, every = _file_imports(path)
        for module in sorted(every):
            root = module.split(".")[0]
            if root == "tecb":
                found = _tecb_file(module) or _tecb_file(module.rpartition(".")[0])
                if found and found not in seen:
                    seen.add(found)
                    todo.append(found)
            elif module in top and root not in sys.stdlib_module_names:
                needed.setdefault(root, path.relative_to(ROOT).as_posix())
    return needed


@functools.cache
def provided(env_file: Path) -> frozenset[str]:
    """Distributions an env installs: its pins and their requirements (as installed beside requirements.txt)."""
    from packaging.requirements import Requirement

    todo, have = list(env_pins(env_file)[0]), set()
    while todo:
        name = todo.pop()
        if name in have:
            continue
        have.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for spec in requires:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_norm(req.name))
    return frozenset(have)


@pytest.mark.slow
@pytest.mark.plan
def test_each_rules_env_provides_its_scripts_imports(workflow_rules):
    """Every rule with a `script:` names a conda env that provides the script's third-party imports."""
    checked = []
    for rule, spec in sorted(workflow_rules["rules"].items()):
        if not spec["script"]:
            continue
        here = (ROOT / spec["snakefile"]).parent
        script = (here / spec["script"]).resolve()
        assert spec["conda"], f"rule {rule} runs {script.name} but names no conda env"
        env = (here / spec["conda"]).resolve()
        have = provided(env)
        missing = {
            name: where
            for name, where in third_party_imports(script).items()
            if _norm(DISTRIBUTIONS.get(name, name)) not in have
        }
        assert not missing, (
            f"rule {rule}: {env.name} lacks {sorted(missing)} (imported by {sorted(set(missing.values()))})"
        )
        checked.append(rule)
    assert {"tables", "figures", "report_extras", "embed", "cluster"} <= set(checked), checked


def test_import_check_sees_module_level_and_tecb_imports(tmp_path):
    """The check would catch envs/tables.yaml without PyYAML: tecb.report.extras imports yaml at module level."""
    source = (
        "import os\nfrom tecb.report import extras\ntry:\n    import yaml\nexcept ImportError:\n    pass\n"
        "def f():\n    import torch\n"
    )
    assert imported_modules(source, True) == {"os", "tecb.report.extras", "yaml"}
    assert "torch" in imported_modules(source, False)
    script = ROOT / "workflow" / "scripts" / "report_extras.py"
    assert third_party_imports(script)["yaml"] == "src/tecb/report/extras.py"
    env = tmp_path / "tables.yaml"
    spec = yaml.safe_load((ROOT / "envs" / "tables.yaml").read_text())
    pip = next(d for d in spec["dependencies"] if isinstance(d, dict))
    pip["pip"] = [p for p in pip["pip"] if not p.lower().startswith("pyyaml")]
    env.write_text(yaml.safe_dump(spec))
    assert "pyyaml" in provided(ROOT / "envs" / "tables.yaml") and "pyyaml" not in provided(env)
