"""Primal quasi-Newton solver for linear models: L-BFGS-B on the regularised risk.

Notation: X (n, d) the training rows (dense or CSR/CSC, never densified), Y (n, L) the
targets, C the loss weight, Omega the regulariser, ell the loss.  The solver minimises::

    P(V) = Omega(V) + C * ell(Y, X_a V),    X_a = [X, 1] (n, d + 1),  V = [W; b^T] (d + 1, L)   (1)

**The bias is regularised**, as in LIBLINEAR: it is the weight of an appended constant
feature of value 1 (scikit-learn's ``LinearSVC`` with ``intercept_scaling=1`` solves the
same problem).  The reason is the dual.  With an unregularised b, the Fenchel dual
carries the equality constraint ``1^T A = 0``, which the dual point built from an
approximate primal point violates, so no finite duality gap exists before the exact
optimum.  With the constant feature, (1) is an unconstrained composite problem
``f(X_a V) + Omega(V)`` with ``f = C ell(Y, .)``, whose Fenchel dual is finite at every
iterate::

    D(A) = -C * ell*(Y, -A / C) - Omega*(X_a^T A)                                            (2)

Weak duality gives P(V) >= D(A) for every A (A is n x L); at the optimum,
``A = -C * ell'(Y, X_a V)`` and P = D.  The certificate evaluates (2) at that A for the
returned V, so ``gap = P - D >= 0`` bounds the suboptimality of V.  Without
``fit_intercept``, X_a = X and there is no bias.

All labels are solved at once, in (d + 1) L variables.  With a label-separable loss and
regulariser (squared hinge and Frobenius: binary relevance) this is exactly L separate
per-label problems, solved side by side; a coupling regulariser (a fixed label
covariance) needs nothing more.
"""

from __future__ import annotations

import time
import warnings
from typing import ClassVar

import attrs
import numpy as np
import scipy.optimize

from ..validation import count, positive
from ..base import CapabilityError, Fit, Problem, RelationState, Solution, Solver, WarmState, warm_state_of
from ..certificate import Certificate
from ._convergence import ConvergenceWarning, warn_not_converged

__all__ = ["LBFGSSolver"]


