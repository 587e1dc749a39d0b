"""Euclidean projection onto the probability simplex (the lambda-step of Algorithm 2, eq. 31).

The subset weights lambda of Gu, Li & Han (CIKM 2011, eq. 18) live on the simplex
``Lambda = {lambda >= 0, sum_t lambda_t = 1}``; a projected-gradient step needs the exact
Euclidean projection

    proj(v) = argmin_{lambda in Lambda} ||lambda - v||_2.

Its KKT conditions give ``proj(v)_t = max(v_t - theta, 0)`` for the one threshold theta with
``sum_t max(v_t - theta, 0) = 1``.  Sorting v decreasingly (u_1 >= ... >= u_T), the entries
kept positive are the first rho, where rho is the largest index with
``u_rho - (u_1 + ... + u_rho - 1) / rho > 0``; then ``theta = (u_1 + ... + u_rho - 1) / rho``
(Held, Wolfe & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008, Fig. 1).
O(T log T), exact up to the rounding of one cumulative sum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["project_simplex"]


def project_simplex(v) -> np.ndarray:
    """Project the vector ``v`` onto the probability simplex in the Euclidean norm.

    Parameters
    ----------
    v : array-like of shape (T,)
        The point to project: finite, non-empty, any sign.

    Returns
    -------
    numpy.ndarray of shape (T,), float64
        ``argmin_{lambda >= 0, sum lambda = 1} ||lambda - v||_2``: the entries are
        ``max(v_t - theta, 0)`` for the threshold theta of the module docstring, non-negative
        and summing to 1 up to the rounding of one cumulative sum.

    Raises
    ------
    ValueError
        When ``v`` is not a non-empty 1-D vector, or holds NaN or infinity.

    Notes
    -----
    The sort-and-threshold rule of Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient
    Projections onto the l1-Ball for Learning in High Dimensions" (ICML 2008, Fig. 1), in
    O(T log T).  Gu, Li & Han, "Correlated Multi-Label Feature Selection" (CIKM 2011), use it
    for the lambda-step of their Algorithm 2 (eq. 31).
    """
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"v must be a non-empty 1-D vector, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("v contains NaN or infinity")
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - 1.0
    ranks = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - excess / ranks > 0.0)[-1] + 1
    theta = excess[rho - 1] / rho
    return np.maximum(v - theta, 0.0)
