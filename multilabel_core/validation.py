"""Input checks for the core and for plugins: the public API a plugin validates with.

Validate public input once, at the boundary (an estimator's ``fit``, a component's
constructor, a solver's ``solve``); every check below raises ``ValueError`` naming the
argument and what is wrong with it, and returns the value in the form the numerics use.

Arrays
    :func:`check_X` -- a finite 2-D float array, or a CSR/CSC matrix kept sparse.
    :func:`check_Y` -- a dense (n, L) int8 {0, 1} indicator matrix.
    :func:`check_signs` -- an (n, L) float64 matrix of the signs -1/+1 (the papers' y_ij).
    :func:`to_signs` -- {0, 1} indicators to -1/+1 signs (no checks: after :func:`check_Y`).
    :func:`check_symmetric` -- a finite square matrix, symmetric within :data:`SYMMETRY_RTOL`,
    returned exactly symmetric.

Scalars
    :func:`check_scalar` -- a hyper-parameter's type and range.
    :func:`check_flag` -- True or False.
    :func:`check_random_state` -- None, an int or a numpy Generator, as a Generator.
    :func:`check_seed` -- the same values, validated without drawing from them.
    :func:`check_cost` -- a loss weight C within :data:`C_RANGE`.

attrs validators (``attrs.field(validator=positive)``; the error names the field)
    :func:`positive` (finite real > 0), :func:`non_negative` (finite real >= 0),
    :func:`real` (finite real), :func:`count` (integer >= 1), :data:`optional_count`
    (None or a count), :func:`flag` (True or False), :func:`cost` (a C in :data:`C_RANGE`),
    :func:`seed` (a random_state, as :func:`check_seed`).  Combine them with attrs' own:
    ``attrs.validators.optional(positive)`` for "None or positive".

Parameter constraints (declared as data on an estimator class: docs/estimators.md, "Parameter constraints")
    :class:`Constraint` and its kinds :class:`Interval`, :class:`Options`, :class:`Flag`,
    :class:`Cost`, :class:`Seed`, :class:`InstanceOf`, :class:`Rule` (a named check
    function), :class:`NoneOr` and :class:`Unchecked` (an exemption with its reason);
    :func:`merged_constraints` merges a class's ``_parameter_constraints`` along its MRO and
    :func:`validate_parameters` checks values against them.

Validated once
    :func:`checked_inputs` and :func:`is_checked`: the arrays a public entry point has
    validated, which :func:`check_X` returns at once for the rest of the call.

Convergence
    :class:`ConvergenceWarning` and :func:`warn_not_converged`, the warning a solver
    issues when it stops before its stopping rule is met (a subclass of scikit-learn's
    ``ConvergenceWarning`` when scikit-learn is installed).

This module and the other modules without a leading underscore are the API plugins
build on; ``multilabel_core._*`` and ``multilabel_core.<package>._*`` are private and may
change without notice (tests/test_plugin_public_api.py keeps the bundled plugins to it).
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import math
import numbers
import os
from collections.abc import Mapping

import attrs
import numpy as np
import scipy.sparse as sp

from ._blocks import BLOCK_BUDGET_BYTES, row_blocks
from .exceptions import ConvergenceWarning, warn_not_converged

__all__ = [
    "COUNT",
    "C_RANGE",
    "MAX_ITER_LIMIT",
    "NON_NEGATIVE",
    "POSITIVE",
    "SYMMETRY_RTOL",
    "AllOf",
    "Constraint",
    "ConvergenceWarning",
    "Cost",
    "Flag",
    "InstanceOf",
    "Interval",
    "NoneOr",
    "Options",
    "Rule",
    "Seed",
    "Unchecked",
    "check_X",
    "check_Y",
    "check_byte_cap",
    "checked_inputs",
    "check_cost",
    "check_flag",
    "check_random_state",
    "check_scalar",
    "check_seed",
    "check_signs",
    "check_symmetric",
    "cost",
    "count",
    "flag",
    "is_checked",
    "merged_constraints",
    "non_negative",
    "open_unit",
    "optional_count",
    "positive",
    "real",
    "seed",
    "to_signs",
    "validate_parameters",
    "warn_not_converged",
]

#: Largest asymmetry ``max |M_ij - M_ji|`` accepted as round-off, relative to ``max |M_ij|``.
#:
#: The matrices checked for symmetry are computed ones (Gram matrices W^T W and kernels,
#: label covariances, inverses such as D (D + mu I)^-1), whose two triangles come from
#: separate floating-point sums.  For a Gram matrix the rounding error of one entry
#: ``x_i^T x_j`` summed over d terms is at most gamma_d |x_i|^T |x_j| <= gamma_d max_k ||x_k||^2,
#: with gamma_d = d u / (1 - d u) and u = 2^-53 (Higham, *Accuracy and Stability of
#: Numerical Algorithms*, section 3.1), so the two triangles differ by at most 2 gamma_d max |M|.
#: 1e-8 (about sqrt(u)) covers that bound for inner dimensions d up to 4.5e7, where
#: 1e-10 would refuse honest products of d > 4.5e5 terms, and still refuses every matrix
#: that is not symmetric in its own right (relative asymmetry of order 1).  The tolerance
#: is relative to the largest entry and nothing else, so a matrix and its rescaling by any
#: positive factor (Omega / lambda, a kernel of tiny values) get the same verdict; the zero
#: matrix is symmetric.
SYMMETRY_RTOL = 1e-8


#: The arrays validated by the public entry points of the calls under way in this context
#: (:func:`checked_inputs`); a context variable, so threads and concurrent calls keep their own.
_CHECKED: contextvars.ContextVar[tuple] = contextvars.ContextVar("multilabel_core_checked_inputs", default=())


@contextlib.contextmanager
def checked_inputs(*arrays):
    """Within the block, :func:`check_X` returns each of ``arrays`` at once: they were validated.

    The public entry points (an estimator's ``fit``, ``predict``, ``decision_function``)
    validate X with :func:`check_X` and then hand the result on to kernels, solvers and
    their engines, whose own public functions validate what a user passes them.  Marking
    the validated array for the duration of the call lets those functions skip a second
    scan of every entry when they receive it from the estimator, and keep validating when
    a user calls them directly: the mark is the identity of the validated array object, held
    only while the entry point runs, so nothing outside the call (and no array the call
    derives from it, a slice or a product) is trusted.

    Why a scoped identity mark rather than a ``check_input=False`` keyword on each internal
    call, or an array subclass: the hand-offs go through public interfaces (a
    :class:`~multilabel_core.base.Problem` a user can build, a kernel a user can call), so a
    keyword would have to be threaded through every part's signature and could be passed by
    a user with unchecked data; an ndarray subclass would be inherited by every view and
    result computed from X (``X @ W`` is not validated data).  The mark is held in a
    :class:`contextvars.ContextVar`: a worker thread starts without it and checks in full.

    Parameters
    ----------
    *arrays : ndarray or sparse matrix
        Arrays :func:`check_X` returned (validated, in a form it accepts as is).

    Yields
    ------
    None
    """
    token = _CHECKED.set(_CHECKED.get() + tuple(a for a in arrays if a is not None))
    try:
        yield
    finally:
        _CHECKED.reset(token)


def is_checked(X) -> bool:
    """Whether ``X`` is an array a public entry point validated in this call (:func:`checked_inputs`).

    Parameters
    ----------
    X : object
        Any object; compared by identity.

    Returns
    -------
    bool
    """
    return any(X is held for held in _CHECKED.get())


def check_X(X, *, name: str = "X", accept_sparse: bool = True, dtype=(np.float64, np.float32)):
    """Return ``X`` as a finite 2-D float array, or a CSR/CSC matrix when sparse.

    Dense inputs of other numeric dtypes are converted to float64; sparse inputs keep
    their format when CSR or CSC (others become CSR) and are never densified.  A sparse
    matrix with duplicate or unsorted indices is returned in canonical form (duplicates
    summed, indices sorted) as a copy, so that every method reads the numbers scipy
    means whatever code walks the arrays; the caller's matrix is never modified.

    A data frame (an object with ``columns``, such as a pandas DataFrame) is read by its
    values: numeric columns, nullable ones included (a missing value is NaN, refused
    below), become one row-major float array (float32 when every column is float32), a
    frame of sparse columns a CSR matrix; a non-numeric column is refused, naming it.  The column
    names are the estimator's business (``feature_names_in_``), not this function's.

    An array a public entry point validated in the call under way (:func:`checked_inputs`) is
    returned at once when it is in an accepted form: X is scanned once per call, at the boundary.

    Parameters
    ----------
    X : array_like, sparse matrix or data frame of shape (n_samples, n_features)
        The rows to check.
    name : str, default="X"
        What ``X`` is called in the error messages.
    accept_sparse : bool, default=True
        Whether a scipy.sparse matrix is accepted (kept sparse); False refuses one.
    dtype : tuple of numpy dtypes, default=(np.float64, np.float32)
        The float dtypes kept as they are; any other numeric dtype becomes float64.

    Returns
    -------
    ndarray or sparse matrix of shape (n_samples, n_features)
        The validated rows: a float array, or a canonical CSR/CSC matrix.

    Raises
    ------
    ValueError
        If ``X`` is not numeric (or complex), not 2-D, has no row or no column, holds NaN or
        infinity, is sparse when ``accept_sparse`` is False, or is a malformed sparse matrix.
    """
    if is_checked(X) and (accept_sparse or not sp.issparse(X)) and X.dtype in dtype:
        return X  # validated by the public entry point of this call (checked_inputs)
    X = _frame_values(X, name)
    if sp.issparse(X):
        if not accept_sparse:
            raise ValueError(f"{name} is sparse, but a dense array is required")
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
        if X.dtype not in dtype:
            X = X.astype(np.float64)
        # Finiteness after canonicalising: two finite duplicates may sum to infinity.
        X = _canonical_sparse(X, name)
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


def _frame_values(frame, name: str):
    """A pandas-like data frame's values as a numpy array or CSR matrix; anything else unchanged.

    Duck-typed (pandas is not a dependency): an object with ``columns``, ``dtypes`` whose
    entries carry a numpy ``kind`` (numpy dtypes and pandas' extension dtypes do) and
    ``to_numpy``.  Other frames (polars, ...) are left to :func:`numpy.asarray`.
    """
    dtypes = getattr(frame, "dtypes", None)
    if not hasattr(frame, "columns") or dtypes is None or not hasattr(frame, "to_numpy"):
        return frame
    dtypes = list(dtypes)
    kinds = [getattr(dtype, "kind", None) for dtype in dtypes]
    if not dtypes or not all(isinstance(kind, str) for kind in kinds):
        return frame
    bad = [(column, dtype) for column, dtype, kind in zip(frame.columns, dtypes, kinds) if kind not in "biufc"]
    if bad:
        shown = ", ".join(f"{column!r} ({dtype})" for column, dtype in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ValueError(f"{name} must be numeric; its column(s) {shown}{more} are not")
    if "c" in kinds:
        return frame.to_numpy()  # complex: refused by the caller with its usual message
    if all(type(dtype).__name__ == "SparseDtype" for dtype in dtypes) and hasattr(frame, "sparse"):
        return frame.sparse.to_coo().tocsr()
    float32 = all(str(dtype).lower() == "float32" for dtype in dtypes)
    # Row-major, as an array of the same values would usually be: a frame stores its columns
    # apart, and the transposed view it gives would make the solvers sum in another order.
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float32 if float32 else np.float64, na_value=np.nan))


def _canonical_sparse(X, name: str):
    """A CSR/CSC matrix in canonical form: each row's (CSC: column's) indices sorted, no duplicates.

    scipy lets a compressed matrix store a position more than once (its value is the sum)
    and in any order; code that walks ``indices`` and ``data`` itself (LIBSVM through
    scikit-learn, the Cython engines) reads such a matrix as something else.  Returns X
    itself when it is canonical, else a canonical copy (the caller's matrix is not
    touched).  Canonical form is decided from the index arrays, not from scipy's cached
    ``has_canonical_format`` flag, which goes stale when the arrays are edited in place.
    Malformed index arrays (an index out of range, a decreasing ``indptr``) are refused,
    since summing or sorting them would read out of bounds.
    """
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    what = "column" if X.format == "csr" else "row"
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    if indptr.shape != (major + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise ValueError(
            f"{name} is a malformed {X.format.upper()} matrix: indptr must be non-decreasing from 0 with "
            f"{major + 1} entries"
        )
    nnz = int(indptr[-1])
    if nnz > min(indices.size, np.asarray(X.data).size):
        raise ValueError(f"{name} is a malformed {X.format.upper()} matrix: indptr promises {nnz} entries")
    stored = indices[:nnz]
    if nnz and (stored.min() < 0 or stored.max() >= minor):
        bad = stored[(stored < 0) | (stored >= minor)][0]
        raise ValueError(f"{name} is a malformed {X.format.upper()} matrix: {what} index {bad} out of range [0, {minor})")
    increasing = np.diff(stored) > 0
    starts = indptr[1:-1]
    # The step from the last entry of a row to the first of the next one need not increase.
    increasing[starts[(starts >= 1) & (starts < nnz)] - 1] = True
    if increasing.all() and indices.size == nnz and np.asarray(X.data).size == nnz:
        return X
    canonical = X.copy()
    canonical.prune()  # storage beyond indptr[-1] is not part of the matrix
    # The copy may carry the input's cached flags; clear them so scipy really sorts and sums.
    canonical.has_sorted_indices = False
    canonical.has_canonical_format = False
    canonical.sum_duplicates()
    return canonical


_CHECK_Y_SLICE = 2**20


def check_Y(Y, *, name: str = "Y", n_samples: int | None = None, require_both_classes: bool = False):
    """Return ``Y`` as a dense (n, L) int8 {0, 1} indicator matrix.

    Accepts dense arrays, scipy.sparse matrices and data frames (pandas' nullable dtypes
    too, a missing value refused) of 0/1 (bool, int or float).  A 1-D vector is refused:
    multi-label targets are matrices.

    Parameters
    ----------
    Y : array_like, sparse matrix or data frame of shape (n_samples, n_labels)
        The label indicator matrix.
    name : str, default="Y"
        What ``Y`` is called in the error messages.
    n_samples : int or None, default=None
        The number of rows ``Y`` must have (X's); None accepts any.
    require_both_classes : bool, default=False
        Whether a label column that is all 0 or all 1 is refused, naming the column.

    Returns
    -------
    ndarray of shape (n_samples, n_labels)
        ``Y`` as a dense int8 {0, 1} matrix.

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D, has no label column, has another number of rows than
        ``n_samples``, holds a value other than 0 and 1 (NaN included), or (with
        ``require_both_classes``) has a constant column.
    """
    Y = _frame_values(Y, name)
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
    # Checked a slice of entries at a time: a LibSVM file declares Y's width with one index, and
    # whole-matrix masks (four of Y's size) took more memory than the Y they checked.
    flat = Y.reshape(-1, order="F" if Y.flags.f_contiguous and not Y.flags.c_contiguous else "C")
    exact = Y.dtype == bool or np.issubdtype(Y.dtype, np.integer)
    for start in range(0, flat.size, _CHECK_Y_SLICE):
        part = flat[start:start + _CHECK_Y_SLICE]
        if not exact and not np.all(np.isfinite(part)):
            raise ValueError(f"{name} contains NaN or infinity")
        bad = (part != 0) & (part != 1)
        if bad.any():
            i, j = np.argwhere((Y != 0) & (Y != 1))[0]
            raise ValueError(f"{name} must be binary 0/1; found {Y[i, j]!r} at row {i}, label {j}")
    Y = Y.astype(np.int8)
    if require_both_classes:
        counts = Y.sum(axis=0)
        for j in np.flatnonzero((counts == 0) | (counts == Y.shape[0])):
            kind = "never relevant (all 0)" if counts[j] == 0 else "always relevant (all 1)"
            raise ValueError(f"{name} label column {j} has one class only: it is {kind}; a classifier cannot be trained on it")
    return Y


def to_signs(Y: np.ndarray) -> np.ndarray:
    """Convert a {0, 1} indicator matrix to {-1, +1} float64 signs (the papers' y_ij).

    No checks: call it after :func:`check_Y`.

    Parameters
    ----------
    Y : array_like of shape (n, L)
        The {0, 1} indicators.

    Returns
    -------
    ndarray of shape (n, L)
        ``2 Y - 1`` as float64.
    """
    return 2.0 * np.asarray(Y, dtype=np.float64) - 1.0


def check_signs(Y, n_samples: int | None = None, name: str = "Y") -> np.ndarray:
    """Return ``Y`` as an (n, L) float64 matrix of the signs -1 and +1 (the papers' y_ij).

    The target form of the solvers.

    Parameters
    ----------
    Y : array_like or sparse matrix of shape (n_samples, n_labels)
        The signs.
    n_samples : int or None, default=None
        The number of rows ``Y`` must have; None accepts any.
    name : str, default="Y"
        What ``Y`` is called in the error messages.

    Returns
    -------
    ndarray of shape (n_samples, n_labels)
        ``Y`` as float64 signs.

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D, has no label column, has a row count other than ``n_samples``
        (when given), a non-numeric dtype, or any entry other than -1 or +1 (0/1 indicators
        included: :func:`to_signs` converts those).
    """
    if sp.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D (n_samples, n_labels >= 1) matrix of signs, got shape {Y.shape}")
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows but X has {n_samples}")
    if Y.dtype == object or not (np.issubdtype(Y.dtype, np.number) or Y.dtype == bool):
        raise ValueError(f"{name} must hold the signs -1 and +1, got dtype {Y.dtype}")
    bad = (Y != 1) & (Y != -1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must hold the signs -1 and +1 only; found {Y[i, j].item()!r} at row {i}, label {j} "
            f"(multilabel_core.validation.to_signs converts 0/1 indicators)"
        )
    return Y.astype(np.float64)


#: Side of the square tiles :func:`_asymmetry` compares with their mirror images (two 256 x 256
#: float64 tiles, 1 MiB, stay in cache while one is read transposed).
_ASYMMETRY_TILE = 256


def _asymmetry(M: np.ndarray) -> float:
    """``max |M_ij - M_ji|`` over square tiles on and above the diagonal, each against its mirror tile.

    A tile and its mirror fit in cache, so the transposed read does not walk memory column by
    column (reading a block of rows against the same block of columns did, at a few times the cost of
    a contiguous pass); the tiles below the diagonal are the mirrors, not visited again; no
    temporary is larger than a tile.
    """
    n = M.shape[0]
    worst = 0.0
    starts = range(0, n, _ASYMMETRY_TILE)
    for i in starts:
        rows = slice(i, min(i + _ASYMMETRY_TILE, n))
        for j in starts[i // _ASYMMETRY_TILE:]:
            columns = slice(j, min(j + _ASYMMETRY_TILE, n))
            worst = max(worst, float(np.max(np.abs(M[rows, columns] - M[columns, rows].T))))
    return worst


def check_symmetric(M, name: str = "M", *, copy: bool = True) -> np.ndarray:
    """Return ``M`` as an exactly symmetric float64 matrix, ``M / 2 + M^T / 2``.

    ``M`` must be numeric, square, non-empty, finite and symmetric within round-off:
    ``max |M_ij - M_ji| <= SYMMETRY_RTOL * max |M_ij|`` (see :data:`SYMMETRY_RTOL` for
    why that rule); otherwise ValueError naming ``name``.  The result is a new array,
    symmetric bit for bit (halving is exact, and ``M_ij / 2 + M_ji / 2`` and
    ``M_ji / 2 + M_ij / 2`` round alike).  The check and the symmetrisation go a block of
    rows at a time, so a large kernel matrix needs no (n, n) temporaries.  With
    ``copy=False`` an input that is already exactly symmetric float64 is returned as is,
    so that a large kernel matrix is not duplicated; one that needs symmetrising is
    still copied.

    Parameters
    ----------
    M : array_like of shape (n, n)
        The matrix, dense.
    name : str, default="M"
        What ``M`` is called in the error messages.
    copy : bool, default=True
        Whether an input that is already exactly symmetric float64 is copied.

    Returns
    -------
    ndarray of shape (n, n)
        The exactly symmetric float64 matrix.

    Raises
    ------
    ValueError
        If ``M`` is sparse, not numeric, complex, not square and non-empty, not finite, or
        not symmetric within round-off.
    """
    if sp.issparse(M):
        raise ValueError(f"{name} is sparse, but a dense matrix is required")
    M = np.asarray(M)
    if M.dtype == object or not (np.issubdtype(M.dtype, np.number) or M.dtype == bool):
        raise ValueError(f"{name} must be numeric, got dtype {M.dtype}")
    if np.issubdtype(M.dtype, np.complexfloating):
        raise ValueError(f"{name} is complex: a real symmetric matrix is required")
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {M.shape}")
    given = M
    M = M.astype(np.float64, copy=False)
    if not all(np.isfinite(M[rows]).all() for rows in row_blocks(M.shape[0], M.shape[0], BLOCK_BUDGET_BYTES)):
        raise ValueError(f"{name} contains NaN or infinity")
    scale = max(float(M.max()), -float(M.min()))
    worst = _asymmetry(M)
    if worst > SYMMETRY_RTOL * scale:
        raise ValueError(
            f"{name} must be symmetric: its largest asymmetry |m_ij - m_ji| is {worst:.3g}, above "
            f"SYMMETRY_RTOL * max |m_ij| = {SYMMETRY_RTOL:g} * {scale:.3g}"
        )
    if worst == 0.0:
        return M.copy() if copy and M is given else M
    symmetric = np.empty(M.shape)
    for rows in row_blocks(M.shape[0], 16 * M.shape[0], BLOCK_BUDGET_BYTES):
        # Halves, not (a + b) / 2: a sum of two entries near the float64 maximum would overflow.
        np.add(0.5 * M[rows], 0.5 * M[:, rows].T, out=symmetric[rows])
    return symmetric


#: The largest iteration budget the compiled solvers accept: they count steps in C ints.
MAX_ITER_LIMIT = 2**31 - 1
_LARGEST_DOUBLE = np.finfo(np.float64).max


def check_scalar(value, name: str, *, kind=numbers.Real, low=None, high=None, low_inclusive=True, high_inclusive=True):
    """Validate a hyper-parameter's type and range, with an error naming it.

    Parameters
    ----------
    value : object
        The value to check.  True and False are refused whatever ``kind`` is.
    name : str
        The parameter's name, for the error message.
    kind : type, default=numbers.Real
        The abstract type the value must be an instance of (``numbers.Integral`` for counts).
    low : float or None, default=None
        The lower bound; None for none.
    high : float or None, default=None
        The upper bound; None for none.
    low_inclusive : bool, default=True
        Whether ``low`` itself is accepted.
    high_inclusive : bool, default=True
        Whether ``high`` itself is accepted.

    Returns
    -------
    object
        ``value``, unchanged.

    Raises
    ------
    ValueError
        If ``value`` is not a ``kind``, is not finite (an integer beyond the float64 range
        used as a real included), or lies outside the bounds.
    """
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{name} must be a {getattr(kind, '__name__', kind)}, got {value!r}")
    if isinstance(value, numbers.Integral):
        # Python ints are unbounded and finite; one used as a real must still be a double.
        if kind is not numbers.Integral and abs(value) > _LARGEST_DOUBLE:
            raise ValueError(f"{name} must be finite, got an integer beyond the float64 range ({value:.3e})")
    elif isinstance(value, numbers.Real) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value!r}")
    return value


def check_byte_cap(value, env_var: str, default: int) -> int:
    """Resolve a cap in bytes from an argument, an environment variable or a default.

    Parameters
    ----------
    value : int or None
        The cap given as an argument (``max_bytes``); None to read ``env_var``.
    env_var : str
        The environment variable read when ``value`` is None.
    default : int
        The cap when ``value`` is None and the variable is unset or blank.

    Returns
    -------
    int
        The cap, a positive whole number of bytes.

    Raises
    ------
    ValueError
        Naming the argument or the variable, when the cap is not a positive whole number.
    """
    name = "max_bytes"
    if value is None:
        text = os.environ.get(env_var, "")
        if not text.strip():
            return default
        name, value = f"${env_var}", text
        try:
            value = int(text)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive whole number of bytes, got {value!r}")
    return int(value)


def check_flag(value, name: str) -> bool:
    """Validate a boolean switch: True or False (numpy booleans too).

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name, for the error message.

    Returns
    -------
    bool
        ``value`` as a Python bool.

    Raises
    ------
    ValueError
        If ``value`` is not a boolean.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


#: The loss weights C the solvers accept: ``C_RANGE[0] <= C <= C_RANGE[1]``.
#:
#: The solvers compute with C itself (the dual box [0, C], the primal C sum_i loss_i) and
#: with its square: the weights are ``W = X^T B`` with dual coefficients B of order C, and
#: the quantities of the certificates and of the relation steps are quadratic in them
#: (``||W||^2``, ``W^T W``, ``H = B^T K B``, the Gram of a ranking's label weights), of
#: order ``C^2 (n ||x||)^2`` times the label (pair) count.  float64 represents normal numbers
#: from about 2.2e-308 to 1.8e308, so C^2 must stay within about 1e+-308, i.e. C within
#: about 1e+-154, before any factor of the data.  The range keeps a further margin of
#: 1e54 on each side for those factors (n ||x|| up to 1e54 against C = 1e100): at
#: C = 1e300 CMLFS's solve overflowed (an OverflowError, or a Gram of NaN), and at
#: C = 1e-300 the squared quantities (||W||^2 of order 1e-598) underflow to zero.  Any
#: practical grid (the papers search 1e-5 to 1e3) is far inside.  Inside the range a
#: fit at an extreme C can still stop short of its tolerance (a ConvergenceWarning,
#: ``converged`` false) or, for a learned label covariance, meet a covariance singular to
#: rounding (a ValueError): reported, never silent.
C_RANGE = (1e-100, 1e100)


def check_cost(value, name: str = "C") -> float:
    """Validate a loss weight C: a finite real number in :data:`C_RANGE`.

    Parameters
    ----------
    value : float
        The cost.
    name : str, default="C"
        The parameter's name, for the error message.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` is not a positive finite real or lies outside :data:`C_RANGE`.
    """
    check_scalar(value, name, low=0.0, low_inclusive=False)
    low, high = C_RANGE
    if not low <= value <= high:
        raise ValueError(
            f"{name} = {value!r} is outside [{low:g}, {high:g}], the range of loss weights C the solvers compute "
            f"with: they form C^2-sized quantities (||W||^2, W^T W) that must stay representable in float64 "
            f"(multilabel_core.validation.C_RANGE)"
        )
    return float(value)


def check_seed(seed, name: str = "random_state"):
    """Validate a seed without drawing from it.

    Unlike :func:`check_random_state` it draws nothing, so validating a hyper-parameter
    leaves a Generator or RandomState the user passed where it was.

    Parameters
    ----------
    seed : None, int, numpy.random.SeedSequence, Generator or RandomState
        The seed; an int must be at least 0.
    name : str, default="random_state"
        The parameter's name, for the error message.

    Returns
    -------
    object
        ``seed``, unchanged.

    Raises
    ------
    ValueError
        If ``seed`` is none of the accepted kinds, or a negative int.
    """
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.Generator, np.random.RandomState)):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"{name} must be >= 0 when an int (numpy seeds are non-negative), got {seed!r}")
        return seed
    raise ValueError(
        f"{name} must be None, an int >= 0, or a numpy Generator, SeedSequence or RandomState, got {seed!r}"
    )


def check_random_state(seed) -> np.random.Generator:
    """Turn a seed into a numpy Generator (deterministic for an int).

    A Generator is returned as it is: its stream goes on from call to call.  A RandomState
    seeds a new Generator with one draw from it.

    Parameters
    ----------
    seed : None, int, numpy.random.SeedSequence, Generator or RandomState
        The seed (as :func:`check_seed` accepts).

    Returns
    -------
    numpy.random.Generator
        The generator to draw from.

    Raises
    ------
    ValueError
        If ``seed`` is not an accepted seed.
    """
    check_seed(seed)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(2**31 - 1))
    return np.random.default_rng(seed)


