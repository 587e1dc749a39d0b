"""The parts of the privileged family: the low-rank regulariser and the privileged label relation.

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning* (PrML).  Problem (5)::

    min_{D, W, W~}  1/2 ||D||_F^2 + 1/2 sum_i (gamma_1 ||w_i||^2 + gamma_2 ||w~_i||^2) + C sum_ij <w~_i, y~_ij>
    s.t.  Y_ij <D^T w_i, x_j> >= 1 - <w~_i, y~_ij>,   <w~_i, y~_ij> >= 0,

with the scores Z = D^T W (D: k x d dictionary, W: k x L label weights).  Beside the hinge's
margin constraints it composes the core's :class:`~multilabel_core.regularizers.LowRank`
(``1/2 ||D||^2 + gamma_1/2 ||W||^2`` over the rank-k factors: problem (2), LEML, when the
slacks are the hinge's) and this module's :class:`PrivilegedLabels`, the label relation of
PrML: which labels comment on which (the privileged label features y~_ij of eq. 3,
optionally from a pool of the nearest labels, section 4.2), the weight gamma_2 of the
correcting functions and their bias.
"""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.base import LabelRelation
from multilabel_core.validation import check_scalar, flag, positive

__all__ = ["PrivilegedLabels", "resolve_rank"]


def resolve_rank(k, n_labels: int, name: str = "k") -> int:
    """Resolve the embedding dimension k of PrML.

    The paper sets ``k = ceil(0.9 L)`` (section 4.2).  A rank above L is refused: the scores
    Z = D^T W (d x L) have rank at most L, so further dimensions add nothing.

    Parameters
    ----------
    k : int or float
        An int >= 1, or a fraction of the labels in (0, 1].
    n_labels : int
        L, the number of labels.
    name : str, default "k"
        The parameter the errors name (the presets' ``rank``, the paper's k).

    Returns
    -------
    int
        ``k`` itself for an int, ``ceil(k L)`` (at least 1) for a fraction.

    Raises
    ------
    ValueError
        When ``k`` is not a positive int or a fraction in (0, 1], or the rank exceeds L.
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Real):
        raise ValueError(f"{name} must be an int >= 1 or a fraction of the labels in (0, 1], got {k!r}")
    if isinstance(k, numbers.Integral):
        rank = int(k)
        if rank < 1:
            raise ValueError(f"{name} must be an int >= 1 or a fraction of the labels in (0, 1], got {k!r}")
    else:
        check_scalar(k, name, low=0.0, low_inclusive=False, high=1.0)
        rank = max(1, math.ceil(float(k) * n_labels - 1e-9))
    if rank > n_labels:
        raise ValueError(f"{name} = {rank} exceeds the number of labels L = {n_labels}: Z = D^T W has rank <= L")
    return rank


@attrs.frozen
class PrivilegedLabels(LabelRelation):
    """Which labels comment on which: the privileged label features of PrML (eq. 3, section 4.2).

    For label i and example j the privileged feature is ``y~_ij = y_j`` with entry i set to
    0 (eq. 3); with ``n_privileged = K`` only the K labels nearest to label i in Hamming
    distance between the label columns of the training Y keep their entries (the label pool
    of section 4.2; ties broken by the lower label index).  ``initial(L)`` is the relation
    with every other label (the default pool); :meth:`pool` the one for a given Y.

    Parameters
    ----------
    gamma : float > 0, default 1.0
        gamma_2, the weight of ``||w~_i||^2`` in problem (5).
    n_privileged : int or None, default None
        K, the pool size (1 <= K <= L - 1); None for all other labels.
    bias : bool, default True
        Append a constant 1 to every y~_ij (the correcting functions' own bias).  Without
        it problems (6) and (10) can be infeasible and their duals unbounded (on the Mulan
        emotions training split, label "amazed-suprised": docs/methods/prml.md); the
        paper's "we absorb the bias term" most likely means both biases.
    """

    gamma: float = attrs.field(default=1.0, validator=positive)
    n_privileged: int | None = attrs.field(default=None)
    bias: bool = attrs.field(default=True, validator=flag)

    learned: ClassVar[bool] = False
    # The label pool (which labels are privileged features of which) is what this relation contributes.
    state: ClassVar[tuple[str, ...]] = ("pool",)

    def __attrs_post_init__(self):
        if self.n_privileged is not None:
            check_scalar(self.n_privileged, "n_privileged", kind=numbers.Integral, low=1)

    def initial(self, n_labels: int) -> np.ndarray:
        check_scalar(n_labels, "n_labels", kind=numbers.Integral, low=1)
        return 1.0 - np.eye(int(n_labels))

    def update(self, gram) -> np.ndarray:
        return self.initial(np.shape(gram)[0])

    def pool(self, Y) -> np.ndarray:
        """Compute the label pool: which labels' values each label sees as privileged features.

        Parameters
        ----------
        Y : array-like of shape (n, L)
            The training labels, 0/1 or -1/+1 (an entry counts as positive when > 0).

        Returns
        -------
        ndarray of shape (L, L), bool
            Row i marks the labels whose values label i sees (never itself): every other label,
            or the ``n_privileged`` nearest in Hamming distance between label columns (ties to
            the lower index).

        Raises
        ------
        ValueError
            When ``n_privileged`` exceeds the L - 1 other labels.
        """
        Y = np.asarray(Y)
        n_labels = Y.shape[1]
        if self.n_privileged is None:
            return ~np.eye(n_labels, dtype=bool)
        if self.n_privileged > n_labels - 1:
            raise ValueError(
                f"n_privileged = {self.n_privileged} exceeds the L - 1 = {n_labels - 1} other labels a label can see"
            )
        positive_part = (Y > 0).astype(np.float64)
        agreements = positive_part.T @ positive_part + (1.0 - positive_part).T @ (1.0 - positive_part)
        distance = Y.shape[0] - agreements  # Hamming distance between label columns
        np.fill_diagonal(distance, np.inf)
        nearest = np.argsort(distance, axis=1, kind="stable")[:, : self.n_privileged]
        mask = np.zeros((n_labels, n_labels), dtype=bool)
        mask[np.repeat(np.arange(n_labels), self.n_privileged), nearest.ravel()] = True
        return mask
