"""The bundled plugins use only multilabel_core's public modules, as a third-party plugin must; no module
imports a private name of another.

A module or name whose dotted path has a part with a leading underscore below
``multilabel_core`` (``multilabel_core._blocks``, ``multilabel_core.solvers._convergence``,
``from multilabel_core.solvers.smo import _feasible``) is private: it may change without
notice.  Plugins validate with :mod:`multilabel_core.validation` and warn with its
``warn_not_converged``; a plugin's Cython engine cimports the public engine kit
(``from multilabel_core.solvers.kit cimport DualCoordinates, Rows``), never ``_cd``; the plugins'
tests may reach into the core.

The rule for every module of the core and the plugins (tests, scripts and examples excluded),
:func:`private_name_imports`:

- a private *name* (``_x``: a function, class or constant, not a dunder) is used only by the
  module that defines it: no module imports one from another module, relative or absolute,
  even inside its own package (``from .cd_solver import _weight_factor`` is refused as much as
  ``from multilabel_core.persistence import _ratio_cap``).  A helper two modules share gets a
  public name;
- a private *module* (``_m``: ``multilabel_core/datasets/_files.py``, ``solvers/_cd.pyx``) is
  package-private: modules inside the package that holds it (and its subpackages) may import it
  and its public names, relatively or absolutely; no module outside that package may
  (``multilabel_core.experiments`` does not import ``multilabel_core.datasets._files``, a
  plugin never imports ``multilabel_core.solvers._cd``).  A package's private modules are how
  it splits one public module's work, so they stay its own business.

The violations that remain in modules other sessions own are listed, one by one, in
:data:`KNOWN_PRIVATE_IMPORTS`: the list may only shrink (an entry that no longer occurs fails the
test, so a fix removes it), and the test reports its length at every run.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "plugins"
CORE = "multilabel_core"
#: Source folder -> the package it installs as (pyproject.toml's package-dir).
PACKAGES = {"multilabel_core": "multilabel_core", "plugins": "multilabel_core_plugins"}


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _private_core_path(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == CORE and any(_private(part) for part in parts[1:])


def private_imports(source: str) -> list[tuple[int, str]]:
    """(line, what) for each import of a private multilabel_core module or name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if _private_core_path(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _private_core_path(node.module):
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module.split(".")[0] == CORE:
                found += [
                    (node.lineno, f"from {node.module} import {a.name}") for a in node.names if _private(a.name)
                ]
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _private_core_path(node.args[0].value)
        ):
            found.append((node.lineno, f"import_module({node.args[0].value!r})"))
    return found


def plugin_sources() -> list[Path]:
    return sorted(
        path for path in PLUGINS.rglob("*.py") if "tests" not in path.relative_to(PLUGINS).parts[:-1]
    )


def test_the_plugin_sources_are_found():
    names = {path.relative_to(PLUGINS).as_posix() for path in plugin_sources()}
    assert {"baselines/ovr.py", "br/estimator.py", "mlrl/estimators.py", "ranking/cd_solver.py"} <= names
    assert not any("/tests/" in f"/{name}" for name in names)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import multilabel_core._blocks", ["import multilabel_core._blocks"]),
        ("from multilabel_core._blocks import row_blocks", ["from multilabel_core._blocks import ..."]),
        ("from multilabel_core.solvers._convergence import warn_not_converged",
         ["from multilabel_core.solvers._convergence import ..."]),
        ("from multilabel_core.datasets._dataset import Dataset", ["from multilabel_core.datasets._dataset import ..."]),
        ("from multilabel_core.solvers import _cd, smo_solve", ["from multilabel_core.solvers import _cd"]),
        ("from multilabel_core.solvers.smo import _feasible", ["from multilabel_core.solvers.smo import _feasible"]),
        ("def f():\n    import multilabel_core.solvers._smo as s", ["import multilabel_core.solvers._smo"]),
        ("importlib.import_module('multilabel_core._builtin')", ["import_module('multilabel_core._builtin')"]),
        ("from multilabel_core.validation import check_scalar, warn_not_converged", []),
        ("import multilabel_core\nfrom multilabel_core import __version__, hookimpl", []),
        ("from ._problem import RankingTask\nfrom .. import _private_helper", []),
        ("from sklearn.utils._param_validation import Interval", []),
    ],
)
def test_the_checker_flags_private_core_imports_only(source, expected):
    assert [what for _, what in private_imports(source)] == expected


