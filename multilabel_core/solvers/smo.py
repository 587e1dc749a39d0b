"""SMO for the MLRL dual family: one equality constraint per label, a label-free kernel.

Notation of Zhang & Yeung, Multi-Label Relationship Learning (ACM TKDD), sections 2-4 and
Appendix A.  n examples, L labels, Y (n, L) signs y_j^i, K (n, n) the kernel of the training
rows, Omega~ (L, L) a symmetric label coupling, C (n, L) per-variable upper bounds (or one
number).  The primal is::

    min_{W, b, xi}  1/2 tr(W Omega~^-1 W^T) + sum_ij C_j^i xi_j^i                    (P)
    s.t.  y_j^i (w_i^T phi(x_j) + b_i) >= 1 - xi_j^i,  xi >= 0,

whose Lagrange dual, written as a minimisation as in the paper, is::

    min_alpha  h(alpha) = 1/2 vec(B)^T (Omega~ (x) K) vec(B) - sum_ij alpha_j^i      (10)
    s.t.  sum_j alpha_j^i y_j^i = 0 (each label i),  0 <= alpha_j^i <= C_j^i,

with B = alpha * Y (elementwise).  At a dual point the primal weights are
W = phi(X)^T B Omega~, so the scores on the training rows are ``K B Omega~ + b`` and on
new rows ``K(X_new, X) B Omega~ + b`` (:func:`kernel_expansion` with ``dual_coef =
B Omega~``).  The paper's parameterisations are instances:

- MLRL, problem (6)-(10): ``(1/n) sum hinge + lambda/2 tr(W Omega^-1 W^T)`` is (P)
  divided by lambda with Omega~ = Omega and C = 1/(n lambda); the paper's alpha (box
  1/n, kernel Omega/lambda (x) K) is lambda times ours and its dual objective lambda
  times ours.  Passing ``omega = Omega / lambda`` and ``C = 1/n`` solves (10) in the
  paper's own scaling instead: both give the same W and b.
- BSVM, eq. (12): Omega~ = I / lambda, C = 1/n; equivalently Omega~ = I and
  C = 1/(n lambda), which is, label by label, exactly the dual that scikit-learn's SVC
  (LIBSVM) solves with ``C_svc = 1/(n lambda)``: ``alpha = alpha_svc`` there, and in the
  paper's scaling ``alpha = lambda alpha_svc`` and ``h = lambda h_svc``.
- SSMLRL, problem (21): the same dual with the data-dependent kernel of eq. (22) as K
  (pass it precomputed), Omega~ = Omega / lambda_1 and C = 1/l.

The certificate of a solve reports the primal (P) at the returned (W, b), the Lagrange
dual ``D = -h`` (so that ``gap = P - D >= 0`` by weak duality when Omega~ and K are
positive semi-definite), the largest KKT violation ``max_i F_low^i - F_up^i``, the SMO
steps, and the statistics of the kernel (multilabel_core/solvers/_smo.pyx explains the
algorithm).  Using ``1/2 tr(W Omega~^-1 W^T) = 1/2 sum B * (K B Omega~)`` both objectives
come from the gradient f = K B Omega~ - Y the solver returns, in O(nL).
"""

from __future__ import annotations

import numbers
import time
from typing import Any, ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from .._blocks import row_blocks
from ..base import CapabilityError, Fit, Kernel, Problem, RelationState, Solution, Solver, WarmState, warm_state_of
from ..certificate import GAP_RTOL, Certificate
from ..parallel import blas_limited, effective_threads, map_threads, n_jobs_field
from ..parameter_names import DEPRECATED, renamed_argument
from ..validation import (
    MAX_ITER_LIMIT,
    check_scalar,
    check_signs,
    check_symmetric,
    check_X,
    flag,
    optional_count,
    positive,
)
from ._convergence import tighten_to_relative_gap, warn_not_converged
from ._kernel_cache import KernelColumns
from ._smo import solve_dual

__all__ = ["KernelSource", "SMOSolver", "kernel_expansion", "relation_statistics", "smo_solve"]

_MEGABYTE = 2**20

#: Relative distance to a bound within which an alpha recovered from dual_coef is put on it.
_BOUND_RTOL = 1e-10