# attrs validators: ``attrs.field(default=1.0, validator=positive)``.  Written on
# check_scalar rather than attrs.validators.instance_of / gt, which raise TypeError
# (public input errors are ValueError here), accept True as the number 1 and let NaN
# and infinity through.


def positive(instance, attribute, value) -> None:
    """Check that a field is a finite real number > 0 (a cost C, a tolerance, a kernel width).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: a finite real number > 0.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)


def non_negative(instance, attribute, value) -> None:
    """Check that a field is a finite real number >= 0 (a margin epsilon, a coupling mu).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: a finite real number >= 0.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_scalar(value, attribute.name, low=0.0)


def open_unit(instance, attribute, value) -> None:
    """Check that a field is a finite real number in the open interval (0, 1).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: a real in (0, 1) (a decay factor, a relative cut).

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_scalar(value, attribute.name, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


def real(instance, attribute, value) -> None:
    """Check that a field is a finite real number (a kernel's coef0).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: any finite real number.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_scalar(value, attribute.name)


def cost(instance, attribute, value) -> None:
    """Check that a field is a loss weight C, as :func:`check_cost`.

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: a finite real in :data:`C_RANGE`.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_cost(value, attribute.name)


def seed(instance, attribute, value) -> None:
    """Check that a field is a ``random_state``, as :func:`check_seed`.

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: None, an int >= 0, or a numpy seed object.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_seed(value, attribute.name)


def count(instance, attribute, value) -> None:
    """Check that a field is an integer count (max_iter, a rank, a degree).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: an integer in [1, MAX_ITER_LIMIT] (numpy integers too; not True).

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_scalar(value, attribute.name, kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)


def optional_count(instance, attribute, value) -> None:
    """Check that a field is None or a :func:`count` (an optional budget).

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: None, or an integer in [1, MAX_ITER_LIMIT].

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    if value is not None:
        count(instance, attribute, value)


def flag(instance, attribute, value) -> None:
    """Check that a field is True or False (numpy booleans too), as :func:`check_flag`.

    For ``attrs.field(validator=...)``; the error names the field.

    Parameters
    ----------
    instance : object
        The attrs instance being built (unused).
    attribute : attrs.Attribute
        The field; its ``name`` is the one the error names.
    value : object
        The value to check: a boolean.

    Raises
    ------
    ValueError
        If ``value`` breaks the rule.
    """
    check_flag(value, attribute.name)


# -- parameter constraints as data ------------------------------------------------------------
#
# An estimator class declares ``_parameter_constraints = {name: Constraint, ...}``; a subclass's
# dict adds to and overrides its bases' (merged_constraints), and one generic validator
# (validate_parameters, run by MultiLabelEstimator._validate_params at the start of fit) reads
# them.  Each constraint raises the ValueError the imperative checks raised, naming the parameter.


class Constraint(abc.ABC):
    """A rule on the value of one hyper-parameter, declared as data (``_parameter_constraints``)."""

    @abc.abstractmethod
    def check(self, value, name: str) -> None:
        """Raise ValueError naming ``name`` when ``value`` breaks the rule.

        Parameters
        ----------
        value : object
            The parameter's value.
        name : str
            The parameter's name, for the message.
        """

    @abc.abstractmethod
    def describe(self) -> str:
        """The rule in words (the docs' parameter tables).

        Returns
        -------
        str
        """

    def accepts(self, value) -> bool:
        """Whether ``value`` meets the rule (:meth:`check` raises nothing).

        Parameters
        ----------
        value : object

        Returns
        -------
        bool
        """
        try:
            self.check(value, "value")
        except ValueError:
            return False
        return True

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


@attrs.frozen(repr=False)
class Interval(Constraint):
    """A real (or, with ``kind=numbers.Integral``, integer) number in a range, as :func:`check_scalar`.

    Parameters
    ----------
    kind : type, default numbers.Real
        ``numbers.Real`` or ``numbers.Integral`` (True and False are refused either way).
    low, high : float or None
        The bounds (None: unbounded on that side).
    low_inclusive, high_inclusive : bool, default True
        Whether the bounds belong to the range.
    """

    kind: type = numbers.Real
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True

    def check(self, value, name: str) -> None:
        check_scalar(
            value, name, kind=self.kind, low=self.low, high=self.high,
            low_inclusive=self.low_inclusive, high_inclusive=self.high_inclusive,
        )  # fmt: skip

    def describe(self) -> str:
        integral = self.kind is numbers.Integral
        what, shown = ("int", "{}") if integral else ("float", "{:g}")
        left = "(-inf" if self.low is None else ("[" if self.low_inclusive else "(") + shown.format(self.low)
        right = "inf)" if self.high is None else shown.format(self.high) + ("]" if self.high_inclusive else ")")
        return f"{what} in {left}, {right}"


@attrs.frozen(repr=False)
class Options(Constraint):
    """One of a fixed set of values (compared with ``==``; a value of another type is simply not one of them).

    Parameters
    ----------
    values : tuple
        The accepted values, in the order the message lists them.
    """

    values: tuple = attrs.field(converter=tuple)

    def check(self, value, name: str) -> None:
        if not any(_same_option(value, option) for option in self.values):
            raise ValueError(f"{name} must be one of {', '.join(map(repr, self.values))}, got {value!r}")

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.values))


