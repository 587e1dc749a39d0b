"""Exact k-nearest-neighbour search in Euclidean distance, for ML-kNN and BRkNN.

The neighbours of a row are the ``k`` training rows nearest to it, and of several rows at
the same distance the earlier training rows come first: the order of a stable sort of the
distances, which is what the reference implementation of ML-kNN does (Zhang & Zhou's
MLKNN_train sorts each row of its distance matrix with MATLAB's stable ``sort``, after
setting the diagonal to the largest float so that a training row is not its own neighbour).
With that rule the neighbours, and so every count of ML-kNN and BRkNN, are a function of
the data and the row order alone, identical for dense and sparse X.

Dense training rows in at most :data:`TREE_MAX_FEATURES` dimensions go to scipy's
:class:`~scipy.spatial.cKDTree`, which computes each distance directly (no cancellation),
queried a block of rows at a time (sparse query rows made dense a block at a time) so that
Ctrl-C takes effect between blocks.  In more dimensions a tree query visits most rows one
distance at a time (ML-kNN's fit on 12000 standardised 500-dimensional rows grew as n^2.6),
so the rows are searched exhaustively instead, a block of query rows per matrix product
(:func:`_dense_search`): the expanded squared distances only select the candidates, with a
bound of their rounding, and the candidates' distances are computed directly and stably
sorted, so the result is the tree's rule (directly computed distances, ties to the earlier
training row) at the cost of one BLAS product.  The tree
does not say which of several equidistant rows it returns, so it is asked for one row
more than needed: when that extra row is farther than the last one kept, the set is
unambiguous; otherwise (a tie at the boundary, common on binary or duplicated rows) every
training row within the boundary distance is found (one matrix product per block of such
rows, with a margin for its rounding) and those rows' distances, computed directly, are
stably sorted.  Sparse
training rows are searched exhaustively, a block of query rows at a time, with

    ||a - b||^2 = ||a||^2 + ||b||^2 - 2 a^T b,

the products ``A B^T`` of a block being one sparse matrix product, so X is never
densified and a block's distances stay within :data:`BLOCK_ENTRIES` floats; the ties of
those computed distances are broken by the training order too (exact ties for integer
features such as word counts, whose sums are exact in float64).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from multilabel_core.parallel import blas_limited, effective_threads

__all__ = ["BLOCK_ENTRIES", "TREE_MAX_FEATURES", "nearest_neighbors"]

#: Entries of one block of squared distances in the sparse search (64 MB of float64).
BLOCK_ENTRIES = 2**23

#: Most features of dense rows searched with the k-d tree; above it, the blocked exhaustive search.
#: A tree prunes well only in few dimensions; the crossover measured on standardised corel16k001
#: rows and on yeast (103 features) is well below 100 (benchmarks/RESULTS.md, "Every method at scale").
TREE_MAX_FEATURES = 16

#: Query rows per matrix product of the exhaustive dense search.
QUERY_BLOCK_ROWS = 256


def nearest_neighbors(X_fit, X_query, k: int, *, exclude_self: bool = False, n_jobs: int | None = None):
    """Find the ``k`` rows of ``X_fit`` nearest to each row of ``X_query``.

    With ``exclude_self`` the query rows are the rows of ``X_fit`` themselves, and row i
    is not its own neighbour (ML-kNN's N(x_i) in training; a duplicate of row i is
    another row and counts).  Of several rows at the distance of the k-th, the earliest
    training rows are taken (module docstring).  The rows of the result are sets: the
    order within a row is unspecified.  ``n_jobs`` is the number of threads of the
    tree's queries or of the exhaustive search's matrix products (-1 for all cores; None for one).

    Parameters
    ----------
    X_fit : array-like or sparse matrix of shape (n_fit, d)
        The training rows searched.
    X_query : array-like or sparse matrix of shape (n_query, d)
        The rows whose neighbours are wanted (``X_fit`` itself with ``exclude_self``).
    k : int
        The neighbours per query row; at most n_fit (n_fit - 1 with ``exclude_self``).
    exclude_self : bool, default False
        The query rows are the training rows, and row i is not its own neighbour.
    n_jobs : int or None, default None
        Threads of the search of dense rows (-1 for all cores; None for one).

    Returns
    -------
    ndarray of shape (n_query, k), int
        Row i holds the indices into ``X_fit`` of row i's k nearest rows in Euclidean
        distance, in no particular order.

    Raises
    ------
    ValueError
        When ``X_fit`` has fewer rows than the neighbours needed.
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
    X_fit = np.asarray(X_fit)
    if X_fit.shape[1] > TREE_MAX_FEATURES:
        with blas_limited(1 if n_jobs is None else effective_threads(n_jobs)):
            return _dense_search(X_fit, X_query, k, exclude_self)
    return _tree_search(X_fit, X_query, k, exclude_self, n_jobs)


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
    n_fit = X_fit.shape[0]
    # One row more than the neighbours (and the row itself) tells whether the boundary is tied.
    asked = min(k + (2 if exclude_self else 1), n_fit)
    tree = cKDTree(X_fit)
    n_query = X_query.shape[0]
    # A block of query rows per call: the tree's queries do not check for signals, and in many
    # dimensions one query visits most of the n_fit rows, so a call is kept to about
    # BLOCK_ENTRIES distances and Ctrl-C takes effect between calls.  Sparse rows are made
    # dense a block at a time.
    block = max(1, BLOCK_ENTRIES // max(n_fit, X_query.shape[1]))
    index = np.empty((n_query, k), dtype=np.intp)
    for start in range(0, n_query, block):
        rows = X_query[start : start + block]
        rows = rows.toarray() if sp.issparse(rows) else rows
        n_rows = len(rows)
        distance, found = tree.query(rows, k=asked, workers=workers)
        distance, found = distance.reshape(n_rows, asked), found.reshape(n_rows, asked)
        unresolved = np.zeros(n_rows, dtype=bool)
        if exclude_self:
            own = found == np.arange(start, start + n_rows)[:, None]
            # A row missing from its own list has more equidistant (duplicate) rows than were asked for.
            unresolved |= ~own.any(axis=1)
            own[unresolved, -1] = True
            found = found[~own].reshape(n_rows, asked - 1)
            distance = distance[~own].reshape(n_rows, asked - 1)
        if found.shape[1] > k:
            unresolved |= distance[:, k - 1] == distance[:, k]
        index[start : start + n_rows] = found[:, :k]
        tied = np.flatnonzero(unresolved)
        if tied.size:
            _resolve_ties(X_fit, rows, tied, distance[tied, k - 1], index[start : start + n_rows], k,
                          start if exclude_self else None)  # fmt: skip
    return index


def _resolve_ties(X_fit, rows, tied, boundary, index, k, offset):
    """The neighbours of the query rows ``tied`` (of ``rows``), whose k-th distance ``boundary`` is shared
    by more rows than fit: every row within it, stably sorted by its directly computed distance.

    The rows within the boundary are found with ``||a - b||^2 = ||a||^2 + ||b||^2 - 2 a^T b``, one
    matrix product per block, kept when that value is below the squared boundary plus a bound of its
    rounding error: each of the three terms is a sum of d + 2 or fewer products, each rounded by at
    most the unit roundoff u, so the error stays below (d + 2) u (||a||^2 + ||b||^2 + 2 |a^T b|),
    at most 2 (d + 2) u (||a||^2 + ||b||^2); twice that is the margin.  The candidates'
    distances are then computed directly (differences first), which the ties are broken on.
    """
    d = X_fit.shape[1]
    fit_norms = np.einsum("ij,ij->i", X_fit, X_fit)
    margin = 4.0 * (d + 2) * np.finfo(np.float64).eps
    block = max(1, BLOCK_ENTRIES // X_fit.shape[0])
    for first in range(0, len(tied), block):
        which = tied[first : first + block]
        queries = rows[which]
        query_norms = np.einsum("ij,ij->i", queries, queries)
        sums = query_norms[:, None] + fit_norms[None, :]
        squared = sums - 2.0 * (queries @ X_fit.T)
        # The relative 1e-9 covers the tree's own rounding of the boundary distance.
        within = squared <= (boundary[first : first + block, None] * (1.0 + 1e-9)) ** 2 + margin * sums
        for row, query, near in zip(which, queries, within):
            candidates = np.flatnonzero(near)
            if offset is not None:
                candidates = candidates[candidates != offset + row]
            difference = X_fit[candidates] - query
            index[row] = candidates[np.argsort(np.einsum("ij,ij->i", difference, difference), kind="stable")[:k]]


def _dense_search(X_fit, X_query, k, exclude_self):
    """The tree's neighbours (directly computed distances, ties to the earlier training row) by blocks
    of matrix products: ``||a||^2 + ||b||^2 - 2 a^T b`` only selects candidates.

    The expanded value of a pair differs from its directly computed squared distance by less than
    ``margin (||a||^2 + ||b||^2)`` (``_resolve_ties`` derives the rounding bound of the expansion;
    the margin here is twice that again, for the rounding of the direct sum), which for a query
    row a is at most ``e = margin (||a||^2 + max ||b||^2)``.  So with ``t`` the k-th smallest
    expanded value of the row, at least k rows have a direct distance at most ``t + e``, and a row
    whose expanded value exceeds ``t + 2 e`` cannot be among the k nearest, ties included: only the
    rows within ``t + 2 e`` (usually a few more than k) have their distances computed directly,
    and those are stably sorted.
    """
    d = X_fit.shape[1]
    fit_norms = np.einsum("ij,ij->i", X_fit, X_fit)
    margin = 8.0 * (d + 2) * np.finfo(np.float64).eps
    largest_fit_norm = float(fit_norms.max())
    n_query, n_fit = X_query.shape[0], X_fit.shape[0]
    # Blocks of a few hundred query rows keep the (block, n_fit) distances near the cache, for the
    # few passes made over them after the product.
    block = max(1, min(QUERY_BLOCK_ROWS, BLOCK_ENTRIES // n_fit))
    index = np.empty((n_query, k), dtype=np.intp)
    rows_of_block = np.arange(block)
    for start in range(0, n_query, block):
        stop = min(start + block, n_query)
        rows = X_query[start:stop]
        rows = rows.toarray() if sp.issparse(rows) else np.ascontiguousarray(rows, dtype=np.float64)
        n_rows = stop - start
        query_norms = np.einsum("ij,ij->i", rows, rows)
        expanded = rows @ X_fit.T
        expanded *= -2.0
        expanded += query_norms[:, None]
        expanded += fit_norms[None, :]
        if exclude_self:
            expanded[rows_of_block[:n_rows], np.arange(start, stop)] = np.inf
        error = margin * (query_norms + largest_fit_norm)
        bound = np.partition(expanded, k - 1, axis=1)[:, k - 1] + 2.0 * error
        query_of, candidate = np.nonzero(expanded <= bound[:, None])
        difference = rows[query_of] - X_fit[candidate]
        direct = np.einsum("ij,ij->i", difference, difference)
        # np.nonzero lists each row's candidates in training order and lexsort is stable, so equal
        # distances stay in that order.
        order = np.lexsort((direct, query_of))
        first = np.searchsorted(query_of[order], np.arange(n_rows))
        index[start:stop] = candidate[order[first[:, None] + np.arange(k)]]
    return index


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
        index[start:stop] = _first_k_smallest(distances, k)
    return index


def _first_k_smallest(distances, k):
    """Per row, the columns of the k smallest entries, equal entries in column order (a stable
    sort's first k), in linear time: every entry below the k-th smallest value, then the first
    columns holding that value."""
    kth = np.partition(distances, k - 1, axis=1)[:, k - 1 : k]
    below = distances < kth
    at = distances == kth
    wanted = k - below.sum(axis=1, keepdims=True)
    chosen = below | (at & (np.cumsum(at, axis=1) <= wanted))
    return np.nonzero(chosen)[1].reshape(len(distances), k)
