"""MkDocs hook: the API reference must cover the public API, and every public name must have a docstring.

mkdocstrings renders what the pages name and stays silent about what they omit, so this hook fails
``mkdocs build --strict`` (by logging warnings) when

- a public module of ``multilabel_core`` (no underscore in its dotted name) is named by no ``:::`` directive
  in ``docs/api/``, neither itself nor a package above it (a package's ``__all__`` re-exports its
  submodules' public names), except those in ``NOT_IN_REFERENCE``;
- a method registered by this distribution (``multilabel-core``: the core's stock plugin and the entry points
  its own metadata declares) has an estimator class named by none.  A third-party plugin installed beside it
  registers methods too; they are its author's to document, and must not fail this site's build;
- a public name of a referenced module (its ``__all__``, else the public classes and functions it defines),
  or a public method or property of such a class, has no docstring.  Overrides inherit the docstring of the
  method they override, as ``help()`` shows them (and ``griffe_inherited_docstrings`` renders them).

The file is also a griffe extension (mkdocs.yml loads it into mkdocstrings' ``extensions``): see
:class:`PublicPresentation`, which keeps private names and lambdas out of the rendered reference.
"""

from __future__ import annotations

import importlib
import importlib.metadata
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
#: The distribution this site documents (pyproject.toml's ``[project] name``).
DISTRIBUTION = "multilabel-core"


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


def own_plugins() -> set[str]:
    """The plugin names this distribution registers: the core's stock plugin and its declared entry points.

    The plugin manager names each plugin after its entry point, so a method's ``spec.plugin`` says whose
    it is.  Read from the installed distribution's metadata (the reference documents the installed
    package), not from pyproject.toml.
    """
    from multilabel_core.plugins import CORE_PLUGIN_NAME, ENTRY_POINT_GROUP

    distribution = importlib.metadata.distribution(DISTRIBUTION)
    return {CORE_PLUGIN_NAME} | {ep.name for ep in distribution.entry_points if ep.group == ENTRY_POINT_GROUP}


def problems(docs_dir: Path) -> list[str]:
    """Everything the reference misses: uncovered modules, unreferenced methods, undocumented names."""
    import multilabel_core

    referenced = _directives(docs_dir)
    found = [
        f"public module {name} is in no ::: directive of docs/api/"
        for name in _public_modules()
        if name not in NOT_IN_REFERENCE and not _covering(name) & referenced
    ]
    try:
        ours = own_plugins()
    except importlib.metadata.PackageNotFoundError:
        ours = set()
        found.append(
            f"the distribution {DISTRIBUTION!r} is not installed, so its methods cannot be told from other "
            f"plugins': install it (pip install -e '.[docs]') before building the site"
        )
    for spec in multilabel_core.list_methods():
        if spec.plugin not in ours:
            continue  # a third-party plugin's method: documented by its own distribution
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


# -- what the reference shows ---------------------------------------------------------------
#
# mkdocstrings renders a class's bases and an attribute's value as the source wrote them.  Both can
# name what a reader cannot use: a private base (``Bases: _LabelRanking``), a starred tuple
# (``class NotFittedError(*_NOT_FITTED_BASES)``), a dict of lambdas (``COMMON_PARAMETERS``), the
# validators of an attrs field (``attrs.field(converter=_names)``).  The extension below rewrites
# them into what they mean for a user; the test suite checks the built pages for what remains.

#: A name a reader of the reference cannot use: private (one leading underscore, not a dunder), or a lambda.
PRIVATE_NAME = re.compile(r"(?<![\w.])_(?!_)\w*|\blambda\b")
#: The calls that declare an attrs field (``attrs.define`` classes here use ``attrs.field``).
_FIELD_CALLS = {"attrs.field", "attr.ib", "attr.attrib", "attr.field"}


def public_bases(cls: type) -> list[type]:
    """``cls``'s bases with each private one replaced by its own public bases (recursively), ``object`` left out."""
    found: list[type] = []
    for base in cls.__bases__:
        for public in public_bases(base) if base.__name__.startswith("_") else [base]:
            if public is not object and public not in found:
                found.append(public)
    return found


