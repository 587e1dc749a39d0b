"""Solvers ask parts for capabilities, never for classes: a third party's loss with the right methods runs."""

import attrs
import numpy as np
import pytest

from multilabel_core.base import CapabilityError, Loss, Problem
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel, PrecomputedKernel
from multilabel_core.losses import Hinge, SquaredHinge
from multilabel_core.regularizers import Frobenius, LabelCovariance
from multilabel_core.relations import Independent
from multilabel_core.solvers import CDSolver, LBFGSSolver, box_kernel_cd, linear_svm_cd
from multilabel_core.testing.checks import assert_duality_gap
from multilabel_core.validation import to_signs

#: CD's stopping rule |PG| <= TOL; with it, w is within about sqrt(n C TOL) of the optimum and
#: the relative duality gap about n C TOL / primal: tolerances below are derived from it.
TOL = 1e-10


def problem(loss, regularizer=None, *, kernel=None, n_labels=3, C=1.0, fit_intercept=True, random_state=0):
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=n_labels, random_state=random_state)
    X = data.X
    if kernel is not None:
        X = X @ X.T
    return Problem(
        X,
        to_signs(data.Y),
        loss,
        Frobenius() if regularizer is None else regularizer,
        Independent(),
        LinearKernel() if kernel is None else kernel,
        C=C,
        fit_intercept=fit_intercept,
    )


class ThirdPartyHinge(Loss):
    """The hinge loss written from scratch by a third party: a Loss, not a Hinge."""

    def value(self, Y, T):
        return float(np.maximum(0.0, 1.0 - np.asarray(Y) * np.asarray(T)).sum())

    def gradient(self, Y, T):
        Y, T = np.asarray(Y, dtype=float), np.asarray(T, dtype=float)
        return np.where(Y * T < 1.0, -Y, 0.0)

    def conjugate(self, Y, U):
        A = np.asarray(Y) * np.asarray(U)
        return float(A.sum()) if np.all((A >= -1.0) & (A <= 0.0)) else np.inf

    def dual_box(self, C):
        return 0.0, float(C)

    def dual_diagonal(self, C):
        return 0.0


class NoDiagonalHinge(Loss):
    """A hinge that only knows its dual box: no solver can tell that its dual has no quadratic term."""

    value, gradient, conjugate, dual_box = (
        ThirdPartyHinge.value, ThirdPartyHinge.gradient, ThirdPartyHinge.conjugate, ThirdPartyHinge.dual_box
    )


@attrs.frozen
class SmoothedHinge(Loss):
    """A loss neither stock class is: ell(s) = max_{a in [0, 1]} a (1 - s) - delta a^2 / 2.

    0 for s >= 1, (1 - s)^2 / (2 delta) for 1 - delta < s < 1, 1 - s - delta / 2 below: C^1.
    Its dual has the box [0, C] and the diagonal delta / C (C ell*(-alpha / C) = -alpha +
    delta alpha^2 / (2 C)): the SVM dual with a box *and* a diagonal.
    """

    delta: float = 0.5
    smooth = True

    def _margins(self, Y, T):
        return 1.0 - np.asarray(Y, dtype=float) * np.asarray(T, dtype=float)

    def value(self, Y, T):
        r = self._margins(Y, T)
        quadratic, linear = r**2 / (2 * self.delta), r - self.delta / 2
        return float(np.where(r <= 0.0, 0.0, np.where(r < self.delta, quadratic, linear)).sum())

    def gradient(self, Y, T):
        return -np.asarray(Y, dtype=float) * np.clip(self._margins(Y, T) / self.delta, 0.0, 1.0)

    def conjugate(self, Y, U):
        A = np.asarray(Y) * np.asarray(U)
        if np.any(A < -1.0 - 1e-12) or np.any(A > 1e-12):
            return np.inf
        A = np.clip(A, -1.0, 0.0)
        return float((A + self.delta * A**2 / 2).sum())

    def dual_box(self, C):
        return 0.0, float(C)

    def dual_diagonal(self, C):
        return self.delta / C


