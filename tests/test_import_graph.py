"""pfft's modules, and the benchmarks', import each other without cycles.

The graph is read from the sources with :mod:`ast`, not from an import (so modules
that need optional packages, ``pfft.mpi``, are in it too). Every ``import`` counts,
at module level or inside a function: a lazy import that only dodges a cycle is still
an edge. Only imports under ``if TYPE_CHECKING:`` are left out (they never run). Each
package's graph holds its own modules only (pfft from the benchmarks is a library).

Importing ``pfft.a.b`` runs the package ``pfft.a`` first, so it is an edge to
``pfft.a`` as well, unless ``pfft.a`` is one of the importing module's own packages:
those are imported before the module runs, so importing them (``from . import x``,
``import pfft``) adds no edge.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the packages checked: pfft, and the benchmarks (running and rendering halves apart)
PACKAGES = ("pfft", "benchmarks")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in (ROOT / package).rglob("*.py")}


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST):
    """Every import statement of ``tree``, at any depth, but those under
    ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if not _is_type_checking(child):
                stack.append(child)


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(package: str = "pfft") -> dict[str, set[str]]:
    """``{module: the modules of package its code imports}`` for every module of
    ``package`` (a folder of the repository: ``pfft``, ``benchmarks``)."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets.add(source)
            # `from .x import y`: y may be a module of its own
            targets.update(f"{source}.{alias.name}" for alias in node.names)
        own = set(_ancestors(name)) | {name}
        edges = set()
        for target in targets:
            if target in modules:
                edges.add(target)
                edges.update(a for a in _ancestors(target) if a in modules)
        graph[name] = edges - own
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_and_package_imports():
    """The graph has the edges a cycle could hide in: imports inside functions, and
    the package a module of another package is imported through; a module's own
    packages are no edge."""
    graph = import_graph()
    assert "pfft.api" in graph["pfft"]                       # pfft/__init__.py
    assert "pfft.engines._kernels" in graph["pfft.config"]   # inside a function
    assert "pfft.engines" in graph["pfft.config"]            # the package it goes through
    assert "pfft.toolkit._blocks" in graph["pfft.toolkit.halo"] or \
        "pfft.blocks" in graph["pfft.toolkit.halo"]
    assert "pfft.toolkit" not in graph["pfft.toolkit.halo"]  # its own package
    assert "pfft" not in graph["pfft.config"]                # `import pfft`: its own
    bench = import_graph("benchmarks")
    assert "benchmarks.apps.navier_stokes" in bench["benchmarks.real_workloads"]
    assert "benchmarks.apps" in bench["benchmarks.real_workloads"]
    assert "benchmarks.common" in bench["benchmarks.apps.nbody"]   # `from .. import common`
    assert not any(m.startswith("pfft") for m in bench["benchmarks.suite"])


def test_a_cycle_is_found():
    """The check itself: a two-module cycle through a lazy import is reported."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    """No module of ``package`` reaches itself through imports (a lazy import that only
    dodges a cycle counts: the modules would still depend on each other)."""
    found = cycles(import_graph(package))
    assert not found, f"import cycles in {package}/: " + "; ".join(
        " <-> ".join(c) for c in found)


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for m in graph.get(todo.pop(), ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


@pytest.mark.parametrize("module", ["pfft.stages", "pfft.layout", "pfft.chain_search",
                                    "pfft.executor", "pfft.stage_kinds",
                                    "pfft.stage_kinds.base", "pfft.stage_kinds.fft",
                                    "pfft.stage_kinds.r2r", "pfft.stage_kinds.resize",
                                    "pfft.stage_kinds.exchange"])
def test_the_plan_nouns_and_the_executor_know_no_engine_or_transport(module):
    """Imports point down: the stages (each kind with its rules), layouts and the
    planner describe a transform whatever runs it, and the executor runs what a
    program holds; none of them reaches an engine or a transport module (an engine is
    a value a stage's resolution is handed)."""
    graph = import_graph()
    below = {m for m in _reaches(graph, module)
             if m.startswith(("pfft.engines.", "pfft.transports."))}
    assert not below, (module, sorted(below))
