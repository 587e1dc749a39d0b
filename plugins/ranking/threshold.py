"""Set-size prediction by a learned threshold (Gu, Li & Han, CIKM 2011, section 3.8).

A ranking system scores every label, t_ik = w_k^T x_i + b_k; the labels predicted relevant
are those scoring above a threshold t(x_i) learned from the training rows.  Each training
row gives the threshold that separates its relevant labels from its irrelevant ones
(eq. 34, following Elisseeff & Weston)::

    t_i = 1/2 (min_{k in y_i} t_ik + max_{l in ybar_i} t_il).

A row whose label set is empty has no relevant label: its threshold is put half a margin
above its top score, ``t_i = max_l t_il + 1/2``; a row whose label set is full, half a
margin below its lowest, ``t_i = min_k t_ik - 1/2`` (the margin of problem 1 is 1, and a row
with both kinds of labels whose pairs keep their margins has t_i half a margin or more from
each side).  So every row takes part and predicting it from its threshold gives its labels.

The paper fits t(x) "by linear regression" without naming the regressors.  Both choices
here are linear in the c label scores of the row (plus a constant), c + 1 coefficients
whatever d is, so the features MLFS left out stay unused; they are fitted by least squares
(numpy's lstsq: the minimum-norm solution when the regressors are collinear, e.g. all zero):

``"scores"``
    ``t(x) = a^T (t_1(x), ..., t_c(x)) + a_0``, the label scores in label order: Elisseeff
    and Weston's regression, and section 3.8 as printed.
``"sorted_scores"``
    ``t(x) = a^T (t_(1)(x), ..., t_(c)(x)) + a_0``, the same scores sorted increasingly.  On
    a row ranked correctly with s relevant labels, eq. 34 *is* such a function,
    ``t_i = 1/2 (t_(c-s+1) + t_(c-s))``: the mean of the s-th and (s+1)-th largest scores,
    whichever labels hold them.  With label-ordered scores no fixed (a, a_0) can express
    "between the top two scores" for every top label, so on data where most rows have one
    label (scene) the fit puts t(x) above every score of a quarter of the test rows.

The presets default to ``"sorted_scores"``; their ``threshold_cv`` computes eq. 34 and the fit on
out-of-fold training scores instead of in-sample ones (docs/methods/ranking.md has the measurements).

:class:`LearnedLinearThreshold` is this rule as a threshold part, registered as ``learned_linear``:
the ranking presets' default ``thresholding``, and usable with every other method
(``thresholding="learned_linear"``).
"""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.base import Threshold
from multilabel_core.thresholds import ThresholdWarning, check_scores, out_of_fold_scores
from multilabel_core.validation import MAX_ITER_LIMIT, check_scalar, check_seed

__all__ = [
    "REGRESSORS",
    "LearnedLinearThreshold",
    "LinearThreshold",
    "check_regressors",
    "threshold_regressors",
    "threshold_targets",
]

#: Half the margin of problem (1): where a row without a relevant (or irrelevant) label puts its threshold.
HALF_MARGIN = 0.5

#: The regressors t(x) can be fitted on (module docstring).
REGRESSORS = ("scores", "sorted_scores")


def threshold_targets(scores, Y) -> np.ndarray:
    """Compute the threshold targets t_i of eq. 34 for every training row.

    Parameters
    ----------
    scores : ndarray of shape (n, L)
        The label scores t_ik of the training rows.
    Y : array-like of shape (n, L), 0/1
        Their labels.

    Returns
    -------
    ndarray of shape (n,)
        ``t_i = 1/2 (min_{k in y_i} t_ik + max_{l in ybar_i} t_il)``; half a margin above the top
        score for a row with an empty label set, half a margin below the lowest for a full one
        (module docstring).
    """
    relevant = np.asarray(Y).astype(bool)
    lowest_relevant = np.where(relevant, scores, np.inf).min(axis=1)
    highest_irrelevant = np.where(relevant, -np.inf, scores).max(axis=1)
    return np.where(
        ~relevant.any(axis=1),
        highest_irrelevant + HALF_MARGIN,
        np.where(relevant.all(axis=1), lowest_relevant - HALF_MARGIN, 0.5 * (lowest_relevant + highest_irrelevant)),
    )


