"""The experiment runner: records, hyper-parameter search, failures, warm starts, transductive splits."""

from __future__ import annotations

import json
from functools import partial
from typing import ClassVar

import numpy as np
import pytest

from multilabel_core import make_method
from multilabel_core.certificate import Certificate
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator, MultiLabelEstimator
from multilabel_core.experiments.config import Experiment
from multilabel_core.experiments.runner import evaluate_split, run_experiment
from multilabel_core.experiments.search import InnerSearch, expand_grid, search_params
from multilabel_core.experiments.store import read_records
from multilabel_core.kernels import RBFKernel
from multilabel_core.metrics import METRICS
from multilabel_core.plugins import get_method

DATA = make_correlated_multilabel(n_samples=150, n_features=8, n_labels=4, random_state=0)

CONTRACT_KEYS = {
    "config_hash", "method", "dataset", "protocol", "split", "status", "error", "params", "search",
    "selection_metric", "metrics", "fit_time", "predict_time", "n_train", "n_test", "n_labels", "label_names",
    "certificates", "converged", "label_correlation", "warnings",
}  # fmt: skip


def compare(tmp_path, methods=("br",), **settings):
    settings = {
        "protocol_params": {"n_splits": 3},
        "grids": {"br": {"C": [0.1, 1.0]}} if "br" in methods else {},
        "inner_cv": 2,
        "progress": False,
        "plots": False,
        "grid_extensions": 0,  # the searched grid is the one given (extensions: test_experiments_grid_extension.py)
        **settings,
    }
    protocol = settings.pop("protocol", "kfold")
    return run_experiment(methods, [DATA], protocol, tmp_path / "results", **settings)


class Ridge(MultiLabelEstimator):
    """Ridge regression on {-1, +1} targets, one column per label; logs every fit in ``fits``."""

    fits: ClassVar[list] = []

    def __init__(self, lam=1.0):
        self.lam = lam

    def _fit(self, X, Y):
        self.n_fits_ = getattr(self, "n_fits_", 0) + 1  # fits made by this very object
        type(self).fits.append({"nth_fit_of_object": self.n_fits_, **self.get_params(deep=False)})
        X1 = np.hstack([X, np.ones((X.shape[0], 1))])
        A = X1.T @ X1 + self.lam * np.eye(X1.shape[1])
        W = np.linalg.solve(A, X1.T @ (2.0 * Y - 1.0))
        self.coef_, self.intercept_ = W[:-1], W[-1]

    def _decision_function(self, X):
        return X @ self.coef_ + self.intercept_


class WarmRidge(Ridge):
    """Ridge with a ``warm_start`` parameter: the search must walk the grid on one object."""

    fits: ClassVar[list] = []

    def __init__(self, lam=1.0, warm_start=False):
        self.lam = lam
        self.warm_start = warm_start


class AlternatingRidge(Ridge):
    """Ridge reporting what an alternating method does: one certificate per outer step and a relation."""

    def _fit(self, X, Y):
        super()._fit(X, Y)
        step = partial(Certificate.from_objectives, kkt_violation=0.0, n_iter=5, time=0.0)
        self.certificate_ = [
            step(2.0, 1.0, converged=False, solver="outer step 1"),
            step(1.5, 1.5, converged=True, solver="outer step 2"),
        ]
        self.label_correlation_ = np.corrcoef(self.coef_.T)


class TransductiveRidge(Ridge):
    """Ridge whose fit takes the unlabelled rows; logs how many it received."""

    fits: ClassVar[list] = []
    unlabeled_rows: ClassVar[list] = []

    def fit(self, X, Y, X_unlabeled=None):
        type(self).unlabeled_rows.append(None if X_unlabeled is None else X_unlabeled.shape[0])
        return super().fit(X, Y)


