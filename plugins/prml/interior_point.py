"""A primal-dual interior-point method for the margin problems of an embedded label model.

The problems (You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, problems (2), (6) and
(10); their duals (7) and (11)) share one shape.  The unknowns are a matrix M (k, p) -- the
margin of example j for label i is ``y_ji a_i^T M x_j`` with a fixed embedding A = [a_1 .. a_L]
(k, L) and x_j with its constant feature (p = dim(x_a)) -- and per-label slack variables V,
which are either SVM+'s correcting functions (a vector w~_i per label, the slack of (j, i)
being ``<w~_i, x~_ij>``) or the hinge's own slacks (one per pair).  Every pair (j, i) has two
linear constraints: the margin ``y_ji a_i^T M x_j + xi_ji >= 1`` and ``xi_ji >= 0``; the
objective is ``1/2 ||M||^2`` plus a quadratic-and-linear term in V.

:func:`mehrotra` is Mehrotra's predictor-corrector (J. Nocedal and S. Wright, *Numerical
Optimization*, 2nd ed., Algorithm 16.4) for this convex QP, ``min 1/2 z^T H z + c^T z`` subject
to ``G z >= h``.  Each Newton step solves ``(H + G^T Theta G) dz = r``, Theta = Lambda / S.
Because V's blocks couple only to their own label's rows, a problem class eliminates them
(their blocks are small or diagonal) and leaves the M system ``I + sum_i (a_i a_i^T) kron R_i``
with ``R_i`` (p, p) built from label i's rows: one dense Cholesky factorisation of ``k p``
unknowns per step, never anything of size n L squared.  A problem class supplies the
structure (:class:`MarginProblem`); the driver, the step rule and the stopping rule are
shared.

Stopping.  Every iterate is certified by the problem class: a primal value at a feasible point
and a dual value at multipliers made dual feasible, so ``gap = primal - dual`` bounds the
distance to the optimum whatever the Newton steps' accuracy.  The run stops when the relative
gap meets ``tol``, or when round-off keeps it from improving for ``STALLED`` steps (counted only
once the iterate's own complementarity ``s^T lambda`` meets ``tol`` relatively; the best iterate
is returned), or after ``max_iter`` steps.

Scale.  The Newton matrices hold weighted Grams ``X_a^T Theta X_a`` (:func:`weighted_gram`),
whose entries are of order ``n R^2 max Theta`` with ``R = max_j ||x_j||``.  Theta = lambda / s
starts at 1 and grows as the complementarity falls: a constraint active at the optimum keeps a
multiplier of order C (more for SVM+, whose dual has no upper bound) while its slack goes to zero.
:data:`MAX_FEATURE_SCALE` bounds R by 1e50, the bound on the features' scale that the baselines
also keep for LIBLINEAR and LIBSVM (``FEATURE_SCALE_RANGE``): ``R^2 <= 1e100`` leaves float64
(up to 1.8e308) some 1e208 for n, C and Theta, where X * 1e150 (``R^2`` of order 1e300) overflows
the first Gram by itself.  :func:`check_feature_scale` refuses a larger scale with a ValueError
saying so, before any work.  Inside the bound an extreme C can still overflow a Newton matrix
(PrML at C = 1e100 on rows of norm 1e50 did); :func:`robust_cholesky` refuses any non-finite
Newton matrix with a ValueError naming the scale and C, never passing it to LAPACK (whose
message, "array must not contain infs or NaNs", said neither).  There is no lower bound: rows of
tiny norm (down to subnormal numbers, or zero) only make ``X_a^T Theta X_a`` vanish against the
identity, and the problem is then solved by the bias.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve

from multilabel_core.parallel import raise_if_cancelled

__all__ = [
    "MAX_FEATURE_SCALE", "STALLED", "TO_BOUNDARY", "MarginProblem", "check_feature_scale", "feature_scale",
    "inequality_qp", "mehrotra", "robust_cholesky", "weighted_gram",
]

#: Fraction of the step to the boundary an interior-point step takes (keeps s, lambda > 0).
TO_BOUNDARY = 0.99

#: Newton steps without a better certified gap after which round-off is taken to have won.
STALLED = 10

#: The largest features' scale ``max_j ||x_j||`` the interior-point method computes with (module docstring).
MAX_FEATURE_SCALE = 1e50

_ROWS_PER_BLOCK = 4096
_RESCALE = "rescale the features (standardise them, e.g. --preprocess standardize on the command line)"


def feature_scale(X) -> float:
    """Return ``max_j ||x_j||_2`` over the rows of a dense or sparse X, without overflow or underflow.

    Each block of rows is divided by X's largest magnitude before squaring, so rows of 1e200
    or 1e-200 give their true norm rather than infinity or zero; the extra copy is one block.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The rows.

    Returns
    -------
    float
        The largest row norm (0 for an empty or all-zero X).
    """
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size == 0:
        return 0.0
    largest = float(np.max(np.abs(values)))
    if largest == 0.0 or not np.isfinite(largest):
        return largest
    worst = 0.0
    for start in range(0, X.shape[0], _ROWS_PER_BLOCK):
        block = X[start:start + _ROWS_PER_BLOCK]
        if sp.issparse(block):
            scaled = sp.csr_matrix(block, dtype=np.float64, copy=True)
            scaled.data /= largest  # not `scaled / largest`: scipy multiplies by 1 / largest, inf for a subnormal
            squares = np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel()
        else:
            scaled = np.asarray(block, dtype=np.float64) / largest
            squares = np.einsum("ij,ij->i", scaled, scaled)
        worst = max(worst, float(squares.max(initial=0.0)))
    return largest * float(np.sqrt(worst))


def check_feature_scale(X, solver: str) -> float:
    """Return ``max_j ||x_j||`` of X, refusing a scale above :data:`MAX_FEATURE_SCALE`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The rows a solver is about to use.
    solver : str
        The solver's name, for the error message.

    Returns
    -------
    float
        The largest row norm (:func:`feature_scale`).

    Raises
    ------
    ValueError
        When the scale is above :data:`MAX_FEATURE_SCALE`, naming ``solver`` and the scale: the
        interior-point Newton systems would overflow float64.
    """
    scale = feature_scale(X)
    if scale > MAX_FEATURE_SCALE:
        raise ValueError(
            f"the features' scale max_j ||x_j|| = {scale:.3g} is above {MAX_FEATURE_SCALE:g}, the largest {solver} "
            f"computes with: its interior-point Newton systems hold X^T Theta X, of order n max_j ||x_j||^2 times "
            f"weights Theta that grow as the run converges, which would overflow float64; {_RESCALE}"
        )
    return scale


class MarginProblem(Protocol):
    """The structure :func:`mehrotra` needs of a margin problem (module docstring).

    A protocol: a problem class (the SVM+ and hinge problems of
    :mod:`~multilabel_core_plugins.prml.svmplus`) implements these members; it is never
    instantiated itself.

    Parameters
    ----------
    *args, **kwargs
        None taken: a protocol has no constructor of its own.

    Attributes
    ----------
    Y : ndarray of shape (n, L)
        The signs; arrays of pairs are (n, L) like it.
    p : int
        The width of M's rows (``dim(x_a)``).
    scale : float
        The multipliers' scale (C): the start and the round-off floor of mu.
    """

    Y: np.ndarray
    p: int
    scale: float  # the multipliers' scale (C): the start and the round-off floor of mu

    def zeros_v(self) -> np.ndarray:
        """Return the slack variables' starting value (zeros of their shape).

        Returns
        -------
        ndarray
            Zeros shaped like the slack block V.
        """

    def constraints(self, A, M, V) -> tuple[np.ndarray, np.ndarray]:
        """Return the linear parts of ``G z``: the margins (slacks included) and the slacks.

        Parameters
        ----------
        A : ndarray of shape (k, L) or None
            The embedding.
        M : ndarray
            The weights block.
        V : ndarray
            The slack block.

        Returns
        -------
        tuple of ndarray
            The margins and the slack constraints, each (n, L).
        """

    def adjoint(self, A, la, lb) -> tuple[np.ndarray, np.ndarray]:
        """Return ``G^T lambda`` as its M and V blocks.

        Parameters
        ----------
        A : ndarray of shape (k, L) or None
            The embedding.
        la, lb : ndarray of shape (n, L)
            The multipliers of the margin and slack constraints.

        Returns
        -------
        tuple of ndarray
            The M block and the V block.
        """

    def dual_residual_v(self, V, adjoint_v) -> np.ndarray:
        """Return the V block of ``H z + c - G^T lambda``.

        Parameters
        ----------
        V : ndarray
            The slack block.
        adjoint_v : ndarray
            The V block of ``G^T lambda`` (:meth:`adjoint`).

        Returns
        -------
        ndarray
            The residual, shaped like V.
        """

    def factorise(self, A, ta, tb):
        """Return ``H + G^T Theta G`` factorised.

        Parameters
        ----------
        A : ndarray of shape (k, L) or None
            The embedding.
        ta, tb : ndarray of shape (n, L)
            Theta's blocks (``lambda / s``) of the margin and slack constraints.

        Returns
        -------
        object
            A factorisation whose ``.solve(rM, rV)`` returns ``(dM, dV)``.
        """

    def certify(self, A, M, V, la, lb, sa, sb) -> dict:
        """Return the certificate of an iterate.

        Parameters
        ----------
        A : ndarray of shape (k, L) or None
            The embedding.
        M, V : ndarray
            The iterate's weights and slack blocks.
        la, lb, sa, sb : ndarray of shape (n, L)
            Its multipliers and slacks of the margin and slack constraints.

        Returns
        -------
        dict
            ``objectives`` (primal, dual, gap, kkt_violation) and the certified multipliers
            ``alpha``, ``beta``.
        """


def mehrotra(problem: MarginProblem, A: np.ndarray, tol: float, max_iter: int) -> dict:
    """Run Mehrotra's predictor-corrector on ``problem`` with embedding A; return the best certified iterate.

    Nocedal and Wright, *Numerical Optimization*, Algorithm 16.4, on the primal-dual system of the
    margin problem (module docstring).

    Parameters
    ----------
    problem : MarginProblem
        The problem's structure.
    A : ndarray of shape (k, L)
        The label embedding (``[[1]]`` for one label's problem without one).
    tol : float
        Relative duality gap at which the run stops.
    max_iter : int
        Most Newton steps.

    Returns
    -------
    dict
        ``M``, ``V``, ``alpha``, ``beta`` (the certified multipliers of the margin and slack
        constraints), ``certificate`` (the problem's certificate of that iterate; None when no step
        was taken), ``n_iter`` (Newton steps) and ``mu`` (the last ``s^T lambda / (2 n L)``).
    """
    n, n_labels = problem.Y.shape
    M, V = np.zeros((A.shape[0], problem.p)), problem.zeros_v()
    # An interior start (s = lambda = max(1, C)) away from the boundary; the residuals r_p need not vanish there.
    start = max(1.0, problem.scale)
    sa, sb, la, lb = (np.full((n, n_labels), start) for _ in range(4))
    m = 2.0 * n * n_labels
    mu = float((np.sum(sa * la) + np.sum(sb * lb)) / m)
    best, best_gap, stalled, n_iter = None, np.inf, 0, 0
    for n_iter in range(1, max_iter + 1):
        # On a label thread, Ctrl-C reaches the main thread only: stop when it cancels the map.
        raise_if_cancelled()
        ga, gb = problem.constraints(A, M, V)
        rpa, rpb = ga - 1.0 - sa, gb - sb
        adj_M, adj_V = problem.adjoint(A, la, lb)
        rdM, rdV = M - adj_M, problem.dual_residual_v(V, adj_V)
        factor = problem.factorise(A, la / sa, lb / sb)

        def direction(rca, rcb):
            # Newton: (H + G^T Theta G) dz = -r_d - G^T S^{-1} (r_c + Lambda r_p), then ds and dlambda.
            gM, gV = problem.adjoint(A, (rca + la * rpa) / sa, (rcb + lb * rpb) / sb)
            dM, dV = factor.solve(-rdM - gM, -rdV - gV)
            lina, linb = problem.constraints(A, dM, dV)
            dsa, dsb = lina + rpa, linb + rpb
            return dM, dV, dsa, dsb, -(rca + la * dsa) / sa, -(rcb + lb * dsb) / sb

        affine = direction(sa * la, sb * lb)
        step = _boundary_step((sa, sb, la, lb), affine[2:])
        mu_affine = float(np.sum((sa + step * affine[2]) * (la + step * affine[4]))
                          + np.sum((sb + step * affine[3]) * (lb + step * affine[5]))) / m
        sigma = (mu_affine / mu) ** 3
        dM, dV, dsa, dsb, dla, dlb = direction(sa * la + affine[2] * affine[4] - sigma * mu,
                                               sb * lb + affine[3] * affine[5] - sigma * mu)
        step = min(1.0, TO_BOUNDARY * _boundary_step((sa, sb, la, lb), (dsa, dsb, dla, dlb)))
        M, V = M + step * dM, V + step * dV
        sa, sb, la, lb = sa + step * dsa, sb + step * dsb, la + step * dla, lb + step * dlb
        mu = float((np.sum(sa * la) + np.sum(sb * lb)) / m)
        if not np.isfinite(mu) or mu <= 0.0:
            break
        certificate = problem.certify(A, M, V, la, lb, sa, sb)
        objectives = certificate["objectives"]
        gap = objectives["gap"] / max(1.0, abs(objectives["primal"]))
        if gap < best_gap:
            best, best_gap, stalled = (M.copy(), V.copy(), certificate["alpha"], certificate["beta"], certificate), gap, 0
        elif m * mu <= tol * max(1.0, abs(objectives["primal"])):
            # Only an iterate whose own complementarity already meets tol can be held back by round-off.
            # Far from it, the certificate of an infeasible iterate (its bias repair) can stay above the
            # first one for many steps while the run converges (enron's first W-step: labels certified in
            # 16-17 steps had stopped at 11 on this rule when it counted every step).
            stalled += 1
        # Round-off bounds the attainable gap: stop when it no longer improves.
        if best_gap <= tol or stalled >= STALLED or mu <= np.finfo(float).eps * start:
            break
    M, V, alpha, beta, certificate = best if best is not None else (M, V, la, lb, None)
    return {"M": M, "V": V, "alpha": alpha, "beta": beta, "certificate": certificate, "n_iter": n_iter, "mu": mu}


def inequality_qp(G: np.ndarray, c: np.ndarray, h: np.ndarray, gamma: float, *, tol: float = 1e-9,
                  max_iter: int = 60) -> tuple[np.ndarray, int]:
    """Solve ``min gamma/2 ||v||^2 + c^T v  s.t.  G v >= h`` (G dense (m, q)) by Mehrotra's method.

    A small dense QP with a strongly convex objective, solved in the primal-dual form of
    :func:`mehrotra` (Nocedal and Wright, Algorithm 16.4): each step factorises the (q, q)
    matrix ``gamma I + G^T Theta G``.  The run stops when the complementarity ``s^T lambda / m``
    and the residuals are below ``tol`` relative to the data, or after ``max_iter`` steps.

    Parameters
    ----------
    G : ndarray of shape (m, q)
        The constraint matrix (m >= q or not).
    c : ndarray of shape (q,)
        The linear term.
    h : ndarray of shape (m,)
        The constraints' right-hand side.
    gamma : float
        The quadratic term's weight (> 0).
    tol : float, default 1e-9
        Relative stopping tolerance.
    max_iter : int, default 60
        Most Newton steps.

    Returns
    -------
    v : ndarray of shape (q,)
        The last iterate, which may violate the constraints by the primal residual: a caller that
        needs a feasible point repairs it (the SVM+ certificate raises the bias coordinate).
    n_iter : int
        Newton steps taken.
    """
    m, q = G.shape
    scale = max(1.0, float(np.max(np.abs(h), initial=0.0)), float(np.max(np.abs(c), initial=0.0)))
    v = np.zeros(q)
    s, lam = np.full(m, scale), np.ones(m)
    mu = float(s @ lam) / m
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        rd = gamma * v + c - G.T @ lam
        rp = G @ v - h - s
        if (mu <= tol * scale and np.max(np.abs(rp), initial=0.0) <= tol * scale
                and np.max(np.abs(rd), initial=0.0) <= tol * scale):
            break
        weights = lam / s
        matrix = (G.T * weights) @ G
        matrix[np.diag_indices(q)] += gamma
        factor = robust_cholesky(matrix)

        def direction(rc):
            # Newton on (gamma v + c - G^T lam, G v - h - s, s lam - target): ds = G dv + rp, dlam from s lam.
            dv = cho_solve(factor, -rd - G.T @ ((rc + lam * rp) / s))
            ds = G @ dv + rp
            return dv, ds, -(rc + lam * ds) / s

        dv, ds, dl = direction(s * lam)
        step = _boundary_step((s, lam), (ds, dl))
        sigma = (float((s + step * ds) @ (lam + step * dl)) / m / mu) ** 3
        dv, ds, dl = direction(s * lam + ds * dl - sigma * mu)
        step = min(1.0, TO_BOUNDARY * _boundary_step((s, lam), (ds, dl)))
        v, s, lam = v + step * dv, s + step * ds, lam + step * dl
        mu = float(s @ lam) / m
        if not np.isfinite(mu):
            break
    return v, n_iter


def _boundary_step(points, directions) -> float:
    """The largest t <= 1 with every point + t direction >= 0 (the fraction-to-boundary rule's limit)."""
    step = 1.0
    for point, direction in zip(points, directions):
        falling = direction < 0.0
        if np.any(falling):
            step = min(step, float(np.min(-point[falling] / direction[falling])))
    return step


def reduced_system(A: np.ndarray, parts: np.ndarray):
    """``I + sum_i (a_i a_i^T) kron R_i`` (k p, k p) from the R_i (L, p, p), factorised.

    One product ((k k), L) @ (L, (p p)) reordered, instead of L Kronecker products.
    """
    k, n_labels, p = A.shape[0], parts.shape[0], parts.shape[1]
    outer = (A[:, None, :] * A[None, :, :]).reshape(k * k, n_labels)
    reduced = (outer @ parts.reshape(n_labels, p * p)).reshape(k, k, p, p).transpose(0, 2, 1, 3)
    reduced = reduced.reshape(k * p, k * p)
    reduced[np.diag_indices(k * p)] += 1.0
    return robust_cholesky(reduced)


def solve_reduced(factor, rhs: np.ndarray) -> np.ndarray:
    """The M step from the factorised reduced system and its right-hand side (k, p)."""
    return cho_solve(factor, rhs.ravel()).reshape(rhs.shape)


def robust_cholesky(matrix: np.ndarray):
    """Return the Cholesky factor (scipy's ``cho_factor``) of a matrix positive definite in exact arithmetic.

    Near the end of an interior-point run Theta spans many orders of magnitude and a Schur
    complement can lose definiteness to cancellation; a shift of the diagonal by eps-relative
    amounts (grown until the factorisation succeeds) only makes the Newton direction inexact,
    which the certificate, computed independently, tolerates.

    Parameters
    ----------
    matrix : ndarray of shape (m, m)
        The symmetric matrix.

    Returns
    -------
    tuple
        ``cho_factor``'s ``(factor, lower)``, for ``cho_solve``.

    Raises
    ------
    ValueError
        When the matrix overflowed float64 (the features' scale and C).
    numpy.linalg.LinAlgError
        When no diagonal shift within the limit makes it factorisable.
    """
    if not np.all(np.isfinite(matrix)):
        # LAPACK would only say "array must not contain infs or NaNs", with the overflow warnings before it.
        raise ValueError(
            "the interior-point Newton matrix overflowed float64: the features' scale and C together are too large "
            f"(its entries are of order n max_j ||x_j||^2 times weights that grow with C); {_RESCALE} or use a "
            "smaller C"
        )
    shift = 0.0
    scale = float(np.max(np.abs(np.diag(matrix))))
    for _ in range(12):
        try:
            return cho_factor(matrix + shift * np.eye(matrix.shape[0]) if shift else matrix)
        except np.linalg.LinAlgError:
            shift = max(1e4 * np.finfo(float).eps * scale, 100.0 * shift)
    raise np.linalg.LinAlgError("the interior-point Newton matrix is not positive definite even after a diagonal shift")


def weighted_gram(X, bias: float, weights: np.ndarray) -> np.ndarray:
    """Return ``X_a^T diag(weights) X_a`` (X_a = [X, bias 1]), dense, for dense or sparse X.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows.
    bias : float
        The constant feature's value (0: none).
    weights : ndarray of shape (n,)
        The row weights.

    Returns
    -------
    ndarray of shape (dim(x_a), dim(x_a))
        The weighted Gram matrix.
    """
    weighted = X.multiply(weights[:, None]).tocsr() if sp.issparse(X) else X * weights[:, None]
    gram = X.T @ weighted
    gram = np.asarray(gram.toarray() if sp.issparse(gram) else gram)
    if bias > 0.0:
        column = bias * np.asarray(weighted.sum(axis=0)).reshape(-1)
        gram = np.block([[gram, column[:, None]], [column[None, :], np.array([[bias * bias * weights.sum()]])]])
    return gram
