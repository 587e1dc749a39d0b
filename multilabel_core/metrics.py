"""Multi-label evaluation measures (MLRL section 5.1, eq. 24-28, plus F1, AUC, subset accuracy).

Notation: n rows, L labels; for row i, ``Y_i`` is the set of relevant labels, ``Ybar_i``
its complement, ``f(x_i, j)`` the score (decision value) of label j and
``rank(j) = |{k : f(x_i, k) >= f(x_i, j)}|`` its *pessimistic* rank: a label tied with
others is ranked below all of them, so ties never flatter a model (scikit-learn's
``coverage_error`` and ``label_ranking_average_precision_score`` rank the same way).

Inputs: ``Y_true`` and ``Y_pred`` are {0, 1} indicator matrices (dense or scipy.sparse),
``scores`` a finite float (n, L) matrix.  Every bad input raises ValueError.

Conventions, each chosen once for all measures (docs/metrics.md discusses them):

* The ranking measures (one-error, coverage, ranking loss, average precision) average
  over the rows with at least one relevant label; a row with none has nothing to rank
  and is left out (scikit-learn instead counts it as LRAP 1 and ranking loss 0).  When
  no row qualifies the measure is NaN.
* A row with every label relevant has ranking loss 0 (no pair can be misordered), as in
  scikit-learn; its coverage is L - 1 and its average precision 1.
* One-error with several labels tied at the top score is the expected error when the
  tie is broken at random: the fraction of irrelevant labels among the top-tied ones.
* F1 with 0/0 (no relevant and no predicted positive) counts as 0, as scikit-learn's
  ``f1_score(..., zero_division=0)``.
* Macro AUC skips label columns with a single class and is NaN when none is left; tied
  scores count 1/2 (the Mann-Whitney statistic).
"""

from __future__ import annotations

from functools import partial
from typing import Callable, NamedTuple

import numpy as np
from scipy.stats import rankdata

from ._ranking import ranking_statistics
from .validation import check_X, check_Y

__all__ = [
    "METRICS",
    "Metric",
    "average_precision",
    "check_metric_names",
    "coverage",
    "evaluate",
    "hamming_loss",
    "macro_auc",
    "macro_f1",
    "micro_f1",
    "one_error",
    "ranking_loss",
    "subset_accuracy",
]

# Column of each measure in the output of the Cython ``ranking_statistics`` kernel.
_COVERAGE, _RANKING_LOSS, _AVERAGE_PRECISION, _ONE_ERROR = range(4)


# ----------------------------------------------------------------------------- validation
def _check_targets(Y_true, other, other_name: str, *, scores: bool):
    """Validate ``Y_true`` and a same-shaped matrix of predictions or scores."""
    Y_true = check_Y(Y_true, name="Y_true")
    if Y_true.shape[0] == 0:
        raise ValueError("Y_true has no rows")
    if scores:
        other = check_X(other, name=other_name, accept_sparse=False, dtype=(np.float64,))
    else:
        other = check_Y(other, name=other_name)
    if other.shape != Y_true.shape:
        raise ValueError(f"Y_true has shape {Y_true.shape} but {other_name} has shape {other.shape}")
    return Y_true, other


# ------------------------------------------------------------------- prediction measures
def hamming_loss(Y_true, Y_pred) -> float:
    """Compute the fraction of misclassified (row, label) pairs.

    ``1/(nL) sum_i |h(x_i) xor Y_i|`` (Zhang & Yeung, "Multi-Label Relationship Learning", section
    5.1, eq. 24).

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the predicted labels.

    Returns
    -------
    float
        The Hamming loss in [0, 1], lower is better; 0 for a perfect prediction.

    Raises
    ------
    ValueError
        For non-binary inputs or shapes that differ.
    """
    Y_true, Y_pred = _check_targets(Y_true, Y_pred, "Y_pred", scores=False)
    return float(np.mean(Y_true != Y_pred))


def subset_accuracy(Y_true, Y_pred) -> float:
    """Compute the fraction of rows whose predicted label set equals the true one exactly.

    A row counts only when every one of its L labels is right.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the predicted labels.

    Returns
    -------
    float
        The subset accuracy in [0, 1], higher is better.

    Raises
    ------
    ValueError
        For non-binary inputs or shapes that differ.
    """
    Y_true, Y_pred = _check_targets(Y_true, Y_pred, "Y_pred", scores=False)
    return float(np.mean(np.all(Y_true == Y_pred, axis=1)))


def _confusion(Y_true, Y_pred):
    """Per-label true positives, false positives and false negatives."""
    Y_true, Y_pred = _check_targets(Y_true, Y_pred, "Y_pred", scores=False)
    t, p = Y_true.astype(bool), Y_pred.astype(bool)
    return (t & p).sum(axis=0), (~t & p).sum(axis=0), (t & ~p).sum(axis=0)


