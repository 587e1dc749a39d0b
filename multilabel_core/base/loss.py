"""The :class:`Loss` interface.

Notation (used by every loss): ``n`` examples, ``L`` labels, ``Y`` the (n, L) target
matrix -- signs in {-1, +1} for classification losses, real values for regression
losses -- and ``T`` the (n, L) matrix of scores t_ij = w_j^T phi(x_i) + b_j.
A loss is the sum over all entries (or rows, or label pairs) of a per-example loss;
weighting by a cost ``C`` is the estimator's business, not the loss's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Loss(ABC):
    """Base class of a loss ``ell(Y, T)`` summed over examples.

    Required capabilities
    ---------------------
    value(Y, T) -> float
        The loss summed over examples.
    gradient(Y, T) -> ndarray (n, L)
        A (sub)gradient of :meth:`value` with respect to ``T``.

    Optional capabilities (solvers that need them list them in ``requires``)
    ------------------------------------------------------------------------
    conjugate(Y, A) -> float
        Fenchel conjugate ``ell*(Y, A) = sup_T <A, T> - ell(Y, T)``, used for the
        duality gap of primal solvers.
    dual_box(C) -> (lower, upper)
        Box of a dual variable in the sign-multiplied parametrisation
        ``alpha_ij = -y_ij * d ell / d t_ij`` for cost ``C``.
    """

    #: True when :meth:`value` is differentiable everywhere (quasi-Newton solvers need it).
    smooth: bool = False
    #: "sign" for losses on {-1,+1} targets, "real" for regression targets.
    target: str = "sign"

    @abstractmethod
    def value(self, Y: np.ndarray, T: np.ndarray) -> float:
        """See the class docstring."""

    @abstractmethod
    def gradient(self, Y: np.ndarray, T: np.ndarray) -> np.ndarray:
        """See the class docstring."""