def _same_option(value, option) -> bool:
    """``value == option`` as a plain truth, False when the comparison has none (an array) and
    between a boolean and a number (True is not the option 1)."""
    if value is option:
        return True
    if isinstance(value, (bool, np.bool_)) != isinstance(option, (bool, np.bool_)):
        return False
    try:
        equal = value == option
    except Exception:  # whatever a foreign object's __eq__ raises is "not this option"
        return False
    return isinstance(equal, (bool, np.bool_)) and bool(equal)


@attrs.frozen(repr=False)
class Flag(Constraint):
    """True or False (numpy booleans too), as :func:`check_flag`."""

    def check(self, value, name: str) -> None:
        check_flag(value, name)

    def describe(self) -> str:
        return "True or False"


@attrs.frozen(repr=False)
class Cost(Constraint):
    """A loss weight C in :data:`C_RANGE`, as :func:`check_cost`."""

    def check(self, value, name: str) -> None:
        check_cost(value, name)

    def describe(self) -> str:
        return f"float in [{C_RANGE[0]:g}, {C_RANGE[1]:g}]"


@attrs.frozen(repr=False)
class Seed(Constraint):
    """A ``random_state``, as :func:`check_seed` (validated without drawing from it)."""

    def check(self, value, name: str) -> None:
        check_seed(value, name)

    def describe(self) -> str:
        return "None, an int >= 0 or a numpy Generator, SeedSequence or RandomState"


