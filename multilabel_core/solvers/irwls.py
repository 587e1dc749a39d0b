"""IRWLS for multi-output support vector regression (MSVR), with LIEML's sign-consistency term.

Perez-Cruz, Vazquez, Alarcon-Diana & Artes-Rodriguez, *An IRWLS procedure for SVR* (EUSIPCO
2000), and its multi-output form used by Tao, Xu & Geng, *Labeling Information Enhancement for
Multi-label Learning with Low-Rank Subspace* (LIEML), eqs. 8-15.  The problem, with scores
``F = K beta + 1 m^T`` (the representer theta_j = Phi^T beta_j), residuals ``e_i = u_i - f_i``,
``r_i = ||e_i||`` and ``q_ij = y_ij f_ij``::

    T2(beta, m) = 1/2 tr(beta^T K beta) + gamma1 sum_i Omega1(r_i) + gamma2 sum_ij Omega2(q_ij),
    Omega1(r) = (r - eps)_+^2  (eq. 9),      Omega2(q) = max(0, -q)  (eq. 10).

Each iteration freezes the weights ``a_i = Omega1'(r_i) / r_i`` (eq. 13) and
``sigma_ij = 1(q_ij <= 0)`` and minimises the quadratic model (14) -- whose sign term must read
``- gamma2 sum q sigma(-q)``, i.e. ``+ gamma2 sum Omega2``: the paper prints a plus, and its own
system (15) follows from the minus.  Substituting theta_j = Phi^T beta_j in (15) gives, for every
label j with the same matrix,

    (I + gamma1 D_a K) beta_j + gamma1 a m_j          = gamma1 D_a u_j + gamma2 D_j y_j
    gamma1 a^T K beta_j       + gamma1 (1^T a) m_j    = gamma1 a^T u_j + gamma2 sigma_j^T y_j

(D_a = diag(a), D_j = diag(sigma_j)): one LU factorisation of the (n + 1)-square matrix per
iteration serves all labels.  Subtracting the last row from the sum of the others gives
``1^T beta_j = 0``, and the first block says ``beta = gamma1 a e + gamma2 sigma y`` at a fixed
point: the optimality conditions of T2.  The step goes from (beta, m) towards the solution by a
backtracking line search (eta = 1, 1/10, 1/100, ... as the MSVR codes do) until T2 decreases;
the solve stops when the decrease is below ``tol`` (the paper's rule).  When every a_i vanishes
(all residuals inside the tube) the matrix is singular in m, and a small ``jitter`` is added to its
corner (counted).

Certificate.  Fenchel duality with ``c_i = -beta_i`` (zero-sum, which the iterates keep) gives
the lower bound ``D(beta) = -1/2 tr(beta^T K beta) - sum_i g_i*(-beta_i)``, g_i the loss of row i.
The conjugate of the sum is the infimal convolution of the conjugates,
``g_i*(c) = min_{b in B_i} psi*(c - b)`` with ``psi*(a) = <a, u_i> + eps ||a|| + ||a||^2 / (4 gamma1)``
(the conjugate of gamma1 Omega1(||u_i - .||)) and B_i = {b : y_ij b_j in [-gamma2, 0]} (the
conjugate of the sign hinge is its indicator); taking b = -gamma2 sigma_i o y_i bounds it from
above, so D below, and makes the bound tight at a fixed point.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import ClassVar

import attrs
import numpy as np
import scipy.linalg

from ..base import CapabilityError, Fit, Problem, Solution, Solver, WarmState, warm_state_of
from ..certificate import GAP_RTOL, Certificate, within_gap_rtol
from ..losses import tube_weights
from ..validation import MAX_ITER_LIMIT, check_scalar, count, positive
from ._convergence import ConvergenceWarning

__all__ = ["IRWLSRun", "IRWLSSolver", "irwls_iterations", "irwls_msvr", "irwls_outcome", "msvr_objective"]


def msvr_objective(K, beta, m, U, S=None, *, gamma1=1.0, gamma2=0.0, epsilon=0.1) -> float:
    """Evaluate T2(beta, m) of Tao, Xu & Geng's eq. 8 in the representer form (module docstring).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the training rows.
    beta : ndarray of shape (n, t)
        Coefficients of the kernel expansion ``F = K beta + m``.
    m : ndarray of shape (t,)
        Per-output bias.
    U : ndarray of shape (n, t)
        Real targets (LIEML: the enhanced labels).
    S : ndarray of shape (n, t) or None, default None
        The {-1, +1} signs y of the sign-consistency term; needed when ``gamma2 > 0``.
    gamma1 : float, default 1.0
        Weight of the tube loss Omega1.
    gamma2 : float, default 0.0
        Weight of the sign-consistency hinge Omega2 (0: plain MSVR).
    epsilon : float, default 0.1
        Radius of the insensitive tube.

    Returns
    -------
    float
        ``1/2 tr(beta^T K beta) + gamma1 sum_i max(0, ||u_i - f_i|| - epsilon)^2
        + gamma2 sum max(0, -s o F)``.
    """
    KB = np.asarray(K) @ beta
    return _objective(beta, KB, KB + m, U, S, gamma1, gamma2, epsilon)


def _objective(beta, KB, F, U, S, gamma1, gamma2, epsilon) -> float:
    radius = np.linalg.norm(U - F, axis=1)
    value = 0.5 * float(np.vdot(beta, KB)) + gamma1 * float((np.maximum(0.0, radius - epsilon) ** 2).sum())
    if gamma2:
        value += gamma2 * float(np.maximum(0.0, -S * F).sum())
    return value


def _dual_bound(beta, KB, F, U, S, gamma1, gamma2, epsilon) -> tuple[float, float]:
    """The lower bound D(beta) of the module docstring and the fixed-point residual max |beta - target|."""
    E = U - F
    a = tube_weights(np.linalg.norm(E, axis=1), epsilon)
    hinge_part = gamma2 * (S * F <= 0.0) * S if gamma2 else np.zeros_like(beta)
    # c - b with c = -beta and b = -hinge_part: the argument of psi*.
    rest = hinge_part - beta
    norms = np.linalg.norm(rest, axis=1)
    conjugate = float(np.vdot(rest, U)) + epsilon * float(norms.sum()) + float((norms**2).sum()) / (4.0 * gamma1)
    residual = float(np.abs(beta - gamma1 * a[:, None] * E - hinge_part).max()) if beta.size else 0.0
    return -0.5 * float(np.vdot(beta, KB)) - conjugate, residual


@attrs.frozen
class IRWLSRun:
    """What :func:`irwls_iterations` did: its iterations, line-search reductions and how it stopped.

    Parameters
    ----------
    n_iter : int
        IRWLS iterations made.
    n_backtracks : int
        Line-search reductions (eta / 10 each) over all iterations.
    line_search_failed : bool
        Whether an iteration found no decrease along its direction (the solve then stopped).
    stopped_by_rule : bool
        Whether the solve stopped before ``max_iter``: by the decrease rule or a failed line search.
    """

    n_iter: int
    n_backtracks: int
    line_search_failed: bool
    stopped_by_rule: bool


def irwls_iterations(state, value_of, step, *, tol: float, max_iter: int, max_backtracks: int):
    """Run IRWLS's outer loop: a weighted least-squares direction, then a backtracking line search.

    One loop for every representation of T2's variables (the kernel expansion here, explicit
    features in LIEML's primal route): the representation supplies the state, its objective and
    the next iterate of the weighted least-squares system; every array of the state moves by the
    same step ``eta`` towards that iterate (eta = 1, 1/10, ... until T2 decreases).

    Parameters
    ----------
    state : tuple of ndarray
        The starting variables.
    value_of : callable
        ``value_of(state) -> float``: T2 at a state.
    step : callable
        ``step(state) -> tuple of ndarray``: the weighted least-squares iterate from ``state``,
        one array per array of the state.
    tol : float
        Stop when T2 decreases by less than ``tol`` in an iteration (Tao, Xu & Geng's rule).
    max_iter : int
        IRWLS iterations, at most.
    max_backtracks : int
        Line-search reductions before the iteration is declared failed (the solve then stops).

    Returns
    -------
    state : tuple of ndarray
        The last accepted variables.
    objective : float
        T2 there.
    history : list of float
        T2 at the start and after each accepted iteration.
    run : IRWLSRun
        The counts and how the loop stopped.
    """
    objective = value_of(state)
    history = [objective]
    n_backtracks, failed, stopped, iteration = 0, False, False, 0
    while iteration < max_iter:
        iteration += 1
        target = step(state)
        eta, accepted = 1.0, False
        for _ in range(max_backtracks + 1):
            trial = tuple(current + eta * (new - current) for current, new in zip(state, target))
            value = value_of(trial)
            if value < objective:
                accepted = True
                break
            eta /= 10.0
            n_backtracks += 1
        if not accepted:
            # No decrease along the direction: the quadratic model is exhausted at this point.
            failed = stopped = True
            break
        decrease = objective - value
        state, objective = trial, value
        history.append(objective)
        if decrease < tol:
            stopped = True
            break
    return state, objective, history, IRWLSRun(iteration, n_backtracks, failed, stopped)


def irwls_outcome(name, objective, bound, residual, run, *, gap_tol, max_iter, started, n_support, warn,
                  statistics=None) -> Certificate:
    """Build the certificate of an IRWLS solve and issue its ConvergenceWarning when the gap is not met.

    Parameters
    ----------
    name : str
        The solver named in the certificate and the warning.
    objective, bound : float
        T2 at the returned point and the dual lower bound there.
    residual : float
        The fixed-point residual (the certificate's ``kkt_violation``).
    run : IRWLSRun
        What :func:`irwls_iterations` did.
    gap_tol : float
        The relative-gap tolerance of ``converged``.
    max_iter : int
        The iteration budget (named in the warning).
    started : float
        ``time.perf_counter()`` at the start of the solve.
    n_support : int
        Rows outside the tube at the returned point.
    warn : bool
        Whether an unconverged solve warns.
    statistics : dict, optional
        Further statistics of the route.

    Returns
    -------
    Certificate

    Warns
    -----
    ConvergenceWarning
        When the relative gap is above ``gap_tol`` and ``warn`` is True.
    """
    converged = within_gap_rtol(objective, bound, gap_tol)
    certificate = Certificate.from_objectives(
        objective, bound, kkt_violation=residual, n_iter=run.n_iter, time=time.perf_counter() - started,
        converged=converged, solver=name,
        statistics={
            "n_backtracks": run.n_backtracks, "line_search_failed": run.line_search_failed,
            "stopped_by_rule": run.stopped_by_rule, "n_support": int(n_support), **(statistics or {}),
        },
    )  # fmt: skip
    if warn and not converged:
        if run.line_search_failed:
            reason = "the line search found no decrease"
        else:
            reason = "the decrease fell below tol" if run.stopped_by_rule else f"max_iter={max_iter} iterations"
        warnings.warn(
            f"{name} did not converge: relative gap {certificate.relative_gap:.3g} > {gap_tol:g} after "
            f"{run.n_iter} iterations ({reason})",
            ConvergenceWarning,
            stacklevel=3,
        )
    return certificate


def irwls_msvr(
    K,
    U,
    S=None,
    *,
    gamma1: float = 1.0,
    gamma2: float = 0.0,
    epsilon: float = 0.1,
    tol: float = 1e-5,
    gap_tol: float = GAP_RTOL,
    max_iter: int = 500,
    max_backtracks: int = 15,
    jitter: float = 1e-8,
    start: Solution | None = None,
    warn: bool = True,
) -> Fit:
    """Minimise T2 (module docstring) by IRWLS with a backtracking line search.

    Parameters
    ----------
    K : (n, n) kernel matrix of the training rows.
    U : (n, t) real targets (LIEML: the enhanced labels).
    S : (n, t) {-1, +1} signs y of the sign-consistency term (needed when gamma2 > 0).
    gamma1, gamma2 : weights of Omega1 and Omega2 (LIEML: 1 and 0.1; gamma2 = 0 is MSVR).
    epsilon : the radius of the insensitive tube.
    tol : stop when T2 decreases by less than ``tol`` in an iteration (the paper's rule).
    gap_tol : the certificate's relative-gap tolerance for ``converged``.
    max_iter : IRWLS iterations.
    max_backtracks : line-search reductions (eta / 10 each) before the step is declared failed
        (the solve then stops, unconverged unless the gap holds).
    jitter : added to the corner of the system when ``gamma1 sum(a)`` is below it.
    start : a previous Solution, read through its warm state (:func:`~multilabel_core.base.warm_state_of`):
        ``dual_coef`` beta with zero column sums and ``intercept`` m.
    warn : whether an unconverged solve issues a ConvergenceWarning (it is counted in the
        certificate either way).

    Returns
    -------
    Fit with ``solution.dual_coef`` beta (n, t) and ``solution.intercept`` m (t,) (its warm state
    holds both: beta scales with gamma1, the C of the problem, m does not); the
    certificate's primal is T2, its dual the bound D(beta), ``kkt_violation`` the fixed-point
    residual ``max |beta - gamma1 a e - gamma2 sigma y|`` with sigma = 1(q <= 0) (at an optimum
    with entries on the hinge's kink q = 0, where sigma may be anything in [0, 1], it stays up to
    gamma2: the gap is the certificate); statistics count line-search
    reductions and jitters; ``history["objective"]`` is T2 after each iteration.
    """
    start_time = time.perf_counter()
    K = np.asarray(K, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    n = K.shape[0]
    if K.shape != (n, n) or U.ndim != 2 or U.shape[0] != n:
        raise ValueError(f"K must be (n, n) and U (n, t) with the same n, got {K.shape} and {U.shape}")
    if not (np.isfinite(K).all() and np.isfinite(U).all()):
        raise ValueError("K and U must be finite")
    check_scalar(gamma1, "gamma1", low=0.0, low_inclusive=False)
    check_scalar(gamma2, "gamma2", low=0.0)
    check_scalar(epsilon, "epsilon", low=0.0)
    check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    check_scalar(max_backtracks, "max_backtracks", kind=numbers.Integral, low=0, high=60)
    check_scalar(jitter, "jitter", low=0.0, low_inclusive=False)
    if gamma2:
        if S is None:
            raise ValueError("gamma2 > 0 needs the signs S of the sign-consistency term")
        S = np.asarray(S, dtype=np.float64)
        if S.shape != U.shape or not np.isin(S, (-1.0, 1.0)).all():
            raise ValueError(f"S must hold -1 and +1 only, with U's shape {U.shape}, got shape {S.shape}")
    t = U.shape[1]
    state = warm_state_of(start)
    if state is None:
        beta, m = np.zeros((n, t)), np.zeros(t)
    else:
        beta = np.array(state.get("dual_coef"), dtype=np.float64)
        m = np.array(state.get("intercept"), dtype=np.float64)
        if beta.shape != (n, t) or m.shape != (t,):
            raise ValueError(f"start must hold beta {(n, t)} and m {(t,)}, got {beta.shape} and {m.shape}")
    system = np.empty((n + 1, n + 1))
    n_jitter = 0

    def value_of(state):
        beta, KB, m = state
        return _objective(beta, KB, KB + m, U, S, gamma1, gamma2, epsilon)

    def step(state):
        nonlocal n_jitter
        beta, KB, m = state
        F = KB + m
        a = tube_weights(np.linalg.norm(U - F, axis=1), epsilon)
        system[:n, :n] = gamma1 * a[:, None] * K
        system[np.diag_indices(n)] += 1.0
        system[:n, n] = gamma1 * a
        system[n, :n] = gamma1 * (a @ K)
        system[n, n] = gamma1 * a.sum()
        hinge = gamma2 * (S * F <= 0.0) * S if gamma2 else np.zeros((n, t))
        rhs = np.vstack([gamma1 * a[:, None] * U + hinge, (gamma1 * (a @ U) + hinge.sum(axis=0))[None, :]])
        if system[n, n] < jitter:
            system[n, n] += jitter
            n_jitter += 1
        solution = scipy.linalg.lu_solve(scipy.linalg.lu_factor(system, check_finite=False), rhs, check_finite=False)
        beta_new, m_new = solution[:n], solution[n]
        # The system keeps 1^T beta = 0 exactly only in exact arithmetic; re-centre the round-off.
        beta_new -= beta_new.mean(axis=0)
        return beta_new, K @ beta_new, m_new

    (beta, KB, m), objective, history, run = irwls_iterations(
        (beta, K @ beta, m), value_of, step, tol=tol, max_iter=max_iter, max_backtracks=max_backtracks
    )
    F = KB + m
    bound, residual = _dual_bound(beta, KB, F, U, S, gamma1, gamma2, epsilon)
    certificate = irwls_outcome(
        "irwls_msvr", objective, bound, residual, run, gap_tol=gap_tol, max_iter=max_iter, started=start_time,
        n_support=np.count_nonzero(tube_weights(np.linalg.norm(U - F, axis=1), epsilon)), warn=warn,
        statistics={"n_jitter": n_jitter},
    )
    solution = Solution(
        coef=None, intercept=m, dual_coef=beta,
        warm_state=WarmState("irwls_msvr", scaled={"dual_coef": beta}, fixed={"intercept": m}),
    )  # fmt: skip
    return Fit(solution, certificate, history={"objective": history})


@attrs.frozen
class IRWLSSolver(Solver):
    """Multi-output SVR (MSVR) by IRWLS: min 1/2 ||Theta||^2 + C sum_i Omega1(||y_i - f(x_i)||).

    The LIEML regressor (Tao, Xu & Geng, eq. 8) without its sign term, on the core's contract:
    the problem's real targets Y, its kernel, C as gamma1 and the tube of an
    :class:`~multilabel_core.losses.EpsilonInsensitive` loss (any loss with ``epsilon`` and
    ``irwls_weights``).  Scores carry a per-label bias m.

    Parameters
    ----------
    tol : float, default 1e-5
        Stop when T2 decreases by less than tol in an iteration.
    max_iter : int, default 500
        IRWLS iterations.
    jitter : float, default 1e-8
        Added to the corner of the IRWLS system when ``gamma1 sum(a)`` is below it (every
        residual inside the tube leaves the system singular in m).
    """

    tol: float = attrs.field(default=1e-5, validator=positive)
    max_iter: int = attrs.field(default=500, validator=count)
    jitter: float = attrs.field(default=1e-8, validator=positive)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"loss": ("irwls_weights", "epsilon"), "regularizer": ("label_gram",)}
    warm_state_names: ClassVar[dict[str, str]] = {
        "dual_coef": "scaled: beta (n, L), the kernel expansion's coefficients, to start from",
        "intercept": "fixed: the bias m (L,) to start from",
    }

    def check(self, problem: Problem) -> None:
        """Check the base capabilities, plus an identity label coupling and an intercept (the MSVR form).

        Parameters
        ----------
        problem : Problem
            The composed problem to be solved.

        Raises
        ------
        CapabilityError
            When a part lacks a capability this solver needs, the label coupling is not the
            identity, or ``problem.fit_intercept`` is False.
        """
        super().check(problem)
        self.require_identity_label_gram(problem, "MSVR under 1/2 ||Theta||^2")
        if not problem.fit_intercept:
            raise CapabilityError(f"{type(self).__name__} fits the bias m of MSVR: fit_intercept must be True")

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        K = problem.X if problem.kernel.precomputed else problem.kernel(problem.X)
        state = warm_state_of(warm_start)
        if state is not None and (state.get("dual_coef") is None or np.shape(state.get("dual_coef")) != problem.Y.shape):
            warm_start = None
        fit = irwls_msvr(
            K, problem.Y, gamma1=problem.C, epsilon=float(problem.loss.epsilon), tol=self.tol,
            max_iter=self.max_iter, jitter=self.jitter, start=warm_start,
        )  # fmt: skip
        state = attrs.evolve(fit.solution.warm_state, owner=type(self).__name__)
        return attrs.evolve(fit, solution=attrs.evolve(fit.solution, warm_state=state))
