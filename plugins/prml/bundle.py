"""A certified cutting-plane solver for the hinge D-step of LEML's alternation (a k dim(x_a) primal).

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, problem (2) with W fixed (section
3.2 without the privileged part) is one linear SVM without bias over the L n pairs::

    min_M  f(M) = 1/2 ||M||_F^2 + C sum_ji max(0, 1 - y_ji a_i^T M x_j)

with M (k, p) the dictionary D and its bias column, a_i the columns of W.  On dense,
standardised rows (corel16k001) its dual -- L n box-constrained coordinates whose Hessian is
``(W^T W) kron (X_a X_a^T)`` -- is badly conditioned, and dual coordinate descent stalls far from
its gap (benchmarks/RESULTS.md, "PrML's family on corel16k001").  The primal has only ``k p``
unknowns, which is too many for a dense interior-point Newton system (69,138 on corel16k001)
but few for a cutting-plane model of the hinge sum.

The method is the bundle method for regularised risk minimisation (Teo, Vishwanathan, Smola &
Le, *Bundle methods for regularized risk minimization*, JMLR 2010, Algorithm 1: the
regulariser kept exact, the risk ``R(M) = C sum hinge`` replaced by the maximum of its
linearisations) with the line search of OCAS (Franc & Sonnenburg, *Optimized cutting plane
algorithm for large-scale risk minimization*, JMLR 2009, section 3: the best point moves to the
minimum of f on the segment towards the model's minimiser, and the next cut is taken at 0.9 of
the best point plus 0.1 of the model's minimiser).  It is exact for the nonsmooth hinge: no
smoothing, no subgradient step sizes.

Certificate.  Each cut at a point with violated set S is the dual point alpha = C 1_S of the
SVM dual ``sum alpha - 1/2 ||sum_ji alpha_ji y_ji a_i x_j^T||^2`` (0 <= alpha <= C): the
linearisation is ``R(M) >= sum_ji alpha_ji (1 - y_ji a_i^T M x_j)``, valid for every alpha in
the box.  The model's minimiser is a convex combination beta (sum beta <= 1, the rest on the
zero cut R >= 0) of the cuts, so alpha = sum_s beta_s alpha_s lies in the box and the model's
value is the SVM dual at that alpha: a lower bound on min f.  The primal is f at the best point.
``gap = f(best) - dual(alpha)`` bounds the distance to the optimum whatever the accuracy of the
small master problem (any beta in the simplex gives a valid bound).

The master problem (the dual of the model: a quadratic over the simplex of the cuts plus the
zero cut, ``t`` unknowns) is solved by pairwise coordinate steps between the most violating
pair of cuts (the SMO rule of Platt, *Fast training of support vector machines using
sequential minimal optimization*, 1998, on a simplex), warm-started from the previous beta.
Cuts whose weight stayed 0 for :data:`PRUNE_AFTER` iterations are dropped (their bound is
not lost: it is the dual of the current beta).

Cost per iteration: one margin pass ``X_a M^T W`` (n p k + n k L flops), one adjoint of the
same size, and ``t k p`` for the new row of the cuts' Gram matrix; memory ``t k p`` floats for
the cuts and ``t n L`` bits for their violated sets.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from multilabel_core.base import Fit
from multilabel_core.certificate import Certificate
from multilabel_core.solvers.kit import augmented_adjoint as adjoint, augmented_product as product
from multilabel_core.solvers.kit import check_signs, warn_not_converged
from multilabel_core.validation import MAX_ITER_LIMIT, check_scalar, check_X

from .svmplus import embedded_solution

__all__ = ["CUT_AT", "PRUNE_AFTER", "TRACE_EVERY", "embedded_hinge_bundle"]

#: Where the next cut is taken between the best point (weight 1 - CUT_AT) and the model's
#: minimiser (Franc & Sonnenburg's mu = 0.1).
CUT_AT = 0.1

#: Cuts between two entries of the certificate's ``statistics["trace"]`` (cuts, primal, dual).
TRACE_EVERY = 50

#: Iterations a cut may keep weight 0 in the master problem before it is dropped.
PRUNE_AFTER = 30


def embedded_hinge_bundle(
    X, Y, C: float = 1.0, *, embedding, fit_intercept: bool = False, tol: float = 1e-3, max_iter: int = 1000,
    M0=None, alpha0=None, warn: bool = True,
) -> Fit:
    """Solve the embedded hinge problem ``min 1/2 ||M||^2 + C sum hinge(y_ji a_i^T M x_j)`` by OCAS cuts.

    The problem of :func:`~multilabel_core_plugins.prml.svmplus.embedded_hinge_cd` with an
    embedding (module docstring: You et al.'s problem (2) for a fixed W), by a bundle method
    with exact regulariser and line search (Teo et al., JMLR 2010, Algorithm 1; Franc &
    Sonnenburg, JMLR 2009, section 3).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The rows x_j.
    Y : ndarray of shape (n, L)
        The signs (-1, +1).
    C : float, default 1.0
        Weight of the summed hinge losses (> 0).
    embedding : ndarray of shape (k, L)
        W: column i is a_i.
    fit_intercept : bool, default False
        Append a constant 1 to every row (M's last column).
    tol : float, default 1e-3
        Relative duality gap ``gap / max(1, |primal|)`` at which the run stops, in (0, 1).
    max_iter : int, default 1000
        Most cuts (a ConvergenceWarning when the gap is not met by then).
    M0 : ndarray of shape (k, p), optional
        A starting point (the incoming D with its bias column): the first best point.
    alpha0 : ndarray of shape (n, L), optional
        A dual point (clipped to [0, C]) whose linearisation is the first cut beside M0's.
    warn : bool, default True
        Whether an unmet gap issues a ConvergenceWarning (False: the caller reports).

    Returns
    -------
    Fit
        ``solution.coef`` / ``intercept`` the scores' weights ``M^T W`` (as
        :func:`~multilabel_core_plugins.prml.svmplus.embedded_solution`), ``solution.dual`` the
        certified alpha (n, L), ``model_state["D"]``, ``["D_intercept"]``; the certificate's
        primal f(M), dual the SVM dual at alpha, ``n_iter`` the cuts, ``statistics`` with the
        number of cuts kept and the master problem's steps.

    Raises
    ------
    ValueError
        For a C, tol or max_iter outside its range, signs other than -1 and +1, or an embedding,
        start or dual start of the wrong shape.
    """
    start_time = time.perf_counter()
    X = check_X(X)
    Y = np.ascontiguousarray(check_signs(np.reshape(Y, (-1, 1)) if np.ndim(Y) == 1 else Y, X.shape[0]),
                             dtype=np.float64)
    check_scalar(C, "C", low=0.0, low_inclusive=False)
    check_scalar(tol, "tol", low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    A = np.ascontiguousarray(embedding, dtype=np.float64)
    n, n_labels = Y.shape
    if A.ndim != 2 or A.shape[1] != n_labels or not np.all(np.isfinite(A)):
        raise ValueError(f"embedding must be a finite (k, {n_labels}) array, got shape {np.shape(embedding)}")
    bias = 1.0 if fit_intercept else 0.0
    k, p = A.shape[0], X.shape[1] + bool(fit_intercept)
    C = float(C)

    def margins(M):
        return Y * (product(X, bias, M.T) @ A)

    def cut(weights):
        """The linearisation of R for the dual point ``weights`` (n, L) in [0, C]: R(M) >= <g, M> + b."""
        return -(A @ adjoint(X, bias, weights * Y).T).ravel(), float(weights.sum())

    def objective(M_flat, m):
        return 0.5 * float(M_flat @ M_flat) + C * float(np.maximum(0.0, 1.0 - m).sum())

    if M0 is None:
        best = np.zeros(k * p)
    else:
        best = np.array(M0, dtype=np.float64)
        if best.shape != (k, p) or not np.all(np.isfinite(best)):
            raise ValueError(f"M0 must be a finite ({k}, {p}) array, got shape {np.shape(M0)}")
        best = best.ravel()
    m_best = margins(best.reshape(k, p))
    f_best = objective(best, m_best)

    # The cuts: rows of G with offsets b; cut s is the dual point C 1_{S_s} (packed bits) or,
    # for the dual start, a dense point.  Index 0 is the zero cut R >= 0 (beta_0 = 1 - sum beta).
    G, offsets, points, idle = [np.zeros(k * p)], [0.0], [None], [0]
    first = [C * (m_best < 1.0)]
    if alpha0 is not None:
        alpha0 = np.asarray(alpha0, dtype=np.float64)
        if alpha0.shape != (n, n_labels):
            raise ValueError(f"alpha0 must be a ({n}, {n_labels}) array, got shape {alpha0.shape}")
        first.append(np.clip(alpha0, 0.0, C))
    for weights in first:
        g, b = cut(weights)
        G.append(g)
        offsets.append(b)
        points.append(np.packbits(weights.ravel() > 0.0) if _binary(weights, C) else weights)
        idle.append(0)
    Gm = np.array(G)
    Q = Gm @ Gm.T
    beta = np.zeros(len(G))
    beta[0] = 1.0
    lower, master_steps, n_iter, converged = -np.inf, 0, 0, False
    trace = []  # (cuts, primal, dual) every TRACE_EVERY cuts: what an unconverged run reached on the way
    m_model = None
    for n_iter in range(1, max_iter + 1):
        beta, steps = _simplex_qp(Q, np.asarray(offsets), beta)
        master_steps += steps
        model = -(beta @ Gm)
        # The model's value at its minimiser is the SVM dual at alpha = sum beta_s alpha_s.
        lower = max(lower, float(beta @ np.asarray(offsets)) - 0.5 * float(model @ model))
        if n_iter % TRACE_EVERY == 1:
            trace.append((n_iter, f_best, lower))
        if f_best - lower <= tol * max(1.0, abs(f_best)):
            converged = True
            break
        m_model = margins(model.reshape(k, p))
        # OCAS: the best point moves to the minimum of f on the segment to the model's minimiser.
        step = _line_search(best, model - best, m_best, m_model - m_best, C)
        best = best + step * (model - best)
        m_best = m_best + step * (m_model - m_best)
        f_best = objective(best, m_best)
        if f_best - lower <= tol * max(1.0, abs(f_best)):
            converged = True
            break
        cut_point = (1.0 - CUT_AT) * best + CUT_AT * model
        m_cut = (1.0 - CUT_AT) * m_best + CUT_AT * m_model
        f_cut = objective(cut_point, m_cut)
        if f_cut < f_best:
            best, m_best, f_best = cut_point, m_cut, f_cut
        violated = m_cut < 1.0
        g, b = cut(C * violated)
        # Drop the cuts that carried no weight for a while (never the zero cut).
        for s in range(1, len(idle)):
            idle[s] = 0 if beta[s] > 0.0 else idle[s] + 1
        keep = [0] + [s for s in range(1, len(idle)) if idle[s] < PRUNE_AFTER]
        if len(keep) < len(idle):
            Gm, Q, beta = Gm[keep], Q[np.ix_(keep, keep)], beta[keep]
            offsets = [offsets[s] for s in keep]
            points = [points[s] for s in keep]
            idle = [idle[s] for s in keep]
            beta[0] += 1.0 - beta.sum()  # the dropped weights were 0: round-off only
        row = Gm @ g
        Gm = np.vstack([Gm, g])
        Q = np.block([[Q, row[:, None]], [row[None, :], np.array([[g @ g]])]])
        offsets.append(b)
        points.append(np.packbits(violated.ravel()))
        idle.append(0)
        beta = np.append(beta, 0.0)

    alpha = np.zeros(n * n_labels)
    for weight, point in zip(beta, points):
        if point is None or weight <= 0.0:
            continue
        if point.dtype == np.uint8:
            alpha += weight * C * np.unpackbits(point, count=n * n_labels)
        else:
            alpha += weight * point.ravel()
    alpha = np.minimum(alpha.reshape(n, n_labels), C)
    # The dual's projected gradient at alpha: its KKT violation (M(alpha) is the model's minimiser).
    model = -(beta @ Gm)
    gradient = margins(model.reshape(k, p)) - 1.0
    projected = np.where(alpha <= 0.0, np.minimum(gradient, 0.0), np.where(alpha >= C, np.maximum(gradient, 0.0),
                                                                           gradient))
    certificate = Certificate(
        primal=f_best, dual=lower, gap=f_best - lower, kkt_violation=float(np.abs(projected).max(initial=0.0)),
        n_iter=n_iter, time=time.perf_counter() - start_time, converged=bool(converged),
        solver="embedded_hinge_bundle", statistics={"cuts": len(offsets) - 1, "master_steps": master_steps,
                    "trace": trace},
    )
    if not converged and warn:
        warn_not_converged("embedded_hinge_bundle", f"relative duality gap {certificate.relative_gap:.3g} > "
                                                    f"tol={tol:g} after max_iter={max_iter} cuts")
    M = best.reshape(k, p)
    return Fit(embedded_solution(M, A, X.shape[1], bool(fit_intercept), alpha), certificate)


def _binary(weights, C) -> bool:
    return bool(np.all((weights == 0.0) | (weights == C)))


def _line_search(x, d, m, md, C) -> float:
    """The step in [0, inf) minimising ``1/2 ||x + t d||^2 + C sum max(0, 1 - m - t md)`` (convex, piecewise
    quadratic): its derivative is increasing, so the root is found by bisection between 0 and a point where
    it is non-negative, then the exact root on that piece."""
    xd, dd = float(x @ d), float(d @ d)
    if dd == 0.0:
        return 0.0

    def slope(t):
        return xd + t * dd - C * float(md[m + t * md < 1.0].sum())

    if slope(0.0) >= 0.0:
        return 0.0
    high = max(1.0, (C * float(np.abs(md).sum()) - xd) / dd)
    low = 0.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        if slope(middle) < 0.0:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    # On the piece around the root the active set is fixed: solve its linear slope exactly.
    active = m + 0.5 * (low + high) * md < 1.0
    root = (C * float(md[active].sum()) - xd) / dd
    return float(min(max(root, low), high))


def _simplex_qp(Q, b, beta, max_steps: int | None = None) -> tuple[np.ndarray, int]:
    """Maximise ``b^T beta - 1/2 beta^T Q beta`` over the simplex by pairwise (SMO) steps from ``beta``.

    Any point of the simplex gives a valid lower bound (module docstring), so the steps stop
    at a relative violation of 1e-9 or after ``max_steps`` (default ``10 t + 50``: the loop is Python's, and
    the next call continues from this beta).
    """
    t = len(b)
    beta = beta.copy()
    grad = Q @ beta - b  # of the minimisation form
    scale = max(1.0, float(np.abs(b).max()), float(np.abs(np.diag(Q)).max()))
    limit = 10 * t + 50 if max_steps is None else max_steps
    steps = 0
    for steps in range(1, limit + 1):
        up = int(np.argmin(grad))
        support = np.flatnonzero(beta > 0.0)
        down = int(support[np.argmax(grad[support])])
        violation = grad[down] - grad[up]
        if violation <= 1e-9 * scale or up == down:
            break
        curvature = Q[up, up] + Q[down, down] - 2.0 * Q[up, down]
        delta = beta[down] if curvature <= 0.0 else min(beta[down], violation / curvature)
        beta[up] += delta
        beta[down] -= delta
        grad += delta * (Q[:, up] - Q[:, down])
    return beta, steps
