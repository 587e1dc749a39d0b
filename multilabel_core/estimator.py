"""Estimators: the scikit-learn compatible base and the composable estimator.

:class:`MultiLabelEstimator` carries the contract every method follows (docs/estimators.md):

- parameters are stored unchanged by ``__init__`` and validated by ``fit``;
- ``fit(X, Y)`` takes X (n, d), dense or CSR/CSC, float32 or float64, and Y (n, L), a
  dense or sparse {0, 1} indicator matrix, and returns ``self``;
- ``decision_function(X)`` is a float64 (n, L) array of scores t_ij, and
  ``predict(X) = [t_ij > 0]`` a dense int64 (n, L) {0, 1} array;
- fitted attributes end in ``_``: at least ``n_features_in_``, ``n_labels_`` and
  ``classes_`` (the two values every label takes, ``[0, 1]``), and ``feature_names_in_``
  when X was a data frame with string column names (checked again at predict time);
- a label column that takes one value on the training rows is not learned: the method is
  fitted on the other labels, the constant label predicts its training value with a constant
  score, and it is counted in one :class:`ConstantLabelWarning` and in ``constant_labels_``.

scikit-learn is optional.  When it is installed the base inherits its ``ClassifierMixin``
and ``BaseEstimator`` (so ``clone``, ``GridSearchCV`` and ``Pipeline`` work, and
:class:`NotFittedError` is a subclass of scikit-learn's); without it, small fallbacks
provide ``get_params``, ``set_params``, ``__repr__`` and ``score``.  Everything else is
one code path.

:class:`ComposedEstimator` builds a method from the five parts of
:mod:`multilabel_core.base`; named methods (``plugins/``) are thin presets over it.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import warnings
from collections.abc import Mapping

import attrs
import numpy as np

from .base import (
    CapabilityError,
    Kernel,
    LabelRelation,
    Loss,
    Problem,
    Regularizer,
    Solver,
    Threshold,
    warm_state_of,
)
from .composition import AUTO, SolverChoice, build_solver, fed_fit, feed_if_unread, select_solver
from .exceptions import ConstantLabelWarning, NotFittedError
from .kernels import PrecomputedKernel
from .plugins import list_components, make_component
from .relations import correlation_from_covariance
from .solvers.smo import kernel_expansion
from .validation import (
    COUNT,
    MAX_ITER_LIMIT,
    POSITIVE,
    Cost,
    Flag,
    InstanceOf,
    NoneOr,
    Rule,
    Seed,
    check_cost,
    check_scalar,
    check_X,
    check_Y,
    checked_inputs,
    merged_constraints,
    to_signs,
    validate_parameters,
)

__all__ = ["ComposedEstimator", "ConstantLabelWarning", "MultiLabelEstimator", "NotFittedError", "constant_label_scores"]


class _ParamsFallback:
    """``get_params``/``set_params``/``__repr__`` in scikit-learn's style, for use without it."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        parameters = inspect.signature(cls.__init__).parameters.values()
        return sorted(p.name for p in parameters if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep: bool = True) -> dict:
        params = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            params[name] = value
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                params.update((f"{name}__{key}", nested) for key, nested in value.get_params().items())
        return params

    def set_params(self, **params):
        valid = self._get_param_names()
        for key, value in params.items():
            name, _, nested = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self!r}. Valid parameters are: {valid}")
            if nested:
                getattr(self, name).set_params(**{nested: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        arguments = ", ".join(f"{name}={value!r}" for name, value in self.get_params(deep=False).items())
        return f"{type(self).__name__}({arguments})"


class _ScoreFallback:
    """``score`` as scikit-learn's ClassifierMixin defines it for multi-label Y: subset accuracy."""

    def score(self, X, Y) -> float:
        Y = check_Y(Y)
        return float(np.mean(np.all(self.predict(X) == Y, axis=1)))


try:
    from sklearn.base import BaseEstimator, ClassifierMixin
except ImportError:  # scikit-learn is optional
    BaseEstimator, ClassifierMixin = _ParamsFallback, _ScoreFallback


# -- labels constant on the training rows ---------------------------------------------------


#: Constant labels listed by index at most in the warning (all of them are in ``constant_labels_``).
_SHOWN_LABELS = 40


def constant_label_scores(fitted_scores, values, cuts=()) -> np.ndarray:
    """The decision scores of constant labels of ``values`` (0 or 1 each), beside ``fitted_scores``.

    With ``low`` the least of the finite fitted scores, 0 and the ``cuts`` (the fitted
    threshold's cut values), and ``high`` the greatest of them, a never-relevant label scores
    ``low - max(1, |low|)`` and an always-relevant one ``high + max(1, |high|)``: strictly
    below (above) every one of them, so below (above) 0 and every cut, at a distance of at
    least 1.  Without fitted scores or cuts the scores are -1 and +1.  Non-finite fitted scores
    take no part.  ValueError when the bounds reach the end of the float range, where no finite
    score lies beyond them.

    Parameters
    ----------
    fitted_scores : array of float
        Scores of the learned labels (any shape; only their finite values count).
    values : array of {0, 1}
        The constant labels' values.
    cuts : iterable of float
        Further values the scores must lie beyond (a threshold's ``value`` or ``thresholds``).

    Returns
    -------
    ndarray of float64, the shape of ``values``
    """
    pooled = np.concatenate([np.ravel(np.asarray(fitted_scores, dtype=np.float64)),
                             np.ravel(np.asarray(list(cuts), dtype=np.float64)), [0.0]])  # fmt: skip
    pooled = pooled[np.isfinite(pooled)]
    low, high = float(pooled.min()), float(pooled.max())
    with np.errstate(over="ignore"):  # beyond the float range: the next float, checked below
        below = min(low, 0.0) - max(1.0, abs(low))
        above = max(high, 0.0) + max(1.0, abs(high))
        if not np.isfinite(below):
            below = float(np.nextafter(low, -np.inf))
        if not np.isfinite(above):
            above = float(np.nextafter(high, np.inf))
    scores = np.where(np.asarray(values) > 0, above, below).astype(np.float64)
    if not np.all(np.isfinite(scores)):
        raise ValueError("the fitted labels' scores reach the float range: no finite score ranks a constant label")
    return scores


def _threshold_cuts(threshold) -> list[float]:
    """The fixed cut values of a fitted threshold (``value``, per-label ``thresholds``), duck-typed; else none.

    A threshold that cuts each row at its own place (a rank cut, a learned t(x)) has none.
    """
    cuts = []
    for name in ("value", "thresholds"):
        held = getattr(threshold, name, None)
        if held is not None and not isinstance(held, (str, bool)):
            try:
                cuts.extend(float(v) for v in np.ravel(np.asarray(held, dtype=np.float64)))
            except (TypeError, ValueError):
                continue
    return cuts


def _label_listing(constant, values, names) -> str:
    """``"3 (never relevant), 4 'y4' (always relevant), ..."``, the first :data:`_SHOWN_LABELS`."""
    shown = []
    for j, value in list(zip(constant, values))[:_SHOWN_LABELS]:
        name = f" {names[j]!r}" if names is not None else ""
        shown.append(f"{j}{name} ({'always' if value else 'never'} relevant)")
    listing = ", ".join(shown)
    if len(constant) > _SHOWN_LABELS:
        listing += f", ... and {len(constant) - _SHOWN_LABELS} more"
    return listing


# -- feature names ----------------------------------------------------------------------

#: Names listed at most in each part of the error for feature names that differ from fit's.
_SHOWN_NAMES = 5


def _feature_names(X):
    """The column names of a data frame X, as an object array, when they are all strings; else None.

    Duck-typed: any X with a ``columns`` attribute (a pandas or polars DataFrame) counts as
    a frame, so pandas is not needed; arrays and sparse matrices have no names.
    """
    if not hasattr(X, "columns"):
        return None
    names = list(X.columns)
    if not names or not all(isinstance(name, str) for name in names):
        return None
    return np.array(names, dtype=object)


def _listed(names) -> str:
    shown = "".join(f"- {name}\n" for name in names[:_SHOWN_NAMES])
    if len(names) > _SHOWN_NAMES:
        shown += f"- ... and {len(names) - _SHOWN_NAMES} more\n"
    return shown


def _names_mismatch(fitted: np.ndarray, given: np.ndarray) -> str:
    """The error for names that differ from fit's: the first unseen and missing ones, or the first misplaced one.

    The wording is scikit-learn's (its estimator checks match it).
    """
    message = "The feature names should match those that were passed during fit.\n"
    unseen = sorted(set(given) - set(fitted))
    missing = sorted(set(fitted) - set(given))
    if unseen:
        message += "Feature names unseen at fit time:\n" + _listed(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
        if len(given) == len(fitted):
            i = int(np.flatnonzero(given != fitted)[0])
            message += f"The first difference: column {i} is {given[i]!r}, at fit it was {fitted[i]!r}.\n"
        else:
            message += f"X has {len(given)} columns for the {len(fitted)} names seen at fit (some repeated).\n"
    return message


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside the library and its plugins."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        ("multilabel_core.", "multilabel_core_plugins.")
    ):
        frame, level = frame.f_back, level + 1
    return level


# -- probabilities ----------------------------------------------------------------------


class _ProbabilityMethod:
    """``predict_proba`` as a descriptor: the method on an estimator whose class computes
    probabilities (defines ``_predict_proba``), an AttributeError saying why on any other.

    So ``hasattr(estimator, "predict_proba")`` answers whether probabilities are defined, as
    scikit-learn's meta-estimators and scorers expect; on the class itself it is the function.
    """

    def __init__(self, function):
        self.function = function
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, name, getattr(function, name))
        self.__wrapped__ = function

    def __get__(self, instance, owner=None):
        if instance is None:
            return self.function
        reason = instance._no_probability_reason()
        if reason is not None:
            raise AttributeError(reason)
        return self.function.__get__(instance, owner)


# -- validation of the common hyper-parameters ----------------------------------------


def _n_jobs(value, name):
    check_scalar(value, name, kind=numbers.Integral, low=-MAX_ITER_LIMIT, high=MAX_ITER_LIMIT)
    if value == 0:
        raise ValueError(f"{name} must be a nonzero int (-1 for all cores) or None, got 0")


def _thresholding(value, name):
    _check_thresholding(value)


#: The parameters the methods share (one name and one meaning everywhere: docs/estimators.md),
#: each with its constraint; ``None`` means "the default" where a constraint is ``NoneOr``.
#: It is :class:`MultiLabelEstimator`'s ``_parameter_constraints``: every estimator inherits
#: it, and a class that gives a name another rule declares it again in its own dict.
COMMON_PARAMETERS = {
    "C": Cost(),
    "lam": POSITIVE,
    "gamma": NoneOr(POSITIVE),
    "tol": NoneOr(POSITIVE),
    "max_iter": NoneOr(COUNT),
    "n_jobs": NoneOr(Rule(_n_jobs, "a nonzero int (-1 for all cores)")),
    # Validated without drawing: a Generator the user passed is left where it was.
    "random_state": Seed(),
    "fit_intercept": Flag(),
    "warm_start": Flag(),
    "thresholding": Rule(_thresholding, "a registered threshold name or a Threshold object"),
}


def _check_thresholding(value):
    """The threshold part a ``thresholding`` value names, unfitted; ValueError naming the parameter otherwise.

    A registered threshold name (``make_component("threshold", name)``) or a
    :class:`~multilabel_core.base.Threshold` object.
    """
    if isinstance(value, Threshold):
        return value
    known = sorted(spec.name for spec in list_components("threshold"))
    if not isinstance(value, str) or value not in known:
        raise ValueError(
            f"thresholding must be a registered threshold name ({', '.join(known)}) or a Threshold object, "
            f"got {value!r}"
        )
    return value


class MultiLabelEstimator(ClassifierMixin, BaseEstimator):
    """Base class of the multi-label estimators (see the module docstring for the contract).

    Subclasses implement ``_fit(X, Y)`` -- X validated, Y a dense int8 {0, 1} matrix in
    which every label column holds both values -- setting their own fitted attributes,
    and ``_decision_function(X)``.  The base validates the common hyper-parameters
    (:data:`COMMON_PARAMETERS`, those the subclass has) and the data, and checks that
    ``X`` at predict time has the training number of features.

    A label column that takes one value on the training rows (never or always relevant
    there: a rare label in a subset of many-label data) is data, not an error, but a
    classifier has nothing to separate in it.  The base fits the method on the other
    columns only (``_fit`` gets ``Y[:, fitted_labels_]``), so every coupling the method
    learns between labels -- a label relation or covariance, pair kernels, a chain, a label
    powerset, neighbours' label counts, a ranking of label pairs -- leaves the constant
    labels out.  Each constant label is predicted at its training value on every row; its
    decision score is a constant of the fit (:func:`constant_label_scores`: beyond every
    training score of the learned labels, beyond 0 and beyond the fitted threshold's cut
    values, at a distance of at least 1), so ``predict`` agrees with the sign of the score.
    One :class:`ConstantLabelWarning` gives their number and indices (names for a data
    frame Y).  Fitted attributes: ``constant_labels_`` (dict label index -> value 0/1, empty
    when there is none), ``constant_scores_`` (dict label index -> its score) and
    ``fitted_labels_`` (the indices of the learned labels, in order): the method's own
    fitted attributes (coefficients, relations, certificates, ``threshold_``) are over
    these labels.  When every label is constant nothing is fitted and the estimator
    predicts the constants.  A method that needs at least ``min_labels`` labels (the
    label-ranking family orders pairs of labels: 2) refuses a Y with fewer learnable labels
    than that but at least one, naming the counts.

    Fitted on a data frame whose column names are all strings (a pandas DataFrame,
    detected by its ``columns``: pandas is not required), an estimator keeps them in
    ``feature_names_in_`` (an object array) and checks ``X`` at predict time against
    them as scikit-learn does: other names, or the same in another order, raise a
    ValueError naming the first differences; X without names (an array) gives a
    UserWarning, as does a frame with names for an estimator fitted without them.

    An estimator with a ``thresholding`` parameter (every registered method) fits that
    threshold (:mod:`multilabel_core.thresholds`) at the end of ``fit``, on the training rows
    only, keeps it in ``threshold_`` (and in ``parts_["threshold"]`` when it has ``parts_``),
    and ``predict`` applies it to the scores; ``zero``, the default, is ``t_ij > 0``.
    """

    def fit(self, X, Y):
        """Fit the method on training rows and their labels.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
            The training rows (for a precomputed kernel, the ``(n, n)`` training kernel).
        Y : array_like or sparse matrix of shape (n_samples, n_labels)
            The {0, 1} label indicator matrix.

        Returns
        -------
        MultiLabelEstimator
            ``self``, fitted.

        Raises
        ------
        ValueError
            If a hyper-parameter, ``X`` or ``Y`` is invalid (each message names it).
        CapabilityError
            If the method's parts cannot be solved together.
        """
        return self._validated_fit(X, Y)

    def _validated_fit(self, X, Y, **data):
        """``fit`` itself; ``data`` (further inputs a subclass's ``fit`` names, e.g. SSMLRL's
        ``X_unlabeled``) goes to ``_fit`` unchanged."""
        if Y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: give the (n, L) indicator matrix Y"
            )
        self._validate_params()
        names = _feature_names(X)
        label_names = _feature_names(Y)
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
        # X is scanned here once: the kernels and solvers it is handed to take it as checked.
        with checked_inputs(X):
            threshold = self._threshold_part()
            fitted, constant, values = self._split_constant_labels(Y)
            Y_fit = Y if constant.size == 0 else np.ascontiguousarray(Y[:, fitted])
            if fitted.size:
                self._fit(X, Y_fit, **data)
            else:
                # Nothing to learn: no attribute of an earlier fit may stand for a model of these labels.
                for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("__")]:
                    del self.__dict__[name]
            if names is None:
                self.__dict__.pop("feature_names_in_", None)
            else:
                self.feature_names_in_ = names
            self.n_features_in_ = X.shape[1]
            self.n_labels_ = Y.shape[1]
            self.classes_ = np.array([0, 1])
            self.fitted_labels_ = fitted
            self.constant_labels_ = {int(j): int(v) for j, v in zip(constant, values)}
            if threshold is not None and fitted.size:
                self.threshold_ = self._fit_threshold(threshold, X, Y_fit, **data)
                if isinstance(getattr(self, "parts_", None), dict):
                    self.parts_ = {**self.parts_, "threshold": self.threshold_}
            else:
                self.__dict__.pop("threshold_", None)
            self.constant_scores_ = self._constant_scores(X, values, constant)
            if constant.size:
                self._warn_constant_labels(X.shape[0], constant, values, label_names)
            return self

    def _split_constant_labels(self, Y):
        """``(fitted, constant, values)``: the indices of the label columns of Y that take both values,
        of those that take one, and the one value of each (int8).

        ValueError when some but fewer than ``min_labels`` columns take both values.
        """
        counts = Y.sum(axis=0)
        is_constant = (counts == 0) | (counts == Y.shape[0])
        fitted, constant = np.flatnonzero(~is_constant), np.flatnonzero(is_constant)
        minimum = int(getattr(self, "min_labels", 1))
        if 0 < fitted.size < minimum:
            shown = ", ".join(map(str, constant[:_SHOWN_LABELS])) + (", ..." if constant.size > _SHOWN_LABELS else "")
            raise ValueError(
                f"{type(self).__name__} needs at least {minimum} label columns that take both values on the "
                f"training rows (it orders labels against each other), but only {fitted.size} of the {Y.shape[1]} do"
                + (f": {constant.size} are constant there ({shown})" if constant.size else "")
            )
        return fitted, constant, (counts[constant] > 0).astype(np.int8)

    def _constant_scores(self, X, values, constant) -> dict:
        """``constant_scores_``: each constant label's score (:func:`constant_label_scores`) from the
        learned labels' scores on the training rows ``X`` and the fitted threshold's cut values."""
        if constant.size == 0:
            return {}
        fitted_scores = np.zeros(0)
        if self.fitted_labels_.size:
            with warnings.catch_warnings():
                # Only the range of the training scores is read: a method's warning about how it predicts
                # those rows (the concept network's cycling inference) says nothing about the range.
                warnings.simplefilter("ignore")
                fitted_scores = np.asarray(self._decision_function(X), dtype=np.float64)
        cuts = _threshold_cuts(getattr(self, "threshold_", None))
        scores = constant_label_scores(fitted_scores, values, cuts)
        return {int(j): float(score) for j, score in zip(constant, scores)}

    def _warn_constant_labels(self, n_rows, constant, values, label_names) -> None:
        n_labels = self.fitted_labels_.size + constant.size
        learned = (
            f"the model, and every coupling it learns between labels, is fitted on the other {self.fitted_labels_.size} "
            "label(s) only"
            if self.fitted_labels_.size
            else "no label takes both values, so nothing is fitted"
        )
        warnings.warn(
            f"{type(self).__name__}: {constant.size} of {n_labels} label column(s) take one value on the {n_rows} "
            f"training rows and are not learned: {_label_listing(constant, values, label_names)}.  Each is predicted "
            f"at that value with a constant score (constant_labels_, constant_scores_); {learned}.",
            ConstantLabelWarning,
            stacklevel=_outside_stacklevel(),
        )

    def _has_constant_labels(self) -> bool:
        """Whether the fit left some labels constant (a model saved before the rule has no ``constant_labels_``)."""
        return bool(getattr(self, "constant_labels_", None))

    def _learned_some_label(self) -> bool:
        """Whether a model was fitted (False when every label was constant on the training rows)."""
        fitted = getattr(self, "fitted_labels_", None)
        return fitted is None or fitted.size > 0

    def _fitted_columns(self, scores):
        """The columns of an (n, L) array that belong to the learned labels (all of them when none is constant)."""
        if not self._has_constant_labels():
            return scores
        return np.asarray(scores)[:, self.fitted_labels_]

    def _with_constant_labels(self, fitted_part, n_rows: int, kind: str = "scores") -> np.ndarray:
        """The (n, L) array of all labels from ``fitted_part`` (n, len(fitted_labels_)) of the learned ones.

        The constant labels' columns hold their score (``kind="scores"``, float64), their value
        (``"labels"``, int64) or their probability, 0.0 or 1.0 (``"proba"``, float64).
        ``fitted_part`` is ignored (may be None) when nothing was learned.
        """
        if not self._has_constant_labels():
            return fitted_part
        dtype = np.int64 if kind == "labels" else np.float64
        full = np.empty((n_rows, self.n_labels_), dtype=dtype)
        if self.fitted_labels_.size:
            full[:, self.fitted_labels_] = fitted_part
        source = self.constant_scores_ if kind == "scores" else self.constant_labels_
        for j, value in self.constant_labels_.items():
            full[:, j] = source[j]
        return full

    # -- the threshold (the sixth part) ---------------------------------------------------

    def _threshold_part(self):
        """The unfitted threshold ``thresholding`` names, or None for an estimator without the parameter.

        A name is built through the component registry with :meth:`_threshold_settings`; an
        object is used as it is.  Called before the fit, so a bad value costs nothing.
        """
        params = self.get_params(deep=False)
        if "thresholding" not in params:
            return None
        value = _check_thresholding(params["thresholding"])
        if isinstance(value, str):
            return make_component("threshold", value, **self._threshold_settings(value))
        return value

    def _threshold_settings(self, name: str) -> dict:
        """Keyword arguments for the threshold registered as ``name`` when it is given by name (here: none)."""
        return {}

    def _inner_threshold_params(self) -> dict:
        """The parameters that differ in the copies a threshold refits on inner folds.

        ``thresholding="zero"`` (the inner fits give scores, not labels, and must not tune
        again) and no warm start (each inner fit starts afresh).
        """
        params = self.get_params(deep=False)
        return {"thresholding": "zero"} | ({"warm_start": False} if "warm_start" in params else {})

    def _fit_threshold(self, threshold, X, Y, **data):
        """The fitted threshold, learned on the training rows (validated X, dense int8 Y) and their scores."""
        scores = None
        if threshold.needs_scores:
            # X is validated already: straight to the scores (decision_function would check feature names again).
            scores = np.ascontiguousarray(self._decision_function(X), dtype=np.float64)
        return threshold.fit(self, X, Y, scores, **data)

    def _applies_threshold(self) -> bool:
        """Whether ``predict`` cuts the scores with a fitted threshold other than ``zero``.

        A method whose own labels are not the sign of its scores (the concept network's
        inference) keeps them under ``zero`` and defers to the threshold otherwise.
        """
        from .thresholds import ZeroThreshold

        return not isinstance(getattr(self, "threshold_", None), (type(None), ZeroThreshold))

    def decision_function(self, X) -> np.ndarray:
        """Compute the scores t_ij: label j is predicted relevant for row i when t_ij > 0.

        A label constant on the training rows scores its constant ``constant_scores_[j]`` on every row.

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
            The rows to score, with the training rows' number of features (for a precomputed
            kernel, the ``(n_samples, n_train)`` kernel against the training rows).

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The scores, float64.

        Raises
        ------
        ValueError
            If the estimator is not fitted or ``X`` is invalid.
        """
        X = self._validate_test_X(X)
        with checked_inputs(X):
            fitted = self._decision_function(X) if self._learned_some_label() else None
        return np.ascontiguousarray(self._with_constant_labels(fitted, X.shape[0], "scores"), dtype=np.float64)

    def predict(self, X) -> np.ndarray:
        """Predict the labels: the fitted threshold applied to ``decision_function(X)``.

        With ``thresholding="zero"`` (the default) this is ``[decision_function(X) > 0]``.  The
        threshold cuts the learned labels' scores; a label constant on the training rows is
        predicted at its value (``constant_labels_``).

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
            The rows to label (as for :meth:`decision_function`).

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The dense int64 {0, 1} prediction.

        Raises
        ------
        ValueError
            If the estimator is not fitted or ``X`` is invalid.
        """
        scores = self.decision_function(X)
        if self._has_constant_labels():
            fitted = scores[:, self.fitted_labels_]
        else:
            fitted = scores
        threshold = getattr(self, "threshold_", None)
        if threshold is None:
            labels = (fitted > 0.0).astype(np.int64)
        else:
            labels = threshold.predict(fitted)
        return self._with_constant_labels(labels, scores.shape[0], "labels")

    @_ProbabilityMethod
    def predict_proba(self, X) -> np.ndarray:
        """Probabilities P(y_ij = 1 | x_i), a float64 (n, L) array, for the estimators that define them.

        One column per label, as scikit-learn's one-vs-rest classifier and scikit-multilearn
        give them for multi-label data.  A label constant on the training rows has its constant
        as its probability, 0.0 or 1.0.  A method's scores are margins or regression values,
        not probabilities: a method has ``predict_proba`` only when it defines a probability
        (:class:`~multilabel_core.calibration.CalibratedMultiLabel` wraps any method and
        calibrates its scores); on the others the attribute does not exist and reading it
        raises an AttributeError saying why and how to get one.
        """
        X = self._validate_test_X(X)
        with checked_inputs(X):
            fitted = self._predict_proba(X) if self._learned_some_label() else None
        return np.ascontiguousarray(self._with_constant_labels(fitted, X.shape[0], "proba"), dtype=np.float64)

    def _no_probability_reason(self) -> str | None:
        """Why this estimator has no ``predict_proba`` (None when its class defines ``_predict_proba``)."""
        if callable(getattr(type(self), "_predict_proba", None)):
            return None
        name = type(self).__name__
        return (
            f"{name} has no predict_proba: its decision_function gives scores (margins or regression values) "
            f"that are not probabilities, and {name} defines no map from them to probabilities. For calibrated "
            f"probabilities wrap it: CalibratedMultiLabel(estimator, method='sigmoid') (Platt's sigmoid) or "
            f"method='isotonic', from multilabel_core, fits one map per label on out-of-fold scores"
        )

    #: name -> :class:`~multilabel_core.validation.Constraint`: merged along the MRO
    #: (:func:`~multilabel_core.validation.merged_constraints`), a subclass's entries adding to and
    #: replacing its bases'; :meth:`_validate_params` checks every constructor parameter against them.
    _parameter_constraints = COMMON_PARAMETERS

    def _validate_params(self) -> None:
        """Check the hyper-parameters: the declared constraints, then the cross-parameter rules.

        Not meant to be overridden: a class declares its parameters' constraints as data in
        ``_parameter_constraints`` and a rule between parameters in :meth:`_check_parameter_rules`.
        """
        validate_parameters(self.get_params(deep=False), merged_constraints(type(self)), type(self).__name__)
        self._check_parameter_rules()

    def _check_parameter_rules(self) -> None:
        """Rules between parameters that no single constraint states (here: none); ValueError naming them."""

    def _validate_test_X(self, X):
        if not hasattr(self, "n_labels_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' with appropriate arguments first"
            )
        self._check_feature_names(X)
        X = check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return X

    def _check_feature_names(self, X) -> None:
        """Compare X's column names (if any) with ``feature_names_in_`` (if any): ValueError or UserWarning."""
        fitted = getattr(self, "feature_names_in_", None)
        given = _feature_names(X)
        if fitted is None and given is None:
            return
        name = type(self).__name__
        if given is None:
            warnings.warn(
                f"X does not have valid feature names, but {name} was fitted with feature names",
                UserWarning,
                stacklevel=_outside_stacklevel(),
            )
        elif fitted is None:
            warnings.warn(
                f"X has feature names, but {name} was fitted without feature names",
                UserWarning,
                stacklevel=_outside_stacklevel(),
            )
        elif len(given) != len(fitted) or not np.array_equal(given, fitted):
            raise ValueError(_names_mismatch(fitted, given))

    def __sklearn_tags__(self):
        # Called by scikit-learn only, so its base class is there to extend.
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False
        return tags


