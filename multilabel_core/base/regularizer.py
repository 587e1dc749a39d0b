"""The :class:`Regularizer` interface.

``W`` is the (d, L) weight matrix, one column w_j per label (d features, or the
dimension of the feature map for kernels).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Regularizer(ABC):
    """Base class of a regulariser ``Omega(W)``.

    Methods
    -------
    value(W)
        Required.  Omega(W), a float.
    gradient(W)
        Required.  A (sub)gradient of :meth:`value` with respect to ``W``, an ndarray of
        shape ``(d, L)``.
    label_gram(n_labels)
        Optional.  For a regulariser of the form 1/2 tr(W M^-1 W^T): the ``(L, L)`` matrix
        ``M`` that the dual sees, coupling labels as ``M (x) K`` (Zhang & Yeung,
        *Multi-Label Relationship Learning*, the Omega~ of section 2.1).  Kernel dual
        solvers (SMO) require it.
    conjugate(V)
        Optional.  Fenchel conjugate, a float, for duality gaps of primal solvers.

    Notes
    -----
    ``smooth`` is True when :meth:`value` is differentiable everywhere, so that
    :meth:`gradient` is a gradient rather than one subgradient among many.  Quasi-Newton
    solvers (L-BFGS) require it: their line search and curvature pairs assume a gradient,
    and on a kink (the nuclear norm at a rank-deficient W) they stop at a point that is not
    optimal.  False by default: a regulariser declares smoothness.
    """

    #: True when :meth:`value` is differentiable everywhere (quasi-Newton solvers need it).
    smooth: bool = False
    #: Capabilities through which this part's own information reaches a model beyond its generic
    #: interface; a solver must read each (``requires`` or ``consumes``) or refuse the part
    #: (:meth:`multilabel_core.base.Solver.check`).  Empty for the stock parts.
    state: tuple[str, ...] = ()

    @abstractmethod
    def value(self, W: np.ndarray) -> float:
        """Evaluate the regulariser Omega(W).

        Parameters
        ----------
        W : ndarray of shape (d, L)
            The weights, one column per label.

        Returns
        -------
        float
            Omega(W).
        """

    @abstractmethod
    def gradient(self, W: np.ndarray) -> np.ndarray:
        """Compute a (sub)gradient of :meth:`value` with respect to the weights.

        Parameters
        ----------
        W : ndarray of shape (d, L)
            The weights, one column per label.

        Returns
        -------
        ndarray of shape (d, L)
            The gradient where Omega is differentiable (``smooth``), one subgradient at a kink.
        """
