"""The stock thresholds: how a fitted method's scores become labels (the sixth part).

Every registered method takes a hyper-parameter ``thresholding`` (a registered name, or a
:class:`~multilabel_core.base.Threshold` object); the threshold is fitted at the end of
``fit`` on the training rows only, applied by ``predict``, saved with the model and reported
in ``threshold_`` (and ``parts_["threshold"]`` for the composed methods).  Registered here:

``zero`` (:class:`ZeroThreshold`, the default)
    ``t_ij > 0``: the sign of a max-margin score.
``fixed`` (:class:`FixedThreshold`)
    ``t_ij > value`` for a constant given in advance: the midpoint 0.5 of a regression on the
    {0, 1} indicators (Huang, Li, Huang & Wu, *Learning Label Specific Features for Multi-Label
    Classification*, ICDM 2015).
``tuned_micro_f1``, ``tuned_macro_f1``, ``tuned_f1`` (:class:`TunedMicroF1`, :class:`TunedMacroF1`, :class:`TunedF1`)
    One threshold per label, tuned on out-of-fold decision values of the training rows
    (k-fold inner cross-validation, iterative stratification, seeded) to maximise the
    micro-averaged F1, the macro-averaged F1, or their mean (SCut: Yang, *A Study of
    Thresholding Strategies for Text Categorization*, SIGIR 2001; with cross-validated
    decision values as in Fan & Lin, *A Study on Threshold Selection for Multi-label
    Classification*, 2007).
``rank_cut`` (:class:`RankCut`)
    The k top-scoring labels of every row (Yang's RCut).
``proportional_cut`` (:class:`ProportionalCut`)
    Per label, the score threshold above which the training rows hold the label's training
    frequency (Yang's PCut, made a fixed threshold: it does not need the test set).

The ranking family registers ``learned_linear``, the threshold t(x) that is a linear function
of the row's scores (Gu, Li & Han, *Correlated Multi-Label Feature Selection*, CIKM 2011,
section 3.8, eq. 34).
"""

from __future__ import annotations

import copy
import numbers
import warnings
from typing import ClassVar

import attrs
import numpy as np

from .base.threshold import Threshold
from .exceptions import ThresholdWarning
from .validation import MAX_ITER_LIMIT, check_scalar, check_seed

__all__ = [
    "DEFAULT_CV",
    "FixedThreshold",
    "ProportionalCut",
    "RankCut",
    "ThresholdWarning",
    "TunedF1",
    "TunedMacroF1",
    "TunedMicroF1",
    "ZeroThreshold",
    "candidate_thresholds",
    "check_scores",
    "f1_objective",
    "inner_estimator",
    "out_of_fold_scores",
    "tune_thresholds",
]

#: Inner folds of the tuned thresholds (LibMultiLabel's and Fan & Lin's choice).
DEFAULT_CV = 3
#: Coordinate-ascent sweeps over the labels at most (each sweep that changes a threshold raises the
#: objective, so the ascent ends at a fixed point long before: usually 2-4 sweeps).
MAX_SWEEPS = 100
#: The smallest rise of the objective that moves a threshold (below it, rounding decides).
_RISE = 1e-12


# -- validation ------------------------------------------------------------------------------


def _folds(instance, attribute, value):
    check_scalar(value, attribute.name, kind=numbers.Integral, low=2, high=MAX_ITER_LIMIT)


def _seed(instance, attribute, value):
    check_seed(value, attribute.name)


def _optional_k(instance, attribute, value):
    if value is not None:
        check_scalar(value, attribute.name, kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)


def _optional_array(value):
    return None if value is None else np.asarray(value, dtype=np.float64)


