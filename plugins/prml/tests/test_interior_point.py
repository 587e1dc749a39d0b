"""The margin problems by the interior-point method (svmplus_ipm, embedded_hinge_ipm): optimal against the reference
QP of the dual and against dual CD, the certificate a true duality gap at a feasible point, and the structured
Newton system (labels that separate, an embedding, sparse rows) the same problem as the dense one.

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, problems (6)/(10) and duals (7)/(11).  The primal is
strongly convex in (M, w~) with modulus min(1, gamma), so two points whose objectives are within g1 and g2 of the
optimum are within sqrt(2 (g1 + g2) / min(1, gamma)) of each other: the tolerances below are derived from the
certificates' gaps, not chosen.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given

from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core_plugins.prml.svmplus import (
    embedded_hinge_cd,
    embedded_hinge_ipm,
    privileged_label_features,
    svmplus_cd,
    svmplus_ipm,
)
from multilabel_core_plugins.prml.testing import svmplus_dual_matrices, svmplus_problems

TOL = 1e-7  # a relative gap the method reaches on every draw; round-off stalls it near 1e-9 on some


def _with_bias(problem: dict) -> dict:
    """The interior-point method needs the correcting functions' bias (svmplus_cd's default)."""
    return {key: value for key, value in problem.items() if key != "privileged_intercept"}


def _primal_variables(fit) -> np.ndarray:
    """(M, w~) of a fit as one vector: the scores' weights, the dictionary when there is one, the correcting functions."""
    fitted = fit.solution.model_state
    parts = [fit.solution.coef, fit.solution.intercept, fitted["W_tilde"], fitted["intercept_tilde"]]
    if fitted["D"] is not None:
        parts += [fitted["D"]] + ([fitted["D_intercept"]] if fitted["D_intercept"] is not None else [])
    return np.concatenate([np.ravel(part) for part in parts])


def _objective(problem: dict, fit) -> float:
    """Objective (6)/(10) at the fit's point, recomputed from its parts, and the point's largest constraint violation."""
    fitted = fit.solution.model_state
    X = problem["X"].toarray() if sp.issparse(problem["X"]) else np.asarray(problem["X"], dtype=float)
    X_priv = problem["X_priv"].toarray() if sp.issparse(problem["X_priv"]) else np.asarray(problem["X_priv"], float)
    Y = np.reshape(problem["Y"], (X.shape[0], -1)).astype(float)
    mask = problem.get("privileged_mask")
    mask = np.ones((Y.shape[1], X_priv.shape[1]), bool) if mask is None else mask
    scores = X @ fit.solution.coef + fit.solution.intercept
    slacks = np.column_stack([X_priv @ (fitted["W_tilde"][:, i] * mask[i]) for i in range(Y.shape[1])])
    slacks = slacks + fitted["intercept_tilde"]
    if fitted["D"] is None:
        half_M = np.sum(fit.solution.coef ** 2) + (np.sum(fit.solution.intercept ** 2) if problem.get("fit_intercept")
                                                   else 0.0)
    else:
        half_M = np.sum(fitted["D"] ** 2) + (np.sum(fitted["D_intercept"] ** 2) if fitted["D_intercept"] is not None
                                             else 0.0)
    half_tilde = np.sum((fitted["W_tilde"] * mask.T) ** 2) + np.sum(fitted["intercept_tilde"] ** 2)
    value = 0.5 * half_M + 0.5 * problem["gamma"] * half_tilde + problem["C"] * slacks.sum()
    violation = max(0.0, float(np.max(1.0 - Y * scores - slacks)), float(np.max(-slacks)))
    return value, violation


@given(svmplus_problems())
def test_matches_the_reference_qp_of_the_dual(problem):
    fit = svmplus_ipm(**_with_bias(problem), tol=TOL)
    certificate = fit.certificate
    assert certificate.converged
    H, p, constant = svmplus_dual_matrices(**problem)
    reference = solve_box_qp_reference(H, p, 0.0, np.inf)
    optimum = -(reference.objective + constant)  # the dual's maximum, the primal's minimum
    scale = max(1.0, abs(optimum))
    # Weak duality brackets the optimum; the gap is what the certificate promises.
    assert certificate.dual <= optimum + 1e-8 * scale
    assert certificate.primal >= optimum - 1e-8 * scale
    assert certificate.gap <= TOL * max(1.0, abs(certificate.primal))


