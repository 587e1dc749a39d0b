"""No import cycle among the modules of ``multilabel_core`` and the bundled plugins.

The graph is read from the source with :mod:`ast`, not by importing: an edge ``a -> b`` is an
``import`` or ``from ... import`` that runs when ``a`` is imported (module level, class bodies and
top-level ``if``/``try`` blocks; not function bodies, not ``if TYPE_CHECKING:``).  Importing
``p.q.r`` runs ``p/__init__`` and ``p/q/__init__`` first, so an edge also reaches the target's
packages -- except the importer's own packages, which are already being imported (a package
importing its submodules and those importing siblings is the normal layout, not a cycle).

A cycle means a module can be half-initialised when another reads its names, which is why such
cycles were held together by imports inside functions and a module ``__getattr__``; the
warnings and errors now live in the leaf :mod:`multilabel_core.exceptions` instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Source folder -> the importable package it installs as (pyproject.toml's package-dir).
PACKAGES = {"multilabel_core": "multilabel_core", "plugins": "multilabel_core_plugins"}


def _module_files() -> dict[str, Path]:
    """Dotted module name -> source file, for every .py (and .pyx, which imports too) of the packages."""
    modules = {}
    for folder, package in PACKAGES.items():
        base = ROOT / folder
        for path in sorted([*base.rglob("*.py"), *base.rglob("*.pyx")]):
            relative = path.relative_to(base).with_suffix("")
            parts = [package, *relative.parts]
            if "tests" in parts[1:] or any(p.startswith(".") for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time_nodes(body):
    """The import statements of ``body`` that run at import time (recursing into blocks, not functions)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _import_time_nodes(node.body)
            yield from _import_time_nodes(node.orelse)
        elif isinstance(node, ast.ClassDef):
            yield from _import_time_nodes(node.body)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _import_time_nodes(node.body)
            for handler in node.handlers:
                yield from _import_time_nodes(handler.body)
            yield from _import_time_nodes(node.orelse)
            yield from _import_time_nodes(node.finalbody)
        elif isinstance(node, (ast.With, ast.For, ast.While)):
            yield from _import_time_nodes(node.body)


def _targets(node, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The package modules an import statement of ``module`` loads."""
    names = set()
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        else:
            base = node.module
        names = {base}
        # ``from pkg import sub`` loads the submodule when ``sub`` is one.
        names |= {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known}
    loaded = set()
    for name in names:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix in known:
                loaded.add(prefix)
    own_packages = {".".join(module.split(".")[:end]) for end in range(1, module.count(".") + 2)}
    return loaded - own_packages


def _pyx_imports(text: str) -> str:
    """The module-level Python imports of a Cython file, as Python source (cimports are resolved at build time)."""
    statements, pending = [], None
    for line in text.splitlines():
        if pending is not None:
            pending.append(line)
            if ")" in line:
                statements.append("\n".join(pending))
                pending = None
        elif line.startswith(("import ", "from ")) and " cimport " not in line:
            if line.rstrip().endswith("("):
                pending = [line]
            else:
                statements.append(line)
    return "\n".join(statements)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports at import time."""
    files = _module_files()
    known = set(files)
    graph = {}
    for module, path in files.items():
        if path.suffix == ".pyx":
            source = _pyx_imports(path.read_text(encoding="utf-8"))
        else:
            source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        is_package = path.stem == "__init__"
        graph[module] = set()
        for node in _import_time_nodes(tree.body):
            graph[module] |= _targets(node, module, is_package, known)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, first repeated last) per strongly connected component of size > 1."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def connect(v):  # Tarjan's algorithm, iterative over successors to keep recursion to the graph depth
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
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
            if len(component) > 1 or v in graph.get(v, ()):
                components.append(set(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for component in components:
        start = min(component)
        # A shortest path back to start inside the component (breadth first): the cycle named in the failure.
        parents, frontier = {start: None}, [start]
        found = None
        while frontier and found is None:
            following = []
            for v in frontier:
                for w in sorted(graph[v] & component):
                    if w == start:
                        found = v
                        break
                    if w not in parents:
                        parents[w] = v
                        following.append(w)
                if found is not None:
                    break
            frontier = following
        path = [found]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])
        cycles.append([*reversed(path), start])
    return cycles


