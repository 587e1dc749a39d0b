"""A method with its feature scaling: the scaler is fitted on the training rows and kept with the model.

Max-margin solvers are not scale-free.  On raw features the RBF width, the box of the dual and
the stopping tolerance all meet numbers of very different sizes: ``br`` on the Mulan emotions
training file (features from 0.002 to 237 in standard deviation) stops at its epoch budget on
every label and reaches micro-F1 0.43 on the test file, against 0.62 in a quarter of the time
once the features are standardised.  :class:`Preprocessed` makes the scaling part of the model:

>>> from multilabel_core import make_method
>>> model = make_method("br", C=1.0, preprocess="standardize")   # == Preprocessed(BinaryRelevance(C=1.0))

``fit`` learns the scaler's statistics from the rows it is given (and nothing else), fits the
wrapped method on the scaled rows, and ``decision_function``/``predict`` scale new rows with the
same statistics -- so cross-validation, grid search and ``save_model`` see one estimator and no
statistic of a held-out row reaches the model.  The scalers are those of the experiment runner's
``preprocess`` (:data:`~multilabel_core.experiments.preprocessing.PREPROCESSORS`): "standardize"
(sparse X is scaled without centring, which would densify it), "maxabs" and "l2_rows".

Scaling is never implicit: the estimators, ``make_method``, ``mlcore fit``, ``mlcore evaluate``
and ``mlcore compare`` all fit on X as given unless told otherwise (``preprocess=`` /
``--preprocess``; the reasons are in the documentation's estimators page, "One scaling rule").
What is checked instead is whether X needs it: :func:`feature_scale_spread` measures how far apart
the features' scales lie, and the commands issue a :class:`FeatureScaleWarning` with the numbers
when the spread passes :data:`BADLY_SCALED_RATIO` and no scaling was asked for.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .estimator import MultiLabelEstimator
from .exceptions import FeatureScaleWarning
from .experiments.preprocessing import PREPROCESSORS
from .validation import InstanceOf, Options

__all__ = ["BADLY_SCALED_RATIO", "FeatureScaleWarning", "Preprocessed", "badly_scaled", "feature_scale_spread"]

#: The spread (largest over smallest standard deviation of the non-constant features) above which
#: features count as badly scaled.  The shared datasets stored already scaled lie at 1.2 (yeast) to
#: 16 (medical), tf-idf text at 109 (rcv1subset1); raw measurements lie at 3.5e3 (cal500), 3.0e3
#: (yahoo-arts counts), 1.5e4 (flags) and 2.1e4 (emotions), where ``br`` on raw features stops at its
#: epoch budget (module docstring).
BADLY_SCALED_RATIO = 1e3


def feature_scale_spread(X) -> tuple[float, float]:
    """Return the smallest and the largest standard deviation (ddof 0) of X's non-constant feature columns.

    Sparse X is read through its stored entries (its zeros count as values; nothing is densified and
    nothing of X's width is allocated); dense X a block of rows at a time, so the check costs a few
    megabytes beside X whatever its size.  ``(nan, nan)`` when every column is constant.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The features, as given to a fit (not scaled).

    Returns
    -------
    tuple of float
        ``(smallest, largest)``.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: an infinite spread, which is reported
        std, magnitude = _sparse_std(X) if sp.issparse(X) else _dense_std(np.asarray(X))
    # A spread this small relative to the feature's magnitude is round-off of a constant column.
    varying = std[std > 10 * np.finfo(np.float64).eps * np.maximum(magnitude, 1.0)]
    if varying.size == 0:
        return math.nan, math.nan
    return float(varying.min()), float(varying.max())


def _sparse_std(X) -> tuple[np.ndarray, np.ndarray]:
    """Standard deviations and |means| of the columns holding a stored entry (the others are constant 0)."""
    coo = X.tocoo()
    n = X.shape[0]
    columns, inverse = np.unique(coo.col, return_inverse=True)
    values = coo.data.astype(np.float64)
    count = np.bincount(inverse, minlength=columns.size)
    mean = np.bincount(inverse, weights=values, minlength=columns.size) / n
    # Centred sums (two passes): the stored entries' deviations, then the implicit zeros' (n - count) mean^2.
    squares = np.bincount(inverse, weights=(values - mean[inverse]) ** 2, minlength=columns.size)
    return np.sqrt((squares + (n - count) * mean**2) / n), np.abs(mean)


def _dense_std(X) -> tuple[np.ndarray, np.ndarray]:
    """Column standard deviations and |means|, centred a block of rows at a time (no copy of X)."""
    n, d = X.shape
    mean = X.mean(axis=0, dtype=np.float64)
    squares = np.zeros(d)
    step = max(1, (1 << 20) // max(d, 1))
    for start in range(0, n, step):
        block = X[start : start + step].astype(np.float64) - mean
        squares += np.einsum("ij,ij->j", block, block)
    return np.sqrt(squares / max(n, 1)), np.abs(mean)


def badly_scaled(X) -> str | None:
    """Describe X's feature-scale spread when it passes :data:`BADLY_SCALED_RATIO`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The features, as given to a fit (not scaled).

    Returns
    -------
    str or None
        When the ratio of the largest to the smallest standard deviation of the non-constant
        features exceeds :data:`BADLY_SCALED_RATIO`: a sentence with the two deviations, their
        ratio and how to scale the features; else None (NaN, no varying feature, included).
    """
    low, high = feature_scale_spread(X)
    if not high / low > BADLY_SCALED_RATIO:  # NaN (no varying feature) is not badly scaled
        return None
    return (
        f"the features' standard deviations span {low:.3g} to {high:.3g} (a factor {high / low:.3g}, over "
        f"{BADLY_SCALED_RATIO:g}) and they are fitted as given: max-margin solvers may then stop short of "
        "convergence or take far longer; scale them with --preprocess standardize (Python: "
        "make_method(..., preprocess='standardize'))"
    )


class Preprocessed(MultiLabelEstimator):
    """A multi-label estimator fitted and applied on scaled features.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted (it is copied at every ``fit``; the copy is ``estimator_``).
    preprocess : {"standardize", "maxabs", "l2_rows"}, default "standardize"
        The scaling, fitted on the training rows (module docstring).  Wrapping is itself the
        request for scaling; unwrapped methods fit on X as given.

    Attributes
    ----------
    estimator_ : MultiLabelEstimator
        The fitted copy of ``estimator``.
    scaler_ : object
        The fitted scaler (``transform(X)`` scales rows as at fit time).
    certificate_ : Certificate or list
        ``estimator_.certificate_``, when the method has one.

    Notes
    -----
    Fitted attributes of the wrapped method that this class does not have (``n_iter_``,
    ``label_covariance_``, ...) are read through from ``estimator_``.  ``fit`` passes further
    inputs to the method's ``fit``; those named ``X_...`` (e.g. SSMLRL's ``X_unlabeled``) are
    feature rows and are scaled with the same statistics (not fitted on).
    """

    _parameter_constraints = {
        "estimator": InstanceOf(MultiLabelEstimator, "a multi-label estimator (e.g. make_method('br'))"),
        "preprocess": Options(sorted(PREPROCESSORS)),
    }

    def __init__(self, estimator=None, preprocess="standardize"):
        self.estimator = estimator
        self.preprocess = preprocess

    def fit(self, X, Y, **fit_params):
        """Fit the scaler on X, then a copy of ``estimator`` on the scaled X and Y.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training features; the scaler's statistics come from these rows only.
        Y : array-like of shape (n_samples, n_labels)
            Binary label matrix.
        **fit_params
            Further inputs to the wrapped method's ``fit``; those named ``X_...`` (e.g. SSMLRL's
            ``X_unlabeled``) are feature rows and are scaled with the same statistics (not fitted on).

        Returns
        -------
        Preprocessed
            ``self``, fitted.
        """
        return self._validated_fit(X, Y, **fit_params)

    def _fit(self, X, Y, **fit_params):
        self.scaler_ = PREPROCESSORS[self.preprocess]().fit(X)
        extra = {
            name: (self.scaler_.transform(value) if name.startswith("X_") and value is not None else value)
            for name, value in fit_params.items()
        }
        # A new estimator from the parameters, as cross_validate makes one per fold.
        self.estimator_ = type(self.estimator)(**self.estimator.get_params(deep=False)).fit(self.scaler_.transform(X), Y, **extra)

    def _decision_function(self, X):
        return self.estimator_.decision_function(self.scaler_.transform(X))

    def _validate_test_X(self, X):
        # The width check would name this wrapper ("Preprocessed is expecting ..."), a class the user
        # never made: name the method they fitted and the scaling they asked for instead.
        fitted = self.__dict__.get("n_features_in_")
        shape = getattr(X, "shape", None)
        if fitted is not None and shape is not None and len(shape) == 2 and shape[1] != fitted:
            inner = type(self.estimator_).__name__
            raise ValueError(
                f"X has {shape[1]} features, but {inner} is expecting {fitted} features as input (the model of "
                f"{self._method_text()} with {self.preprocess} scaling was fitted on {fitted} feature columns)"
            )
        return super()._validate_test_X(X)

    def _method_text(self) -> str:
        """``method 'br'`` for a registered method's estimator, else its class name."""
        from .plugins import list_methods

        names = [spec.name for spec in list_methods() if spec.estimator is type(self.estimator)]
        return f"method {names[0]!r}" if names else type(self.estimator).__name__

    @property
    def certificate_(self):
        """The wrapped method's certificate (AttributeError when it has none or is not fitted)."""
        return self._fitted_attribute("certificate_")

    def __getattr__(self, name):
        # Only fitted attributes read through: parameters and private names stay this object's own,
        # and an unfitted wrapper (or one being rebuilt by a loader) raises as usual.
        if name.endswith("_") and not name.startswith("_"):
            return self._fitted_attribute(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _fitted_attribute(self, name):
        inner = self.__dict__.get("estimator_")
        if inner is None:
            raise AttributeError(f"{type(self).__name__} is not fitted: no {name}")
        return getattr(inner, name)
