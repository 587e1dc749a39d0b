# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One dual coordinate-descent engine and its SVM variants (declarations: _cd.pxd).

Notation (Hsieh, Chang, Lin, Keerthi & Sundararajan, *A dual coordinate descent method
for large-scale linear SVM*, ICML 2008 -- LIBLINEAR's dual solver): a dual in
minimisation form ``f(alpha)`` over a box ``lo <= alpha <= hi``; G_i = d f / d alpha_i
its gradient, Q_ii its curvature along coordinate i, and the projected gradient

    PG_i = G_i inside the box,  min(G_i, 0) at alpha_i = lo_i,  max(G_i, 0) at alpha_i = hi_i,

which vanishes for every i exactly at a minimiser.  :func:`run_cd` is the engine;
:class:`LinearSVMDual` and :class:`BoxKernelDual` are the variants of this module (the
latter: Zhang et al., Multi-Kernel Multi-Label Learning with Max-Margin Concept Network,
eq. 8); other modules add theirs by subclassing
:class:`DualCoordinates` (see _cd.pxd and docs/solvers/cd.md).
"""

import numpy as np

from multilabel_core.parallel import raise_if_cancelled
from multilabel_core.validation import SYMMETRY_RTOL

cimport cython
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, NAN, fabs, fmax, fmin, isfinite, sqrt
from libc.stdint cimport INT32_MAX, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport daxpy, ddot, dger, dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs


cdef int check_interrupt() except -1:
    """Ctrl-C (in the main thread), or on a label thread of ``map_threads`` its pool's cancellation.

    A worker thread never sees the signal: the main thread gets it, cancels the pool, and
    each running label stops at its next check instead of finishing its solve.
    """
    PyErr_CheckSignals()
    raise_if_cancelled()

#: Coordinate visits between two checks for Ctrl-C (a check takes the GIL briefly).
cdef Py_ssize_t SIGNAL_CHECK_INTERVAL = 1 << 14
#: LIBLINEAR leaves a coordinate alone when |PG| is below this: the step would be round-off.
cdef double NEGLIGIBLE_PG = 1e-12
#: Visits between a coordinate's prefetch and its visit: enough to cover a memory access.
cdef Py_ssize_t PREFETCH_DISTANCE = 16
#: Largest weight dimension for which LinearSVMDual offers face steps: their system is dimension^2
#: doubles (32 MiB here), and beyond it one step costs more epochs than it could save.
cdef Py_ssize_t MAX_FACE_DIMENSION = 2048
#: Halvings of the face step before it is given up (the step is then 2^-30 of the Newton step).
cdef int MAX_FACE_HALVINGS = 30
#: Armijo's fraction: a face step must decrease f by this share of the decrease its slope promises.
cdef double FACE_SUFFICIENT_DECREASE = 1e-4
#: The face step's matrix-free route (LinearSVMDual._solve_face_cg): preconditioned conjugate
#: gradients stop once the residual is this share of the starting one (the face's gradient in w) ...
#: (0.1 and 0.01 gave steps so rough that they came 5-50 times as often for less; docs/solvers/cd.md,
#: "Hard problems", and benchmarks/RESULTS.md, "Timings behind code comments")
cdef double FACE_CG_RELATIVE_RESIDUAL = 1e-3
#: ... or after this many iterations (each one a product with the face's Gram matrix: two passes
#: over the free rows).  A problem takes the CG route when even this many cost less than the factor.
#: At 100 the solves on enron and bibtex (C = 10) mostly stopped at the cap, short of the
#: residual, and their rougher steps left more epochs; 300 also sends rcv1subset1 (d = 500) to
#: the factor, which is cheaper there.  1000 would send enron to the factor too (d = 1001), which
#: is slower there (benchmarks/RESULTS.md, "Timings behind code comments").
cdef Py_ssize_t FACE_CG_MAX_ITERATIONS = 300
#: What the first CG solve is priced at, in iterations (later ones: what the last one took).
cdef double FACE_CG_FIRST_ITERATIONS = 30.0
#: An epoch's bookkeeping per visit (the permutation, the branches, the calls), in multiply-adds:
#: what prices a face step in epochs (LinearSVMDual.face_step_cost).
cdef double VISIT_OVERHEAD = 20.0


# -- the random stream ------------------------------------------------------------------


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    """Next value of Steele, Lea & Flood's SplitMix64 stream (state owned by the caller)."""
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline Py_ssize_t below(uint64_t random, Py_ssize_t bound) noexcept nogil:
    """``random`` mapped to [0, bound) by Lemire's multiply-shift: no 64-bit division in the loop.

    Its bias is below bound / 2^32; bounds beyond 2^32 fall back to the modulo.
    """
    if <uint64_t> bound < 0x100000000ULL:
        return <Py_ssize_t>(((random >> 32) * <uint64_t>bound) >> 32)
    return <Py_ssize_t>(random % <uint64_t>bound)


cdef inline void shuffle(Py_ssize_t* index, Py_ssize_t size, uint64_t* state) noexcept nogil:
    """Fisher--Yates permutation of index[0:size]."""
    cdef Py_ssize_t s, j, swap
    for s in range(size - 1):
        j = s + below(splitmix64(state), size - s)
        swap = index[s]
        index[s] = index[j]
        index[j] = swap


# libm's fmin/fmax are calls through the PLT here; the engine's inner loop compares inline.
cdef inline double smaller(double a, double b) noexcept nogil:
    return a if a < b else b


cdef inline double larger(double a, double b) noexcept nogil:
    return a if a > b else b


# -- the engine -------------------------------------------------------------------------


cdef double projected_gradient(double gradient, double value, double low, double high) noexcept nogil:
    if value <= low:
        return smaller(gradient, 0.0)
    if value >= high:
        return larger(gradient, 0.0)
    return gradient


cdef inline void enter(DualCoordinates problem, Py_ssize_t* current, Py_ssize_t i) noexcept nogil:
    """Make coordinate i's group the entered one (groups only; ``current`` is -1 outside any)."""
    cdef Py_ssize_t group
    if problem.group_size > 1:
        group = i // problem.group_size
        if group != current[0]:
            if current[0] >= 0:
                problem.leave_group(current[0])
            problem.enter_group(group)
            current[0] = group


cdef inline void leave(DualCoordinates problem, Py_ssize_t* current) noexcept nogil:
    if current[0] >= 0:
        problem.leave_group(current[0])
        current[0] = -1


cdef double max_projected_gradient(DualCoordinates problem) noexcept nogil:
    cdef Py_ssize_t i, current = -1
    cdef double violation = 0.0
    for i in range(problem.alpha.shape[0]):
        enter(problem, &current, i)
        violation = fmax(violation, fabs(projected_gradient(
            problem.gradient(i), problem.alpha[i], problem.lower(i), problem.upper(i))))
    leave(problem, &current)
    return violation


cdef bint within_tolerance(DualCoordinates problem, double tol) noexcept nogil:
    """Whether every |PG_i| <= tol at the current alpha; stops at the first violation (O(1) from alpha = 0)."""
    cdef Py_ssize_t i, current = -1
    for i in range(problem.alpha.shape[0]):
        enter(problem, &current, i)
        if fabs(projected_gradient(problem.gradient(i), problem.alpha[i], problem.lower(i), problem.upper(i))) > tol:
            leave(problem, &current)
            return False
    leave(problem, &current)
    return True


cdef double coordinate_minimiser(double value, double gradient, double curvature,
                                 double low, double high) noexcept nogil:
    """argmin of f along the coordinate, in the box: a Newton step, exact for a quadratic.

    With no curvature f is linear along it, so the minimiser is the bound -G points to
    (infinite when that bound is: the caller reports f unbounded).
    """
    if curvature > 0.0:
        return smaller(larger(value - gradient / curvature, low), high)
    return high if gradient < 0.0 else low


cdef struct Coordinate:
    # What the engine reads once per solve (the variants' constants), LIBLINEAR's QD and box.
    double curvature
    double low
    double high


cdef struct Pass:
    # One epoch's projected-gradient extremes, and the shrinking thresholds it uses.
    double pg_max
    double pg_min
    double shrink_above     # shrink a coordinate at its lower bound with G above this
    double shrink_below     # ... at its upper bound with G below this
    Py_ssize_t visits       # coordinates visited so far in the solve (paces the Ctrl-C checks)


cdef struct Groups:
    # The engine's buffers for a variant with groups (module _cd.pxd, ``group_size``).
    Py_ssize_t size         # coordinates per group
    Py_ssize_t count        # number of groups
    Py_ssize_t* rank        # a random permutation of the groups: group g is visited rank[g]-th
    Py_ssize_t* starts      # count + 1 offsets of the counting sort
    Py_ssize_t* scratch     # one entry per coordinate: the sort's output, then the shrunk ones


cdef void group_order(Py_ssize_t* index, Py_ssize_t active, Groups* groups, uint64_t* state) noexcept nogil:
    """Reorder index[0:active] (already shuffled) so that each group is contiguous, groups in random order.

    A stable counting sort on a random rank per group: O(active + groups), and the random
    order inside each group is the shuffle's.
    """
    cdef Py_ssize_t g, s, r
    for g in range(groups.count):
        groups.rank[g] = g
        groups.starts[g] = 0
    groups.starts[groups.count] = 0
    shuffle(groups.rank, groups.count, state)
    for s in range(active):
        groups.starts[groups.rank[index[s] // groups.size] + 1] += 1
    for g in range(groups.count):
        groups.starts[g + 1] += groups.starts[g]
    for s in range(active):
        r = groups.rank[index[s] // groups.size]
        groups.scratch[groups.starts[r]] = index[s]
        groups.starts[r] += 1
    for s in range(active):
        index[s] = groups.scratch[s]


cdef int one_epoch(DualCoordinates problem, const Coordinate* coordinates, Py_ssize_t* index, Py_ssize_t* active,
                   Pass* progress, CDOptions* options, CDStatistics* statistics, uint64_t* state,
                   Groups* groups) except -1 nogil:
    """A pass over index[0:active] in random order: shrink, measure PG, take the coordinate steps.

    The order is random, so the hardware cannot guess the next coordinate's memory: the
    coordinate PREFETCH_DISTANCE visits ahead is prefetched (its Coordinate, alpha and
    the variant's own data), which keeps the time per visit flat once the per-coordinate
    state outgrows the caches.  With groups (``groups`` not NULL) each group's coordinates
    are visited together, and a shrunk coordinate is set aside until the end of the pass
    (moving another into its place would split that one's group).
    """
    cdef Py_ssize_t s = 0, i, ahead, kept = 0, set_aside = 0, current = -1
    cdef double G, PG, value, target
    cdef const Coordinate* c
    shuffle(index, active[0], state)
    if groups != NULL:
        group_order(index, active[0], groups, state)
    progress.pg_max = -INFINITY
    progress.pg_min = INFINITY
    while s < active[0]:
        if groups == NULL and s + PREFETCH_DISTANCE < active[0]:
            ahead = index[s + PREFETCH_DISTANCE]
            cd_prefetch(&coordinates[ahead])
            cd_prefetch(&problem.alpha[ahead])
            problem.prefetch(ahead)
        i = index[s]
        c = &coordinates[i]
        if groups != NULL:
            enter(problem, &current, i)
        G = problem.gradient(i)
        value = problem.alpha[i]
        # LIBLINEAR's shrinking: a coordinate at a bound whose gradient pushes it further
        # out than any violation of the last epoch will stay there.
        if options.shrinking and ((value <= c.low and G > progress.shrink_above)
                                  or (value >= c.high and G < progress.shrink_below)):
            statistics.n_shrunk += 1
            if groups != NULL:
                groups.scratch[set_aside] = i
                set_aside += 1
                s += 1
                continue
            active[0] -= 1
            index[s] = index[active[0]]
            index[active[0]] = i
            continue
        PG = projected_gradient(G, value, c.low, c.high)
        progress.pg_max = larger(progress.pg_max, PG)
        progress.pg_min = smaller(progress.pg_min, PG)
        if fabs(PG) > NEGLIGIBLE_PG:
            target = coordinate_minimiser(value, G, c.curvature, c.low, c.high)
            if not isfinite(target):
                with gil:
                    raise ValueError(
                        f"the dual is unbounded below along coordinate {i} (zero curvature, gradient {G:.3g}, "
                        "infinite bound): the primal is infeasible"
                    )
            problem.alpha[i] = target
            problem.update(i, target - value)
            statistics.n_updates += 1
        if groups != NULL:
            index[kept] = i
            kept += 1
        s += 1
        progress.visits += 1
        if progress.visits % SIGNAL_CHECK_INTERVAL == 0:
            with gil:
                check_interrupt()
    if groups != NULL:
        leave(problem, &current)
        # The kept ones first, the shrunk ones of this pass after them (before the older ones).
        for s in range(set_aside):
            index[kept + s] = groups.scratch[s]
        active[0] = kept
    return 0


cdef int run_cd(DualCoordinates problem, CDOptions options, CDStatistics* statistics, list trace) except -1 nogil:
    cdef Py_ssize_t n = problem.alpha.shape[0], active = n, i, epoch
    cdef Py_ssize_t* index = <Py_ssize_t*> malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Coordinate* coordinates = <Coordinate*> malloc(max(n, 1) * sizeof(Coordinate))
    cdef Groups groups_buffer = Groups(size=problem.group_size, count=0, rank=NULL, starts=NULL, scratch=NULL)
    cdef Groups* groups = NULL
    cdef uint64_t state = options.seed
    cdef double value
    # A face step is taken once the epochs since the last one have cost as much as it does: on a
    # problem the epochs solve quickly it never comes, and it never takes more than half the time.
    cdef double face_cost = problem.face_step_cost() if options.face_steps else INFINITY
    cdef double work = 0.0
    cdef Py_ssize_t visits_before
    cdef int moved
    # Shrinking thresholds start at +-inf: the first pass shrinks nothing.
    cdef Pass progress = Pass(pg_max=NAN, pg_min=NAN, shrink_above=INFINITY, shrink_below=-INFINITY, visits=0)
    statistics[0] = CDStatistics(n_epochs=0, n_updates=0, n_visits=0, n_shrunk=0, n_resets=0, min_active=n,
                                 spread=NAN, n_face_steps=0, converged=False)
    if problem.group_size > 1:
        groups = &groups_buffer
        groups.count = (n + groups.size - 1) // groups.size
        groups.rank = <Py_ssize_t*> malloc(max(groups.count, 1) * sizeof(Py_ssize_t))
        groups.starts = <Py_ssize_t*> malloc((groups.count + 1) * sizeof(Py_ssize_t))
        groups.scratch = <Py_ssize_t*> malloc(max(n, 1) * sizeof(Py_ssize_t))
    try:
        if index == NULL or coordinates == NULL or (groups != NULL and (
                groups.rank == NULL or groups.starts == NULL or groups.scratch == NULL)):
            with gil:
                raise MemoryError(f"cannot allocate the engine's state for {n} coordinates")
        for i in range(n):
            index[i] = i
            coordinates[i] = Coordinate(curvature=problem.curvature(i), low=problem.lower(i), high=problem.upper(i))
        # A start that is already optimal (a warm start at the optimum) needs no pass.
        statistics.converged = within_tolerance(problem, options.tol)
        for epoch in range(0 if statistics.converged else options.max_iter):
            visits_before = progress.visits
            one_epoch(problem, coordinates, index, &active, &progress, &options, statistics, &state, groups)
            work += <double> (progress.visits - visits_before) / <double> max(n, 1)
            statistics.n_epochs = epoch + 1
            statistics.n_visits = progress.visits
            statistics.min_active = min(statistics.min_active, active)
            statistics.spread = progress.pg_max - progress.pg_min
            if trace is not None:
                value = problem.objective()
                with gil:
                    trace.append(value)
            if statistics.spread <= options.tol and progress.pg_max <= options.tol and progress.pg_min >= -options.tol:
                # The pass measured each PG_i before the steps that followed it: confirm the
                # rule at the final alpha, so that the returned point meets it exactly.
                if active == n:
                    problem.refresh()
                    if within_tolerance(problem, options.tol):
                        statistics.converged = True
                        break
                # Shrunk coordinates were not checked: restore them and make one more full pass.
                statistics.n_resets += active < n
                active = n
                progress.shrink_above = INFINITY
                progress.shrink_below = -INFINITY
                continue
            # A threshold no coordinate violated on its side would shrink too eagerly: disable it.
            progress.shrink_above = progress.pg_max if progress.pg_max > 0.0 else INFINITY
            progress.shrink_below = progress.pg_min if progress.pg_min < 0.0 else -INFINITY
            if work >= face_cost:
                work = 0.0
                moved = problem.face_step()
                # The variant may reprice: a step that needed many trial points, or failed, costs more next time.
                face_cost = problem.face_step_cost()
                if moved:
                    statistics.n_face_steps += 1
                    # The step moved many coordinates at once: what shrinking concluded from the
                    # old gradients no longer holds, so the next pass visits every coordinate.  It
                    # keeps the last pass's thresholds: a coordinate is set aside again only if its
                    # new gradient still pushes it out that far.  Resetting them made the next few
                    # passes full ones, and with a face step every few epochs shrinking never came
                    # back (rcv1subset1 at C = 10: 2.2 times the time per epoch).
                    active = n
    finally:
        free(index)
        free(coordinates)
        free(groups_buffer.rank)
        free(groups_buffer.starts)
        free(groups_buffer.scratch)
    return 0


cdef class DualCoordinates:
    """Base of the variants: never instantiated itself (see _cd.pxd for what to override)."""

    def __cinit__(self, *args, **kwargs):
        if type(self) is DualCoordinates:
            raise TypeError("DualCoordinates is the base of the dual variants; instantiate a subclass")

    # Every variant overrides the six methods below; the base class cannot be instantiated.
    # ``refresh``, ``prefetch`` and the group calls are optional: a variant without maintained
    # vectors has nothing to redo, one without per-coordinate data nothing to ask for, one
    # without groups (group_size 0) is never entered.
    cdef double gradient(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef double curvature(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef double lower(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef double upper(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef void update(self, Py_ssize_t i, double delta) noexcept nogil:
        pass

    cdef double objective(self) noexcept nogil:
        return NAN

    cdef void refresh(self) noexcept nogil:
        pass

    cdef void prefetch(self, Py_ssize_t i) noexcept nogil:
        pass

    cdef void enter_group(self, Py_ssize_t g) noexcept nogil:
        pass

    cdef void leave_group(self, Py_ssize_t g) noexcept nogil:
        pass

    cdef double face_step_cost(self) noexcept nogil:
        return INFINITY

    cdef int face_step(self) except -1 nogil:
        return 0


def solve_dual(DualCoordinates problem not None, *, double tol, Py_ssize_t max_iter, bint shrinking,
               uint64_t seed, bint record_dual=False, bint face_steps=True):
    """Run the engine on ``problem`` from its current alpha, without the GIL.

    ``face_steps=False`` runs the epochs alone, even for a variant that offers face steps.
    Returns a dict: ``n_epochs``, ``n_updates``, ``n_visits``, ``n_shrunk``, ``n_resets``,
    ``min_active``, ``spread`` (PGmax - PGmin of the last epoch), ``n_face_steps``, ``converged``,
    ``kkt_violation`` (max |PG| over all coordinates at the end), ``objective`` (f at
    the end, minimisation form) and ``dual_trace`` (f after every epoch when
    ``record_dual``, else None).
    """
    try:
        problem.alpha.shape[0]
    except AttributeError:  # Cython's error for an unset memoryview: __init__ never ran
        raise ValueError(f"{type(problem).__name__} was not initialised (its alpha is unset)") from None
    if not (isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    cdef CDOptions options = CDOptions(tol=tol, max_iter=max_iter, shrinking=shrinking, seed=seed,
                                       face_steps=face_steps)
    cdef CDStatistics statistics
    cdef list trace = [] if record_dual else None
    cdef double violation, objective
    with nogil:
        run_cd(problem, options, &statistics, trace)
        violation = max_projected_gradient(problem)
        objective = problem.objective()
    return {
        "n_epochs": statistics.n_epochs,
        "n_updates": statistics.n_updates,
        "n_visits": statistics.n_visits,
        "n_shrunk": statistics.n_shrunk,
        "n_resets": statistics.n_resets,
        "min_active": statistics.min_active,
        "spread": statistics.spread,
        "n_face_steps": statistics.n_face_steps,
        "converged": bool(statistics.converged),
        "kkt_violation": violation,
        "objective": objective,
        "dual_trace": trace,
    }


# -- rows of X --------------------------------------------------------------------------


cdef class Rows:
    """Base of :class:`DenseRows` and :class:`SparseRows` (row access to X, see _cd.pxd)."""

    def __cinit__(self, *args, **kwargs):
        if type(self) is Rows:
            raise TypeError("Rows is the base of DenseRows and SparseRows; instantiate one of them")

    cdef void _set_shape(self, Py_ssize_t n_rows, Py_ssize_t n_columns, double bias) except *:
        if not (isfinite(bias) and bias >= 0.0):
            raise ValueError(f"bias (the constant feature's value) must be a finite number >= 0, got {bias!r}")
        self.n_rows = n_rows
        self.n_columns = n_columns
        self.bias = bias
        self.dimension = n_columns + (bias > 0.0)

    # Overridden by DenseRows and SparseRows; the base class cannot be instantiated.
    cdef double dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        return NAN

    cdef void axpy(self, Py_ssize_t i, double scale, double* w) noexcept nogil:
        pass

    cdef double squared_norm(self, Py_ssize_t i) noexcept nogil:
        return NAN

    cdef void add_squares(self, Py_ssize_t i, double* out) noexcept nogil:
        pass

    cdef void add_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil:
        pass

    cdef double gram_work(self) noexcept nogil:
        return INFINITY

    cdef double entries(self) noexcept nogil:
        return NAN

    cdef void _add_bias_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil:
        """The constant feature's row and corner of ``add_gram``: it is the last coordinate, so row d of H."""
        cdef Py_ssize_t k, dim = self.dimension, d = self.n_columns
        cdef double* last_row = H + d  # entry (d, j) of the column-major H is H[j * dim + d]
        if self.bias <= 0.0:
            return
        for k in range(count):
            self._axpy_strided(subset[k], self.bias, last_row, dim)
        H[d * dim + d] += self.bias * self.bias * count

    cdef void _axpy_strided(self, Py_ssize_t i, double scale, double* out, Py_ssize_t stride) noexcept nogil:
        pass

    cdef double _dot_strided(self, Py_ssize_t i, const double* w, Py_ssize_t stride) noexcept nogil:
        return NAN

    cdef void gather(self, Py_ssize_t i, const double* T, Py_ssize_t k, double* out) noexcept nogil:
        pass

    cdef void scatter(self, Py_ssize_t i, double scale, const double* u, Py_ssize_t k, double* T) noexcept nogil:
        pass


def _require_finite(values, str name):
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinity")


def _index_array(values, str name, dtype=np.intp):
    """A private read-only copy of a 1-D integer array, as ``dtype`` (whose range must hold its values)."""
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D integer array, got dtype {values.dtype} and shape {values.shape}")
    if values.size and (values.max() > np.iinfo(dtype).max or values.min() < np.iinfo(dtype).min):
        raise ValueError(f"{name} holds values beyond the index range")
    copy = values.astype(dtype)
    copy.setflags(write=False)
    return copy


@cython.wraparound(True)
def _check_canonical_csr(offsets, columns, Py_ssize_t n_columns):
    """CSR structure: offsets rise from 0 to nnz, and each row's columns are sorted, unique, in [0, d)."""
    if offsets[0] != 0 or offsets[-1] != columns.size or np.any(np.diff(offsets) < 0):
        raise ValueError(f"indptr must rise from 0 to nnz = {columns.size}")
    if columns.size and (columns.min() < 0 or columns.max() >= n_columns):
        raise ValueError(f"indices must lie in [0, {n_columns})")
    # Duplicates would break ||x_i||^2; a step across a row boundary may go down.
    steps = np.diff(columns)
    row_starts = offsets[1:-1]
    steps[row_starts[(row_starts > 0) & (row_starts < columns.size)] - 1] = 1
    if np.any(steps <= 0):
        raise ValueError("the column indices of every row must be sorted and unique (canonical CSR)")


cdef class DenseRows(Rows):
    """Rows of a C-contiguous float64 matrix X (n, d); ``bias`` > 0 appends a constant feature.

    ``checked=True`` skips the finiteness scan: the caller promises X is an array that
    ``multilabel_core.validation.check_X`` validated in the call under way (``as_rows`` says so
    only for such an array, so that X is scanned once, at the estimator's boundary).
    """

    def __init__(self, const double[:, ::1] X not None, double bias=0.0, *, bint checked=False):
        if not checked:
            _require_finite(np.asarray(X), "X")
        self._set_shape(X.shape[0], X.shape[1], bias)
        self.X = X

    cdef double dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef int d = <int> self.n_columns, one = 1
        cdef double total = ddot(&d, <double*> &self.X[i, 0], &one, <double*> w, &one) if d > 0 else 0.0
        return total + self.bias * w[self.n_columns] if self.bias > 0.0 else total

    cdef void axpy(self, Py_ssize_t i, double scale, double* w) noexcept nogil:
        cdef int d = <int> self.n_columns, one = 1
        if d > 0:
            daxpy(&d, &scale, <double*> &self.X[i, 0], &one, w, &one)
        if self.bias > 0.0:
            w[self.n_columns] += scale * self.bias

    cdef double squared_norm(self, Py_ssize_t i) noexcept nogil:
        cdef int d = <int> self.n_columns, one = 1
        cdef double total = ddot(&d, <double*> &self.X[i, 0], &one, <double*> &self.X[i, 0], &one) if d > 0 else 0.0
        return total + self.bias * self.bias

    cdef void add_squares(self, Py_ssize_t i, double* out) noexcept nogil:
        cdef const double* row = &self.X[i, 0] if self.n_columns > 0 else NULL
        cdef Py_ssize_t j
        for j in range(self.n_columns):
            out[j] += row[j] * row[j]
        if self.bias > 0.0:
            out[self.n_columns] += self.bias * self.bias

    cdef void add_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil:
        # A run of consecutive rows is a column-major d x run block of X as it is stored: one
        # level-3 call per run, and no copy.  (subset ascending, as the face step lists it.)
        cdef int d = <int> self.n_columns, dim = <int> self.dimension, width
        cdef double one = 1.0
        cdef char lower = b'L', plain = b'N'
        cdef Py_ssize_t k = 0, end
        while d > 0 and k < count:
            end = k + 1
            while end < count and subset[end] == subset[end - 1] + 1:
                end += 1
            width = <int> (end - k)
            dsyrk(&lower, &plain, &d, &width, &one, <double*> &self.X[subset[k], 0], &d, &one, H, &dim)
            k = end
        self._add_bias_gram(subset, count, H)

    cdef double gram_work(self) noexcept nogil:
        return <double> self.n_rows * self.n_columns * self.n_columns / 2.0 + self.n_rows * self.n_columns

    cdef double entries(self) noexcept nogil:
        return <double> self.n_rows * self.dimension

    cdef void _axpy_strided(self, Py_ssize_t i, double scale, double* out, Py_ssize_t stride) noexcept nogil:
        cdef int d = <int> self.n_columns, one = 1, step = <int> stride
        if d > 0:
            daxpy(&d, &scale, <double*> &self.X[i, 0], &one, out, &step)

    cdef double _dot_strided(self, Py_ssize_t i, const double* w, Py_ssize_t stride) noexcept nogil:
        cdef int d = <int> self.n_columns, one = 1, step = <int> stride
        return ddot(&d, <double*> &self.X[i, 0], &one, <double*> w, &step) if d > 0 else 0.0

    cdef void gather(self, Py_ssize_t i, const double* T, Py_ssize_t k, double* out) noexcept nogil:
        # T (dimension x k, C order) is a k x dimension matrix in column order: out += T^T-as-stored x_i.
        cdef int rows = <int> k, d = <int> self.n_columns, one = 1
        cdef double unit = 1.0
        cdef char no = b'N'
        if d > 0:
            dgemv(&no, &rows, &d, &unit, <double*> T, &rows, <double*> &self.X[i, 0], &one, &unit, out, &one)
        if self.bias > 0.0:
            daxpy(&rows, &self.bias, <double*> &T[self.n_columns * k], &one, out, &one)

    cdef void scatter(self, Py_ssize_t i, double scale, const double* u, Py_ssize_t k, double* T) noexcept nogil:
        cdef int rows = <int> k, d = <int> self.n_columns, one = 1
        cdef double times_bias = scale * self.bias
        if d > 0:
            dger(&rows, &d, &scale, <double*> u, &one, <double*> &self.X[i, 0], &one, T, &rows)
        if self.bias > 0.0:
            daxpy(&rows, &times_bias, <double*> u, &one, &T[self.n_columns * k], &one)


cdef class SparseRows(Rows):
    """Rows of a CSR matrix given by its arrays (canonical: sorted, unique column indices per row).

    ``data`` float64 C-contiguous; ``indices`` and ``indptr`` 1-D integer arrays, copied (the
    column indices as 32-bit integers, the offsets as np.intp) so that the structure validated
    here cannot change under the engine; ``n_columns`` is d (at most 2^31 - 1).  ``bias`` > 0
    appends a constant feature.  ``checked=True`` skips the finiteness scan of ``data`` (as for
    :class:`DenseRows`); the structure is checked either way, since the engine indexes with it.

    The epochs are bound by memory traffic: a dot product with a row reads each stored entry
    (a value and its column) once, so 4-byte column indices instead of 8 cut the bytes per
    entry from 16 to 12 (BR on bibtex, where the dot products are most of the time).
    """

    def __init__(self, const double[::1] data not None, indices, indptr, Py_ssize_t n_columns, double bias=0.0, *,
                 bint checked=False):
        if n_columns < 0:
            raise ValueError(f"n_columns must be >= 0, got {n_columns}")
        if n_columns > INT32_MAX:
            raise ValueError(f"sparse rows hold at most {INT32_MAX} columns (32-bit column indices), got {n_columns}")
        indptr = _index_array(indptr, "indptr")
        indices = _index_array(indices, "indices", np.int32)
        if indptr.shape[0] < 1:
            raise ValueError("indptr must hold n_rows + 1 >= 1 offsets")
        if indices.shape[0] != data.shape[0]:
            raise ValueError(f"indices ({indices.shape[0]}) and data ({data.shape[0]}) differ in length")
        _check_canonical_csr(indptr, indices, n_columns)
        if not checked:
            _require_finite(np.asarray(data), "data")
        self._set_shape(indptr.shape[0] - 1, n_columns, bias)
        self.data, self.indices, self.indptr = data, indices, indptr
        self.unit = bool(np.all(np.asarray(data) == 1.0))

    # Raw pointers into the arrays: extension modules build with -fno-strict-aliasing, so
    # memoryview fields would be reloaded after every store to w.
    cdef double dot(self, Py_ssize_t i, const double* w) noexcept nogil:
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t k = self.indptr[i], end = self.indptr[i + 1]
        cdef double total = self.bias * w[self.n_columns] if self.bias > 0.0 else 0.0
        # Four partial sums: one running sum makes every multiply-add wait for the one before
        # (its latency, not the loads, bounds a short row's dot product).
        cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
        if self.unit:
            # Binary features (bibtex, enron, medical): 4 bytes an entry instead of 12, and the
            # same sums bit for bit (1 * w is w).
            while k + 4 <= end:
                s0 += w[columns[k]]
                s1 += w[columns[k + 1]]
                s2 += w[columns[k + 2]]
                s3 += w[columns[k + 3]]
                k += 4
            while k < end:
                s0 += w[columns[k]]
                k += 1
            return total + ((s0 + s1) + (s2 + s3))
        while k + 4 <= end:
            s0 += values[k] * w[columns[k]]
            s1 += values[k + 1] * w[columns[k + 1]]
            s2 += values[k + 2] * w[columns[k + 2]]
            s3 += values[k + 3] * w[columns[k + 3]]
            k += 4
        while k < end:
            s0 += values[k] * w[columns[k]]
            k += 1
        return total + ((s0 + s1) + (s2 + s3))

    cdef void axpy(self, Py_ssize_t i, double scale, double* w) noexcept nogil:
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t k
        if self.unit:
            for k in range(self.indptr[i], self.indptr[i + 1]):
                w[columns[k]] += scale
        else:
            for k in range(self.indptr[i], self.indptr[i + 1]):
                w[columns[k]] += scale * values[k]
        if self.bias > 0.0:
            w[self.n_columns] += scale * self.bias

    cdef double squared_norm(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t k
        cdef double total = self.bias * self.bias
        for k in range(self.indptr[i], self.indptr[i + 1]):
            total += self.data[k] * self.data[k]
        return total

    cdef void add_squares(self, Py_ssize_t i, double* out) noexcept nogil:
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t k
        for k in range(self.indptr[i], self.indptr[i + 1]):
            out[columns[k]] += values[k] * values[k]
        if self.bias > 0.0:
            out[self.n_columns] += self.bias * self.bias

    cdef void add_gram(self, const Py_ssize_t* subset, Py_ssize_t count, double* H) noexcept nogil:
        # Only the products of a row's nonzeros: O(nnz_i^2) per row.  Columns ascend within a
        # row, so (later, earlier) is a lower-triangle entry, H[earlier * dim + later].
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t dim = self.dimension, s, j, k, start, stop
        cdef double v
        for s in range(count):
            start, stop = self.indptr[subset[s]], self.indptr[subset[s] + 1]
            for j in range(start, stop):
                v = values[j]
                for k in range(j, stop):
                    H[columns[j] * dim + columns[k]] += v * values[k]
        self._add_bias_gram(subset, count, H)

    cdef double gram_work(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double total = 0.0, length
        for i in range(self.n_rows):
            length = <double> (self.indptr[i + 1] - self.indptr[i])
            total += length * (length + 1.0) / 2.0 + length
        return total

    cdef double entries(self) noexcept nogil:
        return <double> (self.indptr[self.n_rows] + self.n_rows * (self.bias > 0.0))

    cdef void _axpy_strided(self, Py_ssize_t i, double scale, double* out, Py_ssize_t stride) noexcept nogil:
        cdef Py_ssize_t k
        for k in range(self.indptr[i], self.indptr[i + 1]):
            out[self.indices[k] * stride] += scale * self.data[k]

    cdef double _dot_strided(self, Py_ssize_t i, const double* w, Py_ssize_t stride) noexcept nogil:
        cdef Py_ssize_t k
        cdef double total = 0.0
        for k in range(self.indptr[i], self.indptr[i + 1]):
            total += self.data[k] * w[self.indices[k] * stride]
        return total

    cdef void gather(self, Py_ssize_t i, const double* T, Py_ssize_t k, double* out) noexcept nogil:
        # One contiguous row of T per stored entry (an axpy of length k), where k dot products with
        # the row would each gather from another row of the k x dimension layout.
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t e, r
        cdef const double* row
        cdef double x
        for e in range(self.indptr[i], self.indptr[i + 1]):
            row = &T[<Py_ssize_t> columns[e] * k]
            x = 1.0 if self.unit else values[e]
            for r in range(k):
                out[r] += x * row[r]
        if self.bias > 0.0:
            row = &T[self.n_columns * k]
            for r in range(k):
                out[r] += self.bias * row[r]

    cdef void scatter(self, Py_ssize_t i, double scale, const double* u, Py_ssize_t k, double* T) noexcept nogil:
        cdef const double* values = &self.data[0]
        cdef const int* columns = &self.indices[0]
        cdef Py_ssize_t e, r
        cdef double* row
        cdef double x
        for e in range(self.indptr[i], self.indptr[i + 1]):
            row = &T[<Py_ssize_t> columns[e] * k]
            x = scale if self.unit else scale * values[e]
            for r in range(k):
                row[r] += x * u[r]
        if self.bias > 0.0:
            row = &T[self.n_columns * k]
            x = scale * self.bias
            for r in range(k):
                row[r] += x * u[r]


# -- the variants -----------------------------------------------------------------------


cdef class _SVMDual(DualCoordinates):
    """What the two SVM duals share: signs y, the box [0, upper] and the diagonal D.

    The dual of an SVM-dual loss at cost C (Hsieh et al. 2008, eq. 4)::

        min_alpha  1/2 alpha^T (Q + D I) alpha - e^T alpha,   0 <= alpha_i <= upper,

    with ``(0, upper) = loss.dual_box(C)`` and ``D = loss.dual_diagonal(C)``: the hinge
    loss gives [0, C] and D = 0, the squared hinge [0, inf) and D = 1 / (2 C), i.e.
    Q_ii += 1 / (2 C).  No bound and no diagonal (upper = inf, D = 0) is refused: that
    dual (the hard-margin SVM's) is unbounded below unless the data are separable.
    """
    cdef const double[::1] y
    cdef double diagonal
    cdef double upper_bound

    cdef void _set_svm(self, const double[::1] y, double[::1] alpha, double upper, double diagonal) except *:
        if not upper > 0.0:
            raise ValueError(f"upper must be > 0 (inf for no bound), got {upper!r}")
        if not (isfinite(diagonal) and diagonal >= 0.0):
            raise ValueError(f"diagonal must be a finite number >= 0, got {diagonal!r}")
        if not isfinite(upper) and diagonal == 0.0:
            raise ValueError(
                "upper = inf needs diagonal > 0: without a bound or a diagonal the dual is unbounded below "
                "unless the data are separable"
            )
        if alpha.shape[0] != y.shape[0]:
            raise ValueError(f"alpha has {alpha.shape[0]} entries but y has {y.shape[0]}")
        signs, start = np.asarray(y), np.asarray(alpha)
        if not np.all((signs == 1.0) | (signs == -1.0)):
            raise ValueError("y must hold signs -1 and +1 only")
        self.diagonal = diagonal
        self.upper_bound = upper
        if not np.all((start >= 0.0) & (start <= self.upper_bound)):
            raise ValueError(f"alpha must lie in the box [0, {self.upper_bound}] (and be a number)")
        self.y = y
        self.alpha = alpha

    cdef double lower(self, Py_ssize_t i) noexcept nogil:
        return 0.0

    cdef double upper(self, Py_ssize_t i) noexcept nogil:
        return self.upper_bound

    cdef double _diagonal_term(self) noexcept nogil:
        """``1/2 alpha^T D alpha - e^T alpha``, the part of f beside ``1/2 alpha^T Q alpha``."""
        cdef Py_ssize_t i
        cdef double total = 0.0
        for i in range(self.alpha.shape[0]):
            total += (0.5 * self.diagonal * self.alpha[i] - 1.0) * self.alpha[i]
        return total


cdef class LinearSVMDual(_SVMDual):
    """The dual of one linear SVM on the rows x_i (Hsieh et al. 2008, eq. 4)::

        min_alpha  1/2 alpha^T (Q + D) alpha - e^T alpha,   Q_ij = y_i y_j x_i^T x_j,

    box [0, upper] and D = ``diagonal`` I (see :class:`_SVMDual`: [0, C] and D = 0 for the
    hinge, [0, inf) and D = I / (2C) for the squared hinge).  Maintains
    ``w = sum_i alpha_i y_i x_i`` (in the caller's buffer ``w``, length
    ``rows.dimension``), so that ``G_i = y_i w^T x_i - 1 + D_ii alpha_i`` costs one sparse
    dot product.  ``alpha`` (the caller's buffer, updated in place) is the start; ``w`` is
    computed from it here.  With D > 0 and ``rows.dimension`` <= MAX_FACE_DIMENSION it offers
    face steps (:meth:`face_step`): the epochs alone are slow when the free coordinates
    outnumber the rank of X.  ``face_solver`` chooses how a face step solves its system:
    ``"auto"`` (the default) by price, ``"cholesky"`` or ``"cg"`` always that route (tests).
    """
    cdef Rows rows
    cdef double[::1] w
    cdef double[::1] row_norms
    # The face step's buffers (allocated only when it is offered): the face and its gradients and
    # directions (one entry per row), the system (dimension^2) and two weight vectors.
    cdef Py_ssize_t[::1] face
    cdef double[::1] face_gradient
    cdef double[::1] face_direction
    cdef double[::1] system
    cdef double[::1] face_w
    cdef double[::1] step_w
    cdef double face_cost       # the price of the next step, in full epochs (INFINITY: none offered)
    cdef double face_fixed      # what every step costs: the Gram matrix and its factor, in epochs
    cdef double face_pass       # one pass over the rows (gradients, right-hand side, a trial point), in epochs
    cdef double face_backoff    # 1, doubled after each step given up, back to 1 after a step that moved alpha
    cdef double face_passes     # passes over the rows the last step made, its system's solve aside
    # The matrix-free route (_solve_face_cg): its residual, Jacobi preconditioner, search direction
    # and product with the face's Gram matrix (weight vectors).
    cdef double[::1] cg_residual
    cdef double[::1] cg_preconditioner
    cdef double[::1] cg_search
    cdef double[::1] cg_product
    cdef double face_cg_passes  # passes over the rows the last CG solve made (before the first: 2 FACE_CG_FIRST_ITERATIONS + 2)
    cdef int face_solver        # 0: by price, 1: always Cholesky, 2: always CG
    cdef bint face_cg           # the route of the next step: CG (True) or the Cholesky factor
    cdef readonly Py_ssize_t n_cholesky_solves  # face systems solved by each route so far (diagnostics, tests)
    cdef readonly Py_ssize_t n_cg_solves

    def __init__(self, Rows rows not None, const double[::1] y not None, double[::1] alpha not None,
                 double[::1] w not None, double upper, double diagonal, str face_solver="auto"):
        solvers = {"auto": 0, "cholesky": 1, "cg": 2}
        if face_solver not in solvers:
            raise ValueError(f"face_solver must be one of {sorted(solvers)}, got {face_solver!r}")
        self.face_solver = solvers[face_solver]
        if y.shape[0] != rows.n_rows:
            raise ValueError(f"y has {y.shape[0]} entries but X has {rows.n_rows} rows")
        if w.shape[0] != rows.dimension:
            raise ValueError(f"w has {w.shape[0]} entries but the rows have dimension {rows.dimension}")
        self._set_svm(y, alpha, upper, diagonal)
        self.rows, self.w = rows, w
        norms = np.empty(rows.n_rows)
        self.row_norms = norms
        cdef Py_ssize_t i
        with nogil:
            for i in range(rows.n_rows):
                self.row_norms[i] = rows.squared_norm(i)
            self.refresh()
        self.face_cost = INFINITY
        if self.diagonal > 0.0 and rows.dimension <= MAX_FACE_DIMENSION:
            self.face, self.face_gradient = np.empty(rows.n_rows, dtype=np.intp), np.empty(rows.n_rows)
            self.face_direction = np.empty(rows.n_rows)
            self.system = np.empty(rows.dimension * rows.dimension)
            self.face_w, self.step_w = np.empty(rows.dimension), np.empty(rows.dimension)
            self.cg_residual, self.cg_preconditioner = np.empty(rows.dimension), np.empty(rows.dimension)
            self.cg_search, self.cg_product = np.empty(rows.dimension), np.empty(rows.dimension)
            with nogil:
                self._price_face_steps()

    cdef void _price_face_steps(self) noexcept nogil:
        """A face step's multiply-adds over an epoch's (a dot product and an axpy per visit, and a
        visit's bookkeeping): the Gram matrix of every row and its Cholesky factor, plus its passes
        over X -- five for the first step (gradients, right-hand side, direction, two trial
        points), then as many as the last step needed.

        The matrix-free route replaces the Gram matrix and its factor by its conjugate-gradient
        iterations, two passes over the free rows each (and two more for the residual and the
        preconditioner).  The route is CG when FACE_CG_MAX_ITERATIONS iterations over every row (its
        worst case) cost less than the factor, unless ``face_solver`` fixes it; a CG solve is priced
        at FACE_CG_FIRST_ITERATIONS over every row before the first, then at what the last one took."""
        cdef double entries = self.rows.entries(), dim = <double> self.rows.dimension
        cdef double epoch = 2.0 * entries + VISIT_OVERHEAD * self.rows.n_rows
        self.face_fixed = (self.rows.gram_work() + dim * dim * dim / 6.0) / epoch
        self.face_pass = entries / epoch
        self.face_backoff = 1.0
        self.face_passes = 5.0
        if self.face_solver == 0:
            self.face_cg = (2.0 * FACE_CG_MAX_ITERATIONS + 2.0) * self.face_pass < self.face_fixed
        else:
            self.face_cg = self.face_solver == 2
        self.face_cg_passes = 2.0 * FACE_CG_FIRST_ITERATIONS + 2.0
        self._reprice()

    cdef void _reprice(self) noexcept nogil:
        """The next step's price: its route's solve, and its other passes over the rows as the last step's."""
        cdef double solve = self.face_cg_passes * self.face_pass if self.face_cg else self.face_fixed
        self.face_cost = self.face_backoff * (solve + self.face_passes * self.face_pass)

    cdef double face_step_cost(self) noexcept nogil:
        return self.face_cost

    cdef int face_step(self) except -1 nogil:
        """A projected Newton step on the current face (Bertsekas, *Projected Newton methods for
        optimization problems with simple constraints*, SIAM J. Control Optim. 1982).

        Why: with D > 0 and more free coordinates than the rank of X, f is strongly convex only
        through D, in the directions that leave w unchanged, while a coordinate's curvature is
        ||x_i||^2 + D; an epoch shrinks the error there by about exp(-D / ||x_i||^2) (0.993 on
        standardised cal500 at C = 1), so coordinate steps alone need thousands of epochs.  The
        face's minimiser solves a system in w of the weight dimension instead:

            alpha_F = (1 - y_F o X_F w) / D,   (D I + X_F^T X_F) w = D w_fixed + X_F^T y_F,

        (the face F: the coordinates not held at a bound by their gradient; w_fixed the part of
        w from the others), the generalised Newton step of the primal restricted to F (Keerthi &
        DeCoste, *A modified finite Newton method for fast solution of large scale linear SVMs*,
        JMLR 2005).  The direction towards it is projected on the box and halved until f falls
        by Armijo's rule, so the step never increases f; the epochs that follow correct the face.
        Returns 1 when alpha moved, 0 when the step was given up (an empty face, a factor that
        is not positive definite, no decrease in MAX_FACE_HALVINGS halvings).
        """
        cdef int moved = self._face_step()
        # Charge the next step what this one cost (its trial points are passes over the rows); a
        # step given up doubles the price until one moves.  Whether a step that moved was worth
        # it is not judged by its decrease of f: early steps decrease f less than the epochs
        # before them did, yet they are what lets the later ones land on the optimal face
        # (judging them so took 2-3 times longer on cal500, yeast and scene at C = 1).
        self.face_backoff = 1.0 if moved else 2.0 * self.face_backoff
        self._reprice()
        return moved

    cdef Py_ssize_t _solve_face_cg(self, Py_ssize_t count) noexcept nogil:
        """The face's system ``(D I + X_F^T X_F) w = D w_fixed + X_F^T y_F`` by conjugate gradients, into face_w.

        Matrix-free: a product with X_F^T X_F is a dot product and an axpy per free row, so an
        iteration costs two passes over the free rows and never the dimension^2 system.  Starts
        from the current w, where the residual is ``-X_F^T (y_F o G_F)`` (G the face's gradients),
        preconditioned by the system's diagonal (Jacobi), and stops once the residual is
        FACE_CG_RELATIVE_RESIDUAL of the starting one or after FACE_CG_MAX_ITERATIONS iterations
        (a truncated Newton step, Dembo, Eisenstat & Steihaug 1982): the direction it gives is
        projected and backtracked as the exact one is.  Returns the iterations.
        """
        cdef Py_ssize_t n = self.rows.n_rows, dimension = self.rows.dimension, i, j, k, iteration = 0
        cdef int dim = <int> dimension, one = 1
        cdef double D = self.diagonal, limit, rz, rz_next, curvature, step, beta
        cdef double* x = &self.face_w[0]
        cdef double* r = &self.cg_residual[0]
        cdef double* inverse = &self.cg_preconditioner[0]
        cdef double* p = &self.cg_search[0]
        cdef double* q = &self.cg_product[0]  # also the preconditioned residual, before the product overwrites it
        memcpy(x, &self.w[0], dimension * sizeof(double))
        memset(r, 0, dimension * sizeof(double))
        memset(inverse, 0, dimension * sizeof(double))
        for k in range(count):
            i = self.face[k]
            self.rows.axpy(i, -self.y[i] * self.face_gradient[k], r)
            self.rows.add_squares(i, inverse)
        for j in range(dimension):
            inverse[j] = 1.0 / (D + inverse[j])
            q[j] = inverse[j] * r[j]
            p[j] = q[j]
        rz = ddot(&dim, r, &one, q, &one)
        limit = FACE_CG_RELATIVE_RESIDUAL * sqrt(ddot(&dim, r, &one, r, &one))
        while iteration < FACE_CG_MAX_ITERATIONS and sqrt(ddot(&dim, r, &one, r, &one)) > limit:
            for j in range(dimension):
                q[j] = D * p[j]
            for k in range(count):
                i = self.face[k]
                self.rows.axpy(i, self.rows.dot(i, p), q)
            iteration += 1
            curvature = ddot(&dim, p, &one, q, &one)
            if not curvature > 0.0:
                break
            step = rz / curvature
            daxpy(&dim, &step, p, &one, x, &one)
            step = -step
            daxpy(&dim, &step, q, &one, r, &one)
            for j in range(dimension):
                q[j] = inverse[j] * r[j]
            rz_next = ddot(&dim, r, &one, q, &one)
            beta = rz_next / rz
            rz = rz_next
            for j in range(dimension):
                p[j] = q[j] + beta * p[j]
        self.face_cg_passes = (2.0 + 2.0 * iteration) * count / n
        return iteration

    cdef int _face_step(self) noexcept nogil:
        cdef Py_ssize_t n = self.rows.n_rows, count = 0, i, k
        cdef int dim = <int> self.rows.dimension, one = 1, info = 0, halving
        cdef char lower = b'L'
        cdef double D = self.diagonal, U = self.upper_bound, G, value, target, step, scale = 1.0
        cdef double slope, squares, change, unit = 1.0
        cdef double* H = &self.system[0]
        cdef double* solution = &self.face_w[0]
        cdef double* moved = &self.step_w[0]
        self.face_passes = 1.0
        for i in range(n):
            G = self.gradient(i)
            value = self.alpha[i]
            if (value <= 0.0 and G >= 0.0) or (value >= U and G <= 0.0):
                continue
            self.face[count] = i
            self.face_gradient[count] = G
            count += 1
        if count == 0:
            return 0
        if self.face_cg:
            self._solve_face_cg(count)
            self.n_cg_solves += 1
        else:
            # The right-hand side without w_fixed itself: D w_fixed = D w - D X_F^T (y_F o alpha_F).
            memset(H, 0, dim * dim * sizeof(double))
            self.rows.add_gram(&self.face[0], count, H)
            for k in range(dim):
                H[k * dim + k] += D
                solution[k] = D * self.w[k]
            for k in range(count):
                i = self.face[k]
                self.rows.axpy(i, self.y[i] * (1.0 - D * self.alpha[i]), solution)
            dpotrf(&lower, &dim, H, &dim, &info)
            if info != 0:
                return 0
            dpotrs(&lower, &dim, &one, H, &dim, solution, &dim, &info)
            if info != 0:
                return 0
            self.n_cholesky_solves += 1
            self.face_passes += <double> count / n  # the right-hand side
        for k in range(count):
            i = self.face[k]
            self.face_direction[k] = (1.0 - self.y[i] * self.rows.dot(i, solution)) / D - self.alpha[i]
        self.face_passes += <double> count / n
        for halving in range(MAX_FACE_HALVINGS):
            self.face_passes += <double> count / n
            # f is quadratic: f(alpha + delta) - f(alpha) = G^T delta + 1/2 (||X^T (y o delta)||^2 + D ||delta||^2).
            memset(moved, 0, dim * sizeof(double))
            slope = 0.0
            squares = 0.0
            for k in range(count):
                i = self.face[k]
                target = smaller(larger(self.alpha[i] + scale * self.face_direction[k], 0.0), U)
                step = target - self.alpha[i]
                if step != 0.0:
                    slope += self.face_gradient[k] * step
                    squares += step * step
                    self.rows.axpy(i, step * self.y[i], moved)
            change = slope + 0.5 * (ddot(&dim, moved, &one, moved, &one) + D * squares)
            if slope < 0.0 and change <= FACE_SUFFICIENT_DECREASE * slope:
                for k in range(count):
                    i = self.face[k]
                    self.alpha[i] = smaller(larger(self.alpha[i] + scale * self.face_direction[k], 0.0), U)
                daxpy(&dim, &unit, moved, &one, &self.w[0], &one)
                return 1
            scale *= 0.5
        return 0

    cdef void refresh(self) noexcept nogil:
        """w = sum_i alpha_i y_i x_i, summed afresh in row order."""
        cdef Py_ssize_t i
        self.w[:] = 0.0
        for i in range(self.rows.n_rows):
            if self.alpha[i] != 0.0:
                self.rows.axpy(i, self.alpha[i] * self.y[i], &self.w[0])

    cdef double gradient(self, Py_ssize_t i) noexcept nogil:
        return self.y[i] * self.rows.dot(i, &self.w[0]) - 1.0 + self.diagonal * self.alpha[i]

    cdef double curvature(self, Py_ssize_t i) noexcept nogil:
        return self.row_norms[i] + self.diagonal

    cdef void update(self, Py_ssize_t i, double delta) noexcept nogil:
        self.rows.axpy(i, delta * self.y[i], &self.w[0])

    cdef double objective(self) noexcept nogil:
        cdef int d = <int> self.w.shape[0], one = 1
        cdef double half_wtw = 0.5 * ddot(&d, &self.w[0], &one, &self.w[0], &one) if d > 0 else 0.0
        return half_wtw + self._diagonal_term()


#: Relative asymmetry of a kernel matrix still accepted as round-off.
# The core's one symmetry rule (multilabel_core.validation.SYMMETRY_RTOL).
cdef double SYMMETRY_TOL = SYMMETRY_RTOL


cdef void _check_gram(const double[:, ::1] K) except *:
    """K finite, symmetric within SYMMETRY_TOL * max |K_ij|, non-negative diagonal; no n^2 temporaries."""
    cdef Py_ssize_t n = K.shape[0], i, j
    cdef double scale = 0.0, asymmetry = 0.0
    cdef bint finite = True, diagonal_ok = True
    with nogil:
        for i in range(n):
            diagonal_ok = diagonal_ok and K[i, i] >= 0.0
            for j in range(n):
                finite = finite and isfinite(K[i, j])
                scale = fmax(scale, fabs(K[i, j]))
                if j > i:
                    asymmetry = fmax(asymmetry, fabs(K[i, j] - K[j, i]))
    if not finite:
        raise ValueError("K contains NaN or infinity")
    if asymmetry > SYMMETRY_TOL * scale:
        raise ValueError(f"K must be symmetric (largest |K_ij - K_ji| is {asymmetry:.3g})")
    if not diagonal_ok:
        raise ValueError("K must have a non-negative diagonal (it is a Gram matrix)")


cdef class BoxKernelDual(_SVMDual):
    """A label-wise kernel SVM dual without bias constraint.

    Zhang et al., Multi-Kernel Multi-Label Learning with Max-Margin Concept Network, eq. 8::

        min_alpha  1/2 alpha^T (Q + D) alpha - e^T alpha,   Q_ij = y_i y_j K_ij,

    box [0, upper] and D = ``diagonal`` I (see :class:`_SVMDual`; for the hinge [0, C] with
    C the paper's lambda, and D = 0), K a precomputed symmetric (n, n) kernel.  Maintains the training
    scores ``s = K (alpha o y)`` (the caller's buffer ``scores``), so that
    ``G_i = y_i s_i - 1 + D_ii alpha_i`` is O(1) and a step is one O(n) axpy with row i of K.
    """
    cdef const double[:, ::1] K
    cdef double[::1] scores

    def __init__(self, const double[:, ::1] K not None, const double[::1] y not None, double[::1] alpha not None,
                 double[::1] scores not None, double upper, double diagonal):
        cdef Py_ssize_t n = K.shape[0], i
        if K.shape[1] != n:
            raise ValueError(f"K must be square, got shape {(K.shape[0], K.shape[1])}")
        if y.shape[0] != n or scores.shape[0] != n:
            raise ValueError(f"K is {n} x {n} but y has {y.shape[0]} entries and scores {scores.shape[0]}")
        _check_gram(K)
        self._set_svm(y, alpha, upper, diagonal)
        self.K, self.scores = K, scores
        with nogil:
            self.refresh()

    cdef void refresh(self) noexcept nogil:
        """s = K (alpha o y), summed afresh in row order."""
        cdef Py_ssize_t i
        cdef int size = <int> self.scores.shape[0], one = 1
        cdef double step
        self.scores[:] = 0.0
        for i in range(size):
            if self.alpha[i] != 0.0:
                step = self.alpha[i] * self.y[i]
                daxpy(&size, &step, <double*> &self.K[i, 0], &one, &self.scores[0], &one)

    cdef double gradient(self, Py_ssize_t i) noexcept nogil:
        return self.y[i] * self.scores[i] - 1.0 + self.diagonal * self.alpha[i]

    cdef double curvature(self, Py_ssize_t i) noexcept nogil:
        return self.K[i, i] + self.diagonal

    cdef void update(self, Py_ssize_t i, double delta) noexcept nogil:
        # K is symmetric, so its row i is the column Q needs.
        cdef int size = <int> self.scores.shape[0], one = 1
        cdef double step = delta * self.y[i]
        daxpy(&size, &step, <double*> &self.K[i, 0], &one, &self.scores[0], &one)

    cdef double objective(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double half_quadratic = 0.0
        for i in range(self.alpha.shape[0]):
            half_quadratic += 0.5 * self.alpha[i] * self.y[i] * self.scores[i]
        return half_quadratic + self._diagonal_term()

