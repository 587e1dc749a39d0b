"""docs/plugin-guide.md documents every hook with its exact signature, and stays true."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import attrs
import pluggy
import pytest

from multilabel_core import hookspecs
from multilabel_core.plugins import DISABLE_AUTOLOAD_ENV, ENTRY_POINT_GROUP
from multilabel_core.registry import COMPONENT_KINDS, ComponentSpec, DatasetSpec, MethodSpec

REPO = Path(__file__).resolve().parents[1]
GUIDE = (REPO / "docs" / "plugin-guide.md").read_text()
EXAMPLE = REPO / "docs" / "examples" / "mlcore-example-plugin"


def hook_signatures() -> list[str]:
    """``name(signature)`` of every hook specification in multilabel_core/hookspecs.py."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    signatures = []
    for name, caller in vars(manager.hook).items():
        if getattr(caller, "spec", None) is not None:
            signatures.append(f"{name}{inspect.signature(caller.spec.function)}")
    return sorted(signatures)


def test_hookspecs_are_found():
    assert hook_signatures() == [
        "register_components(register)",
        "register_datasets(register)",
        "register_methods(register)",
        "register_trusted_types(register)",
    ]


@pytest.mark.parametrize("signature", hook_signatures())
def test_every_hook_is_documented_with_its_exact_signature(signature):
    assert f"`{signature}`" in GUIDE, f"docs/plugin-guide.md does not document the hook {signature}"


@pytest.mark.parametrize("record", [MethodSpec, ComponentSpec, DatasetSpec])
def test_every_record_field_is_documented(record):
    for field in attrs.fields(record):
        assert f"| `{field.name}` |" in GUIDE, f"{record.__name__}.{field.name} is not documented"


def test_component_kinds_entry_point_group_and_switch_are_named():
    for kind in COMPONENT_KINDS:
        assert f'`"{kind}"`' in GUIDE
    assert f'[project.entry-points."{ENTRY_POINT_GROUP}"]' in GUIDE
    assert f"`{DISABLE_AUTOLOAD_ENV}`" in GUIDE


def test_the_complete_plugin_module_shown_is_the_example_distributions():
    shown = re.findall(r"```python\n(.*?)```", GUIDE, flags=re.S)
    source = (EXAMPLE / "mlcore_example_plugin" / "__init__.py").read_text()
    assert source in shown


def test_the_entry_point_shown_is_the_example_distributions():
    pyproject = (EXAMPLE / "pyproject.toml").read_text()
    table = f'[project.entry-points."{ENTRY_POINT_GROUP}"]\nexample = "mlcore_example_plugin"\n'
    assert table in pyproject and table in GUIDE
