# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""SMO for the dual family of MLRL (Zhang & Yeung, *Multi-Label Relationship Learning*, problem 10 and Appendix A).

Notation.  n examples, L labels; y_j^i in {-1, +1} the sign of example j for label i;
K (n x n) the label-free kernel; Omega~ (L x L) the label coupling (MLRL: Omega / lambda;
BSVM: I / lambda, eq. 12; SSMLRL: Omega / lambda_1 with the data-dependent kernel of
eq. 22, problem 21).  The dual variables are alpha_j^i; write alpha~_j^i = y_j^i alpha_j^i
(eq. 34) and B the n x L matrix of the alpha~.  The solver minimises::

    h(alpha) = 1/2 vec(B)^T (Omega~ (x) K) vec(B) - sum_ij alpha_j^i                 (10)
    s.t.  sum_j alpha~_j^i = 0  (one equality per label),  0 <= alpha_j^i <= C_j^i,

never forming the nL x nL matrix: its gradient in the paper's form is the n x L matrix::

    f = K B Omega~ - Y,        f_j^i = y_j^i dh/dalpha_j^i                           (App. A)

and the decision values on the training rows are ``f + Y + b``.

Optimality (Appendix A).  With A_i = {j : alpha~_j^i can increase} and
B_i = {j : alpha~_j^i can decrease}, F_up^i = min_{A_i} f^i and F_low^i = max_{B_i} f^i,
alpha is optimal iff F_low^i <= F_up^i for every label; we stop when
max_i (F_low^i - F_up^i) <= eps.

Working set (eqs. 29-33), inside one label i: j = argmax_{B_i} f^i, then
k = argmin over t in A_i with f_t^i < f_j^i of -b_jt^2 / a_jt, where b_jt = f_t - f_j and
a_jt = Omega~_ii (K_jj + K_tt - 2 K_jt), replaced by tau = 1e-12 when a_jt <= 0 (a kernel
or Omega~ that is not positive definite).  Update (eqs. 35, 37): alpha~_j -= t,
alpha~_k += t with t = min(-b_jk / a_jk, the room left in the box).  Gradient (eq. 36)
restricted to the label: f^i += Omega~_ii t (K[:, k] - K[:, j]), O(n) per step.

Schedule over labels.  Moving label i changes f^p of every label by
Omega~_ip K delta^i; only f^i is needed while label i is the one that moves, so the
cross-label update is deferred: the changes delta^i of alpha~^i are accumulated during a
visit of label i and flushed once when it ends (f^p += Omega~_ip K delta^i for p != i,
one kernel column per touched variable, skipped for the labels with Omega~_ip = 0, so
BSVM pays nothing).  A visit starts at the label with the largest violation
V = max_p (F_low^p - F_up^p) on exact gradients (a Gauss-Southwell choice of block) and
ends when that label's violation falls below max(eps, 0.1 V).  Why it converges: while
label i moves, the other labels' alpha are constant, so the cross terms in f^i are
constant and f^i stays exact; every inner step is therefore an exact SMO step of the
full problem (10) on a pair of variables of one label, with the second-order selection
above, and decreases h by -b t - a t^2 / 2 > 0.  The constraints are separable over
labels, so this is block coordinate descent with greedy block choice in which each
block is improved by convergent SMO steps (Fan, Chen & Lin 2005); the violation that
picks the next label is always computed on exact (flushed) gradients, and termination
is only declared after an exact recomputation of all of f (below).

