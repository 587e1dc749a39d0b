"""Labels that take one value only in a training part: refuse them, or predict them constant.

Every estimator accepts a label column that is constant on its training rows
(:class:`multilabel_core.MultiLabelEstimator`: the method learns the other labels, the
constant one predicts its training value, counted in a ``ConstantLabelWarning`` and in the
fitted ``constant_labels_``).  Random splits of data with rare labels meet such labels (a
label with one relevant row lands in a test part), and so do the inner folds of the
hyper-parameter search even when the outer training part holds both values.  The experiment
option ``constant_labels`` decides what an experiment does with them:

* ``"refuse"`` (the default): the split -- or the inner fold's grid point -- is recorded
  failed, with the reason ``Y label column j has one class only``, before the method is
  fitted: a run that did not ask for constant labels does not measure a model that could
  not learn some of its labels;
* ``"predict_constant"``: the method is fitted on every column and handles the constant
  ones by its estimator's rule; the run then rescores each constant column on the test part
  so that the ranking measures see it in its place: on a test part whose learned scores
  have minimum ``m`` and maximum ``M``, a never-relevant label scores
  ``min(m, 0) - max(1, |m|)`` on every row and an always-relevant one
  ``max(M, 0) + max(1, |M|)`` (:func:`multilabel_core.estimator.constant_label_scores`, the
  estimator's rule applied to the test part's scores instead of the training rows').  So on
  each row a never-relevant label is ranked strictly below every learned label and an
  always-relevant one strictly above (constant labels of the same value tie with each
  other: nothing orders them); the signs agree with the predictions, which are the
  estimator's (its training value); and the column is one value, so a label-wise measure
  (macro AUC) sees no information about that label (ties: 1/2) instead of an arbitrary
  order.  A training part whose every label is constant is refused all the same: the
  estimator would fit nothing, and the run would measure no model.

Which labels were constant is never hidden: every record carries them (``constant_labels``),
and the report and the command line count them per dataset (docs/experiments.md).
"""

from __future__ import annotations

import numpy as np

from ..estimator import constant_label_scores
from ..validation import check_Y

__all__ = [
    "CONSTANT_LABELS",
    "DEFAULT_CONSTANT_LABELS",
    "PartialModel",
    "check_constant_labels",
    "constant_columns",
    "constant_scores",
    "embed_square",
    "fit_labels",
]

#: The values of the experiment option ``constant_labels``.
CONSTANT_LABELS = ("refuse", "predict_constant")
DEFAULT_CONSTANT_LABELS = "refuse"


def check_constant_labels(value) -> str:
    """Check the ``constant_labels`` option.

    Parameters
    ----------
    value : object
        The option's value.

    Returns
    -------
    str
        ``value``, one of :data:`CONSTANT_LABELS`.

    Raises
    ------
    ValueError
        Naming the valid values, for anything else.
    """
    if not isinstance(value, str) or value not in CONSTANT_LABELS:
        raise ValueError(f"constant_labels must be one of {', '.join(CONSTANT_LABELS)}; got {value!r}")
    return value


def constant_columns(Y) -> tuple[np.ndarray, np.ndarray]:
    """Find the columns of ``Y`` that take one value (0 or 1) only.

    Parameters
    ----------
    Y : array-like of shape (n, L)
        Binary labels.

    Returns
    -------
    indices : ndarray of int
        The constant columns.
    values : ndarray of int8
        The value each holds.
    """
    Y = np.asarray(Y)
    counts = Y.sum(axis=0)
    constant = np.flatnonzero((counts == 0) | (counts == Y.shape[0]))
    return constant, (counts[constant] > 0).astype(np.int8)


