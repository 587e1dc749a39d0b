"""Exact k-nearest-neighbour search in Euclidean distance, for ML-kNN.

Dense training rows go to scipy's :class:`~scipy.spatial.cKDTree`, which computes each
distance directly (no cancellation), queried a block of rows at a time (sparse query
rows made dense a block at a time) so that Ctrl-C takes effect between blocks.  Sparse training rows are searched
exhaustively, a block of query rows at a time, with

    ||a - b||^2 = ||a||^2 + ||b||^2 - 2 a^T b,

the products ``A B^T`` of a block being one sparse matrix product, so X is never
densified and a block's distances stay within :data:`BLOCK_ENTRIES` floats.

Which of several equidistant rows is taken is unspecified in both cases (the count of
a label among the neighbours depends on it only at exact ties).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

__all__ = ["BLOCK_ENTRIES", "nearest_neighbors"]

#: Entries of one block of squared distances in the sparse search (64 MB of float64).
BLOCK_ENTRIES = 2**23


def nearest_neighbors(X_fit, X_query, k: int, *, exclude_self: bool = False, n_jobs: int | None = None):
    """Indices (n_query, k) of the ``k`` rows of ``X_fit`` nearest to each row of ``X_query``.

    With ``exclude_self`` the query rows are the rows of ``X_fit`` themselves, and row i
    is not its own neighbour (ML-kNN's N(x_i) in training).  The rows of the result
    are sets: their order is unspecified.  ``n_jobs`` is the number of threads of the
    tree's queries (-1 for all cores; None for one).
    """
    n_fit = X_fit.shape[0]
    needed = k + 1 if exclude_self else k
    if needed > n_fit:
        raise ValueError(
            f"{k} neighbours{' besides the row itself' if exclude_self else ''} need more than {n_fit} training rows"
        )
    X_fit, X_query = _common_scale(X_fit, X_query)
    if sp.issparse(X_fit):
        return _blocked_search(sp.csr_matrix(X_fit), sp.csr_matrix(X_query), k, exclude_self)
    # A model fitted on dense rows predicts on CSR/CSC rows too (the estimator contract accepts either).
    X_query = sp.csr_matrix(X_query) if sp.issparse(X_query) else np.asarray(X_query)
    return _tree_search(np.asarray(X_fit), X_query, k, exclude_self, n_jobs)


def _common_scale(X_fit, X_query):
    """Both row sets divided by their largest |entry| when squared distances could leave float64.

    The nearest rows do not change under one positive scale of all rows, but squared distances
    of rows of order 1e200 overflow (every distance infinite, the neighbours garbage) and of
    order 1e-200 underflow to 0 (every row a tie).
    """
    largest = max(_largest(X_fit), _largest(X_query))
    if largest == 0.0 or 1e-100 <= largest <= 1e100:
        return X_fit, X_query
    return X_fit / largest, X_query / largest


def _largest(X) -> float:
    values = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(values))) if values.size else 0.0


def _tree_search(X_fit, X_query, k, exclude_self, n_jobs):
    workers = 1 if n_jobs is None else n_jobs
    needed = k + 1 if exclude_self else k
    tree = cKDTree(X_fit)
    n_query = X_query.shape[0]
    # A block of query rows per call: the tree's queries do not check for signals, and in many
    # dimensions one query visits most of the n_fit rows, so a call is kept to about
    # BLOCK_ENTRIES distances and Ctrl-C takes effect between calls.  Sparse rows are made
    # dense a block at a time.
    block = max(1, BLOCK_ENTRIES // max(X_fit.shape[0], X_query.shape[1]))
    index = np.empty((n_query, needed), dtype=np.intp)
    for start in range(0, n_query, block):
        rows = X_query[start : start + block]
        rows = rows.toarray() if sp.issparse(rows) else rows
        index[start : start + len(rows)] = tree.query(rows, k=needed, workers=workers)[1].reshape(len(rows), needed)
    if not exclude_self:
        return index
    # Drop row i from its own list; when ties at distance 0 pushed it out, drop the farthest.
    own = index == np.arange(n_query)[:, None]
    own[~own.any(axis=1), -1] = True
    return index[~own].reshape(n_query, k)


def _blocked_search(X_fit, X_query, k, exclude_self):
    fit_norms = np.asarray(X_fit.multiply(X_fit).sum(axis=1)).ravel()
    query_norms = np.asarray(X_query.multiply(X_query).sum(axis=1)).ravel()
    n_query, n_fit = X_query.shape[0], X_fit.shape[0]
    block = max(1, BLOCK_ENTRIES // n_fit)
    index = np.empty((n_query, k), dtype=np.intp)
    for start in range(0, n_query, block):
        stop = min(start + block, n_query)
        products = (X_query[start:stop] @ X_fit.T).toarray()
        distances = query_norms[start:stop, None] + fit_norms[None, :] - 2.0 * products
        if exclude_self:
            distances[np.arange(stop - start), np.arange(start, stop)] = np.inf
        index[start:stop] = np.argpartition(distances, k - 1, axis=1)[:, :k]
    return index