def check_regressors(regressors, name: str = "regressors") -> None:
    """Check that ``regressors`` names one of :data:`REGRESSORS`.

    Parameters
    ----------
    regressors : str
        The choice of regressors to check.
    name : str, default "regressors"
        The parameter the error names.

    Raises
    ------
    ValueError
        When ``regressors`` is not one of :data:`REGRESSORS`, naming ``name``.
    """
    if not isinstance(regressors, str) or regressors not in REGRESSORS:
        raise ValueError(f"{name} must be one of {REGRESSORS}, got {regressors!r}")


def threshold_regressors(scores, regressors: str) -> np.ndarray:
    """Build the regressors z(x) of t(x) from the label scores.

    Parameters
    ----------
    scores : array-like of shape (n, c)
        The label scores of each row.
    regressors : {"scores", "sorted_scores"}
        The scores in label order, or sorted increasingly per row.

    Returns
    -------
    ndarray of shape (n, c)
        The scores as they are, or sorted increasingly within each row.

    Raises
    ------
    ValueError
        When ``regressors`` is not one of :data:`REGRESSORS`.
    """
    check_regressors(regressors)
    return np.sort(scores, axis=1) if regressors == "sorted_scores" else np.asarray(scores)


@attrs.frozen(eq=False)
class LinearThreshold:
    """The threshold function t(x) = a^T z(x) + a_0 of section 3.8, z(x) the ``regressors`` of the scores.

    ``LinearThreshold.fit(scores, Y, regressors)`` fits it by least squares on the eq. 34
    targets of the score rows; calling it on score rows (n, c) gives t(x) (n,).

    Parameters
    ----------
    regressors : {"scores", "sorted_scores"}
        What z(x) is: the row's label scores in label order, or sorted increasingly.
    coef : ndarray of shape (c + 1,)
        (a, a_0): the weights of the c regressors, then the constant.
    """

    regressors: str = attrs.field(validator=lambda _, attribute, value: check_regressors(value, attribute.name))
    coef: np.ndarray

    @classmethod
    def fit(cls, scores, Y, regressors: str) -> LinearThreshold:
        """Fit t(x) by least squares to eq. 34's targets of the training rows.

        Parameters
        ----------
        scores : ndarray of shape (n, L)
            The label scores of the training rows.
        Y : array-like of shape (n, L), 0/1
            Their labels.
        regressors : {"scores", "sorted_scores"}
            What z(x) is (:func:`threshold_regressors`).

        Returns
        -------
        LinearThreshold
            The fitted function (numpy's minimum-norm least-squares solution when the
            regressors are collinear).
        """
        design = _with_constant(threshold_regressors(scores, regressors))
        coef, *_ = np.linalg.lstsq(design, threshold_targets(scores, Y), rcond=None)
        return cls(regressors, coef)

    def __call__(self, scores) -> np.ndarray:
        return _with_constant(threshold_regressors(scores, self.regressors)) @ self.coef


def _with_constant(Z) -> np.ndarray:
    return np.hstack([Z, np.ones((Z.shape[0], 1))])


def _optional_folds(instance, attribute, value):
    if value is not None:
        check_scalar(value, attribute.name, kind=numbers.Integral, low=2, high=MAX_ITER_LIMIT)


