"""LBFGSSolver: optimality certificates, stationarity, dense = sparse, warm start, capabilities."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.validation import to_signs
from multilabel_core.base import CapabilityError, Problem, Solution
from multilabel_core.kernels import LinearKernel, RBFKernel
from multilabel_core.losses import Hinge, Logistic, SquaredHinge
from multilabel_core.regularizers import Frobenius, LabelCovariance, LowRank, NuclearNorm
from multilabel_core.relations import Independent, LearnedCovariance
from multilabel_core.solvers import ConvergenceWarning, LBFGSSolver
from multilabel_core.testing.checks import check_duality_gap, check_kkt
from multilabel_core.testing.strategies import multilabel_problems, spd_matrices

TIGHT = LBFGSSolver(tol=1e-7, max_iter=5000)


def make_problem(X, Y, *, loss=None, regularizer=None, relation=None, kernel=None, C=1.0, fit_intercept=True):
    return Problem(
        X,
        to_signs(Y),
        loss or SquaredHinge(),
        regularizer or Frobenius(),
        relation or Independent(),
        kernel or LinearKernel(),
        C=C,
        fit_intercept=fit_intercept,
    )


def small_problem(seed=0, n=80, d=6, L=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X @ rng.standard_normal((d, L)) + 0.5 * rng.standard_normal((n, L)) > 0).astype(np.int8)
    return X, Y


@given(
    problem=multilabel_problems(sparse=None),
    loss=st.sampled_from([SquaredHinge(), Logistic()]),
    C=st.sampled_from([0.1, 1.0, 10.0]),
    fit_intercept=st.booleans(),
)
def test_duality_gap_closes_and_stays_nonnegative(problem, loss, C, fit_intercept):
    X, Y = problem
    certificate = TIGHT.solve(make_problem(X, Y, loss=loss, C=C, fit_intercept=fit_intercept)).certificate
    assert certificate.converged
    check_duality_gap(certificate, tol=1e-7)


@given(problem=multilabel_problems(n_labels=3), omega=spd_matrices(n=3, min_eigenvalue=0.1, max_eigenvalue=10.0))
def test_label_covariance_regulariser_is_solved_to_optimality(problem, omega):
    X, Y = problem
    certificate = TIGHT.solve(make_problem(X, Y, regularizer=LabelCovariance(omega))).certificate
    check_duality_gap(certificate, tol=1e-7)


def test_kkt_violation_is_the_stationarity_residual_v_minus_x_transpose_a():
    # Frobenius: grad P = V - X_a^T A with A = -C ell'(T) (the dual point of eq. 2), so
    # the certificate's kkt_violation bounds |V - X_a^T A| and is within the stopping rule.
    X, Y = small_problem()
    C = 2.0
    problem = make_problem(X, Y, C=C)
    fit = TIGHT.solve(problem)
    solution, certificate = fit.solution, fit.certificate
    A = -C * SquaredHinge().gradient(problem.Y, X @ solution.coef + solution.intercept)
    residual = max(np.abs(solution.coef - X.T @ A).max(), np.abs(solution.intercept - A.sum(axis=0)).max())
    assert residual == pytest.approx(certificate.kkt_violation, rel=1e-6)
    gradient_at_zero = C * np.abs(np.vstack([X.T, np.ones(len(X))]) @ SquaredHinge().gradient(problem.Y, 0 * A)).max()
    check_kkt(certificate, tol=TIGHT.tol * gradient_at_zero)


def test_labels_are_solved_independently_under_frobenius():
    X, Y = small_problem(L=3)
    together = TIGHT.solve(make_problem(X, Y)).solution
    for j in range(Y.shape[1]):
        alone = TIGHT.solve(make_problem(X, Y[:, [j]])).solution
        np.testing.assert_allclose(alone.coef[:, 0], together.coef[:, j], atol=1e-5)
        np.testing.assert_allclose(alone.intercept[0], together.intercept[j], atol=1e-5)


class DenseRefusingCSR(sp.csr_matrix):
    """A CSR matrix that fails if anything tries to densify it."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("X was densified")

    todense = toarray


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_and_dense_inputs_give_the_same_solution(fmt):
    X, Y = small_problem(seed=1)
    X[np.abs(X) < 0.8] = 0.0
    dense = TIGHT.solve(make_problem(X, Y)).solution
    sparse = TIGHT.solve(make_problem(sp.csr_matrix(X).asformat(fmt), Y)).solution
    np.testing.assert_allclose(sparse.coef, dense.coef, atol=1e-7)
    np.testing.assert_allclose(sparse.intercept, dense.intercept, atol=1e-7)
    TIGHT.solve(make_problem(DenseRefusingCSR(X), Y))