def _runtime_object(path: str, module_path: str):
    """The live object at griffe path ``path`` (in module ``module_path``), or None."""
    try:
        obj = importlib.import_module(module_path)
    except ImportError:
        return None
    for part in path[len(module_path) + 1 :].split("."):
        obj = getattr(obj, part, None)
    return obj


def _shown_default(value) -> str | None:
    """The repr a signature can show for a default given by a private constant, or None if it has none."""
    shown = repr(value)
    return shown if len(shown) <= 80 and not PRIVATE_NAME.search(shown) and "<" not in shown else None


def _shown_value(value):
    """What an attribute's value should show: the value, an attrs field's default, or None (nothing)."""
    try:
        import griffe
    except ImportError:  # pragma: no cover - the extension runs only inside mkdocstrings, which has griffe
        return value
    if isinstance(value, griffe.ExprCall) and (
        str(value.function) in _FIELD_CALLS or value.function.canonical_path in _FIELD_CALLS
    ):
        # attrs.field(default=..., validator=...): the default is the value a user sees; the rest is machinery.
        defaults = [
            argument.value
            for argument in value.arguments
            if isinstance(argument, griffe.ExprKeyword) and argument.name == "default"
        ]
        value = defaults[0] if defaults else None
    if value is None or not PRIVATE_NAME.search(str(value)):
        return value
    if isinstance(value, griffe.ExprDict) and not any(PRIVATE_NAME.search(str(key)) for key in value.keys):
        # a table of private checks (COMMON_PARAMETERS): its keys are the public part
        return "{" + ", ".join(f"{key}: ..." for key in value.keys) + "}"
    return None


try:
    import griffe as _griffe
except ImportError:  # the completeness check above needs no griffe; the extension exists only with it
    _griffe = None

if _griffe is not None:

    class PublicPresentation(_griffe.Extension):
        """Private bases replaced by the public classes they stand for; values that name private code hidden.

        - a base whose name is private, or that is not a plain name (``*_NOT_FITTED_BASES``), makes the
          class's bases the runtime class's :func:`public_bases` (``_LabelRanking`` becomes
          ``MultiLabelEstimator``; ``NotFittedError`` shows scikit-learn's ``NotFittedError``);
        - an attrs field shows its default (``gamma = None``), not the ``attrs.field(...)`` call;
        - a parameter whose default is a private constant shows that constant's value
          (``n_samples=integers(min_value=4, max_value=12)``, not ``n_samples=_SAMPLES``);
        - a dict whose values name private functions or lambdas shows its keys (``COMMON_PARAMETERS =
          {'C': ..., 'lam': ...}``); any other value that does is not shown.

        Runs on the loaded package, after ``griffe_inherited_docstrings`` (listed before it), whose
        inheritance walk must still see the real bases.
        """

        def on_package(self, *, pkg, **kwargs) -> None:
            self._visit(pkg, seen=set())

        def _visit(self, obj, seen: set[int]) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            for member in list(obj.members.values()):
                if member.is_alias:
                    continue
                if member.is_attribute and member.value is not None:
                    member.value = _shown_value(member.value)
                if member.is_class:
                    self._present_bases(member)
                if member.is_function:
                    self._present_defaults(member)
                if member.is_module or member.is_class:
                    self._visit(member, seen)

        @staticmethod
        def _present_bases(cls) -> None:
            if not any(
                not isinstance(base, (_griffe.ExprName, _griffe.ExprAttribute)) or PRIVATE_NAME.search(str(base))
                for base in cls.bases
            ):
                return
            runtime = _runtime_object(cls.path, cls.module.path)
            if not inspect.isclass(runtime):
                return  # left as written: the test over the built pages reports it
            cls.bases = [_griffe.ExprName(base.__qualname__, parent=base.__module__) for base in public_bases(runtime)]

        @staticmethod
        def _present_defaults(func) -> None:
            private = [p for p in func.parameters if p.default is not None and PRIVATE_NAME.search(str(p.default))]
            if not private:
                return
            try:
                runtime = inspect.signature(_runtime_object(func.path, func.module.path)).parameters
            except (TypeError, ValueError):
                return  # left as written: the test over the built pages reports it
            for parameter in private:
                if parameter.name in runtime:
                    shown = _shown_default(runtime[parameter.name].default)
                    if shown is not None:
                        parameter.default = shown
