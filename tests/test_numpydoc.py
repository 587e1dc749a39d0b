"""Docstrings in numpydoc, validated by numpydoc's own checker.

The public names are those the documentation site holds to a docstring (docs/_hooks.py): every
name in ``__all__`` (else every public class and function) of every public module of
``multilabel_core`` and of the bundled plugins (``multilabel_core_plugins``, less tests, scripts and
examples), and the public methods and properties those classes define.  Each is validated by :func:`numpydoc.validate.validate`
on the checks in :data:`CHECKS`; an override without a docstring of its own is validated on the
docstring it inherits (``help()`` shows that one, and so does the site).

Every public name must pass every check in :data:`CHECKS`; none is exempt.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import warnings
from pathlib import Path

import pytest
from numpydoc.docscrape import get_doc_object
from numpydoc.validate import Validator, validate

import multilabel_core

ROOT = Path(__file__).resolve().parents[1]

#: The numpydoc checks: a docstring (GL08), its summary (SS01 present, SS02 capitalised, SS03
#: ending in a period, SS05 imperative), parameters (PR01 every one documented, PR02 none
#: unknown), returns (RT01 documented for what returns something), sections (GL06 known ones,
#: GL07 in numpydoc's order).
CHECKS = ("GL06", "GL07", "GL08", "PR01", "PR02", "RT01", "SS01", "SS02", "SS03", "SS05")


#: ids of property getters: their docstring describes the value, so RT01 does not apply.
PROPERTIES: set[int] = set()
#: Public names that are data (constants, mappings) or modules, not validated (counted in the report).
DATA_NAMES: set[str] = set()
#: Names whose source numpydoc cannot read (RT01 then unverified), filled by the validator.
UNVERIFIED_RETURNS: set[str] = set()


def _hooks():
    spec = importlib.util.spec_from_file_location("_docs_hooks", ROOT / "docs" / "_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class InheritingValidator(Validator):
    """numpydoc's validator on the docstring ``inspect.getdoc`` gives (an override inherits its base's)."""

    def __init__(self, obj_name):
        obj = obj_name
        doc = inspect.getdoc(obj) or ""
        super().__init__(get_doc_object(obj, doc=doc))
        self.raw_doc = doc
        self.clean_doc = doc
        self._qualname = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"

    @property
    def name(self):
        return self._qualname

    @property
    def method_source(self):
        # Methods attrs or another generator made have no source file: RT01 cannot see their
        # return statements there, so they are counted as unverified (the report names the number).
        try:
            return super().method_source
        except (OSError, TypeError):
            UNVERIFIED_RETURNS.add(self._qualname)
            return ""


def _plugin_modules() -> list[str]:
    """Every module of the bundled plugins, less their tests, scripts and examples and private modules."""
    import multilabel_core_plugins

    names = []
    for info in pkgutil.walk_packages(multilabel_core_plugins.__path__, "multilabel_core_plugins."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") or part in ("tests", "scripts", "examples") for part in parts):
            continue
        names.append(info.name)
    return names


def public_objects() -> dict[str, object]:
    """Dotted name -> object, for every public name the site documents (module functions and
    classes, and the public methods and properties the classes define)."""
    hooks = _hooks()
    modules = [name for name in hooks._public_modules() if name not in hooks.NOT_IN_REFERENCE]
    modules += [name for name in hooks._directives(ROOT / "docs") if name.startswith("multilabel_core_plugins")]
    modules += _plugin_modules()
    found, seen = {}, set()
    for module_name in sorted(set(modules), key=lambda name: (name.count("."), name)):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            # A directive naming a class (``::: package.module.Class``): the class itself.
            parent, _, attr = module_name.rpartition(".")
            module, names = importlib.import_module(parent), [attr]
            module_name = parent
        else:
            names = hooks._public_names(module)
        for name in names:
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                DATA_NAMES.add(f"{module_name}.{name}")  # a constant or submodule: no docstring of its own
                continue
            if id(obj) in seen:
                continue  # re-exported (``multilabel_core.base.Loss`` is ``multilabel_core.base.loss.Loss``)
            seen.add(id(obj))
            found[f"{module_name}.{name}"] = obj
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(value, (staticmethod, classmethod)):
                        found[f"{module_name}.{name}.{attr}"] = getattr(obj, attr)
                    elif inspect.isfunction(value):
                        found[f"{module_name}.{name}.{attr}"] = value
                    elif isinstance(value, property) and value.fget is not None:
                        PROPERTIES.add(id(value.fget))
                        found[f"{module_name}.{name}.{attr}"] = value.fget
    return found


def failures(obj) -> list[tuple[str, str]]:
    """The (check, message) pairs of :data:`CHECKS` that ``obj``'s docstring fails."""
    if not (inspect.getdoc(obj) or "").strip():
        return [("GL08", "The object does not have a docstring")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc's own UserWarnings about unknown sections: GL06 counts them
        result = validate(obj, validator_cls=InheritingValidator)
    return [(code, message) for code, message in result["errors"]
            if code in CHECKS and not (code == "RT01" and id(obj) in PROPERTIES)]


@pytest.fixture(scope="module")
def results():
    objects = public_objects()
    assert len(objects) > 500, f"only {len(objects)} public names found: the enumeration is broken"
    return {name: (obj, failures(obj)) for name, obj in objects.items()}


def test_the_registered_estimators_are_among_the_validated_names(results):
    for spec in multilabel_core.list_methods():
        cls = spec.estimator
        assert any(results_name.endswith(f".{cls.__name__}") for results_name in results), cls


def test_every_public_name_passes_every_check(results):
    bad = [f"{name}: {code} {message}" for name, (obj, errors) in sorted(results.items()) for code, message in errors]
    warnings.warn(
        f"numpydoc: {len(results)} public names validated; {len(UNVERIFIED_RETURNS)} have no source, so RT01 is "
        f"unverified there; {len(DATA_NAMES)} public names are data or modules, with no docstring of their own",
        UserWarning,
    )
    assert not bad, f"{len(bad)} numpydoc failures:\n" + "\n".join(bad)


def test_the_check_catches_a_bad_docstring():
    def scaled(x, factor=2.0):
        """returns x times factor"""
        return x * factor

    codes = {code for code, _ in failures(scaled)}
    assert {"PR01", "RT01", "SS02", "SS03", "SS05"} <= codes, codes
