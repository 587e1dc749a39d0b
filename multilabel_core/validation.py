"""Validation of public inputs, for the core and for plugins: every check raises ValueError naming the problem."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


def check_X(X, *, name: str = "X", accept_sparse: bool = True, dtype=(np.float64, np.float32)):
    """Return ``X`` as a finite 2-D float array, or CSR/CSC matrix when sparse.

    Dense inputs of other numeric dtypes are converted to float64; sparse inputs keep
    their format when CSR or CSC (others become CSR) and are never densified.
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise ValueError(f"{name} is sparse, but a dense array is required")
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        if X.dtype not in dtype:
            X = X.astype(np.float64)
        data = X.data
    else:
        X = np.asarray(X)
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"{name} is complex: Complex data not supported")
        if X.dtype == object or not np.issubdtype(X.dtype, np.number) and X.dtype != bool:
            raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
        if X.dtype not in dtype:
            X = X.astype(np.float64)
        data = X
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}. Reshape your data: "
            f"{name}.reshape(-1, 1) for a single feature, {name}.reshape(1, -1) for a single sample"
        )
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is required.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} contains NaN or infinity")
    return X


def check_Y(Y, *, name: str = "Y", n_samples: int | None = None, require_both_classes: bool = False):
    """Return ``Y`` as a dense (n, L) int8 {0, 1} indicator matrix.

    Accepts dense arrays and scipy.sparse matrices of 0/1 (bool, int or float).  A 1-D
    vector is refused: multi-label targets are matrices.  With ``require_both_classes``
    a label column that is all 0 or all 1 is refused, naming the column.
    """
    if sp.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_samples, n_labels) indicator matrix, got shape {Y.shape}")
    if Y.shape[1] == 0:
        raise ValueError(f"{name} has no label columns")
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n_samples}")
    if Y.dtype == object or not (np.issubdtype(Y.dtype, np.number) or Y.dtype == bool):
        raise ValueError(f"{name} must hold 0/1 values, got dtype {Y.dtype}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or infinity")
    bad = (Y != 0) & (Y != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be binary 0/1; found {Y[i, j]!r} at row {i}, label {j}")
    Y = Y.astype(np.int8)
    if require_both_classes:
        counts = Y.sum(axis=0)
        for j in np.flatnonzero((counts == 0) | (counts == Y.shape[0])):
            kind = "never relevant (all 0)" if counts[j] == 0 else "always relevant (all 1)"
            raise ValueError(f"{name} label column {j} has one class only: it is {kind}; a classifier cannot be trained on it")
    return Y


def to_signs(Y: np.ndarray) -> np.ndarray:
    """{0, 1} indicator -> {-1, +1} float64 signs (the papers' y_ij)."""
    return 2.0 * np.asarray(Y, dtype=np.float64) - 1.0


def check_scalar(value, name: str, *, kind=numbers.Real, low=None, high=None, low_inclusive=True, high_inclusive=True):
    """Validate a hyper-parameter: type and range, with an error naming it."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{name} must be a {getattr(kind, '__name__', kind)}, got {value!r}")
    if isinstance(value, numbers.Real) and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value!r}")
    return value


def check_flag(value, name: str) -> bool:
    """A boolean switch: True or False (numpy booleans too), else ValueError naming it."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_random_state(seed) -> np.random.Generator:
    """None | int | numpy Generator -> numpy Generator (deterministic for an int)."""
    if seed is None or isinstance(seed, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a numpy Generator, got {seed!r}")
