"""Dense or CSR: the ``sparse`` argument of every reader.

A file of sparse rows is not always a sparse matrix: some benchmarks are stored in sparse
ARFF rows although most of their entries are non-zero.  On such data scikit-learn's SVC
runs about ten times slower on CSR than on the same matrix dense (LIBSVM's sparse kernel
walks index lists instead of contiguous rows), while a dense copy costs at most
``8 / (12 * DENSE_ABOVE)`` times the memory of the CSR one (8 bytes per entry against 8 + 4
per stored value).  The measurements behind :data:`DENSE_ABOVE` are in docs/data-formats.md.

The readers of every format, the commands and the experiment files share these helpers, and
:func:`size_text`, the one way a size in bytes is written in their messages.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._files import DataFormatError, check_dense_size, size_text

__all__ = ["DENSE_ABOVE", "SPARSE_CHOICES", "check_sparse", "density", "size_text", "to_storage"]

DENSE_ABOVE = 0.3
SPARSE_CHOICES = ("auto", True, False)


def check_sparse(sparse):
    """Return ``sparse`` as "auto", True or False.

    Parameters
    ----------
    sparse : {"auto", True, False}
        A reader's ``sparse`` argument (numpy booleans accepted).

    Returns
    -------
    str or bool
        "auto", True or False.

    Raises
    ------
    ValueError
        When ``sparse`` is anything else, naming it.
    """
    if isinstance(sparse, (bool, np.bool_)):
        return bool(sparse)
    if isinstance(sparse, str) and sparse == "auto":
        return sparse
    raise ValueError(f"sparse must be 'auto', True or False, got {sparse!r}")


def density(X) -> float:
    """Return the fraction of X's entries that are stored non-zeros (sparse) or non-zero (dense).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The feature matrix.

    Returns
    -------
    float
        Stored (sparse) or non-zero (dense) entries over ``n_samples * n_features``; 0.0 for an
        empty matrix.
    """
    size = X.shape[0] * X.shape[1]
    if size == 0:
        return 0.0
    nonzero = X.nnz if sp.issparse(X) else np.count_nonzero(X)
    return nonzero / size


def to_storage(X, sparse, *, path=None, max_bytes=None):
    """Return X as CSR or dense, following ``sparse``.

    "auto" keeps a dense X dense and a sparse one sparse, unless more than
    :data:`DENSE_ABOVE` of the sparse one's entries are stored: then it is densified.
    A densified X may not pass the readers' memory cap (``max_bytes``): a few stored values
    can declare a matrix of terabytes.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The feature matrix as read.
    sparse : {"auto", True, False}
        Already checked by :func:`check_sparse`.
    path : str or path-like, optional
        The file X was read from; named by the error when given.
    max_bytes : int, optional
        The readers' memory cap for a densified X (None: the default cap).

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix
        X in the storage chosen.

    Raises
    ------
    DataFormatError
        When a densified X would pass the cap and ``path`` is given.
    ValueError
        When a densified X would pass the cap and no ``path`` is given.
    """
    if isinstance(sparse, str):
        sparse = sp.issparse(X) and density(X) <= DENSE_ABOVE
    if sparse:
        return X if sp.issparse(X) else sp.csr_matrix(X)
    if sp.issparse(X):
        try:
            check_dense_size(path if path is not None else "X", X.shape, 8, "X (float64)", max_bytes)
        except DataFormatError as exc:
            if path is None:
                raise ValueError(exc.reason + "; or keep it sparse (sparse=True)") from None
            raise DataFormatError(path, None, exc.reason + "; or keep it sparse (sparse=True)") from None
        return X.toarray()
    return X
