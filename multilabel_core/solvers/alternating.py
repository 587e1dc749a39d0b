"""Alternating minimisation over the weights and a learned label relation (MLRL, section 2.2).

Notation (Zhang & Yeung, Multi-Label Relationship Learning, ACM TKDD; seed 000).  A
:class:`~multilabel_core.base.Problem` whose regulariser has the form
``1/2 tr(W M^-1 W^T)`` (it provides ``label_gram``) and whose relation is learned is
the joint problem::

    min_{W, b, Omega}  1/2 tr(W Omega^-1 W^T) + C sum_ij loss(y_j^i, w_i^T phi(x_j) + b_i)      (6)
    s.t.  Omega > 0,  tr(Omega) = 1,

MLRL's problem (6) divided by lambda (C = 1/(n lambda)).  It is jointly convex
(Theorem 1); :class:`AlternatingSolver` minimises it block by block:

1. **W-step.**  Omega fixed, (W, b) from the inner solver on the problem whose regulariser
   is ``LabelCovariance(Omega)`` (problem 7; for the hinge loss, SMO on the dual 10),
   warm-started from the previous step's dual variables;
2. **Omega-step.**  W fixed, the closed form of problem (11),
   ``Omega = relation.update(W^T W)`` (:class:`~multilabel_core.relations.LearnedCovariance`:
   ``(W^T W)^(1/2) / tr``, kept positive definite by epsilon I).  For a kernel solver,
   W = phi(X)^T D with D its ``dual_coef`` (the representer form, D = B Omega for SMO, with
   B = alpha * Y), so ``W^T W = D^T K D`` is computed without forming W: one pass over
   the kernel, O(n^2 L + n L^2).

Omega starts at ``relation.initial(L)`` (I / L for MLRL).  Each step decreases the
objective: the W-step minimises it over (W, b) to the inner solver's precision, the
Omega-step over Omega exactly (up to the epsilon shift).  The objective after each
W-step, ``J_k`` (the inner certificate's primal: it is (6) at (W_k, b_k, Omega_{k-1})),
is recorded; the iterations stop when ``|J_{k-1} - J_k| <= tol |J_{k-1}|``, or after
``max_iter`` W-steps (a :class:`~multilabel_core.solvers.ConvergenceWarning`).  A W-step
whose objective is above the previous one means that the remaining progress is below the
inner solver's precision: it is discarded and the iterations stop, converged.  So the
recorded objectives never increase.

Warm starts.  Between two W-steps only Omega changes, and the feasible set of the dual
(10) does not depend on Omega: the previous alpha is a feasible start.  A solution that
carries its dual variables (``Solution.dual``, SMO's alpha) is passed on as it is; one
with only ``dual_coef = B Omega_old`` is re-expressed as ``B Omega_new`` for the next
Omega.  A primal solution (``coef``) is passed on unchanged.

Certificate of the joint problem.  Each W-step's certificate bounds (6) only for its fixed
Omega.  For the whole problem, with B the W-step's dual variables (``dual_coef = B Omega``)
and ``H = B^T K B``, the W-step dual is ``d(B) - 1/2 tr(H Omega)`` where d collects the
loss terms (``sum alpha`` for the hinge), and minimising over Omega first (Sion's minimax
theorem: the Lagrangian is linear in Omega, concave in the dual variables, the set
{Omega >= 0, tr(Omega) = 1} compact) gives the dual of (6) itself::

    g(B) = d(B) - 1/2 lambda_max(H)  <=  min (6)  <=  U_k = J_k - 1/2 tr(H Omega_{k-1}) + 1/2 (tr (W_k^T W_k)^(1/2))^2

since ``sup tr(H Omega)`` over that set is H's largest eigenvalue, and U_k is (6) at
(W_k, b_k) with the best Omega (the squared trace norm of W_k).  ``min_k U_k - max_k g``
bounds the distance of the run from the optimum of (6) whatever the path; it is recorded
for inner solvers that return dual coefficients (``joint_gap_history``, relative to
``min_k U_k``).

For a relation that is not learned (``Independent``: BSVM) the solver does one W-step.
"""