def test_the_graph_sees_the_package():
    graph = import_graph()
    assert "multilabel_core.estimator" in graph and "multilabel_core_plugins.mlrl" in graph
    # The leaf really is a leaf: it imports nothing of the package.
    assert graph["multilabel_core.exceptions"] == set()
    # Edges are found: the estimator imports the validation module at import time.
    assert "multilabel_core.validation" in graph["multilabel_core.estimator"]


def test_the_cycle_finder_names_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(map(tuple, find_cycles(graph))) == [("a", "b", "c", "a"), ("e", "e")]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_cython_imports_are_read_and_cimports_left_out():
    text = "cimport numpy as cnp\nfrom libc.math cimport sqrt\nimport numpy as np\nfrom ..validation import (\n    check_X,\n    check_Y,\n)\n"
    tree = ast.parse(_pyx_imports(text))
    assert [type(node).__name__ for node in tree.body] == ["Import", "ImportFrom"]
    assert [alias.name for alias in tree.body[1].names] == ["check_X", "check_Y"]


def test_relative_imports_resolve():
    known = {"p", "p.q", "p.q.r", "p.s"}
    node = ast.parse("from ..s import x").body[0]
    assert _targets(node, "p.q.r", False, known) == {"p.s"}
    node = ast.parse("from . import r").body[0]
    assert _targets(node, "p.q", True, known) == {"p.q.r"}


def test_no_import_cycle():
    cycles = find_cycles(import_graph())
    if cycles:
        pytest.fail(
            f"{len(cycles)} import cycle(s) in the package (module-level imports):\n"
            + "\n".join("  " + " -> ".join(cycle) for cycle in cycles)
        )


#: Where a public warning or error class may be defined outside multilabel_core.exceptions: the command
#: line's exit-status carriers and the testing kit's own failures are not raised by the library.
OWN_EXCEPTIONS_ALLOWED = ("multilabel_core.cli", "multilabel_core.testing")


def public_exception_classes() -> list[str]:
    """``module.Class`` of every public class of the core whose name ends in Error, Warning or Exception."""
    found = []
    for module, path in _module_files().items():
        if not (module == "multilabel_core" or module.startswith("multilabel_core.")) or path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and node.name.endswith(("Error", "Warning", "Exception"))
            ):
                found.append(f"{module}.{node.name}")
    return sorted(found)


def test_the_core_warnings_and_errors_live_in_the_leaf():
    found = public_exception_classes()
    assert "multilabel_core.exceptions.ConvergenceWarning" in found
    elsewhere = [
        name
        for name in found
        if not name.startswith("multilabel_core.exceptions.") and not name.startswith(OWN_EXCEPTIONS_ALLOWED)
    ]
    assert elsewhere == [], f"define these in multilabel_core/exceptions.py (and re-export them): {elsewhere}"


def test_the_old_homes_still_export_them():
    import multilabel_core
    from multilabel_core import (
        base,
        estimator,
        exceptions,
        persistence,
        plugins,
        preprocessed,
        solvers,
        thresholds,
        validation,
    )
    from multilabel_core.datasets import _files
    from multilabel_core.experiments import search, store

    homes = {
        "ConvergenceWarning": (solvers, validation, multilabel_core),
        "warn_not_converged": (validation,),
        "NotFittedError": (estimator, multilabel_core),
        "ConstantLabelWarning": (estimator,),
        "FeatureScaleWarning": (preprocessed,),
        "CapabilityError": (base,),
        "PluginError": (plugins,),
        "PluginWarning": (plugins,),
        "DataFormatError": (_files,),
        "ThresholdWarning": (thresholds,),
        "ModelVersionWarning": (persistence,),
        "SearchError": (search,),
        "ConfigMismatchError": (store,),
        "StoreLockedError": (store,),
        "DuplicateRecordsWarning": (store,),
    }
    assert set(homes) == set(exceptions.__all__)
    for name, modules in homes.items():
        for module in modules:
            assert getattr(module, name) is getattr(exceptions, name), (module.__name__, name)
