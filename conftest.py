"""The bundled plugins' tests import the installed plugin packages, never their unbuilt sources.

pytest's importlib import mode names a test module after its path below the root
(``plugins/prml/tests/test_bundle.py`` -> ``plugins.prml.tests.test_bundle``) and, when that name is
not importable, imports the parent packages from the source tree under those names.  A family
with a compiled engine (PrML's and the ranking family's Cython duals) cannot run from an unbuilt
source tree, and any family imported twice (source and installed) would register its classes
twice.  So the parents are the installed ``multilabel_core_plugins`` packages, under the names
pytest asks for.
"""

import importlib
import pkgutil
import sys

import multilabel_core_plugins

sys.modules.setdefault("plugins", multilabel_core_plugins)
for _family in pkgutil.iter_modules(multilabel_core_plugins.__path__):
    if _family.ispkg:
        sys.modules.setdefault(f"plugins.{_family.name}", importlib.import_module(f"multilabel_core_plugins.{_family.name}"))
