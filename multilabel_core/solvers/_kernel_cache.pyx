# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Columns of the label-free kernel matrix K (n x n) for the SMO solver.

SMO needs two columns ``K[:, j]`` per step (the second-order working-set selection and
the gradient update, Zhang & Yeung, *Multi-Label Relationship Learning*, Appendix A,
eqs. 31 and 36), never the whole matrix at
once, and never the nm x nm matrix ``Omega~ (x) K``: one kernel column serves every
label.  :class:`KernelColumns` hands out pointers to such columns, from one of two
stores:

- a precomputed matrix (what fits the memory budget): K is symmetric, so column j is
  the contiguous row j and nothing is copied or computed;
- an LRU cache of ``capacity`` columns filled on demand by a Python callback
  ``compute(j, out)`` that writes ``K[:, j]`` into ``out``.  The callback runs with
  the GIL (kernels are Python objects computing blocks with BLAS); the bookkeeping
  (a hash-free slot table and a doubly linked recency list) runs without it.

A pointer returned by :meth:`column` stays valid until ``capacity`` other columns have
been fetched; the solver holds at most two at a time, so ``capacity >= 2`` suffices.
"""

import numpy as np

from libc.math cimport fabs, isfinite

# The core's one symmetry rule: asymmetry |K_ij - K_ji| up to SYMMETRY_RTOL * max |K| is round-off.
# (The matrix is checked here in tiles, without the copy multilabel_core.validation.check_symmetric makes.)
from multilabel_core.parallel import effective_threads, map_threads
from multilabel_core.validation import SYMMETRY_RTOL


#: Side of the square tiles in which the symmetry check compares K with its transpose.
cdef enum:
    TILE = 64


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline Py_ssize_t mlc_take_next(Py_ssize_t* counter) {
        return (Py_ssize_t)_InterlockedExchangeAdd64((volatile __int64*)counter, 1);
    }
    #else
    static inline Py_ssize_t mlc_take_next(Py_ssize_t* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    #endif
    """
    # The next unclaimed item of a counter shared by threads: one atomic add (the GCC/Clang builtin,
    # or MSVC's intrinsic on 64-bit Windows, where Py_ssize_t is __int64).
    Py_ssize_t take_next "mlc_take_next"(Py_ssize_t* counter) noexcept nogil


cdef void check_matrix(const double[:, ::1] K, Py_ssize_t* claimed, bint* finite, double* largest,
                       double* worst) noexcept nogil:
    """Finiteness, max |K_ij| and max |K_ij - K_ji|, tile by tile so that K^T is read cache-friendly.

    Covers the tile rows of the lower triangle that this thread claims from the shared counter
    ``claimed``, the longest (bottom) rows first: a thread that runs slower (a core just woken
    from idle starts at a fraction of its speed for some milliseconds) then takes fewer rows
    instead of holding the other back, as a fixed split of the rows between the threads did.
    The result does not depend on the schedule (maxima, and a sum of zeros).  Branch-free: a
    NaN or an infinity turns ``poison = sum 0 * K_ij`` into NaN.  Four independent sets of
    accumulators: with one, every entry waited for the last entry's add and max (their latency,
    not memory, bounded the pass; benchmarks/RESULTS.md, "Timings behind code comments").
    """
    cdef Py_ssize_t n = K.shape[0], tiles = (n + TILE - 1) // TILE, top, left, i, j, end
    cdef const double* row
    cdef double p0 = 0.0, p1 = 0.0, p2 = 0.0, p3 = 0.0
    cdef double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0
    cdef double w0 = 0.0, w1 = 0.0, w2 = 0.0, w3 = 0.0
    cdef double a0, a1, a2, a3, m0, m1, m2, m3
    while True:
        top = take_next(claimed)
        if top >= tiles:
            break
        top = (tiles - 1 - top) * TILE
        left = 0
        while left <= top:
            for i in range(top, min(top + TILE, n)):
                row = &K[i, 0]
                j = left
                end = min(left + TILE, i + 1)
                while j + 4 <= end:
                    a0, a1, a2, a3 = row[j], row[j + 1], row[j + 2], row[j + 3]
                    m0, m1, m2, m3 = K[j, i], K[j + 1, i], K[j + 2, i], K[j + 3, i]
                    p0 += 0.0 * a0 + 0.0 * m0
                    p1 += 0.0 * a1 + 0.0 * m1
                    p2 += 0.0 * a2 + 0.0 * m2
                    p3 += 0.0 * a3 + 0.0 * m3
                    l0, l1, l2, l3 = max(l0, fabs(a0)), max(l1, fabs(a1)), max(l2, fabs(a2)), max(l3, fabs(a3))
                    w0, w1 = max(w0, fabs(a0 - m0)), max(w1, fabs(a1 - m1))
                    w2, w3 = max(w2, fabs(a2 - m2)), max(w3, fabs(a3 - m3))
                    j += 4
                while j < end:
                    a0, m0 = row[j], K[j, i]
                    p0 += 0.0 * a0 + 0.0 * m0
                    l0 = max(l0, fabs(a0))
                    w0 = max(w0, fabs(a0 - m0))
                    j += 1
            left += TILE
    finite[0] = (p0 + p1) + (p2 + p3) == 0.0
    largest[0] = max(max(l0, l1), max(l2, l3))
    worst[0] = max(max(w0, w1), max(w2, w3))


