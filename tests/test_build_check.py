"""Importing multilabel_core without its compiled extensions: one ImportError that says why and what to do."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import multilabel_core
from multilabel_core import COMPILED_EXTENSIONS, _check_build, _missing_extensions
from multilabel_core.plugins import get_plugin_manager, reset_plugin_manager

PACKAGE = Path(multilabel_core.__file__).parent
# The checkout's own pyproject.toml: PACKAGE may be an installed copy in site-packages (CI runs
# `pip install .`), which has none beside it.
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def unbuilt_copy(destination: Path) -> Path:
    """The package's sources (no compiled modules) and pyproject.toml: a fresh, unbuilt checkout."""
    shutil.copytree(
        PACKAGE, destination / "multilabel_core",
        ignore=shutil.ignore_patterns("__pycache__", *(f"*{s}" for s in importlib.machinery.EXTENSION_SUFFIXES)),
    )  # fmt: skip
    shutil.copy(PYPROJECT, destination / "pyproject.toml")
    return destination


def test_the_extension_list_names_every_cython_module():
    sources = {".".join(path.relative_to(PACKAGE).with_suffix("").parts) for path in PACKAGE.rglob("*.pyx")}
    assert set(COMPILED_EXTENSIONS) == sources


def test_the_built_package_has_every_extension():
    assert _missing_extensions(str(PACKAGE)) == []


def test_importing_an_unbuilt_source_tree_raises_one_clear_import_error(tmp_path):
    """Python started at the root of a checkout: its multilabel_core/ shadows the installed one."""
    checkout = unbuilt_copy(tmp_path)
    # Plugins that import the solvers (mlrl, ranking) used to be skipped with a warning each.
    code = "import multilabel_core; multilabel_core.list_methods(); import multilabel_core_plugins.mlrl"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: multilabel_core is being imported from a source tree that has not been built")
    assert str(checkout / "multilabel_core") in last and "multilabel_core.solvers._kernel_cache" in last
    assert "`pip install -e .`" in last and "build_ext --inplace" in last and "another directory" in last
    assert "Warning" not in result.stderr


def test_an_installed_copy_without_extensions_says_to_reinstall(tmp_path):
    (tmp_path / "multilabel_core" / "solvers").mkdir(parents=True)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "multilabel_core" / "solvers" / f"_smo{suffix}").touch()
    assert _missing_extensions(str(tmp_path / "multilabel_core")) == [
        name for name in COMPILED_EXTENSIONS if name != "solvers._smo"
    ]
    with pytest.raises(ImportError, match=r"no compiled extensions for this Python \(multilabel_core\._ranking, .*reinstall"):
        _check_build(str(tmp_path / "multilabel_core"))


def test_the_plugin_manager_does_not_turn_a_missing_core_extension_into_a_warning(monkeypatch):
    """Extensions that vanish or fail to load after import: the core is broken, not the plugin."""

    class EntryPoint:
        name, value, dist = "solver-user", "solver_user", None

        def load(self):
            raise ModuleNotFoundError(
                "No module named 'multilabel_core.solvers._kernel_cache'", name="multilabel_core.solvers._kernel_cache"
            )

    monkeypatch.setattr("multilabel_core.plugins._unique_entry_points", lambda: [EntryPoint()])
    reset_plugin_manager()
    try:
        with pytest.raises(ImportError, match=r"compiled extension multilabel_core\.solvers\._kernel_cache cannot be imported.*rebuild"):
            get_plugin_manager()
    finally:
        reset_plugin_manager()