def constant_scores(fitted_scores: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Score the constant labels of ``values`` (0/1) beside ``fitted_scores`` (module docstring).

    Only the finite fitted scores set the bounds; non-finite ones are left for the metrics to
    refuse, as they would be without constant labels.

    Parameters
    ----------
    fitted_scores : ndarray of shape (n, k)
        The learned labels' scores on the rows of one test part.
    values : ndarray of shape (c,)
        The constant labels' training values (0 or 1).

    Returns
    -------
    ndarray of shape (c,)
        One score per constant label, the same for every row: with ``low`` and ``high`` the
        least and the greatest of the finite fitted scores and 0, ``low - max(1, |low|)`` for a
        0 and ``high + max(1, |high|)`` for a 1.

    Raises
    ------
    ValueError
        When the finite scores reach the end of the float range, where no finite score lies
        beyond.
    """
    return constant_label_scores(fitted_scores, values)


class PartialModel:
    """Wrap a model fitted with some label columns constant, its constant columns rescored per test part.

    :meth:`decision_function` gives the model's scores with each constant column replaced by
    :func:`constant_scores` of the learned columns of those rows; :meth:`predict` is the model's.

    Parameters
    ----------
    model : MultiLabelEstimator
        The fitted estimator (its outputs have all ``n_labels`` columns).
    n_labels : int
        The number of labels L.
    fitted : ndarray of int
        The labels it learned.
    constant : ndarray of int
        The labels constant in training.
    values : ndarray of int8
        Their training values (0 or 1).
    """

    def __init__(self, model, n_labels: int, fitted, constant, values):
        self.model = model
        self.n_labels = int(n_labels)
        self.fitted = np.asarray(fitted, dtype=np.intp)
        self.constant = np.asarray(constant, dtype=np.intp)
        self.values = np.asarray(values, dtype=np.int8)

    def decision_function(self, X) -> np.ndarray:
        """Return the model's scores on ``X`` with the constant columns rescored on these rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The scores, float64.
        """
        scores = np.array(self.model.decision_function(X), dtype=np.float64)
        scores[:, self.constant] = constant_scores(scores[:, self.fitted], self.values)
        return scores

    def predict(self, X) -> np.ndarray:
        """Return the model's own predictions on ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The model's {0, 1} predictions.
        """
        return np.asarray(self.model.predict(X))


def fit_labels(fit, Y_fit, constant_labels: str):
    """Fit through ``fit(Y_fit)`` as ``constant_labels`` says.

    Parameters
    ----------
    fit : callable
        ``fit(Y_fit)`` fits the model on the training rows' labels and returns the fitted model.
    Y_fit : ndarray of shape (n, L)
        The training rows' labels.
    constant_labels : {"refuse", "predict_constant"}
        When no column of ``Y_fit`` is constant the model is fitted and returned.  Otherwise,
        under ``"refuse"`` nothing is fitted; under ``"predict_constant"`` the model is fitted on
        every column (the estimator predicts the constant ones itself) and wrapped in a
        :class:`PartialModel`.

    Returns
    -------
    object
        The fitted model, or a :class:`PartialModel` around it.

    Raises
    ------
    ValueError
        Under ``"refuse"``, the error of :func:`~multilabel_core.validation.check_Y` with
        ``require_both_classes`` naming the first constant column; when every column is
        constant: there is nothing to fit; for an unknown option.
    """
    check_constant_labels(constant_labels)
    constant, values = constant_columns(Y_fit)
    if constant.size == 0:
        return fit(Y_fit)
    if constant_labels == "refuse":
        check_Y(Y_fit, require_both_classes=True)
    n_labels = Y_fit.shape[1]
    fitted = np.setdiff1d(np.arange(n_labels), constant)
    if fitted.size == 0:
        raise ValueError(f"all {n_labels} label columns are constant in the training part: nothing to fit")
    return PartialModel(fit(Y_fit), n_labels, fitted, constant, values)


def embed_square(matrix, fitted, n_labels: int, fill):
    """Place ``matrix`` (over the labels ``fitted``) in an (n_labels, n_labels) array, ``fill`` elsewhere.

    Parameters
    ----------
    matrix : array-like of shape (k, k)
        A label-by-label matrix over the learned labels.
    fitted : array-like of int of length k
        The learned labels' indices.
    n_labels : int
        The number of labels L.
    fill : scalar
        The value of every other entry.

    Returns
    -------
    ndarray of shape (n_labels, n_labels)
        The embedded matrix, of the common dtype of ``matrix`` and ``fill``.
    """
    matrix = np.asarray(matrix)
    full = np.full((n_labels, n_labels), fill, dtype=np.result_type(matrix.dtype, np.asarray(fill).dtype))
    full[np.ix_(fitted, fitted)] = matrix
    return full
