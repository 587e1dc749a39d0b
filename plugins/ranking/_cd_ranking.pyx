# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The pairwise label-ranking dual as a variant of the coordinate-descent engine.

Gu, Li & Han, *Correlated Multi-Label Feature Selection* (CIKM 2011),
section 3.4.1.  Notation: rows z_i (the re-weighted features, see ranking.py), c labels,
y_i the relevant and ybar_i the irrelevant labels of row i, R = I + mu D^-1 (c x c) and
R^-1 its inverse.  One dual variable alpha_ikl per pair (k, l) in y_i x ybar_i, and

    beta_ik = sum_{(p,q)} gamma^k_ipq alpha_ipq      (+alpha for p = k, -alpha for q = k; eqs. 8-9)
    u_k     = sum_i beta_ik z_i                      (the paper's u_k; eq. 10: sum_l R_kl w_l = u_k)
    w_k     = sum_q R^-1_kq u_q                      (the primal weights)

The dual (7) for fixed D and p, in minimisation form (eqs. 19-20)::

    g(alpha) = 1/2 sum_{k,l} R^-1_kl u_k^T u_l - sum alpha_ikl,   0 <= alpha_ikl <= C / (|y_i| |ybar_i|)

Along one coordinate (eqs. 22-23)::

    G_ikl = (w_k - w_l)^T z_i - 1,      Q_ikl = S_kl ||z_i||^2,   S_kl = R^-1_kk + R^-1_ll - 2 R^-1_kl

and a step ``delta`` on alpha_ikl moves u_k by +delta z_i and u_l by -delta z_i (eq. 27),
hence every w_q by ``delta (R^-1_qk - R^-1_ql) z_i`` (only w_k and w_l when R^-1 is
diagonal, e.g. R = I).
Algorithm 1 prints the gradient as ``R^-1_kl (u_k - u_l)^T x_i - 1``; that is not the
derivative of (20) (with R = I it would be -1 for every pair).  Eq. 23, implemented
here, is.
"""

import numpy as np

from multilabel_core.validation import SYMMETRY_RTOL

from libc.math cimport isfinite
from scipy.linalg.cython_blas cimport daxpy, ddot

from multilabel_core.solvers.kit cimport DualCoordinates, Rows, cd_prefetch


# One record per pair, 16 bytes (four to a cache line, never split across two): a visit
# reads one line of the table.  The label indices fit a C int, as R^-1 holds c^2 doubles.
cdef struct Pair:
    Py_ssize_t row
    int relevant        # k, in y_i
    int irrelevant      # l, in ybar_i

PAIR = np.dtype([("row", np.intp), ("relevant", np.intc), ("irrelevant", np.intc)])


cdef class RankingDual(DualCoordinates):
    """The dual (19)-(20) over the pairs ``(pair_row[p], pair_k[p], pair_l[p])``.

    Arguments (all C-contiguous): ``rows`` the z_i; ``pair_row``, ``pair_k``,
    ``pair_l`` (np.intp, one entry per pair, k relevant and l irrelevant for that row;
    copied into one table of :data:`PAIR` records);
    ``box`` (float64, one per row) the upper bound C / (|y_i| |ybar_i|); ``R_inv``
    (float64, c x c, symmetric); ``alpha`` (float64, one per pair) the start, updated in
    place; ``U`` and ``W`` (float64, c x rows.dimension) the caller's buffers for u_k and
    w_k as rows, computed here from ``alpha`` and kept up to date by every step.
    """
    cdef Rows rows
    cdef const Pair[::1] pairs
    cdef const double[::1] box
    cdef const double[:, ::1] R_inv
    cdef double[:, ::1] U
    cdef double[:, ::1] W
    cdef double[::1] row_norms
    cdef bint diagonal      # R^-1 diagonal (mu = 0, or a diagonal D): a step moves w_k and w_l only

    def __init__(self, Rows rows not None, const Py_ssize_t[::1] pair_row not None,
                 const Py_ssize_t[::1] pair_k not None, const Py_ssize_t[::1] pair_l not None,
                 const double[::1] box not None, const double[:, ::1] R_inv not None,
                 double[::1] alpha not None, double[:, ::1] U not None, double[:, ::1] W not None):
        cdef Py_ssize_t p
        _check_structure(rows, pair_row, pair_k, pair_l, box, R_inv, alpha, U, W)
        self.rows, self.box, self.R_inv = rows, box, R_inv
        # A private copy: the indices validated here must not change under the engine.
        table = np.empty(alpha.shape[0], dtype=PAIR)
        table["row"], table["relevant"], table["irrelevant"] = pair_row, pair_k, pair_l
        table.setflags(write=False)
        self.pairs = table
        self.alpha, self.U, self.W = alpha, U, W
        inverse = np.asarray(R_inv)
        self.diagonal = not np.any(inverse[~np.eye(inverse.shape[0], dtype=bool)])
        self.row_norms = np.empty(rows.n_rows)
        with nogil:
            for p in range(rows.n_rows):
                self.row_norms[p] = rows.squared_norm(p)
            self.refresh()

    cdef void refresh(self) noexcept nogil:
        """u_k = sum_i beta_ik z_i (eq. 10) summed afresh over the pairs, then w_q = sum_k R^-1_qk u_k."""
        cdef Py_ssize_t p, q, k
        cdef int dimension = <int> self.U.shape[1], one = 1
        cdef double coefficient
        cdef const Pair* pair
        self.U[:, :] = 0.0
        self.W[:, :] = 0.0
        for p in range(self.alpha.shape[0]):
            if self.alpha[p] != 0.0:
                pair = &self.pairs[p]
                self.rows.axpy(pair.row, self.alpha[p], &self.U[pair.relevant, 0])
                self.rows.axpy(pair.row, -self.alpha[p], &self.U[pair.irrelevant, 0])
        for q in range(self.W.shape[0]):
            for k in range(self.U.shape[0]):
                coefficient = self.R_inv[q, k]
                if coefficient != 0.0:
                    daxpy(&dimension, &coefficient, &self.U[k, 0], &one, &self.W[q, 0], &one)

    cdef void prefetch(self, Py_ssize_t p) noexcept nogil:
        cd_prefetch(&self.pairs[p])

    cdef double gradient(self, Py_ssize_t p) noexcept nogil:
        cdef const Pair* pair = &self.pairs[p]
        return (self.rows.dot(pair.row, &self.W[pair.relevant, 0])
                - self.rows.dot(pair.row, &self.W[pair.irrelevant, 0]) - 1.0)

    cdef double curvature(self, Py_ssize_t p) noexcept nogil:
        cdef const Pair* pair = &self.pairs[p]
        cdef Py_ssize_t k = pair.relevant, l = pair.irrelevant
        cdef double S = self.R_inv[k, k] + self.R_inv[l, l] - 2.0 * self.R_inv[k, l]
        return S * self.row_norms[pair.row]

    cdef double lower(self, Py_ssize_t p) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t p) noexcept nogil:
        return self.box[self.pairs[p].row]

    cdef void update(self, Py_ssize_t p, double delta) noexcept nogil:
        cdef const Pair* pair = &self.pairs[p]
        cdef Py_ssize_t i = pair.row, k = pair.relevant, l = pair.irrelevant, q
        cdef double coefficient
        self.rows.axpy(i, delta, &self.U[k, 0])
        self.rows.axpy(i, -delta, &self.U[l, 0])
        if self.diagonal:
            # R^-1_qk - R^-1_ql is R^-1_kk for q = k, -R^-1_ll for q = l and 0 elsewhere.
            self.rows.axpy(i, delta * self.R_inv[k, k], &self.W[k, 0])
            self.rows.axpy(i, -delta * self.R_inv[l, l], &self.W[l, 0])
            return
        for q in range(self.W.shape[0]):
            coefficient = self.R_inv[q, k] - self.R_inv[q, l]
            if coefficient != 0.0:
                self.rows.axpy(i, delta * coefficient, &self.W[q, 0])

    cdef double objective(self) noexcept nogil:
        # sum_{k,l} R^-1_kl u_k^T u_l = sum_l u_l^T w_l, as R^-1 is symmetric.
        cdef int dimension = <int> self.U.shape[1], one = 1
        cdef Py_ssize_t q, p
        cdef double total = 0.0
        if dimension > 0:
            for q in range(self.U.shape[0]):
                total += 0.5 * ddot(&dimension, &self.U[q, 0], &one, &self.W[q, 0], &one)
        for p in range(self.alpha.shape[0]):
            total -= self.alpha[p]
        return total


def _check_structure(Rows rows, pair_row, pair_k, pair_l, box, R_inv, alpha, U, W):
    """Refuse inconsistent arguments before any nogil code indexes with them."""
    n_pairs, n_labels = alpha.shape[0], R_inv.shape[0]
    if not (pair_row.shape[0] == pair_k.shape[0] == pair_l.shape[0] == n_pairs):
        raise ValueError(
            f"pair_row, pair_k, pair_l and alpha must have one length, got {pair_row.shape[0]}, "
            f"{pair_k.shape[0]}, {pair_l.shape[0]} and {n_pairs}"
        )
    if rows.dimension < 1:
        raise ValueError("the rows have no feature (dimension 0)")
    if R_inv.shape[1] != n_labels or n_labels < 2:
        raise ValueError(f"R_inv must be square with at least 2 labels, got shape {(R_inv.shape[0], R_inv.shape[1])}")
    for name, buffer in (("U", U), ("W", W)):
        if (buffer.shape[0], buffer.shape[1]) != (n_labels, rows.dimension):
            raise ValueError(
                f"{name} must have shape {(n_labels, rows.dimension)}, got {(buffer.shape[0], buffer.shape[1])}"
            )
    if box.shape[0] != rows.n_rows:
        raise ValueError(f"box has {box.shape[0]} entries but there are {rows.n_rows} rows")
    rows_of, k, l = np.asarray(pair_row), np.asarray(pair_k), np.asarray(pair_l)
    if n_pairs and (rows_of.min() < 0 or rows_of.max() >= rows.n_rows):
        raise ValueError(f"pair_row must lie in [0, {rows.n_rows})")
    if n_pairs and (min(k.min(), l.min()) < 0 or max(k.max(), l.max()) >= n_labels):
        raise ValueError(f"pair_k and pair_l must lie in [0, {n_labels})")
    if np.any(k == l):
        raise ValueError("a pair must join two different labels (k != l)")
    inverse, bounds, start = np.asarray(R_inv), np.asarray(box), np.asarray(alpha)
    if not np.all(np.isfinite(inverse)):
        raise ValueError("R_inv contains NaN or infinity")
    if np.abs(inverse - inverse.T).max() > SYMMETRY_RTOL * np.abs(inverse).max():
        raise ValueError("R_inv must be symmetric")
    S = np.diagonal(inverse)[k] + np.diagonal(inverse)[l] - 2.0 * inverse[k, l]
    if not np.all(S > 0.0):
        raise ValueError("S_kl = R^-1_kk + R^-1_ll - 2 R^-1_kl must be > 0 on every pair (R^-1 positive definite)")
    if not np.all(np.isfinite(bounds) & (bounds > 0.0)):
        raise ValueError("box must hold finite bounds > 0")
    if not np.all((start >= 0.0) & (start <= bounds[rows_of])):
        raise ValueError("alpha must lie in its box [0, C / (|y_i| |ybar_i|)] (and be a number)")
