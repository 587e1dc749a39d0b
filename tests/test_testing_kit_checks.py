"""assert_kkt, assert_duality_gap, assert_convex and assert_matches_reference pass on good inputs, fail on broken ones."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core import Certificate, Frobenius, Hinge, LabelCovariance, Logistic, NuclearNorm, SquaredHinge
from multilabel_core.base import Loss, Regularizer
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.checks import (
    assert_convex,
    assert_convex_loss,
    assert_convex_regularizer,
    assert_dual_ascent,
    assert_duality_gap,
    assert_kkt,
    assert_matches_reference,
    check_convexity,
    check_duality_gap,
)
from multilabel_core.testing.reference import mlrl_dual_gradient, mlrl_dual_matrices
from multilabel_core.testing.strategies import kernel_dual_problems, score_matrices, sign_matrices, spd_matrices

# -- assert_kkt, equality-constrained duals (SMO family) -----------------------------------------
#
# One label, three examples, C = 1.  With y = (+1, -1, +1) and alpha = (0.5, 1, 0.5) the
# equality constraint holds (0.5 - 1 + 0.5 = 0); example 0 and 2 are free (case 2),
# example 1 is at its upper bound (case 3).

Y1 = np.array([[1.0], [-1.0], [1.0]])
ALPHA1 = np.array([[0.5], [1.0], [0.5]])


def gradient_from_f(f, y=Y1):
    """The dual gradient whose f = y * gradient is ``f``."""
    return y * np.asarray(f, dtype=float).reshape(y.shape)


def test_kkt_holds_for_a_consistent_point():
    # Free examples share f = gamma = 0.3; example 1 (y = -1, alpha = C) needs (f - gamma) y <= 0, i.e. f >= gamma.
    gradient = gradient_from_f([0.3, 0.8, 0.3])
    assert_kkt(ALPHA1, gradient, Y1, 1.0, tol=1e-12)
    assert_kkt(ALPHA1, gradient, Y1, 1.0, bias=np.array([-0.3]), tol=1e-12)


def test_kkt_case_2_violation_names_label_and_example():
    gradient = gradient_from_f([0.3, 0.8, 0.5])  # two free variables with different f
    with pytest.raises(AssertionError, match=r"label 0: F_low - F_up = 0.2.*example 2 \(case 2"):
        assert_kkt(ALPHA1, gradient, Y1, 1.0, tol=1e-3)
    assert_kkt(ALPHA1, gradient, Y1, 1.0, tol=0.25)  # within a loose tolerance


def test_kkt_case_3_violation():
    gradient = gradient_from_f([0.3, 0.1, 0.3])  # example 1 at C with f < gamma: case 3 violated
    with pytest.raises(AssertionError, match=r"example \d \(case 2.*example 1 \(case 3"):
        assert_kkt(ALPHA1, gradient, Y1, 1.0, tol=1e-3)
    with pytest.raises(AssertionError, match=r"example 1 \(case 3 \(alpha = C\), y = -1\)"):
        assert_kkt(ALPHA1, gradient, Y1, 1.0, bias=np.array([-0.3]), tol=1e-3)


def test_kkt_case_1_violation():
    y = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    alpha = np.array([[0.5], [0.5], [0.0], [0.0]])
    # Example 2 (y = +1, alpha = 0) may increase y alpha, so it needs f >= gamma = 0.
    good = gradient_from_f([0.0, 0.0, 0.4, -0.4], y)
    assert_kkt(alpha, good, y, 1.0, tol=1e-12)
    bad = gradient_from_f([0.0, 0.0, -0.4, -0.4], y)
    with pytest.raises(AssertionError, match=r"example 2 \(case 1 \(alpha = 0\)"):
        assert_kkt(alpha, bad, y, 1.0, bias=np.zeros(1), tol=1e-3)
    with pytest.raises(AssertionError, match=r"label 0"):
        assert_kkt(alpha, bad, y, 1.0, tol=1e-3)


def test_kkt_names_the_worst_label():
    y = np.hstack([Y1, Y1])
    alpha = np.hstack([ALPHA1, ALPHA1])
    gradient = np.hstack([gradient_from_f([0.3, 0.8, 0.3]), gradient_from_f([0.3, 0.8, 0.9])])
    with pytest.raises(AssertionError, match="label 1"):
        assert_kkt(alpha, gradient, y, 1.0, tol=1e-6)


def test_kkt_with_a_wrong_bias_fails():
    gradient = gradient_from_f([0.3, 0.8, 0.3])
    with pytest.raises(AssertionError, match=r"gamma = -b = -0.3"):
        assert_kkt(ALPHA1, gradient, Y1, 1.0, bias=np.array([0.3]), tol=1e-3)


def test_kkt_refuses_infeasible_points():
    gradient = gradient_from_f([0.3, 0.8, 0.3])
    with pytest.raises(AssertionError, match="infeasible: label 0 has sum_j alpha_j y_j"):
        assert_kkt(ALPHA1 + np.array([[0.1], [0.0], [0.0]]), gradient, Y1, 1.0, tol=1e-3)
    with pytest.raises(AssertionError, match=r"infeasible: label 0, example 1 .* outside its box"):
        assert_kkt(2.0 * ALPHA1, gradient, Y1, 1.0, tol=1e-3)
    with pytest.raises(AssertionError, match="gradient is not finite"):
        assert_kkt(ALPHA1, np.full((3, 1), np.nan), Y1, 1.0, tol=1e-3)


def test_kkt_labels_that_cannot_move_are_optimal():
    # One sign only: the equality constraint pins alpha to 0, whatever the gradient.
    y = np.ones((3, 1))
    assert_kkt(np.zeros((3, 1)), np.array([[-5.0], [3.0], [1.0]]), y, 1.0, tol=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: assert_kkt(ALPHA1, np.zeros((3, 2)), Y1, 1.0, tol=1e-3), "gradient has shape"),
        (lambda: assert_kkt(ALPHA1, np.zeros((3, 1)), None, 1.0, tol=1e-3), "y .* is required"),
        (lambda: assert_kkt(ALPHA1, np.zeros((3, 1)), 2 * Y1, 1.0, tol=1e-3), "signs"),
        (lambda: assert_kkt(ALPHA1, np.zeros((3, 1)), Y1, -1.0, tol=1e-3), "C must hold"),
        (lambda: assert_kkt(ALPHA1, np.zeros((3, 1)), Y1, 1.0, bias=np.zeros(2), tol=1e-3), "bias must have shape"),
    ],
)
def test_kkt_refuses_malformed_calls(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@given(kernel_dual_problems(n_samples=st.integers(2, 6), n_labels=st.integers(1, 3), tiny=1e-3, huge=1e3))
def test_kkt_holds_at_the_reference_solution_and_not_at_zero(problem):
    K, omega, Y, C = problem
    alpha, objective = mlrl_dual_matrices(K, omega, Y, C).solve()
    gradient = mlrl_dual_gradient(K, omega, Y, alpha)
    assert_kkt(alpha, gradient, Y, C, tol=1e-7 * max(1.0, float(np.abs(gradient).max())))
    # Every label holds both signs, so a pair of variables lowers the objective below h(0) = 0.
    assert objective < 0.0
    with pytest.raises(AssertionError, match=r"KKT violated at label \d+: F_low - F_up = 2"):
        assert_kkt(np.zeros_like(alpha), mlrl_dual_gradient(K, omega, Y, np.zeros_like(alpha)), Y, C, tol=1e-3)


# -- assert_kkt, box-only duals (CD family) ---------------------------------------------------------


def test_projected_gradient_condition():
    alpha = np.array([0.0, 0.5, 2.0, 1.0])
    C = np.array([1.0, 1.0, 2.0, np.inf])
    # At 0 a positive gradient is fine, free needs 0, at C a negative gradient is fine; C = inf is never reached.
    assert_kkt(alpha, np.array([3.0, 0.0, -4.0, 0.0]), None, C, tol=1e-12, equality=False)
    for index, value, case in [(0, -0.1, "case 1"), (1, 0.1, "case 2"), (2, 0.1, "case 3"), (3, -0.1, "case 2")]:
        gradient = np.zeros(4)
        gradient[index] = value
        with pytest.raises(AssertionError, match=rf"variable {index} \({case}.*projected gradient"):
            assert_kkt(alpha, gradient, None, C, tol=1e-3, equality=False)


def test_projected_gradient_names_label_and_example_in_the_matrix_layout():
    gradient = np.zeros((3, 2))
    gradient[2, 1] = 0.5
    with pytest.raises(AssertionError, match="label 1, example 2"):
        assert_kkt(np.full((3, 2), 0.5), gradient, None, 1.0, tol=1e-3, equality=False)


def test_tiny_and_huge_boxes_are_told_apart_per_variable():
    # alpha = C = 1e-6 sits at its bound even beside a bound of 1e6.
    alpha = np.array([1e-6, 0.0])
    C = np.array([1e-6, 1e6])
    assert_kkt(alpha, np.array([-1.0, 1.0]), None, C, tol=1e-9, equality=False)
    with pytest.raises(AssertionError, match="case 2"):
        assert_kkt(np.array([0.5e-6, 0.0]), np.array([-1.0, 1.0]), None, C, tol=1e-9, equality=False)


# -- assert_duality_gap ---------------------------------------------------------------------------


def certificate(primal, dual):
    return Certificate.from_objectives(primal, dual, kkt_violation=0.0, n_iter=1, time=0.0, converged=True, solver="t")


def traced(trace, dual):
    c = certificate(0.0, dual)
    return attrs.evolve(c, n_iter=len(trace), statistics={"dual_trace": list(trace)})


def test_dual_ascent_accepts_an_ascending_trace_and_catches_a_drop():
    assert_dual_ascent(traced([0.5, 0.9, 1.0], 1.0))
    assert_dual_ascent(traced([], 0.0))
    with pytest.raises(AssertionError, match="decreased at epoch 2"):
        assert_dual_ascent(traced([0.5, 0.9, 0.8], 0.8))
    with pytest.raises(AssertionError, match="not the certificate's"):
        assert_dual_ascent(traced([0.5, 0.9], 1.0))
    with pytest.raises(AssertionError, match="values for"):
        assert_dual_ascent(attrs.evolve(traced([0.5], 0.5), n_iter=3))


def test_duality_gap_bounds():
    assert_duality_gap(certificate(100.0, 100.0 - 1e-5), rtol=1e-6, atol=0.0)
    assert_duality_gap(certificate(1.0, 1.0 + 1e-10), rtol=1e-6, atol=1e-9)
    with pytest.raises(AssertionError, match="weak duality"):
        assert_duality_gap(certificate(1.0, 1.0 + 1e-8), rtol=1e-6, atol=1e-9)
    with pytest.raises(AssertionError, match="not optimal"):
        assert_duality_gap(certificate(100.0, 99.0), rtol=1e-3, atol=0.0)
    with pytest.warns(ConvergenceWarning, match="certifies nothing"):
        infinite = certificate(math.inf, 0.0)
    with pytest.raises(AssertionError, match="not finite"):
        assert_duality_gap(infinite)
    with pytest.raises(AssertionError, match="expected a Certificate"):
        assert_duality_gap((1.0, 1.0))


@given(st.floats(-1e6, 1e6), st.floats(-1e3, 1e3), st.floats(1e-9, 1e-2))
def test_check_duality_gap_is_assert_duality_gap_with_one_relative_tolerance(primal, gap, tol):
    c = certificate(primal, primal - gap)
    outcomes = []
    for check in (lambda: check_duality_gap(c, tol=tol),
                  lambda: assert_duality_gap(c, rtol=tol, atol=tol * max(1.0, abs(primal)))):
        try:
            check()
            outcomes.append(True)
        except AssertionError:
            outcomes.append(False)
    assert outcomes[0] == outcomes[1]


# -- assert_convex and its adapters ----------------------------------------------------------------


def test_convexity_is_checked_between_random_points_not_only_against_the_chord():
    # Below the chord of [a, b] everywhere, yet not convex: a bump in the middle of a V.
    a, b = np.array([-1.0]), np.array([1.0])

    def dented(v):
        t = float(v[0])
        return abs(t) + 0.5 * max(0.0, 0.2 - abs(t)) * 5

    with pytest.raises(AssertionError, match="not convex"):
        assert_convex(dented, a, b, n_points=41)
    assert_convex(lambda v: float(np.abs(v).sum()), a, b, n_points=41)
    assert check_convexity is assert_convex


def test_convexity_refuses_bad_calls():
    with pytest.raises(ValueError, match="at least 3"):
        assert_convex(lambda v: 0.0, np.zeros(1), np.ones(1), n_points=2)
    with pytest.raises(AssertionError, match="not finite"):
        assert_convex(lambda v: math.inf if v[0] == 0.0 else 0.0, np.zeros(1), np.ones(1))


@pytest.mark.parametrize("loss", [Hinge(), SquaredHinge(), Logistic()], ids=repr)
@given(data=st.data())
def test_stock_losses_are_convex(loss, data):
    n, n_labels = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    Y = data.draw(sign_matrices(n, n_labels))
    assert_convex_loss(loss, Y, data.draw(score_matrices(n, n_labels)), data.draw(score_matrices(n, n_labels)))


@given(data=st.data())
def test_stock_regularizers_are_convex(data):
    n_labels = data.draw(st.integers(1, 3))
    shape = (data.draw(st.integers(1, 4)), n_labels)
    W1, W2 = (data.draw(score_matrices(*shape)) for _ in range(2))
    for regularizer in (Frobenius(), NuclearNorm(), LabelCovariance(data.draw(spd_matrices(n_labels)))):
        assert_convex_regularizer(regularizer, W1, W2)


@attrs.frozen
class ClippedHinge(Loss):
    """min(1, hinge): the bounded 'ramp' loss, not convex."""

    def value(self, Y, T):
        return float(np.minimum(1.0, np.maximum(0.0, 1.0 - Y * T)).sum())

    def gradient(self, Y, T):
        return np.where((Y * T < 1.0) & (Y * T > 0.0), -Y, 0.0)


@attrs.frozen
class NegativeNorm(Regularizer):
    def value(self, W):
        return -float(np.linalg.norm(W))

    def gradient(self, W):
        return -W / max(np.linalg.norm(W), 1e-300)


def test_adapters_catch_nonconvex_components():
    Y = np.array([[1.0, -1.0]])
    with pytest.raises(AssertionError, match="not convex"):
        assert_convex_loss(ClippedHinge(), Y, np.array([[-3.0, 3.0]]), np.array([[3.0, -3.0]]))
    with pytest.raises(AssertionError, match="not convex"):
        assert_convex_regularizer(NegativeNorm(), -np.ones((2, 2)), np.ones((2, 2)))


# -- assert_matches_reference --------------------------------------------------------------------


def test_matches_reference():
    reference = np.array([[0.25, 0.0], [0.25, 1.0]])
    assert_matches_reference(reference + 1e-9, -2.0 - 1e-7, reference, -2.0, atol_alpha=1e-8)
    with pytest.raises(AssertionError, match="objective .* differs from the reference"):
        assert_matches_reference(reference, -2.0 + 1e-4, reference, -2.0, atol_alpha=1e-8)
    with pytest.raises(AssertionError, match=r"alpha differs from the reference at label 1, example 1"):
        assert_matches_reference(reference + np.array([[0, 0], [0, 1e-3]]), -2.0, reference, -2.0, atol_alpha=1e-6)
    with pytest.raises(AssertionError, match="alpha differs"):
        assert_matches_reference(np.full((2, 2), np.nan), -2.0, reference, -2.0, atol_alpha=1e-6)
    with pytest.raises(AssertionError, match="not finite"):
        assert_matches_reference(reference, math.nan, reference, -2.0, atol_alpha=None)
    # Objectives only: a non-unique minimiser is not compared.
    assert_matches_reference(np.zeros((2, 2)), -2.0, reference, -2.0, atol_alpha=None)
    with pytest.raises(ValueError, match="shape"):
        assert_matches_reference(np.zeros(3), -2.0, reference, -2.0, atol_alpha=1.0)
