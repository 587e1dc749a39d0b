"""Calibrated probabilities for any multi-label method: a per-label map fitted on out-of-fold scores.

A max-margin method's score t_ij is a margin (or, for the least-squares methods, a regression
value), not a probability: nothing in its objective ties ``t = 0.7`` to "relevant seven times in
ten".  :class:`CalibratedMultiLabel` turns the scores into probabilities the way scikit-learn's
``CalibratedClassifierCV`` does for one label, label by label:

1. **Out-of-fold scores.**  The training rows are split into ``cv`` folds by iterative
   stratification (:class:`~multilabel_core.model_selection.IterativeStratifiedKFold`); a copy
   of the method is fitted on all folds but one and scores the rows of that one.  Every row
   thus gets, for every label, a score from a model that never saw it -- the scores the
   calibrator learns from are distributed like the scores of new rows, not like the
   (over-confident) scores of the rows a model was fitted on.
2. **One map per label**, from score to probability, fitted on those out-of-fold scores and
   the training labels:

   * ``method="sigmoid"`` -- Platt's sigmoid (J. C. Platt, "Probabilistic outputs for support
     vector machines and comparisons to regularized likelihood methods", 1999):
     $P(y = 1 \\mid t) = 1 / (1 + \\exp(A t + B))$, with (A, B) minimising the cross-entropy
     against Platt's smoothed targets $t_+ = (N_+ + 1) / (N_+ + 2)$ for the N_+ relevant rows
     and $t_- = 1 / (N_- + 2)$ for the N_- others (:func:`fit_sigmoid`; Newton's method with a
     backtracking line search, the safeguards of H.-T. Lin, C.-J. Lin and R. C. Weng, "A note
     on Platt's probabilistic outputs for support vector machines", 2007).  The smoothed
     targets keep the minimiser finite even when the scores separate the label perfectly.
   * ``method="isotonic"`` -- the non-decreasing step function closest in squared error to the
     0/1 labels ordered by score (B. Zadrozny and C. Elkan, "Transforming classifier scores
     into accurate multiclass probability estimates", KDD 2002), computed by the
     pool-adjacent-violators algorithm (:func:`pool_adjacent_violators`; M. Ayer, H. D.
     Brunk, G. M. Ewing, W. T. Reid and E. Silverman, "An empirical distribution function
     for sampling with incomplete information", 1955); between the scores it was fitted on
     it is interpolated linearly, beyond them it is constant.  It assumes nothing about the
     shape of the map but needs more rows than the sigmoid's two parameters (a few hundred
     per label) and may return exactly 0 or 1.

3. **The model** that scores new rows is one more copy of the method, fitted on all the
   training rows (scikit-learn's ``ensemble=False``); ``predict_proba(X)[:, j]`` is label j's
   map applied to its score.  ``predict`` and ``decision_function`` are the method's own:
   calibration changes the probabilities, not the decisions (so ``predict_proba(X) > 0.5``
   may differ from ``predict(X)`` where the method's cut is not at probability 1/2).

A label that a fold's training rows hold at one value only has no score from that fold's
model (the copy is fitted on the other labels); its map is fitted on the rows the other folds
scored, and one warning counts such labels.  A label constant on all the training rows is the
estimator's business (it predicts its constant); its probability is that constant, 0 or 1.

:func:`expected_calibration_error` measures what the maps are for on held-out rows.
"""

from __future__ import annotations

import copy
import inspect
import math
import numbers
import warnings

import attrs
import numpy as np
from scipy.special import expit

from .estimator import MultiLabelEstimator
from .model_selection import IterativeStratifiedKFold, uses_precomputed_kernel, rows_of
from .validation import InstanceOf, Options, Rule, check_scalar

__all__ = [
    "CALIBRATION_METHODS",
    "CalibratedMultiLabel",
    "IsotonicCalibration",
    "SIGMOID_MAX_ITER",
    "SIGMOID_RTOL",
    "SigmoidCalibration",
    "expected_calibration_error",
    "fit_isotonic",
    "fit_sigmoid",
    "platt_targets",
    "pool_adjacent_violators",
]