@attrs.frozen(repr=False)
class InstanceOf(Constraint):
    """An instance of the given class(es): a part object, a wrapped estimator.

    Parameters
    ----------
    types : type or tuple of types
    what : str
        How the message names what is expected (``"a multi-label estimator (e.g. make_method('br'))"``).
    """

    types: object
    what: str

    def check(self, value, name: str) -> None:
        if not isinstance(value, self.types):
            raise ValueError(f"{name} must be {self.what}, got {type(value).__name__}")

    def describe(self) -> str:
        return self.what


@attrs.frozen(repr=False)
class Rule(Constraint):
    """A named check function ``function(value, name)`` raising ValueError: a rule no other kind states.

    For a rule that lives with the code it protects (a solver's tolerance floor, a threshold
    name looked up in the registry): the constraint is still declared per parameter, and the
    function is called with the parameter's name.

    Parameters
    ----------
    function : callable
        ``function(value, name)``; raises ValueError naming ``name``; its return value is ignored.
    what : str
        The rule in words.
    """

    function: object
    what: str

    def check(self, value, name: str) -> None:
        self.function(value, name)

    def describe(self) -> str:
        return self.what


@attrs.frozen(repr=False)
class NoneOr(Constraint):
    """None (the default a method fills in), or a value meeting ``constraint``.

    Parameters
    ----------
    constraint : Constraint
    """

    constraint: Constraint

    def check(self, value, name: str) -> None:
        if value is not None:
            self.constraint.check(value, name)

    def describe(self) -> str:
        return f"None or {self.constraint.describe()}"