def _f1(tp, fp, fn):
    """``2 TP / (2 TP + FP + FN)``, with 0/0 taken as 0 (scikit-learn's ``zero_division=0``)."""
    tp, denominator = np.asarray(tp, dtype=float), np.asarray(2 * tp + fp + fn, dtype=float)
    return np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)


def micro_f1(Y_true, Y_pred) -> float:
    """Compute the F1 of the counts pooled over all labels: ``2 TP / (2 TP + FP + FN)``.

    The counts of every (row, label) pair are summed before the ratio is taken.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the predicted labels.

    Returns
    -------
    float
        The micro F1 in [0, 1], higher is better; 0 when there is no relevant and no predicted
        label at all.

    Raises
    ------
    ValueError
        For non-binary inputs or shapes that differ.
    """
    tp, fp, fn = _confusion(Y_true, Y_pred)
    return float(_f1(tp.sum(), fp.sum(), fn.sum()))


def macro_f1(Y_true, Y_pred) -> float:
    """Compute the unweighted mean over labels of the per-label F1 ``2 TP_j / (2 TP_j + FP_j + FN_j)``.

    A label never relevant and never predicted scores 0 (0/0 -> 0).

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the predicted labels.

    Returns
    -------
    float
        The macro F1 in [0, 1], higher is better.

    Raises
    ------
    ValueError
        For non-binary inputs or shapes that differ.
    """
    return float(np.mean(_f1(*_confusion(Y_true, Y_pred))))


# ---------------------------------------------------------------------- score measures
def macro_auc(Y_true, scores) -> float:
    """Compute the mean over labels of the area under the ROC curve of each label's scores.

    Per label j with P positives and N negatives (the Mann-Whitney statistic)::

        AUC_j = (sum of the ranks of the positives - P (P + 1) / 2) / (P N)

    with ranks 1..n over the column's scores and tied scores sharing their mean rank,
    i.e. a tied positive/negative pair counts 1/2.  Columns with a single class have no AUC
    and are skipped.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).

    Returns
    -------
    float
        The macro AUC in [0, 1], higher is better; NaN when every column is skipped.

    Raises
    ------
    ValueError
        For a non-binary ``Y_true``, non-finite ``scores`` or shapes that differ.
    """
    Y_true, scores = _check_targets(Y_true, scores, "scores", scores=True)
    positives = Y_true.sum(axis=0)
    negatives = Y_true.shape[0] - positives
    both = (positives > 0) & (negatives > 0)
    if not both.any():
        return float("nan")
    P, N = positives[both].astype(float), negatives[both].astype(float)
    ranks = rankdata(scores[:, both], axis=0)
    rank_sum = np.sum(ranks * Y_true[:, both], axis=0)
    return float(np.mean((rank_sum - P * (P + 1) / 2) / (P * N)))


def _ranking_column(Y_true, scores, column: int) -> float:
    """Mean of one column of the Cython kernel over the rows where it is defined."""
    Y_true, scores = _check_targets(Y_true, scores, "scores", scores=True)
    values = ranking_statistics(np.ascontiguousarray(scores), np.ascontiguousarray(Y_true))[:, column]
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")


def one_error(Y_true, scores) -> float:
    """Compute the fraction of rows whose top-scored label is irrelevant.

    The one-error of Zhang & Yeung, "Multi-Label Relationship Learning", section 5.1, eq. 25. With t
    labels tied at the top score of which e are irrelevant, a row counts e / t: the expected one-
    error when the tie is broken uniformly at random. Rows with no relevant label are left out.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).

    Returns
    -------
    float
        The one-error in [0, 1], lower is better.  NaN when no row has a relevant label.

    Raises
    ------
    ValueError
        For a non-binary ``Y_true``, non-finite ``scores`` or shapes that differ.
    """
    return _ranking_column(Y_true, scores, _ONE_ERROR)


def coverage(Y_true, scores, normalize: bool = False) -> float:
    """Compute the coverage: how far down the ranking the relevant labels reach.

    The mean of ``max_{j in Y_i} rank(j) - 1``, the steps down the ranking needed to cover Y_i
    (Zhang & Yeung, "Multi-Label Relationship Learning", section 5.1, eq. 26). Equals scikit-learn's
    ``coverage_error - 1`` on rows with a relevant label. Rows with no relevant label are left out.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).
    normalize : bool, default=False
        Divide by L, giving values in [0, 1) as in the PrML and LIEML tables.

    Returns
    -------
    float
        The coverage, lower is better: in [0, L - 1], or in [0, 1) with ``normalize=True``.  NaN
        when no row has a relevant label.

    Raises
    ------
    ValueError
        For a non-binary ``Y_true``, non-finite ``scores`` or shapes that differ.
    """
    value = _ranking_column(Y_true, scores, _COVERAGE)
    return value / np.shape(scores)[1] if normalize else value


