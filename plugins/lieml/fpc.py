"""Fixed point continuation (FPC) with singular value shrinkage, for nuclear-norm problems.

Ma, Goldfarb & Chen, *Fixed point and Bregman iterative methods for matrix rank minimization*,
Math. Programming 128 (2011), solve ``min_Z f(Z) + mu ||Z||_*`` (f convex with an L-Lipschitz
gradient) by the fixed point iteration

    A = Z - tau grad f(Z),      Z = S_{tau mu}(A) = U max(Sigma - tau mu, 0) V^T,

stable for tau < 2 / L, with continuation: mu starts large (mu_1 = eta_mu sigma_max(Z_0)) and
decreases geometrically, mu <- max(eta_mu mu, mu_min), each stage warm-started from the last.
Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank
Subspace* (LIEML), eqs. 6-7 and Algorithm 1 lines 1-12, use it with some rows of Z held fixed
(the all-ones row of the stacked matrix): after each shrinkage those rows are reset.

Two things here go beyond the papers.

*Truncated shrinkage.*  ``S_{tau mu}`` needs only the singular triplets above ``tau mu``.
:func:`~multilabel_core.proximal.singular_value_threshold` (the one singular value shrinkage of the
core, shared with :meth:`~multilabel_core.regularizers.NuclearNorm.prox`) gets them from the Gram matrix of the shorter side with one
symmetric eigensolve instead of a full SVD with all vectors: LAPACK's subset eigensolver (``syevr``
with a lower bound) while the previous step's rank is at most
:data:`~multilabel_core.proximal.SUBSET_EIGH_FRACTION` of the Gram matrix's order, else every
eigenpair by divide and conquer (``syevd``), which is faster once many vectors are wanted.  Forming the
Gram matrix squares the singular values, so its eigenvalues carry an absolute error of up to
``delta = 2 (p + n) eps ||A||_F^2`` (the product's rounding, then the eigensolver's backward
error), and the eigenvectors are taken down to ``(tau mu)^2 - delta`` so that no triplet above the
threshold is missed.  While the spread ``sigma_max^2 / (tau mu)^2`` stays within
:data:`GRAM_SPREAD_LIMIT` the triplets come from the eigenpairs directly (``s = sqrt(w)``, the
other side's vectors by one product): relative errors of ``eps * spread``, 1e-6 at the limit, on
the values near the threshold, less above it.  Beyond it a Rayleigh-Ritz step (the SVD of A
restricted to the computed subspace, a p x k or k x n matrix) gives the triplets to the accuracy
of a direct SVD, ``eps sigma_max``, with orthonormal vectors; values it puts at or below the
threshold are dropped.  That step costs an SVD of a p x k matrix, about a full SVD of A when k
nears min(p, n), so it is kept for the spreads that need it.  The route falls back to the full SVD
when ``delta`` exceeds :data:`GRAM_BAND_LIMIT` ``(tau mu)^2`` (the eigenvalues near the threshold
would then be noise) or LAPACK fails.  The objective needs ``||Z||_*`` after the rows are
reset: Z is the shrunk matrix (SVD known) plus a rank-|F| change in the fixed rows, so its
singular values are those of a small (k + |F|)-square matrix (:func:`_singular_values_after_reset`).

*A certificate.*  The papers stop a stage when ``|T(Z^k) - T(Z^{k-1})| < tol``, which says little
about the distance to the optimum (on the LIEML problem of the yeast data it stops at a relative
gap of about 1e-2).  The last stage here also requires a lower bound on the optimum: for any
multipliers v of the fixed rows F (values c) and R = (T(Z) - f_low) / mu >= ||Z*||_*,

    T* >= f(Z) - <G, Z> - <v, c> - R max(0, ||G + E_F v||_2 - mu),      G = grad f(Z),

by convexity of f and ``<H, Z'> >= -||H||_2 ||Z'||_*`` (f_low is a lower bound of f: 0 for the
LIEML losses).  v is taken from the subgradient at Z, ``v = -G_F - mu (U V^T)_F``; the bound is
then tight at the optimum.  The stage ends when the paper's rule holds *and* the relative gap
``(T - bound) / max(1, |T|)`` is within ``gap_tol``.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from typing import Callable, Sequence

import attrs
import numpy as np
import scipy.linalg

from multilabel_core.base import Fit, Solution
from multilabel_core.certificate import GAP_RTOL, Certificate, within_gap_rtol
from multilabel_core.exceptions import ConvergenceWarning
from multilabel_core.parallel import blas_limited
from multilabel_core.proximal import (
    GRAM_BAND_LIMIT,
    GRAM_SPREAD_LIMIT,
    SVT_METHODS,
    Shrinkage,
    singular_value_threshold,
)
from multilabel_core.validation import MAX_ITER_LIMIT, check_scalar

__all__ = [
    "GRAM_BAND_LIMIT",
    "GRAM_SPREAD_LIMIT",
    "STALL_RTOL",
    "SVT_METHODS",
    "FPCStage",
    "Shrinkage",
    "fixed_point_continuation",
    "singular_value_threshold",
]

#: A shrinkage step that moves Z by at most this much relative to ||Z||_F (rounding) has reached a
#: fixed point of shrink-then-reset; the last stage ends there, certified or not.
STALL_RTOL = 1e3 * float(np.finfo(np.float64).eps)


@attrs.frozen(eq=False)
class FPCStage:
    """One continuation stage: its mu, iterations, the objective after each, and the rank reached.

    Parameters
    ----------
    mu : float
        The stage's weight of the nuclear norm.
    n_iter : int
        Shrinkage steps taken in the stage.
    objective : list of float
        T after each step; ``objective[0]`` is T at the stage's start (the previous stage's point
        at the new mu).
    rank : int
        The rank of Z at the stage's end.
    n_fallbacks : int
        The stage's shrinkages that fell back to the full SVD.
    """

    mu: float
    n_iter: int
    objective: list
    rank: int
    n_fallbacks: int


@attrs.frozen(eq=False)
class _Point:
    """Z with its exact SVD (the certificate's subgradient guess needs the vectors)."""

    Z: np.ndarray
    nuclear: float
    left: np.ndarray
    values: np.ndarray
    right: np.ndarray


def _exact_point(Z: np.ndarray) -> _Point:
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    return _Point(Z, float(s.sum()), U, s, Vt)


def _singular_values_after_reset(shrunk: Shrinkage, Z: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """The singular values of Z = S(A) with the rows ``fixed`` reset, in O((p + n) k |F|).

    Z = B + E_F C with B = U diag(s') V^T the shrunk matrix (SVD known) and C the change of the
    rows F.  Its columns lie in span(U, E_F) and its rows in span(V, C^T); with the orthonormal
    completions Q1x of E_F against U and Q2x of C^T against V, Z = [U Q1x] M [V Q2x]^T where

        M = blockdiag(diag(s'), 0) + [U_F^T; Q1x_F^T] [C V, C Q2x]

    is (k + |F|)-square: its singular values are Z's.
    """
    U, Vt, shrunk_values = shrunk.left, shrunk.right, shrunk.values - shrunk.threshold
    change = Z[fixed] - shrunk.matrix[fixed]
    E = np.zeros((Z.shape[0], len(fixed)))
    E[fixed, np.arange(len(fixed))] = 1.0
    Q1x, _ = np.linalg.qr(E - U @ U[fixed].T)
    CV = change @ Vt.T
    Q2x, _ = np.linalg.qr((change - CV @ Vt).T)
    k = U.shape[1]
    core = np.zeros((k + len(fixed), k + len(fixed)))
    core[:k, :k] = np.diag(shrunk_values)
    core += np.vstack([U[fixed].T, Q1x[fixed].T]) @ np.hstack([CV, change @ Q2x])
    return np.linalg.svd(core, compute_uv=False)


def _lower_bound(point: _Point, f_at_point, gradient, mu, fixed, fixed_values, objective, f_low, f_conjugate) -> float:
    """A lower bound on the optimum at mu from the subgradient guess Lambda at ``point``.

    Lambda = -(G + E_F v) with v = -G_F - mu (U V^T)_F (module docstring).  With ``f_conjugate``,
    the Fenchel dual value at s Lambda, s = min(1, mu / ||Lambda||_2), which is dual feasible
    (``||s Lambda||_2 <= mu``; f does not depend on the fixed rows, so f* needs them zero):
    ``D = -f*(-s Lambda with the rows F zeroed) + s <Lambda_F, c>``.  Without it, the bound by
    linearisation and ||Z*||_* <= (T - f_low) / mu of the module docstring.
    """
    Z, s = point.Z, point.values
    G = gradient(Z)
    nonzero = s > _rank_tolerance(s, Z.shape)
    uv_fixed = (point.left[fixed][:, nonzero]) @ point.right[nonzero]
    v = -G[fixed] - mu * uv_fixed
    H = G.copy()
    H[fixed] += v
    spectral = _spectral_norm(H)
    if f_conjugate is not None:
        scale = min(1.0, mu / spectral) if spectral > 0.0 else 1.0
        M = scale * G
        M[fixed] = 0.0
        return -float(f_conjugate(M)) + scale * float(np.vdot(-H[fixed], fixed_values))
    radius = max(0.0, objective - f_low) / mu
    return f_at_point - float(np.vdot(G, Z)) - float(np.vdot(v, fixed_values)) - radius * max(0.0, spectral - mu)


def _shrinkage_bound(A, Z, shrunk_fixed, step, fixed, fixed_values, f_conjugate) -> float:
    """The Fenchel dual value at the shrinkage's own subgradient Lambda_B = (A - B) / tau.

    B = S_{tau mu}(A) (Z before its rows F were reset): Lambda_B lies in mu d||B||_*, so
    ``||Lambda_B||_2 <= mu`` -- dual feasible without scaling.  At a fixed point of the reset
    iteration it certifies the point up to ``mu (||Z||_* - ||B||_*) - <Lambda_B,F, c - B_F>``, the
    price of resetting rows after the shrinkage instead of shrinking under the constraint.
    """
    Lam = (A - Z) / step
    Lam[fixed] = (A[fixed] - shrunk_fixed) / step
    M = -Lam
    M[fixed] = 0.0
    return -float(f_conjugate(M)) + float(np.vdot(Lam[fixed], fixed_values))


def fixed_point_continuation(
    Z0,
    f_value: Callable[[np.ndarray], float],
    f_gradient: Callable[[np.ndarray], np.ndarray],
    *,
    step: float,
    mu_min: float = 1e-5,
    mu_start: float | None = None,
    eta_mu: float = 0.25,
    stage_tol: float = 1e-5,
    gap_tol: float = GAP_RTOL,
    max_iter: int = 20000,
    fixed_rows: Sequence[int] = (),
    f_low: float = 0.0,
    f_conjugate: Callable[[np.ndarray], float] | None = None,
    check_every: int = 10,
    svt: str = "auto",
    accelerate: bool = False,
    warn: bool = True,
) -> Fit:
    """Minimise ``T(Z) = f(Z) + mu ||Z||_*`` by FPC with continuation down to ``mu_min``.

    Fixed-point continuation (Ma, Goldfarb & Chen, *Fixed point and Bregman iterative methods for
    matrix rank minimization*, Algorithm FPC), as LIEML's label enhancement uses it (Tao, Xu &
    Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*).

    Parameters
    ----------
    Z0 : ndarray of shape (p, n)
        The start; the rows ``fixed_rows`` keep their values in Z0 throughout.
    f_value, f_gradient : callable
        The smooth convex part f (f >= ``f_low``) and its gradient.
    step : float
        tau, at most 1 / L for the Lipschitz constant L of grad f (stability needs < 2 / L).
    mu_min, mu_start, eta_mu : float
        The continuation: mu_1 = mu_start (default eta_mu sigma_max(Z0)),
        mu_{k+1} = max(eta_mu mu_k, mu_min); the last stage has mu = mu_min.
    stage_tol : float, default 1e-5
        A stage ends when ``|T(Z^k) - T(Z^{k-1})| < stage_tol`` (the papers' rule).
    gap_tol : float, default GAP_RTOL
        The last stage also needs the relative gap of the certificate within it.
    max_iter : int, default 20000
        Shrinkage steps over all stages; reaching it leaves the certificate unconverged.
    fixed_rows : sequence of int, default ()
        Rows of Z held at their values in Z0.
    f_low : float, default 0.0
        A lower bound on f, for the looser certificate.
    f_conjugate : callable, optional
        The convex conjugate f*(M) (+inf outside its domain) of an f that does not depend on the
        fixed rows; with it the certificate's bound is the Fenchel dual value (tight), without it
        the looser linearisation bound (module docstring).
    check_every : int, default 10
        In the last stage, the bound (an exact SVD of Z) is evaluated when the stage rule holds or
        every ``check_every`` iterations, and at most once in ``check_every`` iterations: the stage
        rule often holds for hundreds of steps before the gap closes.
    svt : {"auto", "gram", "full"}, default "auto"
        The shrinkage route (:func:`multilabel_core.proximal.singular_value_threshold`).
    accelerate : bool, default False
        Take momentum (Nesterov-type) steps within a stage, the momentum restarted at each stage
        and whenever T rises.
    warn : bool, default True
        Issue a ConvergenceWarning when the certificate is not met (callers that report a combined
        outcome pass False).

    Returns
    -------
    Fit
        ``solution.coef`` is Z (p, n), with ``model_state`` ``"stages"`` (list of
        :class:`FPCStage`), ``"rank"`` and ``"singular_values"`` of Z; ``history`` holds per stage
        ``"objective"`` (T at its end), ``"mu"``, ``"n_iter"`` and ``"rank"``.  The certificate's
        primal is T at mu_min, its dual the lower bound, ``kkt_violation`` the gradient mapping
        ``||Z - W|| / tau`` of the last step (W the point the step started from), and
        ``statistics`` the shrinkage counts and times.
    """
    # Thousands of small BLAS-3 and LAPACK calls, which OpenBLAS's threads slow down many times
    # over (benchmarks/RESULTS.md, "Timings behind code comments").
    with blas_limited(1):
        return _fpc(
            Z0, f_value, f_gradient, step=step, mu_min=mu_min, mu_start=mu_start, eta_mu=eta_mu, stage_tol=stage_tol,
            gap_tol=gap_tol, max_iter=max_iter, fixed_rows=fixed_rows, f_low=f_low, f_conjugate=f_conjugate,
            check_every=check_every, svt=svt, accelerate=accelerate, warn=warn,
        )  # fmt: skip


def _fpc(Z0, f_value, f_gradient, *, step, mu_min, mu_start, eta_mu, stage_tol, gap_tol, max_iter, fixed_rows, f_low,
         f_conjugate, check_every, svt, accelerate, warn) -> Fit:  # fmt: skip
    start = time.perf_counter()
    Z = np.array(Z0, dtype=np.float64)
    if Z.ndim != 2 or not np.isfinite(Z).all():
        raise ValueError(f"Z0 must be a finite 2-D matrix, got shape {Z.shape}")
    check_scalar(step, "step", low=0.0, low_inclusive=False)
    check_scalar(mu_min, "mu_min", low=0.0, low_inclusive=False)
    check_scalar(eta_mu, "eta_mu", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    check_scalar(stage_tol, "stage_tol", low=0.0, low_inclusive=False)
    check_scalar(gap_tol, "gap_tol", low=0.0, low_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    check_scalar(check_every, "check_every", kind=numbers.Integral, low=1)
    if svt not in SVT_METHODS:
        raise ValueError(f"svt must be one of {SVT_METHODS}, got {svt!r}")
    fixed = np.unique(np.asarray(fixed_rows, dtype=np.intp)).reshape(-1)
    if fixed.size and (fixed[0] < 0 or fixed[-1] >= Z.shape[0]):
        raise ValueError(f"fixed_rows must index rows of Z0 (0..{Z.shape[0] - 1}), got {list(fixed_rows)}")
    fixed_values = Z[fixed].copy()
    if mu_start is None:
        mu_start = eta_mu * float(np.linalg.norm(Z, 2))
    mu = max(float(mu_start), float(mu_min))

    def certify(Z, f_now, mu, A=None, shrunk_fixed=None):
        """The exact point, T at mu and the best lower bound (the shrinkage's too when A is the step that made Z)."""
        # Evaluated on a fresh SVD of Z, independent of the shrinkage's triplets and of the update of
        # its singular values through the reset rows.
        exact = _exact_point(Z)
        objective = f_now + mu * exact.nuclear
        bound = _lower_bound(exact, f_now, f_gradient, mu, fixed, fixed_values, objective, f_low, f_conjugate)
        if f_conjugate is not None and A is not None:
            bound = max(bound, _shrinkage_bound(A, Z, shrunk_fixed, step, fixed, fixed_values, f_conjugate))
        return exact, objective, bound

    nuclear = float(np.linalg.svd(Z, compute_uv=False).sum())
    stages: list[FPCStage] = []
    total, svt_time, n_gram, n_full = 0, 0.0, 0, 0
    shrunk = None
    while True:
        last = mu <= mu_min
        f_now = f_value(Z)
        history = [f_now + mu * nuclear]
        k, fallbacks, stalled, checked_at = 0, 0, False, -check_every
        # Momentum restarts at each stage and whenever T rises (adaptive restart).
        previous, momentum = Z, 1.0
        while total < max_iter:
            if accelerate and k > 0:
                next_momentum = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * momentum**2))
                W = Z + ((momentum - 1.0) / next_momentum) * (Z - previous)
                momentum = next_momentum
            else:
                W = Z
            previous = Z
            A = W - step * f_gradient(W)
            tick = time.perf_counter()
            # The previous step's rank predicts this one's: it picks the eigensolver, not the result.
            shrunk = singular_value_threshold(A, step * mu, method=svt, rank_hint=None if shrunk is None else shrunk.rank)
            svt_time += time.perf_counter() - tick
            if shrunk.method == "gram":
                n_gram += 1
            else:
                n_full += 1
                fallbacks += svt == "auto"
            Z = shrunk.matrix
            shrunk_fixed = Z[fixed].copy()
            Z[fixed] = fixed_values
            values = _singular_values_after_reset(shrunk, Z, fixed)
            nuclear = float(values.sum())
            f_now = f_value(Z)
            history.append(f_now + mu * nuclear)
            total, k = total + 1, k + 1
            if accelerate and history[-1] > history[-2]:
                momentum = 1.0
            settled = abs(history[-1] - history[-2]) < stage_tol
            # A step that returns its own input (to rounding) repeats forever: with the held rows,
            # shrink-then-reset can have fixed points short of the constrained optimum, where no
            # further step can close the gap.
            stalled = float(np.linalg.norm(Z - previous)) <= STALL_RTOL * max(1.0, float(np.linalg.norm(Z)))
            if last and (stalled or (settled or k % check_every == 0) and k - checked_at >= check_every):
                checked_at = k
                _, value, bound = certify(Z, f_now, mu, A, shrunk_fixed)
                if (settled and within_gap_rtol(value, bound, gap_tol)) or stalled:
                    break
            elif settled and not last:
                break
        stages.append(FPCStage(mu, k, history, _numerical_rank(values, Z.shape), fallbacks))
        if last or total >= max_iter:
            break
        mu = max(eta_mu * mu, mu_min)

    # When the budget ran out before the last stage, the point is certified for the problem at mu_min
    # anyway; the shrinkage's subgradient then belongs to a larger mu and does not bound it.
    point, objective, bound = certify(Z, f_value(Z), mu_min, *((A, shrunk_fixed) if last else ()))
    # The gradient mapping ||Z - W|| / tau of the last step: 0 exactly at a fixed point.
    kkt = float(np.linalg.norm(Z - W)) / step
    converged = bool(last and within_gap_rtol(objective, bound, gap_tol))
    certificate = Certificate.from_objectives(
        objective,
        bound,
        kkt_violation=kkt,
        n_iter=total,
        time=time.perf_counter() - start,
        converged=converged,
        solver="fixed_point_continuation",
        statistics={
            "n_stages": len(stages),
            "svt_time": svt_time,
            "n_gram_svt": n_gram,
            "n_full_svt": n_full,
            "n_fallbacks": sum(stage.n_fallbacks for stage in stages),
            "mu_min": float(mu_min),
            "step": float(step),
            "stalled": bool(last and stalled),
        },
    )
    if warn and not converged:
        warnings.warn(
            f"fixed_point_continuation did not converge: {total} shrinkage steps over {len(stages)} stages "
            f"(max_iter={max_iter}), relative gap {certificate.relative_gap:.3g} > gap_tol={gap_tol:g}"
            + ("" if last else f"; the budget ran out at mu={stages[-1].mu:.3g} before mu_min={mu_min:g}")
            + (
                "; the iterate stopped moving: a fixed point of shrink-then-reset that is not the optimum with the "
                "held rows, which more steps cannot improve (a smaller mu_min moves off it)"
                if last and stalled
                else ""
            ),
            ConvergenceWarning,
            stacklevel=3,
        )
    rank = _numerical_rank(point.values, Z.shape)
    solution = Solution(
        coef=Z,
        intercept=np.zeros(0),
        model_state={"stages": stages, "rank": rank, "singular_values": point.values[:rank].copy()},
    )
    history = {
        "objective": [stage.objective[-1] for stage in stages],
        "mu": [stage.mu for stage in stages],
        "n_iter": [stage.n_iter for stage in stages],
        "rank": [stage.rank for stage in stages],
    }
    return Fit(solution, certificate, history=history)


def _spectral_norm(H: np.ndarray) -> float:
    """``||H||_2`` from the largest eigenvalue of the Gram matrix of the shorter side (accurate for the top value)."""
    G = H @ H.T if H.shape[0] <= H.shape[1] else H.T @ H
    top = scipy.linalg.eigh(G, eigvals_only=True, subset_by_index=(len(G) - 1, len(G) - 1), driver="evr")[0]
    return float(np.sqrt(max(top, 0.0)))


def _rank_tolerance(values: np.ndarray, shape) -> float:
    """Singular values at or below ``max(p, n) eps sigma_max`` are round-off."""
    return max(shape) * np.finfo(np.float64).eps * (values[0] if values.size else 0.0)


def _numerical_rank(values: np.ndarray, shape) -> int:
    return int(np.count_nonzero(values > _rank_tolerance(values, shape)))
