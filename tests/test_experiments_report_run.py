"""End to end: a tiny run of the runner, its stored records, and the report written from them."""

import csv
import json
import warnings

import pytest

import multilabel_core as mlc
from multilabel_core.experiments import read_records, run_experiment
from multilabel_core.experiments.report import write_report
from multilabel_core.experiments.stats import compare_to_reference, summarize


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """br (C searched by inner CV) against a weakly regularised br on the synthetic data, 3 folds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlc.ConvergenceWarning)  # the inner search may stop at max_iter
        return run_experiment(
            {"br": None, "br_weak": mlc.make_method("br", C=0.001)},
            "synthetic",
            "kfold",
            tmp_path_factory.mktemp("compare"),
            protocol_params={"n_splits": 3},
            grids={"br": {"C": [0.1, 1.0, 10.0]}},
            reference_method="br",
            progress=False,
            plots=True,
        )


def test_the_runner_writes_the_report_of_its_stored_records(result):
    report = result.report
    folder = report["report"].parent  # the report is written into the store folder
    assert len(read_records(folder)) == len(result.records) == 6
    assert report["summary_json"].parent == folder
    text = report["report"].read_text()
    assert "6 records (0 failed): methods br, br_weak on datasets synthetic; protocol kfold." in text
    assert "## Configuration" in text and "  - protocol: `kfold`" in text
    assert "| metric | br (reference) | br_weak |" in text and "## Win/tie/loss of br" in text
    # the only searched hyper-parameter gives the only figure (one certificate per fit: no convergence curve)
    assert [p.name for p in report["plots"]] == ["search_synthetic_C_average_precision.png"]


def test_report_numbers_are_those_of_the_records(result):
    summary = summarize(result.records)
    comparison = compare_to_reference(result.records, "br")
    document = json.loads(result.report["summary_json"].read_text())
    assert [row["mean"] for row in document["summary"]] == pytest.approx([row["mean"] for row in summary])
    assert document["win_tie_loss"]["Total"]["br_weak"] == comparison.win_tie_loss()["Total"]["br_weak"]._asdict()
    with result.report["splits_csv"].open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 * len(mlc.metrics.METRICS)
    assert {json.loads(row["params"])["C"] for row in rows if row["method"] == "br"} <= {0.1, 1.0, 10.0}


def test_rewriting_the_report_from_the_store_gives_the_same_files(result, tmp_path):
    again = write_report(read_records(result.report["report"].parent), tmp_path, reference_method="br", plots=False)
    for key in ("summary_csv", "splits_csv"):
        assert again[key].read_text() == result.report[key].read_text()
    original = json.loads(result.report["summary_json"].read_text())
    rewritten = json.loads(again["summary_json"].read_text())
    assert rewritten["summary"] == original["summary"] and rewritten["comparisons"] == original["comparisons"]
