"""BRkNN and its extensions BRkNN-a and BRkNN-b (Spyromitros, Tsoumakas & Vlahavas 2008).

Spyromitros, Tsoumakas & Vlahavas, *An Empirical Study of Lazy Multilabel Classification
Algorithms*, Proc. 5th Hellenic Conference on Artificial Intelligence (SETN 2008).  BRkNN is
binary relevance with a k-nearest-neighbour classifier per label, computed with one neighbour
search shared by all labels.  With N(x) the ``k`` training rows nearest to x
(Euclidean, equidistant rows in training order: :mod:`.neighbors`) and y_a(l) in {0, 1}, the
confidence of label l is the share of the neighbours that have it,

    c_x(l) = (1 / k) sum_{a in N(x)} y_a(l),

and plain BRkNN predicts every label with c_x(l) >= 1/2 (a neighbour majority, an exact half
included as in Mulan, the authors' implementation).  The label set can come out empty; the
paper's two extensions never output one:

* **BRkNN-a**: when no label reaches 1/2, the single label of highest confidence;
* **BRkNN-b**: the s labels of highest confidence, where s is the average size of the
  neighbours' label sets, rounded to the nearest integer (halves up, as Java's Math.round in
  Mulan): s = floor(sum_{a in N(x)} |Y_a| / k + 1/2).  s is 0 only when every neighbour has an
  empty label set.

*Ties.*  The paper breaks ties between equally confident labels arbitrarily (Mulan at random).
Here they are broken by a fixed order of preference, so that a fit is reproducible: the label
more frequent in the training rows first, then the lower label index.  Let p(l) in
{0, ..., L - 1} be the position of label l in that order and

    v_x(l) = k c_x(l) + (L - 1 - p(l)) / (2 L),

the neighbour count plus a tie-breaker below 1/2, so that the v_x(l) of a row are distinct and
ordered as the confidences with ties broken by preference.

*Scores.*  ``decision_function`` is ``t_x(l) = (v_x(l) - theta_x) / k``, a confidence minus a
per-row cut, positive exactly for the predicted labels and ordered within a row as v:

* plain and -a, when some label reaches 1/2: theta_x = k/2 - 1/(4L), the same cut for every
  row (a count n >= k/2 gives v >= k/2, a count n < k/2 gives v <= k/2 - 1/(2L));
* -a, when none does: theta_x between the two largest v (the top label alone is positive);
* -b: theta_x between the s-th and (s+1)-th largest v (beyond the ends for s = 0 and s = L).

So ``predict = [decision_function > 0]`` is the method's rule and the ranking measures see the
confidences with the tie-break.  :meth:`BRkNN.confidences` returns c itself.

The search at predict time is over all training rows: scoring a training row counts the row
itself among its neighbours, as any k-NN classifier does (ML-kNN leaves it out only for the
counts it learns in ``fit``).  A training set of fewer than k rows makes every row a neighbour
(k = m, ``n_neighbors_``), with a warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.validation import COUNT

from .mlknn import neighbour_counts
from .neighbors import nearest_neighbors

__all__ = ["BRkNN", "BRkNNa", "BRkNNb", "brknn_scores"]

#: The rules: the paper's plain BRkNN and its two extensions (module docstring).
VARIANTS = ("plain", "a", "b")


def label_preference(Y) -> np.ndarray:
    """p(l): each label's position in the tie-break order (more frequent in Y first, then lower index)."""
    frequency = np.asarray(Y).sum(axis=0)
    order = np.lexsort((np.arange(len(frequency)), -frequency))
    position = np.empty(len(frequency), dtype=np.intp)
    position[order] = np.arange(len(frequency))
    return position