# ----------------------------------------------------------------------- records
def test_records_follow_the_contract_and_the_store_holds_them(tmp_path):
    result = compare(tmp_path)
    assert (result.computed, result.resumed) == (3, 0)
    assert [r["split"] for r in result.records] == [0, 1, 2]
    assert read_records(result.out_dir) == result.records
    config = json.loads((result.out_dir / "config.json").read_text())
    for record in result.records:
        assert CONTRACT_KEYS <= set(record)
        assert record["config_hash"] == config["config_hash"]
        assert (record["method"], record["dataset"], record["protocol"]) == ("br", "synthetic", "kfold")
        assert record["status"] == "ok" and record["error"] is None
        assert list(record["metrics"]) == list(METRICS)
        assert record["n_train"] + record["n_test"] == 150 and record["n_labels"] == 4
        assert record["label_names"] == ["y0", "y1", "y2", "y3"]
        assert record["fit_time"] > 0 and record["predict_time"] > 0
        assert record["certificates"]
        assert {"primal", "dual", "gap", "converged", "relative_gap"} <= set(record["certificates"][0])
        assert record["converged"] is True and record["warnings"] == []
        assert record["label_correlation"] is None, "binary relevance learns no relation"
    assert result.report["report"].exists() and "br" in result.report["report"].read_text()


@pytest.mark.parametrize("metric", ["average_precision", "ranking_loss"])
def test_the_chosen_point_has_the_best_inner_score_in_the_metric_direction(tmp_path, metric):
    result = compare(tmp_path, grids={"br": {"C": [0.001, 0.1, 10.0]}}, selection_metric=metric)
    pick = max if METRICS[metric].greater_is_better else min
    for record in result.records:
        assert [entry["params"] for entry in record["search"]] == [{"C": 0.001}, {"C": 0.1}, {"C": 10.0}]
        assert all(len(entry["fold_scores"]) == 2 for entry in record["search"])
        assert record["params"] == pick(record["search"], key=lambda entry: entry["score"])["params"]
        assert record["selection_metric"] == metric
    scores = {json.dumps(e["params"]): e["score"] for e in result.records[0]["search"]}
    assert len(set(scores.values())) == 3, "the grid points are really different fits"


def test_a_grid_of_one_point_is_used_without_search(tmp_path):
    result = compare(tmp_path, grids={"br": {"C": [0.5]}})
    assert all(r["params"] == {"C": 0.5} and r["search"] == [] for r in result.records)


def test_default_grid_is_the_registered_one_and_a_given_grid_replaces_it():
    assert Experiment(["br"], ["synthetic"]).grid("br") == dict(get_method("br").param_grid)
    assert Experiment(["br"], ["synthetic"], grids={"br": {"tol": [1e-4]}}).grid("br") == {"tol": [1e-4]}
    assert Experiment({"mine": make_method("br")}, ["synthetic"]).grid("mine") == {}, "objects: no default grid"
    assert expand_grid({"b": [1, 2], "a": ["x", "y"]}) == [
        {"a": "x", "b": 1}, {"a": "x", "b": 2}, {"a": "y", "b": 1}, {"a": "y", "b": 2},
    ]  # fmt: skip


# ---------------------------------------------------------------------- failures
def test_failing_fits_are_recorded_and_the_run_goes_on(tmp_path):
    methods = {"broken": make_method("br", C=-1.0), "br": make_method("br"), "hopeless": make_method("br")}
    grids = {"br": {"C": [-1.0, 1.0]}, "hopeless": {"C": [-1.0, -2.0]}}
    result = compare(tmp_path, methods=methods, grids=grids)
    by_method = {m: [r for r in result.records if r["method"] == m] for m in methods}
    assert all(len(records) == 3 for records in by_method.values())
    for record in by_method["broken"]:  # the final fit raises: C must be positive
        assert record["status"] == "failed" and record["metrics"] == {}
        assert record["error"].startswith("ValueError: C must be > 0")
    for record in by_method["br"]:  # one grid point raises in the inner search, the other is chosen
        assert record["status"] == "ok" and record["params"] == {"C": 1.0}
        failed, ok = record["search"]
        assert failed["status"] == "failed" and failed["score"] is None and "C must be > 0" in failed["error"]
        assert ok["status"] == "ok" and ok["score"] > 0.5
    for record in by_method["hopeless"]:  # every grid point raises: nothing to choose
        assert record["status"] == "failed" and record["error"].startswith("SearchError: no grid point")
        assert [entry["status"] for entry in record["search"]] == ["failed", "failed"]
    assert "broken" in result.report["report"].read_text()


