# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The SVM+ dual with privileged features as a variant of the coordinate-descent engine.

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, Algorithm 1.
Notation: rows x_j (j < n), labels i < L with signs y_ji, privileged features
x~_ij = m_i o x~_j (x~_j a row of the privileged matrix, m_i label i's 0/1 mask: eq. 3
takes x~_j = y_j and m_i = 1 - e_i), a fixed embedding a_i (column i of A, k x L; A = I
for the per-label problem, eq. 6, and A = the paper's W for the dictionary problem,
eq. 10), the learned matrix M (k x d: the per-label weights w_i as rows, or D) and the
correcting functions w~_i.  The margin of (j, i) is ``a_i^T M x_j`` and its slack
``w~_i^T x~_ij`` (eq. 4).  The dual (eqs. 7 and 11) in minimisation form, over
eta = [alpha; beta] >= 0 (no upper bound)::

    g(eta) = 1/2 ||M||_F^2 + gamma/2 sum_i ||w~_i||^2 - sum alpha_ji,
    M = sum_ji alpha_ji y_ji a_i x_j^T,   w~_i = 1/gamma sum_j (alpha_ji + beta_ji - C) x~_ij   (eqs. 8-9, 12-13)

Along one coordinate (Algorithm 1, lines 2, 8 and 13)::

    G(alpha_ji) = y_ji a_i^T M x_j + w~_i^T x~_ij - 1,   Q = ||a_i||^2 ||x_j||^2 + ||x~_ij||^2 / gamma
    G(beta_ji)  = w~_i^T x~_ij,                          Q = ||x~_ij||^2 / gamma