from __future__ import annotations

import numbers
import time
from typing import ClassVar

import attrs
import numpy as np
import scipy.linalg

from .._blocks import row_blocks
from ..validation import check_scalar
from ..base import LabelRelation, Problem, Solution, Solver
from ..certificate import Certificate
from ..regularizers import LabelCovariance
from ._convergence import warn_not_converged
from .smo import SMOSolver

__all__ = ["AlternatingResult", "AlternatingSolver"]


@attrs.frozen(eq=False)
class _HeldFixed(LabelRelation):
    """The relation during one W-step: Omega held at its current value."""

    omega: np.ndarray

    learned: ClassVar[bool] = False

    def initial(self, n_labels: int) -> np.ndarray:
        return self.omega

    def update(self, gram) -> np.ndarray:
        return self.omega


@attrs.frozen(eq=False)
class AlternatingResult:
    """What :meth:`AlternatingSolver.run` returns.

    Attributes
    ----------
    solution : Solution
        The last accepted W-step's solution, with ``relation`` the Omega it was solved
        for (so W, b and Omega belong together: ``dual_coef = B Omega`` for SMO).
    certificates : list of Certificate
        The inner solver's certificate of every accepted W-step, in order.
    objectives : list of float
        ``J_k``, objective (6) (the problem's primal) after each accepted W-step.
    bounds : list of (float, float)
        ``(U, g)`` of every accepted W-step, the joint problem's upper and lower bounds
        (module docstring); empty when the inner solver returns primal weights or the
        relation is not learned.
    converged : bool
        Whether the relative change of the objective fell below ``tol`` (or a W-step
        could not improve it) before ``max_iter`` W-steps.
    time : float
        Wall-clock seconds.
    """

    solution: Solution
    certificates: list
    objectives: list
    converged: bool
    time: float
    bounds: list = attrs.field(factory=list)

    @property
    def joint_gap_history(self) -> list:
        """``(min_{j<=k} U_j - max_{j<=k} g_j) / |min_{j<=k} U_j|`` after each W-step (non-increasing)."""
        upper, lower = np.minimum.accumulate([u for u, _ in self.bounds]), np.maximum.accumulate([g for _, g in self.bounds])
        return [float((u - g) / abs(u)) if u != 0.0 else float(u - g) for u, g in zip(upper, lower)]

    @property
    def certificate(self) -> Certificate:
        """One certificate for the whole run: the last W-step's, with the outer counts.

        ``n_iter`` is the number of W-steps, ``converged`` requires both the last inner
        solve and the outer iterations to have converged, and ``statistics`` holds
        ``objective_history``, ``inner_iterations`` (per W-step), ``joint_gap_history``
        (when available) and ``inner`` (the last inner certificate's statistics).
        """
        last = self.certificates[-1]
        return attrs.evolve(
            last,
            n_iter=len(self.certificates),
            time=self.time,
            converged=bool(last.converged and self.converged),
            solver=f"AlternatingSolver({last.solver})",
            statistics={
                "objective_history": list(self.objectives),
                "inner_iterations": [int(c.n_iter) for c in self.certificates],
                "joint_gap_history": self.joint_gap_history,
                "inner": last.statistics,
            },
        )


def _positive(_, attribute, value) -> None:
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)


def _count(_, attribute, value) -> None:
    check_scalar(value, attribute.name, kind=numbers.Integral, low=1)


