"""docs/testing.md names every public name of the testing kit, and its Python examples run as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from multilabel_core.testing import checks, reference, strategies

DOC = (Path(__file__).resolve().parents[1] / "docs" / "testing.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL)


@pytest.mark.parametrize("module", [strategies, checks, reference], ids=lambda module: module.__name__)
def test_every_public_name_is_documented(module):
    missing = [name for name in module.__all__ if f"`{name}" not in DOC]
    assert not missing, f"docs/testing.md does not document {missing}"


def test_the_plugin_options_are_documented():
    for words in ("-p multilabel_core.testing.pytest_plugin", "`dev`", "`ci`", "datasets_dir", "HYPOTHESIS_PROFILE"):
        assert words in DOC


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_examples_run(index, capsys):
    exec(compile(EXAMPLES[index], f"docs/testing.md example {index}", "exec"), {"__name__": "docs_example"})


def test_the_kkt_example_reports_a_violation(capsys):
    kkt_example = next(code for code in EXAMPLES if "print(error)" in code)
    exec(compile(kkt_example, "docs/testing.md", "exec"), {"__name__": "docs_example"})
    assert "KKT violated at label 0" in capsys.readouterr().out