#: The maps :class:`CalibratedMultiLabel` fits, by its ``method`` value.
CALIBRATION_METHODS = ("sigmoid", "isotonic")

#: Newton stops on Platt's objective once its decrement says the objective is within this
#: fraction of its minimum: far below the rounding of a probability anyone reads, and above
#: the rounding of the objective's sum of n terms.
SIGMOID_RTOL = 1e-12
#: Newton steps before :func:`fit_sigmoid` gives up (quadratic convergence needs about ten).
SIGMOID_MAX_ITER = 100


# -- checks of the calibrators' fields (run by attrs and again on a loaded model file) ------


def _finite_float(instance, attribute, value) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a finite real, got {value!r}")


def _knots(instance, attribute, value) -> None:
    if not (isinstance(value, np.ndarray) and value.dtype == np.float64 and value.ndim == 1 and value.size >= 1):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a non-empty 1-D float64 array")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be finite")


def _strictly_increasing(instance, attribute, value) -> None:
    _knots(instance, attribute, value)
    if np.any(np.diff(value) <= 0):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be strictly increasing")


def _probabilities(instance, attribute, value) -> None:
    _knots(instance, attribute, value)
    if value.shape != instance.scores.shape:
        raise ValueError(
            f"{type(instance).__name__}.{attribute.name} must have one value per score "
            f"({instance.scores.shape[0]}), got {value.shape[0]}"
        )
    if np.any(np.diff(value) < 0) or value[0] < 0 or value[-1] > 1:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be non-decreasing within [0, 1]")


@attrs.frozen(eq=False)
class SigmoidCalibration:
    """Map a score t to the probability ``1 / (1 + exp(a t + b))`` (Platt's sigmoid).

    Parameters
    ----------
    a : float
        The fitted slope (Platt's A; ``a < 0`` when higher scores mean relevant), finite.
    b : float
        The fitted offset (Platt's B), finite.
    n_iter : int, default=0
        Newton steps taken.
    suboptimality : float, default=0.0
        Half the squared Newton decrement at the returned point: the objective's distance to its
        minimum, to second order, relative to the objective (0 when (a, b) has a closed form).
    converged : bool, default=True
        Whether ``suboptimality`` reached :data:`SIGMOID_RTOL` within :data:`SIGMOID_MAX_ITER` steps.
    """

    a: float = attrs.field(validator=_finite_float)
    b: float = attrs.field(validator=_finite_float)
    n_iter: int = 0
    suboptimality: float = 0.0
    converged: bool = True

    def __call__(self, scores) -> np.ndarray:
        """The probabilities of the scores (an array of any shape)."""
        return expit(-(self.a * np.asarray(scores, dtype=np.float64) + self.b))


@attrs.frozen(eq=False)
class IsotonicCalibration:
    """Map scores to probabilities by a non-decreasing piecewise-linear function.

    Parameters
    ----------
    scores : ndarray of shape (k,)
        Strictly increasing knots (the ends of the pooled blocks of the isotonic fit), float64.
    probabilities : ndarray of shape (k,)
        Non-decreasing values in [0, 1] at the knots; linear between them, constant beyond.

    Raises
    ------
    ValueError
        If the knots are not strictly increasing or the values not non-decreasing in [0, 1].
    """

    scores: np.ndarray = attrs.field(validator=_strictly_increasing)
    probabilities: np.ndarray = attrs.field(validator=_probabilities)

    def __call__(self, scores) -> np.ndarray:
        """The probabilities of the scores (an array of any shape)."""
        scores = np.asarray(scores, dtype=np.float64)
        return np.interp(scores, self.scores, self.probabilities)


# -- Platt's sigmoid --------------------------------------------------------------------