and a step delta moves M by ``delta y_ji a_i x_j^T`` (alpha only; line 10) and w~_i by
``delta / gamma x~_ij`` (both; line 16).  Coordinates are numbered alpha first, then
beta, each (n, L) in C order: alpha_ji is coordinate j L + i, beta_ji is n L + j L + i.
"""

import numpy as np

from libc.math cimport INFINITY, isfinite
from scipy.linalg.cython_blas cimport ddot

from multilabel_core.solvers._cd cimport DualCoordinates, Rows
from multilabel_core.solvers._cd import _index_array


cdef class SVMPlusDual(DualCoordinates):
    """The SVM+ dual of Algorithm 1 on ``rows`` (x_j) and ``privileged`` (x~_j).

    Arguments (all C-contiguous float64 unless said): ``y`` (n, L) signs; ``A`` (k, L)
    the embedding, or None for the identity (k = L); ``excluded_indptr``,
    ``excluded`` (np.intp) the columns each mask m_i removes, CSR-like by label (label
    i's are ``excluded[excluded_indptr[i]:excluded_indptr[i + 1]]``; copied); ``C``, ``gamma``
    > 0; ``eta`` (2 n L) the start [alpha; beta] >= 0, updated in place; ``M`` (k,
    rows.dimension) and ``W_tilde`` (L, privileged.dimension) the caller's buffers,
    computed here from ``eta`` and kept up to date by every step.
    """
    cdef Rows rows
    cdef Rows privileged
    cdef const double[:, ::1] y
    cdef const double[:, ::1] A
    cdef bint identity
    cdef const Py_ssize_t[::1] excluded_indptr
    cdef const Py_ssize_t[::1] excluded
    cdef double C
    cdef double gamma
    cdef double[:, ::1] M
    cdef double[:, ::1] W_tilde
    cdef double[::1] row_norms
    cdef double[::1] embedding_norms
    cdef double[:, ::1] privileged_norms
    cdef Py_ssize_t n_alpha

    def __init__(self, Rows rows not None, Rows privileged not None, const double[:, ::1] y not None,
                 const double[:, ::1] A, const Py_ssize_t[::1] excluded_indptr not None,
                 const Py_ssize_t[::1] excluded not None, double C, double gamma, double[::1] eta not None,
                 double[:, ::1] M not None, double[:, ::1] W_tilde not None):
        _check_structure(rows, privileged, y, A, excluded_indptr, excluded, C, gamma, eta, M, W_tilde)
        self.rows, self.privileged, self.y = rows, privileged, y
        self.identity = A is None
        if not self.identity:
            self.A = A
        # Private copies: the indices validated here must not change under the engine.
        self.excluded_indptr, self.excluded = (
            _index_array(excluded_indptr, "excluded_indptr"), _index_array(excluded, "excluded"))
        self.C, self.gamma = C, gamma
        self.alpha, self.M, self.W_tilde = eta, M, W_tilde
        self.n_alpha = y.shape[0] * y.shape[1]
        self.embedding_norms = np.ones(y.shape[1]) if self.identity else np.sum(np.square(A), axis=0)
        self.row_norms = np.empty(rows.n_rows)
        self.privileged_norms = np.empty((y.shape[0], y.shape[1]))
        cdef double[::1] scratch = np.zeros(privileged.dimension)
        with nogil:
            self._set_norms(scratch)
            self.refresh()

    cdef void refresh(self) noexcept nogil:
        """M and w~ (eqs. 8-9, 12-13) summed afresh from eta."""
        cdef Py_ssize_t s
        self.M[:, :] = 0.0
        self.W_tilde[:, :] = 0.0
        for s in range(self.alpha.shape[0]):
            self._move(s, self.alpha[s] - (self.C if s >= self.n_alpha else 0.0))

    cdef void _set_norms(self, double[::1] scratch) noexcept nogil:
        """||x_j||^2 and ||x~_ij||^2 = ||x~_j||^2 - sum over label i's excluded columns of x~_jt^2."""
        cdef Py_ssize_t j, i, e
        cdef double total
        for j in range(self.rows.n_rows):
            self.row_norms[j] = self.rows.squared_norm(j)
            self.privileged.axpy(j, 1.0, &scratch[0])
            total = self.privileged.squared_norm(j)
            for i in range(self.y.shape[1]):
                self.privileged_norms[j, i] = total
                for e in range(self.excluded_indptr[i], self.excluded_indptr[i + 1]):
                    self.privileged_norms[j, i] -= scratch[self.excluded[e]] * scratch[self.excluded[e]]
            self.privileged.axpy(j, -1.0, &scratch[0])

    cdef void _move(self, Py_ssize_t s, double step) noexcept nogil:
        """Add ``step`` times coordinate s's column to the maintained vectors.

        The alpha part of the starting state takes ``step = alpha``; the beta part takes
        ``step = beta - C`` so that the constant ``-C x~_ij`` of w~_i (Algorithm 1, line 3)
        is added once per (j, i).
        """
        cdef Py_ssize_t t = s % self.n_alpha, j = t // self.y.shape[1], i = t % self.y.shape[1], r, e
        if step == 0.0:
            return
        if s < self.n_alpha:
            if self.identity:
                self.rows.axpy(j, step * self.y[j, i], &self.M[i, 0])
            else:
                for r in range(self.A.shape[0]):
                    if self.A[r, i] != 0.0:
                        self.rows.axpy(j, step * self.y[j, i] * self.A[r, i], &self.M[r, 0])
        self.privileged.axpy(j, step / self.gamma, &self.W_tilde[i, 0])
        # w~_i stays zero on the columns m_i removes, so w~_i^T x~_j = w~_i^T (m_i o x~_j).
        for e in range(self.excluded_indptr[i], self.excluded_indptr[i + 1]):
            self.W_tilde[i, self.excluded[e]] = 0.0

    cdef double gradient(self, Py_ssize_t s) noexcept nogil:
        cdef Py_ssize_t t = s % self.n_alpha, j = t // self.y.shape[1], i = t % self.y.shape[1], r
        cdef double slack = self.privileged.dot(j, &self.W_tilde[i, 0]), margin = 0.0
        if s >= self.n_alpha:
            return slack
        if self.identity:
            margin = self.rows.dot(j, &self.M[i, 0])
        else:
            for r in range(self.A.shape[0]):
                if self.A[r, i] != 0.0:
                    margin += self.A[r, i] * self.rows.dot(j, &self.M[r, 0])
        return self.y[j, i] * margin + slack - 1.0

    cdef double curvature(self, Py_ssize_t s) noexcept nogil:
        cdef Py_ssize_t t = s % self.n_alpha, j = t // self.y.shape[1], i = t % self.y.shape[1]
        cdef double privileged_part = self.privileged_norms[j, i] / self.gamma
        if s >= self.n_alpha:
            return privileged_part
        return self.embedding_norms[i] * self.row_norms[j] + privileged_part

    cdef double lower(self, Py_ssize_t s) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t s) noexcept nogil:
        return INFINITY

    cdef void update(self, Py_ssize_t s, double delta) noexcept nogil:
        self._move(s, delta)

    cdef double objective(self) noexcept nogil:
        cdef int size_M = <int> (self.M.shape[0] * self.M.shape[1])
        cdef int size_W = <int> (self.W_tilde.shape[0] * self.W_tilde.shape[1]), one = 1
        cdef Py_ssize_t s
        cdef double total = 0.5 * ddot(&size_M, &self.M[0, 0], &one, &self.M[0, 0], &one)
        total += 0.5 * self.gamma * ddot(&size_W, &self.W_tilde[0, 0], &one, &self.W_tilde[0, 0], &one)
        for s in range(self.n_alpha):
            total -= self.alpha[s]
        return total