@attrs.frozen
class AlternatingSolver(Solver):
    """Alternating W- and Omega-steps for a learned label relation (module docstring).

    Solves a :class:`~multilabel_core.base.Problem` whose relation provides ``initial``
    and ``update`` and whose regulariser provides ``label_gram`` (the form
    ``1/2 tr(W M^-1 W^T)``: the solver learns M, replacing it at every W-step by
    ``LabelCovariance(Omega)``).  The W-steps are the ``inner`` solver's, which must
    accept the problem with a fixed relation.  Composed with ``loss="hinge"``, a
    ``LabelCovariance`` regulariser, ``relation="learned_covariance"``, any kernel and
    ``inner=SMOSolver()`` this is MLRL.

    Parameters
    ----------
    inner : Solver, default SMOSolver()
        The solver of the W-steps (for the hinge loss: SMO on the dual 10).
    max_iter : int, default 100
        Largest number of W-steps.
    tol : float, default 1e-4
        Stop when the objective changes by at most ``tol`` relatively between W-steps.

    ``solve`` returns the solution with ``relation`` set and
    :attr:`AlternatingResult.certificate`; :meth:`run` returns every step's certificate
    and objective.  The kernel is recomputed by the inner solver at every W-step unless
    the problem's kernel is precomputed (the MLRL presets pass it so).
    """

    inner: Solver = attrs.field(factory=SMOSolver, validator=attrs.validators.instance_of(Solver))
    max_iter: int = attrs.field(default=100, validator=_count)
    tol: float = attrs.field(default=1e-4, validator=_positive)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "relation": ("initial", "update"),
        "regularizer": ("label_gram",),
    }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        self.inner.check(_step_problem(problem, problem.relation.initial(problem.n_labels)))

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple[Solution, Certificate]:
        result = self.run(problem, warm_start)
        return result.solution, result.certificate

    def run(self, problem: Problem, warm_start: Solution | None = None) -> AlternatingResult:
        """Alternate W- and Omega-steps; ``warm_start`` may carry a ``relation`` to start from."""
        self.check(problem)
        start = time.perf_counter()
        omega, warm = self._start(problem, warm_start)
        steps: list[tuple[Solution, Certificate, np.ndarray]] = []
        bounds: list[tuple[float, float]] = []
        converged = False
        while len(steps) < self.max_iter:
            solution, certificate = self.inner.solve(_step_problem(problem, omega), warm_start=warm)
            if steps and certificate.primal > steps[-1][1].primal:
                converged = True  # no progress the inner solver can resolve: keep the previous step
                break
            steps.append((solution, certificate, omega))
            if not problem.relation.learned:
                converged = True
                break
            gram, bound = _weight_gram_and_bounds(problem, solution, certificate, omega)
            if bound is not None:
                bounds.append(bound)
            if _relative_change(steps) <= self.tol:
                converged = True
                break
            updated = problem.relation.update(gram)
            warm, omega = _rebased(solution, omega, updated), updated
        if not converged:
            warn_not_converged(
                "AlternatingSolver",
                f"max_iter={self.max_iter} W-steps reached; relative change {_relative_change(steps):.3g} > tol={self.tol:.3g}",
            )
        solution, _, omega = steps[-1]
        return AlternatingResult(
            solution=attrs.evolve(solution, relation=omega),
            certificates=[certificate for _, certificate, _ in steps],
            objectives=[float(certificate.primal) for _, certificate, _ in steps],
            converged=converged,
            time=time.perf_counter() - start,
            bounds=bounds,
        )

    def _start(self, problem: Problem, warm_start: Solution | None) -> tuple[np.ndarray, Solution | None]:
        """Omega_0 (the warm start's relation when it has one and Omega is learned) and the inner warm start."""
        omega = problem.relation.initial(problem.n_labels)
        if warm_start is None:
            return omega, None
        if warm_start.relation is None:
            return omega, warm_start
        if problem.relation.learned:
            omega = np.asarray(warm_start.relation, dtype=np.float64)
        return omega, _rebased(warm_start, warm_start.relation, omega)


def _relative_change(steps) -> float:
    """``|J_{k-1} - J_k| / |J_{k-1}|`` of the last two W-steps (inf after the first)."""
    if len(steps) < 2:
        return np.inf
    previous, current = steps[-2][1].primal, steps[-1][1].primal
    return abs(previous - current) / abs(previous) if previous != 0.0 else abs(current)


