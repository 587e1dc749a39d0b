"""SMO's explicit-feature route: linear dual coordinate descent certified as a point of the dual (10).

With a kernel of explicit features, labels apart (a diagonal label coupling) and more rows than the
column cache holds, :class:`SMOSolver` first runs the linear dual coordinate descent on the features
(its bias regularised as a constant feature), moves the duals onto (10)'s equality constraints and
certifies that point with SMO's own certificate; SMO continues from it only when the certificate
misses GAP_RTOL.  These tests hold the route to the problem SMO solves.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core
import multilabel_core.solvers.smo as smo
from multilabel_core.certificate import GAP_RTOL
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernel_approximation import NystroemKernel
from multilabel_core.solvers.cd import linear_svm_cd

U = np.finfo(np.float64).eps
#: A column cache of 0.05 MB holds 16 columns of 400 rows: the route's trigger.
SMALL_CACHE = 0.05


def _data(n=400, seed=0):
    data = make_correlated_multilabel(n, n_features=8, n_labels=4, random_state=seed)
    return np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)


def _fit(X, Y, lam, cache_size):
    return multilabel_core.make_method(
        "bsvm", kernel=NystroemKernel(n_components=30), lam=lam, cache_size=cache_size
    ).fit(X, Y)


def _weights(model, X):
    return model.kernel_.features(X).T @ model.dual_coef_


@pytest.mark.parametrize("seed, lam", [(0, 1e-2), (1, 1e-3), (2, 1e-2)])
def test_the_linear_route_certifies_a_point_of_the_smo_dual(seed, lam):
    X, Y = _data(seed=seed)
    route = _fit(X, Y, lam, SMALL_CACHE)
    # A cache holding every column: SMO on the columns, the same problem.
    columns = _fit(X, Y, lam, 64.0)
    a, b = route.certificate_, columns.certificate_
    assert a.statistics["route"] == "dual coordinate descent" and "route" not in b.statistics
    assert a.statistics["kernel"] == b.statistics["kernel"] == "explicit features"
    assert a.converged and a.relative_gap <= GAP_RTOL and b.converged
    # The returned alphas are a feasible point of (10): in the box, on the equality constraints.
    S = np.where(Y > 0, 1.0, -1.0)
    C = 1.0 / (X.shape[0] * lam)
    alpha = route.alpha_ if hasattr(route, "alpha_") else route.solution_.dual
    assert np.all(alpha >= 0.0) and np.all(alpha <= C * (1 + 4 * U))
    np.testing.assert_allclose((alpha * S).sum(axis=0), 0.0, atol=4 * X.shape[0] * U * C)
    # Weak duality across the two solves, and the weights within sqrt(2 gap) of the optimum each
    # (the primal is 1-strongly convex in W in the coupling's norm, here a multiple of the identity).
    rounding = 8 * Y.size * U * max(abs(a.primal), abs(b.primal), 1.0)
    assert a.primal >= b.dual - rounding and b.primal >= a.dual - rounding
    M = route.parts_["regularizer"].label_gram(Y.shape[1])
    difference = _weights(route, X) - _weights(columns, X)
    distance = np.sqrt(max(np.trace(difference @ np.linalg.solve(M, difference.T)), 0.0))
    assert distance <= np.sqrt(2 * max(a.gap, 0.0)) + np.sqrt(2 * max(b.gap, 0.0)) + np.sqrt(rounding)


def test_a_route_that_misses_the_gap_hands_its_point_to_smo(monkeypatch):
    # One epoch of one round cannot certify: SMO continues from the route's feasible point and
    # certifies the problem; nothing is reported as the route's.
    X, Y = _data(seed=0)
    monkeypatch.setattr(smo, "FEATURE_CD_ROUNDS", ((0.1, 1.0),))
    monkeypatch.setattr(smo, "FEATURE_CD_EPOCHS", 1)
    calls = []
    original = smo._solve_by_feature_cd

    def spy(*args, **kwargs):
        fit, alpha = original(*args, **kwargs)
        calls.append((fit, alpha))
        return fit, alpha

    monkeypatch.setattr(smo, "_solve_by_feature_cd", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: SMO certified the problem
        finished = _fit(X, Y, 1e-2, SMALL_CACHE)
    assert len(calls) == 1 and calls[0][0] is None
    c = finished.certificate_
    assert "route" not in c.statistics and c.converged and c.relative_gap <= GAP_RTOL
    reference = _fit(X, Y, 1e-2, 64.0).certificate_
    rounding = 8 * Y.size * U * max(abs(c.primal), 1.0)
    assert abs(c.primal - reference.primal) <= max(c.gap, reference.gap) + rounding


def test_the_route_is_not_taken_when_the_cache_holds_every_column_or_labels_are_coupled(monkeypatch):
    calls = []
    monkeypatch.setattr(smo, "_solve_by_feature_cd", lambda *a, **k: calls.append(1) or (None, a[4]))
    X, Y = _data(n=200, seed=3)
    _fit(X, Y, 1e-2, 64.0)  # 64 MB hold all 200 columns
    assert calls == []
    _fit(X, Y, 1e-2, SMALL_CACHE)  # labels apart, 0.05 MB hold 32 of them
    assert calls == [1]
    # MLRL's later steps couple the labels (a learned, non-diagonal Omega): only its first step, at
    # Omega = I / L, may take the route.
    calls.clear()
    multilabel_core.make_method("mlrl", kernel=NystroemKernel(n_components=20), cache_size=SMALL_CACHE).fit(X, Y)
    assert len(calls) == 1


@given(st.integers(0, 2**16), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_balancing_keeps_the_box_and_meets_the_equality_constraints(seed, n_labels):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    C = float(rng.uniform(0.01, 10.0))
    Y = np.where(rng.random((n, n_labels)) < rng.uniform(0.05, 0.95), 1.0, -1.0)
    alpha = C * rng.random((n, n_labels)) * (rng.random((n, n_labels)) < 0.7)
    balanced = smo._balanced(alpha, Y)
    assert np.all(balanced >= 0.0) and np.all(balanced <= alpha)
    np.testing.assert_allclose((balanced * Y).sum(axis=0), 0.0, atol=4 * n * U * C)
    # Only the heavier class moves, so a point already on the constraints stays where it is.
    np.testing.assert_allclose(smo._balanced(balanced, Y), balanced, rtol=4 * n * U, atol=0.0)


def test_linear_svm_cd_without_warnings_reports_the_same_certificate():
    X, Y = _data(n=120, seed=5)
    S = np.where(Y > 0, 1.0, -1.0)
    with pytest.warns(multilabel_core.solvers.ConvergenceWarning):
        loud = linear_svm_cd(X, S, 100.0, max_iter=1, tol=1e-12, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = linear_svm_cd(X, S, 100.0, max_iter=1, tol=1e-12, random_state=0, warn=False)
    assert not quiet.certificate.converged and not loud.certificate.converged
    rounding = 8 * S.size * U * max(abs(loud.certificate.primal), 1.0)
    assert quiet.certificate.primal == pytest.approx(loud.certificate.primal, abs=rounding)
    assert quiet.certificate.dual == pytest.approx(loud.certificate.dual, abs=rounding)
