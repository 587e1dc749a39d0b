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
from .._validation import check_scalar
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

    @property
    def certificate(self) -> Certificate:
        """One certificate for the whole run: the last W-step's, with the outer counts.

        ``n_iter`` is the number of W-steps, ``converged`` requires both the last inner
        solve and the outer iterations to have converged, and ``statistics`` holds
        ``objective_history``, ``inner_iterations`` (per W-step) and ``inner`` (the last
        inner certificate's statistics).
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
        converged = False
        while len(steps) < self.max_iter:
            solution, certificate = self.inner.solve(_step_problem(problem, omega), warm_start=warm)
            if steps and certificate.primal > steps[-1][1].primal:
                converged = True  # no progress the inner solver can resolve: keep the previous step
                break
            steps.append((solution, certificate, omega))
            if not problem.relation.learned or _relative_change(steps) <= self.tol:
                converged = True
                break
            updated = problem.relation.update(_weight_gram(problem, solution))
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


def _weight_gram(problem: Problem, solution: Solution) -> np.ndarray:
    """``W^T W`` (L, L): from ``coef``, or ``D^T (K D)`` from ``dual_coef`` D without forming W.

    The kernel is visited in row blocks (one BLAS product each).  D^T K D is positive
    semi-definite, but its rounding errors make it indefinite when W is 0 or nearly so
    (identical rows, where the dual's equality constraints give W = 0 exactly); they are
    bounded by ``2 n eps |D|^T |K| |D|`` (the forward error of the two products), and the
    eigenvalues within that bound are set to 0.  Larger negative ones are kept, for the
    relation to refuse (an indefinite kernel).
    """
    if solution.coef is not None:
        W = np.asarray(solution.coef)
        return W.T @ W
    D = np.asarray(solution.dual_coef, dtype=np.float64)
    n = D.shape[0]
    KD, magnitude = np.empty_like(D), np.empty_like(D)
    for rows in row_blocks(n, 3 * 8 * n):
        block = problem.kernel(problem.X[rows], problem.X)
        KD[rows] = block @ D
        magnitude[rows] = np.abs(block) @ np.abs(D)
    roundoff = 2.0 * n * np.finfo(np.float64).eps * np.linalg.norm(np.abs(D).T @ magnitude, 2)
    gram = D.T @ KD
    values, vectors = np.linalg.eigh((gram + gram.T) / 2.0)
    values[np.abs(values) <= roundoff] = 0.0
    gram = (vectors * values) @ vectors.T
    return (gram + gram.T) / 2.0


def _rebased(solution: Solution, omega_old, omega_new) -> Solution:
    """The warm start for a W-step at ``omega_new``: the same dual variables B, ``dual_coef = B Omega_new``.

    Nothing to do when the solution carries its dual variables (they do not depend on
    Omega) or has no dual coefficients (a primal solution).
    """
    if solution.dual is not None or solution.dual_coef is None:
        return solution
    B = scipy.linalg.solve(np.asarray(omega_old), np.asarray(solution.dual_coef).T, assume_a="pos").T
    return attrs.evolve(solution, dual_coef=B @ omega_new)
