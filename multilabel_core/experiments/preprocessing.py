"""Feature preprocessing inside the protocols, fitted on training rows only.

A comparison may rescale the features before every fit (``preprocess=`` of the runner,
``--preprocess`` of ``mlcore compare``), for every method alike.  Whatever a scaler
learns from the data -- means, standard deviations, largest magnitudes -- it learns
from the rows the model is fitted on: the training part of each split, and inside the
inner search the inner training part of each fold.  The held-out rows are then scaled
with those statistics, so no statistic of a test row reaches the model.

=================  ==============================================================
name               x_ij becomes
=================  ==============================================================
``standardize``    (x_ij - mu_j) / sigma_j: mean and standard deviation (ddof = 0)
                   of feature j over the training rows.  Sparse X is scaled
                   without centring, x_ij / sigma_j, since centring would densify
                   it.
``maxabs``         x_ij / max_i |x_ij| over the training rows: every feature in
                   [-1, 1], zeros kept (sparse data).
``l2_rows``        x_ij / ||x_i||_2: every row on the unit sphere, as tf-idf
                   vectors are normalised (text).  Row by row: nothing is learned.
=================  ==============================================================

A feature whose scale is zero on the training rows (constant, or zero there) keeps
scale 1; so does a zero row under ``l2_rows``.  Dense X stays dense, CSR/CSC keeps its
format; the result is float64.  These scalers are written here (a few lines of numpy
and scipy) so that the core needs no scikit-learn; scikit-learn's ``StandardScaler``,
``MaxAbsScaler`` and ``Normalizer`` compute the same maps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["PREPROCESSORS", "MaxAbsScaler", "RowNormalizer", "Standardizer", "check_preprocess", "preprocessed"]

# A scale this small relative to the feature's magnitude is round-off of a constant feature.
_ZERO_SCALE = 10 * np.finfo(np.float64).eps


def _safe(scale, magnitude) -> np.ndarray:
    """``scale`` with its zeros (up to round-off of ``magnitude``) replaced by 1."""
    return np.where(scale > _ZERO_SCALE * np.maximum(magnitude, 1.0), scale, 1.0)


def _as_float(X):
    return X.astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _scale_columns(X, scale):
    if sp.issparse(X):
        return (X @ sp.diags(1.0 / scale)).asformat(X.format)
    return X / scale


class Standardizer:
    """Zero mean and unit variance per feature, from the rows it was fitted on.

    Fitted attributes: ``mean_`` (d,), ``scale_`` (d,) (the standard deviation, 1 where
    it is zero), ``centred_`` (False when fitted on sparse X: no centring then).
    """

    def fit(self, X):
        """Learn each feature's mean and standard deviation from ``X``.

        Sparse X is not centred later, so only its deviations matter.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        object
            ``self``, fitted.
        """
        X = _as_float(X)
        if sp.issparse(X):
            self.mean_ = np.asarray(X.mean(axis=0)).ravel()
            variance = np.asarray(X.multiply(X).mean(axis=0)).ravel() - self.mean_**2
            self.scale_ = _safe(np.sqrt(np.maximum(variance, 0.0)), np.abs(self.mean_))
        else:
            self.mean_ = X.mean(axis=0)
            self.scale_ = _safe(X.std(axis=0), np.abs(self.mean_))
        self.centred_ = not sp.issparse(X)
        return self

    def transform(self, X):
        """Return ``X`` centred (dense data only) and scaled by the fitted deviations.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        ndarray or sparse matrix of shape (n, d)
            The scaled features, float64, of X's kind.
        """
        X = _as_float(X)
        if self.centred_ and not sp.issparse(X):
            X = X - self.mean_
        return _scale_columns(X, self.scale_)


class MaxAbsScaler:
    """Every feature divided by its largest magnitude over the fitted rows (``scale_``, 1 where 0)."""

    def fit(self, X):
        """Learn each feature's largest magnitude from ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        object
            ``self``, fitted.
        """
        X = _as_float(X)
        largest = abs(X).max(axis=0)
        largest = largest.toarray().ravel() if sp.issparse(largest) else np.asarray(largest).ravel()
        self.scale_ = _safe(largest, 0.0)
        return self

    def transform(self, X):
        """Return ``X`` with every feature divided by its fitted largest magnitude.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        ndarray or sparse matrix of shape (n, d)
            The scaled features, float64, of X's kind.
        """
        return _scale_columns(_as_float(X), self.scale_)


class RowNormalizer:
    """Every row divided by its Euclidean norm (zero rows unchanged); fitting learns nothing."""

    def fit(self, X):
        """Learn nothing (each row is scaled by its own norm).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        object
            ``self``, fitted.
        """
        return self

    def transform(self, X):
        """Return ``X`` with every nonzero row divided by its Euclidean norm.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            Features (converted to float64; sparse stays sparse).

        Returns
        -------
        ndarray or sparse matrix of shape (n, d)
            The scaled features, float64, of X's kind.
        """
        X = _as_float(X)
        if sp.issparse(X):
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            return (sp.diags(1.0 / _safe(norms, 0.0)) @ X).asformat(X.format)
        return X / _safe(np.linalg.norm(X, axis=1), 0.0)[:, None]


#: The preprocessing names of ``preprocess=`` and ``--preprocess``, and their scalers.
PREPROCESSORS = {"standardize": Standardizer, "maxabs": MaxAbsScaler, "l2_rows": RowNormalizer}


def check_preprocess(preprocess) -> None:
    """Check that ``preprocess`` is None or a name of :data:`PREPROCESSORS`.

    Parameters
    ----------
    preprocess : str or None
        The scaler name to check.

    Raises
    ------
    ValueError
        Naming the valid names, for anything else.
    """
    if preprocess is not None and preprocess not in PREPROCESSORS:
        raise ValueError(f"preprocess must be None or one of {sorted(PREPROCESSORS)}, got {preprocess!r}")


def preprocessed(X, fit_rows, preprocess):
    """Scale every row of X by the ``preprocess`` scaler fitted on the rows ``fit_rows`` only.

    Scaling every row at once keeps the runner's row indexing unchanged; the statistics come
    from ``X[fit_rows]`` alone.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features.
    fit_rows : array-like of int
        The rows the scaler is fitted on.
    preprocess : str or None
        A name of :data:`PREPROCESSORS`, or None.

    Returns
    -------
    ndarray or sparse matrix of shape (n_samples, n_features)
        The scaled rows, or X itself when ``preprocess`` is None.

    Raises
    ------
    ValueError
        For an unknown ``preprocess``.
    """
    from ..model_selection import take_rows  # not at import: the CLI reads PREPROCESSORS at start-up

    check_preprocess(preprocess)
    if preprocess is None:
        return X
    scaler = PREPROCESSORS[preprocess]().fit(take_rows(X, fit_rows))
    return scaler.transform(X)
