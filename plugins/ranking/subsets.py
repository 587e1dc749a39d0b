"""The feature-subset side of Algorithm 2 (Gu, Li & Han, CIKM 2011): eq. 32's scores and eq. 31's lambda-step.

With V = X^T beta (beta of eq. 8) and R^-1 the label coupling of the dual (7), the
per-feature terms of the dual's quadratic part are ``q_j = (V R^-1 V^T)_jj``: for feature
weights s, ``f(alpha, D, s) = sum alpha - 1/2 (sum_j s_j q_j + q_bias)``
(docs/methods/ranking.md).  They give the most violated subset (eq. 32: the m largest
q_j) and the gradient of the lambda-step (eq. 31).
"""

from __future__ import annotations

import numpy as np

from .simplex import project_simplex

__all__ = [
    "LAMBDA_ARMIJO",
    "LAMBDA_RTOL",
    "LAMBDA_SMALLEST_STEP",
    "LAMBDA_STEPS",
    "bias_score",
    "feature_scores",
    "lambda_step",
    "violation_scores",
]

#: Most projected-gradient steps of one lambda-step (each costs O(T |support|)).
LAMBDA_STEPS = 50
#: A lambda-step stops when its Frank-Wolfe gap ``g^T lambda - min_t g_t`` is below this, relatively to h.
LAMBDA_RTOL = 1e-9
#: Sufficient decrease of the search along a lambda-step's direction (Armijo's constant).
LAMBDA_ARMIJO = 1e-4
#: The shortest fraction of a direction the search tries before the lambda-step gives up.
LAMBDA_SMALLEST_STEP = 1e-12


def violation_scores(X, beta, R_inv, fit_intercept: bool) -> tuple[np.ndarray, float]:
    """``(V R^-1 V^T)_jj`` for every feature j, V = X^T beta (eq. 32 with R^-1), and the bias row's.

    These are the per-feature terms of the quadratic part of the dual (7): for a binary p,
    ``f(alpha, D, p) = sum alpha - 1/2 (sum_j p_j q_j + q_bias)`` (docs/methods/ranking.md).
    ``q_bias`` is 0 without ``fit_intercept``.
    """
    V = np.asarray(X.T @ beta)
    return feature_scores(V, R_inv), bias_score(beta, R_inv, fit_intercept)


def feature_scores(V, R_inv) -> np.ndarray:
    """``q_j = (V R^-1 V^T)_jj`` from V = X^T beta (clipped at 0: R^-1 is positive definite)."""
    return np.maximum(np.sum((V @ R_inv) * V, axis=1), 0.0)


def bias_score(beta, R_inv, fit_intercept: bool) -> float:
    """The bias row's term ``(1^T beta) R^-1 (1^T beta)^T`` (0 without ``fit_intercept``)."""
    if not fit_intercept:
        return 0.0
    bias_row = beta.sum(axis=0)
    return float(bias_row @ R_inv @ bias_row)


def lambda_step(subsets, weights, a) -> np.ndarray:
    """Minimise ``h(lambda) = 1/2 sum_j a_j / (P^T lambda)_j`` on the simplex, from ``weights`` (eq. 31).

    ``a_j >= 0``; a term with a_j = 0 is 0 (its feature carries no weight), one with
    a_j > 0 and s_j = 0 is +inf: h is the inner objective J with W fixed, an upper bound
    of the inner problem's value that touches it at the current lambda, so its gradient
    there is eq. 31's.  Spectral projected gradient (Birgin, Martinez & Raydan 2000): the
    direction ``d = proj(lambda - eta g) - lambda`` with the exact simplex projection, then
    a backtracking search along d, ``h(lambda + tau d) <= h(lambda) + LAMBDA_ARMIJO tau g^T d``
    (tau = 1, 1/2, ...).  Searching along d rather than shrinking eta keeps every weight
    the projection sends to 0 positive for tau < 1, so a subset whose features still carry
    a tiny a_j (h is +inf where its weight is 0) does not stop the others from moving.  The
    first eta moves lambda by about 1 (1 / the spread of g: the projection ignores a shift
    along 1); the next ones are Barzilai-Borwein's ``m^T m / m^T y`` (m the last move, y the
    change of the gradient).  Stops when the Frank-Wolfe gap ``g^T lambda - min_t g_t``,
    which bounds h(lambda) - min h, is at most LAMBDA_RTOL h(lambda), or at a stationary
    point (``g^T d >= 0``).
    """
    used = a > 0.0
    P, a = subsets[:, used].astype(np.float64), a[used]
    lam = np.asarray(weights, dtype=np.float64)
    if a.size == 0:
        return lam

    def h(point) -> float:
        s = point @ P
        return np.inf if np.any(s <= 0.0) else 0.5 * float(np.sum(a / s))

    def gradient(point) -> np.ndarray:  # dh/dlambda_t = -1/2 sum_{j in p_t} a_j / s_j^2
        return -0.5 * P @ (a / (point @ P) ** 2)

    value, g = h(lam), gradient(lam)
    eta = 1.0 / np.ptp(g) if np.ptp(g) > 0.0 else 1.0
    for _ in range(LAMBDA_STEPS):
        if g @ lam - g.min() <= LAMBDA_RTOL * value:  # h(lambda) - min h is at most this (convexity)
            break
        direction = project_simplex(lam - eta * g) - lam
        slope = float(g @ direction)
        if slope >= 0.0:
            break
        tau = 1.0
        while h(lam + tau * direction) > value + LAMBDA_ARMIJO * tau * slope:
            tau /= 2.0
            if tau < LAMBDA_SMALLEST_STEP:
                return lam
        candidate = np.maximum(lam + tau * direction, 0.0)  # on the simplex up to round-off, zeros kept exact
        candidate /= candidate.sum()
        move = candidate - lam
        new_g = gradient(candidate)
        curvature = move @ (new_g - g)
        lam, value, g = candidate, h(candidate), new_g
        eta = (move @ move) / curvature if curvature > 0.0 else 2.0 * eta
    return lam
