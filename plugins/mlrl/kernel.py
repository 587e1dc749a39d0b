"""The data-dependent kernel of SSMLRL (Zhang & Yeung, MLRL, section 4.2, eq. 22).

With u unlabelled rows X_u, their kernel matrix K_uu and rho = lambda_1 / lambda_2::

    k'(z1, z2) = k(z1, z2) - k_u(z1)^T (rho I_u + K_uu)^-1 k_u(z2),        k_u(z) = (k(z, x_u))_u      (22)

Where it comes from.  The W-step of problem (14) penalises
``lambda_1/2 tr(W Omega^-1 W^T) + lambda_2/2 tr(F Omega^-1 F^T)`` with
F = phi(X_u)^T W, i.e. ``lambda_1/2 tr(Omega^-1 W^T M W)`` with the feature-space metric
``M = I + (lambda_2/lambda_1) phi(X_u) phi(X_u)^T``.  An SVM under that metric is an SVM
with the kernel ``phi(z1)^T M^-1 phi(z2)``, and by the Woodbury identity
``M^-1 = I - phi(X_u) (rho I + K_uu)^-1 phi(X_u)^T``: that is k'.  On the labelled rows it is
the paper's ``K~_ll = K_ll - K_lu (rho I + K_uu)^-1 K_lu^T``, the Schur complement that
makes problem (18) the dual (21); on new rows it is the inductive predictor.

``rho I + K_uu`` is symmetric positive definite (K_uu is PSD and rho > 0): it is
factorised once by Cholesky and every ``(rho I + K_uu)^-1`` product is a triangular solve,
never an explicit inverse.  As lambda_2 -> 0 (rho -> infinity) the correction vanishes
and k' -> k (MLRL on the labelled rows alone).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import scipy.linalg
import scipy.sparse as sp

from multilabel_core.validation import check_X, positive
from multilabel_core.base import Kernel

__all__ = ["DataDependentKernel", "stack_rows"]


def stack_rows(top, bottom):
    """Stack two blocks of rows, ``[top; bottom]``.

    Parameters
    ----------
    top : array-like or sparse matrix of shape (n_top, d)
        The first rows.
    bottom : array-like or sparse matrix of shape (n_bottom, d)
        The rows put below them.

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n_top + n_bottom, d)
        CSR when either part is sparse, else a dense array.
    """
    if sp.issparse(top) or sp.issparse(bottom):
        return sp.vstack([sp.csr_matrix(top), sp.csr_matrix(bottom)], format="csr")
    return np.vstack([top, bottom])


def _base_kernel(_, attribute, value) -> None:
    if not isinstance(value, Kernel) or value.precomputed:
        raise ValueError(f"{attribute.name} must be a Kernel on features (not precomputed), got {value!r}")
    if not callable(getattr(value, "diagonal", None)):
        raise ValueError(f"{attribute.name} must provide diagonal(X), which SMO needs")


@attrs.frozen(eq=False)
class DataDependentKernel(Kernel):
    """The data-dependent kernel k' of eq. (22): the kernel ``base`` corrected by the unlabelled rows.

    Parameters
    ----------
    base : Kernel
        The kernel k, resolved (e.g. ``RBFKernel().resolve(all training rows)``), on features
        (not precomputed) and with a ``diagonal``.
    X_unlabeled : array-like or sparse matrix of shape (u, d), u >= 1
        The unlabelled rows x_{l+1}, ..., x_{l+u}.
    ratio : float
        rho = lambda_1 / lambda_2, positive.

    Raises
    ------
    ValueError
        When ``base`` is precomputed or has no ``diagonal``, ``ratio`` is not positive, or
        ``rho I + K_uu`` is not positive definite (a base kernel that is not positive
        semi-definite, or rho below its round-off).

    Notes
    -----
    Construction computes K_uu and the Cholesky factor of ``rho I + K_uu`` (O(u^3)).
    """

    base: Kernel = attrs.field(validator=_base_kernel)
    X_unlabeled: Any = attrs.field(converter=lambda X: check_X(X, name="X_unlabeled"))
    ratio: float = attrs.field(validator=positive)
    _factor: tuple = attrs.field(init=False, repr=False)

    linear: ClassVar[bool] = False
    precomputed: ClassVar[bool] = False

    def __attrs_post_init__(self):
        system = self.base(self.X_unlabeled)
        system[np.diag_indices_from(system)] += self.ratio
        try:
            factor = scipy.linalg.cho_factor(system, lower=True)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"rho I + K_uu is not positive definite at rho = {self.ratio:.3g}: the base kernel is not positive "
                "semi-definite, or rho is below its round-off"
            ) from None
        object.__setattr__(self, "_factor", factor)

    def _solve(self, K_ux) -> np.ndarray:
        """``(rho I + K_uu)^-1 K_ux`` by two triangular solves."""
        return scipy.linalg.cho_solve(self._factor, K_ux)

    def __call__(self, X, Z=None) -> np.ndarray:
        K_xu = self.base(X, self.X_unlabeled)
        if Z is None:
            K = self.base(X) - K_xu @ self._solve(K_xu.T)
            return (K + K.T) / 2.0
        return self.base(X, Z) - K_xu @ self._solve(self.base(self.X_unlabeled, Z))

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal k'(x_i, x_i) of the data-dependent kernel at the rows ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n,)
            k'(x_i, x_i) = k(x_i, x_i) - k_u(x_i)^T (rho I + K_uu)^-1 k_u(x_i).
        """
        K_xu = self.base(X, self.X_unlabeled)
        return self.base.diagonal(X) - np.einsum("ij,ji->i", K_xu, self._solve(K_xu.T))

    def expansion(self, X, dual_coef) -> tuple[Any, np.ndarray]:
        """Write the function ``k'(., X) D`` as an expansion in the base kernel.

        ``k'(z, X) D = k(z, X) D - k_u(z)^T (rho I + K_uu)^-1 K(X_u, X) D
        = k(z, [X; X_u]) [D; -(rho I + K_uu)^-1 K(X_u, X) D]``, so predictions on new rows
        need the base kernel against the labelled and unlabelled rows, and no solve.  In
        the paper's terms the second block is Gamma Omega / lambda_1 (eqs. 17 and 20).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows the function is expanded on (the labelled training rows).
        dual_coef : array-like of shape (n, L)
            D, the coefficients of ``k'(., X)``.

        Returns
        -------
        rows : ndarray or scipy.sparse.csr_matrix of shape (n + u, d)
            ``[X; X_u]``.
        coef : ndarray of shape (n + u, L)
            ``[D; -(rho I + K_uu)^-1 K(X_u, X) D]``: ``k(z, rows) @ coef`` is ``k'(z, X) D``.
        """
        dual_coef = np.asarray(dual_coef, dtype=np.float64)
        correction = -self._solve(self.base(self.X_unlabeled, X) @ dual_coef)
        return stack_rows(X, self.X_unlabeled), np.vstack([dual_coef, correction])