def brknn_scores(counts, set_sizes, k: int, preference, variant: str) -> np.ndarray:
    """Compute the scores t_x(l) of the module docstring from the neighbour counts.

    Parameters
    ----------
    counts : ndarray of shape (n, L), int
        k c_x(l): how many of each row's k neighbours have each label.
    set_sizes : ndarray of shape (n,), int
        The sum over the row's neighbours of their label-set sizes (BRkNN-b's s is its rounded
        mean); read only by the ``"b"`` variant.
    k : int
        The neighbours per row.
    preference : ndarray of shape (L,), int
        p(l), the tie-break position of each label (:func:`label_preference`).
    variant : {"plain", "a", "b"}
        Plain BRkNN (cut at half the neighbours), BRkNN-a (else the single best label) or
        BRkNN-b (the s best labels).

    Returns
    -------
    ndarray of shape (n, L), float64
        t_x(l): the tie-broken count minus the row's cut, divided by k; positive exactly for
        the labels the variant predicts.
    """
    n_rows, n_labels = counts.shape
    values = counts + (n_labels - 1 - np.asarray(preference)) / (2.0 * n_labels)
    cut = np.full(n_rows, k / 2.0 - 1.0 / (4 * n_labels))
    if variant == "a":
        empty = ~(2 * counts >= k).any(axis=1)
        if empty.any():
            cut[empty] = _cut_below_rank(values[empty], np.ones(empty.sum(), dtype=np.intp))
    elif variant == "b":
        # floor(total / k + 1/2) in integers: rounds halves up and never meets a rounding error.
        size = (2 * np.asarray(set_sizes, dtype=np.int64) + k) // (2 * k)
        cut = _cut_below_rank(values, np.minimum(size, n_labels))
    return (values - cut[:, None]) / k


def _cut_below_rank(values, s) -> np.ndarray:
    """Per row, a value between the s-th and (s+1)-th largest of ``values`` (one beyond the ends for s = 0, L)."""
    ordered = -np.sort(-values, axis=1)
    padded = np.column_stack([ordered[:, :1] + 1.0, ordered, ordered[:, -1:] - 1.0])
    rows = np.arange(len(values))
    return (padded[rows, s] + padded[rows, s + 1]) / 2.0


class BRkNN(MultiLabelEstimator):
    """Plain BRkNN: every label at least half of the k nearest neighbours have (not registered).

    The registered methods are its two extensions, :class:`BRkNNa` (``brknn_a``) and
    :class:`BRkNNb` (``brknn_b``), which never predict an empty label set; this class is their
    common part and the paper's plain rule, for use from Python.

    Parameters
    ----------
    k : int, default 10
        Neighbours per row.
    n_jobs : int or None, default None
        Threads of the neighbour search of dense data (-1 for all cores).
    thresholding : str or Threshold, default "zero"
        The threshold part; ``"zero"`` is the method's own rule (module docstring).

    Attributes
    ----------
    X_fit_, Y_fit_ : the training rows and labels (a lazy learner keeps them).
    n_neighbors_ : int
        The k used: ``k``, or m for a training set of m < k rows.
    label_preference_ : (L,) int
        p(l), each label's position in the tie-break order (more frequent first).

    Notes
    -----
    BRkNN solves no optimisation problem, so it has no ``certificate_``
    (``certified = False`` tells the conformance checks).  The module docstring gives the
    definitions, the tie-break and the scores.
    """

    #: Read by :func:`multilabel_core.testing.checks.check_method`: no certificate to check.
    certified = False
    #: The prediction rule of the class (module docstring).
    variant = "plain"
    #: What ``load_model`` checks of a fitted model (:func:`multilabel_core.persistence.declared_state`).
    fitted_state = {
        "n_neighbors_": "int>=1",
        "X_fit_": "float[n, d] | sparse float[n, d]",
        "Y_fit_": "int8[n, L]",
        "label_preference_": "int[L] in [0, L)",
    }
    _parameter_constraints = {"k": COUNT}

    def __init__(self, k=10, n_jobs=None, thresholding="zero"):
        self.k = k
        self.n_jobs = n_jobs
        self.thresholding = thresholding

    def _fit(self, X, Y):
        m = Y.shape[0]
        self.n_neighbors_ = min(int(self.k), m)
        if self.n_neighbors_ < self.k:
            warnings.warn(f"k={self.k} neighbours need {self.k} training rows, got {m}: every row is a neighbour "
                          f"(k = {m})", UserWarning, stacklevel=3)  # fmt: skip
        self.X_fit_, self.Y_fit_ = X.copy(), Y.copy()  # the caller's arrays may change after fit
        self.label_preference_ = label_preference(Y)

    def _neighbour_counts(self, X):
        neighbours = nearest_neighbors(self.X_fit_, X, self.n_neighbors_, n_jobs=self.n_jobs)
        counts = neighbour_counts(self.Y_fit_, neighbours)
        return counts, counts.sum(axis=1)

    def _decision_function(self, X):
        counts, set_sizes = self._neighbour_counts(X)
        return brknn_scores(counts, set_sizes, self.n_neighbors_, self.label_preference_, self.variant)

    def confidences(self, X) -> np.ndarray:
        """Compute the confidences c_x(l): the share of each row's k neighbours that have each label.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            The rows to score (validated as at predict).

        Returns
        -------
        ndarray of shape (n, L), float64
            c_x(l) in [0, 1], the fraction of the row's ``n_neighbors_`` nearest training rows
            that have label l.
        """
        counts, _ = self._neighbour_counts(self._validate_test_X(X))
        return counts / float(self.n_neighbors_)


