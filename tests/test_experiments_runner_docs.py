"""docs/experiments.md stays true: its experiment file loads, its tables match the code."""

from __future__ import annotations

import re
from pathlib import Path

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.config import FILE_KEYS, load_experiment
from multilabel_core.experiments.protocols import PROTOCOLS
from multilabel_core.experiments.runner import run_experiment

DOC = (Path(__file__).resolve().parents[1] / "docs" / "experiments.md").read_text()


def table_rows(heading: str) -> list[list[str]]:
    """Cells of the first Markdown table after ``heading``, its header and rule left out."""
    lines = DOC[DOC.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[start + 2 : end]]


def test_the_documented_experiment_file_loads(tmp_path):
    block = re.search(r"```toml\n(.*?)```", DOC, re.S).group(1)
    path = tmp_path / "experiment.toml"
    path.write_text(block)
    experiment = load_experiment(path)
    assert experiment.grids == {"br": {"tol": [1e-3], "C": [0.01, 0.1, 1, 10, 100]}}
    assert experiment.protocol_params == {"n_splits": 10} and experiment.reference_method == "br"
    listed = re.search(r"Allowed keys: (.*?), and the `report` table", DOC, re.S).group(1)
    assert re.findall(r"`(\w+)`", listed) + ["report"] == list(FILE_KEYS)


def test_the_protocol_table_gives_every_protocol_with_its_defaults():
    rows = table_rows("## Protocols")
    documented = {row[0].strip("`"): row[1] for row in rows}
    assert list(documented) == list(PROTOCOLS)
    for name, cell in documented.items():
        assert cell == ", ".join(f"`{k}={v}`" for k, v in PROTOCOLS[name].defaults.items())


def test_the_record_table_lists_every_key_a_record_has(tmp_path):
    data = make_correlated_multilabel(n_samples=60, n_features=4, n_labels=3, random_state=0)
    (record, *_) = run_experiment(["br"], [data], "kfold", tmp_path / "run", protocol_params={"n_splits": 2},
                                  grids={"br": {"C": [0.1, 1.0]}}, inner_cv=2, progress=False, plots=False).records
    documented = {key for row in table_rows("### The record") for key in re.findall(r"`(\w+)`", row[0])}
    assert documented == set(record)
    search_keys = re.search(r"\| `search` \| one entry per grid point: (.*?);", DOC).group(1)
    assert set(re.findall(r"`(\w+)`", search_keys)) == set(record["search"][0])