@given(svmplus_problems())
def test_the_certificate_is_the_objective_at_a_feasible_returned_point(problem):
    fit = svmplus_ipm(**_with_bias(problem), tol=1e-6)
    value, violation = _objective(problem, fit)
    scale = max(1.0, abs(value))
    assert violation <= 1e-9 * scale
    assert fit.certificate.primal == pytest.approx(value, rel=1e-9, abs=1e-9)
    assert fit.certificate.gap >= -1e-9 * scale  # a true gap: dual <= optimum <= primal


@given(svmplus_problems())
def test_agrees_with_dual_cd_within_the_gaps(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cd = svmplus_cd(**problem, tol=1e-9, max_iter=50_000, random_state=0)
    assume(cd.certificate.converged and cd.certificate.gap >= 0.0)
    ipm = svmplus_ipm(**_with_bias(problem), tol=TOL)
    gaps = cd.certificate.gap + ipm.certificate.gap
    radius = np.sqrt(2.0 * max(0.0, gaps) / min(1.0, problem["gamma"]))  # of (M, w~): strong convexity (module docstring)
    if problem["embedding"] is not None:
        radius *= np.sqrt(1.0 + np.linalg.norm(problem["embedding"], 2) ** 2)  # the scores' weights M^T A beside M
    difference = np.linalg.norm(_primal_variables(cd) - _primal_variables(ipm))
    assert difference <= radius + 1e-7 * max(1.0, np.linalg.norm(_primal_variables(ipm)))


def _labels(seed=0, n=60, d=4, n_labels=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.where(X @ rng.standard_normal((d, n_labels)) + 0.5 * rng.standard_normal((n, n_labels)) > 0, 1.0, -1.0)
    return X, Y


def test_labels_separate_without_an_embedding():
    X, Y = _labels()
    X_priv, mask = privileged_label_features(Y)
    together = svmplus_ipm(X, X_priv, Y, 1.0, 0.5, privileged_mask=mask, fit_intercept=True, tol=1e-10)
    for i in range(Y.shape[1]):
        alone = svmplus_ipm(X, X_priv, Y[:, i], 1.0, 0.5, privileged_mask=mask[[i]], fit_intercept=True, tol=1e-10)
        np.testing.assert_allclose(together.solution.coef[:, i], alone.solution.coef[:, 0], rtol=0, atol=1e-6)
        assert alone.certificate.converged
    assert together.certificate.converged


def test_sparse_rows_are_the_dense_problem():
    X, Y = _labels(1)
    X[np.abs(X) < 0.7] = 0.0
    X_priv, mask = privileged_label_features(Y)
    A = np.random.default_rng(2).standard_normal((2, Y.shape[1]))
    dense = svmplus_ipm(X, X_priv, Y, 0.5, 1.0, embedding=A, privileged_mask=mask, fit_intercept=True, tol=1e-10)
    sparse = svmplus_ipm(sp.csr_matrix(X), X_priv, Y, 0.5, 1.0, embedding=A, privileged_mask=mask,
                         fit_intercept=True, tol=1e-10)
    radius = np.sqrt(2.0 * max(0.0, dense.certificate.gap + sparse.certificate.gap))
    assert np.linalg.norm(_primal_variables(dense) - _primal_variables(sparse)) <= radius + 1e-8
    assert dense.solution.model_state["D"].shape == (2, X.shape[1])


def test_budget_reached_is_a_warning_and_not_converged():
    X, Y = _labels(3)
    X_priv, mask = privileged_label_features(Y)
    with pytest.warns(ConvergenceWarning, match="svmplus_ipm.*1 Newton steps"):
        fit = svmplus_ipm(X, X_priv, Y, 1.0, 1.0, privileged_mask=mask, tol=1e-12, max_iter=1)
    assert not fit.certificate.converged
    assert fit.certificate.gap > 1e-12 * max(1.0, abs(fit.certificate.primal))


@pytest.mark.parametrize("options, message", [
    ({"tol": 0.0}, "tol"), ({"tol": 1.0}, "tol"), ({"C": -1.0}, "C"), ({"gamma": 0.0}, "gamma"),
    ({"max_iter": 0}, "max_iter"), ({"embedding": np.ones((2, 3))}, "embedding"),
    ({"privileged_mask": np.ones((2, 2))}, "privileged_mask"),
])
def test_bad_arguments_are_value_errors_naming_them(options, message):
    X, Y = _labels(n_labels=4)
    X_priv, mask = privileged_label_features(Y)
    arguments = {"C": 1.0, "gamma": 1.0, "privileged_mask": mask, **options}
    with pytest.raises(ValueError, match=message):
        svmplus_ipm(X, X_priv, Y, **arguments)


def test_rows_of_another_length_are_refused():
    X, Y = _labels()
    with pytest.raises(ValueError, match="X_priv has"):
        svmplus_ipm(X, Y[:-1], Y)


# -- the hinge's slacks (problem 2) -----------------------------------------------------------


def _hinge_dual(problem: dict):
    """The hinge dual ``min 1/2 alpha^T Q alpha - 1^T alpha`` over [0, C] written out densely:
    Q_st = y_s y_t (a_i^T a_i') (x_j^T x_j') for s = (j, i), t = (j', i') in C order of (n, L)."""
    X = problem["X"].toarray() if sp.issparse(problem["X"]) else np.asarray(problem["X"], dtype=float)
    if problem["fit_intercept"]:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    Y = np.reshape(problem["Y"], (X.shape[0], -1)).astype(float)
    A = np.eye(Y.shape[1]) if problem["embedding"] is None else problem["embedding"]
    Q = np.kron(X @ X.T, A.T @ A) * np.outer(Y.ravel(), Y.ravel())
    return Q, -np.ones(Q.shape[0])


def _hinge(problem: dict) -> dict:
    return {key: problem[key] for key in ("X", "Y", "C", "embedding", "fit_intercept")}


@given(svmplus_problems())
def test_hinge_matches_the_reference_qp_of_its_dual(problem):
    fit = embedded_hinge_ipm(**_hinge(problem), tol=TOL)
    certificate = fit.certificate
    assert certificate.converged
    Q, p = _hinge_dual(problem)
    optimum = -solve_box_qp_reference(Q, p, 0.0, problem["C"]).objective
    scale = max(1.0, abs(optimum))
    assert certificate.dual <= optimum + 1e-8 * scale
    assert certificate.primal >= optimum - 1e-8 * scale
    assert certificate.gap <= TOL * max(1.0, abs(certificate.primal))
    assert np.all((fit.solution.dual >= 0.0) & (fit.solution.dual <= problem["C"]))


@given(svmplus_problems())
def test_hinge_agrees_with_dual_cd_within_the_gaps(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cd = embedded_hinge_cd(**_hinge(problem), tol=1e-9, max_iter=50_000, random_state=0)
    assume(cd.certificate.converged)
    ipm = embedded_hinge_ipm(**_hinge(problem), tol=TOL)
    # 1/2 ||M||^2 makes the problem 1-strongly convex in M; the scores' weights are M^T A.
    # (A gap can round to a tiny negative value: weak duality holds up to round-off.)
    radius = np.sqrt(2.0 * max(0.0, cd.certificate.gap + ipm.certificate.gap))
    if problem["embedding"] is not None:
        radius *= np.linalg.norm(problem["embedding"], 2)
    scale = max(1.0, np.abs(ipm.solution.coef).max())
    np.testing.assert_allclose(ipm.solution.coef, cd.solution.coef, rtol=0, atol=radius + 1e-7 * scale)


def test_hinge_budget_and_validation():
    X, Y = _labels(3)
    with pytest.warns(ConvergenceWarning, match="embedded_hinge_ipm.*1 Newton steps"):
        fit = embedded_hinge_ipm(X, Y, 1.0, tol=1e-12, max_iter=1)
    assert not fit.certificate.converged
    for options, name in (({"tol": 2.0}, "tol"), ({"C": 0.0}, "C"), ({"embedding": np.ones((1, 2))}, "embedding")):
        with pytest.raises(ValueError, match=name):
            embedded_hinge_ipm(X, Y, **{"C": 1.0, **options})
