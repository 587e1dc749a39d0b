"""Box-constrained kernel dual (Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept
Network*, eq. 8) by coordinate descent: optimal, certified, consistent."""

import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core import ComposedEstimator
from multilabel_core.validation import to_signs
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import PrecomputedKernel
from multilabel_core.solvers import CDSolver, box_kernel_cd, linear_svm_cd
from multilabel_core.testing.checks import assert_duality_gap, assert_matches_reference, check_solver
from multilabel_core.testing.reference import solve_box_qp_reference
from multilabel_core.testing.strategies import psd_kernels, sign_matrices

TIGHT = {"tol": 1e-8, "max_iter": 1000000}
#: check_solver's tolerance on the projected gradients, and the duality gap it implies: with
#: |PG_i| <= tol, each hinge term of the gap is at most 2 C tol (squared hinge: C tol^2), so
#: gap <= 2 n C L tol <= 2 * 12 * 10 * 3 * tol on the drawn problems.  Not tighter: on nearly
#: collinear drawn rows (K = [[1 + 4e-6, 1], [1, 1]]) CD contracts by 1 - 1e-6 per epoch.
CHECKED = {"tol": 1e-6}
GAP_TOL = 2 * 12 * 10 * 3 * CHECKED["tol"]


@st.composite
def box_problems(draw):
    """(K, Y, loss, C): a PSD kernel (rank-deficient ones included), signs, a loss and a cost."""
    n = draw(st.integers(2, 12))
    K = draw(psd_kernels(n=n))
    Y = draw(sign_matrices(n_samples=n, n_labels=st.integers(1, 3)))
    return K, Y, draw(st.sampled_from(["hinge", "squared_hinge"])), draw(st.sampled_from([0.1, 1.0, 10.0]))


def dual_matrix(K, y, C, loss):
    """Q + D of one label: Q_ij = y_i y_j K_ij, D = I / (2C) for the squared hinge."""
    diagonal = 1.0 / (2.0 * C) if loss == "squared_hinge" else 0.0
    return np.outer(y, y) * K + diagonal * np.eye(len(y))


def upper(problem):
    return np.inf if problem[2] == "squared_hinge" else problem[3]


def dual_gradient(problem, alpha):
    K, Y, loss, C = problem
    return np.column_stack([dual_matrix(K, Y[:, l], C, loss) @ alpha[:, l] - 1.0 for l in range(Y.shape[1])])


def solve(problem, *, random_state, warm_start=None, **options):
    K, Y, loss, C = problem
    result = box_kernel_cd(K, Y, C, loss=loss, random_state=random_state, alpha0=warm_start, **(TIGHT | options))
    return result.solution.dual, result.certificate


def test_kkt_gap_determinism_and_warm_start():
    check_solver(
        functools.partial(solve, **CHECKED),
        box_problems(),
        gradient=dual_gradient,
        upper=upper,
        equality=False,
        kkt_tol=CHECKED["tol"],
        gap_tol=GAP_TOL,
    )


@given(box_problems())
def test_equals_the_reference_qp(problem):
    K, Y, loss, C = problem
    alpha, certificate = solve(problem, random_state=0)
    for l in range(Y.shape[1]):
        reference = solve_box_qp_reference(dual_matrix(K, Y[:, l], C, loss), -np.ones(len(K)), 0.0, upper(problem))
        assert_matches_reference(
            alpha[:, l],
            -certificate.statistics["dual"][l],
            reference.x,
            reference.objective,
            rtol_objective=1e-6,
            atol_objective=1e-9,
            atol_alpha=1e-4 * max(1.0, C) if loss == "squared_hinge" else None,
        )


@given(box_problems())
def test_the_dual_objective_never_decreases_across_epochs(problem):
    _, certificate = solve(problem, random_state=0, tol=1e-6, record_dual=True)
    for trace in certificate.statistics["dual_trace"]:
        steps = np.diff(np.concatenate([[0.0], trace]))
        assert np.all(steps >= -1e-12 * max(1.0, np.abs(trace).max())), steps.min()


