"""X is validated once per call, at the public entry point: counted, and every refusal kept.

The counts come from benchmarks/count_validation.py, which patches the functions that scan an
array for validity (finiteness tests, converting copies, the sparse canonical-form pass) and
counts the calls on X or a same-sized copy of it during one fit.  Before the boundary rule a br
fit on yeast scanned X three times (the estimator, the CD solver's check_X, its Cython rows) and
bsvm and mlrl four times (the estimator and three kernel evaluations); now once each.

The mark that lets the kernels and solvers skip their scan (:func:`checked_inputs`) is the
identity of the validated array, held only while the estimator's call runs: a user who calls a
kernel or a solver directly is still checked in full, and the numbers a fit computes do not
depend on whether the scans were skipped.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core as mlc
import multilabel_core.solvers.cd as cd_module
import multilabel_core.validation as validation
from multilabel_core.base import Problem
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.solvers import CDSolver, linear_svm_cd
from multilabel_core.validation import check_X, checked_inputs, is_checked

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "count_validation.py"


def _counting():
    spec = importlib.util.spec_from_file_location("count_validation", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def counting():
    return _counting()


@pytest.fixture
def unmarked(monkeypatch):
    """Validation as it was before the boundary rule: no array is ever taken as checked."""
    monkeypatch.setattr(validation, "is_checked", lambda X: False)
    monkeypatch.setattr(cd_module, "is_checked", lambda X: False)


# -- the counts ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["br", "bsvm", "mlrl"])
def test_one_fit_on_yeast_scans_x_at_most_the_recorded_times(counting, datasets_dir, method):
    from multilabel_core.datasets import load_dataset

    data = load_dataset(datasets_dir / "yeast.arff")
    counter = counting.count_fit(method, data.X, data.Y)
    assert counter.total <= counting.AFTER[method] < counting.BEFORE[method], dict(counter.sites)
    # The one full check is the estimator's; the kernels' and solvers' calls return X at once.
    assert counter.check_X["check_X, full pass"] == 1, dict(counter.sites)


@pytest.mark.parametrize("method", ["br", "bsvm", "mlrl"])
def test_the_counter_sees_the_scans_the_mark_saves(counting, unmarked, method):
    # The instrument is not blind: with the mark disabled it counts the old scans again.
    data = make_correlated_multilabel(n_samples=60, n_features=7, n_labels=3, random_state=4)
    counter = counting.count_fit(method, data.X, data.Y)
    assert counter.total == counting.BEFORE[method], dict(counter.sites)


def test_a_sparse_x_is_canonicalised_and_tested_once(counting):
    data = make_correlated_multilabel(n_samples=60, n_features=9, n_labels=3, random_state=5)
    X = sp.csr_matrix(np.where(np.abs(data.X) > 0.5, data.X, 0.0))
    counter = counting.count_fit("br", X, data.Y)
    assert dict(counter.scans) == {"canonical sparse pass": 1, "np.isfinite": 1}, dict(counter.sites)


# -- the mark is scoped ----------------------------------------------------------------------


@settings(deadline=None)
@given(
    n=st.integers(1, 6),
    d=st.integers(1, 4),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
)
def test_a_marked_array_is_trusted_only_inside_the_call(n, d, bad):
    X = np.zeros((n, d))
    with checked_inputs(X):
        assert is_checked(X) and check_X(X) is X
        # Not what the caller derives from it: a copy is a new array, checked in full.
        copy = X.copy()
        copy[0, 0] = bad
        assert not is_checked(copy)
        with pytest.raises(ValueError, match="NaN or infinity"):
            check_X(copy)
    X[0, 0] = bad
    assert not is_checked(X)
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_X(X)


def test_a_mark_does_not_cross_threads():
    X = np.ones((3, 2))
    seen = []
    with checked_inputs(X):
        worker = threading.Thread(target=lambda: seen.append(is_checked(X)))
        worker.start()
        worker.join()
        assert is_checked(X)
    assert seen == [False]


def test_a_marked_array_in_a_form_the_caller_refuses_is_still_checked():
    X = np.ones((4, 3), dtype=np.float32)
    S = sp.csr_matrix(np.eye(3))
    with checked_inputs(X, S):
        assert check_X(X, dtype=(np.float64,)).dtype == np.float64  # converted, not returned as is
        with pytest.raises(ValueError, match="sparse, but a dense array is required"):
            check_X(S, accept_sparse=False)


# -- direct calls keep every check -------------------------------------------------------------


def _nan_rows():
    data = make_correlated_multilabel(n_samples=30, n_features=4, n_labels=2, random_state=1)
    X = np.array(data.X, dtype=np.float64)
    X[3, 1] = np.nan
    return X, 2.0 * np.asarray(data.Y, dtype=np.float64) - 1.0, data.Y


def test_the_solver_functions_still_refuse_what_a_user_passes_them():
    X, signs, Y = _nan_rows()
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        linear_svm_cd(X, signs)
    with pytest.raises(ValueError, match="n_jobs must be a nonzero int"):
        linear_svm_cd(np.nan_to_num(X), signs, n_jobs=0)
    problem = Problem(
        X, signs, mlc.make_component("loss", "squared_hinge"), mlc.make_component("regularizer", "frobenius"),
        mlc.make_component("relation", "independent"), mlc.make_component("kernel", "linear"),
    )  # fmt: skip
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        CDSolver().solve(problem)
    with pytest.raises(ValueError, match="NaN or infinity"):
        mlc.make_component("kernel", "rbf", gamma=1.0)(X)
    for method in ("br", "bsvm"):
        with pytest.raises(ValueError, match="X contains NaN or infinity"):
            mlc.make_method(method).fit(X, Y)


def test_the_engine_rows_check_unless_told_the_rows_were_checked():
    from multilabel_core.solvers import _cd

    X = np.array([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        _cd.DenseRows(X)
    with pytest.raises(ValueError, match="data contains NaN or infinity"):
        _cd.SparseRows(np.array([np.inf]), np.array([0]), np.array([0, 1]), 2)
    # as_rows says "checked" only for the array the estimator validated in this call.
    assert cd_module.as_rows(np.ones((2, 2)), 0.0).n_rows == 2
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        cd_module.as_rows(X, 0.0)


# -- the numbers do not depend on it ----------------------------------------------------------


@pytest.mark.parametrize("method", ["br", "bsvm"])
@pytest.mark.parametrize("sparse", [False, True])
def test_skipping_the_scans_changes_no_number(monkeypatch, method, sparse):
    data = make_correlated_multilabel(n_samples=50, n_features=6, n_labels=3, random_state=7)
    X = sp.csr_matrix(data.X) if sparse else data.X
    marked = mlc.make_method(method).fit(X, data.Y)
    monkeypatch.setattr(validation, "is_checked", lambda X: False)
    monkeypatch.setattr(cd_module, "is_checked", lambda X: False)
    unmarked = mlc.make_method(method).fit(X, data.Y)
    # The same operations on the same arrays: the same path (iteration counts), and scores equal up to
    # the order a threaded BLAS may sum a row's 6 products in (a few ulps of the largest term).
    assert marked.n_iter_ == unmarked.n_iter_
    scores, again = marked.decision_function(X), unmarked.decision_function(X)
    np.testing.assert_allclose(scores, again, rtol=0, atol=64 * np.finfo(float).eps * max(1.0, np.abs(scores).max()))


def test_n_jobs_is_checked_by_the_estimator_and_the_solver_it_builds_not_in_the_engine_call(monkeypatch):
    import multilabel_core.parallel as parallel

    calls = []
    original = parallel.effective_threads

    def counted(n_jobs, *args):
        calls.append((n_jobs, args))
        return original(n_jobs, *args)

    # The engine call's own check is the one the CD module makes; map_threads resolves the count (an argument).
    monkeypatch.setattr(cd_module, "effective_threads", counted)
    data = make_correlated_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=2)
    mlc.make_method("br", n_jobs=1).fit(data.X, data.Y)
    assert calls == []
    with pytest.raises(ValueError, match=r"n_jobs must be a nonzero int .* \(a parameter of BinaryRelevance\)"):
        mlc.make_method("br", n_jobs=0).fit(data.X, data.Y)
    with pytest.raises(ValueError, match="n_jobs must be a nonzero int"):
        mlc.make_component("solver", "cd", n_jobs=0)
    linear_svm_cd(data.X, 2.0 * np.asarray(data.Y, dtype=np.float64) - 1.0, n_jobs=1)
    assert [n for n, _ in calls] == [1], "a direct call checks its n_jobs"