def ranking_loss(Y_true, scores) -> float:
    """Compute the mean fraction of (relevant, irrelevant) label pairs ranked wrongly.

    The ranking loss of Zhang & Yeung, "Multi-Label Relationship Learning", section 5.1, eq. 27. A
    pair (k, l) in Y_i x Ybar_i counts as misordered when ``f(x_i, k) <= f(x_i, l)``, so a tie is an
    error. Rows with every label relevant score 0; rows with none are left out.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).

    Returns
    -------
    float
        The ranking loss in [0, 1], lower is better.  NaN when no row has a relevant label.

    Raises
    ------
    ValueError
        For a non-binary ``Y_true``, non-finite ``scores`` or shapes that differ.
    """
    return _ranking_column(Y_true, scores, _RANKING_LOSS)


def average_precision(Y_true, scores) -> float:
    """Compute the average precision of the rows' label rankings.

    The mean over rows of ``1/|Y_i| sum_{j in Y_i} |{k in Y_i : rank(k) <= rank(j)}| / rank(j)``
    (Zhang & Yeung, "Multi-Label Relationship Learning", section 5.1, eq. 28). Equals scikit-learn's
    ``label_ranking_average_precision_score`` on rows with a relevant label. Rows with none are left
    out.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).

    Returns
    -------
    float
        The average precision in [0, 1], higher is better; 1 for a ranking that puts every relevant
        label strictly above every irrelevant one.  NaN when no row has a relevant label.

    Raises
    ------
    ValueError
        For a non-binary ``Y_true``, non-finite ``scores`` or shapes that differ.
    """
    return _ranking_column(Y_true, scores, _AVERAGE_PRECISION)


# ------------------------------------------------------------------------- the table
class Metric(NamedTuple):
    """Describe a row of :data:`METRICS`: the function, its input kind, and its direction.

    Parameters
    ----------
    function : callable
        ``function(Y_true, inputs) -> float``, the measure.
    needs : {"scores", "predictions"}
        What it reads: "scores" (decision values) or "predictions" (a {0, 1} matrix).
    greater_is_better : bool
        Whether a higher value means a better model.
    """

    function: Callable[..., float]
    needs: str  # "scores" (decision values) or "predictions" ({0, 1} matrix)
    greater_is_better: bool


METRICS: dict[str, Metric] = {
    "hamming_loss": Metric(hamming_loss, "predictions", False),
    "one_error": Metric(one_error, "scores", False),
    "coverage": Metric(coverage, "scores", False),
    "coverage_normalized": Metric(partial(coverage, normalize=True), "scores", False),
    "ranking_loss": Metric(ranking_loss, "scores", False),
    "average_precision": Metric(average_precision, "scores", True),
    "micro_f1": Metric(micro_f1, "predictions", True),
    "macro_f1": Metric(macro_f1, "predictions", True),
    "macro_auc": Metric(macro_auc, "scores", True),
    "subset_accuracy": Metric(subset_accuracy, "predictions", True),
}


def check_metric_names(metrics) -> list[str]:
    """Check metric names against :data:`METRICS`.

    Parameters
    ----------
    metrics : iterable of str or None
        The names to check; None stands for every name of :data:`METRICS`.

    Returns
    -------
    list of str
        The names, in the order given (every name of :data:`METRICS` for None).

    Raises
    ------
    ValueError
        Listing the unknown names and the known ones.
    """
    names = list(METRICS) if metrics is None else list(metrics)
    unknown = [name for name in names if name not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {sorted(METRICS)}")
    return names


def evaluate(Y_true, scores, Y_pred=None, metrics=None) -> dict[str, float]:
    """Compute all (or the named) measures of :data:`METRICS`.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_labels)
        The {0, 1} indicator matrix of the relevant labels.
    scores : array-like of shape (n_samples, n_labels)
        Finite decision values, higher meaning more relevant (dense only).
    Y_pred : array-like or sparse matrix of shape (n_samples, n_labels), optional
        The {0, 1} predictions the prediction measures read; None: ``scores > 0``, the decision
        rule of the max-margin models.
    metrics : iterable of str, optional
        Names from :data:`METRICS`; None: all, in its order.

    Returns
    -------
    dict of str to float
        Measure name -> value, in the order of ``metrics``.

    Raises
    ------
    ValueError
        For an unknown metric name or inputs a measure refuses.
    """
    names = check_metric_names(metrics)
    Y_true, scores = _check_targets(Y_true, scores, "scores", scores=True)
    Y_pred = (scores > 0).astype(np.int8) if Y_pred is None else _check_targets(Y_true, Y_pred, "Y_pred", scores=False)[1]
    inputs = {"scores": scores, "predictions": Y_pred}
    return {name: METRICS[name].function(Y_true, inputs[METRICS[name].needs]) for name in names}