def test_non_convergence_is_recorded_with_its_warning(tmp_path):
    result = compare(tmp_path, methods={"short": make_method("br", max_iter=1)})
    for record in result.records:
        assert record["status"] == "ok" and record["converged"] is False
        assert any(w.startswith("ConvergenceWarning: ") for w in record["warnings"])
        assert not all(c["converged"] for c in record["certificates"])


# ----------------------------------------------------------------------- search
def test_warm_starts_walk_the_grid_in_order_on_one_object():
    WarmRidge.fits.clear()
    grid = {"lam": [0.1, 1.0, 10.0]}
    search = InnerSearch(WarmRidge(), grid, DATA.Y, np.arange(150), inner_cv=2, seed=0)
    assert search.n_tasks == 2, "one task per inner fold"
    params, entries = search_params(WarmRidge(), DATA.X, DATA.Y, grid, inner_cv=2)
    assert params in expand_grid(grid) and len(entries) == 3
    fits = WarmRidge.fits
    assert [fit["lam"] for fit in fits] == [0.1, 1.0, 10.0] * 2
    assert all(fit["warm_start"] for fit in fits)
    assert [fit["nth_fit_of_object"] for fit in fits] == [1, 2, 3] * 2, "one object per fold along the grid"
    Ridge.fits.clear()
    search_params(Ridge(), DATA.X, DATA.Y, grid, inner_cv=2)
    assert [fit["nth_fit_of_object"] for fit in Ridge.fits] == [1] * 6, "a fresh object per fit"


def test_semi_supervised_fits_see_the_unlabelled_rows_and_are_evaluated_on_them(tmp_path):
    TransductiveRidge.unlabeled_rows.clear()
    result = compare(
        tmp_path,
        methods={"transductive": TransductiveRidge(), "br": make_method("br")},
        protocol="semi_supervised",
        protocol_params={"n_repeats": 2},
        grids={"transductive": {"lam": [0.1, 1.0]}, "br": {"C": [1.0]}},
    )
    for record in result.records:
        assert record["status"] == "ok" and (record["n_train"], record["n_test"]) == (30, 120)
    transductive = [r for r in result.records if r["method"] == "transductive"]
    assert [r["n_unlabeled"] for r in transductive] == [120, 120]
    assert [r["n_unlabeled"] for r in result.records if r["method"] == "br"] == [0, 0], "br is inductive"
    # Per split: 2 inner folds x 2 grid points, each seeing its held-out 15 rows + the 120 unlabelled,
    # then the final fit with the 120 unlabelled rows.
    assert TransductiveRidge.unlabeled_rows == ([135] * 4 + [120]) * 2


def test_every_certificate_and_the_learned_relation_are_recorded(tmp_path):
    result = compare(tmp_path, methods={"alternating": AlternatingRidge()})
    for record in result.records:
        assert [c["solver"] for c in record["certificates"]] == ["outer step 1", "outer step 2"]
        assert record["certificates"][0]["gap"] == 1.0 and record["converged"] is False, "all steps must converge"
        correlation = np.array(record["label_correlation"])
        assert correlation.shape == (4, 4) and np.allclose(np.diag(correlation), 1.0)


def test_parameter_objects_are_recorded_by_their_repr(tmp_path):
    kernel = RBFKernel(gamma=0.5)
    grids = {"composed": {"kernel": ["linear", kernel]}}
    settings = {"protocol_params": {"n_splits": 2}, "grids": grids, "inner_cv": 2, "progress": False, "plots": False}
    # L-BFGS named: it refuses the RBF kernel (solver="auto" would find one that takes it).
    result = run_experiment({"composed": ComposedEstimator(solver="lbfgs")}, [DATA], "kfold", tmp_path / "run", **settings)
    assert result.records == read_records(result.out_dir)
    for record in result.records:
        linear, rbf = record["search"]
        assert record["params"] == {"kernel": "linear"}
        assert rbf["params"] == {"kernel": repr(kernel)} and rbf["error"].startswith("CapabilityError")
    again = run_experiment({"composed": ComposedEstimator(solver="lbfgs")}, [DATA], "kfold", tmp_path / "run", **settings)
    assert again.computed == 0, "a configuration holding objects resumes"


