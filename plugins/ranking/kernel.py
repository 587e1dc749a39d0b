"""The kernel of a working set of feature subsets (Gu, Li & Han, CIKM 2011, eq. 18).

For subsets p_1, ..., p_T (rows of a (T, d) boolean matrix P) with weights lambda on the
simplex, eq. 18's kernel is

    k(x, z) = sum_t lambda_t (p_t o x)^T (p_t o z) = x^T diag(s) z,    s = P^T lambda,

a re-weighting of the features (docs/solvers/cd-ranking.md).  Algorithm 2's inner
problems carry their working set as this kernel; the ranking solver reads the subsets
from it (and learns lambda itself when T > 1, eq. 31), so a problem with the plain linear
kernel is the one with every feature, s = 1.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from multilabel_core.base import Kernel
from multilabel_core.kernels import LinearKernel
from multilabel_core.validation import check_X

__all__ = ["SIMPLEX_TOL", "SubsetKernel"]

#: How far the weights' sum may be from 1 (the lambda-step renormalises, up to round-off).
SIMPLEX_TOL = 1e-9


def _subsets(value) -> np.ndarray:
    subsets = np.array(value)
    if subsets.ndim != 2 or subsets.shape[0] == 0 or subsets.shape[1] == 0:
        raise ValueError(f"subsets must be a non-empty (T, d) matrix, got shape {subsets.shape}")
    if subsets.dtype != bool:
        if not np.isin(subsets, (0, 1)).all():
            raise ValueError("subsets must be boolean (or 0/1): row t marks the features of p_t")
        subsets = subsets.astype(bool)
    if not subsets.any(axis=1).all():
        raise ValueError(f"every subset needs a feature; subsets {np.flatnonzero(~subsets.any(axis=1)).tolist()} are empty")
    subsets.setflags(write=False)
    return subsets


def _uniform(kernel) -> np.ndarray:
    return np.full(kernel.subsets.shape[0], 1.0 / kernel.subsets.shape[0])


def _weights(value) -> np.ndarray:
    weights = np.array(value, dtype=np.float64)
    weights.setflags(write=False)
    return weights


def _on_the_simplex(kernel, attribute, weights) -> None:
    T = kernel.subsets.shape[0]
    if weights.shape != (T,):
        raise ValueError(f"weights must have one entry per subset, shape ({T},), got {weights.shape}")
    if not np.all(np.isfinite(weights)) or weights.min() < 0.0 or abs(weights.sum() - 1.0) > SIMPLEX_TOL:
        raise ValueError(f"weights must lie on the simplex (>= 0, summing to 1), got {weights.tolist()}")


@attrs.frozen(eq=False)
class SubsetKernel(Kernel):
    """Eq. 18's kernel of a working set of subsets: ``k(x, z) = x^T diag(s) z`` with ``s = P^T lambda``.

    Parameters
    ----------
    subsets : array-like of shape (T, d), bool or 0/1
        P, the working set: row t marks the features of p_t (each subset non-empty).
    weights : array-like of shape (T,), default uniform 1/T
        lambda on the simplex (non-negative, summing to 1 within :data:`SIMPLEX_TOL`).  The
        ranking solver starts from these unless its warm start carries other subset weights
        (module docstring).

    Raises
    ------
    ValueError
        When ``subsets`` is not a non-empty boolean (T, d) matrix with a feature in every
        subset, or ``weights`` is not a point of the simplex with one entry per subset.

    Notes
    -----
    ``linear`` is True: solvers work on the re-weighted features ``sqrt(s) o x``.
    """

    subsets: np.ndarray = attrs.field(converter=_subsets)
    weights: np.ndarray = attrs.field(
        default=attrs.Factory(_uniform, takes_self=True), converter=_weights, validator=_on_the_simplex
    )

    linear: ClassVar[bool] = True
    precomputed: ClassVar[bool] = False

    @property
    def n_subsets(self) -> int:
        """T, the number of subsets of the working set."""
        return int(self.subsets.shape[0])

    def feature_weights(self, weights=None) -> np.ndarray:
        """Compute the feature weights s = P^T lambda.

        Parameters
        ----------
        weights : array-like of shape (T,), default None
            lambda, one weight per subset; None is the kernel's own ``weights``.

        Returns
        -------
        ndarray of shape (d,)
            s: each feature's total weight over the subsets that hold it.
        """
        weights = self.weights if weights is None else np.asarray(weights, dtype=np.float64)
        return weights @ self.subsets

    def __call__(self, X, Z=None) -> np.ndarray:
        scale = np.sqrt(self.feature_weights())
        return LinearKernel()(_scaled(X, scale, "X"), None if Z is None else _scaled(Z, scale, "Z"))

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal k(x_i, x_i) of the kernel at the rows ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n,)
            The rows' squared norms under the feature weights, ``sum_j s_j x_ij^2``.

        Raises
        ------
        ValueError
            When ``X`` does not have the subsets' d features.
        """
        return LinearKernel().diagonal(_scaled(X, np.sqrt(self.feature_weights()), "X"))


def _scaled(rows, scale, name: str):
    """The rows ``sqrt(s) o x`` (sparse rows stay sparse)."""
    rows = check_X(rows, name=name)
    if rows.shape[1] != scale.size:
        raise ValueError(f"{name} has {rows.shape[1]} features but the subsets have {scale.size}")
    return rows @ sp.diags(scale) if sp.issparse(rows) else rows * scale
