"""The proximal bundle over the feature weights s: the stabilised master problem of MLFS / CMLFS.

Gu, Li & Han (CIKM 2011) relax problem (6) over binary subsets p (p^T 1 = m) to their convex
hull (eq. 18).  That hull is known in closed form: it is the capped simplex

    H = {s : 0 <= s_j <= 1, sum_j s_j = m}

(every point of H is a convex combination of m-subsets, :func:`decompose`), so the relaxed
problem is ``theta* = min_{s in H} F(s)`` with ``F(s) = max_alpha f(alpha, D, s)`` the optimum
of the dual (7) at the feature weights s, ``f(alpha, D, s) = sum alpha - 1/2 (s^T q(alpha) +
q_bias(alpha))``, ``q_j = (V R^-1 V^T)_jj``, V = X^T beta (eq. 8).  For any alpha in the dual
box, ``s -> f(alpha, D, s)`` is affine and lies below F (weak duality): a *cut*.  Its minimum
over H is eq. 32's most violated subset, and Kelley's method (Algorithm 2 read in s) minimises
the maximum of the cuts found so far.

This module holds the pieces of the proximal bundle method that replaces it (Kiwiel,
"Proximity control in bundle methods for convex nondifferentiable minimization", Math.
Programming 46, 1990; with an inexact oracle as in de Oliveira, Sagastizabal & Lemarechal,
"Convex proximal bundle methods in depth: a unified analysis for inexact oracles", Math.
Programming 148, 2014): the exact Euclidean projection onto H, the closed-form best s for
a given W (the upper bound), the decomposition of s into subsets, the cut model and the
master problem

    min_{s in H}  max_j (c_j + g_j^T s) + ||s - s_hat||^2 / (2 t),

solved through its dual over the simplex of the cuts' multipliers nu (module
:mod:`.cutting_plane` runs the method).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from .simplex import project_simplex

__all__ = [
    "MASTER_MAX_ITER",
    "MASTER_RTOL",
    "CutModel",
    "cheapest_weights",
    "decompose",
    "lp_lower_bound",
    "model_value",
    "project_capped_simplex",
    "proximal_master",
    "simplex_qp",
    "top_sum",
]

#: The master is solved until its own duality gap is below this fraction of the decrease it predicts.
MASTER_RTOL = 1e-2
#: Most Newton steps of one master solve.
MASTER_MAX_ITER = 100


def top_sum(q, m: int) -> float:
    """Return the sum of the m largest entries of q: ``max_{s in H} s^T q``.

    The maximum over the capped simplex H is attained at an m-subset, the most violated
    subset of eq. 32 of Gu, Li & Han, "Correlated Multi-Label Feature Selection" (CIKM 2011).

    Parameters
    ----------
    q : array-like of shape (n_features,)
        The per-feature scores.
    m : int
        The subset size, at least 1; every entry is summed when ``m >= n_features``.

    Returns
    -------
    float
        The sum of the ``min(m, n_features)`` largest entries of q.
    """
    q = np.asarray(q, dtype=np.float64)
    if m >= q.size:
        return float(q.sum())
    return float(np.partition(q, q.size - m)[q.size - m :].sum())


def project_capped_simplex(v, m: int) -> np.ndarray:
    """Project v onto the capped simplex H = {0 <= s <= 1, sum s = m} in the Euclidean norm.

    The KKT conditions give ``s = clip(v - theta, 0, 1)`` for the theta with ``phi(theta) =
    sum_j clip(v_j - theta, 0, 1) = m``; phi is piecewise linear and non-increasing with
    breakpoints v_j - 1 and v_j, so sorting the 2d breakpoints and accumulating the slopes
    locates theta's piece, on which it is one division (O(d log d), no bisection).

    Parameters
    ----------
    v : array-like of shape (n_features,)
        The point to project (finite).
    m : int
        The subset size, ``1 <= m``; H is the single point of all ones when
        ``m >= n_features``.

    Returns
    -------
    ndarray of shape (n_features,)
        ``clip(v - theta, 0, 1)``, the nearest point of H to v, exact up to one division.
    """
    v = np.asarray(v, dtype=np.float64)
    d = v.size
    if m >= d:
        return np.ones(d)
    points = np.concatenate([v - 1.0, v])
    change = np.concatenate([-np.ones(d), np.ones(d)])  # entering / leaving the linear part of clip
    order = np.argsort(points, kind="stable")
    points, change = points[order], change[order]
    slope = np.cumsum(change)  # phi's slope between points[i] and points[i + 1]
    phi = np.empty(2 * d)
    phi[0] = d  # left of every breakpoint each clip is 1
    np.cumsum(slope[:-1] * np.diff(points), out=phi[1:])
    phi[1:] += d
    i = int(np.searchsorted(-phi, -float(m), side="left"))  # first breakpoint with phi <= m
    i = min(max(i, 1), 2 * d - 1)
    theta = points[i] if slope[i - 1] == 0.0 else points[i - 1] + (m - phi[i - 1]) / slope[i - 1]
    return np.clip(v - theta, 0.0, 1.0)


def cheapest_weights(a, m: int) -> np.ndarray:
    """Return the feature weights s of H minimising ``sum_j a_j / s_j``: the bundle's upper bound.

    A term with a_j = 0 is 0 wherever s_j is.  For a fixed W the regulariser of the relaxed
    primal is ``1/2 sum_j a_j / s_j`` with ``a_j = w^j R (w^j)^T`` (docs/methods/ranking.md), so
    this s gives the best primal value of W over the whole hull -- the upper bound of the
    bundle.  Stationarity gives ``s_j = min(1, sqrt(a_j) / tau)`` (the variational form of the
    k-support norm: Argyriou, Foygel & Srebro, "Sparse prediction with the k-support norm", NIPS
    2012); the capped entries are the largest sqrt(a_j), and tau follows from sum s = m on the
    others.  With at most m features carrying weight, those get 1 and the rest of the mass goes
    to features with a_j = 0, where it costs nothing.

    Parameters
    ----------
    a : array-like of shape (n_features,)
        The per-feature costs ``w^j R (w^j)^T``, non-negative (negative round-off is read
        as 0).
    m : int
        The subset size, ``1 <= m``.

    Returns
    -------
    ndarray of shape (n_features,)
        The minimiser s, in H (entries in [0, 1] summing to m); all ones when
        ``m >= n_features``.
    """
    r = np.sqrt(np.maximum(np.asarray(a, dtype=np.float64), 0.0))
    d = r.size
    if m >= d:
        return np.ones(d)
    carrying = np.flatnonzero(r > 0.0)
    if carrying.size <= m:
        s = np.zeros(d)
        s[carrying] = 1.0
        idle = np.flatnonzero(r == 0.0)
        s[idle] = (m - carrying.size) / idle.size
        return s
    order = np.argsort(-r, kind="stable")
    ranked = r[order]
    tails = np.cumsum(ranked[::-1])[::-1]  # tails[k] = sum of ranked[k:]
    capped = 0
    for capped in range(m):  # the smallest number of capped entries that is consistent
        tau = tails[capped] / (m - capped)
        if ranked[capped] <= tau:
            break
    s = np.empty(d)
    s[order[:capped]] = 1.0
    s[order[capped:]] = ranked[capped:] / tau
    return np.minimum(s, 1.0)


def decompose(s, m: int, atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Write a point s of H as a convex combination ``P^T lambda`` of m-subsets.

    This is why H is the convex hull of the m-subsets (eq. 18 of Gu, Li & Han, "Correlated
    Multi-Label Feature Selection", CIKM 2011).  Systematic sampling: lay the s_j end to end on
    [0, m); for u in [0, 1) the points u, u + 1, ..., u + m - 1 fall in m distinct features'
    intervals (each is at most 1 long), a subset of exactly m features.  As u sweeps [0, 1) that
    subset changes only where u passes the fractional part of a cumulative sum, so the pieces
    between those breakpoints give at most d + 1 subsets, weighted by the pieces' lengths.
    Exact up to ``atol`` (pieces shorter than it are dropped and the weights renormalised).

    Parameters
    ----------
    s : array-like of shape (n_features,)
        A point of H: entries in [0, 1] (clipped there) summing to m (rescaled to m against
        round-off).
    m : int
        The subset size, ``1 <= m``.
    atol : float, default 1e-12
        Pieces of [0, 1) shorter than this are dropped.

    Returns
    -------
    subsets : ndarray of shape (T, n_features), bool
        P: each row marks exactly m features (``min(m, n_features)``), ``T <= n_features + 1``.
    weights : ndarray of shape (T,)
        lambda on the simplex, with ``P^T lambda = s`` up to ``atol``.
    """
    s = np.clip(np.asarray(s, dtype=np.float64), 0.0, 1.0)
    d = s.size
    if m >= d:
        return np.ones((1, d), dtype=bool), np.ones(1)
    ends = np.cumsum(s)
    ends *= m / ends[-1]  # sum s = m up to round-off
    cuts = np.unique(np.concatenate([[0.0, 1.0], np.mod(ends, 1.0)]))
    cuts = cuts[(cuts >= 0.0) & (cuts <= 1.0)]
    lengths = np.diff(cuts)
    keep = lengths > atol
    middles = ((cuts[:-1] + cuts[1:]) / 2.0)[keep]
    points = middles[:, None] + np.arange(m)[None, :]  # (T, m)
    owner = np.searchsorted(ends, points, side="right")
    subsets = np.zeros((middles.size, d), dtype=bool)
    np.put_along_axis(subsets, np.minimum(owner, d - 1), True, axis=1)
    weights = lengths[keep] / lengths[keep].sum()
    return subsets, weights


