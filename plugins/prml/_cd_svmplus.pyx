# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The duals of the low-rank multi-label problems as variants of the coordinate-descent engine.

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*: Algorithm 1 (the SVM+ dual with
privileged label features, eqs. 7 and 11) and the hinge dual of its low-rank baseline
(problem 2, Yu, Jain, Kar & Dhillon's LEML with the hinge loss).
Notation: rows x_j (j < n), labels i < L with signs y_ji, a fixed embedding a_i (column i
of A, k x L; A = I for the per-label problems, eq. 6, and A = the paper's W for the
dictionary problem, eq. 10), the learned matrix M (k x d: the per-label weights w_i as
rows, or D).  The margin of (j, i) is ``a_i^T M x_j``.

SVM+ (:class:`SVMPlusDual`).  Privileged features x~_ij = m_i o x~_j (x~_j a row of the
privileged matrix, m_i label i's 0/1 mask: eq. 3 takes x~_j = y_j and m_i = 1 - e_i) and
the correcting functions w~_i; the slack of (j, i) is ``w~_i^T x~_ij`` (eq. 4).  The dual
(eqs. 7 and 11) in minimisation form, over eta = (alpha, beta) >= 0 (no upper bound)::

    g(eta) = 1/2 ||M||_F^2 + gamma/2 sum_i ||w~_i||^2 - sum alpha_ji,
    M = sum_ji alpha_ji y_ji a_i x_j^T,   w~_i = 1/gamma sum_j (alpha_ji + beta_ji - C) x~_ij   (eqs. 8-9, 12-13)

Along one coordinate (Algorithm 1, lines 2, 8 and 13)::

    G(alpha_ji) = y_ji a_i^T M x_j + w~_i^T x~_ij - 1,   Q = ||a_i||^2 ||x_j||^2 + ||x~_ij||^2 / gamma
    G(beta_ji)  = w~_i^T x~_ij,                          Q = ||x~_ij||^2 / gamma

and a step delta moves M by ``delta y_ji a_i x_j^T`` (alpha only; line 10) and w~_i by
``delta / gamma x~_ij`` (both; line 16).

Hinge (:class:`EmbeddedHingeDual`).  The same margins with the hinge's slacks: alpha in
[0, C], ``g = 1/2 ||M||_F^2 - sum alpha``, ``G(alpha_ji) = y_ji a_i^T M x_j - 1`` and
``Q = ||a_i||^2 ||x_j||^2``.

Groups.  The coordinates are numbered example by example -- SVM+: alpha_ji is 2 (j L + i),
beta_ji the next one; hinge: alpha_ji is j L + i -- and each example is an engine group
(_cd.pxd).  Entering example j computes ``v = M x_j`` (k values, O(k nnz(x_j))); a margin
is then ``a_i^T v`` (O(k), O(1) for A = I), a step adds ``c a_i`` to a pending ``u`` and
``c ||x_j||^2 a_i`` to v (O(k)), and leaving applies ``M += u x_j^T`` once (O(k nnz(x_j))).
An epoch of the dictionary problem thus costs O(n k (nnz(x) + L)) where one step at a time
would cost O(n L k nnz(x)).  M is stored transposed, (dimension, k): entering and leaving read and
write one contiguous row of k values per stored entry of x_j (``Rows.gather``, ``Rows.scatter``),
where the (k, dimension) layout made them k gathers from k rows of M.
"""

import numpy as np

from libc.math cimport INFINITY, isfinite
from scipy.linalg.cython_blas cimport ddot

from multilabel_core.solvers.kit cimport DualCoordinates, Rows
from multilabel_core.solvers.kit import index_array


cdef class _EmbeddedMargins(DualCoordinates):
    """What both variants share: the margins ``a_i^T M x_j``, M, and the example groups.

    ``per_pair`` coordinates per (j, i) (2 for SVM+, 1 for the hinge); ``v``, ``u`` the
    entered example's ``M x_j`` and pending step (length k); ``current`` the entered
    example (-1: none, and a margin or step is computed from M directly).
    """
    cdef Rows rows
    cdef const double[:, ::1] y
    cdef const double[:, ::1] A
    cdef bint identity
    cdef double[:, ::1] M
    cdef double[::1] row_norms
    cdef double[::1] embedding_norms
    cdef double[::1] v
    cdef double[::1] u
    cdef Py_ssize_t current
    cdef Py_ssize_t n_labels
    cdef Py_ssize_t per_pair

    cdef void _set_margins(self, Rows rows, const double[:, ::1] y, const double[:, ::1] A, double[:, ::1] M,
                           double[::1] eta, Py_ssize_t per_pair) except *:
        self.rows, self.y, self.M, self.alpha = rows, y, M, eta
        self.identity = A is None
        if not self.identity:
            self.A = A
        self.n_labels, self.per_pair = y.shape[1], per_pair
        self.group_size = per_pair * y.shape[1]
        self.embedding_norms = np.ones(y.shape[1]) if self.identity else np.sum(np.square(A), axis=0)
        self.row_norms = np.empty(rows.n_rows)
        cdef Py_ssize_t j
        for j in range(rows.n_rows):
            self.row_norms[j] = rows.squared_norm(j)
        self.v = np.zeros(M.shape[1])
        self.u = np.zeros(M.shape[1])
        self.current = -1

    cdef inline Py_ssize_t _example(self, Py_ssize_t s) noexcept nogil:
        return s // self.group_size

    cdef inline Py_ssize_t _label(self, Py_ssize_t s) noexcept nogil:
        return (s % self.group_size) // self.per_pair

    cdef void enter_group(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t r
        for r in range(self.M.shape[1]):
            self.v[r] = 0.0
            self.u[r] = 0.0
        self.rows.gather(j, &self.M[0, 0], self.M.shape[1], &self.v[0])
        self.current = j

    cdef void leave_group(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t r
        cdef bint moved = False
        for r in range(self.M.shape[1]):
            moved = moved or self.u[r] != 0.0
        if moved:
            self.rows.scatter(j, 1.0, &self.u[0], self.M.shape[1], &self.M[0, 0])
            for r in range(self.M.shape[1]):
                self.u[r] = 0.0
        self.current = -1

    cdef double _column_dot(self, Py_ssize_t j, Py_ssize_t r) noexcept nogil:
        """``(M x_j)_r``: column r of the (dimension, k) layout, its bias row included."""
        cdef Py_ssize_t k = self.M.shape[1]
        cdef double total = self.rows._dot_strided(j, &self.M[0, r], k)
        return total + self.rows.bias * self.M[self.rows.n_columns, r] if self.rows.bias > 0.0 else total

    cdef void _column_axpy(self, Py_ssize_t j, double scale, Py_ssize_t r) noexcept nogil:
        """Column r of M += scale x_j (its bias row included)."""
        self.rows._axpy_strided(j, scale, &self.M[0, r], self.M.shape[1])
        if self.rows.bias > 0.0:
            self.M[self.rows.n_columns, r] += scale * self.rows.bias

    cdef double _margin(self, Py_ssize_t j, Py_ssize_t i) noexcept nogil:
        """``a_i^T M x_j``: from v inside example j's group, else from M."""
        cdef Py_ssize_t r
        cdef double margin = 0.0
        if j == self.current:
            if self.identity:
                return self.v[i]
            for r in range(self.A.shape[0]):
                margin += self.A[r, i] * self.v[r]
            return margin
        if self.identity:
            return self._column_dot(j, i)
        for r in range(self.A.shape[0]):
            if self.A[r, i] != 0.0:
                margin += self.A[r, i] * self._column_dot(j, r)
        return margin

    cdef void _step(self, Py_ssize_t j, Py_ssize_t i, double delta) noexcept nogil:
        """M += delta y_ji a_i x_j^T: deferred to leave_group inside example j's group."""
        cdef Py_ssize_t r
        cdef double c = delta * self.y[j, i], norm = self.row_norms[j]
        if j == self.current:
            if self.identity:
                self.u[i] += c
                self.v[i] += c * norm
            else:
                for r in range(self.A.shape[0]):
                    self.u[r] += c * self.A[r, i]
                    self.v[r] += c * norm * self.A[r, i]
            return
        if self.identity:
            self._column_axpy(j, c, i)
        else:
            for r in range(self.A.shape[0]):
                if self.A[r, i] != 0.0:
                    self._column_axpy(j, c * self.A[r, i], r)

    cdef void _refresh_margins(self) noexcept nogil:
        """M = sum_ji alpha_ji y_ji a_i x_j^T summed afresh, example by example."""
        cdef Py_ssize_t j, i
        self.M[:, :] = 0.0
        for j in range(self.rows.n_rows):
            self.current = j
            self.u[:] = 0.0
            for i in range(self.n_labels):
                self._step(j, i, self.alpha[(j * self.n_labels + i) * self.per_pair])
            self.leave_group(j)

    cdef double _alpha_curvature(self, Py_ssize_t j, Py_ssize_t i) noexcept nogil:
        return self.embedding_norms[i] * self.row_norms[j]

    cdef double _half_squared_M(self) noexcept nogil:
        cdef int size = <int> (self.M.shape[0] * self.M.shape[1]), one = 1
        return 0.5 * ddot(&size, &self.M[0, 0], &one, &self.M[0, 0], &one)

    cdef double _sum_alpha(self) noexcept nogil:
        cdef Py_ssize_t s = 0
        cdef double total = 0.0
        while s < self.alpha.shape[0]:
            total += self.alpha[s]
            s += self.per_pair
        return total


cdef class SVMPlusDual(_EmbeddedMargins):
    """The SVM+ dual of Algorithm 1 on ``rows`` (x_j) and ``privileged`` (x~_j).

    Arguments (all C-contiguous float64 unless said): ``y`` (n, L) signs; ``A`` (k, L)
    the embedding, or None for the identity (k = L); ``excluded_indptr``,
    ``excluded`` (np.intp) the columns each mask m_i removes, CSR-like by label (label
    i's are ``excluded[excluded_indptr[i]:excluded_indptr[i + 1]]``; copied); ``C``, ``gamma``
    > 0; ``eta`` (2 n L) the start >= 0 (alpha_ji at 2 (j L + i), beta_ji after it),
    updated in place; ``M`` (rows.dimension, k), the learned matrix stored transposed (an example's rows of
    it contiguous), and ``W_tilde`` (L, privileged.dimension)
    the caller's buffers, computed here from ``eta`` and kept up to date by every step.
    """
    cdef Rows privileged
    cdef const Py_ssize_t[::1] excluded_indptr
    cdef const Py_ssize_t[::1] excluded
    cdef double C
    cdef double gamma
    cdef double[:, ::1] W_tilde
    cdef double[:, ::1] privileged_norms

    def __init__(self, Rows rows not None, Rows privileged not None, const double[:, ::1] y not None,
                 const double[:, ::1] A, const Py_ssize_t[::1] excluded_indptr not None,
                 const Py_ssize_t[::1] excluded not None, double C, double gamma, double[::1] eta not None,
                 double[:, ::1] M not None, double[:, ::1] W_tilde not None):
        _check_margins(rows, y, A, M, eta, 2)
        _check_privileged(privileged, y, excluded_indptr, excluded, W_tilde)
        if not (isfinite(C) and C > 0.0 and isfinite(gamma) and gamma > 0.0):
            raise ValueError(f"C and gamma must be finite numbers > 0, got C={C!r}, gamma={gamma!r}")
        self._set_margins(rows, y, A, M, eta, 2)
        self.privileged = privileged
        # Private copies: the indices validated here must not change under the engine.
        self.excluded_indptr, self.excluded = (
            index_array(excluded_indptr, "excluded_indptr"), index_array(excluded, "excluded"))
        self.C, self.gamma, self.W_tilde = C, gamma, W_tilde
        self.privileged_norms = np.empty((y.shape[0], y.shape[1]))
        cdef double[::1] scratch = np.zeros(privileged.dimension)
        with nogil:
            self._set_norms(scratch)
            self.refresh()

    cdef void refresh(self) noexcept nogil:
        """M and w~ (eqs. 8-9, 12-13) summed afresh from eta (start: w~_i = -C/gamma sum_j x~_ij, line 3)."""
        cdef Py_ssize_t j, i, s
        self._refresh_margins()
        self.W_tilde[:, :] = 0.0
        for j in range(self.rows.n_rows):
            for i in range(self.n_labels):
                s = 2 * (j * self.n_labels + i)
                self._move_tilde(j, i, self.alpha[s] + self.alpha[s + 1] - self.C)

    cdef void _set_norms(self, double[::1] scratch) noexcept nogil:
        """||x~_ij||^2 = ||x~_j||^2 - sum over label i's excluded columns of x~_jt^2."""
        cdef Py_ssize_t j, i, e
        cdef double total
        for j in range(self.rows.n_rows):
            self.privileged.axpy(j, 1.0, &scratch[0])
            total = self.privileged.squared_norm(j)
            for i in range(self.n_labels):
                self.privileged_norms[j, i] = total
                for e in range(self.excluded_indptr[i], self.excluded_indptr[i + 1]):
                    self.privileged_norms[j, i] -= scratch[self.excluded[e]] * scratch[self.excluded[e]]
            self.privileged.axpy(j, -1.0, &scratch[0])

    cdef void _move_tilde(self, Py_ssize_t j, Py_ssize_t i, double step) noexcept nogil:
        """w~_i += step / gamma x~_ij."""
        cdef Py_ssize_t e
        if step == 0.0:
            return
        self.privileged.axpy(j, step / self.gamma, &self.W_tilde[i, 0])
        # w~_i stays zero on the columns m_i removes, so w~_i^T x~_j = w~_i^T (m_i o x~_j).
        for e in range(self.excluded_indptr[i], self.excluded_indptr[i + 1]):
            self.W_tilde[i, self.excluded[e]] = 0.0

    cdef double gradient(self, Py_ssize_t s) noexcept nogil:
        cdef Py_ssize_t j = self._example(s), i = self._label(s)
        cdef double slack = self.privileged.dot(j, &self.W_tilde[i, 0])
        if s % 2:
            return slack
        return self.y[j, i] * self._margin(j, i) + slack - 1.0

    cdef double curvature(self, Py_ssize_t s) noexcept nogil:
        cdef Py_ssize_t j = self._example(s), i = self._label(s)
        cdef double privileged_part = self.privileged_norms[j, i] / self.gamma
        if s % 2:
            return privileged_part
        return self._alpha_curvature(j, i) + privileged_part

    cdef double lower(self, Py_ssize_t s) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t s) noexcept nogil:
        return INFINITY

    cdef void update(self, Py_ssize_t s, double delta) noexcept nogil:
        cdef Py_ssize_t j = self._example(s), i = self._label(s)
        if s % 2 == 0:
            self._step(j, i, delta)
        self._move_tilde(j, i, delta)

    cdef double objective(self) noexcept nogil:
        cdef int size_W = <int> (self.W_tilde.shape[0] * self.W_tilde.shape[1]), one = 1
        return (self._half_squared_M() - self._sum_alpha()
                + 0.5 * self.gamma * ddot(&size_W, &self.W_tilde[0, 0], &one, &self.W_tilde[0, 0], &one))


cdef class EmbeddedHingeDual(_EmbeddedMargins):
    """The hinge dual of the low-rank problem (2): alpha_ji in [0, C] at j L + i.

    Arguments as :class:`SVMPlusDual` without the privileged part: ``rows``, ``y`` (n, L),
    ``A`` (k, L) or None, ``C`` > 0, ``eta`` (n L) the start in [0, C] (updated in place)
    and ``M`` (rows.dimension, k), the learned matrix stored transposed, the caller's buffer computed here from ``eta``.
    """
    cdef double C

    def __init__(self, Rows rows not None, const double[:, ::1] y not None, const double[:, ::1] A, double C,
                 double[::1] eta not None, double[:, ::1] M not None):
        _check_margins(rows, y, A, M, eta, 1)
        if not (isfinite(C) and C > 0.0):
            raise ValueError(f"C must be a finite number > 0, got {C!r}")
        if not np.all(np.asarray(eta) <= C):
            raise ValueError(f"eta must lie in the box [0, C = {C}]")
        self._set_margins(rows, y, A, M, eta, 1)
        self.C = C
        with nogil:
            self.refresh()

    cdef void refresh(self) noexcept nogil:
        self._refresh_margins()

    cdef double gradient(self, Py_ssize_t s) noexcept nogil:
        cdef Py_ssize_t j = self._example(s), i = self._label(s)
        return self.y[j, i] * self._margin(j, i) - 1.0

    cdef double curvature(self, Py_ssize_t s) noexcept nogil:
        return self._alpha_curvature(self._example(s), self._label(s))

    cdef double lower(self, Py_ssize_t s) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t s) noexcept nogil:
        return self.C

    cdef void update(self, Py_ssize_t s, double delta) noexcept nogil:
        self._step(self._example(s), self._label(s), delta)

    cdef double objective(self) noexcept nogil:
        return self._half_squared_M() - self._sum_alpha()


