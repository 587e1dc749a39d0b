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
    """Score every feature and the bias by ``(V R^-1 V^T)_jj`` with ``V = X^T beta`` (eq. 32).

    These are the per-feature terms of the quadratic part of the dual (7) of Gu, Li & Han,
    "Correlated Multi-Label Feature Selection" (CIKM 2011): for a binary subset p,
    ``f(alpha, D, p) = sum alpha - 1/2 (sum_j p_j q_j + q_bias)`` (docs/methods/ranking.md),
    so the most violated subset of eq. 32 keeps the features of largest q_j.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training rows.
    beta : ndarray of shape (n_samples, n_labels)
        beta of eq. 8, the per-label sums of the pairs' dual variables (a solution's
        ``model_state["beta"]``).
    R_inv : ndarray of shape (n_labels, n_labels)
        R^-1, the label coupling of the dual (7): positive definite (the regulariser's
        ``label_gram``; the identity for LaRank SVM).
    fit_intercept : bool
        Whether the model has a bias, scored as the weight of a constant feature.

    Returns
    -------
    q : ndarray of shape (n_features,)
        ``q_j = (V R^-1 V^T)_jj``, clipped at 0 (:func:`feature_scores`).
    q_bias : float
        The bias row's term (:func:`bias_score`); 0.0 without ``fit_intercept``.
    """
    V = np.asarray(X.T @ beta)
    return feature_scores(V, R_inv), bias_score(beta, R_inv, fit_intercept)


def feature_scores(V, R_inv) -> np.ndarray:
    """Return the per-feature terms ``q_j = (V R^-1 V^T)_jj`` of the dual (7)'s quadratic part.

    Parameters
    ----------
    V : ndarray of shape (n_features, n_labels)
        ``X^T beta``, beta of eq. 8.
    R_inv : ndarray of shape (n_labels, n_labels)
        R^-1, the positive definite label coupling of the dual (7).

    Returns
    -------
    ndarray of shape (n_features,)
        The diagonal of ``V R^-1 V^T``, clipped at 0: R^-1 is positive definite, so a
        negative entry is round-off.
    """
    return np.maximum(np.sum((V @ R_inv) * V, axis=1), 0.0)


def bias_score(beta, R_inv, fit_intercept: bool) -> float:
    """Return the bias row's term ``(1^T beta) R^-1 (1^T beta)^T`` of the dual (7)'s quadratic part.

    Parameters
    ----------
    beta : ndarray of shape (n_samples, n_labels)
        beta of eq. 8, the per-label sums of the pairs' dual variables.
    R_inv : ndarray of shape (n_labels, n_labels)
        R^-1, the label coupling of the dual (7).
    fit_intercept : bool
        Whether the model has a bias (a constant feature); without one the term is 0.

    Returns
    -------
    float
        ``(1^T beta) R^-1 (1^T beta)^T``, or 0.0 when ``fit_intercept`` is False.
    """
    if not fit_intercept:
        return 0.0
    bias_row = beta.sum(axis=0)
    return float(bias_row @ R_inv @ bias_row)


def lambda_step(subsets, weights, a) -> np.ndarray:
    """Minimise ``h(lambda) = 1/2 sum_j a_j / (P^T lambda)_j`` on the simplex, from ``weights`` (eq. 31).

    The lambda-step of Algorithm 2 of Gu, Li & Han, "Correlated Multi-Label Feature
    Selection" (CIKM 2011, eq. 31).

    Parameters
    ----------
    subsets : ndarray of shape (T, n_features), bool or 0/1
        P, the working set: row t marks the features of subset p_t.
    weights : array-like of shape (T,)
        The starting lambda, on the simplex (the subset weights the model step solved with).
    a : ndarray of shape (n_features,)
        The non-negative per-feature coefficients of h: ``s_j^2 q_j`` with s the feature
        weights the model step solved with and q its :func:`feature_scores`.

    Returns
    -------
    ndarray of shape (T,), float64
        The lambda reached, on the simplex (non-negative, summing to 1 up to round-off),
        after at most :data:`LAMBDA_STEPS` steps; ``weights`` itself when every a_j is 0
        (h is then constant).  A backtracking search that finds no sufficient decrease
        above a step of :data:`LAMBDA_SMALLEST_STEP` returns the lambda reached before it.

    Notes
    -----
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
