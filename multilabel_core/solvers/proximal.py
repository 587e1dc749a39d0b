"""Accelerated proximal gradient (FISTA with backtracking and adaptive restart) for linear models.

Notation: X (n, d) the training rows (dense or CSR/CSC, never densified), Y (n, L) the targets,
C the loss weight, ell the loss, V = (W, b) with W (d, L) and the intercept b (L,).  The solver
minimises the core's primal (:class:`~multilabel_core.base.Problem`)::

    P(W, b) = F(W, b) + g(W),   F = C ell(Y, X W + 1 b^T) + q(W),   g = the nonsmooth term      (1)

where the regulariser is split into its smooth terms q (the whole regulariser when it is smooth;
the smooth terms of a :class:`~multilabel_core.regularizers.Sum`) and at most one nonsmooth term g
with a ``prox``.  The intercept, when fitted, is a free smooth variable: it is never shrunk.

The iteration is FISTA (Beck & Teboulle, *A fast iterative shrinkage-thresholding algorithm for
linear inverse problems*, SIAM J. Imaging Sci. 2 (2009), eqs. 4.1-4.3, with the backtracking
rule of section 4, eq. 4.4 in the constant's update ``L <- 2 L``)::

    Z = prox_{g / L}(Y_k - grad F(Y_k) / L),   t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2,
    Y_{k+1} = Z + ((t_k - 1) / t_{k+1}) (Z - V_k)

with L raised until ``F(Z) <= F(Y_k) + <grad F(Y_k), Z - Y_k> + L/2 ||Z - Y_k||^2`` (within the
rounding of F), and the momentum reset (t = 1) whenever ``<Y_k - Z, Z - V_k> > 0``: the gradient
restart scheme of O'Donoghue & Candes, *Adaptive restart for accelerated gradient schemes*,
Found. Comput. Math. 15 (2015), section 3.2, which recovers linear convergence on strongly
convex problems.  The scores ``X Y_k`` are the same combination of ``X V_k`` and ``X V_{k-1}``,
so an iteration costs one product with X and one with X^T (plus one per backtracking step).

**Certificate.**  A bound on ``P(V) - P*`` at the returned V, by the first route that applies:

1. *Duality gap* (a single regulariser Omega with a ``conjugate`` and a loss with a conjugate).
   With A = -C ell'(Y, X W + 1 b^T) the Fenchel dual (Rockafellar, *Convex Analysis*, 1970,
   Corollary 31.2.1) ::

       D(A) = -C ell*(Y, -A / C) - Omega*(X^T A),     1^T A = 0 when b is fitted                 (2)

   is a lower bound on P* at every feasible A.  A is made feasible without leaving the loss's
   conjugate domain: for the free intercept, per label the entries of the sign with the larger
   total are scaled down until the column sums to 0 (a scaling towards 0 keeps every sign-type
   domain ``y a in [0, c]``); for a norm penalty (``dual_norm``: L1, L2,1, the nuclear norm)
   A is scaled into the dual-norm ball; for a singular quadratic (``range_projector``: the
   Laplacian label similarity) A is projected on the label side onto the range of R, which a
   loss with a finite conjugate everywhere (``curvature`` > 0, least squares) allows.
2. *Strong convexity*.  With ``m > 0`` a lower bound on the curvature of P in W
   (``C * curvature * lambda_min(X_a^T X_a)`` for a loss of constant curvature, X_a = [X, 1]
   when b is fitted, plus the smooth terms' ``hessian_bounds`` and the nonsmooth term's
   ``strong_convexity``), ``P(V) - P* <= ||s||^2 / m`` for any s in dP(V).
3. *Norm bound*.  With a nonsmooth term ``g >= beta ||W||_F`` (``norm_modulus``) and
   ``F >= F_low`` (the loss's ``lower_bound``, convex smooth terms minimal at 0),
   ``beta ||W*||_F <= P(V) - F_low``, so ``P(V) - P* <= ||s|| (||W|| + (P(V) - F_low) / beta)``.

In 2 and 3, s is the gradient-mapping subgradient of the last step,
``s = (Y - Z) L - grad F(Y) + grad F(Z)``, which lies in dP(Z) because ``(Y - Z) L - grad F(Y)``
is in dg(Z) by the prox's optimality.  With a fitted intercept the bound is for
``phi(W) = min_b P(W, b)`` (convex, and m-strongly convex when P is in W): b is re-minimised at
the certified W (closed form for least squares, else bisection on the monotone derivative),
whose residual is added to the bound.  The certificate reports ``dual = primal - bound``; it is
``converged`` only when the relative gap ``bound / max(1, |P|)`` is within ``tol``.

**Nonconvex smooth parts.**  LLSF's label-similarity quadratic (R = 1 - S) is indefinite, and
the Hessian of ``C/2 ||X W - Y||^2 + alpha/2 tr(W R W^T)`` has the eigenvalues
``C lambda_i(X^T X) + alpha mu_j(R)`` (a Kronecker sum).  The solver computes the smallest,
``C lambda_min(X_a^T X_a) + alpha mu_min(R)`` (one symmetric eigenproblem of size d (+1), minus
its rounding), and certifies by route 2 when it is positive.  Otherwise no bound on
``P(V) - P*`` exists from local information: the certificate reports only stationarity (the
gradient-mapping norm ``||s||`` in ``kkt_violation``), ``dual = nan``, ``converged = False``, and a
ConvergenceWarning says why.  The eigenproblem is skipped (lambda_min taken as 0, which certifies
less, never more) when X_a has more columns than rows or more than :data:`GRAM_EIG_LIMIT`.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse

from ..base import CapabilityError, Fit, Problem, Solution, Solver, WarmState, warm_state_of
from ..certificate import Certificate
from ..losses import LeastSquares
from ..parallel import map_threads, n_jobs_field
from ..validation import count, positive
from ._convergence import ConvergenceWarning

__all__ = ["GRAM_EIG_LIMIT", "ProximalGradientSolver"]

#: Largest d + 1 for which lambda_min(X_a^T X_a) is computed (a dense symmetric eigenproblem).
GRAM_EIG_LIMIT = 4000
#: Certificates are evaluated every this many iterations (and at the first and the last).
CHECK_EVERY = 5
_EPS = float(np.finfo(np.float64).eps)


def _name(part) -> str:
    return type(part).__name__


def _split(regularizer):
    """``(smooth terms, nonsmooth term or None)``; CapabilityError naming a term the solver cannot take."""
    terms = tuple(getattr(regularizer, "terms", None) or (regularizer,))
    smooth = [term for term in terms if bool(getattr(term, "smooth", False))]
    rough = [term for term in terms if not bool(getattr(term, "smooth", False))]
    if len(rough) > 1:
        raise CapabilityError(
            f"ProximalGradientSolver takes at most one nonsmooth regularizer term (its prox step), but "
            f"{_name(regularizer)} has {len(rough)}: {', '.join(_name(t) for t in rough)}"
        )
    for term in rough:
        if not callable(getattr(term, "prox", None)):
            raise CapabilityError(
                f"ProximalGradientSolver requires regularizer.prox of the nonsmooth term {_name(term)}, "
                f"which {_name(term)} does not provide"
            )
    return smooth, (rough[0] if rough else None)


def _smooth_low(term, n_labels: int):
    """The least Hessian eigenvalue of a smooth term: declared, or 0 (the interface's terms are convex)."""
    bounds = getattr(term, "hessian_bounds", None)
    return float(bounds(n_labels)[0]) if callable(bounds) else 0.0


def _smooth_lower_value(term, shape) -> float | None:
    """A lower bound of a smooth term's value: its ``lower_bound``, or 0 for a convex one minimal at 0."""
    declared = getattr(term, "lower_bound", None)
    if declared is not None:
        return float(declared)
    zero = np.zeros(shape)
    if _smooth_low(term, shape[1]) >= 0.0 and term.value(zero) == 0.0 and not np.any(term.gradient(zero)):
        return 0.0
    return None


def _used_columns(X, regularizer, W0):
    """``(X restricted to its used columns, their indices)``: the columns holding a value, when leaving the others out is exact.

    A feature no row uses enters P only through its row of W in the regulariser; for a ``row_monotone``
    regulariser (adding rows never lowers it) that row is 0 at the optimum, so the problem on the used columns
    has the same optimum and the same certificate, at a cost that follows the stored entries rather than the
    declared width.  Not done when a warm start puts weight on an unused column (its fit would differ) or for
    a regulariser that does not declare the property.
    """
    d = X.shape[1]
    everything = np.arange(d)
    if not bool(getattr(regularizer, "row_monotone", False)):
        return X, everything
    if scipy.sparse.issparse(X):
        used = np.unique(X.tocsr().indices[X.tocsr().data != 0]) if X.nnz else np.zeros(0, dtype=np.intp)
    else:
        used = np.flatnonzero(np.any(np.asarray(X) != 0, axis=0))
    if used.size == d or np.any(np.delete(W0, used, axis=0)):
        return X, everything
    return (X.tocsc()[:, used].tocsr() if scipy.sparse.issparse(X) else np.asarray(X)[:, used]), used


class _Composite:
    """P of (1) for one problem (all labels, or one label's column), its pieces and its certificate."""

    def __init__(self, X, Y, C, loss, regularizer, fit_intercept, n_empty=0):
        self.X, self.Y, self.C, self.loss = X, np.asarray(Y, dtype=np.float64), float(C), loss
        #: Columns of the problem's X left out because no row uses them (their rows of W are 0 at the optimum).
        self.n_empty = int(n_empty)
        self.regularizer = regularizer
        self.smooth, self.prox_term = _split(regularizer)
        self.fit_intercept = bool(fit_intercept)
        self.n, self.d = X.shape
        self.L = self.Y.shape[1]
        self.single = getattr(regularizer, "terms", None) is None
        lows = [_smooth_low(term, self.L) for term in self.smooth]
        self.smooth_low = float(sum(lows))
        self.indefinite = any(low < 0.0 for low in lows)
        self.strong = float(getattr(self.prox_term, "strong_convexity", 0.0) or 0.0)
        self.curvature = float(getattr(loss, "curvature", 0.0) or 0.0)
        self._gram_low = None

    # -- evaluations --------------------------------------------------------------------------
    def scores(self, W, b):
        T = np.asarray(self.X @ W, dtype=np.float64)
        return T + b if self.fit_intercept else T

    def smooth_value(self, W, T) -> float:
        return self.C * float(self.loss.value(self.Y, T)) + sum(float(q.value(W)) for q in self.smooth)

    def smooth_gradient(self, W, T):
        G = self.C * np.asarray(self.loss.gradient(self.Y, T), dtype=np.float64)
        gW = np.asarray(self.X.T @ G, dtype=np.float64)
        for q in self.smooth:
            gW = gW + q.gradient(W)
        gb = G.sum(axis=0) if self.fit_intercept else np.zeros(self.L)
        return gW, gb

    def g_value(self, W) -> float:
        return 0.0 if self.prox_term is None else float(self.prox_term.value(W))

    def prox(self, Z, step):
        return Z if self.prox_term is None else np.asarray(self.prox_term.prox(Z, step), dtype=np.float64)

    # -- the certificate's ingredients ----------------------------------------------------------
    def gram_low(self) -> float:
        """lambda_min(X_a^T X_a) minus its rounding (0 when skipped: see the module docstring)."""
        if self._gram_low is None:
            p = self.d + int(self.fit_intercept)
            if p > self.n or p > GRAM_EIG_LIMIT:
                self._gram_low = 0.0
            else:
                Xd = self.X
                G = (Xd.T @ Xd).toarray() if scipy.sparse.issparse(Xd) else np.asarray(Xd.T @ Xd, dtype=np.float64)
                if self.fit_intercept:
                    column = np.asarray(Xd.sum(axis=0), dtype=np.float64).reshape(-1)
                    G = np.block([[G, column[:, None]], [column[None, :], np.array([[float(self.n)]])]])
                w = np.linalg.eigvalsh((G + G.T) / 2.0)
                rounding = 4.0 * (self.n + p) * _EPS * float(np.trace(G))
                self._gram_low = max(0.0, float(w[0]) - rounding)
        return self._gram_low

    def modulus(self) -> float:
        """A lower bound on the curvature of P in W (may be negative: a nonconvex smooth part)."""
        base = self.smooth_low + self.strong
        if self.curvature > 0.0 and (self.indefinite or base <= 0.0):
            base += self.C * self.curvature * self.gram_low()
        return base

    def unbounded_direction(self) -> str | None:
        """Why P has no minimum, when that is provable from exact curvature; else None.

        For the least-squares loss, quadratic smooth terms ``1/2 tr(W M_k W^T)`` (``label_hessian``)
        and a norm (or no) nonsmooth term, P along ``W = t u v^T`` is ``P(0) + t a + t^2 e / 2`` up to
        the norm's ``t g(u v^T)``, linear in t, where ``e = C lambda_min(G) + mu_min(sum M_k)`` is the
        least eigenvalue of the smooth part's Hessian ``C G (x) I + I (x) M`` (a Kronecker sum; G is
        ``X^T X``, centred when b is fitted, since b is then minimised out exactly), u and v its
        eigenvectors.  A negative e beyond its rounding sends P to -infinity: no minimiser exists.
        """
        if type(self.loss) is not LeastSquares or self.d > GRAM_EIG_LIMIT:
            return None
        if not all(callable(getattr(q, "label_hessian", None)) for q in self.smooth):
            return None
        if self.prox_term is not None and not callable(getattr(self.prox_term, "dual_norm", None)):
            return None
        M = sum((np.asarray(q.label_hessian(self.L), dtype=np.float64) for q in self.smooth), np.zeros((self.L, self.L)))
        mu = np.linalg.eigvalsh((M + M.T) / 2.0)
        Xd = self.X
        G = (Xd.T @ Xd).toarray() if scipy.sparse.issparse(Xd) else np.asarray(Xd.T @ Xd, dtype=np.float64)
        if self.fit_intercept:
            mean = np.asarray(Xd.mean(axis=0), dtype=np.float64).reshape(-1)
            G = G - self.n * np.outer(mean, mean)
        lam = np.linalg.eigvalsh((G + G.T) / 2.0)
        # G is positive semi-definite: below 0 is the eigensolver's rounding; an empty column left out makes it singular.
        lam_min = 0.0 if self.n_empty else max(0.0, float(lam[0]))
        least = self.C * lam_min + float(mu[0])
        rounding = self.C * 4.0 * (self.n + self.d) * _EPS * float(np.trace(G)) + 64 * self.L * _EPS * float(
            np.abs(mu).max(initial=0.0))
        if least >= -rounding:
            return None
        return (
            f"the objective is unbounded below: the least curvature of its smooth part, C lambda_min(X^T X"
            f"{' centred' if self.fit_intercept else ''}) + mu_min(M) = {self.C:.6g} * {lam_min:.3g} + "
            f"({float(mu[0]):.3g}) = {least:.3g} < 0 (M the regulariser's label Hessian, e.g. LLSF's alpha R with "
            "R = 1 - S indefinite), and the norm term grows only linearly, so P -> -inf along W = t u v^T "
            "(u, v the least eigenvectors) and no minimiser exists; scale the indefinite term by at most "
            f"C lambda_min / |mu_min(M)| = {self.C * lam_min / abs(float(mu[0])):.3g} (for LLSF: alpha times "
            "that), or use a positive semi-definite form (label_similarity's form='laplacian')"
        )

    def dual_value(self, T) -> float:
        """D(A) of (2) at the feasible dual point built from ``T``; nan when this route does not apply."""
        reg = self.regularizer
        if not (self.single and callable(getattr(reg, "conjugate", None)) and callable(getattr(self.loss, "conjugate", None))):
            return math.nan
        A = -self.C * np.asarray(self.loss.gradient(self.Y, T), dtype=np.float64)
        if self.fit_intercept:
            A = _balance(A)
        projector = getattr(reg, "range_projector", None)
        if callable(projector):
            A = A @ projector(self.L)
        V = np.asarray(self.X.T @ A, dtype=np.float64)
        omega = float(reg.conjugate(V))
        if not math.isfinite(omega) and callable(getattr(reg, "dual_norm", None)):
            norm, radius = reg.dual_norm(V)
            scale = 0.0 if radius <= 0.0 else min(1.0, radius / norm)
            A, V = scale * A, scale * V
            omega = float(reg.conjugate(V))
        if not math.isfinite(omega):
            return math.nan
        value = -self.C * float(self.loss.conjugate(self.Y, -A / self.C)) - omega
        return value if math.isfinite(value) else math.nan

    def best_intercept(self, W, b, T):
        """``(b_hat, T_hat, residual)``: b minimising F(W, .) and a bound on ``P(W, b_hat) - min_b P(W, b)``."""
        if type(self.loss) is LeastSquares:
            shift = (self.Y - T).mean(axis=0)
            return b + shift, T + shift, 0.0

        def slope(beta):
            return np.asarray(self.loss.gradient(self.Y, T + beta), dtype=np.float64).sum(axis=0)

        lo, hi = -np.ones(self.L), np.ones(self.L)
        for _ in range(200):
            low_bad, high_bad = slope(lo) > 0.0, slope(hi) < 0.0
            if not (low_bad.any() or high_bad.any()):
                break
            lo = np.where(low_bad, 2.0 * lo, lo)
            hi = np.where(high_bad, 2.0 * hi, hi)
        else:
            return b, T, math.inf
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            positive_slope = slope(mid) > 0.0
            hi, lo = np.where(positive_slope, mid, hi), np.where(positive_slope, lo, mid)
        beta = 0.5 * (lo + hi)
        residual = self.C * float(np.sum(np.abs(slope(beta)) * 0.5 * (hi - lo)))
        return b + beta, T + beta, residual

    def lower_value(self) -> float | None:
        """F_low: a lower bound of F (route 3), or None."""
        low = getattr(self.loss, "lower_bound", None)
        if low is None:
            return None
        total = self.C * float(low) * self.Y.size
        for q in self.smooth:
            value = _smooth_lower_value(q, (self.d, self.L))
            if value is None:
                return None
            total += value
        return total


def _balance(A: np.ndarray) -> np.ndarray:
    """A with every column summing to 0, the entries of the sign with the larger total scaled towards 0."""
    A = A.copy()
    positive = np.where(A > 0.0, A, 0.0).sum(axis=0)
    negative = -np.where(A < 0.0, A, 0.0).sum(axis=0)
    for j in range(A.shape[1]):
        column = A[:, j]
        if positive[j] > negative[j]:
            column[column > 0.0] *= negative[j] / positive[j]
        elif negative[j] > positive[j]:
            column[column < 0.0] *= positive[j] / negative[j]
    return A


@attrs.frozen(eq=False)
class _Outcome:
    W: np.ndarray
    b: np.ndarray
    primal: float
    bound: float
    kkt: float
    n_iter: int
    route: str
    modulus: float
    stalled: bool
    n_backtracks: int


def _certify(problem: _Composite, W, b, T, s_W, s_b):
    """``(W, b, primal, bound, route, modulus)`` at (W, b): the smallest bound of the routes that apply.

    The bound routes re-minimise b (when fitted) and certify that point; the gap certifies (W, b).
    """
    primal = problem.smooth_value(W, T) + problem.g_value(W)
    dual = problem.dual_value(T)
    best = (W, b, primal, primal - dual, "duality gap", math.nan) if math.isfinite(dual) else None
    if s_W is None:
        return best or (W, b, primal, math.inf, "none", math.nan)
    modulus = problem.modulus()
    if problem.indefinite and modulus <= 0.0:
        return best or (W, b, primal, math.nan, "nonconvex", modulus)
    residual, Wb, bb, Pb = 0.0, W, b, primal
    if problem.fit_intercept:
        b_hat, T_hat, residual = problem.best_intercept(W, b, T)
        primal_hat = problem.smooth_value(W, T_hat) + problem.g_value(W)
        if math.isfinite(residual) and primal_hat <= primal:
            gW, _ = problem.smooth_gradient(W, T_hat)
            gW_old, _ = problem.smooth_gradient(W, T)
            # The prox part of s does not depend on b: only the smooth gradient moves with it.
            s_W = s_W - gW_old + gW
            bb, Pb = b_hat, primal_hat
            norm_s = float(np.linalg.norm(s_W))
        else:
            residual = 0.0
            norm_s = math.hypot(float(np.linalg.norm(s_W)), float(np.linalg.norm(s_b)))
            modulus = min(modulus, 0.0)  # phi is not at hand: only the norm route, over (W, b), is left
    else:
        norm_s = math.hypot(float(np.linalg.norm(s_W)), float(np.linalg.norm(s_b)))
    candidates = [best] if best is not None else []
    if modulus > 0.0:
        candidates.append((Wb, bb, Pb, norm_s**2 / modulus + residual, "strong convexity", modulus))
    beta = float(getattr(problem.prox_term, "norm_modulus", 0.0) or 0.0)
    low = problem.lower_value()
    if beta > 0.0 and low is not None and not (problem.fit_intercept and bb is b):
        radius = max(0.0, Pb - low) / beta
        candidates.append((Wb, bb, Pb, norm_s * (float(np.linalg.norm(W)) + radius) + residual, "norm bound", modulus))
    if not candidates:
        return W, b, primal, math.inf, "none", modulus
    return min(candidates, key=lambda c: c[3])


def _fista(problem: _Composite, W, b, *, tol, max_iter) -> _Outcome:
    """FISTA with backtracking and gradient restart from (W, b), until the certificate meets ``tol``."""
    T = problem.scores(W, b)
    gW, gb = problem.smooth_gradient(W, T)
    # A first curvature estimate along the gradient (a lower estimate of L: backtracking raises it).
    norm_g = math.hypot(float(np.linalg.norm(gW)), float(np.linalg.norm(gb)))
    L = 1.0
    if norm_g > 0.0:
        h = 1e-4 * max(1.0, math.hypot(float(np.linalg.norm(W)), float(np.linalg.norm(b)))) / norm_g
        W1, b1 = W - h * gW, b - h * gb
        gW1, gb1 = problem.smooth_gradient(W1, problem.scores(W1, b1))
        change = math.hypot(float(np.linalg.norm(gW1 - gW)), float(np.linalg.norm(gb1 - gb)))
        L = max(change / (h * norm_g), 1e-12)
    outcome = None
    # From the start: a warm start at the optimum stops here when the dual route certifies it.
    W0, b0, primal, bound, route, modulus = _certify(problem, W, b, T, None, None)
    if bound <= tol * max(1.0, abs(primal)):
        return _Outcome(W0, b0, primal, bound, 0.0, 0, route, modulus, False, 0)
    W_prev, T_prev = W, T
    b_prev = b
    t = 1.0
    backtracks, stalled = 0, False
    for k in range(1, max_iter + 1):
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        Wy, by = W + beta * (W - W_prev), b + beta * (b - b_prev)
        Ty = T + beta * (T - T_prev)
        Fy = problem.smooth_value(Wy, Ty)
        if not math.isfinite(Fy):
            # Unbounded below along the iterates (a nonconvex smooth part): nothing to certify.
            return _Outcome(W_prev, b_prev, math.nan, math.nan, math.inf, k, "diverged", problem.modulus(), False,
                            backtracks)
        gW, gb = problem.smooth_gradient(Wy, Ty)
        while True:
            Wz = problem.prox(Wy - gW / L, 1.0 / L)
            bz = by - gb / L if problem.fit_intercept else by
            Tz = problem.scores(Wz, bz)
            Fz = problem.smooth_value(Wz, Tz)
            DW, Db = Wz - Wy, bz - by
            squared = float(np.vdot(DW, DW)) + float(np.vdot(Db, Db))
            model = Fy + float(np.vdot(gW, DW)) + float(np.vdot(gb, Db)) + 0.5 * L * squared
            # Within the rounding of F the condition holds: doubling L further would only stall.
            if Fz <= model + 16.0 * _EPS * (abs(Fy) + abs(Fz)) or L > 1e300:
                break
            L *= 2.0
            backtracks += 1
        # Gradient restart: the step points against the momentum.
        restart = float(np.vdot(Wy - Wz, Wz - W)) + float(np.vdot(by - bz, bz - b)) > 0.0
        W_prev, b_prev, T_prev = W, b, T
        W, b, T = Wz, bz, Tz
        t = 1.0 if restart else t_next
        size = math.sqrt(squared)
        stalled = size <= 1e3 * _EPS * max(1.0, math.hypot(float(np.linalg.norm(W)), float(np.linalg.norm(b))))
        if k == 1 or k % CHECK_EVERY == 0 or k == max_iter or stalled:
            gzW, gzb = problem.smooth_gradient(W, T)
            s_W = (Wy - Wz) * L - gW + gzW
            s_b = (by - bz) * L - gb + gzb
            kkt = math.hypot(float(np.linalg.norm(s_W)), float(np.linalg.norm(s_b)))
            Wc, bc, primal, bound, route, modulus = _certify(problem, W, b, T, s_W, s_b)
            outcome = _Outcome(Wc, bc, primal, bound, kkt, k, route, modulus, stalled, backtracks)
            if bound <= tol * max(1.0, abs(primal)) or stalled:
                break
            if route == "nonconvex" and kkt <= tol * max(1.0, norm_g):
                break
    return outcome


@attrs.frozen
class ProximalGradientSolver(Solver):
    """FISTA with backtracking and adaptive restart for a smooth loss plus a regulariser with a prox (linear kernel).

    Minimises the primal (1) of :mod:`multilabel_core.solvers.proximal` (the module docstring
    gives the iteration and the certificate): ``regularizer(W) + C * loss(Y, X W + 1 b^T)`` with
    the intercept b free (unpenalised) when fitted.

    Parameters
    ----------
    tol : float, default 1e-6
        The certificate's relative gap ``bound / max(1, |P|)`` at which the solve stops, certified.
    max_iter : int, default 10000
        Largest number of FISTA iterations (backtracking steps not counted); reaching it issues a
        ConvergenceWarning with the relative gap.
    n_jobs : int or None
        Label threads (:func:`~multilabel_core.parallel.map_threads`) when the loss and the
        regulariser are ``label_separable`` (squared hinge, logistic, least squares with
        Frobenius, L1 or the elastic net): each label is then solved as its own problem, whatever
        ``n_jobs`` is, so the model does not depend on it.  Other problems are solved jointly.

    Notes
    -----
    The loss must be smooth (``smooth``, ``value``, ``gradient``) and the kernel linear.  The
    regulariser is split into smooth terms (in the gradient step) and at most one nonsmooth term,
    which must have ``prox``; a second nonsmooth term or one without a prox is refused with a
    :class:`~multilabel_core.base.CapabilityError` naming it.  A learned relation is refused (it
    needs the alternating driver).  A regulariser that needs the training labels (its ``state``
    lists ``with_labels``: :class:`~multilabel_core.regularizers.LabelSimilarity`) is resolved
    with the problem's targets first; the resolved regulariser is returned in
    ``solution.regularizer`` (a composing estimator keeps it in ``parts_``).

    A composition the solver could never certify is refused before any work: when no route of the
    certificate applies (no conjugate for the gap, no strongly convex or norm term for the
    bounds; e.g. the Laplacian label similarity alone with a loss of bounded conjugate domain,
    where the minimum need not be attained).  A nonconvex smooth part is accepted and certified
    only where the data make P convex (the module docstring).  ``certificate.statistics`` holds
    the route (``"route"``), the curvature bound used (``"modulus"``), the final Lipschitz
    estimate and the backtracking count.  A warm start (a Solution's ``coef`` and ``intercept``)
    at the optimum stops at once (by the duality gap) or after one step (the bounds need one).
    """

    tol: float = attrs.field(default=1e-6, validator=positive)
    max_iter: int = attrs.field(default=10000, validator=count)
    n_jobs: int | None = n_jobs_field()

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("smooth", "value", "gradient"),
        "regularizer": ("value", "gradient"),
        "kernel": ("linear",),
    }
    consumes: ClassVar[dict[str, tuple[str, ...]]] = {"regularizer": ("with_labels",)}
    warm_state_names: ClassVar[dict[str, str]] = {
        "coef": "fixed: the primal W (d, L) to start from",
        "intercept": "fixed: the bias b (L,) to start from",
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        if problem.relation.learned:
            raise CapabilityError(
                f"ProximalGradientSolver solves for a fixed label relation, but {_name(problem.relation)} is learned; "
                "it needs an alternating solver"
            )
        smooth, prox_term = _split(problem.regularizer)
        self._check_certifiable(problem, smooth, prox_term)

    def _check_certifiable(self, problem, smooth, prox_term) -> None:
        loss, reg = problem.loss, problem.regularizer
        single = getattr(reg, "terms", None) is None
        conjugates = callable(getattr(loss, "conjugate", None)) and callable(getattr(reg, "conjugate", None))
        full_domain = float(getattr(loss, "curvature", 0.0) or 0.0) > 0.0
        if single and conjugates and (full_domain or not callable(getattr(reg, "range_projector", None))):
            return
        L = problem.n_labels
        lows = [_smooth_low(term, L) for term in smooth]
        if any(low < 0.0 for low in lows):
            return  # nonconvex: certified where the data make it convex, else reported (module docstring)
        strong = sum(lows) + float(getattr(prox_term, "strong_convexity", 0.0) or 0.0)
        if strong > 0.0 or full_domain:
            return
        if float(getattr(prox_term, "norm_modulus", 0.0) or 0.0) > 0.0 and getattr(loss, "lower_bound", None) is not None:
            return
        raise CapabilityError(
            f"ProximalGradientSolver cannot certify the regularizer {_name(reg)} with the loss {_name(loss)}: "
            "no conjugate pair for a duality gap (a singular quadratic needs a loss whose conjugate is finite "
            "everywhere), no strongly convex term and no norm term to bound the optimum; the minimum need "
            "not be attained. Add a norm or Frobenius term (regularizer='sum') or use least_squares"
        )

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        start = time.perf_counter()
        self.check(problem)
        regularizer = problem.regularizer
        if "with_labels" in tuple(getattr(regularizer, "state", ())) and callable(getattr(regularizer, "with_labels", None)):
            regularizer = regularizer.with_labels(problem.Y)
        W0, b0 = self._start(problem, warm_start)
        X, used = _used_columns(problem.X, regularizer, W0)
        d_full, W0 = W0.shape[0], W0[used]
        n_empty = d_full - int(used.size)
        separable = bool(getattr(problem.loss, "label_separable", False)) and bool(
            getattr(regularizer, "label_separable", False)
        )
        L = problem.n_labels
        if separable and L > 1:
            # Each label's share of the tolerance: the sum of the label gaps then meets tol on the whole.
            def solve_label(j):
                part = _Composite(X, problem.Y[:, [j]], problem.C, problem.loss, regularizer, problem.fit_intercept,
                                  n_empty)
                return _fista(part, W0[:, [j]], b0[[j]], tol=0.5 * self.tol / L, max_iter=self.max_iter)

            outcomes = map_threads(solve_label, range(L), self.n_jobs)
            W = np.hstack([o.W for o in outcomes])
            b = np.concatenate([o.b for o in outcomes])
            primal = float(sum(o.primal for o in outcomes))
            bound = float(sum(o.bound for o in outcomes))
            kkt = math.sqrt(sum(o.kkt**2 for o in outcomes))
            n_iter = max(o.n_iter for o in outcomes)
            routes = sorted({o.route for o in outcomes})
            route = routes[0] if len(routes) == 1 else ",".join(routes)
            modulus = min((o.modulus for o in outcomes), default=math.nan)
            backtracks = sum(o.n_backtracks for o in outcomes)
        else:
            whole = _Composite(X, problem.Y, problem.C, problem.loss, regularizer, problem.fit_intercept, n_empty)
            reason = whole.unbounded_direction() if whole.indefinite else None
            if reason is not None:
                raise ValueError(f"{type(self).__name__} cannot fit this problem: {reason}")
            o = _fista(whole, W0, b0, tol=self.tol, max_iter=self.max_iter)
            W, b, primal, bound, kkt, n_iter = o.W, o.b, o.primal, o.bound, o.kkt, o.n_iter
            route, modulus, backtracks = o.route, o.modulus, o.n_backtracks
        converged = math.isfinite(bound) and math.isfinite(primal) and bound <= self.tol * max(1.0, abs(primal))
        if not converged:
            self._warn(route, primal, bound, kkt, n_iter, modulus)
        certificate = Certificate.from_objectives(
            primal,
            primal - bound if not math.isnan(bound) else math.nan,
            kkt_violation=kkt,
            n_iter=int(n_iter),
            time=time.perf_counter() - start,
            converged=bool(converged),
            solver=type(self).__name__,
            statistics={"route": route, "modulus": modulus, "n_backtracks": int(backtracks), "separable": separable,
                        "empty_columns": n_empty},
        )
        if n_empty:
            W_full = np.zeros((d_full, L))
            W_full[used] = W
            W = W_full
        solution = Solution(
            coef=W,
            intercept=b if problem.fit_intercept else np.zeros(L),
            regularizer=regularizer,
            warm_state=WarmState(type(self).__name__, fixed={"coef": W, "intercept": b if problem.fit_intercept else np.zeros(L)}),
        )
        return Fit(solution, certificate)

    def _start(self, problem: Problem, warm_start: Solution | None):
        d, L = problem.X.shape[1], problem.n_labels
        state = warm_state_of(warm_start)
        if state is None or state.get("coef") is None:
            return np.zeros((d, L)), np.zeros(L)
        W = np.array(state.get("coef"), dtype=np.float64)
        if W.shape != (d, L):
            raise ValueError(f"warm start coef has shape {W.shape}, expected {(d, L)}")
        b = np.zeros(L)
        if problem.fit_intercept and state.get("intercept") is not None:
            b = np.array(state.get("intercept"), dtype=np.float64).reshape(-1)
            if b.shape != (L,):
                raise ValueError(f"warm start intercept has shape {b.shape}, expected {(L,)}")
        return W, b

    def _warn(self, route, primal, bound, kkt, n_iter, modulus) -> None:
        name = type(self).__name__
        if route == "diverged":
            reason = (
                f"the objective became non-finite after {n_iter} iterations: the smooth part is not bounded below "
                f"(curvature bound {modulus:.3g} < 0, an indefinite regulariser such as LLSF's R = 1 - S outweighing "
                "the loss); the returned point is the last finite iterate"
            )
        elif route == "nonconvex":
            reason = (
                f"the smooth part is not convex on these data (curvature bound C lambda_min(X_a^T X_a) + the "
                f"smooth terms' least Hessian eigenvalue = {modulus:.3g} <= 0: an indefinite regulariser such as "
                f"LLSF's R = 1 - S), so no bound on P - P* exists; only stationarity is certified "
                f"(gradient-mapping norm {kkt:.3g} after {n_iter} iterations); converged=False"
            )
        elif math.isinf(bound):
            reason = f"no certificate route applied at the last point (relative gap inf after {n_iter} iterations)"
        else:
            reason = (
                f"relative gap {bound / max(1.0, abs(primal)):.3g} > tol={self.tol:g} after {n_iter} iterations "
                f"(max_iter={self.max_iter}); increase max_iter or loosen tol"
            )
        warnings.warn(f"{name} did not converge: {reason}", ConvergenceWarning, stacklevel=3)
