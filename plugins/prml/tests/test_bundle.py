"""The hinge D-step by cuts (embedded_hinge_bundle): optimal against the interior-point method within the two
certificates' gaps, its certificate a true gap at a point and a dual point it returns, warm = cold, and LEML's
rounds taking it where the interior-point method's Newton system is over its limits.

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, problem (2) with W fixed.  f is 1-strongly convex in
M, so two points within g1 and g2 of the optimum in objective are within sqrt(2 (g1 + g2)) of each other; the
objectives themselves differ by at most g1 + g2.  Every tolerance below is that, plus a relative 1e-9 for the
separate BLAS evaluations.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from multilabel_core.solvers import ConvergenceWarning
from multilabel_core_plugins.prml import solver as prml_solver
from multilabel_core_plugins.prml.bundle import embedded_hinge_bundle
from multilabel_core_plugins.prml.svmplus import embedded_hinge_cd, embedded_hinge_ipm


def _problem(seed: int, n: int = 30, d: int = 6, n_labels: int = 4, k: int = 3, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((n, d))
    Y = np.where(rng.random((n, n_labels)) < 0.4, 1.0, -1.0)
    W = rng.standard_normal((k, n_labels))
    return X, Y, W


def _objective(X, Y, W, M, C):
    """f(M) recomputed from scratch (M with its bias column)."""
    scores = (np.column_stack([X, np.ones(len(X))]) @ M.T) @ W
    return 0.5 * float(np.sum(M * M)) + C * float(np.maximum(0.0, 1.0 - Y * scores).sum())


def _dual(X, Y, W, alpha, C):
    """The SVM dual at alpha, recomputed: sum alpha - 1/2 ||sum alpha y a_i x_j^T||^2 (alpha must lie in [0, C])."""
    assert alpha.min() >= 0.0 and alpha.max() <= C
    M = W @ (alpha * Y).T @ np.column_stack([X, np.ones(len(X))])
    return float(alpha.sum()) - 0.5 * float(np.sum(M * M))


def _point(fit):
    state = fit.solution.model_state
    return np.column_stack([state["D"], state["D_intercept"]])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), C=st.sampled_from([0.01, 1.0, 100.0]))
def test_agrees_with_interior_point_within_the_gaps(seed, C):
    X, Y, W = _problem(seed)
    cuts = embedded_hinge_bundle(X, Y, C, embedding=W, fit_intercept=True, tol=1e-6, max_iter=5000)
    newton = embedded_hinge_ipm(X, Y, C, embedding=W, fit_intercept=True, tol=1e-8, max_iter=200)
    assert cuts.certificate.converged and newton.certificate.converged
    g1, g2 = cuts.certificate.gap, newton.certificate.gap
    slack = 1e-9 * max(1.0, abs(newton.certificate.primal))
    assert abs(cuts.certificate.primal - newton.certificate.primal) <= g1 + g2 + slack
    distance = np.linalg.norm(_point(cuts) - _point(newton))
    assert distance <= np.sqrt(2.0 * (g1 + g2 + slack)) + 1e-9


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), C=st.sampled_from([0.1, 1.0, 10.0]))
def test_certificate_is_a_true_gap(seed, C):
    """The primal is f at the returned M, the dual the SVM dual at the returned alpha, recomputed independently."""
    X, Y, W = _problem(seed, n=25, d=5, n_labels=3, k=2)
    fit = embedded_hinge_bundle(X, Y, C, embedding=W, fit_intercept=True, tol=1e-4, max_iter=5000)
    primal, dual = _objective(X, Y, W, _point(fit), C), _dual(X, Y, W, fit.solution.dual, C)
    scale = 1e-9 * max(1.0, abs(primal))
    assert abs(primal - fit.certificate.primal) <= scale
    assert abs(dual - fit.certificate.dual) <= scale
    assert fit.certificate.gap >= -scale
    assert fit.certificate.converged == (fit.certificate.gap <= 1e-4 * max(1.0, abs(primal)))
    # The scores the solution exposes are M^T W.
    M = _point(fit)
    np.testing.assert_allclose(fit.solution.coef, M[:, :-1].T @ W, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_warm_start_ends_where_the_cold_one_does(seed):
    X, Y, W = _problem(seed, n=40)
    cold = embedded_hinge_bundle(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-6, max_iter=5000)
    warm = embedded_hinge_bundle(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-6, max_iter=5000,
                                 M0=_point(cold), alpha0=cold.solution.dual)
    assert warm.certificate.converged
    assert abs(warm.certificate.primal - cold.certificate.primal) <= warm.certificate.gap + cold.certificate.gap
    # Started at a certified point it needs fewer cuts than the cold run.
    assert warm.certificate.n_iter <= cold.certificate.n_iter


def test_budget_is_warned_and_reported():
    X, Y, W = _problem(3, n=60, d=8, n_labels=5, k=4, scale=3.0)
    with pytest.warns(ConvergenceWarning, match="after max_iter=2 cuts"):
        fit = embedded_hinge_bundle(X, Y, 10.0, embedding=W, fit_intercept=True, tol=1e-8, max_iter=2)
    assert not fit.certificate.converged
    assert fit.certificate.gap > 1e-8 * max(1.0, abs(fit.certificate.primal))


def test_beats_dual_cd_on_the_same_problem():
    """Dual CD and cuts certify the same optimum: the objectives are within both gaps."""
    X, Y, W = _problem(4, n=50)
    cd = embedded_hinge_cd(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-4, max_iter=100000, random_state=0)
    cuts = embedded_hinge_bundle(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-6, max_iter=5000)
    assert abs(cd.certificate.primal - cuts.certificate.primal) <= cd.certificate.gap + cuts.certificate.gap + 1e-9


@pytest.mark.parametrize("bad", [
    {"C": 0.0}, {"tol": 1.0}, {"max_iter": 0}, {"embedding": np.ones((2, 3))}, {"M0": np.ones((3, 2))},
    {"alpha0": np.ones((2, 2))},
])
def test_refuses_bad_inputs_by_name(bad):
    X, Y, W = _problem(5)
    arguments = {"C": 1.0, "embedding": W, "fit_intercept": True, "tol": 1e-3, "max_iter": 10, **bad}
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        embedded_hinge_bundle(X, Y, **arguments)


def test_leml_rounds_take_the_cuts_beyond_the_newton_limits(monkeypatch):
    """With the D-step's k dim(x_a) unknowns over IPM_MAX_UNKNOWNS (the W-step's k under it), sub_solver="auto"
    certifies the D-step by cuts; its objective agrees with the interior-point D-step at the same W."""
    from multilabel_core import make_method

    X, Y, _ = _problem(6, n=40, d=5, n_labels=4)
    Y01 = (Y > 0).astype(int)
    k = 3
    monkeypatch.setattr(prml_solver, "IPM_MAX_UNKNOWNS", k * (X.shape[1] + 1) - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = make_method("leml", rank=k, max_iter=3, tol=1e-3, cd_tol=1e-6).fit(X, Y01)
    certificates = model.d_step_certificates_
    assert certificates and all(c.solver == "embedded_hinge_bundle" for c in certificates)
    assert all(c.converged for c in certificates)
    # The last round's D-step against the interior-point method's at the same W.
    W = model.label_weights_
    newton = embedded_hinge_ipm(X, Y, 1.0, embedding=W, fit_intercept=True, tol=1e-9, max_iter=200)
    last = certificates[-1]
    assert last.primal >= newton.certificate.dual - 1e-9 * max(1.0, abs(last.primal))
    assert abs(last.primal - newton.certificate.primal) <= last.gap + newton.certificate.gap + 1e-9 * abs(last.primal)