def _check_margins(Rows rows, y, A, M, eta, Py_ssize_t per_pair):
    """Refuse inconsistent margin arguments before any nogil code indexes with them."""
    n, n_labels = y.shape[0], y.shape[1]
    if n < 1 or n_labels < 1:
        raise ValueError(f"y must have at least one row and one label, got shape {(n, n_labels)}")
    if rows.n_rows != n:
        raise ValueError(f"y has {n} rows but X has {rows.n_rows}")
    if rows.dimension < 1:
        raise ValueError("X needs at least one feature")
    k = n_labels if A is None else A.shape[0]
    if A is not None:
        if A.shape[1] != n_labels or k < 1:
            raise ValueError(f"A must have shape (k >= 1, {n_labels}), got {(A.shape[0], A.shape[1])}")
        if not np.all(np.isfinite(np.asarray(A))):
            raise ValueError("A contains NaN or infinity")
    if (M.shape[0], M.shape[1]) != (rows.dimension, k):
        raise ValueError(f"M must have shape {(rows.dimension, k)} (stored transposed), got {(M.shape[0], M.shape[1])}")
    if eta.shape[0] != per_pair * n * n_labels:
        raise ValueError(f"eta must hold {per_pair} n L = {per_pair * n * n_labels} entries, got {eta.shape[0]}")
    signs = np.asarray(y)
    if not np.all((signs == 1.0) | (signs == -1.0)):
        raise ValueError("y must hold signs -1 and +1 only")
    if not np.all(np.asarray(eta) >= 0.0) or not np.all(np.isfinite(np.asarray(eta))):
        raise ValueError("eta must be finite and >= 0")


def _check_privileged(Rows privileged, y, excluded_indptr, excluded, W_tilde):
    n, n_labels = y.shape[0], y.shape[1]
    if privileged.n_rows != n:
        raise ValueError(f"y has {n} rows but X_priv has {privileged.n_rows}")
    if privileged.dimension < 1:
        raise ValueError("X_priv needs at least one feature")
    if (W_tilde.shape[0], W_tilde.shape[1]) != (n_labels, privileged.dimension):
        raise ValueError(
            f"W_tilde must have shape {(n_labels, privileged.dimension)}, got {(W_tilde.shape[0], W_tilde.shape[1])}"
        )
    offsets, columns = np.asarray(excluded_indptr), np.asarray(excluded)
    if (offsets.shape[0] != n_labels + 1 or offsets[0] != 0 or offsets[n_labels] != columns.shape[0]
            or np.any(np.diff(offsets) < 0)):
        raise ValueError(
            f"excluded_indptr must rise from 0 to len(excluded) = {columns.shape[0]} in {n_labels + 1} steps"
        )
    if columns.size and (columns.min() < 0 or columns.max() >= privileged.n_columns):
        raise ValueError(f"excluded columns must lie in [0, {privileged.n_columns})")