def _check_share(const double[:, ::1] K, Py_ssize_t[::1] claimed):
    """(finite, largest |K_ij|, largest asymmetry) over the tile rows one thread claims (:func:`check_matrix`)."""
    cdef double largest = 0.0, worst = 0.0
    cdef bint finite = True
    with nogil:
        check_matrix(K, &claimed[0], &finite, &largest, &worst)
    return finite, largest, worst


cdef class KernelColumns:
    """Columns of K from a precomputed matrix or an LRU cache of computed columns.

    Parameters
    ----------
    matrix : float64 C-contiguous (n, n) array, optional
        The precomputed kernel (finite and symmetric).
    compute : callable ``(j, out) -> None``, optional
        Writes column j of K into the float64 array ``out`` of length n.  Needs
        ``diagonal`` and ``capacity``.
    diagonal : float64 (n,) array
        The values ``K[i, i]`` (only with ``compute``).
    capacity : int >= 2
        How many columns the cache holds (only with ``compute``).
    n_jobs : int or None, default 1
        Threads for the one-pass check of a precomputed matrix (finite, symmetric), as in
        :func:`multilabel_core.parallel.effective_threads`.

    Attributes
    ----------
    n_samples, capacity, precomputed, hits, misses
    """

    def __init__(self, matrix=None, *, compute=None, diagonal=None, Py_ssize_t capacity=2, n_jobs=1):
        if (matrix is None) == (compute is None):
            raise ValueError("give either a precomputed kernel matrix or a compute callback, not both")
        if matrix is not None:
            self._init_matrix(matrix, n_jobs)
        else:
            self._init_cache(compute, diagonal, capacity)

    def _init_matrix(self, const double[:, ::1] matrix, n_jobs):
        cdef Py_ssize_t n = matrix.shape[0]
        if n == 0 or matrix.shape[1] != n:
            raise ValueError(f"the kernel matrix must be square and non-empty, got shape {(matrix.shape[0], matrix.shape[1])}")
        # The check is a pass over the matrix: on its threads when the matrix is large enough to pay for them.
        threads = effective_threads(n_jobs, (n + TILE - 1) // TILE) if n >= 1024 else 1
        claimed = np.zeros(1, dtype=np.intp)
        shares = map_threads(lambda _: _check_share(matrix, claimed), range(threads), threads)
        finite = all(share[0] for share in shares)
        largest = max(share[1] for share in shares)
        worst = max(share[2] for share in shares)
        if not finite:
            raise ValueError("the kernel matrix contains NaN or infinity")
        if worst > SYMMETRY_RTOL * largest:
            raise ValueError(f"the kernel matrix must be symmetric (largest |K_ij - K_ji| = {worst:.3g})")
        self.n_samples = n
        self.capacity = n
        self.precomputed = True
        self.matrix = matrix
        self.diagonal = np.ascontiguousarray(np.diagonal(np.asarray(matrix)))

    def _init_cache(self, compute, diagonal, Py_ssize_t capacity):
        if not callable(compute):
            raise ValueError(f"compute must be callable, got {compute!r}")
        if diagonal is None:
            raise ValueError("a compute callback needs the kernel diagonal")
        cdef const double[::1] diag = diagonal
        cdef Py_ssize_t n = diag.shape[0]
        if n == 0:
            raise ValueError("the kernel diagonal is empty")
        if not np.all(np.isfinite(diag)):
            raise ValueError("the kernel diagonal contains NaN or infinity")
        if capacity < 2:
            raise ValueError(f"the column cache needs capacity >= 2, got {capacity}")
        capacity = min(capacity, n)
        self.n_samples = n
        self.capacity = capacity
        self.precomputed = False
        self.diagonal = diag
        self.compute = compute
        self.slot_array = np.empty((capacity, n))
        self.slots = self.slot_array
        self.slot_of = np.full(n, -1, dtype=np.intp)
        self.column_in = np.full(capacity, -1, dtype=np.intp)
        self.newer = np.full(capacity, -1, dtype=np.intp)
        self.older = np.full(capacity, -1, dtype=np.intp)
        self.newest = -1
        self.oldest = -1
        self.n_used = 0

    def precomputed_matrix(self):
        """The precomputed kernel matrix (a read-only view, no copy), or None for a column cache."""
        if not self.precomputed:
            return None
        view = np.asarray(self.matrix)
        view.flags.writeable = False
        return view

    def kernel_diagonal(self):
        """A copy of ``K[i, i]``, i = 0..n-1."""
        return np.array(self.diagonal)

    def get_column(self, Py_ssize_t j):
        """A copy of column j (for tests and Python callers; the solver uses the pointer)."""
        if not 0 <= j < self.n_samples:
            raise IndexError(f"column {j} out of range for {self.n_samples} samples")
        cdef const double* values = self.column(j)
        out = np.empty(self.n_samples)
        cdef double[::1] copy = out
        cdef Py_ssize_t i
        for i in range(self.n_samples):
            copy[i] = values[i]
        return out

    cdef const double* column(self, Py_ssize_t j) except NULL nogil:
        """Pointer to ``K[:, j]`` (n values); computes it on a cache miss."""
        cdef Py_ssize_t slot
        if self.precomputed:
            return &self.matrix[j, 0]
        slot = self.slot_of[j]
        if slot >= 0:
            self.hits += 1
            self._unlink(slot)
            self._push_newest(slot)
            return &self.slots[slot, 0]
        self.misses += 1
        if self.n_used < self.capacity:
            slot = self.n_used
        else:
            # Evict the oldest column before overwriting it, so that a callback that
            # fails half-way leaves an empty slot, never a slot holding a wrong column.
            slot = self.oldest
            if self.column_in[slot] >= 0:
                self.slot_of[self.column_in[slot]] = -1
                self.column_in[slot] = -1
        with gil:
            self.compute(j, self.slot_array[slot])
        if slot == self.n_used:
            self.n_used += 1
        else:
            self._unlink(slot)
        self.column_in[slot] = j
        self.slot_of[j] = slot
        self._push_newest(slot)
        return &self.slots[slot, 0]

    cdef void _unlink(self, Py_ssize_t slot) noexcept nogil:
        cdef Py_ssize_t before = self.older[slot], after = self.newer[slot]
        if before >= 0:
            self.newer[before] = after
        else:
            self.oldest = after
        if after >= 0:
            self.older[after] = before
        else:
            self.newest = before
        self.older[slot] = -1
        self.newer[slot] = -1

    cdef void _push_newest(self, Py_ssize_t slot) noexcept nogil:
        self.older[slot] = self.newest
        self.newer[slot] = -1
        if self.newest >= 0:
            self.newer[self.newest] = slot
        self.newest = slot
        if self.oldest < 0:
            self.oldest = slot