class CutModel:
    """The cuts ``f(alpha_j, D, s) = c_j + g_j^T s`` of the bundle, kept as (V_j, 1^T beta_j, sum alpha_j).

    Storing V_j = X^T beta_j rather than the cut's coefficients lets the cuts be re-evaluated
    at another label coupling R^-1 (CMLFS learns D between the iterations): at R^-1,
    ``g_j = -1/2 q_j`` with ``q_j = diag(V_j R^-1 V_j^T)`` and ``c_j = sum alpha_j -
    1/2 b_j R^-1 b_j^T``, b_j = 1^T beta_j (0 without the bias).

    Attributes
    ----------
    V : list of ndarray of shape (n_features, n_labels)
        ``X^T beta_j`` of each cut, in the order added.
    bias : list of ndarray of shape (n_labels,)
        ``1^T beta_j`` of each cut (zeros without the bias).
    alpha_sum : list of float
        ``sum alpha_j`` of each cut.
    """

    def __init__(self):
        self.V: list[np.ndarray] = []
        self.bias: list[np.ndarray] = []
        self.alpha_sum: list[float] = []
        self._cache = None  # (R^-1, c, Q) of the last coefficients: a fixed coupling adds one row per cut

    def __len__(self) -> int:
        return len(self.V)

    def add(self, V, bias, alpha_sum: float) -> None:
        """Add a cut: its feature term ``V``, its bias term and the sum of its dual variables.

        Parameters
        ----------
        V : array-like of shape (n_features, n_labels)
            ``X^T beta`` of the cut's dual point alpha (beta of eq. 8).
        bias : array-like of shape (n_labels,)
            ``1^T beta``, or zeros without the bias.
        alpha_sum : float
            ``sum alpha``, the linear part of the dual (7) at alpha.
        """
        self.V.append(np.asarray(V, dtype=np.float64))
        self.bias.append(np.asarray(bias, dtype=np.float64))
        self.alpha_sum.append(float(alpha_sum))

    def keep(self, indices) -> None:
        """Drop every cut but ``indices``, which become the cuts in that order.

        Parameters
        ----------
        indices : sequence of int
            Positions of the cuts to keep (in the current order).
        """
        self.V = [self.V[i] for i in indices]
        self.bias = [self.bias[i] for i in indices]
        self.alpha_sum = [self.alpha_sum[i] for i in indices]
        self._cache = None

    def coefficients(self, R_inv) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate the cuts' coefficients at the label coupling R^-1: cut j is ``c_j - 1/2 q_j^T s``.

        The rows of cuts already evaluated at the same R^-1 are reused.

        Parameters
        ----------
        R_inv : ndarray of shape (n_labels, n_labels)
            R^-1, the label coupling of the dual (7).

        Returns
        -------
        c : ndarray of shape (k,)
            The cuts' constants ``sum alpha_j - 1/2 b_j R^-1 b_j^T``.
        Q : ndarray of shape (k, n_features)
            The cuts' scores, row j ``diag(V_j R^-1 V_j^T)`` clipped at 0.
        """
        done = 0
        if self._cache is not None and np.array_equal(self._cache[0], R_inv):
            done = len(self._cache[1])
        rows = [np.maximum(np.sum((V @ R_inv) * V, axis=1), 0.0) for V in self.V[done:]]
        pairs = zip(self.alpha_sum[done:], self.bias[done:], strict=True)
        constants = [a - 0.5 * float(b @ R_inv @ b) for a, b in pairs]
        if done:
            c = np.concatenate([self._cache[1], constants])
            Q = np.vstack([self._cache[2], *rows]) if rows else self._cache[2]
        else:
            c, Q = np.array(constants), np.array(rows)
        self._cache = (np.array(R_inv, copy=True), c, Q)
        return c, Q

    def aggregate_bound(self, weights, R_inv, m: int) -> float:
        """Return ``min_{s in H} f(sum_j nu_j alpha_j, D, s)``: a certified lower bound of theta*.

        f is concave in alpha for fixed D and s, so the dual value at the combined alpha is at
        least the combined cut, and the combined alpha is in the box: by weak duality its
        minimum over H (eq. 32, a top-m sum) is below theta* at this D.  V and 1^T beta are
        linear in alpha, so the combination needs no new solve.

        Parameters
        ----------
        weights : array-like of shape (k,)
            nu, one weight per cut, on the simplex.
        R_inv : ndarray of shape (n_labels, n_labels)
            R^-1, the label coupling of the dual (7) at the current D.
        m : int
            The subset size.

        Returns
        -------
        float
            The dual (7) at the combined alpha minimised over H: ``sum_j nu_j sum alpha_j -
            1/2 (top_sum(q, m) + b R^-1 b^T)`` with q and b of the combined V and bias.
        """
        V = sum(w * V for w, V in zip(weights, self.V, strict=True))
        bias = sum(w * b for w, b in zip(weights, self.bias, strict=True))
        q = np.maximum(np.sum((V @ R_inv) * V, axis=1), 0.0)
        alpha_sum = float(np.dot(weights, self.alpha_sum))
        return alpha_sum - 0.5 * (top_sum(q, m) + float(bias @ R_inv @ bias))


def model_value(c, Q, s) -> float:
    """Evaluate the cut model ``max_j c_j - 1/2 q_j^T s`` at s.

    Parameters
    ----------
    c : ndarray of shape (k,)
        The cuts' constants (:meth:`CutModel.coefficients`).
    Q : ndarray of shape (k, n_features)
        The cuts' scores.
    s : ndarray of shape (n_features,)
        The feature weights.

    Returns
    -------
    float
        The largest cut at s.
    """
    return float(np.max(c - 0.5 * (Q @ s)))


def lp_lower_bound(c, Q, m: int) -> tuple[float, np.ndarray]:
    """Minimise the cut model over H by linear programming: Kelley's bound over every cut.

    Computes ``min_{s in H} max_j (c_j - 1/2 q_j^T s)`` with HiGHS's simplex.  An LP in (s, r):
    min r subject to ``r >= c_j - 1/2 q_j^T s``, s in H.  Returns the value and the cuts'
    multipliers nu (on the simplex: the LP dual).  The value is exact to the LP's tolerances; a
    caller that needs a certified bound recomputes it from nu (the combined cut minimised over H
    is a top-m sum).

    Parameters
    ----------
    c : ndarray of shape (k,)
        The cuts' constants.
    Q : ndarray of shape (k, n_features)
        The cuts' scores.
    m : int
        The subset size.

    Returns
    -------
    value : float
        The LP's optimal value.
    nu : ndarray of shape (k,)
        The cuts' multipliers from the LP dual, normalised onto the simplex (uniform when
        they are all 0).

    Raises
    ------
    RuntimeError
        When HiGHS does not report an optimal solution, with its message.
    """
    k, d = Q.shape
    objective = np.zeros(d + 1)
    objective[-1] = 1.0
    result = linprog(
        objective,
        A_ub=np.hstack([-0.5 * Q, -np.ones((k, 1))]),
        b_ub=-np.asarray(c),
        A_eq=np.concatenate([np.ones(d), [0.0]])[None, :],
        b_eq=[float(m)],
        bounds=[(0.0, 1.0)] * d + [(None, None)],
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"the LP of the cut model failed: {result.message}")
    nu = np.maximum(-np.asarray(result.ineqlin.marginals), 0.0)
    return float(result.fun), nu / nu.sum() if nu.sum() > 0.0 else np.full(k, 1.0 / k)


def simplex_qp(A, b, x0, *, max_iter: int = 500) -> np.ndarray:
    """Minimise the convex quadratic ``1/2 x^T A x - b^T x`` over the simplex by a primal active set.

    A is symmetric positive semi-definite.  The support S of x is kept; each step solves the
    equality-constrained problem on S (its KKT system ``[A_SS 1; 1^T 0] [x_S; lam] = [b_S; 1]``,
    least squares when A_SS is singular).  A solution with a negative entry is reached only up to
    the first entry that hits 0 (which leaves S); a non-negative one is optimal unless some i
    outside S has a negative reduced gradient ``(A x - b)_i + lam``, and the most negative joins
    S (Lawson & Hanson's NNLS scheme on the simplex; Wolfe's "Finding the nearest point in a
    polytope", Math. Programming 11, 1976, for A = M^T M).  Each step lowers the objective, so
    no support repeats: finite, and exact up to the linear solves.

    Parameters
    ----------
    A : ndarray of shape (k, k)
        Symmetric positive semi-definite.
    b : ndarray of shape (k,)
        The linear term.
    x0 : array-like of shape (k,)
        The start, on the simplex; its positive entries are the first support.
    max_iter : int, default 500
        Most active-set steps.

    Returns
    -------
    ndarray of shape (k,)
        The minimiser on the simplex (the point reached after ``max_iter`` steps if the
        active set has not settled by then).
    """
    k = b.size
    x = np.asarray(x0, dtype=np.float64).copy()
    support = list(np.flatnonzero(x > 0.0))
    for _ in range(max_iter):
        size = len(support)
        kkt = np.zeros((size + 1, size + 1))
        kkt[:size, :size] = A[np.ix_(support, support)]
        kkt[:size, size] = kkt[size, :size] = 1.0
        rhs = np.concatenate([b[support], [1.0]])
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        target, lam = solution[:size], solution[size]
        if target.min() < 0.0:
            current = x[support]
            falling = target < 0.0
            step = float(np.min(current[falling] / (current[falling] - target[falling])))
            x[support] = np.maximum(current + step * (target - current), 0.0)
            x /= x.sum()
            support = [i for i in support if x[i] > 0.0]
            continue
        x[:] = 0.0
        x[support] = target / target.sum()
        reduced = A @ x - b + lam
        outside = np.setdiff1d(np.arange(k), support)
        if outside.size == 0 or reduced[outside].min() >= -1e-12 * max(1.0, np.abs(b).max()):
            break
        support.append(int(outside[np.argmin(reduced[outside])]))
    return x


def proximal_master(c, Q, center, t: float, m: int, nu=None, *, rtol: float = MASTER_RTOL):
    """Solve the proximal master ``min_{s in H} max_j (c_j - 1/2 q_j^T s) + ||s - center||^2 / (2 t)``.

    It is solved through its dual over the simplex of multipliers nu (one per cut): for fixed nu the
    minimum over H is attained at ``s(nu) = proj_H(center + t/2 Q^T nu)`` (exact,
    :func:`project_capped_simplex`), and the dual function

        psi(nu) = nu^T (c - 1/2 Q s(nu)) + ||s(nu) - center||^2 / (2 t)

    is concave, with gradient ``c - 1/2 Q s(nu)`` (Danskin) and piecewise quadratic: where the
    set F of free features (0 < s_j < 1) is fixed, s(nu) is affine in nu and the Hessian is
    ``-t/4 Q_F (I - 1 1^T / |F|) Q_F^T``.  Newton's method on the pieces: each step maximises
    psi's quadratic model of the current piece over the simplex exactly (:func:`simplex_qp`)
    and searches along the move (Armijo), so it ends on the optimal piece in a few steps,
    where the model is exact.  It runs until the master's duality gap -- the primal at s(nu)
    minus psi(nu), both exact -- is at most ``rtol`` of the decrease it predicts from the
    centre.  The bundle's bounds do not depend on this solve: they are recomputed from the
    cuts.

    Parameters
    ----------
    c : array-like of shape (k,)
        The cuts' constants.
    Q : array-like of shape (k, n_features)
        The cuts' scores.
    center : ndarray of shape (n_features,)
        The stability centre s_hat, a point of H.
    t : float
        The proximal parameter, positive: a larger t lets s move further from the centre.
    m : int
        The subset size.
    nu : array-like of shape (k,), optional
        Multipliers to start from (the previous master's, warm); ignored unless of length k
        and summing to 1, when the start is the cut active at the centre.
    rtol : float, default :data:`MASTER_RTOL`
        The master's duality gap at which the Newton steps stop, relative to the decrease
        predicted from the centre.

    Returns
    -------
    s : ndarray of shape (n_features,)
        The candidate ``s(nu)``, in H.
    nu : ndarray of shape (k,)
        The multipliers reached, on the simplex.
    model : float
        The cut model at s, without the proximal term.
    gap : float
        The master's duality gap at s and nu (primal at s minus psi(nu)).
    iterations : int
        The Newton steps taken (at most :data:`MASTER_MAX_ITER`).
    """
    c, Q = np.asarray(c, dtype=np.float64), np.asarray(Q, dtype=np.float64)
    k = c.size
    if nu is None or len(nu) != k or not np.isclose(np.sum(nu), 1.0):
        nu = np.zeros(k)
        nu[int(np.argmax(c - 0.5 * (Q @ center)))] = 1.0  # the cut active at the centre
    nu = np.asarray(nu, dtype=np.float64)
    centre_value = model_value(c, Q, center)

    def evaluate(weights):
        s = project_capped_simplex(center + 0.5 * t * (weights @ Q), m)
        slopes = c - 0.5 * (Q @ s)
        return s, slopes, float(weights @ slopes) + float(np.sum((s - center) ** 2)) / (2.0 * t)

    s, slopes, psi = evaluate(nu)
    gap, iterations = np.inf, 0
    for iterations in range(1, MASTER_MAX_ITER + 1):
        primal = float(slopes.max()) + float(np.sum((s - center) ** 2)) / (2.0 * t)
        gap = primal - psi
        if gap <= rtol * max(centre_value - psi, 0.0) or gap <= 1e-13 * max(1.0, abs(primal)):
            break
        free = (s > 0.0) & (s < 1.0)
        QF = Q[:, free]
        curvature = 0.25 * t * (QF @ QF.T - np.outer(QF.sum(axis=1), QF.sum(axis=1)) / max(free.sum(), 1))
        curvature = (curvature + curvature.T) / 2.0
        target = simplex_qp(curvature, slopes + curvature @ nu, nu)
        move = target - nu
        slope = float(slopes @ move)
        if slope <= 0.0:
            break
        step = 1.0
        while True:
            trial = nu + step * move
            trial_s, trial_slopes, trial_psi = evaluate(trial)
            if trial_psi >= psi + 1e-4 * step * slope or step < 1e-10:
                break
            step /= 2.0
        if trial_psi < psi:
            break
        nu, s, slopes, psi = trial, trial_s, trial_slopes, trial_psi
    return s, nu, float(slopes.max()), float(gap), iterations
