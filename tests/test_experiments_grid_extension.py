"""Model selection finds a usable model: grids extend beyond the edge a choice lies at.

The searches here run on a "dial" estimator whose held-out quality is a known function of its
parameters: it predicts the labels (which it reads from its features) with a nested set of
entries flipped, more of them the farther its parameters lie from a chosen optimum.  So the
best point of any grid is known, and whether an extension reaches it is a fact, not a hope.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.plugins import get_method
from multilabel_core.experiments.runner import run_experiment
from multilabel_core.experiments.search import (
    DEFAULT_GRID_EXTENSIONS,
    InnerSearch,
    edge_of,
    expand_grid,
    next_grid_value,
    search_params,
    valid_value,
)
from multilabel_core.experiments.store import without_timings

N_ROWS, N_LABELS = 90, 3


def dial_data(seed=0):
    """X = (the labels, a row id): the dial reads both; Y has every label in both classes."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((N_ROWS, N_LABELS)) < 0.4).astype(np.int64)
    Y[0], Y[1] = 1, 0
    X = np.column_stack([Y.astype(np.float64), rng.permutation(N_ROWS) + 1.0])
    return X, Y


class Dial(BaseEstimator):
    """Predicts Y exactly at (C, p) = (best_C, best_p); elsewhere each entry is flipped when its fixed
    pseudo-random u_ij in [0, 1) is below f = min(0.9, 0.1 |log10(C / best_C)| + 0.5 |p - best_p|).

    The flipped sets are nested in f, so the Hamming loss never decreases as f grows: the best point of a
    grid is the one nearest the optimum.  C must be > 0 and p in [0, 1] (``_validate_params``).
    """

    def __init__(self, C=1.0, p=1.0, mode="a", best_C=1.0, best_p=1.0, warm_start=False):
        self.C, self.p, self.mode, self.best_C, self.best_p, self.warm_start = C, p, mode, best_C, best_p, warm_start

    def _validate_params(self):
        if not self.C > 0:
            raise ValueError(f"C must be > 0, got {self.C}")
        if not 0 <= self.p <= 1:
            raise ValueError(f"p must be in [0, 1], got {self.p}")

    def fit(self, X, Y):
        self._validate_params()
        self.n_labels_ = Y.shape[1]
        return self

    def decision_function(self, X):
        X = np.asarray(X, dtype=np.float64)
        labels, ids = X[:, : self.n_labels_], X[:, -1]
        u = np.modf(np.abs(np.sin(ids[:, None] * 12.9898 + np.arange(self.n_labels_) * 78.233)) * 43758.5453)[0]
        far = 0.1 * abs(math.log10(self.C / self.best_C)) + 0.5 * abs(self.p - self.best_p)
        flipped = u < min(0.9, far)
        return np.where(flipped, 0.5 - labels, labels - 0.5)

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(np.int64)


def search(grid, limit=DEFAULT_GRID_EXTENSIONS, **dial):
    X, Y = dial_data()
    return search_params(Dial(**dial), X, Y, grid, inner_cv=2, metric="hamming_loss", grid_extensions=limit)


def extension_summary(grid, limit=DEFAULT_GRID_EXTENSIONS, **dial):
    X, Y = dial_data()
    inner = InnerSearch(Dial(**dial), grid, Y, np.arange(N_ROWS), inner_cv=2, metric="hamming_loss",
                        grid_extensions=limit)  # fmt: skip
    while True:
        inner.absorb([_run(task) for task in inner.tasks(X, Y)])
        if not inner.extend():
            break
    return inner, inner.result(), inner.extension_summary()


def _run(task):
    function, args, kwargs = task
    return function(*args, **kwargs)


# ------------------------------------------------------------------- the step
@given(
    start=st.floats(1e-8, 1e3), ratio=st.sampled_from([2.0, 3.0, 10.0, 100.0]), n=st.integers(3, 7),
)  # fmt: skip
def test_a_log_spaced_grid_steps_by_its_ratio(start, ratio, n):
    grid = [start * ratio**k for k in range(n)]
    low, step = next_grid_value(grid, "lowest")
    high, _ = next_grid_value(grid, "highest")
    assert step == "geometric"
    assert low == pytest.approx(grid[0] / ratio, rel=1e-9) and high == pytest.approx(grid[-1] * ratio, rel=1e-9)


@given(start=st.integers(-50, 50), step=st.integers(1, 20), n=st.integers(3, 6))
def test_an_evenly_spaced_grid_steps_by_its_difference_and_integers_stay_integers(start, step, n):
    grid = [start + step * k for k in range(n)]
    low, kind = next_grid_value(grid, "lowest")
    high, _ = next_grid_value(grid, "highest")
    assert kind == "arithmetic" and (low, high) == (grid[0] - step, grid[-1] + step)
    assert isinstance(low, int) and isinstance(high, int)


