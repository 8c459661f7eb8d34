"""The library's shape: one subpackage per workflow stage, imports flowing down the stages only, no cycles."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tecb"

# Lowest first: a module may import from its own layer and the layers below it, never from a layer above.
LAYERS = {
    "io": 0,
    "config": 0,
    "runlog": 0,
    "unlock": 0,
    "progress": 0,
    "data": 1,
    "embed": 2,
    "cluster": 3,
    "adapt": 4,
    "scoring": 4,
    "report": 5,
    "preflight": 6,
    "configcheck": 7,
    "configdoc": 7,
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tecb_imports(path: Path) -> set[str]:
    """Every ``tecb`` module a file imports, at any depth of the file (imports inside functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "tecb"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "tecb":
                for alias in node.names:  # ``from tecb.cluster import metrics`` imports the module tecb.cluster.metrics
                    candidate = f"{node.module}.{alias.name}"
                    found.add(candidate if _is_module(candidate) else node.module)
    return found


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    if top not in LAYERS:
        raise AssertionError(f"{module}: not in a known layer; add its top-level name to LAYERS in this test")
    return LAYERS[top]


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def test_every_module_is_in_a_stage_subpackage_or_the_core():
    loose = sorted(m for m in MODULES if m.count(".") == 1 and m.split(".")[1] not in LAYERS)
    assert loose == [], f"modules outside the stage subpackages and the core: {loose}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "tecb"))
def test_imports_flow_down_the_stages(module):
    upward = sorted(i for i in _tecb_imports(MODULES[module]) if i != "tecb" and _layer(i) > _layer(module))
    assert upward == [], f"{module} (layer {_layer(module)}) imports from a later stage: {upward}"


def test_no_import_cycles():
    graph = {m: {i for i in _tecb_imports(p) if i in MODULES} for m, p in MODULES.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_package_inits_stay_empty_so_a_job_imports_only_what_it_uses():
    """A TF-IDF embedding job must not import torch because ``tecb.embed`` re-exports a neural module."""
    for init in SRC.rglob("__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        code = [
            n
            for n in tree.body
            if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
            and not (isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["__version__"])
        ]
        assert code == [], f"{init.relative_to(SRC.parent)} holds code; keep package __init__ files to a docstring"


def test_the_cycle_check_catches_a_cycle(tmp_path, monkeypatch):
    """The checker itself: two modules importing each other are reported."""
    pkg = tmp_path / "tecb"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "__init__.py").write_text("")
    (pkg / "data" / "a.py").write_text("from tecb.data import b\n")
    (pkg / "data" / "b.py").write_text("def f():\n    from tecb.data import a\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", pkg)
    modules = {_module_name(p): p for p in sorted(pkg.rglob("*.py"))}
    monkeypatch.setattr(sys.modules[__name__], "MODULES", modules)
    with pytest.raises(AssertionError, match="import cycle"):
        test_no_import_cycles()


#: Functions allowed more than eight parameters, with the reason (docs/layout.md "Library conventions").
MANY_PARAMETERS = {"tecb.cluster.spectral._multi_component_layout": "umap's multi_component_layout, ported"}


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return len([n for n in names if n not in ("self", "cls")])


def test_no_function_takes_more_than_eight_parameters():
    """Where a function would need more, the ones that belong together travel as a spec (a frozen dataclass)."""
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _parameter_count(node) > 8:
                where = f"{name}.{node.name}"
                if where not in MANY_PARAMETERS:
                    found.append(f"{where} ({_parameter_count(node)} parameters, line {node.lineno})")
    assert not found, found


def test_the_parameter_count_counts_every_kind_of_parameter():
    tree = ast.parse("def f(a, /, b, *c, d, **e): pass\nclass K:\n    def g(self, a, *, b): pass\n")
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert [_parameter_count(n) for n in functions] == [5, 2]


#: A function's length: its ``def`` line to its last line (docstring and comments included, decorators not).
MAX_FUNCTION_LINES = 50
#: Functions longer than :data:`MAX_FUNCTION_LINES`, each with its cap (its length when listed): a listed function
#: may shrink, never grow; any other function that grows past the limit fails. At most :data:`MAX_LONG_FUNCTIONS`
#: (issue 45 item 4); a listed function split below the limit leaves the list.
LONG_FUNCTIONS = {
    "tecb.cluster.batch.run_batch": 121,
    "tecb.report.stats.table_statistics": 96,
    "tecb.report.adapt_tables.render": 67,
    "tecb.report.stats.compare_to_best": 72,
    "tecb.embed.batch.run_embed_batch": 68,
    "tecb.report.stats.paired_pvalue": 51,
    # issue 53's text bootstrap in Tables 5/6 (the test column, the predictions beside the scores): due a split
    "tecb.report.pretrain_tables.delta_statistics": 56,
    "tecb.report.pretrain_tables.render": 54,
    "tecb.report.pretrain_tables.contrasts": 51,
    "tecb.adapt.jobs.run": 53,
}
MAX_LONG_FUNCTIONS = 10


def _function_lengths(tree: ast.Module, module: str) -> dict[str, int]:
    """The length of every function of a module, nested ones and methods included, by qualified name
    (``module.Class.method``, ``module.outer.inner``)."""
    lengths = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = child.end_lineno - child.lineno + 1
                visit(child, name)
            else:
                visit(child, prefix)

    visit(tree, module)
    return lengths


def test_few_functions_are_long_and_none_grows():
    """A long function is split where its steps can be named; the few left are listed with their length."""
    assert len(LONG_FUNCTIONS) <= MAX_LONG_FUNCTIONS, f"{len(LONG_FUNCTIONS)} functions listed as long"
    lengths = {}
    for name, path in MODULES.items():
        lengths.update(_function_lengths(ast.parse(path.read_text()), name))
    over = {n: k for n, k in lengths.items() if k > max(MAX_FUNCTION_LINES, LONG_FUNCTIONS.get(n, 0))}
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines (or over their cap in LONG_FUNCTIONS): {over}"
    stale = sorted(n for n in LONG_FUNCTIONS if lengths.get(n, 0) <= MAX_FUNCTION_LINES)
    assert not stale, f"gone or now at most {MAX_FUNCTION_LINES} lines: remove them from LONG_FUNCTIONS: {stale}"


def test_the_function_length_counts_nested_functions_and_methods():
    source = "def f():\n    def g():\n        pass\n    return g\n\n\nclass K:\n    def m(self):\n        '''doc'''\n\n        pass\n"
    assert _function_lengths(ast.parse(source), "mod") == {"mod.f": 4, "mod.f.g": 2, "mod.K.m": 4}