@pytest.mark.parametrize("kernel", [None, PrecomputedKernel()], ids=["linear", "precomputed"])
def test_cd_accepts_a_third_party_svm_dual_loss_and_solves_as_with_hinge(kernel):
    solver = CDSolver(tol=TOL, max_iter=1000000)
    stock = solver.solve(problem(Hinge(), kernel=kernel))
    third = solver.solve(problem(ThirdPartyHinge(), kernel=kernel))
    assert third.converged and third.certificate.solver == "CDSolver"
    # Same dual, same engine calls: the same solution, within the solver's tolerance.
    scale = max(1.0, abs(stock.certificate.primal))
    np.testing.assert_allclose(third.certificate.primal, stock.certificate.primal, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(third.solution.dual_coef, stock.solution.dual_coef, atol=1e-6)
    np.testing.assert_allclose(third.solution.intercept, stock.solution.intercept, atol=1e-6)
    if kernel is None:
        np.testing.assert_allclose(third.solution.coef, stock.solution.coef, atol=1e-6)


def test_cd_refuses_a_loss_without_dual_diagonal():
    with pytest.raises(CapabilityError, match=r"CDSolver requires loss\.dual_diagonal, which NoDiagonalHinge"):
        CDSolver().solve(problem(NoDiagonalHinge()))


def test_cd_refuses_a_regulariser_coupling_the_labels():
    omega = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.0]])  # SPD, not diagonal
    assert np.linalg.eigvalsh(omega).min() > 0.0
    message = r"diagonal label_gram.*LabelCovariance\.label_gram\(3\) couples labels 0 and 1"
    with pytest.raises(CapabilityError, match=message):
        CDSolver().solve(problem(Hinge(), LabelCovariance(omega)))


def test_cd_refuses_a_regulariser_without_label_gram():
    class NoGram(Frobenius):
        label_gram = None

    with pytest.raises(CapabilityError, match=r"requires regularizer\.label_gram, which NoGram"):
        CDSolver().solve(problem(Hinge(), NoGram()))


@pytest.mark.parametrize(
    "box, diagonal",
    [((0.0, np.inf), 0.0), ((-1.0, 1.0), 0.0), ((0.0, 1.0), -0.5), ((0.0, 1.0), np.nan), ((0.0, 0.0), 1.0)],
)
def test_cd_refuses_capabilities_that_describe_no_svm_dual_naming_the_values(box, diagonal):
    class Odd(ThirdPartyHinge):
        def dual_box(self, C):
            return box

        def dual_diagonal(self, C):
            return diagonal

    with pytest.raises(CapabilityError, match=r"Odd gives dual_box\(1\) = \(.*\) and dual_diagonal\(1\) = "):
        CDSolver().solve(problem(Odd()))


def test_cd_solves_a_dual_with_both_a_box_and_a_diagonal():
    # The smoothed hinge is neither hinge (D = 0) nor squared hinge (no bound): the engine takes
    # the loss's box and diagonal as they are.  L-BFGS on the (C^1) primal is the reference.
    loss = SmoothedHinge(delta=0.5)
    fit = CDSolver(tol=TOL, max_iter=1000000).solve(problem(loss, C=2.0))
    assert_duality_gap(fit.certificate, rtol=1e-8)
    assert np.all(fit.solution.dual <= 2.0) and np.any(fit.solution.dual == 2.0)  # the box is active
    reference = LBFGSSolver(tol=1e-7, max_iter=10000).solve(problem(loss, C=2.0))
    assert fit.certificate.primal <= reference.certificate.primal * (1 + 1e-9)
    np.testing.assert_allclose(fit.certificate.primal, reference.certificate.primal, rtol=1e-7)
    np.testing.assert_allclose(fit.solution.coef, reference.solution.coef, atol=1e-4)