def platt_targets(y) -> np.ndarray:
    """Compute Platt's smoothed targets: ``(N+ + 1) / (N+ + 2)`` for a relevant row, ``1 / (N- + 2)`` for the others.

    The maximum a posteriori estimate of a row's probability under a uniform prior, as Platt
    derives it: the sigmoid then never has to reach 0 or 1, so its minimiser is finite.

    Parameters
    ----------
    y : array-like of shape (n,)
        0/1 labels; N+ and N- count its ones and zeros.

    Returns
    -------
    ndarray of shape (n,)
        The target of each row.
    """
    y = _binary(y, "y")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    return np.where(y == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def _binary(y, name) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of 0/1 labels, got shape {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(f"{name} must hold only 0 and 1")
    return y.astype(np.float64)


def _scores(scores, n, name="scores") -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array with one score per label value ({n}), got shape {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} must be finite (a score of +-inf or NaN has no probability to calibrate)")
    return scores


def _platt_objective(a: float, b: float, f: np.ndarray, t: np.ndarray) -> float:
    # Cross-entropy of p = 1/(1 + e^z), z = a f + b: -t log p - (1 - t) log(1 - p) = log(1 + e^z) - (1 - t) z,
    # written so that no exponential overflows.
    z = a * f + b
    return float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))


def fit_sigmoid(scores, y) -> SigmoidCalibration:
    """Fit Platt's sigmoid to the 0/1 labels ``y`` of the ``scores``.

    Minimises the cross-entropy between ``1 / (1 + exp(a t_i + b))`` and the smoothed targets
    (:func:`platt_targets`) by Newton's method on the standardised scores (an affine change of
    t that the minimiser follows exactly, for conditioning) with an Armijo backtracking line
    search (J. C. Platt, "Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods"; H.-T. Lin, C.-J. Lin and R. C. Weng, "A note on Platt's
    probabilistic outputs for support vector machines").  The Hessian is that of a logistic
    log-likelihood, positive definite unless the scores are all equal -- then ``a = 0`` and ``b``
    is the closed-form minimiser (the map is the smoothed label frequency).  Stops when half the
    squared Newton decrement, the second-order estimate of the distance to the minimum, is below
    :data:`SIGMOID_RTOL` times the objective; the estimate is kept in the result.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Finite decision values of one label.
    y : array-like of shape (n,)
        The label's 0/1 values on the same rows.

    Returns
    -------
    SigmoidCalibration
        The fitted ``(a, b)`` in the original score units, with the Newton steps taken, the
        suboptimality estimate and whether it converged.

    Raises
    ------
    ValueError
        If ``y`` is not a non-empty 1-D array of 0/1 values, or ``scores`` not finite with one
        score per value of ``y``.
    """
    y = _binary(y, "y")
    f = _scores(scores, y.size)
    t = platt_targets(y)
    center, spread = float(f.mean()), float(f.std())
    if not spread > 1e-12 * max(1.0, abs(center)):
        # Scores that do not vary carry no information: the best constant is the mean target.
        mean = float(t.mean())
        return SigmoidCalibration(a=0.0, b=float(np.log((1.0 - mean) / mean)), n_iter=0, suboptimality=0.0)
    g = (f - center) / spread
    n_pos = float(y.sum())
    # Platt's start: the sigmoid of no slope at the smoothed prior.
    a, b = 0.0, float(np.log((y.size - n_pos + 1.0) / (n_pos + 1.0)))
    value = _platt_objective(a, b, g, t)
    n_iter = 0
    while True:
        p = expit(-(a * g + b))
        residual = t - p  # the gradient with respect to z
        gradient = np.array([residual @ g, residual.sum()])
        weight = p * (1.0 - p)
        hessian = np.array([[weight @ (g * g), weight @ g], [weight @ g, weight.sum()]])
        # A ridge far below the curvature, for where the curvature itself underflowed (saturated p).
        hessian += 1e-12 * max(1.0, np.trace(hessian)) * np.eye(2)
        step = -np.linalg.solve(hessian, gradient)
        decrement = float(-(gradient @ step)) / 2.0
        if decrement <= SIGMOID_RTOL * value or n_iter == SIGMOID_MAX_ITER:
            break
        n_iter += 1
        length, trial = 1.0, math.inf
        while length >= 1e-10:
            trial = _platt_objective(a + length * step[0], b + length * step[1], g, t)
            if trial <= value - 1e-4 * length * 2.0 * decrement:
                break
            length /= 2.0
        if length < 1e-10:
            # No decrease that rounding can show: the point is as good as the arithmetic allows.
            break
        a, b, value = a + length * step[0], b + length * step[1], trial
    return SigmoidCalibration(
        a=a / spread,
        b=b - a * center / spread,
        n_iter=n_iter,
        suboptimality=decrement / value,
        converged=bool(decrement <= SIGMOID_RTOL * value),
    )


