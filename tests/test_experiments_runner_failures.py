"""Every failed fit of a run is recorded, counted and shown: inner folds, grid points, whole splits.

The failures are deterministic: an estimator that raises for one grid value only when one
marked row is missing from its training rows, so exactly the inner folds holding that row
out fail, and an estimator whose constructor rejects a value.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from multilabel_core.datasets import Dataset, make_correlated_multilabel
from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.experiments.protocols import get_protocol
from multilabel_core.experiments.runner import run_experiment, split_seeds
from multilabel_core.experiments.search import inner_folds

BASE = make_correlated_multilabel(n_samples=150, n_features=8, n_labels=4, random_state=0)
MARK = 1e3  # feature 0 of row 0: no other row comes near it
X = BASE.X.copy()
X[0, 0] = MARK
DATA = Dataset(X, BASE.Y, name="marked", label_names=BASE.label_names, feature_names=BASE.feature_names)
GRID = {"lam": [0.5, 2.0, 8.0]}
N_SPLITS, INNER_CV = 3, 2


class Ridge(MultiLabelEstimator):
    """Ridge regression on {-1, +1} targets, one column per label."""

    def __init__(self, lam=1.0):
        self.lam = lam

    def _fit(self, X, Y):
        X1 = np.hstack([X, np.ones((X.shape[0], 1))])
        W = np.linalg.solve(X1.T @ X1 + self.lam * np.eye(X1.shape[1]), X1.T @ (2.0 * Y - 1.0))
        self.coef_, self.intercept_ = W[:-1], W[-1]

    def _decision_function(self, X):
        return X @ self.coef_ + self.intercept_


class FragileRidge(Ridge):
    """Raises at lam = 2 when the marked row is not among the training rows."""

    def _fit(self, X, Y):
        if self.lam == 2.0 and not np.any(X[:, 0] == MARK):
            raise RuntimeError("the marked row is missing")
        super()._fit(X, Y)


class PickyRidge(Ridge):
    """A constructor that rejects a value (not a ValueError): the search must survive it too."""

    def __init__(self, lam=1.0):
        if lam == 2.0:
            raise TypeError("lam = 2 is not supported")
        self.lam = lam


def run(tmp_path, methods, grids):
    return run_experiment(methods, [DATA], "kfold", tmp_path / "run", protocol_params={"n_splits": N_SPLITS},
                          grids=grids, inner_cv=INNER_CV, progress=False, plots=False, grid_extensions=0)  # fmt: skip


def expected_failed_folds():
    """split -> the inner folds whose training rows lack the marked row (what must fail at lam = 2)."""
    splits = get_protocol("kfold").split(DATA.Y, 0, n_splits=N_SPLITS)
    expected = {}
    for s, (train, _) in enumerate(splits):
        folds = inner_folds(DATA.Y, train, None, INNER_CV, split_seeds(0, s)[0])
        expected[s] = [k for k, (fit_rows, _, _) in enumerate(folds) if 0 not in fit_rows]
    return expected


@pytest.fixture(scope="module")
def fragile(tmp_path_factory):
    return run(tmp_path_factory.mktemp("fragile"), {"fragile": FragileRidge()}, {"fragile": GRID})


def test_an_inner_fold_failure_is_recorded_with_its_fold_and_point(fragile):
    expected = expected_failed_folds()
    assert sorted(map(len, expected.values())) == [1, 1, 2], "row 0 is tested in one split, trained on in two"
    for record in fragile.records:
        assert record["status"] == "ok" and record["params"]["lam"] != 2.0
        ok_low, failed, ok_high = record["search"]
        assert ok_low["status"] == ok_high["status"] == "ok"
        assert ok_low["fold_errors"] == ok_high["fold_errors"] == [None] * INNER_CV
        assert failed["params"] == {"lam": 2.0} and failed["status"] == "failed" and failed["score"] is None
        raised = [k for k, error in enumerate(failed["fold_errors"]) if error is not None]
        assert raised == expected[record["split"]]
        assert all(failed["fold_errors"][k] == "RuntimeError: the marked row is missing" for k in raised)
        assert all(failed["fold_scores"][k] is None for k in raised)


def test_the_report_counts_and_lists_every_failed_fit(fragile):
    expected = expected_failed_folds()
    n_failed = sum(map(len, expected.values()))
    text = fragile.report["report"].read_text()
    failures = text.split("## Failures\n", 1)[1]
    assert f"Failed fits: {n_failed} ({n_failed} in the hyper-parameter searches, at 3 grid point(s) of 3 split(s)); " \
           "failed splits: 0." in failures
    for s, folds in expected.items():
        where = f"inner fold{'s' if len(folds) > 1 else ''} {', '.join(map(str, folds))} of {INNER_CV}"
        row = f"| fragile | marked | {s} | lam=2 | {where} | RuntimeError: the marked row is missing |"
        assert row in failures
    assert text.count("1 of 3 grid points failed") == N_SPLITS  # beside each split's chosen parameters
    assert f"Failed fits: {n_failed} " in text.split("## Results", 1)[0], "the heading states the count"
    document = json.loads(fragile.report["summary_json"].read_text())
    assert document["n_failed_fits"] == n_failed and document["n_failed_splits"] == 0
    assert [(f["split"], f["stage"], f["params"], f["folds"]) for f in document["failures"]] == [
        (s, "grid point", {"lam": 2.0}, folds) for s, folds in expected.items()
    ]
    assert all(c["n_failed_points"] == 1 and c["n_points"] == 3 for c in document["chosen"])


def test_a_raising_constructor_fails_its_point_and_its_split_not_the_run(tmp_path):
    result = run(tmp_path, {"picky": PickyRidge(), "fixed": PickyRidge()}, {"picky": GRID, "fixed": {"lam": [2.0]}})
    picky = [r for r in result.records if r["method"] == "picky"]
    fixed = [r for r in result.records if r["method"] == "fixed"]
    for record in picky:
        assert record["status"] == "ok" and record["params"]["lam"] != 2.0
        assert record["search"][1]["fold_errors"] == ["TypeError: lam = 2 is not supported"] * INNER_CV
    for record in fixed:  # the final fit's estimator cannot be made: that split failed in its fit
        assert record["status"] == "failed" and record["failed_stage"] == "fit"
        assert record["error"] == "TypeError: lam = 2 is not supported"
    document = json.loads(result.report["summary_json"].read_text())
    assert document["n_failed_fits"] == N_SPLITS * INNER_CV + N_SPLITS
    assert document["n_failed_splits"] == N_SPLITS


def test_a_search_where_every_point_failed_fails_its_split(tmp_path):
    result = run(tmp_path, {"picky": PickyRidge()}, {"picky": {"lam": [2.0, 2.0]}})
    for record in result.records:
        assert record["status"] == "failed" and record["failed_stage"] == "search" and record["params"] == {}
        assert record["error"].startswith("SearchError: no grid point could be scored")
    document = json.loads(result.report["summary_json"].read_text())
    # every inner fit is counted once; the failed splits add no fit of their own
    assert (document["n_failed_fits"], document["n_failed_splits"]) == (N_SPLITS * 2 * INNER_CV, N_SPLITS)
    assert [f["stage"] for f in document["failures"]] == ["grid point", "grid point", "search"] * N_SPLITS
