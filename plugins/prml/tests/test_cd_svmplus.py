"""The SVM+ dual with privileged features (You et al., *Privileged Multi-label Learning*, Algorithm 1) on the CD
engine: optimal against a reference QP, monotone, deterministic, warm-startable, and the paper's limiting cases.

The reference writes the dual (7)/(11) out densely over eta = [alpha; beta] (coordinate s = (j, i) in
C order of (n, L)): with phi_s = a_i (x) x_j and psi_s = m_i o x~_j (both with their constant features),
Q_M[s, t] = y_s y_t phi_s^T phi_t and K~[s, t] = [i = i'] psi_s^T psi_t,

    g(eta) = 1/2 eta^T [[Q_M + K~/gamma, K~/gamma], [K~/gamma, K~/gamma]] eta
             - [1 + C/gamma K~ 1; C/gamma K~ 1]^T eta + C^2/(2 gamma) 1^T K~ 1,     eta >= 0,

solved by the testing kit's active-set QP solver.

CD's linear rate has no bound on degenerate draws (a row with x_j ~ 0 makes alpha_ji and beta_ji
almost collinear, so the steps zigzag; plain CD on the explicit QP behaves the same), so the
properties that need the optimum keep the draws where a tight solve converged (:func:`solved`); the
others (monotone dual, certificate signs) hold on every draw.
"""

import warnings
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.checks import assert_dual_ascent, check_duality_gap
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core.testing.strategies import feature_matrices, sign_matrices
from multilabel_core_plugins.prml import svmplus
from multilabel_core_plugins.prml.interior_point import inequality_qp
from multilabel_core_plugins.prml.svmplus import privileged_label_features, svmplus_cd
from multilabel_core_plugins.prml.testing import assert_svmplus_matches_reference, svmplus_problems

TIGHT = {"tol": 1e-9, "max_iter": 50_000}