def test_a_grid_holding_zero_steps_arithmetically_and_never_past_the_valid_range():
    assert next_grid_value([0.0, 1e-5, 1e-4, 1e-3], "highest") == (pytest.approx(1e-3 + (1e-3 - 1e-4)), "arithmetic")
    # mtrl's lam2 >= 0: its 0 edge is the end of the valid range, a step below it is clipped at 0.
    mtrl = mlc.make_method("mtrl")
    assert next_grid_value([0.0, 1e-5, 1e-4], "lowest", mtrl, "lam2") is None
    assert next_grid_value([0.03, 0.1, 0.17], "lowest", mtrl, "lam2") == (0.0, "arithmetic, clipped at 0")
    assert next_grid_value([0.03, 0.1, 0.17], "lowest") == (pytest.approx(-0.04), "arithmetic")  # no estimator
    # A fraction p <= 1: the step 1.1 is clipped at 1; from 1 there is nowhere to go.
    assert next_grid_value([0.5, 0.7, 0.9], "highest", Dial(), "p") == (1.0, "arithmetic, clipped at 1")
    assert next_grid_value([0.6, 0.8, 1.0], "highest", Dial(), "p") is None
    assert valid_value(Dial(), "C", 1e-9) and not valid_value(Dial(), "C", 0.0)


def test_only_numeric_grids_of_three_values_have_edges():
    assert edge_of(["linear", "rbf", "poly"], "linear") is None
    assert edge_of([True, False, True], True) is None
    assert edge_of([0.1, 1.0], 0.1) is None
    assert edge_of([0.1, 1.0, 10.0], 0.1) == "lowest" and edge_of([0.1, 1.0, 10.0], 10.0) == "highest"
    assert edge_of([0.1, 1.0, 10.0], 1.0) is None


# ---------------------------------------------------------------- the search
def test_an_optimum_beyond_the_grid_is_reached_and_the_search_stops_inside():
    inner, (chosen, entries), summary = extension_summary({"C": [0.01, 0.1, 1.0]}, best_C=10.0)
    assert chosen == {"C": 10.0}
    assert [e["value"] for e in summary["extensions"]] == [10.0, 100.0]  # 100 shows 10 is not an edge any more
    assert summary["at_edge"] == [] and summary["limit"] == DEFAULT_GRID_EXTENSIONS
    assert [(e["params"]["C"], e["extension"]) for e in entries] == [
        (0.01, 0), (0.1, 0), (1.0, 0), (10.0, 1), (100.0, 2)
    ]  # fmt: skip
    best = min(e["score"] for e in entries)
    assert next(e for e in entries if e["params"] == chosen)["score"] == best


def test_a_choice_still_at_the_edge_after_the_limit_says_so():
    _, (chosen, _), summary = extension_summary({"C": [0.01, 0.1, 1.0]}, best_C=1e6)
    assert chosen == {"C": 1000.0}
    assert [e["value"] for e in summary["extensions"]] == [10.0, 100.0, 1000.0]
    assert summary["at_edge"] == [
        {"param": "C", "value": 1000.0, "edge": "highest", "extensions": 3, "reason": "limit"}
    ]
    _, (chosen, _), summary = extension_summary({"C": [0.01, 0.1, 1.0]}, limit=0, best_C=1e6)
    assert chosen == {"C": 1.0} and summary["extensions"] == []
    assert summary["at_edge"][0]["reason"] == "off"


def test_the_valid_range_stops_an_extension_and_the_low_edge_goes_first_for_warm_starts():
    inner, (chosen, _), summary = extension_summary({"p": [0.5, 0.7, 0.9]}, best_p=1.0)
    assert chosen == {"p": 1.0}
    assert summary["extensions"][0]["step"] == "arithmetic, clipped at 1"
    assert summary["at_edge"] == [
        {"param": "p", "value": 1.0, "edge": "highest", "extensions": 1, "reason": "valid range"}
    ]
    inner, (chosen, _), _ = extension_summary({"C": [1.0, 10.0, 100.0]}, best_C=0.1)
    assert chosen == {"C": 0.1} and inner.grid["C"][:2] == [0.01, 0.1], "the new low values go before the first"


def test_every_parameter_at_an_edge_extends_and_non_numeric_grids_never_do():
    _, (chosen, entries), summary = extension_summary(
        {"C": [0.01, 0.1, 1.0], "p": [0.2, 0.3, 0.4], "mode": ["a", "b", "c"]}, best_C=10.0, best_p=0.6
    )
    assert chosen["C"] == 10.0 and chosen["p"] == pytest.approx(0.6)
    assert {e["param"] for e in summary["extensions"]} == {"C", "p"}
    assert {e["params"]["mode"] for e in entries} == {"a", "b", "c"}
    assert len(entries) == len({json.dumps(e["params"], sort_keys=True) for e in entries}), "no point twice"


def test_search_params_without_extensions_searches_the_grid_as_given():
    chosen, entries = search({"C": [0.01, 0.1, 1.0]}, limit=0, best_C=10.0)
    assert chosen == {"C": 1.0} and [e["params"] for e in entries] == expand_grid({"C": [0.01, 0.1, 1.0]})


# ------------------------------------------------------------------ the runner
def run(tmp_path, name="run", **settings):
    settings = {"protocol_params": {"n_splits": 2}, "inner_cv": 2, "progress": False, "plots": False, **settings}
    return run_experiment(["br"], ["synthetic"], "kfold", tmp_path / name, grids={"br": {"C": [1e-4, 1e-3, 1e-2]}},
                          **settings)  # fmt: skip


