"""SMO's bias and its warm starts from another problem's alpha (a previous point of a grid of C).

The bias is the midpoint of the biases that minimise (P) for the returned W (not a mean over
the variables that happen to be free at an approximate solution), so two solves of one problem
to a tolerance, e.g. a warm and a cold one, return biases as close as their scores; and a warm
start rescaled from another box is moved into the feasible set instead of being refused.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.solvers.smo import _feasible, smo_solve
from multilabel_core.testing.strategies import kernel_dual_problems


def _hinge_in_bias(f, y, C, b):
    """(P)'s loss term of one label as a function of its bias, at the scores s = f + y."""
    return float((C * np.maximum(0.0, 1.0 - y * (f + y + b))).sum())


@given(kernel_dual_problems(tiny=1e-3, huge=1e3), st.sampled_from([1e-1, 1e-3]))
def test_bias_minimises_the_primal_for_the_returned_weights(problem, tol):
    K, omega, Y, C = problem
    result = smo_solve(K, Y, omega, C, tol=tol)
    f = result.solution.model_state["scores"] - Y - result.solution.intercept
    for i in range(Y.shape[1]):
        # The minimum of a convex piecewise-linear function of b is reached at a kink b = -f_j.
        kinks = -f[:, i]
        values = np.array([_hinge_in_bias(f[:, i], Y[:, i], C[:, i], b) for b in kinks])
        best = values.min()
        slack = 1e-9 * (1.0 + C[:, i].sum() * (1.0 + np.abs(f[:, i]).max()))
        assert _hinge_in_bias(f[:, i], Y[:, i], C[:, i], result.solution.intercept[i]) <= best + slack
        minimisers = kinks[values <= best + slack]
        both = (C[Y[:, i] > 0, i].sum() > 0) and (C[Y[:, i] < 0, i].sum() > 0)
        if both:  # bounded interval of minimisers: the bias is inside it
            assert minimisers.min() - slack <= result.solution.intercept[i] <= minimisers.max() + slack


@given(kernel_dual_problems(tiny=1e-3, huge=1e3), st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1))
def test_feasible_moves_a_rescaled_start_into_the_box_and_onto_the_equalities(problem, ratio, seed):
    K, omega, Y, C = problem
    alpha = smo_solve(K, Y, omega, C, tol=1e-3).solution.dual
    # Rescaled to another box, with the rounding of a rescaling through another unit (up to a few ulps).
    noise = 1.0 + 4.0 * np.finfo(np.float64).eps * np.random.default_rng(seed).uniform(-1, 1, alpha.shape)
    new_C = C * ratio
    start = alpha * ratio * noise
    repaired = _feasible(start, Y, new_C)
    assert np.all(repaired >= 0.0) and np.all(repaired <= new_C)
    residual = np.abs((repaired * Y).sum(axis=0))
    assert np.all(residual <= 8.0 * Y.shape[0] * np.finfo(np.float64).eps * new_C.sum(axis=0))
    # A move of the size of the violation, not a new start; bounds stay bounds.
    assert np.all(np.abs(repaired - start) <= 1e-9 * new_C)
    at_top, at_zero = alpha == C, alpha == 0.0
    # Bounds stay bounds; where a label has no free variable to absorb the equality's rounding residual
    # (a drawn example: K all ones, every alpha at a bound) the bound ones move by that residual, a few ulps.
    free = ((alpha > 0.0) & (alpha < C)).any(axis=0)
    exact = np.broadcast_to(free, alpha.shape)
    assert np.all(repaired[at_top & exact] == new_C[at_top & exact]) and np.all(repaired[at_zero & exact] == 0.0)
    slack = 8.0 * Y.shape[0] * np.finfo(np.float64).eps * new_C
    assert np.all(np.abs(repaired - new_C)[at_top] <= slack[at_top]) and np.all(repaired[at_zero] <= slack[at_zero])