def test_evaluate_split_measures_the_test_rows_with_the_given_parameters():
    train, test = np.arange(100), np.arange(100, 150)
    outcome = evaluate_split(make_method("br"), {"C": 0.5}, DATA.X, DATA.Y, train, test)
    model = make_method("br", C=0.5).fit(DATA.X[train], DATA.Y[train])
    expected = METRICS["average_precision"].function(DATA.Y[test], model.decision_function(DATA.X[test]))
    assert outcome["status"] == "ok" and outcome["metrics"]["average_precision"] == pytest.approx(expected)


def test_an_impossible_inner_search_is_a_failed_record(tmp_path):
    tiny = make_correlated_multilabel(n_samples=12, n_features=3, n_labels=2, random_state=0)
    result = run_experiment(["br"], [tiny], "kfold", tmp_path / "run", protocol_params={"n_splits": 2},
                            inner_cv=10, progress=False, plots=False)  # fmt: skip
    for record in result.records:
        assert record["status"] == "failed" and record["params"] == {} and record["search"] == []
        assert record["error"].startswith("ValueError: inner search: n_splits=10 is larger than the number of rows")


class LearnedGraph:
    """A concept graph as concept_network exposes it (never imported here: the runner duck-types it)."""

    def __init__(self, Y, threshold=0.05):
        together = Y.T.astype(float) @ Y
        counts = np.diag(together)
        p_t_given_l, p_l_given_t = together / counts[:, None], together / counts[None, :]
        self.statistic = p_t_given_l * p_l_given_t / (p_t_given_l + p_l_given_t)
        np.fill_diagonal(self.statistic, 0.0)
        self.threshold = threshold
        self.adjacency = self.statistic > threshold

    def as_dict(self):
        return {"adjacency": self.adjacency.astype(int).tolist(), "statistic": self.statistic.tolist(),
                "threshold": self.threshold}  # fmt: skip


class GraphRidge(Ridge):
    """Ridge that also exposes ``concept_graph_`` (numpy arrays) after fit."""

    def _fit(self, X, Y):
        super()._fit(X, Y)
        self.concept_graph_ = LearnedGraph(Y)


def test_a_learned_concept_graph_is_recorded_and_drawn(tmp_path):
    result = compare(tmp_path, methods={"graph": GraphRidge(), "br": make_method("br")}, grids={"br": {"C": [1.0]}},
                     plots=True)  # fmt: skip
    for record in result.records:
        if record["method"] == "br":
            assert record["concept_graph"] is None
            continue
        graph = record["concept_graph"]
        assert set(graph) == {"adjacency", "statistic", "threshold"} and graph["threshold"] == 0.05
        statistic, adjacency = np.array(graph["statistic"]), np.array(graph["adjacency"])
        assert statistic.shape == adjacency.shape == (4, 4) and 0.0 <= statistic.min() and statistic.max() <= 0.5
        np.testing.assert_array_equal(adjacency, statistic > 0.05)
    assert result.records == read_records(result.out_dir), "JSON-safe: the store reads back what was recorded"
    assert "concept_graph_synthetic_graph.png" in [p.name for p in result.report["plots"]]


def test_a_concept_graph_fitted_without_the_constant_labels_is_placed_among_all_labels():
    Y = DATA.Y.copy()
    Y[:100, 2] = 0  # label 2 never relevant in the training rows
    outcome = evaluate_split(GraphRidge(), {}, DATA.X, Y, np.arange(100), np.arange(100, 150),
                             constant_labels="predict_constant")  # fmt: skip
    assert outcome["status"] == "ok", outcome["error"]
    statistic, adjacency = np.array(outcome["concept_graph"]["statistic"]), outcome["concept_graph"]["adjacency"]
    assert statistic.shape == (4, 4)
    assert all(statistic[2, j] is None and statistic[j, 2] is None for j in range(4))
    assert all(adjacency[2][j] == 0 == adjacency[j][2] for j in range(4))
    fitted = [0, 1, 3]
    expected = LearnedGraph(Y[:100][:, fitted]).statistic
    np.testing.assert_allclose(statistic[np.ix_(fitted, fitted)].astype(float), expected, rtol=1e-12)