@pytest.mark.parametrize("path", plugin_sources(), ids=lambda path: path.relative_to(PLUGINS).as_posix())
def test_plugins_import_only_public_core_modules(path):
    found = private_imports(path.read_text())
    where = path.relative_to(PLUGINS.parent).as_posix()
    assert not found, "private multilabel_core imports (use the public modules, e.g. multilabel_core.validation):\n" + (
        "\n".join(f"{where}:{line}: {what}" for line, what in found)
    )


# -- cimport lines of the plugins' Cython sources ------------------------------------------------

#: ``from X cimport a, b`` / ``from X import (a, b)`` and ``cimport X`` / ``import X`` lines of a Cython
#: source (which :mod:`ast` cannot parse); parenthesised name lists may span lines.
_CYTHON_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+(c?import)[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_CYTHON_IMPORT = re.compile(r"^[ \t]*(c?import)[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)[ \t]*(?:#.*)?$", re.M)


def cython_imports(source: str) -> list[tuple[int, str, int, list[str], str]]:
    """(line, module, level, names, keyword) for each import and cimport of a .pyx/.pxd source.

    ``names`` is empty for ``import X`` / ``cimport X`` (then ``module`` is X); ``level`` counts the
    leading dots of a relative ``from``.
    """
    found = []
    for match in _CYTHON_FROM.finditer(source):
        dotted, keyword, listed = match.groups()
        names = [part.split(" as ")[0].strip() for part in listed.strip().strip("()").replace("\n", " ").split(",")]
        level = len(dotted) - len(dotted.lstrip("."))
        found.append((source.count("\n", 0, match.start()) + 1, dotted.lstrip("."), level, [n for n in names if n], keyword))
    for match in _CYTHON_IMPORT.finditer(source):
        keyword, listed = match.groups()
        for part in listed.split(","):
            found.append((source.count("\n", 0, match.start()) + 1, part.split(" as ")[0].strip(), 0, [], keyword))
    return sorted(found)


def private_cimports(source: str) -> list[tuple[int, str]]:
    """(line, what) for each import or cimport of a private multilabel_core module or name in a Cython source."""
    found = []
    for line, module, level, names, keyword in cython_imports(source):
        if level:
            continue  # the plugin's own package
        if _private_core_path(module):
            found.append((line, f"from {module} {keyword} ..." if names else f"{keyword} {module}"))
        elif module.split(".")[0] == CORE:
            found += [(line, f"from {module} {keyword} {name}") for name in names if _private(name)]
    return found


def plugin_cython_sources() -> list[Path]:
    return sorted(
        path for path in [*PLUGINS.rglob("*.pyx"), *PLUGINS.rglob("*.pxd")]
        if "tests" not in path.relative_to(PLUGINS).parts[:-1]
    )


def test_the_plugin_cython_sources_are_found():
    names = {path.relative_to(PLUGINS).as_posix() for path in plugin_cython_sources()}
    # The families' own dual-CD variants, built on the public engine kit.
    assert {"prml/_cd_svmplus.pyx", "ranking/_cd_ranking.pyx"} <= names


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from multilabel_core.solvers._cd cimport DualCoordinates, Rows",
         ["from multilabel_core.solvers._cd cimport ..."]),
        ("from multilabel_core.solvers._cd cimport (\n    DualCoordinates,\n    Rows,\n)",
         ["from multilabel_core.solvers._cd cimport ..."]),
        ("cimport multilabel_core.solvers._kernel_cache as cache", ["cimport multilabel_core.solvers._kernel_cache"]),
        ("from multilabel_core.solvers._cd import _index_array", ["from multilabel_core.solvers._cd import ..."]),
        ("from multilabel_core.solvers.kit cimport _hidden", ["from multilabel_core.solvers.kit cimport _hidden"]),
        ("from multilabel_core.solvers.kit cimport DualCoordinates, Rows, cd_prefetch", []),
        ("from multilabel_core.solvers.kit import index_array\nfrom libc.math cimport INFINITY", []),
        ("from scipy.linalg.cython_blas cimport ddot\ncimport cython\nfrom ._own cimport Helper", []),
    ],
)
def test_the_checker_flags_private_core_cimports(source, expected):
    assert [what for _, what in private_cimports(source)] == expected


