"""Coordinate groups in the CD engine: the SVM+ dual (You et al., *Privileged Multi-label Learning*, eqs. 7
and 11) and the hinge dual of the low-rank problem (2), both visited example by example.

The groups change the order of the updates and defer the updates of M to the end of each example's visit,
so the properties checked are those the order must not change: the optimum (against the testing kit's
reference QP of the explicit dual), the same (M, w~) with and without shrinking (shrinking defers inside a
group), and a converged solve whose final point meets its own tolerance.

The hinge reference: coordinate s = (j, i) in C order of (n, L), phi_s = a_i (x) x_j (x with its constant
1 when ``fit_intercept``), Q[s, t] = y_s y_t phi_s^T phi_t, and the dual min 1/2 a^T Q a - 1^T a over
0 <= a <= C.  The SVM+ reference is the PrML plugin's (multilabel_core_plugins.prml.testing).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.checks import assert_kkt, assert_matches_reference, check_duality_gap
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core.testing.strategies import feature_matrices, label_embeddings, sign_matrices
from multilabel_core_plugins.prml.svmplus import embedded_hinge_cd, privileged_label_features, svmplus_cd
from multilabel_core_plugins.prml.testing import assert_svmplus_matches_reference, svmplus_dual_matrices, svmplus_problems

TIGHT = {"tol": 1e-9, "max_iter": 50_000}


def _tight(solver, problem, **options):
    """A tight solve; draws on which CD does not reach it (degenerate, near-collinear rows) are discarded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = solver(**problem, **{**TIGHT, **options})
    assume(fit.certificate.converged)
    return fit


@st.composite
def hinge_problems(draw):
    """Keyword arguments of :func:`embedded_hinge_cd`: dense or sparse rows, A or I."""
    n, n_labels = draw(st.integers(3, 7)), draw(st.integers(1, 3))
    return {
        "X": draw(feature_matrices(n, st.integers(1, 3), sparse=None, magnitude=3.0)),
        "Y": draw(sign_matrices(n, n_labels)),
        "C": draw(st.floats(0.1, 5.0)),
        "embedding": draw(label_embeddings(n_labels)),
        "fit_intercept": draw(st.booleans()),
    }


def _dense(matrix, constant: bool) -> np.ndarray:
    dense = matrix.toarray() if sp.issparse(matrix) else np.array(matrix, dtype=np.float64)
    return np.hstack([dense, np.ones((dense.shape[0], 1))]) if constant else dense


def _margin_matrix(problem) -> np.ndarray:
    """Q_M[s, t] = y_s y_t (a_i^T a_i') (x_j^T x_j'), s = (j, i) in C order."""
    Y = np.asarray(problem["Y"], dtype=np.float64).reshape(len(problem["Y"]), -1)
    n, n_labels = Y.shape
    X = _dense(problem["X"], problem["fit_intercept"])
    A = np.eye(n_labels) if problem["embedding"] is None else problem["embedding"]
    j, i = np.divmod(np.arange(n * n_labels), n_labels)
    y = Y[j, i]
    return np.outer(y, y) * (A.T @ A)[np.ix_(i, i)] * (X @ X.T)[np.ix_(j, j)]


def _assert_same(first, second, parts, tol):
    for name, part in parts.items():
        expected = part(second)
        if expected is None:
            assert part(first) is None, name
            continue
        scale = max(1.0, np.abs(expected).max())
        np.testing.assert_allclose(part(first), expected, atol=tol * scale, err_msg=name)


# With a projected gradient below tol everywhere, the dual is within O(tol) of its optimum, and the primal
# (M, w~) -- strongly convex -- within O(sqrt(tol)) of the unique one (Theorem 1).
SOLUTION_TOL = 10.0 * np.sqrt(TIGHT["tol"])

HINGE_PARTS = {"coef": lambda f: f.solution.coef, "intercept": lambda f: f.solution.intercept,
               "D": lambda f: f.solution.model_state["D"]}
SVMPLUS_PARTS = {**HINGE_PARTS, "W_tilde": lambda f: f.solution.model_state["W_tilde"],
                 "intercept_tilde": lambda f: f.solution.model_state["intercept_tilde"]}


