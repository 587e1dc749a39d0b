"""The README's examples run as printed: the Python block, and every `mlcore` command of its shell blocks.

Each command runs in a fresh process outside the checkout (in CI the package is a non-editable install,
which an unbuilt source tree in the working directory would shadow), with the shared datasets found
through ``$MULTILABEL_CORE_DATA``, exactly as printed.  Two exceptions, both said in the README:
``mlcore demo`` runs in tests/test_demo_output.py (the same command with ``--out``), and the full
protocol's compare (its block marked ``full-protocol``: an hour of fits) runs in this process up to the
run: its options parsed into the experiment, its data loaded and its fits counted, nothing fitted.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FULL_PROTOCOL = "<!-- full-protocol -->"


def test_readme_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 10
    exec(compile(blocks[0], str(README), "exec"), {})
    printed = capsys.readouterr().out
    assert "'br'" in printed and "average_precision" in printed


def shell_blocks(text: str) -> list[tuple[bool, str]]:
    """The README's fenced blocks without a language, each with whether the full-protocol marker precedes it."""
    blocks, body, language, previous = [], None, None, ""
    for line in text.splitlines():
        if body is None and line.startswith("```"):
            body, language, marker = [], line[3:].strip(), previous.strip()
        elif body is not None and line.startswith("```"):
            if not language:
                blocks.append((marker == FULL_PROTOCOL, "\n".join(body)))
            body = None
        elif body is not None:
            body.append(line)
        previous = line
    return blocks


def readme_commands() -> list[tuple[str, bool]]:
    """Every `mlcore` command of the README's shell blocks, split at ``&&``, its ``#`` comment removed, with
    whether it is the full protocol's."""
    commands = []
    for full, body in shell_blocks(README.read_text()):
        for line in body.splitlines():
            line = line.split("  #", 1)[0].strip()
            for part in (p.strip() for p in line.split("&&")):
                if part.startswith("mlcore "):
                    commands.append((part, full))
    return commands


COMMANDS = readme_commands()


def test_the_readme_documents_commands_of_every_kind():
    words = {shlex.split(command)[1] for command, _ in COMMANDS}
    assert {"methods", "datasets", "describe", "evaluate", "fit", "predict", "compare", "demo"} <= words, words
    assert sum(full for _, full in COMMANDS) == 1, "one full-protocol compare, shown beside the short one"
    assert [c for c, full in COMMANDS if not full and shlex.split(c)[1] == "compare"], "a short compare runs"
    # the time each takes is stated (a "# about N s" comment, or the sentence after the block)
    text = README.read_text()
    assert re.search(r"about \d+ s on 2 shared cores", text) and re.search(r"\d+ min", text)


def mlcore(argv: list[str], cwd: Path, data: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mlcore")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "multilabel_core.cli"]
    env = {**os.environ, "MULTILABEL_CORE_DATA": str(data)}
    return subprocess.run([*cmd, *argv], capture_output=True, text=True, cwd=cwd, env=env)


class Planned(Exception):
    """Raised in place of the full protocol's run, carrying the experiment the command built."""


def check_full_protocol(argv: list[str], data: Path) -> None:
    """The full protocol's command as printed, up to the run: its options parsed into the experiment the
    README describes (10 folds, the registered grids, 1680 fits before any grid extension) and its data loaded."""
    import multilabel_core as mlc
    from multilabel_core.cli import main
    from multilabel_core.experiments import runner

    def planned(experiment, *args, **kwargs):
        raise Planned(experiment)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "run", planned)
        patch.setenv("MULTILABEL_CORE_DATA", str(data))
        with pytest.raises(Planned) as caught:
            main(argv)
        experiment = caught.value.args[0]
        loaded = experiment.load_datasets()
    assert experiment.protocol == "kfold" and experiment.protocol_params == {"n_splits": 10}
    assert experiment.preprocess == "standardize" and experiment.inner_cv == 3
    registered = {spec.name: spec.param_grid for spec in mlc.list_methods()}
    n_splits = experiment.protocol_params["n_splits"]
    fits = 0
    for method in experiment.methods:
        grid = experiment.grid(method)
        assert grid == registered[method], method
        points = int(np.prod([len(values) for values in grid.values()]))
        fits += n_splits * (points * experiment.inner_cv + 1)
    assert sorted(loaded) == ["emotions", "yeast"]
    assert fits * len(loaded) == 1680  # as the README says


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One folder for the README's commands in order: `predict` reads the model `fit` wrote."""
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("command, full", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_readme_command_runs_as_printed(command, full, workdir, datasets_dir):
    argv = shlex.split(command)[1:]
    if argv == ["demo"]:
        pytest.skip("tests/test_demo_output.py runs `mlcore demo` (with --out, to read its results)")
    if full:
        check_full_protocol(argv, datasets_dir)
        return
    result = mlcore(argv, workdir, datasets_dir)
    assert result.returncode == 0, f"{command}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    assert result.stdout.strip(), command
    if argv[0] == "compare":
        assert "failed fits: 0" in result.stdout and "failed splits: 0" in result.stdout, result.stdout
