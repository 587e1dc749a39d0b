"""The regulariser of CLaRank SVM and CMLFS: Frobenius plus the label-covariance prior.

Gu, Li & Han (CIKM 2011) put the matrix-variate normal prior ``MN(0, I_d (x) D)`` on the
weights W = [w_1, ..., w_c] (eqs. 2-4) and keep its trace term beside LaRank SVM's norm
(problem 6)::

    1/2 sum_k ||w_k||^2 + mu/2 tr(W D^-1 W^T) = 1/2 tr(W R W^T),    R = I + mu D^-1.

D is a label covariance (c x c, symmetric positive definite, trace 1 when learned) and
mu >= 0 its strength; mu = 0 is LaRank SVM's Frobenius norm.  The ranking dual (7) sees
the labels through ``R^-1 = D (D + mu I)^-1`` (:func:`~multilabel_core.solvers.coupling_inverse`),
which is this regulariser's ``label_gram``: the matrix M of the form ``1/2 tr(W M^-1 W^T)``.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.validation import check_scalar
from multilabel_core.base import Regularizer
from multilabel_core.solvers import coupling_inverse

__all__ = ["FrobeniusLabelCovariance"]


def _covariance(value):
    """None (the isotropic I / c, fixed when the number of labels is known) or a float64 copy."""
    if value is None:
        return None
    value = np.array(value, dtype=np.float64)
    value.setflags(write=False)
    return value


def _same_matrix(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _check_covariance(instance, attribute, value) -> None:
    if value is not None:
        # coupling_inverse refuses non-square, non-finite, asymmetric and indefinite matrices.
        coupling_inverse(value, 0.0)


@attrs.frozen
class FrobeniusLabelCovariance(Regularizer):
    """``1/2 ||W||_F^2 + mu/2 tr(W D^-1 W^T) = 1/2 tr(W R W^T)`` with ``R = I + mu D^-1`` (problem 6).

    Parameters
    ----------
    mu : float >= 0, default 1.0
        Strength of the label-covariance prior; 0 gives the Frobenius regulariser.
    covariance : array (c, c) or None, default None
        The label covariance D, symmetric positive definite; None is ``I / c``, the
        starting point of the alternating solvers (which replace D through
        :meth:`with_covariance` at each D-step, Theorem 3.4).

    Gradient ``W R``; conjugate ``1/2 tr(V R^-1 V^T)``; ``label_gram(c) = R^-1``.
    """

    smooth: ClassVar[bool] = True

    mu: float = attrs.field(default=1.0, validator=lambda _, a, v: check_scalar(v, a.name, low=0.0))
    covariance: np.ndarray | None = attrs.field(
        default=None,
        converter=_covariance,
        validator=_check_covariance,
        eq=attrs.cmp_using(eq=_same_matrix),
        repr=False,
    )

    def with_covariance(self, covariance) -> FrobeniusLabelCovariance:
        """The same regulariser for another label covariance D (the D-step of the alternating solvers)."""
        return attrs.evolve(self, covariance=covariance)

    def covariance_for(self, n_labels: int) -> np.ndarray:
        """D for ``n_labels`` labels: the given one (its size checked) or ``I / n_labels``."""
        check_scalar(n_labels, "n_labels", kind=int, low=1)
        if self.covariance is None:
            return np.eye(n_labels) / n_labels
        if self.covariance.shape[0] != n_labels:
            raise ValueError(
                f"covariance is {self.covariance.shape[0]} x {self.covariance.shape[0]} but there are {n_labels} labels"
            )
        return np.array(self.covariance)

    def coupling(self, n_labels: int) -> np.ndarray:
        """R = I + mu D^-1, computed on D's eigenbasis (eigenvalues d_j -> 1 + mu / d_j)."""
        eigenvalues, vectors = np.linalg.eigh(self.covariance_for(n_labels))
        R = (vectors * (1.0 + self.mu / eigenvalues)) @ vectors.T
        return (R + R.T) / 2.0

    def label_gram(self, n_labels: int) -> np.ndarray:
        """R^-1 = D (D + mu I)^-1, the label coupling of the dual (7)."""
        return coupling_inverse(self.covariance_for(n_labels), self.mu)

    def value(self, W) -> float:
        W = _weights(W)
        return 0.5 * float(np.vdot(W, self.gradient(W)))

    def gradient(self, W) -> np.ndarray:
        W = _weights(W)
        return W @ self.coupling(W.shape[1])

    def conjugate(self, V) -> float:
        V = _weights(V, "V")
        return 0.5 * float(np.vdot(V @ self.label_gram(V.shape[1]), V))


def _weights(W, name: str = "W") -> np.ndarray:
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (d, c) matrix, got shape {W.shape}")
    return W