def test_the_runner_extends_records_and_reports_each_extension(tmp_path):
    result = run(tmp_path)
    config = json.loads((result.out_dir / "config.json").read_text())["config"]
    assert config["grid_extensions"] == DEFAULT_GRID_EXTENSIONS == result.grid_extensions
    text = result.report["report"].read_text()
    for record in result.records:
        summary = record["grid_extension"]
        added = [e["value"] for e in summary["extensions"]]
        assert added and added == sorted(added) and all(e["param"] == "C" for e in summary["extensions"])
        assert {e["params"]["C"] for e in record["search"]} == {1e-4, 1e-3, 1e-2, *added}
        chosen = next(e for e in record["search"] if e["params"] == record["params"])
        assert chosen["score"] == max(e["score"] for e in record["search"] if e["score"] is not None)
        assert f"C grid extended {len(added)}x" in text
    assert "### Grid extensions" in text
    document = json.loads(result.report["summary_json"].read_text())
    assert document["grid_extensions"][0]["n_extended"] == len(result.records)


def test_extended_searches_give_the_same_records_on_two_workers(tmp_path):
    serial = run(tmp_path, "serial")
    parallel = run(tmp_path, "parallel", n_jobs=2)
    assert any(r["grid_extension"]["extensions"] for r in serial.records)
    assert without_timings(parallel.records) == without_timings(serial.records)


def test_a_store_written_before_grid_extension_resumes_without_it(tmp_path):
    old = run(tmp_path, grid_extensions=0)  # config.json then holds no grid_extensions, as before the option
    config = json.loads((old.out_dir / "config.json").read_text())["config"]
    assert "grid_extensions" not in config
    # The records of that time had none of the new keys either.
    lines = (old.out_dir / "results.jsonl").read_text().splitlines()
    stripped = []
    for line in lines:
        record = json.loads(line)
        for key in ("grid_extension", "n_no_label_rows", "n_predicted_labels"):
            record.pop(key)
        for entry in record["search"]:
            entry.pop("extension")
        stripped.append(json.dumps(record))
    (old.out_dir / "results.jsonl").write_text("\n".join(stripped) + "\n")
    again = run(tmp_path)
    assert (again.computed, again.resumed, again.grid_extensions) == (0, 2, 0)
    text = again.report["report"].read_text()
    assert "Chosen models predicting no label: 0." in text and "Not recorded" in text
    fresh = run(tmp_path, new_run=True)
    assert fresh.out_dir != old.out_dir and fresh.grid_extensions == DEFAULT_GRID_EXTENSIONS


def test_grid_extensions_is_validated(tmp_path):
    with pytest.raises(ValueError, match="grid_extensions"):
        run(tmp_path, grid_extensions=-1)


# --------------------------------------------------------------- the presets
@pytest.mark.parametrize("name", [spec.name for spec in mlc.list_methods()])
def test_every_registered_grid_value_is_valid_for_its_parameter(name):
    spec = next(spec for spec in mlc.list_methods() if spec.name == name)
    estimator = mlc.make_method(name)
    unknown = set(spec.param_grid) - set(estimator.get_params(deep=False))
    assert not unknown, f"{name}'s grid names parameters it does not have: {unknown}"
    for point in expand_grid(dict(spec.param_grid)):
        model = type(estimator)(**{**estimator.get_params(deep=False), **point})
        model._validate_params()  # raises, naming the parameter, for a value out of its range


def test_mtrls_grid_contains_bsvm_at_lam2_zero():
    grid = get_method("mtrl").param_grid
    assert 0.0 in grid["lam2"], "its docs claim it contains BSVM at lam2 = 0"
    bsvm_lams = set(get_method("bsvm").param_grid["lam"])
    assert set(grid["lam1"]) <= bsvm_lams, "each lam2 = 0 point is a point of BSVM's own grid"
    data = make_correlated_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=1)
    for lam in (1e-3, 1e-2):
        mtrl = mlc.make_method("mtrl", lam1=lam, lam2=0.0).fit(data.X, data.Y)
        bsvm = mlc.make_method("bsvm", lam=lam).fit(data.X, data.Y)
        last, single = mtrl.certificate_[-1], bsvm.certificate_
        # Both solve 1/2 ||W||^2 + C sum xi with C = 1/(n lam): each primal lies within its gap above the
        # one optimum, and (the objective being 1-strongly convex in W) ||W - W*|| <= sqrt(2 gap); with the
        # RBF kernel's k(x, x) = 1 that bounds the difference of the decision values before the intercepts.
        assert abs(last.primal - single.primal) <= last.gap + single.gap
        bound = math.sqrt(2 * last.gap) + math.sqrt(2 * single.gap)
        difference = (mtrl.decision_function(data.X) - mtrl.intercept_) - (bsvm.decision_function(data.X)
                                                                           - bsvm.intercept_)  # fmt: skip
        assert np.abs(difference).max() <= bound
