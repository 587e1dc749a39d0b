"""ML-kNN (Zhang & Zhou 2007): k nearest neighbours and a Bayesian decision per label.

Notation (the paper's, Fig. 1): ``m`` training rows x_i with labels y_i(l) in {0, 1},
``N(x)`` the ``k`` training rows nearest to x (Euclidean; a training row is not its own
neighbour, and of equidistant rows the earlier ones come first, as in the authors' reference
code, :mod:`.neighbors`), ``s`` the smoothing (s = 1 is Laplace's), and for a label l

    C_x(l) = sum_{a in N(x)} y_a(l),        the neighbours of x that have label l;

H_1^l the event that x has label l, H_0^l that it has not, E_j^l that exactly j of its
neighbours have it.  Training estimates, per label (steps 1-13 of Fig. 1):

    P(H_1^l) = (s + sum_i y_i(l)) / (2 s + m),          P(H_0^l) = 1 - P(H_1^l),
    P(E_j^l | H_1^l) = (s + c_l[j]) / (s (k + 1) + sum_p c_l[p]),
    P(E_j^l | H_0^l) = (s + c'_l[j]) / (s (k + 1) + sum_p c'_l[p]),

with c_l[j] the training rows that have label l and exactly j neighbours with it, and
c'_l[j] those that do not have it.  A new row x gets label l by the maximum a
posteriori rule (steps 14-18)

    y_x(l) = argmax_{b in {0, 1}} P(H_b^l) P(E_{C_x(l)}^l | H_b^l),

and the posterior r_x(l) = P(H_1^l | E_{C_x(l)}^l) ranks its labels.

Scores.  ``decision_function`` is the posterior log-odds

    t_x(l) = log[P(H_1^l) P(E_C^l | H_1^l)] - log[P(H_0^l) P(E_C^l | H_0^l)],

positive exactly when the MAP rule says relevant, increasing in r_x(l) (so it ranks
the labels as the posterior does: r = 1 / (1 + exp(-t))); :meth:`MLkNN.posterior` is r.
At an exact tie (t = 0, r = 1/2) the label is predicted irrelevant; scikit-multilearn's
MLkNN predicts it relevant.  (The posteriors are not named ``predict_proba``: scikit-learn
expects that of a binary classifier to return two columns per row.)

scikit-multilearn(-ng)'s MLkNN, by default, counts each training row among its own k
neighbours when it learns c and c' (its ``ignore_first_neighbours=0``): a relevant row then
always sees its own label, which inflates P(E_j | H_1) for large j.  That is not Fig. 1, whose
N(x_i) are the other training rows (the reference code sets the distance of a row to itself to
the largest float); its posteriors differ from these by up to 0.55 on emotions and 0.62 on yeast
(Mulan train/test splits, raw features, k = 10).  Leaving the row out, they agree wherever no
two training rows are at the same distance from a row (their search breaks such ties its own way).

A training set of k rows or fewer has fewer than k other rows: every other row is then a
neighbour, which is ML-kNN with k = m - 1 (``n_neighbors_``), and a warning says so.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.validation import POSITIVE, Interval

from .neighbors import nearest_neighbors

__all__ = ["MLkNN", "neighbour_counts"]


def neighbour_counts(Y_fit, neighbours) -> np.ndarray:
    """Count, for each query row, how many of its neighbours have each label.

    Parameters
    ----------
    Y_fit : ndarray or sparse matrix of shape (n_fit, L), 0/1
        The training label matrix.
    neighbours : ndarray of shape (n_query, k), int
        Each query row's k neighbours, as row indices into ``Y_fit``.

    Returns
    -------
    ndarray of shape (n_query, L), intp
        C: entry (i, l) is the number of row i's neighbours that have label l (0 to k).
    """
    n_query, k = neighbours.shape
    membership = sp.csr_matrix(
        (np.ones(n_query * k), neighbours.ravel(), np.arange(0, n_query * k + 1, k)),
        shape=(n_query, Y_fit.shape[0]),
    )
    return np.rint(membership @ Y_fit.astype(np.float64)).astype(np.intp)


class MLkNN(MultiLabelEstimator):
    """Multi-label k nearest neighbours (registered as ``mlknn``).

    Parameters
    ----------
    k : int, default 10
        Neighbours per row (the MLRL paper's setting).
    s : float, default 1.0
        Smoothing of the prior and likelihood estimates (> 0; 1 is Laplace's).
    n_jobs : int or None, default None
        Threads of the neighbour search of dense data (-1 for all cores).
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Attributes
    ----------
    X_fit_, Y_fit_ : the training rows and labels (a lazy learner keeps them).
    n_neighbors_ : the k used: ``k``, or m - 1 for a training set of k rows or fewer.
    prior_ : (L,) P(H_1^l).
    relevant_counts_, irrelevant_counts_ : (L, k + 1) c_l[j] and c'_l[j].
    likelihood_relevant_, likelihood_irrelevant_ : (L, k + 1) P(E_j^l | H_1^l) and P(E_j^l | H_0^l).

    Notes
    -----
    ML-kNN solves no optimisation problem, so it has no ``certificate_``
    (``certified = False`` tells the conformance checks).
    """

    #: Read by :func:`multilabel_core.testing.checks.check_method`: no certificate to check.
    certified = False
    _parameter_constraints = {"k": Interval(numbers.Integral, 1, None), "s": POSITIVE}

    def __init__(self, k=10, s=1.0, n_jobs=None, thresholding="zero"):
        self.k = k
        self.s = s
        self.n_jobs = n_jobs
        self.thresholding = thresholding

    def _fit(self, X, Y):
        s, m = float(self.s), Y.shape[0]
        k = min(int(self.k), m - 1)
        if k < self.k:
            warnings.warn(f"k={self.k} neighbours need {self.k + 1} training rows, got {m}: every other row is a "
                          f"neighbour (k = {k})", UserWarning, stacklevel=3)  # fmt: skip
        self.n_neighbors_ = k
        neighbours = nearest_neighbors(X, X, k, exclude_self=True, n_jobs=self.n_jobs)
        counts = neighbour_counts(Y, neighbours)
        self.X_fit_, self.Y_fit_ = X.copy(), Y.copy()  # the caller's arrays may change after fit
        self.prior_ = (s + Y.sum(axis=0)) / (2.0 * s + m)
        # cell (l, j) of a flat (L, k + 1) histogram, one per class of the row
        cells = np.arange(Y.shape[1]) * (k + 1) + counts
        relevant = Y.astype(bool)
        self.relevant_counts_ = self._histogram(cells[relevant])
        self.irrelevant_counts_ = self._histogram(cells[~relevant])
        self.likelihood_relevant_ = self._smoothed(self.relevant_counts_)
        self.likelihood_irrelevant_ = self._smoothed(self.irrelevant_counts_)

    def _histogram(self, cells) -> np.ndarray:
        width = self.n_neighbors_ + 1
        return np.bincount(cells, minlength=len(self.prior_) * width).reshape(len(self.prior_), width)

    def _smoothed(self, counts) -> np.ndarray:
        s = float(self.s)  # a Python int beyond int64 (2**70) would otherwise make numpy raise OverflowError
        return (s + counts) / (s * (self.n_neighbors_ + 1) + counts.sum(axis=1, keepdims=True))

    def _decision_function(self, X):
        neighbours = nearest_neighbors(self.X_fit_, X, self.n_neighbors_, n_jobs=self.n_jobs)
        counts = neighbour_counts(self.Y_fit_, neighbours)
        labels = np.arange(counts.shape[1])
        relevant = np.log(self.prior_) + np.log(self.likelihood_relevant_[labels, counts])
        irrelevant = np.log(1.0 - self.prior_) + np.log(self.likelihood_irrelevant_[labels, counts])
        return relevant - irrelevant

    def _predict_proba(self, X):
        # The MAP rule's posterior is a probability by construction (Zhang & Zhou, ML-KNN: A lazy learning approach
        # to multi-label learning, 2007: the rule compares P(H_1|E) with P(H_0|E)), so
        # MLkNN needs no calibration; its log-odds are the decision function.
        return expit(self._decision_function(X))

    def posterior(self, X) -> np.ndarray:
        """Compute the posteriors r_x(l) = P(H_1^l | E_{C_x(l)}^l).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n, L), float64
            The posterior probability that each row has each label, given how many of its
            neighbours have it (the logistic of ``decision_function``, the log posterior odds).
        """
        return expit(self.decision_function(X))