@attrs.frozen
class LearnedLinearThreshold(Threshold):
    """The set-size threshold t(x) of section 3.8 as a part [learned_linear]: label k is relevant when t_k(x) > t(x).

    t(x) = a^T z(x) + a_0 is fitted by least squares on eq. 34's targets of the training rows
    (:class:`LinearThreshold`), z(x) the row's scores (``regressors``).

    Parameters
    ----------
    regressors : {"sorted_scores", "scores"}, default "sorted_scores"
        The row's scores sorted increasingly, or in label order (the paper's); module docstring.
    cv : int >= 2 or None, default None
        Fit on out-of-fold training scores from this many folds (iterative stratification,
        as many extra fits of the method); None: on the in-sample scores (the paper).
    random_state : None, int or numpy Generator, default 0
        Seed of the folds.
    coef : ndarray of shape (c + 1,) or None, default None
        Fitted state, set by :meth:`fit`: (a, a_0).
    n_left_out : int or None, default None
        Fitted state, set by :meth:`fit`: the training rows left out of the regression because
        a label of theirs had no out-of-fold score (a label constant in an inner fold's
        training rows; a :class:`~multilabel_core.thresholds.ThresholdWarning` counts them).

    Notes
    -----
    Calling the fitted threshold on score rows (n, c) gives t(x) (n,).
    """

    name: ClassVar[str] = "learned_linear"

    regressors: str = attrs.field(
        default="sorted_scores", validator=lambda _, attribute, value: check_regressors(value, attribute.name)
    )
    cv: int | None = attrs.field(default=None, validator=_optional_folds)
    random_state: object = attrs.field(
        default=0, validator=lambda _, attribute, value: check_seed(value, attribute.name)
    )
    coef: np.ndarray | None = attrs.field(default=None, eq=False)
    n_left_out: int | None = attrs.field(default=None, eq=False)

    @property
    def fitted(self) -> bool:
        """Whether (a, a_0) is set."""
        return self.coef is not None

    def fit(self, estimator, X, Y, scores, **data) -> LearnedLinearThreshold:
        """Fit (a, a_0) by least squares on eq. 34's targets of the in-sample, or out-of-fold, training scores.

        Parameters
        ----------
        estimator : MultiLabelEstimator
            The estimator just fitted; with ``cv`` its clones are refitted on the folds.
        X : array-like or sparse matrix of shape (n, d)
            The training rows.
        Y : ndarray of shape (n, L), 0/1
            The training labels.
        scores : ndarray of shape (n, L)
            The estimator's in-sample decision values (used when ``cv`` is None).
        **data
            Further inputs of the estimator's ``fit`` (e.g. SSMLRL's ``X_unlabeled``), passed to
            the out-of-fold refits.

        Returns
        -------
        LearnedLinearThreshold
            A new threshold with ``coef`` and ``n_left_out`` set (this one is unchanged).

        Raises
        ------
        ValueError
            When, with ``cv``, no training row has an out-of-fold score for every label.

        Warns
        -----
        ThresholdWarning
            When rows are left out of the regression, with their number.
        """
        n_left_out = 0
        if self.cv is not None:
            scores, _ = out_of_fold_scores(estimator, X, Y, self.cv, self.random_state, **data)
            complete = np.isfinite(scores).all(axis=1)
            n_left_out = int(np.count_nonzero(~complete))
            if n_left_out:
                warnings.warn(
                    f"learned_linear: {n_left_out} of {len(complete)} training rows had a label without an out-of-fold "
                    "score (constant in an inner fold's training rows) and were left out of the regression of t(x)",
                    ThresholdWarning,
                    stacklevel=3,
                )
            if not complete.any():
                raise ValueError("learned_linear: no training row has an out-of-fold score for every label")
            scores, Y = scores[complete], Y[complete]
        coef = LinearThreshold.fit(scores, Y, self.regressors).coef
        return attrs.evolve(self, coef=np.asarray(coef, dtype=np.float64), n_left_out=n_left_out)

    def __call__(self, scores) -> np.ndarray:
        """t(x) (n,) of the score rows (n, c)."""
        if self.coef is None:
            raise ValueError("LearnedLinearThreshold is not fitted: t(x) needs the coefficients fit returns")
        scores = check_scores(scores, len(self.coef) - 1, "LearnedLinearThreshold")
        return LinearThreshold(self.regressors, self.coef)(scores)

    def predict(self, scores) -> np.ndarray:
        """Predict the labels scoring above the row's threshold, ``scores > t(x)``.

        Parameters
        ----------
        scores : array-like of shape (n, c)
            Decision values.

        Returns
        -------
        ndarray of shape (n, c), int64
            1 where a label's score exceeds its row's t(x), else 0.

        Raises
        ------
        ValueError
            When the threshold is not fitted, or ``scores`` do not have the c columns it was
            fitted on.
        """
        scores = np.asarray(scores, dtype=np.float64)
        return (scores > self(scores)[:, None]).astype(np.int64)

    def describe(self) -> str:
        settings = [f"regressors={self.regressors}"] if self.regressors != "sorted_scores" else []
        settings += [f"cv={self.cv}"] if self.cv is not None else []
        return self.name + (f"({', '.join(settings)})" if settings else "")
