"""MkDocs hook: the API reference must cover the public API, and every public name must have a docstring.

mkdocstrings renders what the pages name and stays silent about what they omit, so this hook fails
``mkdocs build --strict`` (by logging warnings) when

- a public module of ``multilabel_core`` (no underscore in its dotted name) is named by no ``:::`` directive
  in ``docs/api/``, neither itself nor a package above it (a package's ``__all__`` re-exports its
  submodules' public names), except those in ``NOT_IN_REFERENCE``;
- a registered method's estimator class is named by none;
- a public name of a referenced module (its ``__all__``, else the public classes and functions it defines),
  or a public method or property of such a class, has no docstring.  Overrides inherit the docstring of the
  method they override, as ``help()`` shows them (and ``griffe_inherited_docstrings`` renders them).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.api_reference")

#: Modules documented elsewhere: the package root (its names are the lazy re-exports of the modules
#: below), the CLI on its own page, the pytest plugin in the testing guide.
NOT_IN_REFERENCE = {"multilabel_core", "multilabel_core.cli", "multilabel_core.testing.pytest_plugin"}
_DIRECTIVE = re.compile(r"^:::\s+([\w.]+)", re.MULTILINE)


def _directives(docs_dir: Path) -> set[str]:
    names: set[str] = set()
    for page in (docs_dir / "api").glob("*.md"):
        names.update(_DIRECTIVE.findall(page.read_text(encoding="utf-8")))
    return names


def _public_modules() -> list[str]:
    package = importlib.import_module("multilabel_core")
    names = ["multilabel_core"]
    for info in pkgutil.walk_packages(package.__path__, "multilabel_core."):
        if not any(part.startswith("_") for part in info.name.split(".")) and ".tests" not in info.name:
            names.append(info.name)
    return names


def _covering(module_name: str) -> set[str]:
    """The module and the packages above it, except the root (whose names are lazy re-exports)."""
    parts = module_name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


def _public_names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return [name for name in module.__all__ if not name.startswith("_")]
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == module.__name__
    ]


def _member_doc(cls: type, attr: str) -> str | None:
    """The docstring of ``cls.attr``, or of the member it overrides higher in the MRO."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(attr)
        if value is None:
            continue
        if isinstance(value, property):
            value = value.fget
        doc = getattr(getattr(value, "__func__", value), "__doc__", None)
        if doc:
            return doc
    return None


def _undocumented(module) -> list[str]:
    missing = [] if inspect.getdoc(module) else [module.__name__]
    for name in _public_names(module):
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue  # constants: documented in the module docstring or by a comment
        if inspect.isclass(obj) and not obj.__dict__.get("__doc__"):
            missing.append(f"{module.__name__}.{name}")
        elif not inspect.isclass(obj) and not inspect.getdoc(obj):
            missing.append(f"{module.__name__}.{name}")
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_") or not (inspect.isroutine(value) or isinstance(value, (property, classmethod, staticmethod))):
                    continue
                if not _member_doc(obj, attr):
                    missing.append(f"{module.__name__}.{name}.{attr}")
    return missing


def problems(docs_dir: Path) -> list[str]:
    """Everything the reference misses: uncovered modules, unreferenced methods, undocumented names."""
    import multilabel_core

    referenced = _directives(docs_dir)
    found = [
        f"public module {name} is in no ::: directive of docs/api/"
        for name in _public_modules()
        if name not in NOT_IN_REFERENCE and not _covering(name) & referenced
    ]
    for spec in multilabel_core.list_methods():
        path = f"{spec.estimator.__module__}.{spec.estimator.__qualname__}"
        if path not in referenced:
            found.append(f"registered method {spec.name!r} ({path}) is in no ::: directive of docs/api/")
    undocumented: set[str] = set()
    for name in sorted(referenced):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # a class path: its module is checked when referenced, its docstring by mkdocstrings
        undocumented.update(_undocumented(module))
    return found + [f"public name without a docstring: {name}" for name in sorted(undocumented)]


def on_pre_build(config, **kwargs) -> None:
    for problem in problems(Path(config["docs_dir"])):
        log.warning("%s", problem)


#: A Sphinx cross-reference role as mkdocstrings leaves it in the page: ``:class:`~a.b.C``` becomes
#: ``:class:<code>~a.b.C</code>``.  The docstrings keep Sphinx's roles (they read well in ``help()`` and
#: name the target exactly); the site shows the name alone, the last component when it starts with ``~``.
_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const|ref):<code>(~?)([^<]*)</code>")


def _plain_reference(match: re.Match) -> str:
    short, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return _ROLE.sub(_plain_reference, html)
