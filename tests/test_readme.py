"""The README's Python example runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 10
    exec(compile(blocks[0], str(README), "exec"), {})
    printed = capsys.readouterr().out
    assert "'br'" in printed and "average_precision" in printed