@attrs.frozen(repr=False)
class AllOf(Constraint):
    """Every one of ``constraints``, checked in order (the first broken one raises).

    For a common rule followed by a narrower one of the class (a tolerance > 0, then within the
    range a solver can meet): the message of the general rule comes first.

    Parameters
    ----------
    *constraints : Constraint
    """

    constraints: tuple

    def __init__(self, *constraints):
        self.__attrs_init__(tuple(constraints))

    def check(self, value, name: str) -> None:
        for constraint in self.constraints:
            constraint.check(value, name)

    def describe(self) -> str:
        return " and ".join(constraint.describe() for constraint in self.constraints)


@attrs.frozen(repr=False)
class Unchecked(Constraint):
    """Any value: a parameter exempt from checking, with the reason (stated, so that the exemption is seen).

    Parameters
    ----------
    reason : str
        Why the parameter takes any value (e.g. a deprecated alias that the renamed
        parameter's check reads, or an object checked where it is used).
    """

    reason: str

    def check(self, value, name: str) -> None:
        return None

    def describe(self) -> str:
        return f"any value: {self.reason}"


#: A finite real number > 0 (a weight lam, a tolerance, a kernel width).
POSITIVE = Interval(numbers.Real, 0.0, None, low_inclusive=False)
#: A finite real number >= 0 (a coupling, a margin).
NON_NEGATIVE = Interval(numbers.Real, 0.0, None)
#: An integer in [1, MAX_ITER_LIMIT] (an iteration budget, a count the compiled code keeps in a C int).
COUNT = Interval(numbers.Integral, 1, MAX_ITER_LIMIT)


