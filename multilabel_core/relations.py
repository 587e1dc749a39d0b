"""Stock label relations: independent labels and the learned label covariance of MLRL.

A relation holds the (L, L) label covariance Omega that the regulariser
``1/2 tr(W Omega^-1 W^T)`` (:class:`~multilabel_core.regularizers.LabelCovariance`) sees, and
updates it from the Gram matrix ``W^T W`` between the alternating steps of a method.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from .validation import check_scalar, check_symmetric, positive
from .base import LabelRelation

__all__ = ["Independent", "LearnedCovariance", "correlation_from_covariance", "psd_sqrt"]

#: Negative eigenvalues of a Gram matrix down to ``-GRAM_TOL * largest`` are round-off.
#: (Symmetry follows the one rule of :data:`multilabel_core.validation.SYMMETRY_RTOL`.)
GRAM_TOL = 1e-8


def _check_n_labels(n_labels) -> int:
    return check_scalar(n_labels, "n_labels", kind=int, low=1)


@attrs.frozen
class Independent(LabelRelation):
    """Omega = I: labels unrelated (binary relevance, BSVM; MLRL's Omega = I special case)."""

    learned: ClassVar[bool] = False

    def initial(self, n_labels: int) -> np.ndarray:
        return np.eye(_check_n_labels(n_labels))

    def update(self, gram) -> np.ndarray:
        return np.eye(check_symmetric(gram, "gram").shape[0])


@attrs.frozen
class LearnedCovariance(LabelRelation):
    """The label covariance learned by MLRL (Zhang & Yeung, *Multi-Label Relationship Learning*,
    section 2.2, problem 11).

    For fixed W, ``min_Omega tr(Omega^-1 W^T W)`` subject to Omega positive definite and
    tr(Omega) = 1 has the closed form ``Omega = (W^T W)^(1/2) / tr((W^T W)^(1/2))``.
    When W is rank deficient that matrix is only semi-definite, and Omega^-1 (which the
    regulariser needs) does not exist; as the paper suggests ("we can regularize it by
    adding a scaled identity matrix"), we therefore return::

        S = (W^T W)^(1/2),   Omega = (S + epsilon I) / tr(S + epsilon I)

    symmetric, positive definite (eigenvalues >= epsilon / tr(S + epsilon I)) and of
    trace 1.  ``epsilon`` is absolute, in the units of S (those of W).  S comes from a
    symmetric eigendecomposition of the Gram matrix with round-off negative eigenvalues
    set to 0.  The iterations start from ``Omega = I / L``.

    Parameters
    ----------
    epsilon : float, default=1e-8
        The absolute shift added to S's eigenvalues before normalising, positive.
    """

    epsilon: float = attrs.field(default=1e-8, validator=positive)

    learned: ClassVar[bool] = True

    def initial(self, n_labels: int) -> np.ndarray:
        n_labels = _check_n_labels(n_labels)
        return np.eye(n_labels) / n_labels

    def update(self, gram) -> np.ndarray:
        shifted = psd_sqrt(check_symmetric(gram, "gram")) + self.epsilon * np.eye(len(gram))
        return shifted / np.trace(shifted)


def psd_sqrt(gram: np.ndarray) -> np.ndarray:
    """Compute the symmetric square root of a positive semi-definite matrix.

    Parameters
    ----------
    gram : ndarray of shape (L, L)
        A symmetric positive semi-definite matrix (a Gram matrix ``W^T W``).

    Returns
    -------
    ndarray of shape (L, L)
        The symmetric S with ``S S = gram``; negative eigenvalues above
        ``-GRAM_TOL * largest`` are round-off and become 0.

    Raises
    ------
    ValueError
        If an eigenvalue is below ``-GRAM_TOL * largest`` (not a Gram matrix).
    """
    eigenvalues, vectors = np.linalg.eigh(gram)
    largest = max(eigenvalues[-1], 0.0)
    if eigenvalues[0] < -GRAM_TOL * largest or (largest == 0.0 and eigenvalues[0] < 0.0):
        raise ValueError(f"gram must be positive semi-definite, its smallest eigenvalue is {eigenvalues[0]:.3g}")
    root = (vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))) @ vectors.T
    return (root + root.T) / 2.0


def correlation_from_covariance(omega) -> np.ndarray:
    """Compute the correlation matrix ``Omega_jk / sqrt(Omega_jj Omega_kk)`` of a covariance.

    Parameters
    ----------
    omega : array_like of shape (L, L)
        A symmetric covariance matrix with a positive diagonal.

    Returns
    -------
    ndarray of shape (L, L)
        The correlations: unit diagonal, entries clipped to [-1, 1].

    Raises
    ------
    ValueError
        If ``omega`` is not symmetric or has a diagonal entry at or below 0.
    """
    omega = check_symmetric(omega, "omega")
    diagonal = np.diag(omega)
    if np.any(diagonal <= 0.0):
        raise ValueError("omega must have a positive diagonal to define correlations")
    scale = 1.0 / np.sqrt(diagonal)
    correlation = np.clip(omega * np.outer(scale, scale), -1.0, 1.0)
    np.fill_diagonal(correlation, 1.0)
    return correlation
