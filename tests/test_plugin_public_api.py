"""The bundled plugins use only multilabel_core's public modules, as a third-party plugin must.

A module or name whose dotted path has a part with a leading underscore below
``multilabel_core`` (``multilabel_core._blocks``, ``multilabel_core.solvers._convergence``,
``from multilabel_core.solvers.smo import _feasible``) is private: it may change without
notice.  Plugins validate with :mod:`multilabel_core.validation` and warn with its
``warn_not_converged``.  Relative imports inside a plugin package are the plugin's own
business; the plugins' tests may reach into the core.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
CORE = "multilabel_core"


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
