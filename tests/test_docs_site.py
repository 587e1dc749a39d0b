"""The documentation site's completeness check (docs/_hooks.py), which `mkdocs build --strict` runs.

The hook is tested here too, so that a public name without a docstring, or a registered method missing
from the API reference, fails the test suite with a clear message even where mkdocs is not installed.
"""

import importlib.util
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module(**members):
    module = types.ModuleType("fake", "A module.")
    for name, obj in members.items():
        obj.__module__ = "fake"
        setattr(module, name, obj)
    return module


def test_the_check_names_an_undocumented_function_class_and_method(hooks):
    def documented():
        """Yes."""

    def bare():
        pass

    class Base:
        """A base."""

        def step(self):
            """Documented here."""

    class Child(Base):
        """A child."""

        def step(self):  # inherits Base.step's docstring, as help() shows it
            pass

        def extra(self):
            pass

    class Undocumented:
        pass

    module = _module(documented=documented, bare=bare, Base=Base, Child=Child, Undocumented=Undocumented)
    assert sorted(hooks._undocumented(module)) == ["fake.Child.extra", "fake.Undocumented", "fake.bare"]


def test_the_reference_covers_the_public_api_with_docstrings(hooks):
    """Every public module and registered method is referenced, and every public name has a docstring."""
    assert hooks.problems(ROOT / "docs") == []


@pytest.mark.parametrize(
    "html, shown",
    [
        (":class:<code>~multilabel_core.base.Loss</code> and", "<code>Loss</code> and"),
        ("see :func:<code>multilabel_core.make_method</code>.", "see <code>multilabel_core.make_method</code>."),
        (":mod:<code>~.loading</code>", "<code>loading</code>"),
        ("a ratio :math: stays", "a ratio :math: stays"),  # only the cross-reference roles
    ],
)
def test_sphinx_roles_left_by_mkdocstrings_show_as_code(hooks, html, shown):
    assert hooks.on_page_content(html) == shown
