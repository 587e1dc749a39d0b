"""Labels that take one value only in a training part: refuse them, or predict them constant.

A label that is never (or always) relevant in the rows a model is fitted on cannot be
learned: every registered method refuses such a column
(:func:`multilabel_core.validation.check_Y` with ``require_both_classes``).  Random
splits of data with rare labels meet it (a label with one relevant row lands in a test
part), and so do the inner folds of the hyper-parameter search even when the outer
training part holds both values.  The experiment option ``constant_labels`` decides:

* ``"refuse"`` (the default): the fit raises, so the split -- or the inner fold's grid
  point -- is recorded failed with that reason;
* ``"predict_constant"``: the method is fitted on the label columns that take both values
  in the training part, and each constant column is predicted at its training value for
  every test row.  Its decision score keeps the ranking measures defined: on a test part
  whose fitted scores have minimum ``m`` and maximum ``M``, a never-relevant label scores
  ``min(m, 0) - max(1, |m|)`` on every row and an always-relevant one
  ``max(M, 0) + max(1, |M|)``.  So on each row a never-relevant label is ranked strictly
  below every fitted label and an always-relevant one strictly above (constant labels of
  the same value tie with each other: nothing orders them); the signs agree with the
  ``score > 0`` decision rule; and the column is one value, so a label-wise measure (macro
  AUC) sees no information about that label (ties: 1/2) instead of an arbitrary order.

Which labels were constant is never hidden: every record carries them (``constant_labels``),
and the report and the command line count them per dataset (docs/experiments.md).
"""

from __future__ import annotations

import numpy as np

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
    """``value`` if it is one of :data:`CONSTANT_LABELS`; ValueError naming them otherwise."""
    if not isinstance(value, str) or value not in CONSTANT_LABELS:
        raise ValueError(f"constant_labels must be one of {', '.join(CONSTANT_LABELS)}; got {value!r}")
    return value


def constant_columns(Y) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, values)`` of the columns of ``Y`` (n, L) that take one value (0 or 1) only."""
    Y = np.asarray(Y)
    counts = Y.sum(axis=0)
    constant = np.flatnonzero((counts == 0) | (counts == Y.shape[0]))
    return constant, (counts[constant] > 0).astype(np.int8)


def constant_scores(fitted_scores: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The scores of constant labels of ``values`` (0/1) beside ``fitted_scores`` (module docstring).

    Only the finite fitted scores set the bounds; non-finite ones are left for the
    metrics to refuse, as they would be without constant labels.  ValueError when the
    finite scores reach the end of the float range, where no finite score lies beyond.
    """
    finite = fitted_scores[np.isfinite(fitted_scores)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    with np.errstate(over="ignore"):  # beyond the float range: the next float, checked below
        below = min(low, 0.0) - max(1.0, abs(low))
        above = max(high, 0.0) + max(1.0, abs(high))
        if not np.isfinite(below):
            below = float(np.nextafter(low, -np.inf))
        if not np.isfinite(above):
            above = float(np.nextafter(high, np.inf))
    scores = np.where(np.asarray(values) > 0, above, below)
    if not np.all(np.isfinite(scores)):
        raise ValueError("the fitted labels' scores reach the float range: no finite score ranks a constant label")
    return scores


class PartialModel:
    """A model fitted on some label columns, predicting the others at constant values.

    ``model`` is the fitted estimator of the columns ``fitted``; ``constant`` are the other
    columns and ``values`` their training values.  Its :meth:`decision_function` and
    :meth:`predict` give all ``n_labels`` columns in the data's order.
    """

    def __init__(self, model, n_labels: int, fitted, constant, values):
        self.model = model
        self.n_labels = int(n_labels)
        self.fitted = np.asarray(fitted, dtype=np.intp)
        self.constant = np.asarray(constant, dtype=np.intp)
        self.values = np.asarray(values, dtype=np.int8)

    def _full(self, fitted_part: np.ndarray, constant_part: np.ndarray, dtype) -> np.ndarray:
        full = np.empty((fitted_part.shape[0], self.n_labels), dtype=dtype)
        full[:, self.fitted] = fitted_part
        full[:, self.constant] = constant_part
        return full

    def decision_function(self, X) -> np.ndarray:
        scores = np.asarray(self.model.decision_function(X), dtype=np.float64)
        return self._full(scores, constant_scores(scores, self.values), np.float64)

    def predict(self, X) -> np.ndarray:
        predictions = np.asarray(self.model.predict(X))
        return self._full(predictions, self.values, predictions.dtype)


def fit_labels(fit, Y_fit, constant_labels: str):
    """Fit through ``fit(Y_columns)`` as ``constant_labels`` says; returns the predictor.

    ``fit`` fits the model on the given label columns of the training rows and returns
    the fitted model.  Under ``"refuse"``, or when no column of ``Y_fit`` is constant, the
    model is fitted on every column (a constant one raises in the method, as it always
    did) and returned; under ``"predict_constant"`` it is fitted on the varying columns
    and wrapped in a :class:`PartialModel`.  ValueError when every column is constant:
    there is nothing left to fit.
    """
    check_constant_labels(constant_labels)
    constant, values = constant_columns(Y_fit)
    if constant_labels == "refuse" or constant.size == 0:
        return fit(Y_fit)
    n_labels = Y_fit.shape[1]
    fitted = np.setdiff1d(np.arange(n_labels), constant)
    if fitted.size == 0:
        raise ValueError(f"all {n_labels} label columns are constant in the training part: nothing to fit")
    return PartialModel(fit(Y_fit[:, fitted]), n_labels, fitted, constant, values)


def embed_square(matrix, fitted, n_labels: int, fill):
    """An (n_labels, n_labels) array with ``matrix`` (over the labels ``fitted``) in place, ``fill`` elsewhere."""
    matrix = np.asarray(matrix)
    full = np.full((n_labels, n_labels), fill, dtype=np.result_type(matrix.dtype, np.asarray(fill).dtype))
    full[np.ix_(fitted, fitted)] = matrix
    return full
