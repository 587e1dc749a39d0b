"""Products with a row matrix augmented by a constant feature, ``X_a = [X, bias 1]``, without forming it.

The dual CD variants absorb a bias as the weight of a constant feature (the engine's
``Rows`` with ``bias > 0``); their certificates need X_a^T V and X_a V in numpy, for
dense and sparse X alike.  ``bias = 0`` means no constant feature: X_a = X.
"""

from __future__ import annotations

import numpy as np


def adjoint(X, bias: float, V: np.ndarray) -> np.ndarray:
    """``X_a^T V``: (d, m), with the row ``bias 1^T V`` appended when bias > 0."""
    product = np.asarray(X.T @ V)
    return np.vstack([product, bias * V.sum(axis=0)]) if bias > 0.0 else product


def product(X, bias: float, coef: np.ndarray) -> np.ndarray:
    """``X_a coef`` for ``coef`` of X_a's width (the last row is the constant feature's when bias > 0)."""
    scores = np.asarray(X @ coef[: X.shape[1]])
    return scores + bias * coef[-1] if bias > 0.0 else scores