class _LinearPrimal:
    """The primal (1) and dual (2) of one problem, on the flat variable ``v = ravel(V)``."""

    def __init__(self, problem: Problem):
        self.X, self.Y, self.C = problem.X, problem.Y, problem.C
        self.loss, self.regularizer = problem.loss, problem.regularizer
        self.fit_intercept = problem.fit_intercept
        self.n_features = problem.X.shape[1]
        self.shape = (self.n_features + int(self.fit_intercept), problem.n_labels)

    def scores(self, V: np.ndarray) -> np.ndarray:
        """``T = X_a V`` (n, L)."""
        T = np.asarray(self.X @ V[: self.n_features], dtype=np.float64)
        if self.fit_intercept:
            T += V[self.n_features]
        return T

    def adjoint(self, G: np.ndarray) -> np.ndarray:
        """``X_a^T G`` (d + 1, L): a sparse-times-dense product when X is sparse."""
        XtG = np.asarray(self.X.T @ G, dtype=np.float64)
        return np.vstack([XtG, G.sum(axis=0)]) if self.fit_intercept else XtG

    def value_and_gradient(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """P(V) of (1) and its gradient ``Omega'(V) + C X_a^T ell'(Y, X_a V)``."""
        V = v.reshape(self.shape)
        T = self.scores(V)
        value = self.regularizer.value(V) + self.C * self.loss.value(self.Y, T)
        gradient = self.regularizer.gradient(V) + self.C * self.adjoint(self.loss.gradient(self.Y, T))
        return value, gradient.ravel()

    def missing_conjugates(self) -> list[str]:
        """The parts without a ``conjugate``: (2) cannot be evaluated while this is not empty."""
        return [
            f"{role} {type(part).__name__}"
            for role, part in (("loss", self.loss), ("regularizer", self.regularizer))
            if not callable(getattr(part, "conjugate", None))
        ]

    def dual(self, V: np.ndarray) -> float:
        """D(A) of (2) at ``A = -C ell'(Y, X_a V)``; nan when a part has no conjugate."""
        if self.missing_conjugates():
            return float("nan")
        G = self.loss.gradient(self.Y, self.scores(V))  # = -A / C
        return -self.C * self.loss.conjugate(self.Y, G) - self.regularizer.conjugate(-self.C * self.adjoint(G))

    def pack(self, warm_start: Solution | None) -> np.ndarray:
        """The flat starting point: zero, or ``[coef; intercept^T]`` of a warm start's state."""
        state = warm_state_of(warm_start)
        if state is None or state.get("coef") is None:
            return np.zeros(np.prod(self.shape))
        coef = np.asarray(state.get("coef"), dtype=np.float64)
        if coef.shape != (self.n_features, self.shape[1]):
            raise ValueError(f"warm start coef has shape {coef.shape}, expected {(self.n_features, self.shape[1])}")
        if not self.fit_intercept:
            return coef.ravel()
        intercept = np.asarray(state.get("intercept"), dtype=np.float64)
        if intercept.shape != (self.shape[1],):
            raise ValueError(f"warm start intercept has shape {intercept.shape}, expected {(self.shape[1],)}")
        return np.vstack([coef, intercept]).ravel()

    def unpack(self, v: np.ndarray) -> Solution:
        V = v.reshape(self.shape)
        intercept = V[self.n_features].copy() if self.fit_intercept else np.zeros(self.shape[1])
        # The regulariser sees the bias row too (as LIBLINEAR's): a relation step must see the same
        # weights, or an alternating solve would update Omega from W while the objective holds [W; b].
        coef = V[: self.n_features].copy()
        return Solution(
            coef=coef,
            intercept=intercept,
            relation_state=RelationState(weight_factor=V.copy()),
            warm_state=WarmState("LBFGSSolver", fixed={"coef": coef, "intercept": intercept}),
        )


@attrs.frozen
class LBFGSSolver(Solver):
    """Minimise the primal (1) with scipy's L-BFGS-B (smooth losses and regularisers, linear kernel).

    Parameters
    ----------
    tol : float, default 1e-6
        Stopping rule: ``max_ij |dP/dV_ij| <= tol * max(1, max_ij |dP/dV_ij at V = 0|)``,
        the gradient relative to its value at the origin (LIBLINEAR's primal solvers use
        the same relative rule), so the tolerance does not depend on C or n.  The
        optimizer's relative-decrease test is switched off: the gradient rule alone
        decides convergence.  Near the optimum P decreases by about |gradient|^2, so
        tolerances much below sqrt(machine epsilon) ~ 1e-8 cannot be certified in double
        precision; the line search then stalls and a ConvergenceWarning says so.
    max_iter : int, default 1000
        Largest number of L-BFGS-B iterations; reaching it without meeting the rule issues
        a :class:`~multilabel_core.solvers.ConvergenceWarning`.

    Notes
    -----
    :meth:`solve` returns a :class:`~multilabel_core.base.Fit` (``solution.coef`` W,
    ``solution.intercept`` b).  The certificate reports ``kkt_violation = max |dP/dV|``,
    the primal (1), the dual (2) and their gap, and ``n_iter`` in quasi-Newton
    iterations.  ``converged`` needs both the gradient rule and a finite gap: when the
    loss or the regulariser has no ``conjugate`` the dual and the gap are ``nan``, and a
    stationary point is reported ``converged=False`` with a ConvergenceWarning naming the
    part.  A warm start from the optimum stops at once.

    Quasi-Newton steps need a gradient: the loss and the regulariser must declare
    ``smooth``.  A non-smooth regulariser (:class:`~multilabel_core.regularizers.NuclearNorm`,
    :class:`~multilabel_core.regularizers.LowRank`) is refused with a
    :class:`~multilabel_core.base.CapabilityError`; on a kink L-BFGS-B would stop at a
    point that is not optimal (for the nuclear norm its dual, the indicator of the
    spectral-norm ball, is then -inf).
    """

    tol: float = attrs.field(default=1e-6, validator=positive)
    max_iter: int = attrs.field(default=1000, validator=count)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": ("smooth", "value", "gradient"),
        "regularizer": ("smooth", "value", "gradient"),
        "kernel": ("linear",),
    }
    warm_state_names: ClassVar[dict[str, str]] = {
        "coef": "fixed: the primal W (d, L) to start from",
        "intercept": "fixed: the bias b (L,) to start from",
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        if problem.relation.learned:
            raise CapabilityError(
                f"{type(self).__name__} solves for a fixed label relation, but {type(problem.relation).__name__} "
                "is learned; it needs an alternating solver"
            )

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        primal = _LinearPrimal(problem)
        _, gradient_at_zero = primal.value_and_gradient(np.zeros(np.prod(primal.shape)))
        gtol = self.tol * max(1.0, float(np.abs(gradient_at_zero).max()))
        result = scipy.optimize.minimize(
            primal.value_and_gradient,
            primal.pack(warm_start),
            jac=True,
            method="L-BFGS-B",
            # maxfun is set high so that max_iter is the limit that binds.
            options={"maxiter": self.max_iter, "maxfun": 20 * self.max_iter, "gtol": gtol, "ftol": 0.0},
        )
        kkt_violation = float(np.abs(result.jac).max())
        dual = primal.dual(result.x.reshape(primal.shape))
        stationary = kkt_violation <= gtol
        # Converged means certified: a stationary point whose gap cannot be evaluated is not.
        converged = stationary and np.isfinite(result.fun - dual)
        if not stationary:
            warn_not_converged(type(self).__name__, f"{result.message} (max |gradient| {kkt_violation:.3g} > {gtol:.3g})")
        elif not converged:
            missing = primal.missing_conjugates()
            reason = (
                f"the {' and the '.join(missing)} {'have' if len(missing) > 1 else 'has'} no conjugate, "
                "so the duality gap (2) is undefined"
                if missing
                else f"the duality gap is {result.fun - dual!r} (primal {result.fun!r}, dual {dual!r})"
            )
            warnings.warn(
                f"{type(self).__name__} reached the gradient rule (max |gradient| {kkt_violation:.3g} <= {gtol:.3g}) "
                f"but cannot certify the point: {reason}; the certificate reports converged=False",
                ConvergenceWarning,
                stacklevel=2,
            )
        solution = primal.unpack(result.x)
        certificate = Certificate.from_objectives(
            result.fun,
            dual,
            kkt_violation=kkt_violation,
            n_iter=int(result.nit),
            time=time.perf_counter() - start,
            converged=bool(converged),
            solver=type(self).__name__,
        )
        return Fit(solution, certificate)
