"""The concept network: which labels are joined by an edge (Zhang et al., section 2).

Zhang, Xue, Fan, Huang, Wu & Liu, *Multi-Kernel Multi-Label Learning with Max-Margin Concept
Network*, IJCAI 2011.  From the training labels Y in {0, 1}^(n x L), the empirical conditional
probabilities

    p(t|l) = sum_i y_l^i y_t^i / sum_i y_l^i,        p(l|t) = sum_i y_l^i y_t^i / sum_i y_t^i,

give the statistic ``s_lt = p(t|l) p(l|t) / (p(t|l) + p(l|t))``, and labels l != t are joined,
``l ~ t``, when ``s_lt > P0``.  The statistic is half the harmonic mean of the two conditional
probabilities, so it lies in [0, 1/2]: it is 1/2 exactly when the two labels always occur
together, and a threshold P0 >= 1/2 can give no edge at all (refused, since such a network is
the empty one whatever the data).  A label with no training positive has undefined conditional
probabilities: its statistic is taken as 0 and it has no edge, as has a pair that never
co-occurs (0 / 0 for the harmonic mean, 0 by continuity).
"""

from __future__ import annotations

import attrs
import numpy as np

from multilabel_core.base import LabelRelation
from multilabel_core.validation import check_scalar, check_Y

__all__ = ["MAX_STATISTIC", "ConceptGraph", "ConceptNetworkRelation", "concept_graph", "edge_statistic"]

#: The largest value the statistic takes (two labels that always co-occur): half the harmonic mean of 1 and 1.
MAX_STATISTIC = 0.5


def check_threshold(threshold) -> float:
    """P0 as a float in [0, 1/2); ValueError naming it otherwise (P0 >= 1/2 admits no edge)."""
    check_scalar(threshold, "threshold", low=0.0)
    if threshold >= MAX_STATISTIC:
        raise ValueError(
            f"threshold (P0) = {threshold!r} admits no edge: the statistic p(t|l) p(l|t) / (p(t|l) + p(l|t)) is "
            f"half a harmonic mean of probabilities, at most {MAX_STATISTIC}, so P0 must be below {MAX_STATISTIC}"
        )
    return float(threshold)


def edge_statistic(Y) -> np.ndarray:
    """Compute the edge statistic ``s_lt = p(t|l) p(l|t) / (p(t|l) + p(l|t))`` of every label pair.

    Written as ``c_lt / (n_l + n_t)`` with c_lt the co-occurrences and n_l the positives of
    label l (the two conditional probabilities c / n_l and c / n_t put over a common
    denominator), which is also the value by continuity where a label has no positive.

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n, L), 0/1
        The training labels.

    Returns
    -------
    ndarray of shape (L, L), float64
        The symmetric statistic, in [0, 1/2], 0 on the diagonal and for pairs that never
        co-occur.
    """
    Y = check_Y(Y).astype(np.float64)
    together = Y.T @ Y
    positives = np.diag(together).copy()
    denominator = positives[:, None] + positives[None, :]
    statistic = np.divide(together, denominator, out=np.zeros_like(together), where=denominator > 0)
    np.fill_diagonal(statistic, 0.0)
    return statistic


@attrs.frozen(eq=False)
class ConceptGraph:
    """Hold a concept network: which labels are joined, and the statistic that decided it.

    ``neighbours(l)`` lists N_l = {t : t ~ l} in increasing order; ``edges`` the ordered pairs
    (l, t) with t in N_l, i.e. each undirected edge twice, once for each local model it appears
    in (the local model of l carries w_lt, that of t carries w_tl: separate parameters).

    Parameters
    ----------
    adjacency : ndarray of shape (L, L), bool
        Symmetric, with an empty diagonal: entry (l, t) is l ~ t.
    statistic : ndarray of shape (L, L), float64
        The edge statistic s_lt (:func:`edge_statistic`).
    threshold : float
        P0: l ~ t exactly when s_lt > P0.
    """

    adjacency: np.ndarray
    statistic: np.ndarray
    threshold: float

    @property
    def n_labels(self) -> int:
        """L, the number of labels (the graph's nodes)."""
        return self.adjacency.shape[0]

    @property
    def n_edges(self) -> int:
        """Undirected edges l ~ t."""
        return int(np.count_nonzero(np.triu(self.adjacency, 1)))

    def neighbours(self, label: int) -> np.ndarray:
        """List the labels joined to ``label`` by an edge.

        Parameters
        ----------
        label : int
            The label l, in [0, L).

        Returns
        -------
        ndarray of shape (|N_l|,), int
            N_l = {t : t ~ l}, sorted.
        """
        return np.flatnonzero(self.adjacency[label])

    @property
    def edges(self) -> np.ndarray:
        """(E, 2) int array of the ordered pairs (l, t), t in N_l, sorted by l then t (E = 2 n_edges)."""
        return np.argwhere(self.adjacency)

    def as_dict(self) -> dict:
        """Write the graph as JSON-ready values.

        Returns
        -------
        dict
            ``"adjacency"`` (nested lists of 0/1), ``"statistic"`` (nested lists of floats) and
            ``"threshold"`` (P0).
        """
        return {
            "adjacency": self.adjacency.astype(int).tolist(),
            "statistic": self.statistic.tolist(),
            "threshold": self.threshold,
        }


def concept_graph(Y, threshold: float) -> ConceptGraph:
    """Build the concept network of the training labels for the threshold P0 (module docstring).

    Parameters
    ----------
    Y : array-like or sparse matrix of shape (n, L), 0/1
        The training labels.
    threshold : float
        P0 in [0, 1/2): labels l != t are joined when s_lt > P0.

    Returns
    -------
    ConceptGraph
        The graph, with its statistic and threshold.

    Raises
    ------
    ValueError
        When ``threshold`` is negative or at least 1/2 (which admits no edge).
    """
    threshold = check_threshold(threshold)
    statistic = edge_statistic(Y)
    adjacency = statistic > threshold
    np.fill_diagonal(adjacency, False)
    return ConceptGraph(adjacency=adjacency, statistic=statistic, threshold=threshold)


@attrs.frozen
class ConceptNetworkRelation(LabelRelation):
    """The label relation of the max-margin concept network: the co-occurrence graph of section 2.

    Not learned from the weights: it is fixed by the training labels, through :meth:`graph`.
    ``initial(L)`` and ``update`` return the relation as an (L, L) matrix -- the identity, the
    graph being unknown before the labels are seen -- so that the part composes like the core's
    relations; :class:`~.estimator.ConceptNetwork` uses :meth:`graph`.

    Parameters
    ----------
    threshold : float in [0, 1/2), default 0.05
        P0: labels l != t are joined when p(t|l) p(l|t) / (p(t|l) + p(l|t)) > P0.
    """

    threshold: float = attrs.field(default=0.05)

    learned = False
    # The graph is what this relation contributes: a solver that does not read it fits independent labels.
    state = ("graph",)

    def __attrs_post_init__(self):
        check_threshold(self.threshold)

    def initial(self, n_labels: int) -> np.ndarray:
        return np.eye(int(n_labels))

    def update(self, gram) -> np.ndarray:
        return self.initial(np.shape(gram)[0])

    def graph(self, Y) -> ConceptGraph:
        """Build the concept graph of the training labels at this relation's threshold P0.

        Parameters
        ----------
        Y : array-like or sparse matrix of shape (n, L), 0/1
            The training labels.

        Returns
        -------
        ConceptGraph
            The graph of :func:`concept_graph` at ``self.threshold``.
        """
        return concept_graph(Y, self.threshold)