# -- the composable estimator -------------------------------------------------------

#: The role of each part in :class:`~multilabel_core.base.Problem` and the class it must be.
PART_TYPES = {
    "loss": Loss,
    "regularizer": Regularizer,
    "relation": LabelRelation,
    "kernel": Kernel,
    "solver": Solver,
}

def _part_settings(value, name):
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"{name} must be a dict of parameter name -> value or None, got {value!r}")


_CONDITIONAL_ATTRIBUTES = (
    "coef_",
    "dual_coef_",
    "X_fit_",
    "kernel_",
    "label_covariance_",
    "label_correlation_",
    "joint_gap_history_",
)

#: Memory (MB) under which a kernel matrix of the training rows is computed once per fit.
KERNEL_CACHE_MB = 1024.0


class ComposedEstimator(MultiLabelEstimator):
    """A method composed of a loss, a regulariser, a label relation, a kernel and a solver.

    It solves ``min_{W, b} regularizer(W) + C * loss(Y, K W + 1 b^T)`` (the
    :class:`~multilabel_core.base.Problem` primal) with the given solver; with a learned
    relation and the :class:`~multilabel_core.solvers.AlternatingSolver`, jointly over the
    relation too.  Named methods are presets of this class (``plugins/``): a preset gives
    its parts by name in ``PARTS`` and builds them from its own hyper-parameters in
    :meth:`_parts`, and may scale the loss (:meth:`_cost`) or build the kernel from more
    data (:meth:`_training_kernel`); fitting, warm starts, the fitted attributes and
    prediction are this class's.

    Parameters
    ----------
    loss, regularizer, relation, kernel, solver : str or component
        A part object, or the name it is registered under
        (:func:`multilabel_core.make_component`, e.g. ``loss="hinge"``).  The defaults
        compose binary relevance: squared hinge, Frobenius, independent labels, linear
        kernel, and ``solver="auto"`` (the first registered solver that solves the
        composition, :func:`~multilabel_core.composition.select_solver`).
    inner : str or Solver, default "auto"
        The model-step solver of a driver (a solver with an ``inner`` parameter, such as the
        alternating solver): a registered name, an object, or ``"auto"``.
    loss_params, regularizer_params, relation_params, kernel_params, solver_params : dict or None
        Parameters for the part of that role when it is given by name (None: none); refused
        beside a part object (set them on the object).
    thresholding : str or Threshold, default "zero"
        How scores become labels (:mod:`multilabel_core.thresholds`): a registered threshold
        name or a :class:`~multilabel_core.base.Threshold` object, fitted at the end of ``fit``.
    C : float, default 1.0
        Weight of the loss against the regulariser.
    gamma : float or None
        Passed to a kernel given by name (``None``: the kernel's default, e.g. the RBF
        width from the mean pairwise distance).
    fit_intercept : bool, default True
        Whether scores carry a per-label bias b (how it is treated is the solver's
        business; the L-BFGS solver regularises it like LIBLINEAR).
    tol, max_iter : float, int or None
        Passed to a solver given by name (``None``: the solver's defaults).
    n_jobs : int or None, default None
        Threads for the per-label problems, passed to a solver given by name that solves
        labels apart (``cd``; ``smo`` with a diagonal label coupling); the others have
        nothing to split and ignore it.  None is the thread budget the caller leaves (all
        cores outside the experiment runner, :mod:`multilabel_core.parallel`).  The fitted
        model does not depend on it.
    warm_start : bool, default False
        Start the solver from the previous fit's solution (same numbers of rows and
        labels): its dual variables rescaled by the ratio of the new C to the old (they
        keep their place in the dual box), and its relation.  The solver then goes on to
        the new problem's optimum: a warm start changes the time, not the certificate.

    Attributes
    ----------
    coef_ : ndarray of shape (d, L)
        For solvers that return the primal weights.
    intercept_ : ndarray of shape (L,)
        The per-label bias b.
    dual_coef_ : ndarray of shape (n, L)
        For kernel solvers, with ``X_fit_`` and ``kernel_``:
        ``t = kernel_(X, X_fit_) @ dual_coef_ + intercept_``.
    certificate_ : Certificate
        The solve's optimality certificate (duality gap, KKT violation, ...); for an
        alternating solve the last model step's, with the outer counts.
    step_certificates_ : list of Certificate
        One per model step of the solve.
    objective_history_ : list of float
        The primal after each model step.
    joint_gap_history_ : list of float
        For alternating solves whose parts give the joint bounds: the relative gap between
        the best upper and lower bound on the joint optimum after each step.
    n_iter_ : int
        The solver's iteration count (outer steps for an alternating solve).
    label_covariance_, label_correlation_ : ndarray of shape (L, L)
        The learned label relation, when ``relation.learned`` is true.
    parts_ : dict
        The part objects the fit used, by role.
    solution_ : Solution
        The solver's solution (what a warm start continues from).
    alpha_ : ndarray
        One of the solver's declared fitted attributes: what the solver maps in its
        ``fitted_attributes`` (and ``history_attributes``), e.g. SMO's dual variables as
        ``alpha_`` (n, L), times :meth:`_objective_scale`.
    """

    #: The parts by registered name (presets set it; :attr:`MethodSpec.parts` is this dict).
    PARTS: dict = {}
    #: Fitted state beside the core's declarations (:func:`~multilabel_core.persistence.declared_state`):
    #: the core's SMO solver exposes its dual variables as ``alpha_`` in every composition that uses it.
    fitted_state = {"?alpha_": "float[n, L]"}
    #: Presets of alternating methods expose ``certificate_`` as the list of step certificates.
    CERTIFICATE_PER_STEP = False

    #: The parts: a registered name (built, and a wrong one refused with the names meant, by
    #: :meth:`_parts`) or a part object; their settings: a dict of keyword arguments or None.
    _parameter_constraints = {
        **{
            role: InstanceOf((str, expected), f"a registered {role} name or a {expected.__name__}")
            for role, expected in PART_TYPES.items()
        },
        "solver": InstanceOf((str, Solver), "a registered solver name, 'auto' or a Solver"),
        "inner": InstanceOf((str, Solver), "a registered solver name, 'auto' or a Solver"),
        **{f"{role}_params": NoneOr(Rule(_part_settings, "a dict of parameter name -> value")) for role in PART_TYPES},
    }

    def __init__(
        self,
        loss="squared_hinge",
        regularizer="frobenius",
        relation="independent",
        kernel="linear",
        solver="auto",
        *,
        inner="auto",
        loss_params=None,
        regularizer_params=None,
        relation_params=None,
        kernel_params=None,
        solver_params=None,
        thresholding="zero",
        C=1.0,
        gamma=None,
        fit_intercept=True,
        tol=None,
        max_iter=None,
        warm_start=False,
        n_jobs=None,
    ):
        self.loss = loss
        self.regularizer = regularizer
        self.relation = relation
        self.kernel = kernel
        self.solver = solver
        self.inner = inner
        self.loss_params = loss_params
        self.regularizer_params = regularizer_params
        self.relation_params = relation_params
        self.kernel_params = kernel_params
        self.solver_params = solver_params
        self.thresholding = thresholding
        self.C = C
        self.gamma = gamma
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    # -- what a preset may override ------------------------------------------------------

    def _parts(self) -> dict:
        """The part objects, by role; the solver may still be a name (``"auto"`` included).

        Here: each part given as an object is used as it is, a name is built through the
        component registry with its ``<role>_params`` and, for a kernel, ``gamma``; a solver
        given by name is built once the problem is known (:meth:`_solver_for`: ``"auto"`` and
        a driver's ``inner`` choose against it).  Settings beside an object are refused: set
        them on the object.
        """
        parts = {}
        for role, expected in PART_TYPES.items():
            value = getattr(self, role)
            params = self._part_params(role)
            if role == "kernel" and self.gamma is not None:
                if "gamma" in params:
                    raise ValueError("gamma is given twice, as gamma= and in kernel_params; give it once")
                params["gamma"] = self.gamma
            if isinstance(value, str):
                if role != "solver":
                    value = make_component(role, value, **params)
            elif not isinstance(value, expected):
                raise ValueError(f"{role} must be a registered {role} name or a {expected.__name__}, got {value!r}")
            else:
                if role == "solver":
                    params.update(self._solver_settings())
                if params:
                    raise ValueError(
                        f"{', '.join(params)} cannot be combined with a {role} object; set it on the {role} itself"
                    )
            parts[role] = value
        return parts

    def _part_params(self, role: str) -> dict:
        """``<role>_params`` as a fresh dict (empty when None or when the class has no such parameter)."""
        value = getattr(self, f"{role}_params", None)
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise ValueError(f"{role}_params must be a dict of parameter name -> value or None, got {value!r}")
        return dict(value)

    def _solver_settings(self) -> dict:
        """The estimator's own solver settings that are set (``tol``, ``max_iter``): a chosen solver must take them."""
        return {name: getattr(self, name) for name in ("tol", "max_iter") if getattr(self, name, None) is not None}

    def _solver_for(self, solver, problem: Problem):
        """The solver of ``problem`` and the problem it solves (:class:`~multilabel_core.composition.SolverChoice`).

        A solver object is held to the parts it would ignore (a fixed relation's state it does
        not read is fed around when the relation can feed a generic solver, else refused); a
        name is built with the estimator's settings, ``"auto"`` chosen by capability
        (:func:`~multilabel_core.composition.select_solver`), and a driver's ``inner`` by
        name, object or the same rule.
        """
        inner = getattr(self, "inner", AUTO)
        if isinstance(solver, Solver):
            if not (isinstance(inner, str) and inner == AUTO):
                raise ValueError(f"inner={inner!r} cannot be combined with a solver object; set it on the solver itself")
            fed_problem, fed = feed_if_unread(solver, problem)
            solver.check(fed_problem)
            return SolverChoice(solver, type(solver).__name__, fed_problem, fed=fed)
        if not (isinstance(inner, str) or isinstance(inner, Solver)):
            raise ValueError(f"inner must be a registered solver name, 'auto' or a Solver, got {inner!r}")
        settings = {**self._part_params("solver"), **self._solver_settings()}
        optional = {"n_jobs": self.n_jobs} if getattr(self, "n_jobs", None) is not None else {}
        if solver == AUTO:
            return select_solver(problem, settings, optional=optional, inner=inner)
        choice = build_solver(solver, problem, settings, inner, optional)
        fed_problem, fed = feed_if_unread(choice.solver, problem)
        choice.solver.check(fed_problem)
        return attrs.evolve(choice, problem=fed_problem, fed=fed)

    def choose_solver(self, X, Y):
        """Choose the solver a fit on (X, Y) would use, and its problem, without solving anything.

        The problem is that of the labels ``fit`` would learn (the constant ones left out).

        Parameters
        ----------
        X : array_like or sparse matrix of shape (n_samples, n_features)
            The training rows.
        Y : array_like or sparse matrix of shape (n_samples, n_labels)
            The {0, 1} label indicator matrix.

        Returns
        -------
        SolverChoice
            The :class:`~multilabel_core.composition.SolverChoice`: ``name``, the built
            ``solver``, the ``problem``, ``inner`` for a driver, ``fed`` when the relation fed a
            generic solver.

        Raises
        ------
        CapabilityError
            As ``fit`` would, when no solver solves the composition.
        ValueError
            As ``fit`` would, for an invalid input, or when every label of ``Y`` is constant
            (there is no problem to solve).
        """
        self._validate_params()
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
        fitted, _, _ = self._split_constant_labels(Y)
        if fitted.size == 0:
            raise ValueError("every label column of Y takes one value on these rows: fit learns nothing, no solver is chosen")
        Y = np.ascontiguousarray(Y[:, fitted])
        parts = self._parts()
        with checked_inputs(X):
            kernel = self._training_kernel(parts["kernel"], X)
            return self._checked_choice(parts["solver"], self._problem(X, Y, parts, kernel), kernel)

    def _checked_choice(self, solver, problem: Problem, kernel):
        """:meth:`_solver_for`, its refusal naming the kernel the user gave when the problem carries its matrix."""
        try:
            return self._solver_for(solver, problem)
        except CapabilityError as exc:
            if problem.kernel is not kernel:
                error = CapabilityError(
                    f"{exc} (the {type(kernel).__name__} given is passed to the solver as its kernel matrix, "
                    f"a {type(problem.kernel).__name__})"
                )
                error.reasons = getattr(exc, "reasons", None)
                raise error from None
            raise

    def _cost(self, n_samples: int) -> float:
        """C of the Problem: the weight of the summed loss (presets with an averaged loss divide by n)."""
        return float(self.C)

    def _training_kernel(self, kernel, X, **data):
        """The kernel of the fit, its data-dependent defaults fixed from the training rows."""
        return kernel.resolve(X)

    def _objective_scale(self) -> float:
        """The factor from the Problem's units to the method's own objective (``objective_history_``)."""
        return 1.0

    # -- the fit -------------------------------------------------------------------------

    def _fit(self, X, Y, **data):
        parts = self._parts()
        kernel = self._training_kernel(parts["kernel"], X, **data)
        choice = self._checked_choice(parts["solver"], self._problem(X, Y, parts, kernel), kernel)
        parts = {**parts, "solver": choice.solver}
        fit = choice.solver.solve(choice.problem, warm_start=self._warm_solution(choice.problem))
        if choice.fed:
            # What the relation solved to make the fed problem (label enhancement's FPC) is certified too.
            fit = fed_fit(fit, choice.problem)
        resolved = fit.solution.regularizer
        if isinstance(resolved, Regularizer):
            # A regulariser resolved from the training labels by the solver (its ``with_labels`` state):
            # parts_ holds the one whose objective the certificate is about.
            parts = {**parts, "regularizer": resolved}
        self._store_fit(fit, parts, kernel, X, choice.problem.C)
        self.solver_name_ = choice.name if choice.inner is None else f"{choice.name}(inner={choice.inner})"
        self.fed_ = choice.fed

    def _problem(self, X, Y, parts: dict, kernel) -> Problem:
        """The Problem of the rows X (validated) and the {0, 1} labels Y, for the given parts and resolved kernel."""
        targets = to_signs(Y) if parts["loss"].target == "sign" else Y.astype(np.float64)
        # A relation that reads the raw rows (label enhancement stacks them) keeps them from the kernel matrix.
        rows = getattr(parts["relation"], "needs_rows", False)
        problem_X, problem_kernel = (X, kernel) if rows else self._kernel_data(X, kernel)
        return Problem(
            problem_X,
            targets,
            parts["loss"],
            parts["regularizer"],
            parts["relation"],
            problem_kernel,
            C=check_cost(self._cost(X.shape[0]), self._cost_name(X.shape[0])),
            fit_intercept=bool(getattr(self, "fit_intercept", True)),
        )

    def _cost_name(self, n_samples: int) -> str:
        """How an error names the Problem's C (:meth:`_cost`): ``C`` itself, or where it comes from."""
        if "C" in self.get_params(deep=False):
            return "C"
        return f"the loss weight C that {type(self).__name__}'s parameters give for n = {n_samples} rows"

    def _kernel_data(self, X, kernel):
        """The Problem's rows and kernel: the kernel matrix itself when it fits the memory budget.

        A kernel solver that alternates computes K once here instead of once per model
        step; a larger one is computed by the solver (SMO: columns through an LRU cache).
        A kernel with explicit features (Nystroem, random Fourier features) is never formed
        here: the solver works on its features in O(n m) memory (SMO: columns ``Phi phi(x_j)``).
        """
        if kernel.linear or kernel.precomputed or getattr(kernel, "explicit_features", False):
            return X, kernel
        budget = float(getattr(self, "cache_size", KERNEL_CACHE_MB))
        if 8.0 * X.shape[0] ** 2 > budget * 2**20:
            return X, kernel
        return kernel(X), PrecomputedKernel()

    def _warm_solution(self, problem: Problem):
        """The previous fit's solution as a start (``warm_start``), its warm state rescaled to the new C; else None.

        The only warm-start path: the solver's :class:`~multilabel_core.base.WarmState` says which of
        its values are dual variables, which scale with C (:meth:`~multilabel_core.base.WarmState.rescaled`).
        """
        previous = getattr(self, "solution_", None)
        if not getattr(self, "warm_start", False) or previous is None:
            return None
        if getattr(self, "_problem_shape_", None) != problem.Y.shape:
            return None
        state = warm_state_of(previous)
        if state is None:
            return None
        return attrs.evolve(previous, warm_state=state.rescaled(problem.C / self._problem_C_))

    def _store_fit(self, fit, parts, kernel, X, C) -> None:
        # A refit may produce another kind of solution or relation: forget the previous one's attributes.
        for name in _CONDITIONAL_ATTRIBUTES:
            self.__dict__.pop(name, None)
        previous_solver = getattr(self, "parts_", {}).get("solver")
        solution = fit.solution
        if solution.coef is not None:
            self.coef_ = solution.coef
        else:
            # A copy: the caller's array may change after fit, and predicting on the very array
            # the model holds would take another BLAS path (numpy's X @ X.T is a rank-k update).
            self.dual_coef_, self.X_fit_, self.kernel_ = solution.dual_coef, X.copy(), kernel
        self.intercept_ = solution.intercept
        self.step_certificates_ = list(fit.steps)
        # A solver whose certificate is its own (the cutting plane's bounds), not its last step's, ends the list.
        outer = [fit.certificate] if getattr(parts["solver"], "outer_certificate", False) else []
        self.certificate_ = list(fit.steps) + outer if self.CERTIFICATE_PER_STEP else fit.certificate
        self.n_iter_ = fit.n_iter
        scale = self._objective_scale()
        self.objective_history_ = [scale * value for value in fit.history["objective"]]
        if "joint_gap" in fit.history:
            self.joint_gap_history_ = list(fit.history["joint_gap"])
        self.parts_ = parts
        self.solution_ = solution
        self._problem_C_, self._problem_shape_ = C, (X.shape[0], len(solution.intercept))
        if parts["relation"].learned:
            self._store_relation(solution.relation, parts["solver"])
        self._store_fitted_attributes(solution, fit.history, parts["solver"], previous_solver)

    def _store_fitted_attributes(self, solution, history, solver, previous_solver) -> None:
        """The solver's declared :attr:`~multilabel_core.base.Solver.fitted_attributes` (from the typed solution)
        and :attr:`~multilabel_core.base.Solver.history_attributes` (from the fit's per-step series).

        A refit forgets the previous solver's; dual variables (``objective_units``) are stored in
        this estimator's objective units (times :meth:`_objective_scale`).
        """
        for names in ("fitted_attributes", "history_attributes"):
            for name in dict(getattr(previous_solver, names, {}) or {}).values():
                self.__dict__.pop(name, None)
        declared = dict(getattr(solver, "model_state_names", {}) or {})
        undeclared = sorted(set(solution.model_state) - set(declared))
        if undeclared:
            raise TypeError(
                f"{type(solver).__name__} returned model_state {undeclared} that its model_state_names do not declare"
            )
        units = frozenset(getattr(solver, "objective_units", ()) or ())
        for key, attribute in dict(getattr(solver, "fitted_attributes", {}) or {}).items():
            if key == "dual" and solution.dual is None or key != "dual" and key not in solution.model_state:
                continue
            value = solution.dual if key == "dual" else solution.model_state[key]
            if key in units:
                value = self._objective_scale() * np.asarray(value)
            setattr(self, attribute, value)
        for key, attribute in dict(getattr(solver, "history_attributes", {}) or {}).items():
            if key in history:
                series = list(history[key])
                numeric = all(isinstance(value, numbers.Real) for value in series)
                setattr(self, attribute, np.asarray(series, dtype=np.float64) if numeric else series)

    def _decision_function(self, X) -> np.ndarray:
        if hasattr(self, "coef_"):
            return np.asarray(X @ self.coef_) + self.intercept_
        return kernel_expansion(self.kernel_, X, self.X_fit_, self.dual_coef_, self.intercept_)

    def _store_relation(self, omega, solver) -> None:
        if omega is None:
            raise CapabilityError(f"{type(solver).__name__} returned no label relation, but the relation is learned")
        self.label_covariance_ = omega
        self.label_correlation_ = correlation_from_covariance(omega)
