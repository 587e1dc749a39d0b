# cython: language_level=3
"""The dual coordinate-descent engine: declarations other Cython modules cimport.

The engine minimises a box-constrained dual written in minimisation form::

    min_alpha  f(alpha)   subject to  lo_i <= alpha_i <= hi_i   (i = 0 .. n_coordinates - 1)

one coordinate at a time, LIBLINEAR-style (Hsieh et al., ICML 2008, Algorithm 3):
a random permutation of the active coordinates per epoch, shrinking with the
projected-gradient bounds of the previous epoch, the variant's face steps between epochs
when it offers them, and a stop when the projected gradients
of a full (unshrunk) pass all lie within [-tol, tol] and still do at the final alpha
(checked without steps; a start that already meets the rule takes no pass at all).
docs/solvers/cd.md explains it.

Writing a variant (a new dual) -- the extension point
------------------------------------------------------
Subclass :class:`DualCoordinates` in your own .pyx (``from multilabel_core.solvers._cd
cimport DualCoordinates``), give it the data it needs as typed memoryview attributes,
set ``self.alpha`` (a float64 C-contiguous vector of the dual variables, one entry per
coordinate) in ``__init__``, and override these methods -- all ``noexcept nogil``, so
they must not touch Python objects:

``gradient(i)``
    G_i = d f / d alpha_i at the current alpha, from the primal vectors the variant
    maintains (e.g. ``y_i w^T x_i - 1`` for the SVM dual with ``w = sum_j alpha_j y_j x_j``).
``curvature(i)``
    Q_ii = d^2 f / d alpha_i^2 (>= 0).  The step is the exact minimiser along the
    coordinate, ``clip(alpha_i - G_i / Q_ii, lo_i, hi_i)``; with Q_ii = 0 the coordinate
    moves to the bound that -G_i points to (an infinite one means f is unbounded below:
    the engine raises ValueError).
``lower(i)``, ``upper(i)``
    The box [lo_i, hi_i]; ``-INFINITY`` / ``INFINITY`` (libc.math) for no bound.
``update(i, delta)``
    Called after the engine has set ``alpha[i] += delta``: bring the maintained primal
    vectors up to date (e.g. ``w += delta y_i x_i``) so that the next ``gradient`` call is
    exact.
``objective()``
    f(alpha) itself, in O(size of the maintained vectors) where possible.  Only debug
    runs (a ``trace`` list) and certificates call it.
``refresh()`` (optional; the base does nothing)
    Recompute the maintained vectors from alpha from scratch, exactly as ``__init__``
    does (best: ``__init__`` calls it).  The engine calls it before its final check, so
    that the rounding the incremental updates accumulate never decides convergence, and
    a warm start from a returned alpha sees bit for bit the state that was verified.
``prefetch(i)`` (optional; the base does nothing)
    Ask for the memory that ``gradient(i)`` will read first and that only coordinate i
    owns (e.g. its entry in a table with one record per coordinate), with
    ``cd_prefetch(address)`` per cache line; it must not read that memory itself.  The
    engine calls it ``PREFETCH_DISTANCE`` visits before visiting i (and prefetches
    ``alpha[i]`` and its own per-coordinate state), so that a random visiting order over
    more coordinates than the caches hold does not wait on memory at every visit.

``face_step_cost()``, ``face_step()`` (optional; none offered by default)
    A variant that can take a second-order step on many coordinates at once (LinearSVMDual:
    a projected Newton step on the current face, docs/solvers/cd.md, "Hard problems")
    returns the price of one in full epochs from ``face_step_cost()`` (``INFINITY``: none
    offered), and from ``face_step()`` 1 after moving alpha and its maintained vectors so
    that f decreased, or 0 after leaving both as they were (-1 with an exception set).
    The engine calls it between epochs, outside any group, once the epochs since the last
    call have cost that price (``CDOptions.face_steps``), and restores the active set
    after a step that moved alpha.
``group_size``, ``enter_group(g)``, ``leave_group(g)`` (optional; no groups by default)
    A variant whose coordinates share work in groups of ``group_size`` consecutive ones
    (all the coordinates of one training example, say) sets ``group_size`` in
    ``__init__``.  The engine then visits the groups in a random order, and the active
    coordinates of each group one after another in a random order (a random order of
    the active set that keeps every group together), calling ``enter_group(g)`` before the first
    and ``leave_group(g)`` after the last: the variant may compute what the group's
    gradients share on entry and apply the group's deferred updates on leaving.  Every
    gradient and update the engine asks for (the final checks included) happens between
    the two calls, and ``refresh`` and ``objective`` outside any group.

The variant's ``__init__`` validates every input (shapes, dtypes through the memoryview
types, NaN, box) and brings the maintained vectors in line with the starting alpha, so
that a warm start is just an alpha given to the constructor.  Then, from Cython::

    cdef CDOptions options = CDOptions(tol=1e-3, max_iter=1000, shrinking=True, seed=seed)
    cdef CDStatistics statistics
    run_cd(problem, options, &statistics, None)            # with or without the GIL

or, from Python, :func:`multilabel_core.solvers._cd.solve_dual` (``solve_dual(problem,
tol=..., max_iter=..., shrinking=..., seed=..., record_dual=False) -> dict``), which
releases the GIL around the same call.  :func:`max_projected_gradient` gives the KKT
violation of any variant at its current alpha.

Rows (training features) for variants with linear features
----------------------------------------------------------
:class:`Rows` gives row-wise access to X, dense (:class:`DenseRows`) or CSR
(:class:`SparseRows`, never densified), optionally with LIBLINEAR's constant feature of
value ``bias`` appended (so a regularised intercept is the last entry of w).  A variant
keeps its weight vectors as raw ``double*`` of length ``rows.dimension``.
"""