Shrinking (Joachims 1998; LIBSVM's rules, per label).  Every min(n, 1000) steps on a
label, a variable at a bound that cannot be part of a violating pair of that label is
removed from its active set: at the bound where alpha~ can only increase, if
f_t > F_low; where it can only decrease, if f_t < F_up.  Steps then touch active
variables only, and f^i of the shrunk ones goes stale.  The first time a label's
violation falls below 10 eps, its f^i is reconstructed (f^i = K (B Omega~)_{:, i} - y^i)
and all its variables return (LIBSVM's unshrink).  Before declaring convergence, all of
f is recomputed from alpha (``f = K B Omega~ - Y``) with every variable active, and the
stopping rule is checked again; the solver continues if it fails.

Kernel columns come from :class:`~multilabel_core.solvers._kernel_cache.KernelColumns`
(the label-free K, precomputed or LRU-cached; a KernelSource computes K in BLAS blocks).
Gradient updates and recomputations of f are axpy loops over kernel columns (see ``axpy``).
"""

import numpy as np

from multilabel_core.validation import SYMMETRY_RTOL

from libc.math cimport INFINITY

from ._cd cimport check_interrupt
from ._kernel_cache cimport KernelColumns


#: Curvature used when a_jk <= 0 (eqs. 33, 37): LIBSVM's TAU.
cdef double TAU = 1e-12
#: A visit of a label ends when its violation is below this fraction of the largest one.
cdef double VISIT_REDUCTION = 0.1
#: A label's shrunk variables return when its violation first falls below this multiple of eps.
cdef double UNSHRINK_FACTOR = 10.0
#: Steps between two shrinkings of a label, at most (LIBSVM: min(n, 1000)).
cdef Py_ssize_t SHRINK_PERIOD = 1000
#: Steps between two checks for Ctrl-C.
cdef Py_ssize_t SIGNAL_PERIOD = 1024
#: Relative slack accepted for the symmetry of Omega~ and the equality constraints of a warm start.
EQUALITY_RTOL = 1e-8


cdef inline bint can_increase(double y, double a, double c) noexcept nogil:
    """alpha~ = y a below its upper bound: the index set A_i of Appendix A."""
    return a < c if y > 0 else a > 0


cdef inline bint can_decrease(double y, double a, double c) noexcept nogil:
    """alpha~ = y a above its lower bound: the index set B_i of Appendix A."""
    return a > 0 if y > 0 else a < c


cdef inline double room_up(double y, double a, double c) noexcept nogil:
    """d - alpha~: how far alpha~ may increase."""
    return c - a if y > 0 else a


cdef inline double room_down(double y, double a, double c) noexcept nogil:
    """alpha~ - c: how far alpha~ may decrease."""
    return a if y > 0 else c - a


#: Bits of the status of a variable: alpha~ can increase (in A_i), can decrease (in B_i).
cdef signed char UP = 1
cdef signed char DOWN = 2


cdef inline signed char status_of(double y, double a, double c) noexcept nogil:
    return (UP if can_increase(y, a, c) else 0) | (DOWN if can_decrease(y, a, c) else 0)


cdef inline void axpy(Py_ssize_t n, double a, const double* x, double* y) noexcept nogil:
    """y += a x.  A plain loop (vectorised by the compiler) rather than scipy's BLAS, whose
    OpenBLAS threads these calls beside numpy's own OpenBLAS pool, far slower on small
    problems (benchmarks/RESULTS.md, "Timings behind code comments")."""
    cdef Py_ssize_t t
    for t in range(n):
        y[t] += a * x[t]


cdef inline double clip(double a, double c) noexcept nogil:
    return 0.0 if a < 0.0 else (c if a > c else a)


cdef class _LabelwiseSMO:
    """The solver state; arrays are label-major (L, n) so that one label is contiguous."""

    cdef KernelColumns K
    cdef const double[::1] kdiag
    cdef Py_ssize_t n, L
    cdef const double[:, ::1] omega
    cdef const double[:, ::1] y
    cdef const double[:, ::1] C
    cdef double[:, ::1] alpha
    cdef double[:, ::1] f
    cdef double[:, ::1] work
    cdef signed char[:, ::1] status
    cdef Py_ssize_t[:, ::1] active
    cdef Py_ssize_t[::1] n_active
    cdef Py_ssize_t[::1] since_shrink
    cdef signed char[::1] unshrunk
    cdef signed char[::1] stale
    cdef double[::1] violation
    cdef double[::1] delta
    cdef double[::1] column_sum
    cdef Py_ssize_t[::1] touched
    cdef signed char[::1] is_touched
    cdef Py_ssize_t n_touched
    cdef Py_ssize_t[::1] label_steps
    cdef double tol
    cdef Py_ssize_t max_iter
    cdef Py_ssize_t shrink_period
    cdef bint shrinking
    cdef bint record
    cdef bint verify
    cdef bint gradient_given
    cdef Py_ssize_t steps, visits, shrunk, reconstructions
    # The column cache outlives this engine (one cache serves every label and every eps tightening):
    # its counters at the start, so that statistics() reports this call's hits and misses only.
    cdef long long hits_before, misses_before
    cdef double dual
    cdef list dual_trace

    def __init__(self, KernelColumns K, y, omega, C, alpha, double tol, Py_ssize_t max_iter, bint shrinking, bint record):
        self.K = K
        self.hits_before, self.misses_before = K.hits, K.misses
        self.kdiag = K.diagonal
        self.y, self.omega, self.C, self.alpha = y, omega, C, alpha
        self.L, self.n = alpha.shape
        self.f = np.zeros((self.L, self.n))
        self.work = np.zeros((self.L, self.n))
        self.status = np.zeros((self.L, self.n), dtype=np.int8)
        self.active = np.tile(np.arange(self.n, dtype=np.intp), (self.L, 1))
        self.n_active = np.full(self.L, self.n, dtype=np.intp)
        self.since_shrink = np.zeros(self.L, dtype=np.intp)
        self.unshrunk = np.zeros(self.L, dtype=np.int8)
        self.stale = np.ones(self.L, dtype=np.int8)
        self.violation = np.zeros(self.L)
        self.delta = np.zeros(self.n)
        self.column_sum = np.zeros(self.n)
        self.touched = np.zeros(self.n, dtype=np.intp)
        self.is_touched = np.zeros(self.n, dtype=np.int8)
        self.label_steps = np.zeros(self.L, dtype=np.intp)
        self.tol, self.max_iter, self.shrinking, self.record = tol, max_iter, shrinking, record
        self.verify, self.gradient_given = True, False
        self.shrink_period = min(self.n, SHRINK_PERIOD)
        self.dual_trace = []

    # -- exact gradients ------------------------------------------------------------

    cdef int reconstruct_all(self) except -1 nogil:
        """f = K B Omega~ - Y from alpha; all variables active.

        B is written into f, then work = B K (row p = sum_s B_ps K[:, s], one kernel column
        per example with a nonzero alpha), then f = Omega~ work - Y.
        """
        cdef Py_ssize_t s, p, q, i
        cdef const double* column
        for p in range(self.L):
            for q in range(self.n):
                self.f[p, q] = self.y[p, q] * self.alpha[p, q]
        self.work[:, :] = 0.0
        for s in range(self.n):
            column = NULL
            for p in range(self.L):
                if self.f[p, s] != 0.0:
                    if column == NULL:
                        column = self.K.column(s)
                    axpy(self.n, self.f[p, s], column, &self.work[p, 0])
        for i in range(self.L):
            for q in range(self.n):
                self.f[i, q] = -self.y[i, q]
            for p in range(self.L):
                if self.omega[p, i] != 0.0:
                    axpy(self.n, self.omega[p, i], &self.work[p, 0], &self.f[i, 0])
            self.reset_active(i)
            self.stale[i] = 1
        self.reconstructions += 1
        return 0

    cdef int reconstruct_label(self, Py_ssize_t i) except -1 nogil:
        """f^i = K v - y^i with v = (B Omega~)_{:, i}; all variables of label i active."""
        cdef Py_ssize_t s, p, q
        cdef double v
        for q in range(self.n):
            self.f[i, q] = -self.y[i, q]
        for s in range(self.n):
            v = 0.0
            for p in range(self.L):
                v += self.y[p, s] * self.alpha[p, s] * self.omega[p, i]
            if v != 0.0:
                axpy(self.n, v, self.K.column(s), &self.f[i, 0])
        self.reset_active(i)
        self.reconstructions += 1
        return 0

    cdef void reset_active(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t q
        for q in range(self.n):
            self.active[i, q] = q
        self.n_active[i] = self.n
        self.since_shrink[i] = 0

    # -- selection, step, shrinking -------------------------------------------------

    cdef double extremes(self, Py_ssize_t i, Py_ssize_t* j_low, double* f_up, double* f_low) noexcept nogil:
        """F_low^i - F_up^i over the active set; ``j_low`` = argmax of f^i over B_i (-inf if a set is empty)."""
        cdef Py_ssize_t q, t
        cdef signed char state
        cdef double value
        cdef const signed char* status = &self.status[i, 0]
        cdef const double* f = &self.f[i, 0]
        f_up[0] = INFINITY
        f_low[0] = -INFINITY
        j_low[0] = -1
        for q in range(self.n_active[i]):
            t = self.active[i, q]
            state, value = status[t], f[t]
            if state & DOWN and value > f_low[0]:
                f_low[0] = value
                j_low[0] = t
            if state & UP and value < f_up[0]:
                f_up[0] = value
        if j_low[0] < 0 or f_up[0] == INFINITY:
            return -INFINITY
        return f_low[0] - f_up[0]

    cdef Py_ssize_t partner(self, Py_ssize_t i, Py_ssize_t j, const double* Kj) noexcept nogil:
        """k = argmin over t in A_i with f_t < f_j of -b_jt^2 / a_jt (eqs. 31-33, tau when a_jt <= 0)."""
        cdef Py_ssize_t q, t, k = -1
        cdef double w = self.omega[i, i], kjj = self.kdiag[j], best = INFINITY, b, a, score
        cdef const signed char* status = &self.status[i, 0]
        cdef const double* f = &self.f[i, 0]
        cdef double fj = f[j]
        for q in range(self.n_active[i]):
            t = self.active[i, q]
            b = f[t] - fj
            if not status[t] & UP or b >= 0.0:
                continue
            a = w * (kjj + self.kdiag[t] - 2.0 * Kj[t])
            if a <= 0.0:
                a = TAU
            score = -(b * b) / a
            if score <= best:
                best = score
                k = t
        return k

    cdef int step(self, Py_ssize_t i, Py_ssize_t j) except -1 nogil:
        """One SMO step on label i with j = argmax_{B_i} f^i (eqs. 31-37); 0 when it cannot move.

        A violation > 0 always has a partner and a step t > 0; neither happens only when
        f or the curvature is not finite (overflow).
        """
        cdef const double* Kj = self.K.column(j)
        cdef Py_ssize_t k = self.partner(i, j, Kj)
        if k < 0:
            return 0
        cdef const double* Kk = self.K.column(k)
        cdef double w = self.omega[i, i]
        cdef double a_true = w * (self.kdiag[j] + self.kdiag[k] - 2.0 * Kj[k])
        cdef double a = a_true if a_true > 0.0 else TAU
        cdef double b = self.f[i, k] - self.f[i, j]
        cdef double up = room_up(self.y[i, k], self.alpha[i, k], self.C[i, k])
        cdef double down = room_down(self.y[i, j], self.alpha[i, j], self.C[i, j])
        cdef double t = min(-b / a, up, down)
        if not t > 0.0:  # an infinite curvature or a NaN: no progress is possible
            return 0
        self.alpha[i, j] = clip(self.alpha[i, j] - self.y[i, j] * t, self.C[i, j])
        self.alpha[i, k] = clip(self.alpha[i, k] + self.y[i, k] * t, self.C[i, k])
        # Land exactly on the bound that stopped the step, so that the index sets are exact.
        if t == down:
            self.alpha[i, j] = 0.0 if self.y[i, j] > 0 else self.C[i, j]
        if t == up:
            self.alpha[i, k] = self.C[i, k] if self.y[i, k] > 0 else 0.0
        self.status[i, j] = status_of(self.y[i, j], self.alpha[i, j], self.C[i, j])
        self.status[i, k] = status_of(self.y[i, k], self.alpha[i, k], self.C[i, k])
        self.update_gradient(i, w * t, Kk, Kj)
        self.remember(j, -t)
        self.remember(k, t)
        self.dual += b * t + 0.5 * a_true * t * t
        self.steps += 1
        self.label_steps[i] += 1
        return 1

    cdef void update_gradient(self, Py_ssize_t i, double coefficient, const double* Kk, const double* Kj) noexcept nogil:
        """f^i += coefficient (K[:, k] - K[:, j]) on the active set (eq. 36 within label i)."""
        cdef Py_ssize_t q, t
        cdef double* f = &self.f[i, 0]
        if self.n_active[i] == self.n:  # contiguous: the compiler vectorises it
            for t in range(self.n):
                f[t] += coefficient * (Kk[t] - Kj[t])
            return
        for q in range(self.n_active[i]):
            t = self.active[i, q]
            f[t] += coefficient * (Kk[t] - Kj[t])

    cdef void remember(self, Py_ssize_t s, double change) noexcept nogil:
        """Accumulate delta^i for the deferred cross-label update."""
        if not self.is_touched[s]:
            self.is_touched[s] = 1
            self.touched[self.n_touched] = s
            self.n_touched += 1
        self.delta[s] += change

    cdef int shrink(self, Py_ssize_t i, double f_up, double f_low) except -1 nogil:
        """Remove the variables of label i that cannot join a violating pair (LIBSVM's rules)."""
        cdef Py_ssize_t q, t, j, keep = 0
        cdef signed char state
        if not self.unshrunk[i] and f_low - f_up <= UNSHRINK_FACTOR * self.tol:
            self.unshrunk[i] = 1
            self.reconstruct_label(i)
            self.extremes(i, &j, &f_up, &f_low)
        for q in range(self.n_active[i]):
            t = self.active[i, q]
            state = self.status[i, t]
            if state == UP | DOWN or (state == UP and self.f[i, t] <= f_low) or (state == DOWN and self.f[i, t] >= f_up):
                self.active[i, keep] = t
                keep += 1
        self.shrunk += self.n_active[i] - keep
        self.n_active[i] = keep
        self.since_shrink[i] = 0
        return 0

    # -- the schedule over labels ---------------------------------------------------

    cdef int visit(self, Py_ssize_t i, double target) except -1 nogil:
        """SMO steps on label i until its violation is <= target; then flush delta^i."""
        cdef Py_ssize_t j
        cdef double v, f_up, f_low
        while True:
            v = self.extremes(i, &j, &f_up, &f_low)
            if self.shrinking and self.since_shrink[i] >= self.shrink_period:
                self.shrink(i, f_up, f_low)
                v = self.extremes(i, &j, &f_up, &f_low)
            if v <= target or self.steps >= self.max_iter or not self.step(i, j):
                break
            self.since_shrink[i] += 1
            if self.steps % SIGNAL_PERIOD == 0:
                with gil:
                    check_interrupt()
        self.violation[i] = v
        self.flush(i)
        self.visits += 1
        return 0

    cdef int flush(self, Py_ssize_t i) except -1 nogil:
        """f^p += Omega~_ip K delta^i for p != i (the deferred part of eq. 36)."""
        cdef Py_ssize_t p, q, s
        cdef bint coupled = False
        cdef double weight
        for p in range(self.L):
            if p != i and self.omega[i, p] != 0.0:
                coupled = True
        if coupled and self.n_touched > 0:
            self.column_sum[:] = 0.0
            for q in range(self.n_touched):
                s = self.touched[q]
                if self.delta[s] != 0.0:
                    axpy(self.n, self.delta[s], self.K.column(s), &self.column_sum[0])
            for p in range(self.L):
                weight = self.omega[i, p]
                if p != i and weight != 0.0:
                    axpy(self.n, weight, &self.column_sum[0], &self.f[p, 0])
                    self.stale[p] = 1
        for q in range(self.n_touched):
            s = self.touched[q]
            self.delta[s] = 0.0
            self.is_touched[s] = 0
        self.n_touched = 0
        return 0

    cdef double largest_violation(self, Py_ssize_t* label) noexcept nogil:
        """max_p (F_low^p - F_up^p), refreshing the labels whose f changed."""
        cdef Py_ssize_t p, j
        cdef double f_up, f_low, largest = -INFINITY
        label[0] = -1
        for p in range(self.L):
            if self.stale[p]:
                self.violation[p] = self.extremes(p, &j, &f_up, &f_low)
                self.stale[p] = 0
            if self.violation[p] > largest:
                largest = self.violation[p]
                label[0] = p
        return largest

    cdef double objective(self) noexcept nogil:
        """h = 1/2 sum alpha~ (f + y) - sum alpha, from exact f (problem 10)."""
        cdef Py_ssize_t p, q
        cdef double value = 0.0
        for p in range(self.L):
            for q in range(self.n):
                value += self.alpha[p, q] * (0.5 * self.y[p, q] * (self.f[p, q] + self.y[p, q]) - 1.0)
        return value

    cdef int run(self, bint* converged, double* kkt) except -1:
        cdef Py_ssize_t label, steps_before
        cdef double largest
        cdef bint verified
        cdef Py_ssize_t p, q
        with nogil:
            for p in range(self.L):
                for q in range(self.n):
                    self.status[p, q] = status_of(self.y[p, q], self.alpha[p, q], self.C[p, q])
            if not self.gradient_given:
                self.reconstruct_all()
            self.dual = self.objective()
            if self.record:
                with gil:
                    self.dual_trace.append(self.dual)
            verified = True
            while True:
                largest = self.largest_violation(&label)
                if largest <= self.tol:
                    if verified or not self.verify:
                        break
                    self.reconstruct_all()
                    verified = True
                    continue
                if self.steps >= self.max_iter:
                    break
                steps_before = self.steps
                self.visit(label, max(self.tol, VISIT_REDUCTION * largest))
                if self.steps == steps_before:
                    break
                verified = False
                if self.record:
                    with gil:
                        self.dual_trace.append(self.dual)
            if not verified and self.verify:
                self.reconstruct_all()
                largest = self.largest_violation(&label)
        converged[0] = largest <= self.tol
        kkt[0] = max(largest, 0.0)
        return 0

    def statistics(self):
        return {
            "label_steps": np.asarray(self.label_steps).tolist(),
            "label_visits": int(self.visits),
            "shrunk": int(self.shrunk),
            "reconstructions": int(self.reconstructions),
            "cache_hits": int(self.K.hits - self.hits_before),
            "cache_misses": int(self.K.misses - self.misses_before),
        }


def _check_same_shape(name, array, shape):
    if (array.shape[0], array.shape[1]) != shape:
        raise ValueError(f"{name} has shape {(array.shape[0], array.shape[1])}, expected {shape} (labels, samples)")


def _check_inputs(KernelColumns kernel, y, omega, C, alpha, double tol, Py_ssize_t max_iter):
    cdef Py_ssize_t n = kernel.n_samples, L = y.shape[0]
    if L == 0:
        raise ValueError("y has no labels")
    for name, array, shape in (("y", y, (L, n)), ("C", C, (L, n)), ("alpha", alpha, (L, n)), ("omega", omega, (L, L))):
        _check_same_shape(name, array, shape)
    Y, W, box, a = np.asarray(y), np.asarray(omega), np.asarray(C), np.asarray(alpha)
    if not np.all((Y == 1.0) | (Y == -1.0)):
        raise ValueError("y must hold signs -1 or +1 only")
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(box)) and np.all(np.isfinite(a))):
        raise ValueError("omega, C and alpha must be finite")
    if np.abs(W - W.T).max() > SYMMETRY_RTOL * np.abs(W).max():
        raise ValueError("omega must be symmetric")
    if np.any(box < 0.0):
        raise ValueError("C must be >= 0")
    if np.any(a < 0.0) or np.any(a > box):
        raise ValueError("alpha must lie in the box 0 <= alpha <= C")
    if np.any(np.abs((a * Y).sum(axis=1)) > EQUALITY_RTOL * np.maximum(1.0, box.sum(axis=1))):
        raise ValueError("alpha violates the equality constraints sum_j alpha_j^i y_j^i = 0")
    if not tol > 0.0 or tol == INFINITY:
        raise ValueError(f"tol must be a finite number > 0, got {tol}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")


def solve_dual(
    KernelColumns kernel not None,
    const double[:, ::1] y,
    const double[:, ::1] omega,
    const double[:, ::1] C,
    double[:, ::1] alpha,
    double tol,
    Py_ssize_t max_iter,
    bint shrinking=True,
    bint record_dual=False,
    f0=None,
    bint verify=True,
):
    """Solve problem (10) in place from ``alpha`` (label-major arrays, shape (L, n)).

    Parameters
    ----------
    kernel : KernelColumns
        Columns and diagonal of the label-free kernel K (n x n).
    y : (L, n) signs; omega : (L, L) symmetric Omega~; C : (L, n) upper bounds >= 0.
    alpha : (L, n) feasible start (box and equality constraints), overwritten by the solution.
    tol : eps of the stopping rule max_i F_low^i - F_up^i <= eps.
    max_iter : largest number of SMO steps.
    f0 : (L, n), optional
        The exact gradient K B Omega~ - Y at ``alpha``, computed by the caller (e.g. for many
        labels at once in one matrix product): the engine then starts from it instead of
        recomputing it from kernel columns.
    verify : bool, default True
        Confirm the stopping rule on an exact recomputation of f before returning.  False
        stops as soon as the rule holds on the running gradients of the active variables,
        and returns those: the caller must then verify on exact gradients itself (and resume
        the labels that fail, with ``f0``), as :func:`multilabel_core.solvers.smo_solve`
        does for labels solved apart.

    Returns
    -------
    dict with ``f`` (L, n) the exact gradient K B Omega~ - Y at the returned alpha (with
    ``verify=False``: the running gradient, exact on the variables active at the end),
    ``n_iter`` (SMO steps), ``converged``, ``kkt_violation``, ``statistics`` and, with
    ``record_dual``, ``dual_trace`` (h after every label visit, maintained exactly by the
    step decreases).
    """
    _check_inputs(kernel, y, omega, C, alpha, tol, max_iter)
    cdef _LabelwiseSMO state = _LabelwiseSMO(kernel, y, omega, C, alpha, tol, max_iter, shrinking, record_dual)
    state.verify = verify
    if f0 is not None:
        gradient = np.asarray(f0, dtype=np.float64)
        if gradient.shape != (y.shape[0], kernel.n_samples) or not np.all(np.isfinite(gradient)):
            raise ValueError(f"f0 must be a finite (labels, samples) = {(y.shape[0], kernel.n_samples)} gradient")
        np.asarray(state.f)[:, :] = gradient
        state.gradient_given = True
    cdef bint converged = False
    cdef double kkt = 0.0
    state.run(&converged, &kkt)
    if not np.all(np.isfinite(state.f)):
        raise ValueError("the gradient f = K B Omega~ - Y overflowed: rescale the kernel, omega or C")
    result = {
        "f": np.asarray(state.f),
        "n_iter": int(state.steps),
        "converged": bool(converged),
        "kkt_violation": float(kkt),
        "statistics": state.statistics(),
    }
    if record_dual:
        result["dual_trace"] = list(state.dual_trace)
    return result
