"""Reference solutions of small dense quadratic programs, to test solvers against.

The problem is the convex QP

    min_x  1/2 x^T Q x + p^T x   s.t.  lower <= x <= upper,  A_eq x = b_eq        (QP)

with Q symmetric positive semi-definite.  :func:`solve_box_qp_reference` solves it by the
primal active-set method for convex QPs (Nocedal & Wright, *Numerical Optimization*,
2nd ed., 2006, Algorithm 16.3), whose working set here is the set of variables held at a
bound; the equality constraints are always in it.  The method is exact up to round-off
(it ends on the face that holds the minimiser, where the minimiser solves a linear
system), and the returned point is verified independently of how it was found: the KKT
residual, computed with multipliers of the right signs by non-negative least squares, must
be below ``tol`` or the solve raises :class:`ReferenceSolveError`.

:func:`mlrl_dual_matrices` writes the dual of the SMO family (MLRL, Zhang & Yeung, eq. 10)
as an explicit (QP).  It forms the nm x nm matrix, so it is ONLY for tiny reference
problems (at most :data:`MAX_REFERENCE_VARIABLES` variables): solvers never form it.
"""

from __future__ import annotations

import attrs
import numpy as np
import scipy.linalg
from scipy.optimize import linprog, nnls

from ..validation import check_symmetric
from .rounding import SECOND_ORDER_SLACK, U, gamma

__all__ = [
    "MAX_REFERENCE_VARIABLES",
    "BoxQP",
    "every_subset",
    "QPSolution",
    "ReferenceSolveError",
    "kkt_residual",
    "linear_svm_primal",
    "mlrl_dual_gradient",
    "mlrl_dual_matrices",
    "mlrl_dual_objective",
    "ranking_problem",
    "solve_box_qp_reference",
    "spectral_projected_gradient",
    "strongly_convex_distance",
]

#: Largest number of variables :func:`mlrl_dual_matrices` accepts (the QP is dense).
MAX_REFERENCE_VARIABLES = 400


class ReferenceSolveError(RuntimeError):
    """The reference solve did not reach a verified optimum (degenerate cycling or round-off)."""


@attrs.frozen
class QPSolution:
    """A verified minimiser of (QP).

    Parameters
    ----------
    x : ndarray (N,)
        The minimiser.
    objective : float
        ``1/2 x^T Q x + p^T x``.
    kkt_residual : float
        Largest scaled violation of the KKT conditions at ``x`` (stationarity with
        multipliers of the right signs, box and equality feasibility).
    n_iter : int
        Active-set iterations.
    """

    x: np.ndarray
    objective: float
    kkt_residual: float
    n_iter: int


# -- the active-set method --------------------------------------------------------------------


def solve_box_qp_reference(Q, p, lower, upper, A_eq=None, b_eq=None, *, tol: float = 1e-9,
                           max_iter: int | None = None) -> QPSolution:
    """Solve the convex QP ``min 1/2 x^T Q x + p^T x`` s.t. box and optional equalities.

    Parameters
    ----------
    Q : ndarray (N, N)
        Symmetric positive semi-definite.
    p : ndarray (N,)
    lower, upper : float or ndarray (N,)
        Bounds, ``-inf`` / ``inf`` allowed, ``lower <= upper``.
    A_eq : ndarray (M, N), optional
    b_eq : ndarray (M,), optional (zeros by default)
    tol : float, default 1e-9
        Accepted scaled KKT residual of the returned point.
    max_iter : int, optional
        Largest number of active-set iterations (default ``50 N + 100``).

    Returns
    -------
    QPSolution

    Raises
    ------
    ValueError
        Malformed inputs, a Q that is not PSD, infeasible constraints or an unbounded
        problem.
    ReferenceSolveError
        When the KKT residual of the final point exceeds ``tol``.

    Examples
    --------
    >>> import numpy as np
    >>> solution = solve_box_qp_reference(np.eye(2), np.array([-2.0, 1.0]), 0.0, 1.0)
    >>> solution.x.tolist(), solution.objective
    ([1.0, 0.0], -1.5)
    """
    Q, p, lower, upper, A_eq, b_eq = _validated(Q, p, lower, upper, A_eq, b_eq)
    n = p.size
    max_iter = 50 * n + 100 if max_iter is None else max_iter
    x = _feasible_start(lower, upper, A_eq, b_eq)
    # state: -1 held at its lower bound, +1 at its upper bound, 0 free (the working set is state != 0).
    state = np.where(x <= lower, -1, np.where(x >= upper, 1, 0))
    q_scale = float(np.abs(Q).max(initial=0.0))
    for n_iter in range(1, max_iter + 1):
        gradient = Q @ x + p
        small = 1e-3 * tol * _gradient_scale(Q, p, x)
        direction, unbounded = _face_step(Q, gradient, A_eq, state == 0, q_scale, small)
        if direction is None:
            released = _wrong_sign_multiplier(gradient, A_eq, state, lower, upper, small)
            if released is None:
                return _verified(Q, p, lower, upper, A_eq, b_eq, x, tol, n_iter)
            state[released] = 0
            continue
        x, state = _move(x, state, direction, lower, upper, unbounded)
    raise ReferenceSolveError(f"no optimum after {max_iter} active-set iterations (degenerate cycling?)")