@pytest.mark.parametrize("loss", [Hinge(), SquaredHinge()], ids=["hinge", "squared_hinge"])
@pytest.mark.parametrize("kernel", [None, PrecomputedKernel()], ids=["linear", "precomputed"])
def test_cd_diagonal_label_gram_is_per_label_costs(loss, kernel):
    # 1/2 tr(W M^-1 W^T) with M = diag(m): label l is the SVM at cost C m_l, its objectives scaled by 1/m_l.
    m = np.array([0.25, 1.0, 3.0])
    fit = CDSolver(tol=TOL, max_iter=1000000).solve(problem(loss, LabelCovariance(np.diag(m)), kernel=kernel))
    data = problem(loss, kernel=kernel)
    K = data.X + 1.0 if kernel is not None else None
    direct = (
        linear_svm_cd(data.X, data.Y, data.C * m, loss=loss, fit_intercept=True, tol=TOL, max_iter=1000000,
                      random_state=0)
        if kernel is None
        else box_kernel_cd(K, data.Y, data.C * m, loss=loss, tol=TOL, max_iter=1000000, random_state=0)
    )
    np.testing.assert_array_equal(fit.solution.dual_coef, direct.solution.dual_coef)
    np.testing.assert_array_equal(fit.solution.dual, direct.solution.dual / m)
    per_label = np.array(direct.certificate.statistics["primal"]) / m
    np.testing.assert_allclose(fit.certificate.statistics["primal"], per_label, rtol=1e-15)
    np.testing.assert_allclose(fit.certificate.primal, per_label.sum(), rtol=1e-14)
    assert_duality_gap(fit.certificate, rtol=1e-8)
    # The primal of the problem itself, evaluated apart from the solver.
    weights = fit.solution.coef if kernel is None else fit.solution.dual_coef
    scores = data.X @ weights + fit.solution.intercept
    W_norms = (
        np.sum(fit.solution.coef**2, axis=0) + fit.solution.intercept**2
        if kernel is None
        else np.einsum("il,ij,jl->l", fit.solution.dual_coef, K, fit.solution.dual_coef)
    )
    expected = 0.5 * np.sum(W_norms / m) + data.C * loss.value(data.Y, scores)
    np.testing.assert_allclose(fit.certificate.primal, expected, rtol=1e-10)


def test_cd_default_label_covariance_is_frobenius_at_cost_c_over_l():
    # LabelCovariance() is 1/2 tr(W (I/L)^-1 W^T) = L/2 ||W||^2: Frobenius at cost C / L, objectives times L.
    fit = CDSolver(tol=TOL, max_iter=1000000).solve(problem(SquaredHinge(), LabelCovariance(), C=3.0))
    frobenius = CDSolver(tol=TOL, max_iter=1000000).solve(problem(SquaredHinge(), C=1.0))
    np.testing.assert_allclose(fit.solution.coef, frobenius.solution.coef, atol=1e-12)
    np.testing.assert_allclose(fit.certificate.primal, 3 * frobenius.certificate.primal, rtol=1e-12)


def test_smo_solves_a_third_party_hinge_as_the_hinge():
    # SMO asks for dual_box (0, U) and dual_diagonal 0, not for Hinge: the third party's loss gives Hinge's fit.
    from multilabel_core.kernels import RBFKernel
    from multilabel_core.solvers import SMOSolver

    kernel = RBFKernel(gamma=0.3)
    ours = SMOSolver(tol=1e-8).solve(attrs.evolve(problem(ThirdPartyHinge(), LabelCovariance(), C=0.5), kernel=kernel))
    stock = SMOSolver(tol=1e-8).solve(attrs.evolve(problem(Hinge(), LabelCovariance(), C=0.5), kernel=kernel))
    np.testing.assert_array_equal(ours.solution.dual, stock.solution.dual)
    np.testing.assert_array_equal(ours.solution.intercept, stock.solution.intercept)
    assert ours.certificate.converged and ours.certificate.gap == stock.certificate.gap


@pytest.mark.parametrize(
    "loss, message",
    [(NoDiagonalHinge(), "loss.dual_diagonal"), (SquaredHinge(), r"dual_box = \(0.0, inf\) and dual_diagonal = ")],
)
def test_smo_refuses_a_loss_without_the_hinge_dual(loss, message):
    from multilabel_core.kernels import RBFKernel
    from multilabel_core.solvers import SMOSolver

    with pytest.raises(CapabilityError, match=message):
        SMOSolver().check(attrs.evolve(problem(loss, LabelCovariance()), kernel=RBFKernel(gamma=0.3)))
