"""The reference QP solver is exact on hand-worked problems, agrees with independent solvers, and refuses bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from multilabel_core.testing.checks import assert_kkt
from multilabel_core.testing.reference import (
    MAX_REFERENCE_VARIABLES,
    ReferenceSolveError,
    kkt_residual,
    mlrl_dual_gradient,
    mlrl_dual_matrices,
    mlrl_dual_objective,
    solve_box_qp_reference,
)
from multilabel_core.testing.strategies import box_bounds, kernel_dual_problems, psd_kernels

# -- hand-worked problems --------------------------------------------------------------------------


def test_box_only_problem():
    # min 1/2 (x1^2 + x2^2) - 2 x1 + x2 on [0, 1]^2: the unconstrained minimiser (2, -1) clips to (1, 0).
    solution = solve_box_qp_reference(np.eye(2), np.array([-2.0, 1.0]), 0.0, 1.0)
    np.testing.assert_array_equal(solution.x, [1.0, 0.0])
    assert solution.objective == -1.5 and solution.kkt_residual <= 1e-9


def test_equality_constrained_problem():
    # min 1/2 ||x||^2 - x1 s.t. x1 + x2 + x3 = 1, 0 <= x <= 0.5: x = (0.5, 0.25, 0.25).
    solution = solve_box_qp_reference(np.eye(3), np.array([-1.0, 0.0, 0.0]), 0.0, 0.5, np.ones((1, 3)), [1.0])
    np.testing.assert_allclose(solution.x, [0.5, 0.25, 0.25], atol=1e-14)


def test_zero_curvature_directions_run_to_a_bound():
    # Q = 0: a linear programme; the minimiser is the vertex (upper bound where p < 0).
    solution = solve_box_qp_reference(np.zeros((3, 3)), np.array([-1.0, 2.0, -3.0]), -1.0, [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(solution.x, [4.0, -1.0, 6.0])


def test_svm_dual_with_two_points():
    # K = I, y = (+1, -1), C = 1: alpha = (1, 1), objective 1/2 (1 + 1) - 2 = -1.
    alpha, objective = mlrl_dual_matrices(np.eye(2), np.eye(1), np.array([[1.0], [-1.0]]), 1.0).solve()
    np.testing.assert_allclose(alpha, [[1.0], [1.0]], atol=1e-14)
    assert objective == pytest.approx(-1.0, abs=1e-14)


def test_infinite_bounds_are_allowed():
    solution = solve_box_qp_reference(np.eye(2), np.array([-3.0, 4.0]), -np.inf, np.inf)
    np.testing.assert_allclose(solution.x, [3.0, -4.0], atol=1e-14)


def test_infeasible_start_found_by_linear_programming():
    # 0 is not feasible (x1 + x2 = 3 with x in [1, 2]^2).
    solution = solve_box_qp_reference(np.eye(2), np.zeros(2), 1.0, 2.0, np.ones((1, 2)), [3.0])
    np.testing.assert_allclose(solution.x, [1.5, 1.5], atol=1e-12)


# -- agreement with independent solvers ---------------------------------------------------------------


@st.composite
def convex_qps(draw):
    """Small QPs with PSD (often singular) Q, a box from tiny to huge, and equalities 0 satisfies."""
    n = draw(st.integers(1, 7))
    Q = draw(psd_kernels(n=n))
    p = draw(hnp.arrays(np.float64, n, elements=st.floats(-5.0, 5.0)))
    upper = draw(box_bounds(shape=(n,), tiny=1e-3, huge=1e3))
    n_equalities = draw(st.integers(0, min(2, n)))
    A_eq = draw(hnp.arrays(np.float64, (n_equalities, n), elements=st.sampled_from([-1.0, 0.0, 1.0, 2.0])))
    return Q, p, upper, A_eq


@given(convex_qps())
def test_reference_is_at_least_as_good_as_slsqp(qp):
    Q, p, upper, A_eq = qp
    solution = solve_box_qp_reference(Q, p, 0.0, upper, A_eq)
    x = solution.x
    assert np.all((0.0 <= x) & (x <= upper)) and np.allclose(A_eq @ x, 0.0, atol=1e-9 * upper.max())
    assert solution.objective == pytest.approx(0.5 * x @ Q @ x + p @ x, rel=1e-12, abs=1e-12)
    constraints = [{"type": "eq", "fun": lambda z: A_eq @ z, "jac": lambda z: A_eq}] if len(A_eq) else []
    other = minimize(lambda z: 0.5 * z @ Q @ z + p @ z, np.zeros_like(p), jac=lambda z: Q @ z + p, method="SLSQP",
                     bounds=list(zip(np.zeros_like(p), upper)), constraints=constraints,
                     options={"ftol": 1e-14, "maxiter": 1000})
    if other.success:
        scale = max(1.0, abs(other.fun), float(np.abs(p).max()) * float(upper.max()))
        assert solution.objective <= other.fun + 1e-8 * scale


@given(kernel_dual_problems(n_samples=st.integers(2, 7), n_labels=st.integers(1, 3), identity_relation=True,
                            constant_box=True, tiny=1e-2, huge=1e2))
def test_with_omega_identity_each_label_is_libsvm_svc(problem):
    K, omega, Y, C = problem
    _, objective = mlrl_dual_matrices(K, omega, Y, C).solve()
    libsvm_objective = 0.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        for i in range(Y.shape[1]):
            svc = SVC(C=float(C[0, 0]), kernel="precomputed", tol=1e-9, max_iter=10**5).fit(K, Y[:, i])
            a = np.zeros(len(K))
            a[svc.support_] = np.abs(svc.dual_coef_[0])
            libsvm_objective += 0.5 * (a * Y[:, i]) @ K @ (a * Y[:, i]) - a.sum()
    scale = max(1.0, abs(objective))
    assert objective <= libsvm_objective + 1e-8 * scale
    # LIBSVM can stall on singular kernels (duplicate or zero rows); then only the inequality is informative.
    if not any(issubclass(warning.category, ConvergenceWarning) for warning in caught):
        assert objective == pytest.approx(libsvm_objective, rel=1e-6, abs=1e-6 * scale)


# -- the explicit MLRL dual ----------------------------------------------------------------------------


@given(kernel_dual_problems(n_samples=st.integers(2, 5), n_labels=st.integers(1, 3)), st.data())
def test_explicit_dual_agrees_with_the_kronecker_formulas(problem, data):
    K, omega, Y, C = problem
    qp = mlrl_dual_matrices(K, omega, Y, C)
    n, n_labels = Y.shape
    alpha = data.draw(hnp.arrays(np.float64, (n, n_labels), elements=st.floats(0.0, 1.0))) * C
    # Label-major: x[i * n + j] is alpha[j, i], the paper's (alpha_1^1, ..., alpha_n^1, alpha_1^2, ...).
    x = qp.vector(alpha)
    assert all(x[i * n + j] == alpha[j, i] for i in range(n_labels) for j in range(n))
    np.testing.assert_array_equal(qp.matrix(x), alpha)
    for i in range(n_labels):
        np.testing.assert_array_equal(qp.A_eq[i, i * n:(i + 1) * n], Y[:, i])
    scale = max(1.0, float(np.abs(K).max() * np.abs(omega).max() * C.sum()))
    np.testing.assert_allclose(qp.gradient(alpha), mlrl_dual_gradient(K, omega, Y, alpha), atol=1e-11 * scale)
    assert qp.objective(alpha) == pytest.approx(mlrl_dual_objective(K, omega, Y, alpha), abs=1e-11 * scale * C.sum())
    np.testing.assert_array_equal(qp.upper, C.ravel(order="F"))


@given(kernel_dual_problems(n_samples=st.integers(2, 6), n_labels=st.integers(1, 3), tiny=1e-3, huge=1e3))
def test_reference_dual_solution_is_optimal(problem):
    K, omega, Y, C = problem
    alpha, objective = mlrl_dual_matrices(K, omega, Y, C).solve()
    gradient = mlrl_dual_gradient(K, omega, Y, alpha)
    assert_kkt(alpha, gradient, Y, C, tol=1e-7 * max(1.0, float(np.abs(gradient).max())))
    assert objective == pytest.approx(mlrl_dual_objective(K, omega, Y, alpha), rel=1e-9, abs=1e-12)


# -- verification and refusals ---------------------------------------------------------------------------


def test_kkt_residual_tells_optimal_from_suboptimal_points():
    Q, p = np.eye(2), np.array([-2.0, 1.0])
    assert kkt_residual(Q, p, 0.0, 1.0, np.array([1.0, 0.0])) == 0.0
    assert kkt_residual(Q, p, 0.0, 1.0, np.array([0.5, 0.0])) > 0.1
    assert kkt_residual(Q, p, 0.0, 1.0, np.array([1.5, 0.0])) > 0.1  # outside the box
    # With x1 + x2 = 1 the minimiser is (1, 0) still; (0.5, 0.5) is feasible but not optimal.
    assert kkt_residual(Q, p, 0.0, 1.0, np.array([1.0, 0.0]), np.ones((1, 2)), [1.0]) == 0.0
    assert kkt_residual(Q, p, 0.0, 1.0, np.array([0.5, 0.5]), np.ones((1, 2)), [1.0]) > 0.1
    with pytest.raises(ValueError, match="x must have shape"):
        kkt_residual(Q, p, 0.0, 1.0, np.zeros(3))


def test_too_few_iterations_raise_rather_than_return_an_unverified_point():
    with pytest.raises(ReferenceSolveError, match="no optimum after 1 active-set iterations"):
        solve_box_qp_reference(np.eye(3), -np.ones(3), 0.0, 0.5, max_iter=1)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ((np.eye(2), np.zeros(3), 0.0, 1.0), r"Q must have shape \(3, 3\)"),
        ((np.array([[1.0, 2.0], [0.0, 1.0]]), np.zeros(2), 0.0, 1.0), "symmetric"),
        ((-np.eye(2), np.zeros(2), 0.0, 1.0), "not positive semi-definite"),
        ((np.eye(2), np.array([np.nan, 0.0]), 0.0, 1.0), "finite"),
        ((np.eye(2), np.zeros(2), 1.0, 0.0), "lower <= upper"),
        ((np.eye(2), np.zeros(2), 0.0, 1.0, np.ones((1, 3))), "A_eq must have 2 columns"),
        ((np.eye(2), np.zeros(2), 0.0, 1.0, np.ones((1, 2)), [5.0]), "infeasible"),
        ((np.zeros((2, 2)), -np.ones(2), 0.0, np.inf), "unbounded"),
    ],
)
def test_reference_refuses_malformed_or_ill_posed_problems(arguments, message):
    with pytest.raises(ValueError, match=message):
        solve_box_qp_reference(*arguments)


def test_explicit_dual_refuses_bad_shapes_and_large_problems():
    with pytest.raises(ValueError, match="signs"):
        mlrl_dual_matrices(np.eye(2), np.eye(1), np.array([[1.0], [0.0]]), 1.0)
    with pytest.raises(ValueError, match="K must be"):
        mlrl_dual_matrices(np.eye(3), np.eye(1), np.array([[1.0], [-1.0]]), 1.0)
    with pytest.raises(ValueError, match="C must be finite"):
        mlrl_dual_matrices(np.eye(2), np.eye(1), np.array([[1.0], [-1.0]]), -1.0)
    n = MAX_REFERENCE_VARIABLES + 1
    with pytest.raises(ValueError, match="tiny reference problems"):
        mlrl_dual_matrices(np.eye(n), np.eye(1), np.ones((n, 1)), 1.0)
    qp = mlrl_dual_matrices(np.eye(2), np.eye(1), np.array([[1.0], [-1.0]]), 1.0)
    with pytest.raises(ValueError, match=r"alpha must have shape \(2, 1\)"):
        qp.objective(np.zeros(2))