def _step_problem(problem: Problem, omega: np.ndarray) -> Problem:
    """The W-step's problem: the regulariser 1/2 tr(W Omega^-1 W^T), Omega held fixed."""
    return attrs.evolve(problem, regularizer=LabelCovariance(omega), relation=_HeldFixed(omega))


def _weight_gram_and_bounds(problem: Problem, solution: Solution, certificate: Certificate, omega):
    """``W^T W`` for the Omega-step, and the joint bounds ``(U, g)`` (module docstring) or None.

    From ``coef``: ``W^T W`` directly (no bounds: a primal solver's certificate need not be
    at a dual point of the form B).  From ``dual_coef = B Omega``: B by a solve with
    Omega, ``H = B^T K B`` in one pass over the kernel, ``W^T W = Omega H Omega``.
    """
    if solution.coef is not None:
        W = np.asarray(solution.coef)
        return W.T @ W, None
    omega = np.asarray(omega, dtype=np.float64)
    B = scipy.linalg.solve(omega, np.asarray(solution.dual_coef, dtype=np.float64).T, assume_a="pos").T
    values, vectors = _kernel_gram(problem, B)
    H = _symmetric((vectors * values) @ vectors.T)
    gram = _symmetric(omega @ H @ omega)
    quadratic = 0.5 * float(np.sum(H * omega))
    # The trace norm of W is the sum of the singular values of the factor Lambda^(1/2) V^T Omega
    # of W^T W = Omega H Omega, which carry rounding of order eps ||W||.  The square roots of
    # gram's eigenvalues would not: where W is rank-deficient (two labels alike) a zero
    # eigenvalue computed as eps ||W||^2 adds sqrt(eps) ||W||, and U rose above J_k.
    factor = np.sqrt(np.clip(values, 0.0, None))[:, None] * (vectors.T @ omega)
    trace_norm = float(scipy.linalg.svdvals(factor).sum())
    upper = float(certificate.primal) - quadratic + 0.5 * trace_norm**2
    lower = float(certificate.dual) + quadratic - 0.5 * float(values[-1])  # eigh sorts ascending
    return gram, (upper, lower)


def _kernel_gram(problem: Problem, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The eigenvalues and eigenvectors of ``H = B^T K B`` (L, L), without storing K: the kernel visited in row blocks.

    It is positive semi-definite, but its rounding errors make it indefinite when B^T K B
    is 0 or nearly so (identical rows, where the dual's equality constraints give W = 0
    exactly); they are bounded by ``2 n eps |B|^T |K| |B|`` (the forward error of the two
    products), and the eigenvalues within that bound are set to 0.  Larger negative ones
    are kept, for the relation to refuse (an indefinite kernel).
    """
    n = B.shape[0]
    KB, magnitude = np.empty_like(B), np.empty_like(B)
    for rows in row_blocks(n, 3 * 8 * n):
        block = problem.kernel(problem.X[rows], problem.X)
        KB[rows] = block @ B
        magnitude[rows] = np.abs(block) @ np.abs(B)
    roundoff = 2.0 * n * np.finfo(np.float64).eps * np.linalg.norm(np.abs(B).T @ magnitude, 2)
    values, vectors = np.linalg.eigh(_symmetric(B.T @ KB))
    values[np.abs(values) <= roundoff] = 0.0
    return values, vectors


def _symmetric(matrix: np.ndarray) -> np.ndarray:
    return (matrix + matrix.T) / 2.0


def _rebased(solution: Solution, omega_old, omega_new) -> Solution:
    """The warm start for a W-step at ``omega_new``: the same dual variables B, ``dual_coef = B Omega_new``.

    Nothing to do when the solution carries its dual variables (they do not depend on
    Omega) or has no dual coefficients (a primal solution).
    """
    if solution.dual is not None or solution.dual_coef is None:
        return solution
    B = scipy.linalg.solve(np.asarray(omega_old), np.asarray(solution.dual_coef).T, assume_a="pos").T
    return attrs.evolve(solution, dual_coef=B @ omega_new)
