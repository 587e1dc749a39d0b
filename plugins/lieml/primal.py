"""LIEML's regressor T2 on a kernel of explicit features: IRWLS in the primal, an (p + 1)-square system per step.

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*, eqs. 8-15,
for a kernel that is the inner product of p explicit features, ``k(x, z) = phi(x)^T phi(z)`` (the Nystroem
and random Fourier kernels of :mod:`multilabel_core.kernel_approximation`).  With Phi (n, p) the features of
the training rows, the scores are ``F = Phi Theta + 1 m^T`` (Theta (p, t)) and T2 is

    T2(Theta, m) = 1/2 ||Theta||_F^2 + gamma1 sum_i Omega1(r_i) + gamma2 sum_ij Omega2(q_ij),

the representer form's ``1/2 tr(beta^T K beta)`` being ``1/2 ||Phi^T beta||^2`` for ``K = Phi Phi^T`` and
``Theta = Phi^T beta``: the same objective for the same kernel.  Each iteration freezes the weights
``a_i = Omega1'(r_i) / r_i`` (eq. 13) and ``sigma_ij = 1(q_ij <= 0)`` as the kernel route does and minimises
the quadratic model (14) over (Theta, m) directly:

    [ I + gamma1 Phi^T D_a Phi    gamma1 Phi^T a ] [ Theta ]   [ gamma1 Phi^T D_a U + Phi^T H ]
    [ gamma1 a^T Phi              gamma1 1^T a   ] [ m^T   ] = [ gamma1 a^T U + 1^T H         ]

with ``H = gamma2 sigma o y``.  Its matrix is symmetric positive definite (the Schur complement of its corner,
``I + gamma1 Phi^T (D_a - a a^T / 1^T a) Phi``, is at least I), so one Cholesky factorisation of order p + 1
serves all t labels: O(n p^2) to form, O(p^3) to factorise, against the (n + 1)-square LU of the kernel route
(:func:`multilabel_core.solvers.irwls_msvr`).  When every a_i vanishes (all residuals inside the tube) the
corner is 0 and a small ``jitter`` is added to it (counted), as there.

Its solution also gives the representer coefficients: the first block says
``Theta = Phi^T beta`` with ``beta = gamma1 D_a (U - F) + H``, and the second ``1^T beta = 0``.  The iterates
carry beta along the same line-search steps, so ``Theta = Phi^T beta`` holds to the solve's round-off, and
beta (zero-sum by re-centring) is the dual point of the kernel route's certificate: the Fenchel bound
``D(beta) = -1/2 ||Phi^T beta||^2 - sum_i g_i*(-beta_i)`` (the conjugates of :mod:`multilabel_core.solvers.irwls`'s
docstring), tight at a fixed point.  The certificate is therefore the same as the kernel route's for the
approximate kernel ``Phi Phi^T``, and with every training row as a Nystroem landmark it is the exact kernel's.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import scipy.linalg

from multilabel_core.base import Fit, Solution, WarmState, warm_state_of
from multilabel_core.certificate import GAP_RTOL
from multilabel_core.losses import tube_weights
from multilabel_core.solvers.irwls import irwls_iterations, irwls_outcome
from multilabel_core.validation import MAX_ITER_LIMIT, check_scalar

__all__ = ["irwls_msvr_features", "msvr_features_objective"]


def msvr_features_objective(Phi, Theta, m, U, S=None, *, gamma1=1.0, gamma2=0.0, epsilon=0.1) -> float:
    """T2(Theta, m) of eq. 8 in the primal form (module docstring); ``S`` the {-1, +1} signs y.

    Parameters
    ----------
    Phi : array (n, p)
        The explicit features of the training rows.
    Theta : array (p, t)
        The weights on the features.
    m : array (t,)
        The biases.
    U : array (n, t)
        The real targets.
    S : array (n, t) or None
        The signs y of the sign term (needed when gamma2 > 0).
    gamma1, gamma2, epsilon : float
        The weights of Omega1 and Omega2 and the tube's radius.

    Returns
    -------
    float
        ``1/2 ||Theta||^2 + gamma1 sum (r_i - epsilon)_+^2 + gamma2 sum max(0, -y f)``.
    """
    Theta = np.asarray(Theta, dtype=np.float64)
    F = np.asarray(Phi, dtype=np.float64) @ Theta + np.asarray(m, dtype=np.float64)
    return _objective(Theta, F, np.asarray(U, dtype=np.float64), S, gamma1, gamma2, epsilon)


def _objective(Theta, F, U, S, gamma1, gamma2, epsilon) -> float:
    radius = np.linalg.norm(U - F, axis=1)
    value = 0.5 * float(np.vdot(Theta, Theta)) + gamma1 * float((np.maximum(0.0, radius - epsilon) ** 2).sum())
    if gamma2:
        value += gamma2 * float(np.maximum(0.0, -S * F).sum())
    return value


def _dual_bound(Phi, beta, F, U, S, gamma1, gamma2, epsilon) -> tuple[float, float]:
    """The Fenchel bound D(beta) at the re-centred beta, and the fixed-point residual max |beta - target|."""
    beta = beta - beta.mean(axis=0)  # any zero-sum beta is a dual point (the bias m's condition)
    projected = Phi.T @ beta
    E = U - F
    a = tube_weights(np.linalg.norm(E, axis=1), epsilon)
    hinge = gamma2 * (S * F <= 0.0) * S if gamma2 else np.zeros_like(beta)
    rest = hinge - beta
    norms = np.linalg.norm(rest, axis=1)
    conjugate = float(np.vdot(rest, U)) + epsilon * float(norms.sum()) + float((norms**2).sum()) / (4.0 * gamma1)
    residual = float(np.abs(beta - gamma1 * a[:, None] * E - hinge).max()) if beta.size else 0.0
    return -0.5 * float(np.vdot(projected, projected)) - conjugate, residual


def _validated(Phi, U, S, gamma1, gamma2, epsilon, tol, max_iter, max_backtracks, jitter):
    Phi = np.asarray(Phi, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    if Phi.ndim != 2 or U.ndim != 2 or U.shape[0] != Phi.shape[0]:
        raise ValueError(f"Phi must be (n, p) and U (n, t) with the same n, got {Phi.shape} and {U.shape}")
    if not (np.isfinite(Phi).all() and np.isfinite(U).all()):
        raise ValueError("Phi and U must be finite")
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
    return Phi, U, S


def _factor_and_solve(system: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, bool]:
    """Solve the symmetric positive definite system by Cholesky; by LU when round-off breaks the factorisation.

    Returns the solution and whether LU was needed (counted in the certificate).
    """
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(system, check_finite=False), rhs, check_finite=False), False
    except np.linalg.LinAlgError:
        return scipy.linalg.lu_solve(scipy.linalg.lu_factor(system, check_finite=False), rhs, check_finite=False), True


def irwls_msvr_features(
    Phi,
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
    """Minimise T2 for the kernel ``Phi Phi^T`` by IRWLS on (Theta, m) (module docstring).

    Parameters
    ----------
    Phi : array (n, p)
        The explicit features of the training rows (a kernel's ``features(X)``).
    U : array (n, t)
        The real targets (LIEML: the enhanced labels).
    S : array (n, t) or None
        The {-1, +1} signs y of the sign-consistency term (needed when gamma2 > 0).
    gamma1, gamma2 : float
        The weights of Omega1 and Omega2 (LIEML: 1 and 0.1; gamma2 = 0 is MSVR).
    epsilon : float
        The radius of the insensitive tube.
    tol : float
        Stop when T2 decreases by less than ``tol`` in an iteration (the paper's rule).
    gap_tol : float
        The certificate's relative-gap tolerance for ``converged``.
    max_iter : int
        IRWLS iterations.
    max_backtracks : int
        Line-search reductions (eta / 10 each) before the step is declared failed (the solve then stops).
    jitter : float
        Added to the system's corner when ``gamma1 sum(a)`` is below it.
    start : Solution or None
        A previous solution, read through its warm state: ``dual_coef`` beta (n, t) and ``intercept`` m,
        the kernel route's state too; the start is ``Theta = Phi^T beta``.
    warn : bool
        Issue a ConvergenceWarning when the certificate is not met.

    Returns
    -------
    Fit
        ``solution.dual_coef`` beta (n, t), ``solution.intercept`` m (t,), ``solution.model_state["feature_coef"]``
        Theta (p, t) (the scores are ``phi(x)^T Theta + m``); the certificate's primal is T2, its dual the bound
        D(beta), ``kkt_violation`` the fixed-point residual; statistics count line-search reductions, jitters
        and LU fallbacks; ``history["objective"]`` is T2 after each iteration.
    """
    start_time = time.perf_counter()
    Phi, U, S = _validated(Phi, U, S, gamma1, gamma2, epsilon, tol, max_iter, max_backtracks, jitter)
    n, p = Phi.shape
    t = U.shape[1]
    state = warm_state_of(start)
    if state is None:
        beta, m = np.zeros((n, t)), np.zeros(t)
    else:
        beta = np.array(state.get("dual_coef"), dtype=np.float64)
        m = np.array(state.get("intercept"), dtype=np.float64)
        if beta.shape != (n, t) or m.shape != (t,):
            raise ValueError(f"start must hold beta {(n, t)} and m {(t,)}, got {beta.shape} and {m.shape}")
    system = np.empty((p + 1, p + 1))
    n_jitter, n_lu = 0, 0

    def value_of(state):
        Theta, m, F, beta = state
        return _objective(Theta, F, U, S, gamma1, gamma2, epsilon)

    def step(state):
        nonlocal n_jitter, n_lu
        Theta, m, F, beta = state
        a = tube_weights(np.linalg.norm(U - F, axis=1), epsilon)
        weighted = gamma1 * a[:, None] * Phi
        system[:p, :p] = Phi.T @ weighted
        system[np.diag_indices(p)] += 1.0
        system[:p, p] = weighted.sum(axis=0)
        system[p, :p] = system[:p, p]
        system[p, p] = gamma1 * a.sum()
        hinge = gamma2 * (S * F <= 0.0) * S if gamma2 else np.zeros((n, t))
        targets = gamma1 * a[:, None] * U + hinge
        rhs = np.vstack([Phi.T @ targets, targets.sum(axis=0)[None, :]])
        if system[p, p] < jitter:
            system[p, p] += jitter
            n_jitter += 1
        solution, used_lu = _factor_and_solve(system, rhs)
        n_lu += used_lu
        Theta_new, m_new = solution[:p], solution[p]
        F_new = Phi @ Theta_new + m_new
        return Theta_new, m_new, F_new, gamma1 * a[:, None] * (U - F_new) + hinge

    Theta = Phi.T @ beta
    (Theta, m, F, beta), objective, history, run = irwls_iterations(
        (Theta, m, Phi @ Theta + m, beta), value_of, step, tol=tol, max_iter=max_iter, max_backtracks=max_backtracks
    )
    bound, residual = _dual_bound(Phi, beta, F, U, S, gamma1, gamma2, epsilon)
    certificate = irwls_outcome(
        "irwls_msvr_features", objective, bound, residual, run, gap_tol=gap_tol, max_iter=max_iter,
        started=start_time, n_support=np.count_nonzero(tube_weights(np.linalg.norm(U - F, axis=1), epsilon)),
        warn=warn, statistics={"n_jitter": n_jitter, "n_lu_fallback": int(n_lu), "n_features": int(p)},
    )
    beta = beta - beta.mean(axis=0)
    solution = Solution(
        coef=None, intercept=m, dual_coef=beta, model_state={"feature_coef": Theta},
        warm_state=WarmState("irwls_msvr_features", scaled={"dual_coef": beta}, fixed={"intercept": m}),
    )  # fmt: skip
    return Fit(solution, certificate, history={"objective": history})