def _check_structure(Rows rows, Rows privileged, y, A, excluded_indptr, excluded, double C, double gamma, eta, M,
                     W_tilde):
    """Refuse inconsistent arguments before any nogil code indexes with them."""
    n, n_labels = y.shape[0], y.shape[1]
    if n < 1 or n_labels < 1:
        raise ValueError(f"y must have at least one row and one label, got shape {(n, n_labels)}")
    if rows.n_rows != n or privileged.n_rows != n:
        raise ValueError(f"y has {n} rows but X has {rows.n_rows} and X_priv {privileged.n_rows}")
    if rows.dimension < 1 or privileged.dimension < 1:
        raise ValueError("X and X_priv need at least one feature each")
    k = n_labels if A is None else A.shape[0]
    if A is not None:
        if A.shape[1] != n_labels or k < 1:
            raise ValueError(f"A must have shape (k >= 1, {n_labels}), got {(A.shape[0], A.shape[1])}")
        if not np.all(np.isfinite(np.asarray(A))):
            raise ValueError("A contains NaN or infinity")
    for name, buffer, shape in (("M", M, (k, rows.dimension)), ("W_tilde", W_tilde, (n_labels, privileged.dimension))):
        if (buffer.shape[0], buffer.shape[1]) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {(buffer.shape[0], buffer.shape[1])}")
    if eta.shape[0] != 2 * n * n_labels:
        raise ValueError(f"eta must hold 2 n L = {2 * n * n_labels} entries, got {eta.shape[0]}")
    signs = np.asarray(y)
    if not np.all((signs == 1.0) | (signs == -1.0)):
        raise ValueError("y must hold signs -1 and +1 only")
    offsets, columns = np.asarray(excluded_indptr), np.asarray(excluded)
    if (offsets.shape[0] != n_labels + 1 or offsets[0] != 0 or offsets[n_labels] != columns.shape[0]
            or np.any(np.diff(offsets) < 0)):
        raise ValueError(
            f"excluded_indptr must rise from 0 to len(excluded) = {columns.shape[0]} in {n_labels + 1} steps"
        )
    if columns.size and (columns.min() < 0 or columns.max() >= privileged.n_columns):
        raise ValueError(f"excluded columns must lie in [0, {privileged.n_columns})")
    if not (isfinite(C) and C > 0.0 and isfinite(gamma) and gamma > 0.0):
        raise ValueError(f"C and gamma must be finite numbers > 0, got C={C!r}, gamma={gamma!r}")
    if not np.all(np.asarray(eta) >= 0.0) or not np.all(np.isfinite(np.asarray(eta))):
        raise ValueError("eta must be finite and >= 0")