def check_scores(scores, n_labels: int | None, who: str) -> np.ndarray:
    """Check a score matrix and convert it to float64.

    Parameters
    ----------
    scores : array_like of shape (n, L)
        Decision values.
    n_labels : int or None
        The number of labels the threshold was fitted for; None accepts any.
    who : str
        The threshold that checks, for the error message.

    Returns
    -------
    ndarray of shape (n, L)
        ``scores`` as a float64 array.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D or has another number of columns than ``n_labels``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"{who}: scores must be a 2-D (n, L) array, got shape {scores.shape}")
    if n_labels is not None and scores.shape[1] != n_labels:
        raise ValueError(f"{who}: fitted for {n_labels} labels, got scores with {scores.shape[1]} columns")
    return scores


def _require_fitted(threshold) -> None:
    if not threshold.fitted:
        raise ValueError(
            f"{type(threshold).__name__} is not fitted: predict needs the threshold an estimator's fit returns"
        )


# -- the rules --------------------------------------------------------------------------------


@attrs.frozen
class ZeroThreshold(Threshold):
    """Label j is relevant for row i when t_ij > 0: the sign of a max-margin score [zero].

    What every method predicted before thresholds were a part.  It learns nothing; a method
    whose own prediction differs from the sign of its scores (the concept network's inference)
    keeps its own rule under this threshold.
    """

    name: ClassVar[str] = "zero"
    needs_scores: ClassVar[bool] = False

    def fit(self, estimator, X, Y, scores, **data) -> ZeroThreshold:
        """Return this threshold itself: the zero rule learns nothing.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted on ``X`` and ``Y``.
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L) or None
            The estimator's decision values on ``X`` (None when ``needs_scores`` is False).
        **data
            Further inputs of the estimator's ``fit`` (e.g. unlabeled rows).

        Returns
        -------
        ZeroThreshold
            ``self``.
        """
        return self

    def predict(self, scores) -> np.ndarray:
        """Cut the scores at 0.

        Parameters
        ----------
        scores : array_like of shape (n, L)
            Decision values.

        Returns
        -------
        ndarray of shape (n, L)
            ``scores > 0`` as int64.

        Raises
        ------
        ValueError
            If ``scores`` is not 2-D.
        """
        return (check_scores(scores, None, "ZeroThreshold") > 0.0).astype(np.int64)


def _finite_value(instance, attribute, value) -> None:
    if value is not None:
        check_scalar(value, attribute.name)


@attrs.frozen
class FixedThreshold(Threshold):
    """Label j is relevant for row i when t_ij > ``value``, a constant [fixed].

    For scores that regress the {0, 1} indicators (a least-squares loss with ``target="real"``)
    the decision point is the midpoint of the two targets, 0.5, as in Huang, Li, Huang & Wu,
    *Learning Label Specific Features for Multi-Label Classification* (ICDM 2015).  It learns
    nothing from the data; ``value=0`` is :class:`ZeroThreshold`.

    Parameters
    ----------
    value : float or None, default None
        The threshold, any finite real.  None: the midpoint of the targets the fitted method's
        loss regresses, read at fit from its ``parts_["loss"]``: 0.5 for a loss with
        ``target="real"`` (the {0, 1} indicators as given), 0 otherwise (signs).
    """

    name: ClassVar[str] = "fixed"
    needs_scores: ClassVar[bool] = False

    value: float | None = attrs.field(default=None, validator=_finite_value)

    def fit(self, estimator, X, Y, scores, **data) -> FixedThreshold:
        """Fix the value (the midpoint of the fitted loss's targets when it was None).

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted on ``X`` and ``Y``.
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L) or None
            The estimator's decision values on ``X`` (None when ``needs_scores`` is False).
        **data
            Further inputs of the estimator's ``fit`` (e.g. unlabeled rows).

        Returns
        -------
        FixedThreshold
            ``self`` when ``value`` was given, else a copy with 0.5 for a loss with
            ``target="real"`` and 0 otherwise.
        """
        if self.value is not None:
            return self
        loss = (getattr(estimator, "parts_", None) or {}).get("loss")
        return attrs.evolve(self, value=0.5 if getattr(loss, "target", "sign") == "real" else 0.0)

    def predict(self, scores) -> np.ndarray:
        """Cut the scores at ``value``.

        Parameters
        ----------
        scores : array_like of shape (n, L)
            Decision values.

        Returns
        -------
        ndarray of shape (n, L)
            ``scores > value`` as int64.

        Raises
        ------
        ValueError
            If ``value`` is still None (not fitted) or ``scores`` is not 2-D.
        """
        if self.value is None:
            raise ValueError("FixedThreshold(value=None) has no value before fit: fit it with the method first")
        return (check_scores(scores, None, "FixedThreshold") > float(self.value)).astype(np.int64)


@attrs.frozen
class RankCut(Threshold):
    """The k top-scoring labels of every row are relevant [rank_cut] (Yang's RCut).

    Ties among scores are broken towards the lower label index, so every row gets exactly
    ``size`` labels.

    Parameters
    ----------
    k : int or None, default=None
        Labels per row, at least 1.  None: the training label cardinality (mean number of
        relevant labels per training row) rounded to the nearest integer, at least 1.  A k
        larger than the number of labels is refused at fit.
    size : int or None, default=None
        Fitted state, set by :meth:`fit`: the k in use.
    n_labels : int or None, default=None
        Fitted state, set by :meth:`fit`: the number of labels, checked at predict.
    """

    name: ClassVar[str] = "rank_cut"
    needs_scores: ClassVar[bool] = False

    k: int | None = attrs.field(default=None, validator=_optional_k)
    size: int | None = attrs.field(default=None, eq=False)
    n_labels: int | None = attrs.field(default=None, eq=False)

    @property
    def fitted(self) -> bool:
        """Whether ``size`` is known."""
        return self.size is not None

    def fit(self, estimator, X, Y, scores, **data) -> RankCut:
        """Set ``size``: ``k``, or the rounded training label cardinality.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted on ``X`` and ``Y``.
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L) or None
            The estimator's decision values on ``X`` (None when ``needs_scores`` is False).
        **data
            Further inputs of the estimator's ``fit`` (e.g. unlabeled rows).

        Returns
        -------
        RankCut
            A copy with ``size`` and ``n_labels`` set.

        Raises
        ------
        ValueError
            If the size exceeds the number of labels.
        """
        n_labels = Y.shape[1]
        size = self.k if self.k is not None else max(1, int(np.floor(np.asarray(Y).sum(axis=1).mean() + 0.5)))
        if size > n_labels:
            raise ValueError(f"rank_cut: k={size} exceeds the number of labels ({n_labels})")
        return attrs.evolve(self, size=int(size), n_labels=int(n_labels))

    def predict(self, scores) -> np.ndarray:
        """Mark the ``size`` largest scores of each row (ties: the lower label index first).

        Parameters
        ----------
        scores : array_like of shape (n, L)
            Decision values.

        Returns
        -------
        ndarray of shape (n, L)
            1 for the ``size`` top-scoring labels of each row, else 0 (int64).

        Raises
        ------
        ValueError
            If the cut is not fitted or ``scores`` has another number of labels.
        """
        _require_fitted(self)
        scores = check_scores(scores, self.n_labels, "RankCut")
        top = np.argsort(-scores, axis=1, kind="stable")[:, : self.size]
        labels = np.zeros(scores.shape, dtype=np.int64)
        np.put_along_axis(labels, top, 1, axis=1)
        return labels

    def describe(self) -> str:
        """Describe the cut in one line for reports.

        Returns
        -------
        str
            ``rank_cut(k=...)``, with the k in use (``size`` once fitted).
        """
        return f"rank_cut(k={self.size if self.size is not None else self.k})"


class _PerLabel(Threshold):
    """A threshold per label: label j is relevant when t_ij > thresholds[j]."""

    thresholds: np.ndarray | None

    @property
    def fitted(self) -> bool:
        """Whether the per-label thresholds are set."""
        return self.thresholds is not None

    def predict(self, scores) -> np.ndarray:
        """Cut each label's scores at its threshold.

        Parameters
        ----------
        scores : array_like of shape (n, L)
            Decision values.

        Returns
        -------
        ndarray of shape (n, L)
            ``scores > thresholds`` (per label), as int64.

        Raises
        ------
        ValueError
            If the thresholds are not fitted or ``scores`` has another number of labels.
        """
        _require_fitted(self)
        scores = check_scores(scores, len(self.thresholds), type(self).__name__)
        return (scores > self.thresholds[None, :]).astype(np.int64)


@attrs.frozen
class ProportionalCut(_PerLabel):
    """Per label, the score above which the training rows hold the label's training frequency [proportional_cut].

    Yang's PCut assigns label j to the top ``p_j n`` rows of a test set, p_j the label's
    training frequency; made a fixed threshold, it is the score between the P_j-th and
    (P_j + 1)-th largest training scores of the label (P_j its training positives): on the
    training rows the rule predicts exactly P_j rows (fewer or more only where scores tie at
    that place), and on new rows it predicts the label about as often as it occurred.  The
    scores are the fitted model's in-sample ones.

    Parameters
    ----------
    thresholds : array_like of shape (L,) or None, default=None
        Fitted state, set by :meth:`fit`: one score threshold per label.
    """

    name: ClassVar[str] = "proportional_cut"

    thresholds: np.ndarray | None = attrs.field(default=None, converter=_optional_array, eq=False)

    def fit(self, estimator, X, Y, scores, **data) -> ProportionalCut:
        """Set each label's threshold between its P_j-th and (P_j + 1)-th largest training score.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted on ``X`` and ``Y``.
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L) or None
            The estimator's decision values on ``X`` (None when ``needs_scores`` is False).
        **data
            Further inputs of the estimator's ``fit`` (e.g. unlabeled rows).

        Returns
        -------
        ProportionalCut
            A copy with ``thresholds`` set at those midpoints.

        Raises
        ------
        ValueError
            If ``scores`` is not 2-D or has another number of labels than ``Y``.
        """
        scores = check_scores(scores, Y.shape[1], "ProportionalCut")
        descending = -np.sort(-scores, axis=0)
        positives = np.asarray(Y).sum(axis=0).astype(np.intp)
        n = scores.shape[0]
        columns = np.arange(scores.shape[1])
        # Fit validated every column to hold both values, so 1 <= P_j <= n - 1.
        above = descending[np.clip(positives - 1, 0, n - 1), columns]
        below = descending[np.clip(positives, 0, n - 1), columns]
        return attrs.evolve(self, thresholds=0.5 * (above + below))


# -- tuned per-label thresholds --------------------------------------------------------------


def candidate_thresholds(scores) -> np.ndarray:
    """List the thresholds a tuned label chooses among, in descending order.

    Parameters
    ----------
    scores : array_like of shape (n,)
        One label's finite scores.

    Returns
    -------
    ndarray of shape (D + 1,)
        The candidates for D distinct scores (``[0.0]`` when ``scores`` is empty).

    Notes
    -----
    With the distinct scores v_1 > ... > v_D: v_1 + m (predict none), the midpoints
    (v_g + v_{g+1}) / 2 (predict the rows scoring v_g or more) and v_D - m (predict all); the
    margin m is half the range of the scores, or half of max(1, |v_1|) when they are all equal.
    Every way of cutting the sorted scores is one candidate, at the middle of its gap.
    """
    values = np.unique(np.asarray(scores, dtype=np.float64))[::-1]
    if values.size == 0:
        return np.zeros(1)
    spread = values[0] - values[-1]
    margin = 0.5 * spread if spread > 0 else 0.5 * max(1.0, abs(values[0]))
    return np.concatenate([[values[0] + margin], 0.5 * (values[:-1] + values[1:]), [values[-1] - margin]])


def _label_table(scores, y):
    """Candidates of one label's finite scores and, per candidate, (true positives, predicted positives).

    Also the positives of the label and the candidate that predicts what the zero rule does.
    """
    finite = np.isfinite(scores)
    s, y = scores[finite], y[finite].astype(np.int64)
    candidates = candidate_thresholds(s)
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    # Rows predicted by candidate g: those scoring above it; s is sorted, so a count from the top.
    predicted = np.searchsorted(-s, -candidates, side="left")
    true_positives = np.concatenate([[0], np.cumsum(y)])[predicted]
    # Candidate g predicts the g largest distinct scores, so t > 0 is candidate (distinct positives).
    at_zero = int(np.count_nonzero(np.unique(s) > 0.0))
    return candidates, true_positives, predicted, int(y.sum()), at_zero


def f1_objective(true_positives, predicted, positives, objective: str) -> float:
    """Compute the named F-measure from per-label counts: micro, macro or their mean.

    Parameters
    ----------
    true_positives : array_like of shape (L,)
        The true positives of each label.
    predicted : array_like of shape (L,)
        The predicted positives of each label.
    positives : array_like of shape (L,)
        The actual positives of each label.
    objective : {"micro", "macro", "both"}
        The F-measure: micro-F1, macro-F1 or their mean.

    Returns
    -------
    float
        The F-measure.

    Notes
    -----
    F1 of a label is 2 tp / (predicted + positives), 0 when both are 0 (no positive and none
    predicted); micro-F1 is 2 sum(tp) / sum(predicted + positives), 0 when that sum is 0.
    """
    tp = np.asarray(true_positives, dtype=np.float64)
    denominator = np.asarray(predicted, dtype=np.float64) + np.asarray(positives, dtype=np.float64)
    per_label = np.divide(2.0 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    total = denominator.sum()
    micro = 2.0 * tp.sum() / total if total > 0 else 0.0
    macro = float(per_label.mean()) if per_label.size else 0.0
    return {"micro": micro, "macro": macro, "both": 0.5 * (micro + macro)}[objective]


def tune_thresholds(scores, Y, objective: str) -> tuple[np.ndarray, dict]:
    """Tune per-label thresholds to maximise an F-measure of ``scores > thresholds``.

    Each label chooses among its :func:`candidate_thresholds` (cells whose score is not finite
    take no part: a label constant in an inner fold's training rows has no score there).

    ``"macro"``: labels are independent; each takes its candidate of the largest F1 -- the
    exact maximum over the candidates.  ``"micro"`` and ``"both"`` couple the labels through
    the summed counts: coordinate ascent, a label at a time, each moved to its best candidate
    given the others while that raises the objective, from two starts (the macro optimum, and
    the candidates that predict what the zero rule ``t > 0`` does); the better end is kept, so
    the result is never worse than the zero rule on these scores.  The result is a
    coordinate-wise maximum: no single label's threshold can raise the objective.  Ties go to
    the highest threshold (the fewest predicted rows).

    Parameters
    ----------
    scores : array_like of shape (n, L)
        Decision values (out-of-fold ones when tuning a threshold); NaN cells take no part.
    Y : array_like of shape (n, L)
        The {0, 1} labels.
    objective : {"micro", "macro", "both"}
        The F-measure to maximise (:func:`f1_objective`).

    Returns
    -------
    thresholds : ndarray of shape (L,)
        One threshold per label.
    info : dict
        ``{"objective": value, "sweeps": n, "no_positive": labels}``: the F-measure reached,
        the coordinate-ascent sweeps, and the labels whose scored rows hold no positive (they
        predict none).

    Raises
    ------
    ValueError
        If ``objective`` is not one of the three names.
    """
    if objective not in ("micro", "macro", "both"):
        raise ValueError(f"objective must be 'micro', 'macro' or 'both', got {objective!r}")
    scores = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y)
    n_labels = scores.shape[1]
    tables = [_label_table(scores[:, j], Y[:, j]) for j in range(n_labels)]
    positives = np.array([t[3] for t in tables], dtype=np.float64)

    def best(j, tp_rest, denominator_rest, current=None):
        candidates, tp, predicted, p, _ = tables[j]
        denominator = predicted + p
        f1 = np.divide(2.0 * tp, denominator, out=np.zeros(len(tp)), where=denominator > 0)
        if objective == "macro":
            value = f1
        else:
            total = denominator_rest + denominator
            micro = np.divide(2.0 * (tp_rest + tp), total, out=np.zeros(len(tp)), where=total > 0)
            value = micro if objective == "micro" else 0.5 * micro + 0.5 * f1 / n_labels
        g = int(np.argmax(value))  # the first maximiser: candidates descend, so the highest threshold
        if current is not None and value[g] <= value[current] + _RISE:
            return current
        return g

    macro_start = np.array([best(j, 0.0, 0.0) for j in range(n_labels)], dtype=np.intp)
    if objective == "macro":
        chosen, sweeps = macro_start, 1
    else:
        zero_start = np.array([t[4] for t in tables], dtype=np.intp)
        ends = [_ascend(start.copy(), tables, best) for start in (macro_start, zero_start)]
        values = [_objective_at(end, tables, objective) for end, _ in ends]
        chosen, sweeps = ends[int(np.argmax(values))]
    thresholds = np.array([tables[j][0][chosen[j]] for j in range(n_labels)])
    info = {
        "objective": _objective_at(chosen, tables, objective),
        "sweeps": sweeps,
        "no_positive": np.flatnonzero(positives == 0).tolist(),
    }
    return thresholds, info


def _counts_at(chosen, tables):
    tp = np.array([t[1][g] for t, g in zip(tables, chosen)], dtype=np.float64)
    predicted = np.array([t[2][g] for t, g in zip(tables, chosen)], dtype=np.float64)
    positives = np.array([t[3] for t in tables], dtype=np.float64)
    return tp, predicted, positives


def _objective_at(chosen, tables, objective) -> float:
    return f1_objective(*_counts_at(chosen, tables), objective)


def _ascend(chosen, tables, best):
    """Coordinate ascent from ``chosen`` (candidate indices) to a fixed point; ``(chosen, sweeps)``."""
    tp, predicted, positives = _counts_at(chosen, tables)
    for sweep in range(1, MAX_SWEEPS + 1):
        moved = False
        for j, (_, label_tp, label_predicted, _, _) in enumerate(tables):
            tp_rest = tp.sum() - tp[j]
            denominator_rest = (predicted + positives).sum() - (predicted[j] + positives[j])
            g = best(j, tp_rest, denominator_rest, current=chosen[j])
            if g != chosen[j]:
                chosen[j], tp[j], predicted[j] = g, label_tp[g], label_predicted[g]
                moved = True
        if not moved:
            return chosen, sweep
    return chosen, MAX_SWEEPS


# -- out-of-fold scores ----------------------------------------------------------------------


def inner_estimator(estimator):
    """Make a new unfitted copy of ``estimator`` whose threshold is ``zero``, for inner fits.

    Its parameters are copies of the estimator's; the estimator's ``_inner_threshold_params()``
    says which to change (``thresholding="zero"`` and ``warm_start=False`` at least, so that the
    inner fits neither recurse nor start from each other).

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The estimator whose threshold is being fitted.

    Returns
    -------
    MultiLabelEstimator
        A new estimator of the same class, unfitted.
    """
    params = {name: copy.deepcopy(value) for name, value in estimator.get_params(deep=False).items()}
    params.update(estimator._inner_threshold_params())
    return type(estimator)(**params)


def out_of_fold_scores(estimator, X, Y, n_folds: int, random_state=0, **data) -> tuple[np.ndarray, int]:
    """Score every training row by a copy of ``estimator`` fitted without the row's fold.

    The folds are drawn by iterative stratification (:func:`multilabel_core.model_selection.iterative_stratification`,
    seeded by ``random_state``); each fold is scored by :func:`inner_estimator` fitted on the
    other folds (``data``, e.g. unlabeled rows, passed to every fit).  A label that takes one
    value in the other folds' rows is learned nothing from there: estimators accept such a label
    (a :class:`~multilabel_core.estimator.ConstantLabelWarning`, docs/estimators.md) but score
    it with a constant of the fit (``constant_scores_``), which says nothing about how the
    held-out rows rank.  That fold is therefore fitted on the other labels, and its cells of the
    label are NaN.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The estimator whose copies are fitted (:func:`inner_estimator`).
    X : array or sparse matrix of shape (n, d)
        The validated training rows (a precomputed kernel is cut on both axes).
    Y : ndarray of shape (n, L)
        The {0, 1} training labels.
    n_folds : int
        The number of folds, at least 2.
    random_state : int or None, default=0
        Seed of the iterative stratification.
    **data
        Further inputs passed to every inner fit (e.g. unlabeled rows).

    Returns
    -------
    scores : ndarray of shape (n, L)
        The out-of-fold decision values, NaN where a label was left out of a fold.
    n_left_out : int
        The number of (fold, label) pairs left out; the caller shows it.
    """
    from .model_selection import uses_precomputed_kernel, iterative_stratification, rows_of

    folds = iterative_stratification(Y, n_folds, random_state)
    precomputed = uses_precomputed_kernel(estimator)
    scores = np.full(Y.shape, np.nan)
    n_left_out = 0
    minimum = int(getattr(estimator, "min_labels", 1))
    for fold in range(n_folds):
        fit_rows, held_out = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        Y_fit = Y[fit_rows]
        counts = Y_fit.sum(axis=0)
        varying = np.flatnonzero((counts > 0) & (counts < len(fit_rows)))
        n_left_out += Y.shape[1] - varying.size
        if varying.size < minimum:
            n_left_out += varying.size
            continue
        model = inner_estimator(estimator)
        model._validated_fit(rows_of(X, fit_rows, fit_rows, precomputed), Y_fit[:, varying], **data)
        scores[np.ix_(held_out, varying)] = model.decision_function(rows_of(X, held_out, fit_rows, precomputed))
    return scores, n_left_out


def _warn_left_out(who: str, n_left_out: int, n_folds: int, n_labels: int) -> None:
    if n_left_out:
        warnings.warn(
            f"{who}: {n_left_out} of {n_folds * n_labels} (inner fold, label) pairs had a label constant in the "
            "fold's training rows; those out-of-fold scores were not computed and took no part in the threshold",
            ThresholdWarning,
            stacklevel=4,
        )


@attrs.frozen
class _Tuned(_PerLabel):
    """Per-label thresholds tuned on out-of-fold decision values to an F-measure (see the subclasses).

    Parameters
    ----------
    cv : int >= 2, default 3
        Inner folds: the method is fitted ``cv`` more times, on (cv - 1)/cv of the training rows.
    random_state : None or int, default 0
        Seed of the inner folds (iterative stratification).

    Fitted state: ``thresholds`` (L,), ``oof_objective`` (the F-measure reached on the
    out-of-fold scores) and ``n_left_out`` ((fold, label) pairs without scores, see
    :func:`out_of_fold_scores`; a :class:`ThresholdWarning` counts them).
    """

    objective: ClassVar[str] = ""

    cv: int = attrs.field(default=DEFAULT_CV, validator=_folds)
    random_state: int | None = attrs.field(default=0, validator=_seed)
    thresholds: np.ndarray | None = attrs.field(default=None, converter=_optional_array, eq=False)
    oof_objective: float | None = attrs.field(default=None, eq=False)
    n_left_out: int | None = attrs.field(default=None, eq=False)

    def fit(self, estimator, X, Y, scores, **data):
        """Tune the thresholds on the out-of-fold scores of ``cv`` refits of ``estimator``.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted on ``X`` and ``Y``.
        X : array or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L)
            The {0, 1} training labels.
        scores : ndarray of shape (n, L) or None
            The estimator's decision values on ``X`` (None when ``needs_scores`` is False).
        **data
            Further inputs of the estimator's ``fit`` (e.g. unlabeled rows).

        Returns
        -------
        Threshold
            A copy with ``thresholds``, ``oof_objective`` and ``n_left_out`` set
            (:func:`tune_thresholds`).

        Warns
        -----
        ThresholdWarning
            When (fold, label) pairs were left out, with their number.
        """
        oof, n_left_out = out_of_fold_scores(estimator, X, Y, self.cv, self.random_state, **data)
        _warn_left_out(self.name, n_left_out, self.cv, Y.shape[1])
        thresholds, info = tune_thresholds(oof, Y, self.objective)
        return attrs.evolve(
            self, thresholds=thresholds, oof_objective=float(info["objective"]), n_left_out=int(n_left_out)
        )

    def describe(self) -> str:
        """Describe the threshold in one line for reports.

        Returns
        -------
        str
            The name, with ``cv`` when it is not the default.
        """
        return self.name if self.cv == DEFAULT_CV else f"{self.name}(cv={self.cv})"


@attrs.frozen
class TunedMicroF1(_Tuned):
    """Per-label thresholds tuned on out-of-fold scores to the micro-averaged F1 [tuned_micro_f1].

    Coordinate ascent over the labels (:func:`tune_thresholds`).

    Parameters
    ----------
    cv : int, default=3
        Inner folds (iterative stratification), at least 2: the method is fitted ``cv`` more
        times, on (cv - 1)/cv of the training rows.
    random_state : int or None, default=0
        Seed of the inner folds.
    thresholds : array_like of shape (L,) or None, default=None
        Fitted state: one threshold per label.
    oof_objective : float or None, default=None
        Fitted state: the F-measure reached on the out-of-fold scores.
    n_left_out : int or None, default=None
        Fitted state: the (fold, label) pairs without scores (:func:`out_of_fold_scores`; a
        :class:`ThresholdWarning` counts them).
    """

    name: ClassVar[str] = "tuned_micro_f1"
    objective: ClassVar[str] = "micro"


@attrs.frozen
class TunedMacroF1(_Tuned):
    """Per-label thresholds tuned on out-of-fold scores to the macro-averaged F1 [tuned_macro_f1].

    Each label's threshold maximises its own F1 exactly among its candidates
    (:func:`tune_thresholds`).

    Parameters
    ----------
    cv : int, default=3
        Inner folds (iterative stratification), at least 2: the method is fitted ``cv`` more
        times, on (cv - 1)/cv of the training rows.
    random_state : int or None, default=0
        Seed of the inner folds.
    thresholds : array_like of shape (L,) or None, default=None
        Fitted state: one threshold per label.
    oof_objective : float or None, default=None
        Fitted state: the F-measure reached on the out-of-fold scores.
    n_left_out : int or None, default=None
        Fitted state: the (fold, label) pairs without scores (:func:`out_of_fold_scores`; a
        :class:`ThresholdWarning` counts them).
    """

    name: ClassVar[str] = "tuned_macro_f1"
    objective: ClassVar[str] = "macro"


@attrs.frozen
class TunedF1(_Tuned):
    """Per-label thresholds tuned on out-of-fold scores to the mean of micro- and macro-F1 [tuned_f1].

    Parameters
    ----------
    cv : int, default=3
        Inner folds (iterative stratification), at least 2: the method is fitted ``cv`` more
        times, on (cv - 1)/cv of the training rows.
    random_state : int or None, default=0
        Seed of the inner folds.
    thresholds : array_like of shape (L,) or None, default=None
        Fitted state: one threshold per label.
    oof_objective : float or None, default=None
        Fitted state: the F-measure reached on the out-of-fold scores.
    n_left_out : int or None, default=None
        Fitted state: the (fold, label) pairs without scores (:func:`out_of_fold_scores`; a
        :class:`ThresholdWarning` counts them).
    """

    name: ClassVar[str] = "tuned_f1"
    objective: ClassVar[str] = "both"


#: The stock thresholds by registered name (registered by the core's plugin).
STOCK = {
    cls.name: cls for cls in (ZeroThreshold, FixedThreshold, TunedMicroF1, TunedMacroF1, TunedF1, RankCut, ProportionalCut)
}