def _validated(Q, p, lower, upper, A_eq, b_eq):
    p = np.asarray(p, dtype=np.float64)
    n = p.size
    if p.ndim != 1:
        raise ValueError(f"p must be a vector, got shape {p.shape}")
    Q = np.asarray(Q, dtype=np.float64)
    if Q.shape != (n, n):
        raise ValueError(f"Q must have shape ({n}, {n}), got {Q.shape}")
    if not (np.all(np.isfinite(Q)) and np.all(np.isfinite(p))):
        raise ValueError("Q and p must be finite")
    # Only Q's symmetric part enters 1/2 x^T Q x, so symmetrising changes no problem.
    if n:
        Q = check_symmetric(Q, "Q")
    if n and np.linalg.eigvalsh(Q).min() < -1e-10 * max(np.abs(Q).max(), 1e-300) * n:
        raise ValueError("Q is not positive semi-definite: the QP is not convex")
    lower = np.broadcast_to(np.asarray(lower, dtype=np.float64), (n,)).copy()
    upper = np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,)).copy()
    if np.isnan(lower).any() or np.isnan(upper).any() or (lower > upper).any():
        raise ValueError("the bounds must satisfy lower <= upper (no NaN)")
    if A_eq is None:
        A_eq = np.zeros((0, n))
    A_eq = np.atleast_2d(np.asarray(A_eq, dtype=np.float64))
    if A_eq.shape[1] != n:
        raise ValueError(f"A_eq must have {n} columns, got shape {A_eq.shape}")
    b_eq = np.zeros(A_eq.shape[0]) if b_eq is None else np.asarray(b_eq, dtype=np.float64).reshape(-1)
    if b_eq.shape != (A_eq.shape[0],):
        raise ValueError(f"b_eq must have {A_eq.shape[0]} entries, got shape {b_eq.shape}")
    if not (np.all(np.isfinite(A_eq)) and np.all(np.isfinite(b_eq))):
        raise ValueError("A_eq and b_eq must be finite")
    return Q, p, lower, upper, A_eq, b_eq