from libc.stdint cimport uint64_t


# A hint that ``address`` will be read soon (GCC/Clang's __builtin_prefetch; nothing elsewhere):
# never faults, never changes a result.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define cd_prefetch(address) __builtin_prefetch(address)
    #else
    #define cd_prefetch(address) ((void) (address))
    #endif
    """
    void cd_prefetch(const void* address) noexcept nogil


cdef struct CDOptions:
    double tol              # stop when every projected gradient of a full pass is in [-tol, tol]
    Py_ssize_t max_iter     # most epochs (passes over the active set); reaching it: not converged
    bint shrinking          # drop coordinates stuck at a bound (LIBLINEAR's rule), restore before stopping
    uint64_t seed           # seed of this call's own random stream (splitmix64): no global state
    bint face_steps         # interleave the variant's face steps (if it offers them) with the epochs


cdef struct CDStatistics:
    Py_ssize_t n_epochs     # passes over the active set (0: the start was optimal)
    Py_ssize_t n_updates    # coordinate steps actually taken (|PG| > 0)
    Py_ssize_t n_visits     # visits that measured PG in the epochs (the epochs' work; shrinking events not included)
    Py_ssize_t n_shrunk     # times a coordinate was removed from the active set
    Py_ssize_t n_resets     # times the active set was restored to all coordinates before a final check
    Py_ssize_t min_active   # smallest active-set size seen
    double spread           # PGmax - PGmin of the last epoch
    Py_ssize_t n_face_steps # face steps that moved alpha (see DualCoordinates.face_step)
    bint converged          # every |PG_i| <= tol at the returned alpha, reached before max_iter


cdef class DualCoordinates:
    """A box-constrained dual: the state (``alpha``) and the methods the engine calls."""
    cdef double[::1] alpha
    # Coordinates per group (0 or 1: none).  Group g is the coordinates g * group_size ..
    # (g + 1) * group_size - 1; the engine then visits each group's active coordinates together
    # (groups in random order, a random order inside each) between enter_group and leave_group.
    cdef Py_ssize_t group_size

    cdef double gradient(self, Py_ssize_t i) noexcept nogil
    cdef double curvature(self, Py_ssize_t i) noexcept nogil
    cdef double lower(self, Py_ssize_t i) noexcept nogil
    cdef double upper(self, Py_ssize_t i) noexcept nogil
    cdef void update(self, Py_ssize_t i, double delta) noexcept nogil
    cdef double objective(self) noexcept nogil
    cdef void refresh(self) noexcept nogil
    cdef void prefetch(self, Py_ssize_t i) noexcept nogil
    cdef void enter_group(self, Py_ssize_t g) noexcept nogil
    cdef void leave_group(self, Py_ssize_t g) noexcept nogil
    cdef double face_step_cost(self) noexcept nogil
    cdef int face_step(self) except -1 nogil


# Minimise ``problem`` from its current alpha and fill ``statistics``.  Raises (returning
# -1) KeyboardInterrupt, or whatever a signal handler raises, when interrupted, and
# ValueError when a coordinate with Q_ii = 0 is unbounded.  ``trace``: None, or a list to
# which f(alpha) is appended after every epoch (debug mode).
cdef int run_cd(DualCoordinates problem, CDOptions options, CDStatistics* statistics, list trace) except -1 nogil

# The projected gradient of one coordinate: G inside the box, min(G, 0) at the lower
# bound, max(G, 0) at the upper bound.  Zero for every coordinate <=> alpha is optimal.
cdef double projected_gradient(double gradient, double value, double low, double high) noexcept nogil

# max_i |projected gradient_i| over all coordinates at the current alpha: the KKT violation.
cdef double max_projected_gradient(DualCoordinates problem) noexcept nogil


cdef class Rows:
    """Row access to X (n_rows x n_columns), plus an optional constant feature ``bias``."""
    cdef readonly Py_ssize_t n_rows
    cdef readonly Py_ssize_t n_columns      # d, the features of X
    cdef readonly Py_ssize_t dimension      # length of a weight vector: d, or d + 1 with the constant feature
    cdef readonly double bias               # value of the appended constant feature; 0 means none

    cdef double dot(self, Py_ssize_t i, const double* w) noexcept nogil         # w^T x_i
    cdef void axpy(self, Py_ssize_t i, double scale, double* w) noexcept nogil  # w += scale x_i
    cdef double squared_norm(self, Py_ssize_t i) noexcept nogil                 # ||x_i||^2
    cdef void add_squares(self, Py_ssize_t i, double* out) noexcept nogil       # out[j] += x_ij^2 (the bias's too)
    # H += sum over the listed rows of x_i x_i^T, in the lower triangle of H (column-major, dimension^2)
    cdef void add_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil
    cdef double gram_work(self) noexcept nogil                                  # add_gram's multiply-adds over all rows
    cdef double entries(self) noexcept nogil                                    # stored entries of all rows, the bias included
    cdef void _add_bias_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil
    cdef void _axpy_strided(self, Py_ssize_t i, double scale, double* out, Py_ssize_t stride) noexcept nogil
    cdef double _dot_strided(self, Py_ssize_t i, const double* w, Py_ssize_t stride) noexcept nogil  # without the bias
    # With a matrix T of `dimension` rows and k columns (C order): out[:k] += x_i^T T, and T += scale x_i u^T.
    cdef void gather(self, Py_ssize_t i, const double* T, Py_ssize_t k, double* out) noexcept nogil
    cdef void scatter(self, Py_ssize_t i, double scale, const double* u, Py_ssize_t k, double* T) noexcept nogil
    cdef void _set_shape(self, Py_ssize_t n_rows, Py_ssize_t n_columns, double bias) except *


cdef class DenseRows(Rows):
    cdef const double[:, ::1] X


cdef class SparseRows(Rows):
    cdef const double[::1] data
    cdef const int[::1] indices       # 32-bit: a quarter less memory traffic per stored entry than np.intp
    cdef const Py_ssize_t[::1] indptr
    cdef readonly bint unit           # every stored value is 1 (word-presence features): dot and axpy skip them


# Ctrl-C, or the cancellation of the label-thread pool running this solve (every engine checks it).
cdef int check_interrupt() except -1
