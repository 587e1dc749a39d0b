"""The report shows the chosen hyper-parameters with their failed grid points and grid-edge choices,
and lists every failed fit; summary.json holds the same counts and lists."""

import json

import pytest

from multilabel_core.experiments.diagnostics import failure_counts, failures, grid_edge_counts, grid_edges
from multilabel_core.experiments.report import write_report

GRID = (0.01, 0.1, 1.0, 10.0)
ERROR = "RuntimeError: singular"


def entry(C, score, fold_errors=(None, None, None)):
    failed = any(e is not None for e in fold_errors)
    return {
        "params": {"C": C, "kernel": "rbf"},
        "score": None if failed else score,
        "status": "failed" if failed else "ok",
        "error": next((e for e in fold_errors if e is not None), None),
        "fold_scores": [None if e else score for e in fold_errors],
        "fold_errors": list(fold_errors),
        "warnings": [],
    }


def record(method, split, chosen, search, *, status="ok", error=None, stage=None):
    return {
        "method": method, "dataset": "emotions", "protocol": "kfold", "split": split, "status": status,
        "error": error, "failed_stage": stage, "params": {} if chosen is None else {"C": chosen, "kernel": "rbf"},
        "search": search, "selection_metric": "average_precision",
        "metrics": {"average_precision": 0.8} if status == "ok" else {}, "fit_time": 0.1, "predict_time": 0.01,
        "certificates": [], "converged": None, "warnings": [],
    }  # fmt: skip


def make_records():
    scores = dict(zip(GRID, (0.8, 0.7, 0.6, 0.5)))
    lowest = record("svm", 0, 0.01, [entry(C, scores[C]) for C in GRID])
    highest = record("svm", 1, 10.0, [entry(C, 1.0 - scores[C]) for C in GRID])
    inner = record("svm", 2, 0.1, [entry(C, 0.9 if C == 0.1 else 0.5, (None, ERROR, None) if C == 1.0 else
                                         (None, None, None)) for C in GRID])  # fmt: skip
    hopeless = record("svm", 3, None, [entry(C, 0.0, (ERROR,) * 3) for C in GRID], status="failed",
                      error="SearchError: no grid point could be scored", stage="search")  # fmt: skip
    two = record("two", 0, 0.01, [entry(C, scores[C]) for C in GRID[:2]])  # two values: no interior, no edge
    legacy = record("old", 0, None, [], status="failed", error="ValueError: inner search: too few rows")
    del legacy["failed_stage"]  # written before the runner stored it
    return [lowest, highest, inner, hopeless, two, legacy]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    records = make_records()
    paths = write_report(records, tmp_path_factory.mktemp("run"), plots=False)
    document = json.loads(paths["summary_json"].read_text())
    return {"records": records, "text": paths["report"].read_text(), "json": document}


def rows_of(text, heading):
    lines = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0].splitlines()
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines if line.startswith("| ")][2:]


def test_edges_are_the_lowest_or_highest_of_a_numeric_grid_of_three_or_more():
    lowest, highest, inner, hopeless, two, legacy = make_records()
    assert grid_edges(lowest) == [{"param": "C", "value": 0.01, "edge": "lowest", "grid": list(GRID)}]
    assert grid_edges(highest) == [{"param": "C", "value": 10.0, "edge": "highest", "grid": list(GRID)}]
    assert grid_edges(inner) == grid_edges(hopeless) == grid_edges(two) == grid_edges(legacy) == []
    assert grid_edge_counts(make_records()) == [
        {"dataset": "emotions", "method": "svm", "param": "C", "lowest": 1, "highest": 1, "n_searched": 3,
         "grid": list(GRID)}
    ]  # fmt: skip


def test_failures_name_the_fold_and_the_point_and_count_each_fit_once():
    rows = failures(make_records())
    assert [(r["method"], r["split"], r["stage"], r["params"], r["folds"], r["n_fits"]) for r in rows] == [
        ("svm", 2, "grid point", {"C": 1.0, "kernel": "rbf"}, [1], 1),
        *[("svm", 3, "grid point", {"C": C, "kernel": "rbf"}, [0, 1, 2], 3) for C in GRID],
        ("svm", 3, "search", None, None, 0),  # its fits are the 12 above
        ("old", 0, "search", None, None, 1),  # no fit was counted for it: the split counts as one
    ]
    assert failure_counts(make_records()) == {
        "n_failed_fits": 1 + 12 + 1, "n_failed_inner_fits": 13, "n_failed_points": 5, "n_failed_splits": 2,
        "n_searches_with_failures": 2,
    }  # fmt: skip


def test_chosen_parameters_carry_their_edge_and_failed_points(report):
    rows = rows_of(report["text"], "## Hyper-parameters")
    assert [row[:5] for row in rows] == [
        ["emotions", "svm", "0", "C=0.01, kernel=rbf", "0.8000"],
        ["emotions", "svm", "1", "C=10, kernel=rbf", "0.5000"],
        ["emotions", "svm", "2", "C=0.1, kernel=rbf", "0.9000"],
        ["emotions", "svm", "3", "— (split failed)", "—"],
        ["emotions", "two", "0", "C=0.01, kernel=rbf", "0.8000"],
    ]
    assert [row[5] for row in rows] == [
        "C at the lowest grid value (0.01 … 10, 4 values)",
        "C at the highest grid value (0.01 … 10, 4 values)",
        "1 of 4 grid points failed",
        "4 of 4 grid points failed",
        "",
    ]


def test_the_grid_edge_section_counts_per_method_dataset_and_parameter(report):
    assert rows_of(report["text"], "## Chosen values at a grid edge") == [
        ["emotions", "svm", "C", "1", "1", "3", "0.01, 0.1, 1, 10"]
    ]
    assert "Chosen values at a grid edge: 2." in report["text"].split("## Results")[0]
    assert report["json"]["n_grid_edges"] == 2
    assert report["json"]["grid_edges"] == jsonable_counts()
    chosen = {(c["method"], c["split"]): c for c in report["json"]["chosen"]}
    assert chosen["svm", 0]["grid_edges"][0]["edge"] == "lowest" and chosen["svm", 2]["n_failed_points"] == 1


def jsonable_counts():
    return json.loads(json.dumps(grid_edge_counts(make_records())))


def test_the_failures_section_lists_grid_points_and_splits(report):
    text = report["text"].split("## Failures\n", 1)[1]
    assert text.startswith(
        "\nFailed fits: 14 (13 in the hyper-parameter searches, at 5 grid point(s) of 2 split(s); 1 of whole "
        "splits); failed splits: 2.\n"
    )
    rows = rows_of(report["text"], "## Failures")
    assert rows[0] == ["svm", "emotions", "2", "C=1, kernel=rbf", "inner fold 1 of 3", ERROR]
    assert rows[1] == ["svm", "emotions", "3", "C=0.01, kernel=rbf", "inner folds 0, 1, 2 of 3", ERROR]
    assert rows[5] == ["svm", "emotions", "3", "—", "search (split failed)",
                       "SearchError: no grid point could be scored"]
    assert rows[6] == ["old", "emotions", "0", "—", "search (split failed)", "ValueError: inner search: too few rows"]
    assert report["json"]["n_failed_fits"] == 14 and len(report["json"]["failures"]) == 7


def test_a_run_without_search_says_so(tmp_path):
    plain = [record("fixed", k, None, []) for k in range(2)]
    text = write_report(plain, tmp_path, plots=False)["report"].read_text()
    assert "No hyper-parameter search: every grid had one point (used as given)." in text
    assert "None: no chosen value of a numeric grid of three or more values is its lowest or highest value." in text
