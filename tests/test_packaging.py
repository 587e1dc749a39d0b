"""The source tree and pyproject.toml agree: every package folder is installed."""

from __future__ import annotations

import tomllib
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
ALLOWED_TOP = {"pyproject.toml", "setup.py", "multilabel_core", "plugins", "tests", "docs", "README.md", "benchmarks",
               "mkdocs.yml", "conftest.py"}


def source_packages() -> set[str]:
    found = set()
    for root, import_root in [("multilabel_core", "multilabel_core"), ("plugins", "multilabel_core_plugins")]:
        for init in (REPO / root).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / root).parts
            found.add(".".join((import_root, *rel)))
    return found


def test_pyproject_lists_every_package_folder():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = set(config["tool"]["setuptools"]["packages"])
    assert declared == source_packages()


def test_top_level_layout():
    visible = {p.name for p in REPO.iterdir() if not p.name.startswith(".")}
    build_outputs = {"build", "dist", "site"} | {p for p in visible if p.endswith(".egg-info")}  # site: mkdocs build
    assert visible - build_outputs <= ALLOWED_TOP
    assert {"pyproject.toml", "setup.py", "multilabel_core", "plugins", "tests", "docs", "README.md"} <= visible


def test_cython_extension_is_compiled():
    from multilabel_core import _ranking

    assert Path(_ranking.__file__).suffix in {".so", ".pyd"}
