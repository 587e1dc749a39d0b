"""check_solver passes two small numpy solvers and fails deliberately broken variants of them.

The solvers work on the label-wise kernel SVM duals (K, Y, C) with Y (n, L) signs:

* box only (no bias, the CD family): min_a sum_i 1/2 (a_i.y_i)^T K (a_i.y_i) - 1^T a_i,
  0 <= a <= C, solved by dual coordinate descent (Hsieh et al., 2008) over a seeded
  random permutation per epoch, with a Newton step on the free variables every
  NEWTON_EVERY epochs (see :func:`newton_on_the_free_set`);
* with the equality constraint sum_j a_j^i y_j^i = 0 (a bias per label, the SMO family
  with Omega~ = I): solved by SMO with the maximal violating pair of Appendix A.

Both certify with the primal hinge-loss objective at w_i = sum_j a_j^i y_j^i phi(x_j).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import strategies as st

from multilabel_core import Certificate
from multilabel_core.testing.checks import check_solver
from multilabel_core.testing.reference import mlrl_dual_gradient
from multilabel_core.testing.strategies import box_bounds, psd_kernels, sign_labels

EPS = 1e-8


def gradient(problem, alpha):
    K, Y, _ = problem
    return mlrl_dual_gradient(K, np.eye(Y.shape[1]), Y, alpha)


def upper(problem):
    return problem[2]


def signs(problem):
    return problem[1]


def certify(problem, alpha, bias, n_iter, converged, name):
    K, Y, C = problem
    B = alpha * Y
    norms = np.einsum("ji,jk,ki->", B, K, B)
    margins = Y * (K @ B + bias)
    primal = 0.5 * norms + float(np.sum(C * np.maximum(0.0, 1.0 - margins)))
    dual = float(alpha.sum()) - 0.5 * norms
    return Certificate.from_objectives(primal, dual, kkt_violation=0.0, n_iter=n_iter, time=0.0,
                                       converged=converged, solver=name)


#: Epochs between two Newton steps on the free variables of coordinate_descent.
NEWTON_EVERY = 10


def coordinate_descent(problem, *, random_state, warm_start=None, eps=EPS, max_epochs=100_000):
    K, Y, C = problem
    alpha = np.zeros_like(Y) if warm_start is None else np.array(warm_start, dtype=float)
    rng = np.random.default_rng(random_state)
    diagonal = np.diag(K)
    for epoch in range(max_epochs):
        g = gradient(problem, alpha)
        projected = np.where(alpha <= 0.0, np.minimum(g, 0.0), np.where(alpha >= C, np.maximum(g, 0.0), g))
        if np.abs(projected).max() <= eps:
            return alpha, certify(problem, alpha, 0.0, epoch, True, "cd")
        for j in rng.permutation(K.shape[0]):
            # Row j holds coordinate j of every label's (independent) dual.
            g_j = Y[j] * (K[j] @ (alpha * Y)) - 1.0
            if diagonal[j] > 0.0:
                target = alpha[j] - g_j / diagonal[j]
            else:  # a flat coordinate: the linear term decides which bound
                target = np.where(g_j < 0.0, C[j], np.where(g_j > 0.0, 0.0, alpha[j]))
            alpha[j] = np.clip(target, 0.0, C[j])
        if (epoch + 1) % NEWTON_EVERY == 0:
            newton_on_the_free_set(K, Y, C, alpha)
    return alpha, certify(problem, alpha, 0.0, max_epochs, False, "cd")


def newton_on_the_free_set(K, Y, C, alpha):
    """Minimise each label's dual over its free variables (0 < a < C), the others held, in place.

    Coordinate descent alone creeps along a valley of two (nearly) collinear points,
    phi(x_k) = c phi(x_j) with c != 1 (drawn by psd_kernels: rows of F equal up to a
    factor): along a_j + c a_k fixed the quadratic term is (nearly) constant and the
    linear one has slope c - 1, but each coordinate step is only |g_j| / K_jj long, so
    the projected gradient stalls at |c - 1| (1e-5 for c = 0.99999) for ~C / |c - 1|
    epochs, far beyond any epoch budget. With Q = diag(y) K diag(y) on the free set
    and its eigenpairs Q = V S V^T: an exact line search along the Newton direction in
    the range of Q (eigenvalues above rounding, Nocedal & Wright, Numerical Optimization,
    2006, eq. 3.30 on the face), then along -g projected on the null space, where the
    dual is linear, so that the step goes to the first bound it reaches. Each line
    search is exact for the quadratic and clipped to the box, so no step raises the dual
    objective, and once coordinate descent has found the face of the minimiser the
    Newton step lands on it.
    """
    for i in range(Y.shape[1]):
        free = np.flatnonzero((alpha[:, i] > 0.0) & (alpha[:, i] < C[:, i]))
        if free.size == 0:
            continue
        y = Y[free, i]
        Q = y[:, None] * K[np.ix_(free, free)] * y[None, :]
        eigenvalues, V = np.linalg.eigh(Q)
        in_range = eigenvalues > free.size * np.finfo(float).eps * max(eigenvalues.max(), 0.0)
        # Newton in the range (-V S^-1 V^T g), steepest descent in the null space (-V V^T g).
        for part, scale in ((in_range, eigenvalues[in_range]), (~in_range, 1.0)):
            g = Y[free, i] * (K[free] @ (alpha[:, i] * Y[:, i])) - 1.0
            direction = -V[:, part] @ ((V[:, part].T @ g) / scale)
            _exact_line_search(alpha[:, i], free, Q, g, direction, C[free, i])


def _exact_line_search(a, free, Q, g, d, upper):
    """a[free] += t d, t minimising 1/2 t^2 d^T Q d + t g^T d within 0 <= a <= upper."""
    slope, curvature = float(g @ d), float(d @ Q @ d)
    if not slope < 0.0:
        return
    x = a[free]
    with np.errstate(divide="ignore"):
        room = np.where(d > 0.0, (upper - x) / d, np.where(d < 0.0, -x / d, np.inf))
    blocking = int(np.argmin(room))
    if curvature > 0.0 and -slope / curvature < room[blocking]:
        a[free] = np.clip(x - slope / curvature * d, 0.0, upper)
    elif np.isfinite(room[blocking]):
        x = np.clip(x + room[blocking] * d, 0.0, upper)
        # The blocking variable lands on its bound exactly, not a rounding error inside it.
        x[blocking] = upper[blocking] if d[blocking] > 0.0 else 0.0
        a[free] = x


def smo(problem, *, random_state, warm_start=None, eps=EPS, max_steps=100_000):
    """Maximal violating pair SMO on y.alpha (Appendix A, eqs. 34-37, tau for a_jk <= 0)."""
    K, Y, C = problem
    alpha = np.zeros_like(Y) if warm_start is None else np.array(warm_start, dtype=float)
    for step in range(max_steps + 1):
        f = Y * gradient(problem, alpha)
        in_A = np.where(Y > 0, alpha < C, alpha > 0)
        in_B = np.where(Y > 0, alpha > 0, alpha < C)
        f_up = np.where(in_A, f, np.inf).min(axis=0)
        f_low = np.where(in_B, f, -np.inf).max(axis=0)
        label = int(np.argmax(f_low - f_up))
        if f_low[label] - f_up[label] <= eps:
            break
        if step == max_steps:
            return alpha, certify(problem, alpha, _bias(f, in_A, in_B), step, False, "smo")
        up = int(np.argmin(np.where(in_A[:, label], f[:, label], np.inf)))
        low = int(np.argmax(np.where(in_B[:, label], f[:, label], -np.inf)))
        tilde = alpha[:, label] * Y[:, label]
        lower_tilde, upper_tilde = np.where(Y[:, label] > 0, 0.0, -C[:, label]), np.where(Y[:, label] > 0, C[:, label], 0.0)
        room = min(upper_tilde[up] - tilde[up], tilde[low] - lower_tilde[low])
        curvature = max(K[up, up] + K[low, low] - 2.0 * K[up, low], 1e-12)
        t = min(room, (f_low[label] - f_up[label]) / curvature)
        tilde[up] += t
        tilde[low] -= t
        alpha[:, label] = np.clip(tilde * Y[:, label], 0.0, C[:, label])
    return alpha, certify(problem, alpha, _bias(f, in_A, in_B), step, True, "smo")


def _bias(f, in_A, in_B):
    """b = -gamma: the mean f of the free variables, else LIBSVM's midpoint of F_up and F_low."""
    free = in_A & in_B
    f_up = np.where(in_A, f, np.inf).min(axis=0)
    f_low = np.where(in_B, f, -np.inf).max(axis=0)
    midpoint = np.where(np.isfinite(f_up) & np.isfinite(f_low), (f_up + f_low) / 2.0, 0.0)
    mean_free = np.where(free, f, 0.0).sum(axis=0) / np.maximum(free.sum(axis=0), 1)
    return -np.where(free.any(axis=0), mean_free, midpoint)