def test_float32_features_are_solved_in_float64():
    X, Y = small_problem(seed=2)
    single = TIGHT.solve(make_problem(X.astype(np.float32), Y)).solution
    double = TIGHT.solve(make_problem(X.astype(np.float32).astype(np.float64), Y)).solution
    assert single.coef.dtype == np.float64
    np.testing.assert_allclose(single.coef, double.coef, atol=1e-7)


def test_without_intercept_the_bias_is_zero_and_the_gap_still_closes():
    X, Y = small_problem(seed=3)
    fit = TIGHT.solve(make_problem(X, Y, fit_intercept=False))
    solution, certificate = fit.solution, fit.certificate
    assert np.all(solution.intercept == 0.0)
    check_duality_gap(certificate, tol=1e-8)


def test_warm_start_from_the_optimum_stops_at_once():
    X, Y = small_problem(seed=4)
    problem = make_problem(X, Y)
    solution = TIGHT.solve(problem).solution
    fit = TIGHT.solve(problem, warm_start=solution)
    again, certificate = fit.solution, fit.certificate
    assert certificate.n_iter == 0 and certificate.converged
    # Exact: no step was taken, so coef is the warm start with no arithmetic on it.
    np.testing.assert_array_equal(again.coef, solution.coef)


def test_warm_start_of_the_wrong_shape_is_refused():
    X, Y = small_problem()
    with pytest.raises(ValueError, match="warm start coef has shape"):
        TIGHT.solve(make_problem(X, Y), warm_start=Solution(coef=np.zeros((2, 2)), intercept=np.zeros(2)))


def test_iteration_limit_warns_and_reports_not_converged():
    X, Y = small_problem()
    with pytest.warns(ConvergenceWarning, match="LBFGSSolver did not converge"):
        certificate = LBFGSSolver(max_iter=1).solve(make_problem(X, Y, C=100.0)).certificate
    assert not certificate.converged and certificate.n_iter == 1


def test_convergence_warning_is_scikit_learns():
    sklearn_exceptions = pytest.importorskip("sklearn.exceptions")
    assert issubclass(ConvergenceWarning, sklearn_exceptions.ConvergenceWarning)


def test_no_warning_when_converged():
    X, Y = small_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LBFGSSolver().solve(make_problem(X, Y))


@pytest.mark.parametrize(
    "parts, missing",
    [
        ({"loss": Hinge()}, "loss.smooth"),
        ({"regularizer": NuclearNorm()}, "regularizer.smooth"),
        ({"regularizer": LowRank(rank=2)}, "regularizer.smooth"),
        ({"kernel": RBFKernel(gamma=1.0)}, "kernel.linear"),
        ({"relation": LearnedCovariance()}, "learned"),
    ],
)
def test_missing_capabilities_are_named(parts, missing):
    X, Y = small_problem()
    with pytest.raises(CapabilityError, match=missing):
        LBFGSSolver().solve(make_problem(X, Y, **parts))


def test_without_conjugates_the_gap_is_nan_and_nothing_is_certified():
    class NoConjugateFrobenius(Frobenius):
        conjugate = None

    X, Y = small_problem()
    with pytest.warns(ConvergenceWarning, match="NoConjugateFrobenius has no conjugate"):
        certificate = LBFGSSolver().solve(make_problem(X, Y, regularizer=NoConjugateFrobenius())).certificate
    assert np.isnan(certificate.dual) and np.isnan(certificate.gap) and not certificate.converged


@pytest.mark.parametrize("settings", [{"tol": 0.0}, {"tol": -1e-3}, {"max_iter": 0}, {"max_iter": 2.5}, {"tol": "small"}])
def test_invalid_settings_are_refused(settings):
    with pytest.raises(ValueError, match=next(iter(settings))):
        LBFGSSolver(**settings)