def merged_constraints(estimator_class) -> dict:
    """The parameter constraints of ``estimator_class``: each class's ``_parameter_constraints`` along its MRO.

    A class's own dict adds to those of its bases and replaces their entry for a name it
    declares again (scikit-learn's ``_parameter_constraints`` are merged the same way).

    Parameters
    ----------
    estimator_class : type

    Returns
    -------
    dict of str to Constraint
    """
    merged = {}
    for klass in reversed(estimator_class.__mro__):
        declared = vars(klass).get("_parameter_constraints")
        if declared:
            merged.update(declared)
    return merged


def validate_parameters(params: Mapping, constraints: Mapping, owner: str | None = None) -> None:
    """Check each of ``params`` against its constraint; ValueError naming the parameter (and ``owner``).

    A parameter without a declared constraint is not checked here (the coverage test of the
    registered estimators, tests/test_parameter_constraints.py, holds every one of theirs
    declared).

    Parameters
    ----------
    params : mapping of str to object
        The values, by parameter name (``get_params(deep=False)``).
    constraints : mapping of str to Constraint
        The rules (:func:`merged_constraints`).
    owner : str, optional
        The estimator's class name, added to the message as ``(a parameter of <owner>)``.

    Raises
    ------
    ValueError
        For the first value (in ``params``'s order) that breaks its rule.
    """
    for name, value in params.items():
        constraint = constraints.get(name)
        if constraint is None:
            continue
        if not isinstance(constraint, Constraint):
            raise TypeError(f"the constraint of {name!r} is {constraint!r}, not a multilabel_core.validation.Constraint")
        try:
            constraint.check(value, name)
        except ValueError as exc:
            if owner is None:
                raise
            raise ValueError(f"{exc} (a parameter of {owner})") from None