class BRkNNa(BRkNN):
    """BRkNN-a (registered as ``brknn_a``): the labels at least half of the k nearest
    neighbours have, or, when there is none, the single most confident label.

    Spyromitros, Tsoumakas & Vlahavas, An Empirical Study of Lazy Multilabel Classification
    Algorithms, SETN 2008: the predicted set is {l : c_x(l) >= 1/2}, or the label of
    largest c_x(l) when that set is empty, with c_x(l) the share of the k nearest training rows
    that have label l.

    Parameters
    ----------
    k : int, default 10
        Neighbours per row.
    n_jobs : int or None, default None
        Threads of the neighbour search of dense data (-1 for all cores).
    thresholding : str or Threshold, default "zero"
        The threshold part; ``"zero"`` is the method's own rule.

    Attributes
    ----------
    X_fit_, Y_fit_ : the training rows and labels (a lazy learner keeps them).
    n_neighbors_ : int
        The k used: ``k``, or m for a training set of m < k rows.
    label_preference_ : (L,) int
        p(l), each label's position in the tie-break order (more frequent first).

    Notes
    -----
    ``decision_function`` is a confidence minus a per-row cut, positive exactly for the
    predicted labels; ties between equally confident labels go to the label more frequent in
    training, then to the lower index (module docstring of :mod:`.brknn`).  No optimisation
    problem, so no certificate (``certified = False``).
    """

    variant = "a"


class BRkNNb(BRkNN):
    """BRkNN-b (registered as ``brknn_b``): the s most confident labels, s the rounded mean
    size of the k nearest neighbours' label sets.

    Spyromitros, Tsoumakas & Vlahavas, An Empirical Study of Lazy Multilabel Classification
    Algorithms, SETN 2008: the s_x labels of largest c_x(l), with c_x(l) the share of
    the k nearest training rows that have label l and s_x = floor(mean neighbour label-set size
    + 1/2) (halves rounded up).

    Parameters
    ----------
    k : int, default 10
        Neighbours per row.
    n_jobs : int or None, default None
        Threads of the neighbour search of dense data (-1 for all cores).
    thresholding : str or Threshold, default "zero"
        The threshold part; ``"zero"`` is the method's own rule.

    Attributes
    ----------
    X_fit_, Y_fit_ : the training rows and labels (a lazy learner keeps them).
    n_neighbors_ : int
        The k used: ``k``, or m for a training set of m < k rows.
    label_preference_ : (L,) int
        p(l), each label's position in the tie-break order (more frequent first).

    Notes
    -----
    ``decision_function`` is a confidence minus a per-row cut, positive exactly for the
    predicted labels; ties between equally confident labels go to the label more frequent in
    training, then to the lower index (module docstring of :mod:`.brknn`).  No optimisation
    problem, so no certificate (``certified = False``).
    """

    variant = "b"