@given(box_problems())
def test_shrinking_on_and_off_give_the_same_scores(problem):
    K, Y, loss, C = problem
    # The training scores K (alpha o y) are unique (the primal is strongly convex), alpha need not be.
    scores = [
        K @ box_kernel_cd(K, Y, C, loss=loss, shrinking=shrinking, random_state=0, **TIGHT).solution.dual_coef
        for shrinking in (True, False)
    ]
    np.testing.assert_allclose(scores[0], scores[1], atol=1e-5 * max(1.0, np.abs(scores[1]).max()))


def test_one_kernel_per_label_equals_separate_solves():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((3, 20, 4))
    kernels = F @ F.transpose(0, 2, 1)
    Y = np.where(rng.random((20, 3)) < 0.5, -1.0, 1.0)
    stacked = box_kernel_cd(kernels, Y, 1.0, random_state=0, **TIGHT)
    for l in range(3):
        alone = box_kernel_cd(kernels[l], Y[:, [l]], 1.0, random_state=0, **TIGHT)
        np.testing.assert_allclose(stacked.certificate.statistics["primal"][l], alone.certificate.primal, rtol=1e-8)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_the_linear_kernel_gives_the_linear_svm(loss):
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    X, Y = data.X, to_signs(data.Y)
    kernel = box_kernel_cd(X @ X.T, Y, 1.0, loss=loss, random_state=0, **TIGHT)
    linear = linear_svm_cd(X, Y, 1.0, loss=loss, random_state=0, **TIGHT)
    np.testing.assert_allclose(kernel.certificate.primal, linear.certificate.primal, rtol=1e-8)
    kernel, linear = kernel.solution, linear.solution
    np.testing.assert_array_equal(kernel.dual_coef, kernel.dual * Y)
    np.testing.assert_allclose(X.T @ kernel.dual_coef, linear.coef, atol=1e-5)
    assert kernel.coef is None and np.all(kernel.intercept == 0.0)


def test_cd_solver_kernel_path_with_the_regularised_intercept():
    # K + s^2 is the kernel of [x, s]: a precomputed linear kernel fits the linear model with its bias feature.
    data = make_correlated_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=1)
    X, Y = data.X, data.Y
    solver = CDSolver(tol=1e-9, max_iter=1000000, intercept_scaling=1.5)
    kernel = ComposedEstimator(loss="hinge", kernel=PrecomputedKernel(), solver=solver).fit(X @ X.T, Y)
    linear = ComposedEstimator(loss="hinge", solver=solver).fit(X, Y)
    X_test = make_correlated_multilabel(n_samples=30, n_features=5, n_labels=3, random_state=2).X
    np.testing.assert_allclose(kernel.decision_function(X_test @ X.T), linear.decision_function(X_test), atol=1e-5)
    np.testing.assert_allclose(kernel.certificate_.primal, linear.certificate_.primal, rtol=1e-8)
    assert_duality_gap(kernel.certificate_, rtol=1e-8)


def test_cd_solver_with_an_rbf_kernel_matches_the_function_on_the_kernel_matrix():
    data = make_correlated_multilabel(n_samples=70, n_features=4, n_labels=2, random_state=3)
    model = ComposedEstimator(loss="squared_hinge", kernel="rbf", solver=CDSolver(tol=1e-8), fit_intercept=False)
    model.fit(data.X, data.Y)
    K = model.kernel_(data.X)
    direct = box_kernel_cd(K, to_signs(data.Y), 1.0, loss="squared_hinge", tol=1e-8, random_state=0)
    np.testing.assert_allclose(model.dual_coef_, direct.solution.dual_coef, atol=1e-9)
    np.testing.assert_allclose(model.decision_function(data.X), K @ model.dual_coef_)
    assert_duality_gap(model.certificate_, rtol=1e-8)
