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

    Methods
    -------
    value(Y, T)
        Required.  The loss summed over examples, a float.
    gradient(Y, T)
        Required.  A (sub)gradient of :meth:`value` with respect to ``T``, an ndarray of
        shape ``(n, L)``.
    conjugate(Y, A)
        Optional (solvers that need it list it in ``requires``).  Fenchel conjugate
        ``ell*(Y, A) = sup_T <A, T> - ell(Y, T)``, a float, used for the duality gap of
        primal solvers.
    dual_box(C)
        Optional.  The box ``(lower, upper)`` of a dual variable in the sign-multiplied
        parametrisation ``alpha_ij = -C * y_ij * d ell / d t_ij`` for cost ``C`` (``upper``
        may be inf).
    dual_diagonal(C)
        Optional.  The diagonal term D >= 0 (a float) of the SVM dual for cost ``C``::

            min_alpha  1/2 alpha^T (Q + D I) alpha - e^T alpha,   lower <= alpha <= upper,

        with Q_ij = y_i y_j k(x_i, x_j): 0 for the hinge loss, 1 / (2C) for the squared
        hinge (Hsieh et al., *A dual coordinate descent method for large-scale linear
        SVM*, ICML 2008, eq. 4).  A loss providing both ``dual_box`` and ``dual_diagonal``
        is an *SVM-dual loss*: its dual has exactly this form, with the linear term
        ``-e^T alpha`` (margin 1), i.e. ``C ell*(-alpha / C) = -alpha + D alpha^2 / 2`` on
        the box.  The dual coordinate-descent solver (CDSolver) asks for both.
    """

    #: True when :meth:`value` is differentiable everywhere (quasi-Newton solvers need it).
    smooth: bool = False
    #: "sign" for losses on {-1,+1} targets, "real" for regression targets.
    target: str = "sign"
    #: Capabilities through which this part's own information reaches a model beyond its generic
    #: interface; a solver must read each (``requires`` or ``consumes``) or refuse the part
    #: (:meth:`multilabel_core.base.Solver.check`).  Empty for the stock parts.
    state: tuple[str, ...] = ()

    @abstractmethod
    def value(self, Y: np.ndarray, T: np.ndarray) -> float:
        """Evaluate the loss summed over the examples.

        Parameters
        ----------
        Y : ndarray of shape (n, L)
            Targets: signs in {-1, +1} for a classification loss (``target == "sign"``), real
            values for a regression loss (``target == "real"``).
        T : ndarray of shape (n, L)
            Scores t_ij = w_j^T phi(x_i) + b_j.

        Returns
        -------
        float
            ``sum ell(Y, T)`` over the entries (or rows, or label pairs) the loss sums over.
        """

    @abstractmethod
    def gradient(self, Y: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Compute a (sub)gradient of :meth:`value` with respect to the scores.

        Parameters
        ----------
        Y : ndarray of shape (n, L)
            Targets, as for :meth:`value`.
        T : ndarray of shape (n, L)
            Scores, as for :meth:`value`.

        Returns
        -------
        ndarray of shape (n, L)
            d value / d T where the loss is differentiable, one subgradient at its kinks.
        """
