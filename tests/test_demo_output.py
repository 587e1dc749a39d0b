"""`mlcore demo` prints a summary of under 60 lines, explains every term of it, and names every pair of methods
whose rows coincide with the reason; `--full` prints the whole output (every metric, every matrix)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from multilabel_core.cli import (
    COINCIDENCES,
    DEMO_SETTINGS,
    coincidence_lines,
    coinciding_rows,
    label_groups,
    within_across,
)

#: The terms of the summary line, each explained on a line of its own.
TERMS = ["failed fits", "failed splits", "chosen values at a grid edge", "chosen models predicting no label"]


def mlcore(*argv, cwd):
    """The installed command, run outside the checkout (a non-editable install would be shadowed by it)."""
    exe = Path(sys.executable).with_name("mlcore")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "multilabel_core.cli"]
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    result = subprocess.run([*cmd, *argv], capture_output=True, text=True, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's short output, then the full and the JSON ones of the same run (resumed from its folder: only
    the final fits on all rows are computed again)."""
    cwd = tmp_path_factory.mktemp("demo")
    short = mlcore("demo", "--out", "run", cwd=cwd).stdout
    full = mlcore("demo", "--out", "run", "--full", "--quiet", cwd=cwd).stdout
    payload = json.loads(mlcore("demo", "--out", "run", "--json", "--quiet", cwd=cwd).stdout)
    return short, full, payload


def table_rows(out: str) -> dict[str, list[str]]:
    """The short table's rows by method: the three metric cells (the table ends at the first blank line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("method "))
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = cells[1:4]
    return rows


def test_the_demo_prints_under_60_lines_and_full_prints_everything(demo):
    short, full, _ = demo
    lines = short.splitlines()
    # --out adds one line ("results in ..."): the plain `mlcore demo` prints one fewer.
    assert len(lines) < 60, short
    assert len(full.splitlines()) > len(lines) + 60, full
    assert "label correlation learned by" in full and "ranking_loss" in full
    assert "label correlation learned by" not in short and "ranking_loss" not in short
    assert "label correlation of the generating covariance: +0.60 within the groups" in short
    # every method of the run has its row, and the last line is the warning summary
    assert set(table_rows(short)) == {row["method"] for row in demo[2]["summary"]}
    assert re.match(r"(warnings: none|\d+ other warning\(s\))", lines[-1]), lines[-1]
    assert "stopped short of convergence" not in short


def test_every_term_of_the_summary_is_explained_on_its_own_line(demo):
    for out in demo[:2]:
        lines = out.splitlines()
        summary = next(line for line in lines if line.startswith("failed fits:"))
        for term in TERMS:
            assert f"{term}: " in summary
            explained = [line for line in lines if line.startswith(f"  {term}: ")]
            assert len(explained) == 1, (term, out)
            # the line says what the count is and goes on to say what it means
            assert len(explained[0]) > len(term) + 40
        for term in ("columns", "correlation within / across", "warnings"):
            assert sum(line.startswith(f"  {term}: ") for line in lines) == 1, (term, out)
    edges = next(line for line in demo[0].splitlines() if line.startswith("  chosen values at a grid edge: "))
    n_edge, n_choices = map(int, edges.split(": ")[1].split(" of "))
    assert 0 <= n_edge <= n_choices and n_choices > 0


def test_rows_that_coincide_are_named_with_their_reason_and_no_other_pair_does(demo):
    short, full, payload = demo
    rows = table_rows(short)
    pairs = {tuple(item["methods"]): item["extent"] for item in payload["coinciding_rows"]}
    for (a, b), extent in pairs.items():
        known = COINCIDENCES.get((a, b)) or COINCIDENCES.get((b, a))
        assert known is not None and known[0] == extent, (a, b, extent)
        assert f"  {a} and {b} print " in short and known[1] in short
    assert "nothing in their definitions explains" not in short + full
    # The pairs the demo sets apart by construction (DEMO_SETTINGS) differ in their printed rows.
    for a, b in [("larank", "mlfs"), ("clarank", "cmlfs"), ("br", "ovr_linear")]:
        if a in rows and b in rows:
            assert rows[a] != rows[b], (a, b, rows[a])
            assert (a, b) not in pairs
    assert payload["params"]["mlfs"]["n_features"] < payload["data"]["n_features"]
    assert payload["params"]["cmlfs"]["n_features"] < payload["data"]["n_features"]
    # clarank learns a relation away from its start I / L (at mu = 0.01 its first step used to return I / L)
    learned = np.asarray(payload["learned_label_correlation"]["clarank"])
    assert np.abs(learned - np.eye(len(learned))).max() > 0.1
    # without unlabelled rows SSMLRL is MLRL: the same row, said so
    assert pairs.get(("mlrl", "ssmlrl")) == "all"


def test_coincidence_lines_name_a_pair_without_a_reason_as_a_defect():
    known = coincidence_lines([("larank", "mlfs", "all")])
    assert known[0].startswith("  larank and mlfs print the same row by construction: MLFS selecting")
    unexplained = coincidence_lines([("br", "mlknn", "all"), ("br", "ovr_linear", "ranking")])
    assert all("nothing in their definitions explains: please report it" in line for line in unexplained)


def _record(method, split, **metrics):
    return {"method": method, "dataset": "d", "split": split, "status": "ok", "metrics": metrics, "params": {}}


def test_coinciding_rows_compares_the_printed_means():
    full = dict(average_precision=0.9, ranking_loss=0.1, one_error=0.2, coverage=1.5, hamming_loss=0.05,
                macro_f1=0.8)  # fmt: skip
    records = [
        _record("a", 0, **full),
        _record("b", 0, **{**full, "macro_f1": 0.80001}),  # equal as printed (4 decimals)
        _record("c", 0, **{**full, "hamming_loss": 0.06}),  # the same ranking, other predictions
        _record("e", 0, **{**full, "average_precision": 0.91}),
    ]
    assert coinciding_rows(records, ["a", "b", "c", "e"]) == [("a", "b", "all"), ("a", "c", "ranking"),
                                                              ("b", "c", "ranking")]  # fmt: skip


def test_within_across_reads_the_two_groups_of_the_generating_covariance():
    truth = np.full((4, 4), -0.5)
    truth[:2, :2] = truth[2:, 2:] = 0.5
    np.fill_diagonal(truth, 1.0)
    assert label_groups(truth) == [[0, 1], [2, 3]]
    assert within_across(truth, truth) == (0.5, -0.5)
    assert within_across(np.eye(4), truth) == (0.0, 0.0)


def test_the_demo_settings_keep_the_feature_selection_below_the_demo_data_width():
    from multilabel_core.datasets import make_correlated_multilabel

    width = make_correlated_multilabel(random_state=0).X.shape[1]
    for name in ("mlfs", "cmlfs"):
        assert max(DEMO_SETTINGS[name]["n_features"]) < width