def solved(problem, **options):
    """A tight solve of ``problem``; draws on which CD does not reach it are discarded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = svmplus_cd(**problem, **TIGHT, **options)
    assume(result.certificate.converged)
    return result


@given(svmplus_problems())
def test_matches_reference_qp_with_kkt_and_gap(problem):
    result = solved(problem, random_state=0)
    value = assert_svmplus_matches_reference(result, problem, kkt_tol=1e-7)
    assert result.certificate.dual == pytest.approx(-value, rel=1e-8, abs=1e-8)
    # The SVM+ gap is a complementarity residual, negative by at most ||eta||_1 times the infeasibility.
    check_duality_gap(result.certificate, tol=1e-6)
    assert result.certificate.statistics["primal_infeasibility"] <= 1e-7


@pytest.mark.filterwarnings("ignore::multilabel_core.solvers.ConvergenceWarning")  # a short run on purpose
@given(svmplus_problems())
def test_dual_never_decreases_across_epochs(problem):
    result = svmplus_cd(**problem, tol=1e-6, max_iter=2000, random_state=1, record_dual=True)
    assert_dual_ascent(result.certificate)


@given(svmplus_problems(), st.integers(0, 2**32 - 1))
def test_shrinking_on_and_off_give_the_same_solution(problem, seed):
    """(M, w~) is unique (Theorem 1), whichever path CD takes."""
    on = solved(problem, shrinking=True, random_state=seed)
    off = solved(problem, shrinking=False, random_state=seed)
    assert off.certificate.statistics["n_shrunk"] == 0
    parts = (lambda fit: fit.solution.coef, lambda fit: fit.solution.intercept,
             lambda fit: fit.solution.model_state["W_tilde"], lambda fit: fit.solution.model_state["intercept_tilde"])
    for part in parts:
        expected = part(off)
        np.testing.assert_allclose(part(on), expected, atol=1e-5 * max(1.0, np.abs(expected).max()))


@given(svmplus_problems())
def test_warm_start_from_the_optimum_stops_after_one_pass(problem):
    first = solved(problem, random_state=0)
    start = {"alpha0": first.solution.dual, "beta0": first.solution.model_state["beta"]}
    again = svmplus_cd(**problem, tol=1e-6, random_state=1, **start)
    assert again.certificate.converged and again.certificate.n_iter <= 1


@given(svmplus_problems())
def test_identity_embedding_is_the_per_label_problem(problem):
    """A = I through the general path (eq. 10's D) equals the per-label path (eq. 6's w_i)."""
    n_labels = problem["Y"].shape[1]
    per_label = solved(dict(problem, embedding=None), random_state=0)
    dictionary = solved(dict(problem, embedding=np.eye(n_labels)), random_state=0)
    assert per_label.solution.model_state["D"] is None
    scale = max(1.0, np.abs(per_label.solution.coef).max())
    np.testing.assert_allclose(dictionary.solution.coef, per_label.solution.coef, atol=1e-5 * scale)
    np.testing.assert_allclose(dictionary.solution.model_state["D"], per_label.solution.coef.T, atol=1e-5 * scale)
    np.testing.assert_allclose(dictionary.solution.model_state["W_tilde"], per_label.solution.model_state["W_tilde"],
                               atol=1e-5 * max(1.0, np.abs(per_label.solution.model_state["W_tilde"]).max()))


@given(svmplus_problems())
def test_labels_decouple_without_embedding(problem):
    """Without A, the L problems share nothing (eq. 6 per label): solving them one by one is the same."""
    problem = dict(problem, embedding=None)
    joint = solved(problem, random_state=0)
    for label in range(problem["Y"].shape[1]):
        mask = None if problem["privileged_mask"] is None else problem["privileged_mask"][[label]]
        alone = solved(dict(problem, Y=problem["Y"][:, label], privileged_mask=mask), random_state=0)
        W = joint.solution.coef
        np.testing.assert_allclose(alone.solution.coef[:, 0], W[:, label], atol=1e-5 * max(1.0, np.abs(W).max()))


@given(st.integers(4, 10).flatmap(lambda n: st.tuples(
    feature_matrices(n, st.integers(1, 3), magnitude=3.0), sign_matrices(n, 1))), st.sampled_from([0.05, 0.2, 1.0]))
def test_free_slacks_give_the_hinge_svm_as_gamma_goes_to_zero(data, gamma):
    """x~_j = e_j makes the slack free: SVM+ is min 1/2||w||^2 + sum (C h + gamma/2 h^2) over the hinges h,
    between the hinge SVM's optimum P_0 and P_0 + gamma/2 sum h_0^2 (h_0 the hinges at the SVM's solution)."""
    X, Y = data
    n, C = X.shape[0], 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = svmplus_cd(X, np.eye(n), Y, C, gamma, privileged_intercept=False, **TIGHT, random_state=0)
    # Without the privileged intercept the certificate's primal is taken at the recovered point,
    # which bounds nothing until the solve converges (module docstring of svmplus): the limits below
    # hold at the optimum.  Degenerate draws (one label value, collinear rows) can stop at max_iter,
    # flagged not converged, and say nothing about the limit.
    assume(result.certificate.converged)
    hinges = np.maximum(0.0, 1.0 - Y[:, 0] * (X @ result.solution.coef[:, 0]))
    w = result.solution.coef[:, 0]
    assert result.certificate.primal == pytest.approx(0.5 * w @ w + np.sum(C * hinges + 0.5 * gamma * hinges**2),
                                                      rel=1e-6, abs=1e-8)
    Yx = Y * X
    svm = solve_box_qp_reference(Yx @ Yx.T, -np.ones(n), 0.0, C)
    w_0 = Yx.T @ svm.x
    h_0 = np.maximum(0.0, 1.0 - Y[:, 0] * (X @ w_0))
    P_0 = 0.5 * w_0 @ w_0 + C * h_0.sum()
    assert P_0 - 1e-7 <= result.certificate.primal <= P_0 + 0.5 * gamma * np.sum(h_0**2) + 1e-7


def test_gamma_to_infinity_gives_the_hard_margin_svm():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 3))
    y = np.sign(X @ np.array([1.0, -2.0, 0.5]))
    X += 0.3 * y[:, None] * np.array([1.0, -2.0, 0.5]) / np.sqrt(5.25)  # a margin
    X_priv = rng.standard_normal((30, 2))
    Yx = y[:, None] * X
    hard = solve_box_qp_reference(Yx @ Yx.T, -np.ones(30), 0.0, np.inf)
    w_hard = Yx.T @ hard.x
    result = svmplus_cd(X, X_priv, y, 1.0, 1e6, **TIGHT, random_state=0)
    np.testing.assert_allclose(result.solution.coef[:, 0], w_hard, rtol=1e-4)
    fitted = result.solution.model_state
    assert np.abs(fitted["W_tilde"]).max() < 1e-5 and abs(fitted["intercept_tilde"][0]) < 1e-5


def test_privileged_label_features_are_eq3():
    Y = np.array([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0], [1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]])
    X_priv, mask = privileged_label_features(Y)
    np.testing.assert_array_equal(X_priv, Y)
    np.testing.assert_array_equal(mask, ~np.eye(3, dtype=bool))
    X = np.arange(8.0).reshape(4, 2)
    result = svmplus_cd(X, X_priv, Y, privileged_mask=mask, **TIGHT, random_state=0)
    fitted = result.solution.model_state
    assert np.all(np.diagonal(fitted["W_tilde"]) == 0.0)  # label i never sees its own value
    assert fitted["W_tilde"].shape == (3, 3) and fitted["intercept_tilde"].shape == (3,)


def test_one_label_vector_and_sparse_inputs():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 4)) * (rng.random((20, 4)) < 0.5)
    X_priv = rng.standard_normal((20, 3))
    y = np.where(rng.random(20) < 0.5, 1.0, -1.0)
    dense = svmplus_cd(X, X_priv, y, fit_intercept=True, **TIGHT, random_state=0)
    sparse = svmplus_cd(sp.csr_matrix(X), sp.csc_matrix(X_priv), y, fit_intercept=True, **TIGHT, random_state=0)
    assert dense.solution.dual.shape == dense.solution.model_state["beta"].shape == (20, 1)
    assert dense.solution.coef.shape == (4, 1) and dense.solution.model_state["D"] is None
    np.testing.assert_allclose(sparse.solution.coef, dense.solution.coef, atol=1e-7)
    np.testing.assert_allclose(sparse.solution.intercept, dense.solution.intercept, atol=1e-7)


def test_infeasible_primal_is_reported():
    """A row with x_j = 0 and x~_j = 0 cannot meet its margin: its alpha is unbounded, the engine says so."""
    X = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    X_priv = np.array([[1.0], [0.0], [1.0]])
    with pytest.raises(ValueError, match="unbounded"):
        svmplus_cd(X, X_priv, np.array([1.0, 1.0, -1.0]), privileged_intercept=False, random_state=0)


def test_max_iter_warns_and_reports_not_converged():
    rng = np.random.default_rng(0)
    X, X_priv = rng.standard_normal((30, 4)), rng.standard_normal((30, 2))
    Y = np.where(rng.random((30, 2)) < 0.5, 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match="svmplus_cd did not converge"):
        result = svmplus_cd(X, X_priv, Y, 10.0, 0.5, tol=1e-12, max_iter=1, random_state=0)
    assert not result.certificate.converged and result.certificate.n_iter == 1


@given(st.integers(1, 5), st.integers(1, 20), st.floats(0.1, 10.0), st.integers(0, 2**32 - 1))
def test_inequality_qp_matches_the_reference_dual(q, m, gamma, seed):
    """The correcting functions' QP ``min gamma/2 |v|^2 + c^T v, G v >= h`` against its dual solved by the reference.

    The dual is ``min 1/2 lam^T (G G^T / gamma) lam - (h + G c / gamma)^T lam`` over lam >= 0, and
    v = (G^T lam - c) / gamma.  A constant column in G keeps the primal feasible.  The solver
    promises complementarity s^T lam <= m tol scale at zero residuals, hence a gap of at most that
    and ``gamma/2 |v - v*|^2 <= m tol scale``.
    """
    rng = np.random.default_rng(seed)
    G = np.column_stack([rng.normal(size=(m, q - 1)), np.ones(m)])
    c, h = rng.normal(size=q), rng.normal(size=m)
    v, n_iter = inequality_qp(G, c, h, gamma, tol=1e-10)
    reference = solve_box_qp_reference(G @ G.T / gamma, -(h + G @ c / gamma), 0.0, np.inf)
    expected = (G.T @ reference.x - c) / gamma
    scale = max(1.0, np.abs(h).max(), np.abs(c).max())
    bound = np.sqrt(2.0 * m * 1e-10 * scale / gamma) + 1e-7 * scale
    assert n_iter < 60
    np.testing.assert_allclose(v, expected, atol=10.0 * bound)
    assert np.max(h - G @ v) <= 10.0 * 1e-10 * scale + 1e-12


def _objective_parts(result, problem):
    """At the returned point: each label's gamma/2 |w~_i|^2 + C sum_j slack, the margins and the slacks."""
    X = problem["X"].toarray() if sp.issparse(problem["X"]) else np.asarray(problem["X"])
    priv = problem["X_priv"].toarray() if sp.issparse(problem["X_priv"]) else np.asarray(problem["X_priv"])
    fitted = result.solution.model_state
    slacks = priv @ fitted["W_tilde"] + fitted["intercept_tilde"]
    Y = np.asarray(problem["Y"], dtype=float).reshape(X.shape[0], -1)
    margins = Y * (X @ result.solution.coef + result.solution.intercept)
    per_label = (0.5 * problem["gamma"] * (np.sum(fitted["W_tilde"] ** 2, axis=0) + fitted["intercept_tilde"] ** 2)
                 + problem["C"] * slacks.sum(axis=0))
    return per_label, margins, slacks


