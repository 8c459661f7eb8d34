"""The docs' statements that can be checked mechanically, held to the code (issue 45 item 5): docs/layout.md lists
every module of the library (and no other), and docs/design.md §10's contracts on the workflow's files: every
results/ and logs/ path is built in workflow/rules/common.smk, the only rules defined under an `if` are the ones it
names, and `cache_umap_compilation` has the one library caller it names; the CI times are given in docs/testing.md
only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "tecb"
WORKFLOW_FILES = [ROOT / "workflow" / "Snakefile", *sorted((ROOT / "workflow" / "rules").rglob("*.smk"))]
COMMON = ROOT / "workflow" / "rules" / "common.smk"


# --- docs/layout.md: the library's modules ----------------------------------------------------------------------


def _top_level_items(text: str) -> list[str]:
    """``text`` cut at the commas, semicolons and ``+`` outside parentheses."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ",;+":
            items.append(current)
            current = ""
        else:
            current += char
    return [*items, current]


def _listed_modules(package: str, text: str) -> set[str]:
    """The modules an entry's description names: each item's first word (``spec (settings ...)``), and for a
    subpackage item (``sources/ (germeval, gnad, ...)``) the first word of each item in its parentheses."""
    found = set()
    for item in _top_level_items(text):
        match = re.match(r"\s*([a-z_0-9]+)(/)?\s*(?:\((.*)\))?", item, flags=re.S)
        if not match:
            raise AssertionError(f"docs/layout.md: cannot read a module name in {item!r} ({package}/)")
        name, is_package, inside = match.groups()
        if is_package:
            found |= _listed_modules(f"{package}.{name}", inside or "")
        else:
            found.add(f"{package}.{name}")
    return found


def documented_modules(layout: str) -> set[str]:
    """The modules docs/layout.md's ``src/tecb/`` block lists: a core line names its files (``io.py, config.py``),
    a subpackage line (``embed/``) its modules in its description, continued on the indented lines below it."""
    lines = layout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("src/tecb/"))
    entries: list[list[str]] = []
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        head = re.match(r"  (\S[^ ]*(?: [^ ]+)*?)(?:\s{2,}(.*))?$", line)
        if line.startswith("   ") or not head:  # a continuation of the entry above
            entries[-1][1] += " " + line.strip()
        else:
            entries.append([head.group(1), head.group(2) or ""])
    found = set()
    for head, text in entries:
        if head.endswith("/"):
            found |= _listed_modules(f"tecb.{head[:-1]}", text)
        else:
            found |= {f"tecb.{name.strip().removesuffix('.py')}" for name in head.split(",")}
    return found


def library_modules() -> set[str]:
    """Every module of src/tecb/ but the (empty) package __init__ files."""
    return {
        "tecb." + ".".join(p.relative_to(SRC).with_suffix("").parts) for p in SRC.rglob("*.py") if p.stem != "__init__"
    }


def test_layout_md_lists_every_module_of_the_library_and_no_other():
    documented = documented_modules((ROOT / "docs" / "layout.md").read_text())
    actual = library_modules()
    assert not actual - documented, f"modules docs/layout.md does not list: {sorted(actual - documented)}"
    assert not documented - actual, f"docs/layout.md lists modules that do not exist: {sorted(documented - actual)}"


def test_the_layout_reader_reads_core_files_subpackages_and_nested_packages():
    layout = (
        "src/tecb/      the library\n"
        "  io.py, config.py   core\n"
        "  data/              sources/ (germeval, files: raw files), splits (the\n"
        "                     splits, per (model, dataset)), demo + download; rehydrate\n"
        "reference/     other\n"
    )
    assert documented_modules(layout) == {
        "tecb.io",
        "tecb.config",
        "tecb.data.sources.germeval",
        "tecb.data.sources.files",
        "tecb.data.splits",
        "tecb.data.demo",
        "tecb.data.download",
        "tecb.data.rehydrate",
    }


# --- docs/design.md §10: paths, rules under an `if` ---------------------------------------------------------------


def _code_lines(path: Path) -> list[tuple[int, str]]:
    return [(i, line) for i, line in enumerate(path.read_text().splitlines(), 1) if not line.lstrip().startswith("#")]


def test_results_and_logs_paths_are_built_only_in_common_smk():
    """design §10: every path pattern is written once, in common.smk, as a path function; the other rules files
    call those functions: no `result(...)`, no RESULTS or LOGS, no path literal under results/, logs/ or
    resources/ of their own. (The Snakefile names the run's folders themselves, for the orphan clean-up.)"""
    found = []
    for path in WORKFLOW_FILES:
        if path == COMMON or path.suffix != ".smk":
            continue
        for i, line in _code_lines(path):
            if re.search(r"(?<![\w.])result\(|\bRESULTS\b|\bLOGS\b|[\"'](results|logs|resources)/", line):
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "paths built outside workflow/rules/common.smk:\n" + "\n".join(found)


def _rules_under_an_if() -> dict[str, str]:
    """Every rule or checkpoint defined inside a block (an indented definition), with where."""
    found = {}
    for path in WORKFLOW_FILES:
        for i, line in _code_lines(path):
            match = re.match(r"\s+(?:rule|checkpoint)\s+(\w+)\s*:", line)
            if match:
                found[match.group(1)] = f"{path.relative_to(ROOT)}:{i}"
    return found


def test_the_only_rules_under_an_if_are_the_ones_the_design_names():
    design = (ROOT / "docs" / "design.md").read_text()
    sentence = re.search(r"The only rules defined under an `if` are ([^.]*)\.", design)
    assert sentence, "docs/design.md §10 no longer says which rules are defined under an `if`"
    named = set(re.findall(r"`(\w+)`", sentence.group(1)))
    found = _rules_under_an_if()
    assert set(found) == named, f"rules under an `if`: {found}; the design names {sorted(named)}"


@pytest.mark.slow
def test_cache_umap_compilation_has_one_library_caller():
    """design §10: it changes numba's process-wide state, so only the function a job asks through calls it."""
    callers = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "cache_umap_compilation":
                        callers.append(f"{path.relative_to(SRC.parent).with_suffix('')}.{node.name}".replace("/", "."))
    assert sorted(set(callers)) == ["tecb.cluster.reduce.run_reduction"], callers
    design = (ROOT / "docs" / "design.md").read_text()
    assert "`tecb.cluster.reduce.run_reduction`" in design


# --- CI figures: only in docs/testing.md (issue 45 item 5) ------------------------------------------------------

#: what names the suite or CI: `.ci/run`, `make test` (not test-fast), "the (whole) (test) suite"
_SUITE = re.compile(r"\.ci/run|make test(?!-)|\bthe (?:whole )?(?:test )?suite\b")
#: a duration: "14 min 37 s", "6:46 min", "42 minutes", "2604 s"
_DURATION = re.compile(r"\b\d+(?::\d\d)?(?:\.\d+)?\s*(?:min(?:ute)?s?|s)\b")


def _ci_figures(path: Path) -> list[str]:
    """The paragraphs of ``path`` that name the suite or CI and give a duration."""
    paragraphs = re.split(r"\n\s*\n", path.read_text())
    return [p.strip()[:120] for p in paragraphs if _SUITE.search(p) and _DURATION.search(p)]


def test_ci_figures_live_only_in_docs_testing_md():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "config").glob("*.md"))]
    found = {p.name: _ci_figures(p) for p in docs if p.name != "testing.md"}
    assert {name: f for name, f in found.items() if f} == {}
    # the check finds them where they are
    assert _ci_figures(ROOT / "docs" / "testing.md")