def _feasible_start(lower, upper, A_eq, b_eq) -> np.ndarray:
    """The point of the box nearest 0 when it meets the equalities (the duals' case), else a vertex by LP."""
    x = np.clip(0.0, lower, upper)
    if np.array_equal(A_eq @ x, b_eq):
        return x
    bounds = [(None if np.isinf(lo) else lo, None if np.isinf(up) else up) for lo, up in zip(lower, upper)]
    result = linprog(np.zeros(x.size), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if result.status != 0:
        raise ValueError(f"the constraints of the QP are infeasible ({result.message})")
    return np.clip(result.x, lower, upper)


def _gradient_scale(Q, p, x) -> float:
    """Magnitude of the terms of the gradient Q x + p, against which residuals are judged."""
    return max(float(np.abs(p).max(initial=0.0)), float(np.abs(Q).max(initial=0.0) * np.abs(x).max(initial=0.0)),
               1e-300)


def _face_step(Q, gradient, A_eq, free, q_scale, small):
    """The step to the minimiser of the QP on the current face (working set held fixed).

    The face is x + Z z, Z a basis of the null space of the equality rows restricted to
    the free variables.  On it the QP is 1/2 z^T H z + r^T z with H = Z^T Q Z (PSD) and
    r = Z^T gradient.  Returns (None, False) when x already minimises it; (Newton step,
    False) when r lies in the range of H; otherwise (a descent ray of zero curvature,
    True), along which the QP decreases until a bound blocks.
    """
    index = np.flatnonzero(free)
    if index.size == 0:
        return None, False
    Z = scipy.linalg.null_space(A_eq[:, index]) if A_eq.shape[0] else np.eye(index.size)
    if Z.shape[1] == 0:
        return None, False
    r = Z.T @ gradient[index]
    if np.abs(r).max() <= small:
        return None, False
    w, V = np.linalg.eigh(Z.T @ Q[np.ix_(index, index)] @ Z)
    curved = w > 1e-12 * max(q_scale, 1e-300)
    flat_part = V[:, ~curved] @ (V[:, ~curved].T @ r)
    direction = np.zeros_like(gradient)
    if np.abs(flat_part).max(initial=0.0) > small:
        direction[index] = -Z @ flat_part
        return direction, True
    direction[index] = -Z @ (V[:, curved] @ ((V[:, curved].T @ r) / w[curved]))
    if np.abs(direction).max() == 0.0:
        return None, False
    return direction, False


def _move(x, state, direction, lower, upper, unbounded):
    """Step along ``direction`` until the first bound blocks (ratio test), at most a full step."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(direction > 0, (upper - x) / direction, np.where(direction < 0, (lower - x) / direction, np.inf))
    room = np.where(state == 0, np.maximum(room, 0.0), np.inf)
    blocking = int(np.argmin(room))
    length = room[blocking] if unbounded else min(1.0, room[blocking])
    if not np.isfinite(length):
        raise ValueError("the QP is unbounded below: a direction of zero curvature meets no bound")
    x = x + length * direction
    if length == room[blocking]:
        # Snap exactly onto the bound so that the working set describes x.
        x[blocking] = upper[blocking] if direction[blocking] > 0 else lower[blocking]
        state = state.copy()
        state[blocking] = 1 if direction[blocking] > 0 else -1
    return np.clip(x, lower, upper), state


def _wrong_sign_multiplier(gradient, A_eq, state, lower, upper, small):
    """At a minimiser on the face: the held variable whose bound multiplier has the wrong sign, or None.

    Stationarity gradient + A_eq^T nu = mu with mu_j >= 0 at a lower bound, <= 0 at an
    upper bound, and 0 for the free variables (which fixes nu by least squares).
    Releasing the most wrong-signed variable decreases the objective (N&W, Thm 16.5).
    """
    free = state == 0
    nu = np.linalg.lstsq(A_eq[:, free].T, -gradient[free], rcond=None)[0] if A_eq.shape[0] else np.zeros(0)
    mu = gradient + A_eq.T @ nu
    wrong = np.where(state < 0, -mu, np.where(state > 0, mu, -np.inf))
    wrong[lower == upper] = -np.inf  # a fixed variable has a multiplier of either sign
    j = int(np.argmax(wrong)) if wrong.size else 0
    return j if wrong.size and wrong[j] > small else None


# -- verification ---------------------------------------------------------------------------


def kkt_residual(Q, p, lower, upper, x, A_eq=None, b_eq=None, *, tol: float = 1e-9) -> float:
    """Compute the largest scaled violation of the KKT conditions of (QP) at ``x``.

    Stationarity uses the best multipliers of the right signs: with the variables within
    ``tol`` (relative to the box width) of a bound counted as on it, non-negative least
    squares finds nu (free sign, split into two non-negative parts), mu_lower >= 0 and
    mu_upper >= 0 minimising ||gradient + A_eq^T nu - mu_lower + mu_upper||.  The
    residual is scaled by the magnitude of the gradient's terms; the box and equality
    violations by the magnitude of x.

    Parameters
    ----------
    Q : ndarray of shape (N, N)
        The symmetric positive semi-definite matrix of (QP).
    p : ndarray of shape (N,)
        The linear term.
    lower : ndarray of shape (N,)
        The lower bounds.
    upper : ndarray of shape (N,)
        The upper bounds.
    x : ndarray of shape (N,)
        The point.
    A_eq : ndarray of shape (k, N) or None, default=None
        The equality constraints' matrix (None: none).
    b_eq : ndarray of shape (k,) or None, default=None
        Their right-hand side.
    tol : float, default=1e-9
        How close to a bound, relative to the box width, a variable counts as on it.

    Returns
    -------
    float
        The largest of the scaled stationarity, box and equality violations.
    """
    Q, p, lower, upper, A_eq, b_eq = _validated(Q, p, lower, upper, A_eq, b_eq)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != p.shape:
        raise ValueError(f"x must have shape {p.shape}, got {x.shape}")
    gradient = Q @ x + p
    width = np.where(np.isfinite(upper - lower), upper - lower, np.maximum(1.0, np.abs(x)))
    near_lower = x - lower <= tol * width
    near_upper = upper - x <= tol * width
    identity = np.eye(x.size)
    # gradient = -A^T nu_plus + A^T nu_minus + mu_lower - mu_upper, all parts >= 0.
    parts = np.hstack([-A_eq.T, A_eq.T, identity[:, near_lower], -identity[:, near_upper]])
    if parts.shape[1]:
        coefficients, _ = nnls(parts, gradient, maxiter=50 * parts.shape[1])
        stationarity = gradient - parts @ coefficients
    else:
        stationarity = gradient
    x_scale = max(float(np.abs(x).max(initial=0.0)), 1e-300)
    box = max(float(np.max(lower - x, initial=0.0)), float(np.max(x - upper, initial=0.0)))
    equality = float(np.abs(A_eq @ x - b_eq).max(initial=0.0))
    row_scale = max(float(np.abs(A_eq).max(initial=0.0)) * x_scale, float(np.abs(b_eq).max(initial=0.0)), 1e-300)
    return max(float(np.abs(stationarity).max(initial=0.0)) / _gradient_scale(Q, p, x), box / x_scale,
               equality / row_scale)


def _verified(Q, p, lower, upper, A_eq, b_eq, x, tol, n_iter) -> QPSolution:
    residual = kkt_residual(Q, p, lower, upper, x, A_eq, b_eq, tol=tol)
    if not residual <= tol:
        raise ReferenceSolveError(f"the reference solution is not accurate: scaled KKT residual {residual:.3g} > {tol:g}")
    return QPSolution(x=x, objective=float(0.5 * x @ Q @ x + p @ x), kkt_residual=residual, n_iter=n_iter)


# -- the dual of the SMO family --------------------------------------------------------------


@attrs.frozen
class BoxQP:
    """An explicit (QP) whose variables form an (n, L) matrix, stored label-major.

    The vector x is ``vec(alpha)`` stacked label after label, the paper's ordering
    alpha = (alpha_1^1, ..., alpha_n^1, ..., alpha_1^m, ..., alpha_n^m): x[i * n + j] is
    alpha[j, i] (example j, label i), i.e. ``x = alpha.ravel(order="F")``.  The methods
    take and return the (n, L) layout.

    Parameters
    ----------
    Q : ndarray of shape (N, N)
        The symmetric positive semi-definite matrix, N = n L.
    p : ndarray of shape (N,)
        The linear term.
    lower : ndarray of shape (N,)
        The lower bounds.
    upper : ndarray of shape (N,)
        The upper bounds.
    A_eq : ndarray of shape (k, N)
        The equality constraints' matrix.
    b_eq : ndarray of shape (k,)
        Their right-hand side.
    shape : tuple of int
        ``(n, L)``, the shape of alpha.
    """

    Q: np.ndarray
    p: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    A_eq: np.ndarray
    b_eq: np.ndarray
    shape: tuple

    def vector(self, alpha) -> np.ndarray:
        """Stack ``alpha`` into the label-major vector x.

        Parameters
        ----------
        alpha : array_like of shape (n, L)
            The variables in the problem's shape.

        Returns
        -------
        ndarray of shape (N,)
            ``alpha.ravel(order="F")``.

        Raises
        ------
        ValueError
            If ``alpha`` does not have the problem's shape.
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != self.shape:
            raise ValueError(f"alpha must have shape {self.shape}, got {alpha.shape}")
        return alpha.ravel(order="F")

    def matrix(self, x) -> np.ndarray:
        """Reshape the label-major vector x into the (n, L) matrix alpha.

        Parameters
        ----------
        x : array_like of shape (N,)
            The label-major vector.

        Returns
        -------
        ndarray of shape (n, L)
            alpha.
        """
        return np.asarray(x, dtype=np.float64).reshape(self.shape, order="F")

    def objective(self, alpha) -> float:
        """Evaluate ``1/2 x^T Q x + p^T x`` at ``alpha``.

        Parameters
        ----------
        alpha : array_like of shape (n, L)
            The variables in the problem's shape.

        Returns
        -------
        float
            The objective of (QP).
        """
        x = self.vector(alpha)
        return float(0.5 * x @ self.Q @ x + self.p @ x)

    def gradient(self, alpha) -> np.ndarray:
        """Evaluate the gradient ``Q x + p`` at ``alpha``.

        Parameters
        ----------
        alpha : array_like of shape (n, L)
            The variables in the problem's shape.

        Returns
        -------
        ndarray of shape (n, L)
            The gradient, in the problem's shape.
        """
        return self.matrix(self.Q @ self.vector(alpha) + self.p)

    def solve(self, *, tol: float = 1e-9) -> tuple[np.ndarray, float]:
        """Solve the problem by :func:`solve_box_qp_reference`.

        Parameters
        ----------
        tol : float, default=1e-9
            The KKT residual the verified minimiser must meet.

        Returns
        -------
        alpha : ndarray of shape (n, L)
            The reference minimiser.
        objective : float
            The minimum.

        Raises
        ------
        ReferenceSolveError
            If the solve does not reach a verified optimum.
        """
        solution = solve_box_qp_reference(self.Q, self.p, self.lower, self.upper, self.A_eq, self.b_eq, tol=tol)
        return self.matrix(solution.x), solution.objective


def _mlrl_inputs(K, omega_tilde, Y_signs):
    K = np.asarray(K, dtype=np.float64)
    omega_tilde = np.asarray(omega_tilde, dtype=np.float64)
    Y_signs = np.asarray(Y_signs, dtype=np.float64)
    if Y_signs.ndim != 2 or not np.isin(Y_signs, (-1.0, 1.0)).all():
        raise ValueError(f"Y_signs must be an (n, L) matrix of signs in {{-1, +1}}, got shape {Y_signs.shape}")
    n, n_labels = Y_signs.shape
    if K.shape != (n, n) or omega_tilde.shape != (n_labels, n_labels):
        raise ValueError(
            f"K must be ({n}, {n}) and omega_tilde ({n_labels}, {n_labels}) for Y_signs of shape {Y_signs.shape}, "
            f"got {K.shape} and {omega_tilde.shape}"
        )
    return K, omega_tilde, Y_signs


def mlrl_dual_gradient(K, omega_tilde, Y_signs, alpha) -> np.ndarray:
    """Compute the gradient of the MLRL dual objective at ``alpha``, without the nm x nm matrix.

    Zhang & Yeung, *Multi-Label Relationship Learning*, eq. 10.

    With B = alpha * Y_signs, (Omega~ (x) K) vec(B) = vec(K B Omega~) (Omega~ symmetric),
    so the gradient is ``Y_signs * (K B Omega~) - 1``; in Appendix A's notation
    f_j^i = y_j^i * gradient_j^i.

    Parameters
    ----------
    K : array_like of shape (n, n)
        The kernel matrix.
    omega_tilde : array_like of shape (L, L)
        The symmetric label coupling Omega~.
    Y_signs : array_like of shape (n, L)
        The signs y in {-1, +1}.
    alpha : array_like of shape (n, L)
        The dual point.

    Returns
    -------
    ndarray of shape (n, L)
        The gradient.

    Raises
    ------
    ValueError
        If ``Y_signs`` is not a sign matrix or the shapes disagree.
    """
    K, omega_tilde, Y_signs = _mlrl_inputs(K, omega_tilde, Y_signs)
    return Y_signs * (K @ (np.asarray(alpha, dtype=np.float64) * Y_signs) @ omega_tilde) - 1.0


def mlrl_dual_objective(K, omega_tilde, Y_signs, alpha) -> float:
    """Evaluate the MLRL dual objective ``h(alpha) = 1/2 (a.y)^T (Omega~ (x) K) (a.y) - 1^T a``.

    Zhang & Yeung, *Multi-Label Relationship Learning*, eq. 10.

    Parameters
    ----------
    K : array_like of shape (n, n)
        The kernel matrix.
    omega_tilde : array_like of shape (L, L)
        The symmetric label coupling Omega~.
    Y_signs : array_like of shape (n, L)
        The signs y in {-1, +1}.
    alpha : array_like of shape (n, L)
        The dual point.

    Returns
    -------
    float
        h(alpha).

    Raises
    ------
    ValueError
        If ``Y_signs`` is not a sign matrix or the shapes disagree.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    gradient = mlrl_dual_gradient(K, omega_tilde, Y_signs, alpha)
    # h = 1/2 a^T (Q a) - 1^T a and Q a = gradient + 1.
    return float(0.5 * np.sum(alpha * (gradient + 1.0)) - alpha.sum())


def mlrl_dual_matrices(K, omega_tilde, Y_signs, C) -> BoxQP:
    """The dual of the SMO family as an explicit QP -- ONLY for tiny reference problems.

    The dual (Zhang & Yeung, eq. 10; eq. 21 and BSVM with other K and Omega~)::

        min_a  1/2 (a.y)^T (Omega~ (x) K) (a.y) - 1^T a
        s.t.   sum_j a_j^i y_j^i = 0 for every label i,   0 <= a_j^i <= C_j^i

    with variables in the label-major order of :class:`BoxQP`, so that block (i, p) of
    Omega~ (x) K is Omega~_ip K.  It forms the (nL, nL) matrix Q = (Omega~ (x) K) .* (y y^T):
    at most :data:`MAX_REFERENCE_VARIABLES` variables.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix on the training points (PSD for a convex dual).
    omega_tilde : ndarray (L, L)
        The label coupling Omega~ (MLRL: Omega / lambda).
    Y_signs : ndarray (n, L)
        Signs y_j^i in {-1, +1}.
    C : float or ndarray (n, L)
        Upper bounds of the box (MLRL: 1/n).

    Returns
    -------
    BoxQP

    Examples
    --------
    >>> import numpy as np
    >>> qp = mlrl_dual_matrices(np.eye(2), np.eye(1), np.array([[1.0], [-1.0]]), 1.0)
    >>> alpha, objective = qp.solve()
    >>> alpha.ravel().tolist(), objective
    ([1.0, 1.0], -1.0)
    """
    K, omega_tilde, Y_signs = _mlrl_inputs(K, omega_tilde, Y_signs)
    n, n_labels = Y_signs.shape
    if n * n_labels > MAX_REFERENCE_VARIABLES:
        raise ValueError(
            f"{n * n_labels} dual variables: the explicit dual is for tiny reference problems "
            f"(at most {MAX_REFERENCE_VARIABLES})"
        )
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n, n_labels))
    if not (np.all(np.isfinite(C)) and np.all(C >= 0.0)):
        raise ValueError("C must be finite and >= 0")
    y = Y_signs.ravel(order="F")
    Q = np.kron(omega_tilde, K) * np.outer(y, y)
    # Row i of A_eq holds y^i in the block of label i: sum_j a_j^i y_j^i = 0.
    A_eq = np.kron(np.eye(n_labels), np.ones((1, n))) * y
    return BoxQP(
        Q=(Q + Q.T) / 2.0, p=-np.ones(n * n_labels), lower=np.zeros(n * n_labels), upper=C.ravel(order="F").copy(),
        A_eq=A_eq, b_eq=np.zeros(n_labels), shape=(n, n_labels),
    )


def spectral_projected_gradient(evaluate, x, project, *, converged, first_step, max_iter, max_backtracks=40):
    """Minimise a convex F over a convex set: a reference written apart from the solvers under test.

    Projected gradient with Barzilai-Borwein steps (Birgin, Martinez & Raydan, *Nonmonotone
    spectral projected gradient methods on convex sets*, SIAM J. Optim. 2000): from x,
    the candidate ``project(x - eta g)`` is accepted once F lies below the quadratic model
    ``F(x) + g^T d + ||d||^2 / (2 eta)`` (eta halved until then), then eta is the
    Barzilai-Borwein step ``d^T d / d^T (g_new - g)``.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(x, state) -> (F(x), gradient, state)``: ``state`` is the accepted point's
        (None at the start), for warm starts and running bounds.
    x : ndarray of shape (N,)
        The starting point, in the set.
    project : callable
        ``project(x)``, the Euclidean projection onto the set.
    converged : callable
        ``converged(x, value, state) -> bool`` ends the iterations when true.
    first_step : callable
        ``first_step(gradient)``, the first step size eta.
    max_iter : int
        The most iterations.
    max_backtracks : int, default=40
        The most halvings of eta for one candidate; a candidate no halving makes acceptable
        ends the iterations (F's precision reached).

    Returns
    -------
    x : ndarray of shape (N,)
        The last accepted point.
    value : float
        F(x).
    state : object
        The state ``evaluate`` returned at x.
    """
    value, g, state = evaluate(x, None)
    eta = first_step(g)
    for _ in range(max_iter):
        if converged(x, value, state):
            break
        for _ in range(max_backtracks):
            candidate = project(x - eta * g)
            move = candidate - x
            new_value, new_g, new_state = evaluate(candidate, state)
            if new_value <= value + g @ move + (move @ move) / (2.0 * eta):
                break
            eta /= 2.0
        else:
            break
        curvature = move @ (new_g - g)
        x, value, g, state = candidate, new_value, new_g, new_state
        eta = (move @ move) / curvature if curvature > 0.0 else 2.0 * eta
    return x, value, state


def linear_svm_primal(X, y, C, coef, intercept=0.0, *, loss="squared_hinge", bias_weight=0.0):
    """Evaluate LIBLINEAR's primal of one label at given weights, and how far rounding may have moved it.

    ``1/2 (||coef||^2 + bias_weight^2) + C sum_i loss(1 - y_i (x_i^T coef + intercept))``
    with the hinge ``max(0, m)`` or the squared hinge ``max(0, m)^2`` (Fan et al., LIBLINEAR,
    JMLR 2008, eq. 1; LIBLINEAR regularises the bias as ``bias_weight``, the weight of a
    constant feature: ``intercept = intercept_scaling * bias_weight``).  ``y`` in {-1, +1}.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows.
    y : ndarray of shape (n,)
        The signs in {-1, +1}.
    C : float
        The cost.
    coef : ndarray of shape (d,)
        The weights.
    intercept : float, default=0.0
        The bias added to every score.
    loss : {"hinge", "squared_hinge"}, default="squared_hinge"
        The loss.
    bias_weight : float, default=0.0
        The weight of LIBLINEAR's constant feature, regularised with ``coef``.

    Returns
    -------
    value : float
        The primal at these weights.
    rounding : float
        A first-order bound on ``|value - P|`` for the exact P at these weights (Higham,
        *Accuracy and Stability of Numerical Algorithms*, eq. 3.5): each score is within
        ``e_i = gamma_{d+1} (|x_i|.|coef| + |intercept|)``, the margin ``m_i = 1 - y_i t_i``
        within ``e_i + u |m_i|``, which moves the loss by as much (hinge) or
        ``2 max(0, m_i)`` times as much (squared hinge); the n + d + 4 sums and products then
        round relatively by ``gamma_{n+d+4}``.

    Raises
    ------
    ValueError
        If ``loss`` is not one of the two names.
    """
    if loss not in ("hinge", "squared_hinge"):
        raise ValueError(f"loss must be 'hinge' or 'squared_hinge', got {loss!r}")
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    y, coef = np.asarray(y, dtype=np.float64), np.asarray(coef, dtype=np.float64)
    n, d = X.shape
    margins = 1.0 - y * (X @ coef + intercept)
    hinge = np.maximum(0.0, margins)
    losses = hinge**2 if loss == "squared_hinge" else hinge
    value = 0.5 * (coef @ coef + bias_weight**2) + C * np.sum(losses)
    score_error = gamma(d + 1) * (np.abs(X) @ np.abs(coef) + abs(intercept)) + U * np.abs(margins)
    slope = 2.0 * hinge if loss == "squared_hinge" else np.ones(n)
    rounding = C * float(slope @ score_error) + gamma(n + d + 4) * value
    return float(value), SECOND_ORDER_SLACK * rounding


def strongly_convex_distance(suboptimality, mu: float = 1.0) -> np.ndarray:
    """Bound how far a point whose objective is within s of the minimum is from the minimiser.

    For a mu-strongly convex P with minimiser x*, ``P(x) - P(x*) >= mu/2 ||x - x*||^2``
    (Nesterov, *Introductory Lectures on Convex Optimization*, 2004, Theorem 2.1.8).  A
    duality gap is such an s, and so is any upper bound on P(x) minus a lower bound on
    the minimum; a negative s (bounds that rounding brought within each other) counts as 0.

    Parameters
    ----------
    suboptimality : float or array_like
        s, the objective's excess over the minimum (or an upper bound on it).
    mu : float, default=1.0
        The strong-convexity modulus, positive.

    Returns
    -------
    ndarray
        ``sqrt(2 max(s, 0) / mu)``, of ``suboptimality``'s shape.

    Raises
    ------
    ValueError
        If ``mu`` is not positive.
    """
    if mu <= 0:
        raise ValueError(f"mu must be positive, got {mu}")
    return np.sqrt(2.0 * np.maximum(np.asarray(suboptimality, dtype=np.float64), 0.0) / mu)


def every_subset(n_features: int, size: int) -> np.ndarray:
    """List every subset of ``size`` of ``n_features`` features as a boolean row mask, in lexicographic order.

    The brute-force reference for feature-selection relaxations (MLFS/CMLFS: Gu, Li & Han,
    *Correlated multi-label feature selection*, CIKM 2011, whose relaxation ranges over the convex
    hull of these masks): an optimum over all of them checks a cutting plane or a bundle on small d.

    Parameters
    ----------
    n_features : int
        d, the number of features.
    size : int
        The number of features chosen.

    Returns
    -------
    ndarray of shape (comb(n_features, size), n_features)
        One boolean mask per subset.
    """
    import itertools

    return np.array(
        [[j in chosen for j in range(n_features)] for chosen in itertools.combinations(range(n_features), size)],
        dtype=bool,
    ).reshape(-1, n_features)


def ranking_problem(n_features: int, *, mu: float = 0.0, seed: int = 0, n_samples: int = 60, n_labels: int = 3):
    """Build a small pairwise-ranking :class:`~multilabel_core.base.Problem` on synthetic correlated data.

    The linear kernel, C = 1, the pairwise ranking hinge, and rows from
    :func:`~multilabel_core.datasets.make_correlated_multilabel`.

    Parameters
    ----------
    n_features : int
        d, the number of features.
    mu : float, default=0.0
        0 gives independent labels (Frobenius regulariser); ``mu > 0`` the label-covariance
        regulariser ``FrobeniusLabelCovariance(mu)`` with a learned relation, as CMLFS uses.
    seed : int, default=0
        Seed of the data.
    n_samples : int, default=60
        n, the number of rows.
    n_labels : int, default=3
        L, the number of labels.

    Returns
    -------
    Problem
        The problem, with {-1, +1} targets.
    """
    from ..base import Problem
    from ..datasets import make_correlated_multilabel
    from ..kernels import LinearKernel
    from ..losses import PairwiseRankingHinge
    from ..regularizers import Frobenius, FrobeniusLabelCovariance
    from ..relations import Independent, LearnedCovariance
    from ..validation import to_signs

    data = make_correlated_multilabel(
        n_samples=n_samples, n_features=n_features, n_labels=n_labels, random_state=seed
    )
    regularizer, relation = (
        (Frobenius(), Independent()) if mu == 0.0 else (FrobeniusLabelCovariance(mu), LearnedCovariance())
    )
    return Problem(data.X, to_signs(data.Y), PairwiseRankingHinge(), regularizer, relation, LinearKernel(), C=1.0)