@st.composite
def label_wise_problems(draw, both_signs=True):
    n = draw(st.integers(2, 6))
    n_labels = draw(st.integers(1, 3))
    K = draw(psd_kernels(n=n))
    Y = draw(sign_labels(n_samples=n, n_labels=n_labels, both_signs=both_signs))
    return K, Y, draw(box_bounds(shape=(n, n_labels), tiny=1e-2, huge=1e2))


K_FIXED = np.array([[2.0, 1.0, 0.0, 0.5], [1.0, 2.0, 0.5, 0.0], [0.0, 0.5, 1.0, 0.2], [0.5, 0.0, 0.2, 1.0]])
Y_FIXED = np.array([[1.0, -1.0], [1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0]])
FIXED = [(K_FIXED, Y_FIXED, np.full((4, 2), 1.0)), (4.0 * K_FIXED, Y_FIXED, np.full((4, 2), 10.0))]

BOX = {"gradient": gradient, "upper": upper, "equality": False, "kkt_tol": 1e-6, "gap_tol": 1e-5}
EQUALITY = {"gradient": gradient, "upper": upper, "signs": signs, "equality": True, "kkt_tol": 1e-6, "gap_tol": 1e-5}


# -- the solvers conform ------------------------------------------------------------------


def test_coordinate_descent_conforms():
    check_solver(coordinate_descent, label_wise_problems(both_signs=False), **BOX)