# -- isotonic regression ---------------------------------------------------------------


def pool_adjacent_violators(values, weights=None) -> np.ndarray:
    """Compute the non-decreasing sequence closest to ``values`` in weighted squared error.

    The pool-adjacent-violators algorithm: blocks are pushed left to right, and while a block's
    mean is below its left neighbour's the two are pooled into one block at their weighted mean
    (each merge removes a block, so the whole takes linear time).

    Parameters
    ----------
    values : array-like of shape (n,)
        Finite reals, in the order the fit must be non-decreasing in.
    weights : array-like of shape (n,) or None, default=None
        Positive finite weights (None: all 1).

    Returns
    -------
    ndarray of shape (n,)
        The fit: constant on consecutive blocks, at each block's weighted mean of ``values``.

    Raises
    ------
    ValueError
        For empty, non-1-D or non-finite values, or weights that are not positive finite reals of
        the same shape.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError("values must be a non-empty 1-D array of finite reals")
    if weights is None:
        weights = np.ones_like(values)
    else:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != values.shape or not np.all(np.isfinite(weights)) or not np.all(weights > 0):
            raise ValueError(f"weights must be positive finite reals, one per value ({values.size})")
    means, masses, lengths = [], [], []
    for value, weight in zip(values.tolist(), weights.tolist()):
        mean, mass, length = value, weight, 1
        while means and means[-1] > mean:
            # Pool with the left block: the weighted mean of both.
            left_mean, left_mass = means.pop(), masses.pop()
            mass_total = left_mass + mass
            mean = (left_mean * left_mass + mean * mass) / mass_total
            mass = mass_total
            length += lengths.pop()
        means.append(mean)
        masses.append(mass)
        lengths.append(length)
    return np.repeat(np.array(means), lengths)


def fit_isotonic(scores, y) -> IsotonicCalibration:
    """Fit the isotonic map to the 0/1 labels ``y`` of the ``scores``.

    Rows of equal score are pooled first (a map of the score must give them one value: each
    distinct score enters with its mean label and its count as weight), then
    :func:`pool_adjacent_violators` fits the non-decreasing sequence; the knots kept are the
    first and last distinct score of each pooled block, so the map is flat on a block and linear
    between blocks (B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Finite decision values of one label.
    y : array-like of shape (n,)
        The label's 0/1 values on the same rows.

    Returns
    -------
    IsotonicCalibration
        The fitted map.

    Raises
    ------
    ValueError
        If ``y`` is not a non-empty 1-D array of 0/1 values, or ``scores`` not finite with one
        score per value of ``y``.
    """
    y = _binary(y, "y")
    f = _scores(scores, y.size)
    distinct, inverse, counts = np.unique(f, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=y) / counts
    fitted = pool_adjacent_violators(means, counts.astype(np.float64))
    fitted = np.clip(fitted, 0.0, 1.0)  # means of 0/1 labels: only rounding can step outside
    starts = np.flatnonzero(np.r_[True, fitted[1:] != fitted[:-1]])
    ends = np.r_[starts[1:] - 1, fitted.size - 1]
    keep = np.unique(np.r_[starts, ends])
    return IsotonicCalibration(scores=distinct[keep].astype(np.float64), probabilities=fitted[keep].astype(np.float64))


_FITTERS = {"sigmoid": fit_sigmoid, "isotonic": fit_isotonic}


# -- the measure -------------------------------------------------------------------------


def expected_calibration_error(Y, probabilities, *, n_bins: int = 10) -> float:
    """Compute the expected calibration error of probabilities of the entries of ``Y``, over equal-width bins.

    Every (row, label) entry is one prediction: the entries are binned by their probability
    into ``n_bins`` intervals of width ``1 / n_bins`` (the last one closed), and the error is
    ``sum_b (n_b / N) |mean of Y in b - mean probability in b|`` (M. P. Naeini, G. F. Cooper and
    M. Hauskrecht, "Obtaining well calibrated probabilities using Bayesian binning", AAAI 2015).

    Parameters
    ----------
    Y : array-like of shape (n, L) or (n,)
        0/1 labels.
    probabilities : array-like of the same shape
        Probabilities in [0, 1].
    n_bins : int, default=10
        The number of equal-width bins, at least 1.

    Returns
    -------
    float
        The error in [0, 1]: 0 for perfectly calibrated probabilities on infinitely many rows; on
        N entries it is biased upwards by sampling noise (docs: calibration, "How well calibrated").

    Raises
    ------
    ValueError
        For shapes that differ or are empty, labels other than 0 and 1, probabilities outside
        [0, 1], or ``n_bins`` below 1.
    """
    check_scalar(n_bins, "n_bins", kind=numbers.Integral, low=1)
    Y = np.asarray(Y, dtype=np.float64).ravel()
    P = np.asarray(probabilities, dtype=np.float64).ravel()
    if Y.shape != P.shape or Y.size == 0:
        raise ValueError(f"Y and probabilities must have the same non-empty shape, got {Y.size} and {P.size} entries")
    if not np.all((Y == 0) | (Y == 1)):
        raise ValueError("Y must hold only 0 and 1")
    if not np.all((P >= 0) & (P <= 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    bins = np.minimum((P * n_bins).astype(np.intp), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    gaps = np.abs(np.bincount(bins, weights=Y - P, minlength=n_bins))
    return float(gaps.sum() / Y.size) if counts.any() else 0.0


# -- the estimator -----------------------------------------------------------------------


def _fresh(estimator):
    """An unfitted copy with the same parameters: estimators among them copied the same way, the rest deep-copied.

    Part objects given as parameters are copied too, so that the fold fits share no state.
    """
    params = {}
    for name, value in estimator.get_params(deep=False).items():
        if hasattr(value, "get_params") and not isinstance(value, type):
            params[name] = _fresh(value)
        else:
            params[name] = copy.deepcopy(value)
    return type(estimator)(**params)


def _score_only(estimator):
    """``_fresh(estimator)`` set to give scores only: no tuned threshold, no warm start (each fold starts afresh)."""
    model = _fresh(estimator)
    params = model.get_params(deep=False)
    overrides = {name: value for name, value in (("thresholding", "zero"), ("warm_start", False)) if name in params}
    return model.set_params(**overrides) if overrides else model


def _check_cv(value, name) -> None:
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        check_scalar(value, name, kind=numbers.Integral, low=2)
    elif isinstance(value, (str, bytes)) or not callable(getattr(value, "split", None)):
        raise ValueError(f"{name} must be a number of folds (an int >= 2) or a splitter with split(X, Y), got {value!r}")


class CalibratedMultiLabel(MultiLabelEstimator):
    """A multi-label method with calibrated probabilities: ``predict_proba`` by per-label Platt or isotonic maps.

    The maps are fitted on out-of-fold scores of the training rows (module docstring); the
    model that scores new rows is the method fitted on all of them.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted (e.g. ``make_method("br", preprocess="standardize")``); it is copied
        for every fold and once more for the final model (``estimator_``).
    method : {"sigmoid", "isotonic"}, default "sigmoid"
        The map: Platt's sigmoid (two parameters per label, the safer choice below a few hundred
        training rows) or isotonic regression (any non-decreasing map).
    cv : int or splitter, default 3
        The number of inner folds (at least 2; the folds are drawn by iterative stratification),
        or an object whose ``split(X, Y)`` yields (train, test) index arrays, as scikit-learn's
        splitters do.  The calibration costs ``cv`` more fits of the method.
    random_state : None, int or numpy Generator, default None
        Shuffles the rows before the folds are drawn.  None draws them from Y alone, without
        shuffling (the same folds at every fit); must be None when ``cv`` is a splitter.

    Attributes
    ----------
    estimator_ : MultiLabelEstimator
        The method fitted on all the training rows: it gives ``decision_function`` and ``predict``.
    calibrators_ : list of SigmoidCalibration or IsotonicCalibration
        One map per label the method was fitted on, in column order.
    calibration_rows_ : int array (L,)
        How many out-of-fold scores each map was fitted on (fewer than the training rows for a
        label that some fold's training rows held at one value).
    n_splits_ : int
        The number of inner folds used.

    Notes
    -----
    ``predict`` and ``decision_function`` are the method's own (calibration changes
    probabilities, not decisions).  Further ``fit`` inputs (e.g. SSMLRL's ``X_unlabeled``) go
    unchanged to every fit of the method.
    """

    _parameter_constraints = {
        "estimator": InstanceOf(MultiLabelEstimator, "a multi-label estimator (e.g. make_method('br'))"),
        "method": Options(CALIBRATION_METHODS),
        "cv": Rule(_check_cv, "a number of folds (an int >= 2) or a splitter with split(X, Y)"),
    }

    def __init__(self, estimator=None, method="sigmoid", cv=3, random_state=None):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, Y, **fit_params):
        """Fit the method on ``cv`` folds for out-of-fold scores, one map per label on them, and the method on all rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training features (or a precomputed kernel, whose columns are cut to each fold's
            training rows).
        Y : array-like of shape (n_samples, n_labels)
            Binary label matrix.
        **fit_params
            Further inputs that go to every fit of the method, which must take them (TypeError naming
            the first it does not take, before anything is fitted).

        Returns
        -------
        CalibratedMultiLabel
            ``self``, fitted.
        """
        self._check_fit_params(fit_params)
        return self._validated_fit(X, Y, **fit_params)

    def _check_fit_params(self, fit_params) -> None:
        if not fit_params or not isinstance(self.estimator, MultiLabelEstimator):
            return  # a bad estimator is refused, by name, with the other parameters
        parameters = inspect.signature(self.estimator.fit).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return
        unknown = [name for name in fit_params if name not in parameters]
        if unknown:
            raise TypeError(
                f"CalibratedMultiLabel.fit got {unknown[0]!r}, which {type(self.estimator).__name__}.fit does not take "
                f"(it takes {', '.join(parameters) or 'no further inputs'})"
            )

    def _check_parameter_rules(self) -> None:
        if not isinstance(self.cv, numbers.Integral) and self.random_state is not None:
            raise ValueError("random_state applies to cv given as a number of folds; set it on the splitter given as cv")

    def _splits(self, X, Y) -> list:
        if isinstance(self.cv, numbers.Integral):
            if self.cv > X.shape[0]:
                raise ValueError(f"cv={self.cv} is larger than the number of training rows ({X.shape[0]})")
            splitter = IterativeStratifiedKFold(
                n_splits=int(self.cv), shuffle=self.random_state is not None, random_state=self.random_state
            )
        else:
            splitter = self.cv
        splits = []
        for train, test in splitter.split(X, Y):
            train, test = np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)
            if train.size == 0 or test.size == 0:
                raise ValueError("cv yielded a fold with no training or no test rows")
            splits.append((train, test))
        if len(splits) < 2 and isinstance(self.cv, numbers.Integral):
            raise ValueError(f"cv yielded {len(splits)} fold(s); calibration needs at least 2")
        if not splits:
            raise ValueError("cv yielded no folds")
        return splits

    def _fit(self, X, Y, **fit_params):
        n, L = Y.shape
        precomputed = uses_precomputed_kernel(self.estimator)
        splits = self._splits(X, Y)
        scores = np.full((n, L), np.nan)
        for train, test in splits:
            fold_Y = Y[train]
            varying = np.flatnonzero(fold_Y.min(axis=0) != fold_Y.max(axis=0))
            if varying.size == 0:
                continue
            model = _score_only(self.estimator).fit(rows_of(X, train, train, precomputed), fold_Y[:, varying], **fit_params)
            fold_scores = np.asarray(model.decision_function(rows_of(X, test, train, precomputed)), dtype=np.float64)
            if not np.all(np.isfinite(fold_scores)):
                labels = varying[~np.isfinite(fold_scores).all(axis=0)]
                raise ValueError(
                    f"{type(self.estimator).__name__} gave non-finite out-of-fold scores (inf or NaN) for label(s) "
                    f"{labels.tolist()}: such a score has no probability to calibrate"
                )
            scores[np.ix_(test, varying)] = fold_scores
        # NaN marks exactly the (row, label) pairs that no fold's model could score.
        scored = ~np.isnan(scores)
        rows = scored.sum(axis=0)
        fitter = _FITTERS[self.method]
        calibrators = []
        for j in range(L):
            if rows[j] == 0:
                # No fold could score the label (every fold's training rows held one value of it): the
                # smoothed frequency is the only estimate left.  Counted in the warning below.
                calibrators.append(fit_sigmoid(np.zeros(n), Y[:, j]))
            else:
                calibrators.append(fitter(scores[scored[:, j], j], Y[scored[:, j], j]))
        partial = np.flatnonzero(rows < n)
        if partial.size:
            unscored = np.flatnonzero(rows == 0)
            warnings.warn(
                f"CalibratedMultiLabel: {partial.size} of {L} label(s) ({_shown(partial)}) were calibrated on part of the "
                f"{n} training rows (fewest: {int(rows.min())}): in some of the {len(splits)} folds the training rows "
                f"held one value of the label, so that fold's model could not score it"
                + (
                    f"; {unscored.size} label(s) ({_shown(unscored)}) got no out-of-fold score at all and their "
                    f"probability is the smoothed training frequency"
                    if unscored.size
                    else ""
                ),
                UserWarning,
                stacklevel=3,
            )
        unconverged = [j for j, c in enumerate(calibrators) if isinstance(c, SigmoidCalibration) and not c.converged]
        if unconverged:
            warnings.warn(
                f"CalibratedMultiLabel: Platt's fit stopped above its tolerance (SIGMOID_RTOL) on {len(unconverged)} "
                f"label(s) ({_shown(np.array(unconverged))}): after {SIGMOID_MAX_ITER} Newton steps, or where rounding "
                f"left no decrease",
                UserWarning,
                stacklevel=3,
            )
        self.estimator_ = _fresh(self.estimator).fit(X, Y, **fit_params)
        self.calibrators_ = calibrators
        self.calibration_rows_ = rows.astype(np.int64)
        self.n_splits_ = len(splits)

    def _decision_function(self, X):
        return self.estimator_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """Predict with the method's own rule (its threshold, its inference), unchanged by calibration.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to label.

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The {0, 1} predictions of ``estimator_`` (int64); labels constant in training are
            predicted at their constant value.
        """
        X = self._validate_test_X(X)
        labels = np.asarray(self.estimator_.predict(X), dtype=np.int64) if self._learned_some_label() else None
        return self._with_constant_labels(labels, X.shape[0], "labels")

    def _predict_proba(self, X) -> np.ndarray:
        scores = np.asarray(self.estimator_.decision_function(X), dtype=np.float64)
        if scores.shape[1] != len(self.calibrators_):
            raise ValueError(
                f"the fitted method gives {scores.shape[1]} score columns for the {len(self.calibrators_)} calibrated labels"
            )
        return np.column_stack([calibrate(scores[:, j]) for j, calibrate in enumerate(self.calibrators_)])


def _shown(indices: np.ndarray, limit: int = 10) -> str:
    listed = ", ".join(str(int(i)) for i in indices[:limit])
    return f"indices {listed}" + (f" and {indices.size - limit} more" if indices.size > limit else "")