@pytest.mark.parametrize("path", plugin_cython_sources(), ids=lambda path: path.relative_to(PLUGINS).as_posix())
def test_plugin_cython_sources_cimport_only_the_public_kit(path):
    found = private_cimports(path.read_text())
    where = path.relative_to(PLUGINS.parent).as_posix()
    assert not found, "private multilabel_core cimports (cimport multilabel_core.solvers.kit):\n" + (
        "\n".join(f"{where}:{line}: {what}" for line, what in found)
    )


# -- no module imports a private name of another ---------------------------------------------------

#: The imports of a private name or of another package's private module that remain, as
#: (importing module, imported dotted name): each in a module another session owns.  Only removals.
KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()


def package_modules() -> dict[str, Path]:
    """Dotted module name -> source (.py, .pyx, .pxd) of every module of the core and the plugins.

    Tests, scripts and examples are left out: tests may reach into anything, and scripts and
    examples are not imported by the package.
    """
    modules = {}
    for folder, package in PACKAGES.items():
        base = ROOT / folder
        for path in sorted([*base.rglob("*.py"), *base.rglob("*.pyx"), *base.rglob("*.pxd")]):
            parts = [package, *path.relative_to(base).with_suffix("").parts]
            if any(part in ("tests", "scripts", "examples") or part.startswith(".") for part in parts[1:]):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.setdefault(".".join(parts), path)
    return modules


def _is_package(path: Path) -> bool:
    return path.stem == "__init__"


def _absolute(importer: str, is_package: bool, module: str, level: int) -> str:
    """The absolute dotted name of ``from <level dots><module> import``, inside ``importer``."""
    if not level:
        return module
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _private_module_owner(dotted: str) -> str | None:
    """The package a private module of ``dotted`` belongs to (``a.b`` for ``a.b._m.x``), or None."""
    parts = dotted.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if _private(part):
            return ".".join(parts[:index])
    return None


def _inside(importer: str, package: str) -> bool:
    return importer == package or importer.startswith(package + ".")


def _imports(path: Path, importer: str) -> list[tuple[int, str, str | None]]:
    """(line, absolute module, name or None) for every import of ``path``'s source, at any depth.

    ``name`` is what a ``from`` import takes from the module (None for ``import module`` and for a
    string given to ``importlib.import_module``).
    """
    source = path.read_text()
    is_package = _is_package(path)
    found = []
    if path.suffix in (".pyx", ".pxd"):
        for line, module, level, names, _ in cython_imports(source):
            absolute = _absolute(importer, is_package, module, level)
            found += [(line, absolute, name) for name in names] if names else [(line, absolute, None)]
        return found
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            absolute = _absolute(importer, is_package, node.module or "", node.level)
            found += [(node.lineno, absolute, alias.name) for alias in node.names if alias.name != "*"]
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")
        ):
            found.append((node.lineno, node.args[0].value, None))
    return found


def private_name_imports(path: Path, importer: str, modules) -> list[tuple[int, str]]:
    """(line, imported dotted name) for each import in ``path`` that breaks the rule of the module docstring."""
    roots = set(PACKAGES.values())
    found = []
    for line, module, name in _imports(path, importer):
        if module.split(".")[0] not in roots:
            continue  # another project's privacy is its own business
        target, taken = module, name
        if name is not None and f"{module}.{name}" in modules:
            target, taken = f"{module}.{name}", None  # ``from package import submodule``
        owner = _private_module_owner(target)
        if owner is not None and not _inside(importer, owner):
            found.append((line, target if taken is None else f"{target}.{taken}"))
        elif taken is not None and _private(taken) and target != importer:
            found.append((line, f"{target}.{taken}"))
    return found