#: (Nearly) collinear points, on which coordinate descent alone stalled for its whole epoch budget
#: (the projected gradient stuck at 1e-5 and 3.9e-8, above EPS): phi(x_0) = 1.000005 phi(x_1); and
#: a draw of label_wise_problems with phi(x_2) = (phi(x_0), 1e-3), an eigenvalue 5e-7 of K against 17.
COLLINEAR = [
    (np.array([[2.00001], [2.0]]) @ np.array([[2.00001, 2.0]]), np.ones((2, 1)), np.ones((2, 1))),
    (
        np.array([[8.519227570709262, 0.0, 8.519227570709262], [0.0, 8.519227570709262, 0.0],
                  [8.519227570709262, 0.0, 8.519228570709261]]),
        np.ones((3, 1)),
        np.array([[1.0], [0.9821463807232391], [0.038711974919451136]]),
    ),
]


def test_coordinate_descent_conforms_on_collinear_points():
    check_solver(coordinate_descent, COLLINEAR, **BOX)


def test_smo_conforms():
    check_solver(smo, label_wise_problems(), **EQUALITY)


def test_a_list_of_problems_is_checked_too():
    check_solver(smo, FIXED, **EQUALITY)


# -- broken solvers fail ------------------------------------------------------------------


def stops_early(problem, **options):
    return coordinate_descent(problem, **options, eps=0.5)


def certifies_another_point(problem, **options):
    alpha, c = coordinate_descent(problem, **options)
    return 0.9 * alpha, c


class Unseeded:
    """Draws its permutation from a shared stream, ignoring random_state."""

    stream = np.random.default_rng(12345)

    def __call__(self, problem, *, random_state, warm_start=None):
        return coordinate_descent(problem, random_state=self.stream, warm_start=warm_start)


def ignores_warm_start(problem, *, random_state, warm_start=None):
    return coordinate_descent(problem, random_state=random_state)


def halves_the_norm_in_the_dual(problem, **options):
    alpha, c = coordinate_descent(problem, **options)
    K, Y, _ = problem
    norms = np.einsum("ji,jk,ki->", alpha * Y, K, alpha * Y)
    return alpha, Certificate.from_objectives(c.primal, c.dual + 0.25 * norms, kkt_violation=0.0, n_iter=c.n_iter,
                                              time=0.0, converged=True, solver="broken")