@pytest.mark.filterwarnings("ignore::multilabel_core.solvers.ConvergenceWarning")  # short runs on purpose
@given(svmplus_problems(), st.integers(1, 5))
def test_best_correcting_functions_lower_the_certified_primal(problem, epochs):
    """After a few epochs the recovered point violates constraints: the bias repair makes it feasible, and
    the best correcting functions for the same M (a QP per label) keep it feasible at a primal no higher,
    each replaced label at the reference QP's optimum, the certificate still above the dual."""
    run = {"tol": 1e-12, "max_iter": epochs, "random_state": 3, "fit_intercept": problem["fit_intercept"]}
    options = {key: value for key, value in problem.items() if key != "fit_intercept"}
    best = svmplus_cd(**options, **run)
    with mock.patch.object(svmplus, "BEST_CORRECTING_MAX_FLOPS", 0.0):  # hypothesis: no function-scoped fixture
        bias_only = svmplus_cd(**options, **run)
    assert bias_only.certificate.statistics["best_correcting_labels"] == 0
    replaced = best.certificate.statistics["best_correcting_labels"]
    L = np.asarray(problem["Y"]).reshape(np.shape(problem["Y"])[0], -1).shape[1]
    assert 0 <= replaced <= L
    scale = max(1.0, abs(bias_only.certificate.primal))
    assert best.certificate.dual == bias_only.certificate.dual
    assert best.certificate.primal <= bias_only.certificate.primal + 1e-9 * scale
    assert best.certificate.primal >= best.certificate.dual - 1e-9 * scale  # weak duality at a feasible point
    per_label, margins, slacks = _objective_parts(best, problem)
    assert np.all(margins + slacks >= 1.0 - 1e-9 * scale) and np.all(slacks >= -1e-9 * scale)
    before, _, _ = _objective_parts(bias_only, problem)
    changed = np.flatnonzero(per_label < before - 1e-12 * scale)
    assert changed.size <= replaced
    # Each label's value is at least the optimum of its QP for this M (the reference, on the dual).
    hinges = np.maximum(0.0, 1.0 - margins)
    priv = problem["X_priv"].toarray() if sp.issparse(problem["X_priv"]) else np.asarray(problem["X_priv"])
    mask = problem["privileged_mask"]
    for i in range(L):
        G = np.column_stack([priv * (1.0 if mask is None else mask[i]), np.ones(priv.shape[0])])
        c = problem["C"] * G.sum(axis=0)
        reference = solve_box_qp_reference(G @ G.T / problem["gamma"], -(hinges[:, i] + G @ c / problem["gamma"]),
                                           0.0, np.inf)
        optimum = -reference.objective - 0.5 * float(c @ c) / problem["gamma"]
        assert per_label[i] >= optimum - 1e-6 * scale
        if i in changed:
            assert per_label[i] == pytest.approx(optimum, rel=1e-5, abs=1e-6 * scale)
