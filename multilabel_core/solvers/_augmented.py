"""Products with a row matrix augmented by a constant feature, ``X_a = [X, bias 1]``, without forming it.

The dual CD variants absorb a bias as the weight of a constant feature (the engine's
``Rows`` with ``bias > 0``); their certificates need X_a^T V and X_a V in numpy, for
dense and sparse X alike.  ``bias = 0`` means no constant feature: X_a = X.
"""

from __future__ import annotations

import numpy as np


def adjoint(X, bias: float, V: np.ndarray) -> np.ndarray:
    """Compute ``X_a^T V`` without forming ``X_a``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows.
    bias : float
        The value of the constant feature; 0 for none.
    V : ndarray of shape (n, m)
        The right-hand side.

    Returns
    -------
    ndarray of shape (d, m) or (d + 1, m)
        ``X^T V``, with the row ``bias 1^T V`` appended when bias > 0.
    """
    product = np.asarray(X.T @ V)
    return np.vstack([product, bias * V.sum(axis=0)]) if bias > 0.0 else product


def product(X, bias: float, coef: np.ndarray) -> np.ndarray:
    """Compute ``X_a coef`` without forming ``X_a``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows.
    bias : float
        The value of the constant feature; 0 for none.
    coef : ndarray of shape (d, m) or (d + 1, m)
        Weights of X_a's width: the last row is the constant feature's when bias > 0.

    Returns
    -------
    ndarray of shape (n, m)
        The scores ``X coef[:d] + bias coef[d]``.
    """
    scores = np.asarray(X @ coef[: X.shape[1]])
    return scores + bias * coef[-1] if bias > 0.0 else scores
