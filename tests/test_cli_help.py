"""Every argument of every subcommand has help text; describe prints rounded numbers."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

import pytest

from multilabel_core.cli import build_parser

CLI = [sys.executable, "-m", "multilabel_core.cli"]


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (choices,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(choices.choices)


def test_every_subcommand_and_every_argument_has_help():
    parser = build_parser()
    (choices,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    listed = {action.dest: action.help for action in choices._choices_actions}
    missing = [f"mlcore {name}" for name in choices.choices if not listed.get(name)]
    for name, sub in choices.choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not isinstance(action.help, str) or not action.help.strip() or action.help == argparse.SUPPRESS:
                missing.append(f"mlcore {name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"no help text: {missing}"
    assert len(choices.choices) >= 8  # the walk saw the subcommands (methods ... demo)


def test_the_positionals_and_param_of_fit_and_evaluate_show_in_help(tmp_path):
    for command in ("fit", "evaluate"):
        run = subprocess.run([*CLI, command, "--help"], capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        text = " ".join(run.stdout.split())
        assert "method a registered method name" in text
        assert "data a dataset name" in text or "data the training data" in text
        assert "--param NAME=VALUE a hyper-parameter of the method" in text
    text = " ".join(subprocess.run([*CLI, "evaluate", "--help"], capture_output=True, text=True, cwd=tmp_path).stdout.split())
    assert "--n-jobs N folds fitted at once" in text


def _significant_digits(text: str) -> int:
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa)


def test_describe_rounds_to_four_significant_digits_and_json_keeps_them_all(tmp_path):
    env = {**os.environ}
    run = subprocess.run([*CLI, "describe", "synthetic"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    values = dict(line.split(None, 1) for line in run.stdout.splitlines()[1:])
    exact = json.loads(subprocess.run([*CLI, "describe", "synthetic", "--json"], capture_output=True, text=True,
                                      cwd=tmp_path, env=env).stdout)  # fmt: skip
    floats = {key: value for key, value in exact.items() if isinstance(value, float)}
    assert {"label_cardinality", "label_density", "density"} <= set(floats)
    for key, value in floats.items():
        shown = values[key].strip()
        assert re.fullmatch(r"-?[0-9.]+(e[-+][0-9]+)?", shown), shown
        assert _significant_digits(shown) <= 4, (key, shown)
        assert float(shown) == pytest.approx(value, rel=5e-4)  # rounded, not another number