@given(hinge_problems(), st.integers(0, 2**32 - 1))
def test_hinge_shrinking_on_and_off_give_the_same_solution(problem, seed):
    on = _tight(embedded_hinge_cd, problem, shrinking=True, random_state=seed)
    off = _tight(embedded_hinge_cd, problem, shrinking=False, random_state=seed)
    assert off.certificate.statistics["n_shrunk"] == 0
    _assert_same(on, off, HINGE_PARTS, SOLUTION_TOL)


@given(svmplus_problems(), st.integers(0, 2**32 - 1))
def test_svmplus_shrinking_on_and_off_give_the_same_solution(problem, seed):
    on = _tight(svmplus_cd, problem, shrinking=True, random_state=seed)
    off = _tight(svmplus_cd, problem, shrinking=False, random_state=seed)
    assert off.certificate.statistics["n_shrunk"] == 0
    _assert_same(on, off, SVMPLUS_PARTS, SOLUTION_TOL)


@given(hinge_problems())
def test_hinge_matches_the_reference_qp(problem):
    """embedding=None (L independent SVMs) and embedding=A (the dictionary problem) alike."""
    fit = _tight(embedded_hinge_cd, problem, random_state=0)
    Q = _margin_matrix(problem)
    C = problem["C"]
    reference = solve_box_qp_reference(Q, -np.ones(len(Q)), 0.0, C)
    alpha = fit.solution.dual.ravel()
    value = 0.5 * alpha @ Q @ alpha - alpha.sum()
    assert_matches_reference(alpha, value, reference.x, reference.objective, rtol_objective=1e-6,
                             atol_objective=1e-9, atol_alpha=None)
    assert fit.certificate.dual == pytest.approx(-value, rel=1e-8, abs=1e-8)
    # The engine's projected gradients are <= tol; the exact ones of the reference form agree up to round-off.
    assert_kkt(alpha, Q @ alpha - 1.0, None, C, tol=10 * TIGHT["tol"] * max(1.0, np.abs(Q).max()), equality=False)
    # The hinge's gap is a true duality gap (every M is feasible).
    check_duality_gap(fit.certificate, tol=1e-6)


@given(svmplus_problems())
def test_grouped_svmplus_matches_the_reference_qp(problem):
    fit = _tight(svmplus_cd, problem, random_state=0)
    H, _, _ = svmplus_dual_matrices(**problem)
    assert_svmplus_matches_reference(fit, problem, kkt_tol=10 * TIGHT["tol"] * max(1.0, np.abs(H).max()))


def _gradients_hinge(fit, problem):
    """The hinge dual's gradient y_ji (scores_ji) - 1, recomputed from the returned model."""
    scores = _dense(problem["X"], False) @ fit.solution.coef + fit.solution.intercept
    return np.asarray(problem["Y"]).reshape(scores.shape) * scores - 1.0


@pytest.mark.parametrize("tol", [1e-1, 1e-3])
@pytest.mark.parametrize("embedding", [False, True], ids=["identity", "dictionary"])
def test_a_converged_grouped_solve_meets_its_tolerance(tol, embedding):
    """Converged means it: at the returned point every projected gradient is within tol, recomputed from
    the model (not the engine's running values, which the deferred updates of a group could leave stale)."""
    rng = np.random.default_rng(7)
    n, d, n_labels, k = 150, 8, 5, 3
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    Y = np.where(X @ rng.standard_normal((d, n_labels)) + 0.7 * rng.standard_normal((n, n_labels)) > 0, 1.0, -1.0)
    A = rng.standard_normal((k, n_labels)) if embedding else None
    hinge = {"X": sp.csr_matrix(X), "Y": Y, "C": 1.0, "embedding": A, "fit_intercept": True}
    fit = embedded_hinge_cd(**hinge, tol=tol, max_iter=20_000, random_state=3)
    assert fit.certificate.converged and fit.certificate.kkt_violation <= tol
    assert_kkt(fit.solution.dual, _gradients_hinge(fit, hinge), None, 1.0, tol=tol, equality=False)

    X_priv, mask = privileged_label_features(Y)
    fit = svmplus_cd(X, X_priv, Y, 1.0, 1.0, embedding=A, privileged_mask=mask, fit_intercept=True, tol=tol,
                     max_iter=20_000, random_state=3)
    # The certificate's KKT violation is recomputed from (alpha, beta) by the wrapper, independently of the engine.
    assert fit.certificate.converged and fit.certificate.kkt_violation <= tol
    assert fit.certificate.statistics["primal_infeasibility"] <= tol