def all_private_name_imports() -> dict[tuple[str, str], list[str]]:
    """(importing module, imported dotted name) -> ['path:line', ...] over the whole package."""
    modules = package_modules()
    found: dict[tuple[str, str], list[str]] = {}
    for importer, path in modules.items():
        for line, imported in private_name_imports(path, importer, modules):
            found.setdefault((importer, imported), []).append(f"{path.relative_to(ROOT).as_posix()}:{line}")
    return found


@pytest.mark.parametrize(
    "importer, filename, source, expected",
    [
        # A private name from another module: refused, relative or absolute, in the core or a plugin.
        ("multilabel_core.cli", "cli.py", "from .persistence import _ratio_cap", ["multilabel_core.persistence._ratio_cap"]),
        ("multilabel_core_plugins.ranking.cutting_plane", "cutting_plane.py", "from .cd_solver import _weight_factor",
         ["multilabel_core_plugins.ranking.cd_solver._weight_factor"]),
        ("multilabel_core.plugins", "plugins.py", "from . import _EXTENSIONS", ["multilabel_core._EXTENSIONS"]),
        ("multilabel_core.x", "x.py", "def f():\n    from multilabel_core.model_selection import _helper",
         ["multilabel_core.model_selection._helper"]),
        # A private module of the importer's own package (or an enclosing one): allowed, with its public names.
        ("multilabel_core.solvers.cd", "cd.py", "from . import _cd\nfrom ._convergence import warn_not_converged", []),
        ("multilabel_core.solvers.smo", "smo.py", "from .._blocks import row_blocks", []),
        ("multilabel_core.plugins", "plugins.py", "from . import _builtin", []),
        ("multilabel_core_plugins.prml.svmplus", "svmplus.py", "from ._cd_svmplus import SVMPlusDual", []),
        # ... but not another package's private module, nor the core's from a plugin.
        ("multilabel_core.cli", "cli.py", "from .datasets._files import size_text", ["multilabel_core.datasets._files.size_text"]),
        ("multilabel_core_plugins.prml.svmplus", "svmplus.py", "from multilabel_core.solvers._cd import solve_dual",
         ["multilabel_core.solvers._cd.solve_dual"]),
        ("multilabel_core_plugins.x", "x.py", "importlib.import_module('multilabel_core._builtin')", ["multilabel_core._builtin"]),
        ("multilabel_core_plugins.prml._cd_svmplus", "_cd_svmplus.pyx",
         "from multilabel_core.solvers._cd cimport DualCoordinates\nfrom multilabel_core.solvers.kit import index_array",
         ["multilabel_core.solvers._cd.DualCoordinates"]),
        # Dunders and other projects are not this rule's business.
        ("multilabel_core.cli", "cli.py", "from . import __version__\nfrom joblib._parallel_backends import LokyBackend", []),
    ],
)
def test_the_private_name_checker(tmp_path, importer, filename, source, expected):
    path = tmp_path / filename
    path.write_text(source)
    modules = {**package_modules(), "multilabel_core.x": path, "multilabel_core_plugins.x": path}
    assert [what for _, what in private_name_imports(path, importer, modules)] == expected


def test_no_module_imports_a_private_name_of_another():
    found = all_private_name_imports()
    new = {key: where for key, where in found.items() if key not in KNOWN_PRIVATE_IMPORTS}
    stale = sorted(KNOWN_PRIVATE_IMPORTS - found.keys())
    warnings.warn(
        f"private imports: {len(found)} (importer, name) pairs remain, all listed in KNOWN_PRIVATE_IMPORTS",
        UserWarning,
    )
    assert not new, "imports of another module's private name (give the helper a public name):\n" + "\n".join(
        f"{', '.join(where)}: {importer} imports {name}" for (importer, name), where in sorted(new.items())
    )
    assert not stale, f"fixed, so remove them from KNOWN_PRIVATE_IMPORTS: {stale}"


def test_no_core_module_imports_a_plugin():
    """The core knows its plugins only through the entry points: no core module imports one, even lazily."""
    modules = package_modules()
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {module}"
        for importer, path in modules.items() if importer.split(".")[0] == CORE
        for line, module, _ in _imports(path, importer) if module.split(".")[0] == "multilabel_core_plugins"
    ]
    assert not found, "core modules importing a plugin:\n" + "\n".join(found)