@attrs.frozen(eq=False)
class KernelSource:
    """The kernel matrix ``kernel(X, X)`` of training rows X, computed when needed.

    :func:`smo_solve` computes it whole when ``n^2`` float64 values fit its
    ``cache_size`` budget (MB) and otherwise one column at a time, keeping the most recently
    used columns (an LRU cache of ``cache_size``).  The kernel must be resolved (its
    data-dependent defaults fixed, e.g. ``RBFKernel().resolve(X)``) and provide
    ``diagonal(X)``; X may be dense or sparse and is never densified.

    A kernel with explicit features (``explicit_features``, ``k(x, z) = phi(x)^T phi(z)``:
    :mod:`multilabel_core.kernel_approximation`) is never computed whole: its features
    ``Phi = phi(X)`` (n, m) are computed once, a column is ``Phi phi(x_j)`` (O(n m)) and a product
    ``K B`` is ``Phi (Phi^T B)``; the solve holds the n m numbers of the features and an LRU cache
    of ``cache_size`` MB of columns (at most n of them), never the n^2 of the matrix.  The cache
    trades memory for time: a column it does not hold costs an (n, m) product again, and SMO's
    label-by-label solves revisit evicted columns (measured for BSVM on corel16k001 in
    benchmarks/RESULTS.md, "The Nystroem kernel without the n x n matrix").

    Parameters
    ----------
    kernel : Kernel
        The resolved kernel, not precomputed, with ``diagonal(X)``.
    X : ndarray or sparse matrix of shape (n, d)
        The training rows (validated by :func:`~multilabel_core.validation.check_X`).

    Raises
    ------
    ValueError
        If the kernel is precomputed (SMO takes the matrix itself then) or has no
        ``diagonal``, or ``X`` is invalid.
    """

    kernel: Kernel = attrs.field(validator=attrs.validators.instance_of(Kernel))
    X: Any = attrs.field(converter=check_X)
    _phi: Any = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self):
        if self.kernel.precomputed:
            raise ValueError("a precomputed kernel is passed to smo_solve as the matrix itself, not as a KernelSource")
        if not callable(getattr(self.kernel, "diagonal", None)):
            raise ValueError(f"{type(self.kernel).__name__} provides no diagonal(X), which SMO needs for its curvatures")
        if getattr(self.kernel, "explicit_features", False) and not callable(getattr(self.kernel, "features", None)):
            raise ValueError(
                f"{type(self.kernel).__name__} declares explicit_features but provides no features(X), from which "
                "SMO computes its kernel columns"
            )

    @property
    def n_samples(self) -> int:
        """Number of training rows."""
        return self.X.shape[0]

    @property
    def explicit(self) -> bool:
        """Whether the kernel is the inner product of explicit features (then K is never formed)."""
        return bool(getattr(self.kernel, "explicit_features", False))

    def features(self) -> np.ndarray:
        """Give the explicit features ``Phi = phi(X)``, computed on first use and kept.

        Returns
        -------
        ndarray of shape (n, m)
            The features of the training rows, C-contiguous float64.

        Raises
        ------
        ValueError
            If the kernel has no explicit features, or they hold NaN or infinity.
        """
        if not self.explicit:
            raise ValueError(f"{type(self.kernel).__name__} has no explicit features")
        if self._phi is None:
            Phi = np.ascontiguousarray(self.kernel.features(self.X), dtype=np.float64)
            if not np.all(np.isfinite(Phi)):
                raise ValueError(f"the features of {type(self.kernel).__name__} contain NaN or infinity")
            object.__setattr__(self, "_phi", Phi)
        return self._phi

    def matrix(self) -> np.ndarray:
        """Compute the full kernel matrix of the training rows.

        Returns
        -------
        ndarray of shape (n, n)
            ``kernel(X, X)``, C-contiguous float64.
        """
        return np.ascontiguousarray(self.kernel(self.X), dtype=np.float64)

    def diagonal(self) -> np.ndarray:
        """Compute the kernel diagonal of the training rows.

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)``, C-contiguous float64.
        """
        if self.explicit:
            Phi = self.features()
            return np.einsum("ij,ij->i", Phi, Phi)
        return np.ascontiguousarray(self.kernel.diagonal(self.X), dtype=np.float64)

    def fill_column(self, j: int, out: np.ndarray) -> None:
        """Write kernel column j into ``out`` (the callback of the column cache).

        Parameters
        ----------
        j : int
            The column, a training row index.
        out : ndarray of shape (n,)
            The float64 buffer that receives ``K[:, j]``.

        Raises
        ------
        ValueError
            If the column holds NaN or infinity.
        """
        if self.explicit:
            Phi = self.features()
            np.matmul(Phi, Phi[j], out=out)
            return
        out[:] = self.kernel(self.X, self.X[j : j + 1])[:, 0]
        if not np.all(np.isfinite(out)):
            raise ValueError(f"kernel column {j} contains NaN or infinity")

    def product(self, B: np.ndarray) -> np.ndarray:
        """Compute ``K B`` without storing K.

        Parameters
        ----------
        B : ndarray of shape (n, L)
            The right-hand side.

        Returns
        -------
        ndarray of shape (n, L)
            ``K B``: ``Phi (Phi^T B)`` with explicit features, else K computed in row blocks.
        """
        B = np.asarray(B, dtype=np.float64)
        if self.explicit:
            Phi = self.features()
            return Phi @ (Phi.T @ B)
        KB = np.empty_like(B)
        for rows in row_blocks(self.n_samples, 3 * 8 * self.n_samples):
            KB[rows] = self.kernel(self.X[rows], self.X) @ B
        return KB

    def cache_columns(self, cache_size: float) -> int:
        """Give the number of columns the LRU cache holds for a memory budget.

        Parameters
        ----------
        cache_size : float
            The budget in MB.

        Returns
        -------
        int
            At least 2 (the column cache caps it at n).
        """
        return max(2, int(cache_size * _MEGABYTE // (8 * self.n_samples)))

    def materialise(self, cache_size: float) -> bool:
        """Decide whether the solver computes K whole.

        Parameters
        ----------
        cache_size : float
            The budget in MB.

        Returns
        -------
        bool
            True when n^2 float64 values fit ``cache_size``; never with explicit features.
        """
        return not self.explicit and 8.0 * self.n_samples**2 <= cache_size * _MEGABYTE


def _kernel_columns(K_or_source, cache_size: float, n_jobs=None) -> KernelColumns:
    """Columns of K: the matrix given, the whole matrix when it fits the budget, else an LRU cache."""
    if isinstance(K_or_source, KernelSource):
        if K_or_source.materialise(cache_size):
            return KernelColumns(K_or_source.matrix(), n_jobs=n_jobs)
        return KernelColumns(
            compute=K_or_source.fill_column,
            diagonal=K_or_source.diagonal(),
            capacity=K_or_source.cache_columns(cache_size),
        )
    return KernelColumns(np.ascontiguousarray(K_or_source, dtype=np.float64), n_jobs=n_jobs)


def _box(C, shape: tuple[int, int]) -> np.ndarray:
    if isinstance(C, numbers.Real):
        check_scalar(C, "C", low=0.0)
        return np.full(shape, float(C))
    C = np.asarray(C, dtype=np.float64)
    if C.shape != shape:
        raise ValueError(f"C must be a number or an array of shape {shape}, got shape {C.shape}")
    if not np.all(np.isfinite(C)) or np.any(C < 0.0):
        raise ValueError("C must be finite and >= 0")
    return C


def _start(alpha0, C: np.ndarray) -> np.ndarray:
    if alpha0 is None:
        return np.zeros_like(C)
    alpha0 = np.asarray(alpha0, dtype=np.float64)
    if alpha0.shape != C.shape:
        raise ValueError(f"alpha0 must have shape {C.shape}, got {alpha0.shape}")
    if not np.all(np.isfinite(alpha0)):
        raise ValueError("alpha0 contains NaN or infinity")
    return alpha0.copy()


def _label_major(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array.T)


def _intercept(f: np.ndarray, Y: np.ndarray, C: np.ndarray) -> np.ndarray:
    """b_i: the midpoint of the interval of biases that minimise (P) for the returned W.

    With W fixed, (P) depends on b_i through ``g(b) = sum_j C_j^i [1 - y_j^i (s_j^i + b)]_+``
    (s = f + y the scores without bias), a convex piecewise-linear function whose kinks
    sit at ``b = -f_j^i`` whatever the class.  Its right derivative just after the t-th
    smallest kink is ``-P + (sum of the t smallest kinks' C)`` with P the total C of the
    positives, so the interval of minimisers is [the first kink where that sum reaches P,
    the first where it exceeds P] (unbounded on a side without positives or without
    negatives: a label with one class takes the one finite end).

    At an exact optimum these minimisers are the KKT interval -[F_low^i, F_up^i] of
    Appendix A (a point when some variable is free), so this is LIBSVM's rule there.
    Away from it the rule is what keeps fits comparable: the interval moves by at most
    ``max_j |s_j - s_j'|`` when the scores move (its ends are weighted order statistics
    of the kinks), while the KKT interval or a mean over the free variables jumps
    whenever a variable reaches or leaves a bound.  So two solves of one problem to a
    gap each (a warm and a cold start) return biases as close as their W, and the bias
    never increases the primal the certificate reports.
    """
    n, L = f.shape
    intercept = np.zeros(L)
    for i in range(L):
        order = np.argsort(-f[:, i], kind="stable")
        kinks, weights = -f[order, i], C[order, i]
        positives = float(C[Y[:, i] > 0, i].sum())
        total = float(weights.sum())
        # Rounding in the cumulative sums must not turn a flat stretch (the C of both
        # classes balanced exactly) into a kink, or the bias would jump with it.
        slack = 4.0 * n * np.finfo(np.float64).eps * max(total, np.finfo(np.float64).tiny)
        reached = np.cumsum(weights)
        low = kinks[np.argmax(reached >= positives - slack)] if positives > slack else -np.inf
        high = kinks[np.argmax(reached > positives + slack)] if total - positives > slack else np.inf
        if np.isfinite(low) and np.isfinite(high):
            intercept[i] = 0.5 * (low + high)
        elif np.isfinite(low) or np.isfinite(high):
            intercept[i] = low if np.isfinite(low) else high
    return intercept


def _feasible(alpha: np.ndarray, Y: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The warm start ``alpha`` moved into the feasible set of (10), by a move of the size of its violation.

    A start made for another problem (another C: a previous lambda of a grid) is
    feasible only up to rounding: rescaled alphas overshoot the new box by an ulp and
    the equality constraints ``sum_j y_j^i alpha_j^i = 0`` hold to rounding.  alpha is
    clipped into the box, the variables within ``_BOUND_RTOL`` of a bound are put on it
    (so the index sets of Appendix A, and the stopping test, see the bounds they are
    meant to be at), and the residual r_i of each equality is removed by moving every
    variable that has room in the direction that reduces it, each by the same fraction
    of its room (a fraction <= 1 keeps the box; the moves cancel r_i exactly in real
    arithmetic).
    """
    alpha = np.clip(alpha, 0.0, C)
    alpha[alpha <= _BOUND_RTOL * C] = 0.0
    at_top = alpha >= (1.0 - _BOUND_RTOL) * C
    alpha[at_top] = C[at_top]
    residual = (alpha * Y).sum(axis=0)
    # SMO's own iterates satisfy the equalities to rounding: a residual of that size is left
    # alone, so that a start at a returned alpha is not moved off its bounds.
    rounding = 4.0 * alpha.shape[0] * np.finfo(np.float64).eps * C.sum(axis=0)
    for i in np.flatnonzero(np.abs(residual) > rounding):
        # Decrease sum y alpha when it is positive: positives down, negatives up.  The free
        # variables move first, so that the variables at a bound stay there when they can.
        direction = -np.sign(residual[i]) * Y[:, i]
        room = np.where(direction > 0, C[:, i] - alpha[:, i], alpha[:, i])
        free = (alpha[:, i] > 0.0) & (alpha[:, i] < C[:, i])
        if room[free].sum() >= abs(residual[i]):
            room = np.where(free, room, 0.0)
        # Always enough: with r > 0 the positives alone hold sum alpha >= r of room (and
        # symmetrically for r < 0), so the fraction is at most 1.
        available = float(room.sum())
        fraction = min(1.0, abs(residual[i]) / available)
        alpha[:, i] = np.clip(alpha[:, i] + direction * fraction * room, 0.0, C[:, i])
    return alpha


def _certificate(f, alpha, Y, C, intercept, outcome, elapsed, extra) -> Certificate:
    """Primal (P), dual -h and gap from f = K B Omega~ - Y, in O(nL)."""
    B = alpha * Y
    # 1/2 tr(W Omega~^-1 W^T) = 1/2 vec(B)^T (Omega~ (x) K) vec(B).  Elementwise sums, not
    # np.vdot: BLAS dot products of this size are threaded, and slower for it.
    quadratic = 0.5 * float((B * (f + Y)).sum())
    margins = Y * (f + Y + intercept)
    primal = quadratic + float((C * np.maximum(0.0, 1.0 - margins)).sum())
    dual = float(alpha.sum()) - quadratic
    return Certificate.from_objectives(
        primal,
        dual,
        kkt_violation=outcome["kkt_violation"],
        n_iter=outcome["n_iter"],
        time=elapsed,
        converged=outcome["converged"],
        solver="SMO",
        statistics=outcome["statistics"] | extra,
    )


#: Smallest eps of the stopping rule.  The gradients f = K B Omega~ - Y that the rule compares are of
#: order one (Y = +-1), so their rounding alone is about 1e-16: a smaller eps can never be met, and a
#: solve would spend its whole step budget (10^7 steps) only to stop short of it.
SMO_TOL_FLOOR = 1e-15


def check_smo_tol(tol, name: str = "tol") -> float:
    """Validate SMO's stopping tolerance.

    Parameters
    ----------
    tol : float
        The tolerance, a real number >= :data:`SMO_TOL_FLOOR`.
    name : str, default="tol"
        The parameter's name, for the error message.

    Returns
    -------
    float
        ``tol`` as a float.

    Raises
    ------
    ValueError
        If ``tol`` is not a positive real number or is below :data:`SMO_TOL_FLOOR`.
    """
    check_scalar(tol, name, low=0.0, low_inclusive=False)
    if tol < SMO_TOL_FLOOR:
        raise ValueError(
            f"{name}={tol:g} is below {SMO_TOL_FLOOR:g}, finer than float64 resolves SMO's stopping rule (its "
            f"gradients are of order one); use {name} >= {SMO_TOL_FLOOR:g}"
        )
    return float(tol)


def _tol_validator(instance, attribute, value) -> None:
    check_smo_tol(value, attribute.name)


def smo_solve(
    K_or_source,
    Y,
    omega,
    C,
    *,
    alpha0=None,
    tol: float = 1e-3,
    max_iter: int | None = None,
    shrinking: bool = True,
    cache_size: float = 200.0,
    record_dual: bool = False,
    n_jobs: int | None = None,
    cache_size_mb=DEPRECATED,
) -> Fit:
    """Solve the dual (10) of (P) by SMO (module docstring; algorithm in ``_smo.pyx``).

    Parameters
    ----------
    K_or_source : ndarray (n, n) or KernelSource
        The label-free kernel: a precomputed symmetric matrix, or a
        :class:`KernelSource` (computed whole when it fits ``cache_size``, else by
        columns through an LRU cache of that size).
    Y : (n, L) signs in {-1, +1}.
    omega : (L, L) symmetric Omega~ (positive semi-definite normally; an indefinite one
        still terminates through the tau fallback, without the weak-duality guarantee).
    C : float or (n, L) array of upper bounds >= 0.
    alpha0 : (n, L), optional
        Warm start, e.g. ``previous.alpha`` after an update of Omega~; it must be
        feasible (box and equality constraints, as every returned alpha is).
    tol : float, default 1e-3
        eps of the stopping rule ``max_i F_low^i - F_up^i <= eps`` (LIBSVM's default); at least
        :data:`SMO_TOL_FLOOR` (1e-15: below it float64 cannot resolve the rule, ValueError).
    max_iter : int, optional
        Largest number of SMO steps; default ``max(10^7, 100 n L)``.  Reaching it
        issues a :class:`~multilabel_core.solvers.ConvergenceWarning`.
    shrinking : bool, default True
        Shrink bounded variables per label (same solution either way).
    cache_size : float, default 200
        Memory in MB for kernel columns when K is computed from a KernelSource (the methods'
        ``cache_size``).
    record_dual : bool, default False
        Debug mode: ``certificate.statistics["dual_trace"]`` lists h (objective (10),
        minimised) at the start and after every label visit.
    n_jobs : int or None, default None
        Threads for the labels when Omega~ is diagonal (BSVM): then (10) is L separate SVM
        duals, solved apart (always, so the result does not depend on ``n_jobs``) with
        ``ceil(max_iter / L)`` steps each, side by side when K is a matrix (a column cache is not shared
        between threads).  None is the thread budget the caller leaves
        (:mod:`multilabel_core.parallel`), -1 every core.
    cache_size_mb : float, default "deprecated"
        Deprecated name of ``cache_size``; accepted with a FutureWarning for this release.

    Returns
    -------
    Fit
        ``solution.dual`` is alpha (n, L) (pass it as ``alpha0`` to warm-start the next
        solve), ``solution.dual_coef`` is ``B Omega~`` with B = alpha * Y (decision values
        on new rows are ``K(X_new, X) dual_coef + intercept``, :func:`kernel_expansion`),
        ``solution.intercept`` the biases b, and ``solution.model_state`` holds ``"scores"``,
        the decision values on the training rows ``K B Omega~ + b``.
    """
    start = time.perf_counter()
    check_smo_tol(tol)
    cache_size = renamed_argument("smo_solve", "cache_size_mb", "cache_size", cache_size_mb, cache_size, 200.0)
    check_scalar(cache_size, "cache_size", low=0.0, low_inclusive=False)
    for name, switch in (("shrinking", shrinking), ("record_dual", record_dual)):
        if not isinstance(switch, (bool, np.bool_)):
            raise ValueError(f"{name} must be a bool, got {switch!r}")
    if not isinstance(K_or_source, KernelSource):
        if sp.issparse(K_or_source):
            raise ValueError("K (a kernel matrix, or a KernelSource) is sparse, but a dense array is required")
        if isinstance(K_or_source, Kernel):
            raise ValueError(
                f"K must be a kernel matrix or a KernelSource; wrap the {type(K_or_source).__name__} as "
                "KernelSource(kernel.resolve(X), X)"
            )
    # The kernel cache checks a matrix (square, finite, symmetric) in one tiled pass without the GIL.
    effective_threads(n_jobs)  # validates it
    columns = _kernel_columns(K_or_source, cache_size, n_jobs)
    n = columns.n_samples
    Y = check_signs(Y, n)
    omega = check_symmetric(omega, "omega")
    if omega.shape != (Y.shape[1], Y.shape[1]):
        raise ValueError(f"omega must have shape ({Y.shape[1]}, {Y.shape[1]}), got {omega.shape}")
    C = _box(C, Y.shape)
    alpha = _start(alpha0, C)
    if max_iter is None:
        max_iter = min(max(10**7, 100 * Y.size), MAX_ITER_LIMIT)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=0, high=MAX_ITER_LIMIT)
    product = K_or_source.product if isinstance(K_or_source, KernelSource) and K_or_source.explicit else None
    return _solve(
        columns, Y, omega, C, alpha, float(tol), int(max_iter), bool(shrinking), bool(record_dual), start, n_jobs=n_jobs,
        product=product,
    )


def _independent(omega: np.ndarray) -> bool:
    """Whether Omega~ is diagonal: then (10) is L separate SVM duals (BSVM; MLRL's first round, Omega = I / L)."""
    return omega.shape[0] > 1 and not np.any(omega - np.diag(np.diag(omega)))


def _solve_dual(columns, y, omega, C, alpha_t, tol, max_iter, shrinking, record_dual, n_jobs, product=None) -> dict:
    """The engine on label-major arrays; with a diagonal Omega~, label by label on ``n_jobs`` threads.

    With Omega~ diagonal no label's gradient depends on another's alpha, so each label is solved
    alone, always (whatever ``n_jobs``: the result must not depend on the thread count, and the
    joint schedule's visits depend on all labels' violations), each with an equal share
    ``ceil(max_iter / L)`` of the budget (so that the total stays ``max_iter``, whatever the threads).
    A precomputed K is read-only and shared by the threads; a column cache is not thread-safe
    (and computes its columns holding the GIL), so its labels run one after the other.

    Exact gradients, the engine's costliest part (a pass over K for each label's), are computed for
    all labels at once, as one product K B Omega~ (one pass over K however many labels): the start's
    when alpha is a warm start, and the confirmation of the stopping rule, after which the labels
    that fail it resume from the exact gradient.  The outcome is the joint call's: f stacked, steps
    summed, converged when every label is, the largest violation, statistics summed, and (with
    ``record_dual``, which confirms each label in its own solve) the dual trace of the labels solved
    in order.

    ``product(B) = K B`` (n, L), given with a column cache when K has a cheaper product than its
    columns (explicit features: ``Phi (Phi^T B)``, O(n m L), where the engine's recomputation from
    columns costs O(n m) per support vector): the exact gradients then come from it as from a matrix.
    """
    K = columns.precomputed_matrix()
    if K is not None:
        product = lambda B: _kernel_product(K, B, n_jobs)  # noqa: E731
    if not _independent(omega):
        f0 = None
        if product is not None and K is None and np.any(alpha_t):
            # A warm start's gradient in one product, not one kernel column per support vector.
            f0 = np.ascontiguousarray((product((alpha_t * y).T) @ omega).T - y)
        outcome = solve_dual(columns, y, omega, C, alpha_t, tol, max_iter, shrinking, record_dual, f0=f0)
        return outcome | {"budget_reached": outcome["n_iter"] >= max_iter}
    n_labels = y.shape[0]
    max_iter = -(-max_iter // n_labels)  # each label's share of the budget
    weights = np.ascontiguousarray(np.diag(omega))

    def one(i: int, f0=None, budget=max_iter, verify=True) -> dict:
        # alpha_t[i : i + 1] is a view: the engine writes label i's solution in place.
        return solve_dual(
            columns, y[i : i + 1], weights[i : i + 1, None], C[i : i + 1], alpha_t[i : i + 1], tol, budget, shrinking,
            record_dual, f0=f0, verify=verify,
        )

    if record_dual or product is None:
        outcomes = map_threads(one, range(n_labels), n_jobs if K is not None else 1)
        return _merged(outcomes, np.vstack([o["f"] for o in outcomes]), max_iter, record_dual)
    # A column cache is not thread-safe: its labels run one after the other.
    threads = n_jobs if K is not None else 1

    def gradient() -> np.ndarray:
        return np.ascontiguousarray((product((alpha_t * y).T) * weights).T - y)

    f = gradient() if np.any(alpha_t) else -np.asarray(y)
    outcomes, steps, pending = [None] * n_labels, np.zeros(n_labels, dtype=np.int64), list(range(n_labels))
    while pending:
        resumed = map_threads(
            lambda i: one(i, f0=f[i : i + 1], budget=int(max_iter - steps[i]), verify=False), pending, threads
        )
        for i, outcome in zip(pending, resumed):
            steps[i] += outcome["n_iter"]
            outcomes[i] = outcome if outcomes[i] is None else _added(outcomes[i], outcome)
        f = gradient()
        violation = _violations(f, y, alpha_t, C)
        # A label resumes while it violates the rule on exact gradients, has budget left and moved.
        pending = [
            i for i, outcome in zip(pending, resumed)
            if violation[i] > tol and steps[i] < max_iter and outcome["n_iter"] > 0
        ]  # fmt: skip
    for i, outcome in enumerate(outcomes):
        outcome["kkt_violation"] = max(float(violation[i]), 0.0)
        outcome["converged"] = bool(violation[i] <= tol)
    return _merged(outcomes, f, max_iter, False)


#: Rows of K per block of :func:`_kernel_product` (fixed, so that the blocks do not depend on the threads).
_PRODUCT_BLOCK_ROWS = 256


def _kernel_product(K: np.ndarray, B: np.ndarray, n_jobs) -> np.ndarray:
    """``K @ B`` in fixed blocks of rows on the label threads, each block one single-threaded BLAS call.

    The same calls for every ``n_jobs`` (the result does not depend on the threads), and no BLAS
    threads of its own: OpenBLAS's threads keep spinning for a while after a product, and the
    label solves that follow on the same cores ran 1.3-1.5 times slower beside them.
    """
    n = K.shape[0]
    out = np.empty((n, B.shape[1]))
    blocks = [slice(start, min(start + _PRODUCT_BLOCK_ROWS, n)) for start in range(0, n, _PRODUCT_BLOCK_ROWS)]

    def block(rows: slice) -> None:
        np.matmul(K[rows], B, out=out[rows])

    with blas_limited(1):
        map_threads(block, blocks, n_jobs)
    return out


def _violations(f, y, alpha, C) -> np.ndarray:
    """Per label, F_low - F_up of Appendix A (max over B_i minus min over A_i of f): the stopping rule's quantity."""
    positive = y > 0
    can_increase = np.where(positive, alpha < C, alpha > 0)
    can_decrease = np.where(positive, alpha > 0, alpha < C)
    f_up = np.where(can_increase, f, np.inf).min(axis=1)
    f_low = np.where(can_decrease, f, -np.inf).max(axis=1)
    return f_low - f_up


def _added(first: dict, then: dict) -> dict:
    """A label's outcome over two engine calls (the second resumed from the first's point)."""
    statistics = {
        key: [a + b for a, b in zip(first["statistics"][key], then["statistics"][key])] if key == "label_steps"
        else first["statistics"][key] + then["statistics"][key]
        for key in first["statistics"]
    }
    return then | {"n_iter": first["n_iter"] + then["n_iter"], "statistics": statistics}


def _merged(outcomes: list[dict], f: np.ndarray, max_iter: int, record_dual: bool) -> dict:
    """The labels' outcomes as one joint call's (f given, exact)."""
    statistics = {"label_steps": [o["statistics"]["label_steps"][0] for o in outcomes], "labels_solved_apart": True}
    for key in ("label_visits", "shrunk", "reconstructions", "cache_hits", "cache_misses"):
        statistics[key] = sum(o["statistics"][key] for o in outcomes)
    outcome = {
        "f": f,
        "n_iter": sum(o["n_iter"] for o in outcomes),
        "converged": all(o["converged"] for o in outcomes),
        "kkt_violation": max(o["kkt_violation"] for o in outcomes),
        "statistics": statistics,
        "budget_reached": any(n >= max_iter for n in statistics["label_steps"]),
    }
    if record_dual:
        # h is a sum over labels: while label i moves, the others sit at their final (p < i) or first (p > i) value.
        first = np.array([o["dual_trace"][0] for o in outcomes])
        last = np.array([o["dual_trace"][-1] for o in outcomes])
        trace = []
        for i, o in enumerate(outcomes):
            rest = float(last[:i].sum() + first[i + 1 :].sum())
            trace.extend(value + rest for value in (o["dual_trace"] if i == 0 else o["dual_trace"][1:]))
        outcome["dual_trace"] = trace
    return outcome


def _solve(
    columns, Y, omega, C, alpha, tol, max_iter, shrinking, record_dual, start, warn=True, n_jobs=None, product=None
) -> Fit:
    """SMO on validated inputs: what :func:`smo_solve` and :class:`SMOSolver` share (``warn=False``:
    a stop short of the rule is the caller's to report; ``product``: see :func:`_solve_dual`)."""
    alpha_t = _label_major(alpha)
    outcome = _solve_dual(
        columns, _label_major(Y), omega, _label_major(C), alpha_t, tol, max_iter, shrinking, record_dual, n_jobs,
        product,
    )
    alpha, f = alpha_t.T.copy(), outcome["f"].T.copy()
    intercept = _intercept(f, Y, C)
    route = "explicit features" if product is not None and not columns.precomputed else "column cache"
    extra = {"kernel": "precomputed" if columns.precomputed else route, "cache_columns": int(columns.capacity)}
    if record_dual:
        extra["dual_trace"] = outcome["dual_trace"]
    certificate = _certificate(f, alpha, Y, C, intercept, outcome, time.perf_counter() - start, extra)
    if warn and not certificate.converged:
        reason = (
            f"max_iter={max_iter} steps reached"
            if outcome["budget_reached"]
            else "no step could make progress (the kernel, omega or C overflow float64: rescale them)"
        )
        warn_not_converged("SMO", f"{reason}; KKT violation {certificate.kkt_violation:.3g} > tol={tol:.3g}")
    return Fit(_solution(f, alpha, Y, omega, intercept), certificate)


def _solution(f, alpha, Y, omega, intercept) -> Solution:
    """SMO's Solution at a feasible alpha of (10), from its gradient f = K B Omega~ - Y and bias."""
    return Solution(
        coef=None,
        intercept=intercept,
        dual_coef=(alpha * Y) @ omega,
        dual=alpha,
        model_state={"scores": f + Y + intercept},
        warm_state=WarmState("SMOSolver", scaled={"dual": alpha}),
    )


def kernel_expansion(kernel: Kernel, X_new, X_train, dual_coef, intercept) -> np.ndarray:
    """Compute the decision values ``K(X_new, X_train) dual_coef + intercept`` in row blocks.

    ``kernel`` is the (resolved) kernel of the training rows; with a precomputed kernel,
    ``X_new`` holds the rows ``K(x_new, X_train)`` and ``X_train`` the training kernel.
    Only one block of kernel rows is held at a time.  A kernel with explicit features
    (``k(x, z) = phi(x)^T phi(z)``) forms no kernel rows at all: the expansion is the primal
    ``phi(X_new) W + intercept`` with ``W = phi(X_train)^T dual_coef`` (m, L), the same sum in
    another order (O((n + m_new) m) memory instead of a block of (m_new, n) kernel rows).

    Parameters
    ----------
    kernel : Kernel
        The resolved kernel of the training rows.
    X_new : ndarray or sparse matrix of shape (m, d)
        The rows to score (with a precomputed kernel, ``K(x_new, X_train)`` of shape (m, n)).
    X_train : ndarray or sparse matrix of shape (n, d)
        The training rows (with a precomputed kernel, the training kernel).
    dual_coef : array_like of shape (n, L)
        The kernel expansion's coefficients.
    intercept : array_like of shape (L,)
        The per-label bias.

    Returns
    -------
    ndarray of shape (m, L)
        The decision values.

    Raises
    ------
    ValueError
        If the shapes of ``dual_coef`` and ``intercept`` do not match the training rows.
    """
    dual_coef = np.asarray(dual_coef, dtype=np.float64)
    intercept = np.asarray(intercept, dtype=np.float64)
    n_train = np.shape(X_train)[0]
    if dual_coef.ndim != 2 or dual_coef.shape[0] != n_train or intercept.shape != (dual_coef.shape[1],):
        raise ValueError(
            f"dual_coef must be ({n_train}, L) and intercept (L,), got {dual_coef.shape} and {intercept.shape}"
        )
    X_new = check_X(X_new, name="X_new")
    scores = np.empty((X_new.shape[0], dual_coef.shape[1]))
    if getattr(kernel, "explicit_features", False):
        weights = kernel.features(X_train).T @ dual_coef
        for rows in row_blocks(X_new.shape[0], 2 * 8 * weights.shape[0]):
            scores[rows] = kernel.features(X_new[rows]) @ weights + intercept
        return scores
    for rows in row_blocks(X_new.shape[0], 2 * 8 * n_train):
        scores[rows] = kernel(X_new[rows], X_train) @ dual_coef + intercept
    return scores


def _warm_alpha(state: WarmState, Y: np.ndarray, omega: np.ndarray, C: float) -> np.ndarray:
    """alpha to start from: the warm state's ``dual``, else recovered from its ``dual_coef`` (another solver's).

    ``dual`` is exact; the recovery solves with omega and loses cond(omega) * eps, which
    matters when omega is close to singular (a learned label covariance can be).  Either
    is made feasible for this problem's box by :func:`_feasible` (the Solution may come
    from another C, e.g. the previous point of a grid of lambdas).
    """
    if state.get("dual") is None:
        if state.get("dual_coef") is None:
            raise ValueError("SMOSolver warm-starts from dual variables (dual or dual_coef), and this warm start has none")
        alpha = _alpha_from_dual_coef(state.get("dual_coef"), Y, omega)
    else:
        alpha = np.asarray(state.get("dual"), dtype=np.float64)
        if alpha.shape != Y.shape:
            raise ValueError(f"warm start dual has shape {alpha.shape}, expected {Y.shape}")
        if not np.all(np.isfinite(alpha)):
            raise ValueError("warm start dual contains NaN or infinity")
    return _feasible(alpha, Y, _box(C, Y.shape))


def _alpha_from_dual_coef(dual_coef, Y: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """alpha from a previous point's ``dual_coef = (alpha * Y) Omega~``, up to the rounding of the solve."""
    dual_coef = np.asarray(dual_coef, dtype=np.float64)
    if dual_coef.shape != Y.shape:
        raise ValueError(f"warm start dual_coef has shape {dual_coef.shape}, expected {Y.shape}")
    try:
        B = np.linalg.solve(omega, dual_coef.T).T
    except np.linalg.LinAlgError:
        raise ValueError("a warm start needs an invertible label_gram to recover alpha from dual_coef") from None
    # The solve rounds: _feasible (the caller) clips into the box and puts back on their bound
    # the variables within round-off of it.
    return B * Y


#: The explicit-feature route's rounds: LIBLINEAR's projected-gradient bound eps of each dual
#: coordinate descent, and the bias feature's value as a multiple of the largest feature-row norm.
#: Each round starts from the previous one's duals; the first round that certifies (10) ends it.
FEATURE_CD_ROUNDS = ((0.1, 1.0), (0.01, 3.0))

#: Epochs each round of the explicit-feature route may take per label (LIBLINEAR's default budget).
FEATURE_CD_EPOCHS = 1000


def _balanced(alpha: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """alpha (n, L) in its box, moved onto ``sum_j y_j^i alpha_j^i = 0`` by shrinking the heavier class.

    Scaling the alphas of the class with the larger total by ``smaller / larger`` keeps every
    alpha in [0, C] and makes the two totals equal: a feasible point of (10), whose dual value
    is a lower bound whatever its distance to the optimum.
    """
    positive = Y > 0
    up = np.where(positive, alpha, 0.0).sum(axis=0)
    down = np.where(positive, 0.0, alpha).sum(axis=0)
    # A class is shrunk only when it is the heavier one, so its total is positive where divided by.
    shrink_up = np.divide(down, up, out=np.ones_like(up), where=up > down)
    shrink_down = np.divide(up, down, out=np.ones_like(down), where=down > up)
    return np.where(positive, alpha * shrink_up, alpha * shrink_down)


def _solve_by_feature_cd(source: KernelSource, Y, weights, upper: float, alpha, n_jobs, start):
    """Solve (10) with a diagonal Omega~ on explicit features by linear dual coordinate descent.

    SMO reads two kernel columns per step, and on explicit features a column is an (n, m)
    product: at n = 10^4 the columns cost most of a fit, and beyond the column cache SMO
    recomputes them.  The linear dual coordinate descent of Hsieh et al. (*A dual coordinate
    descent method for large-scale linear SVM*, ICML 2008) costs O(m) per coordinate instead,
    but solves another problem: it has no equality constraint, so it learns the bias as the
    weight of a constant feature (regularised).  Its duals are therefore used as a point of
    (10), never as its answer:

    1. with Omega~ = diag(omega), label i's part of (10) is omega_i^-1 times the dual of a
       linear SVM on the features with cost ``omega_i C`` (substitute beta = omega_i alpha), so
       one call of :func:`~multilabel_core.solvers.cd.linear_svm_cd` with per-label costs
       solves every label (hinge loss, bias feature of value ``scaling * max_j ||phi(x_j)||``);
    2. alpha = beta / omega is moved onto the equality constraints (:func:`_balanced`), a
       feasible point of (10);
    3. its certificate is SMO's own (:func:`_certificate`: the gradient ``f = K B Omega~ - Y``
       from one product of the features, the bias that minimises (P) for those weights, the
       primal, the dual and their gap), so the answer is judged as SMO's would be.

    Rounds (:data:`FEATURE_CD_ROUNDS`) tighten eps and grow the bias feature (a larger one
    penalises the bias less, closer to the free bias of (P)) until the relative gap meets
    GAP_RTOL.  Returns ``(fit, alpha)``: the certified Fit, or None with the last feasible
    alpha (the caller's SMO continues from it).
    """
    from .cd import linear_svm_cd  # the linear engine's module imports nothing of this one

    Phi = source.features()
    scale = float(np.sqrt(np.max(np.einsum("ij,ij->i", Phi, Phi))))
    if not scale > 0.0:
        return None, alpha
    C = np.full(Y.shape, upper)
    beta = np.clip(alpha * weights, 0.0, weights * upper)
    epochs, updates = np.zeros(Y.shape[1], dtype=np.int64), np.zeros(Y.shape[1], dtype=np.int64)
    for rounds, (eps, factor) in enumerate(FEATURE_CD_ROUNDS, start=1):
        linear = linear_svm_cd(
            Phi, Y, weights * upper, loss="hinge", fit_intercept=True, intercept_scaling=factor * scale, tol=eps,
            max_iter=FEATURE_CD_EPOCHS, alpha0=beta, n_jobs=n_jobs, warn=False,
        )
        epochs += np.asarray(linear.certificate.statistics["n_epochs"], dtype=np.int64)
        updates += np.asarray(linear.certificate.statistics["n_updates"], dtype=np.int64)
        beta = np.asarray(linear.solution.dual)
        alpha = _balanced(beta / weights, Y)
        f = source.product(alpha * Y) * weights - Y
        violation = _violations(f.T, Y.T, alpha.T, C.T)
        outcome = {
            "kkt_violation": max(float(violation.max()), 0.0),
            "n_iter": int(updates.sum()),
            "converged": False,
            "statistics": {
                "label_steps": updates.tolist(), "labels_solved_apart": True, "route": "dual coordinate descent",
                "cd_epochs": epochs.tolist(), "cd_rounds": rounds, "cd_eps": eps,
                "intercept_scaling": factor * scale, "cache_hits": 0, "cache_misses": 0,
            },
        }
        extra = {"kernel": "explicit features", "cache_columns": 0}
        intercept = _intercept(f, Y, C)
        certificate = _certificate(f, alpha, Y, C, intercept, outcome, time.perf_counter() - start, extra)
        if certificate.relative_gap <= GAP_RTOL:
            solution = _solution(f, alpha, Y, np.diag(weights), intercept)
            return Fit(solution, attrs.evolve(certificate, converged=True)), alpha
    return None, alpha


@attrs.frozen
class SMOSolver(Solver):
    """Kernel hinge-loss problems with a label coupling, solved in the dual (10) by SMO.

    Solves the :class:`~multilabel_core.base.Problem` primal
    ``regularizer(W) + C * hinge(Y, K W + 1 b^T)`` when the regulariser is
    ``1/2 tr(W M^-1 W^T)`` and provides ``label_gram(L) = M``: that is (P) with
    Omega~ = M and the box ``loss.dual_box(C) = (0, C)``, so no rescaling happens here
    (MLRL's lambda enters as C = 1/(n lambda); see :mod:`multilabel_core.solvers.smo`).
    Any kernel; the bias b is part of the model (``fit_intercept`` must be true: it is
    what gives the dual its equality constraints).

    Returns ``Solution(coef=None, dual_coef=(alpha * Y) M, intercept=b, dual=alpha)``, so
    decision values are ``kernel(X_new, X) @ dual_coef + b`` as for every kernel solver.
    A warm start continues from the given Solution's warm state, its ``dual`` (alpha), or
    from alpha recovered from a ``dual_coef`` through M^-1 when the state is another's (a
    Solution built by hand, :func:`~multilabel_core.base.warm_state_of`).  Fitted attribute:
    ``alpha_``, the dual variables in the composing estimator's objective units.

    Parameters
    ----------
    tol : float, default 1e-3
        eps of the stopping rule ``max_i F_low^i - F_up^i <= eps``; at least :data:`SMO_TOL_FLOOR`.
    max_iter : int or None, default None
        Largest number of SMO steps (None: ``max(10^7, 100 n L)``).
    shrinking : bool, default True
        LIBSVM's shrinking of the working set.
    cache_size : float, default 200
        Kernel memory in MB (the methods' ``cache_size``): K is precomputed when it fits, else
        columns are LRU-cached.
    n_jobs : int or None, default None
        Threads for the labels when ``label_gram`` is diagonal (BSVM; see :func:`smo_solve`).
    feature_cd : bool, default True
        With a kernel of explicit features, a diagonal ``label_gram`` (BSVM, MLRL's first
        step) and more rows than the column cache holds (SMO would recompute evicted columns, an
        (n, m) product each), first solve by linear dual coordinate descent on the features and certify its duals,
        made feasible, as a point of (10) (:func:`_solve_by_feature_cd`), SMO finishing only when
        that certificate misses GAP_RTOL; False always runs SMO on kernel columns.  The same
        problem and certificate either way.
    cache_size_mb : float, default "deprecated"
        Deprecated name of ``cache_size``; accepted with a FutureWarning for this release.
    """

    tol: float = attrs.field(default=1e-3, validator=_tol_validator)
    max_iter: int | None = attrs.field(
        default=None, validator=optional_count
    )
    shrinking: bool = attrs.field(default=True, validator=flag)
    cache_size: float = attrs.field(
        default=200.0, validator=positive
    )
    n_jobs: int | None = n_jobs_field()
    feature_cd: bool = attrs.field(default=True, validator=flag)
    cache_size_mb: Any = attrs.field(default=DEPRECATED, kw_only=True, repr=False)

    def __attrs_post_init__(self):
        if not (isinstance(self.cache_size_mb, str) and self.cache_size_mb == DEPRECATED):
            value = renamed_argument(
                "SMOSolver", "cache_size_mb", "cache_size", self.cache_size_mb, self.cache_size, 200.0
            )
            positive(self, attrs.fields(type(self)).cache_size_mb, value)
            # Frozen: the old spelling's value becomes the field the solver reads.
            object.__setattr__(self, "cache_size", value)
            object.__setattr__(self, "cache_size_mb", DEPRECATED)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("dual_box", "dual_diagonal"),
        "regularizer": ("label_gram",),
    }
    warm_state_names: ClassVar[dict[str, str]] = {"dual": "scaled: alpha (n, L) in the box [0, C], to start from"}
    model_state_names: ClassVar[dict[str, str]] = {"scores": "the decision values on the training rows (n, L)"}
    fitted_attributes: ClassVar[dict[str, str]] = {"dual": "alpha_"}
    objective_units: ClassVar[frozenset] = frozenset({"dual"})

    def check(self, problem: Problem) -> None:
        """Check the capabilities SMO uses: an SVM-type loss dual, a label coupling M, a fixed relation, a bias.

        The loss must have the hinge's dual: the box ``dual_box(C) = (0, U)`` with U finite and
        no quadratic term (``dual_diagonal(C) == 0``), so that (10) is the dual; any loss
        providing these capabilities runs here, whatever its class.

        Parameters
        ----------
        problem : Problem
            The problem to be solved.

        Raises
        ------
        CapabilityError
            If a part lacks a capability SMO requires, the loss's dual is not of that form,
            the relation is learned, or ``fit_intercept`` is False.
        """
        super().check(problem)
        name = type(self).__name__
        low, upper = problem.loss.dual_box(problem.C)
        diagonal = problem.loss.dual_diagonal(problem.C)
        if low != 0.0 or not np.isfinite(upper) or diagonal != 0.0:
            raise CapabilityError(
                f"{name} solves the dual (10), a box [0, U] with no quadratic term of its own; "
                f"{type(problem.loss).__name__} has dual_box = ({low}, {upper}) and dual_diagonal = {diagonal}"
            )
        if problem.relation.learned:
            raise CapabilityError(
                f"{name} solves for a fixed label relation, but {type(problem.relation).__name__} is learned: "
                "compose it with AlternatingSolver(inner=SMOSolver())"
            )
        if not problem.fit_intercept:
            raise CapabilityError(f"{name} needs fit_intercept=True: the bias gives the dual its equality constraints")

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        """Run SMO on the problem's dual (10), from ``warm_start`` when given.

        The problem's data were validated where it was built (the estimator's ``fit``), and
        its kernel computed from them: only the kernel matrix's own check (square,
        symmetric, finite, in the Cython cache) runs here.

        Parameters
        ----------
        problem : Problem
            The training problem (:meth:`check` says which ones SMO takes).
        warm_start : Solution or None, optional
            A point to continue from: its warm state's ``dual`` (alpha), else alpha recovered
            from its ``dual_coef``, made feasible for this problem's box; None starts at
            alpha = 0.

        Returns
        -------
        Fit
            ``solution.dual_coef`` the kernel expansion's coefficients, ``solution.dual`` the
            alphas, ``solution.model_state["scores"]`` the training scores and
            ``solution.relation_state`` the label-side quantities the alternating driver's
            relation step uses (:func:`relation_statistics`); the certificate of (10).

        Raises
        ------
        CapabilityError
            If SMO cannot solve ``problem`` (:meth:`check`).
        ValueError
            If the warm start holds no dual variables, or ones of the wrong shape or not finite.
        """
        start = time.perf_counter()
        self.check(problem)
        omega = np.asarray(problem.regularizer.label_gram(problem.n_labels), dtype=np.float64)
        _, upper = problem.loss.dual_box(problem.C)
        kernel = problem.kernel
        if kernel.precomputed:
            K = np.ascontiguousarray(problem.X, dtype=np.float64)
        else:
            source = KernelSource(kernel, problem.X)
            K = source.matrix() if source.materialise(self.cache_size) else None
        Y = np.asarray(problem.Y, dtype=np.float64)
        C = np.full(Y.shape, float(upper))
        state = warm_state_of(warm_start)
        alpha = np.zeros_like(C) if state is None else _warm_alpha(state, Y, omega, upper)
        weights = np.diag(omega).copy()
        fit = None
        if K is None and source.explicit and self.feature_cd and (omega.shape[0] == 1 or _independent(omega)) \
                and source.cache_columns(self.cache_size) < source.n_samples \
                and np.all(np.isfinite(weights) & (weights > 0.0)) and float(upper) > 0.0:
            # Explicit features, labels apart, and more columns than the cache holds (SMO would recompute the
            # evicted ones, an (n, m) product each): the linear route first, SMO only to finish what it leaves.
            fit, alpha = _solve_by_feature_cd(source, Y, weights, float(upper), alpha, self.n_jobs, start)
        if fit is None:
            fit = self._smo(K, source if K is None else None, Y, omega, C, alpha, start)
        B = fit.solution.dual * Y
        KB = K @ B if K is not None else source.product(B)
        statistics = relation_statistics(B, KB, omega, np.diag(K).copy() if K is not None else source.diagonal())
        return Fit(
            attrs.evolve(fit.solution, relation_state=statistics),
            attrs.evolve(fit.certificate, solver=type(self).__name__),
        )

    def _smo(self, K, source, Y, omega, C, alpha, start) -> Fit:
        """SMO itself on the matrix K, or on the columns of ``source`` (K None), from alpha, to the certified gap."""
        columns = KernelColumns(K, n_jobs=self.n_jobs) if K is not None else _kernel_columns(source, self.cache_size)
        product = source.product if K is None and source.explicit else None
        max_iter = min(max(10**7, 100 * Y.size), MAX_ITER_LIMIT) if self.max_iter is None else int(self.max_iter)

        def at(eps, previous):
            # Each tightening starts from the previous call's alphas: only the last digits move.
            alpha0 = alpha if previous is None else previous.solution.dual
            return _solve(
                columns, Y, omega, C, alpha0.copy(), eps, max_iter, bool(self.shrinking), False, start, False, self.n_jobs,
                product,
            )

        # LIBSVM's rule bounds the KKT violation, whose meaning in objective terms grows with C = 1/(n lambda):
        # at lambda = 1e-4 on 30 unscaled rows eps = 1e-3 left a relative gap of 1%.  "Converged" means the
        # certificate's relative gap meets GAP_RTOL, so eps is tightened until it does.
        # The steps of every tightening are counted: the last call's alone understate the work.
        fit, _ = tighten_to_relative_gap(at, float(self.tol), GAP_RTOL, name="SMO", counts=("label_steps",))
        return fit


def relation_statistics(B: np.ndarray, KB: np.ndarray, M: np.ndarray, kernel_diagonal: np.ndarray) -> RelationState:
    """Compute what a relation step and the joint certificate need from a kernel dual point B.

    With label coupling M the weights are ``W = phi(X)^T B M``; from ``KB = K B``:

    - ``dual_gram``: ``H = B^T K B`` (L, L), the matrix of the dual's quadratic term
      ``1/2 tr(H M)``, whose largest eigenvalue the joint certificate of an alternating
      solve needs;
    - ``weight_factor``: a factor F with ``F^T F = W^T W = M H M``, namely
      ``Lambda^(1/2) V^T M`` from H's eigendecomposition.  The relation step works from
      F: the trace norm of W is the sum of F's singular values, exact where W is rank
      deficient, where square roots of W^T W's eigenvalues would add sqrt(eps) ||W||;
    - ``regularizer_value``: ``1/2 tr(H M)``.

    H comes from K B, not from SMO's gradient ``K B M``: recovering it through M^-1 would
    lose cond(M) eps, and a learned covariance can be nearly singular.  H carries the
    rounding of K B, at most ``2 n eps |B|^T |K| |B|``, and ``|K_ij| <= max_i K_ii`` for a
    positive semi-definite kernel: eigenvalues of H within that bound are set to 0 (an H
    that is 0 up to rounding, e.g. identical rows, where the equality constraints give
    W = 0).  Larger negative ones are kept, for the relation to refuse (an indefinite kernel).

    Parameters
    ----------
    B : ndarray of shape (n, L)
        The dual point ``alpha * Y``.
    KB : ndarray of shape (n, L)
        ``K B``.
    M : ndarray of shape (L, L)
        The label coupling (the regulariser's ``label_gram``).
    kernel_diagonal : ndarray of shape (n,)
        The kernel diagonal, which bounds ``|K_ij|`` for the rounding allowance.

    Returns
    -------
    RelationState
        With ``dual_gram``, ``weight_factor`` and ``regularizer_value`` set.
    """
    H = B.T @ KB
    H = (H + H.T) / 2.0
    values, vectors = np.linalg.eigh(H)
    magnitude = np.abs(B).sum(axis=0)
    largest = float(np.max(np.abs(kernel_diagonal), initial=0.0))
    roundoff = 2.0 * B.shape[0] * np.finfo(np.float64).eps * largest * float(magnitude @ magnitude)
    values[np.abs(values) <= roundoff] = 0.0
    return RelationState(
        dual_gram=(vectors * values) @ vectors.T,
        weight_factor=np.sqrt(np.clip(values, 0.0, None))[:, None] * (vectors.T @ M),
        regularizer_value=0.5 * float(np.sum(H * M)),
    )