def never_converges(problem, **options):
    alpha, c = smo(problem, **options)
    return alpha, Certificate(c.primal, c.dual, c.gap, c.kkt_violation, c.n_iter, c.time, False, "broken")


def forgets_the_equality_constraint(problem, **options):
    return coordinate_descent(problem, **options)


def returns_nan_time(problem, **options):
    alpha, c = smo(problem, **options)
    return alpha, Certificate(c.primal, c.dual, c.gap, c.kkt_violation, c.n_iter, float("nan"), True, "broken")


@pytest.mark.parametrize(
    "solve, settings, message",
    [
        (stops_early, BOX, "not optimal"),
        (certifies_another_point, BOX, "KKT violated"),
        (Unseeded(), BOX, "not deterministic"),
        (ignores_warm_start, BOX, "warm started at the optimum took"),
        (halves_the_norm_in_the_dual, BOX, "weak duality"),
        (never_converges, EQUALITY, "did not converge"),
        (forgets_the_equality_constraint, EQUALITY, "infeasible: label"),
        (returns_nan_time, EQUALITY, "time=nan"),
    ],
    ids=lambda value: getattr(value, "__name__", type(value).__name__) if callable(value) else None,
)
def test_broken_solvers_fail_the_conformance_check(solve, settings, message):
    with pytest.raises(AssertionError, match=message):
        check_solver(solve, FIXED, **settings)


def test_a_broken_solver_fails_under_hypothesis_too():
    with pytest.raises(AssertionError, match="warm started at the optimum took"):
        check_solver(ignores_warm_start, label_wise_problems(both_signs=False), **BOX)


class NeverConverges:
    """SMO whose certificates all say converged=False; counts its solves."""

    def __init__(self):
        self.calls = 0

    def __call__(self, problem, **options):
        self.calls += 1
        alpha, c = smo(problem, **options)
        return alpha, Certificate(c.primal, c.dual, c.gap, c.kkt_violation, c.n_iter, c.time, False, "stuck")


def test_an_unconverged_solve_fails_fast_with_its_certificate_under_hypothesis():
    solve = NeverConverges()
    with pytest.raises(AssertionError, match=r"did not converge.*solver stuck.*converged=False.*n_iter=.*gap=") as error:
        check_solver(solve, label_wise_problems(), **EQUALITY)
    # One solve, not one per drawn (and shrunk) example: each would run to max_iter.
    assert solve.calls == 1
    assert re.search(r"on the problem \(ndarray \(\d+, \d+\), ndarray", str(error.value))


def test_an_unconverged_solve_stops_a_list_of_problems_at_once():
    solve = NeverConverges()
    with pytest.raises(AssertionError, match="did not converge"):
        check_solver(solve, FIXED, **EQUALITY)
    assert solve.calls == 1


#: Two copies of one point with opposite signs: alpha moved by the same amount on both leaves
#: w unchanged (so the primal) but raises sum alpha (so the dual).
DUPLICATE = [(np.ones((2, 2)), np.array([[1.0], [-1.0]]), np.ones((2, 1)))]


def overshoots_the_box(problem, **options):
    """Steps past the upper bound C on every variable; its certificate is evaluated there (a negative gap)."""
    alpha, c = coordinate_descent(problem, **options)
    alpha = alpha + 0.5 * problem[2]
    return alpha, certify(problem, alpha, 0.0, c.n_iter, True, "broken")


def test_an_infeasible_alpha_is_named_infeasible_even_when_its_gap_is_negative():
    alpha, certificate = overshoots_the_box(DUPLICATE[0], random_state=0)
    assert certificate.gap < 0.0
    with pytest.raises(AssertionError, match=r"infeasible: label 0, example \d has alpha = 1.5 outside its box"):
        check_solver(overshoots_the_box, DUPLICATE, **BOX)


def test_check_solver_needs_signs_for_the_equality_constraint():
    with pytest.raises(ValueError, match="signs"):
        check_solver(smo, FIXED, gradient=gradient, upper=upper)
