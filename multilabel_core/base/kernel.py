"""The :class:`Kernel` interface."""

from __future__ import annotations

from abc import ABC, abstractmethod


class Kernel(ABC):
    """Base class of a kernel ``k(x, z)`` on dense or scipy.sparse rows.

    Methods
    -------
    __call__(X, Z=None)
        Required.  The kernel block ``K_ij = k(x_i, z_j)``, an ndarray of shape
        ``(n_X, n_Z)`` (``Z=None`` means ``Z = X``), computed in blocks with BLAS matrix
        products, never one dot product at a time.
    resolve(X)
        A copy with every data-dependent default fixed from the training rows ``X``
        (e.g. the RBF width).  Kernels are frozen, so this returns a new object.

    Notes
    -----
    ``linear`` is True when ``k(x, z) = x^T z``: primal solvers then work on features.
    """

    linear: bool = False
    precomputed: bool = False
    #: Capabilities through which this part's own information reaches a model beyond its generic
    #: interface; a solver must read each (``requires`` or ``consumes``) or refuse the part
    #: (:meth:`multilabel_core.base.Solver.check`).  Empty for the stock parts.
    state: tuple[str, ...] = ()

    @abstractmethod
    def __call__(self, X, Z=None):
        """Compute the kernel matrix between two sets of rows.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The first rows.
        Z : array or sparse matrix of shape (m, d), optional
            The second rows; None means ``X`` itself.

        Returns
        -------
        ndarray of shape (n, m)
            k(x_i, z_j).
        """

    def resolve(self, X) -> "Kernel":
        """Fix the data-dependent parameters (a width, a degree's scale) from the training rows.

        Parameters
        ----------
        X : array or sparse matrix of shape (n_samples, n_features)
            The training rows the defaults are computed from.

        Returns
        -------
        Kernel
            A new kernel with every data-dependent default fixed; a kernel with none returns
            itself.
        """
        return self
