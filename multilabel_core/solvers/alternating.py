"""The one alternating driver: a model step by any inner solver, then a relation step.

Every method that learns a label relation minimises a problem of the form::

    min_{W, b, Omega}  J(W, b, Omega) = R_Omega(W) + C loss(Y, scores(W, b))
    s.t.  Omega > 0,  tr(Omega) = 1,

where the regulariser R depends on the relation Omega (an (L, L) label covariance).
Examples: Zhang & Yeung, *Multi-Label Relationship Learning* (ACM TKDD), problem (6),
``R = 1/2 tr(W Omega^-1 W^T)``; Zhang & Yeung, *A Convex Formulation for Learning Task
Relationships in Multi-Task Learning* (UAI 2010), problem (4),
``R = lam1/2 ||W||^2 + lam2/2 tr(W Omega^-1 W^T)``; Gu, Li & Han, *Correlated Multi-Label
Feature Selection* (CIKM 2011), problem (6), the same with the ranking hinge.  Each is
jointly convex in (W, b, Omega), and :class:`AlternatingSolver` minimises it block by block:

1. **Model step.**  Omega held fixed, (W, b) from the ``inner`` solver on the problem
   whose regulariser is ``regularizer.with_relation(Omega)`` (and whose relation is held
   fixed), warm-started from the previous step's solution (the dual feasible sets of
   these problems do not depend on Omega, so the previous dual variables are a feasible
   start).
2. **Relation step.**  (W, b) fixed, ``Omega = relation.update(W^T W)``, the closed form
   of the LabelRelation (:class:`~multilabel_core.relations.LearnedCovariance`:
   ``(W^T W)^(1/2) / tr``, kept positive definite).  ``W^T W`` comes from the model
   step's solution: a factor F with ``F^T F = W^T W`` in ``solution.extras["weight_factor"]``
   (kernel solvers give it without a pass over the kernel, :func:`~.smo.relation_statistics`;
   the ranking solvers give the re-weighted features' one), else the primal ``coef``.

Stopping rule (the one rule of every alternating method).  The objective after each model
step, ``J_k`` (its certificate's primal), is recorded; the iterations stop when

    |J_{k-1} - J_k| <= tol * max(OBJECTIVE_FLOOR, |J_{k-1}|),

or after ``max_iter`` model steps (a ConvergenceWarning).  A model step whose own certificate
is not converged ends the iterations, not converged (a ConvergenceWarning), when its relative
gap is already within :data:`~multilabel_core.certificate.GAP_RTOL` (the inner tolerance is
below what the solver can certify) or the previous step did not converge either (the inner
budget is too small for any step); otherwise the next, warm-started step goes on from it,
which usually converges.  The objectives are sums over
examples of losses of order one, so the floor (1, one example's loss) makes the rule
absolute only for problems whose whole objective is below one example's loss, where a
relative change means nothing.  A model step whose objective is above the previous one
means that the remaining progress is below the inner solver's precision: it is discarded
and the iterations stop, converged.  So the recorded objectives never increase.

Joint certificate.  Each model step's certificate bounds J only for its fixed Omega.  Where
the regulariser provides ``relation_value(F)`` (the least regulariser value over the
relations, for weights with ``W^T W = F^T F``) and ``relation_dual(H)`` (the largest
``1/2 tr(H M(Omega))`` over the relations, M the label coupling the dual sees) and the model
step's solution gives H, the matrix of its dual's quadratic term (``extras["dual_gram"]``),
the joint problem has the bounds::

    g_k = D_k + Q_k - relation_dual(H_k)  <=  min J  <=  U_k = J_k - Q_k + relation_value(F_k)

with D_k the step's dual objective and Q_k its regulariser value (``extras["regularizer_value"]``,
``1/2 tr(H M)``): U_k is J at (W_k, b_k) with the best relation, and g_k is the dual of the
joint problem (Sion's minimax theorem: the Lagrangian is linear in M(Omega)'s argument and
concave in the dual variables, the set {Omega >= 0, tr Omega = 1} compact).
``min_k U_k - max_k g_k`` bounds the distance of the run from the optimum of the joint
problem whatever the path; its relative value is ``history["joint_gap"]``.

Model state.  An inner solver may learn a block of its own from step to step -- the ranking
solver's feature-subset weights lambda (Gu, Li & Han, eq. 31): it then provides
``learns_state(problem) -> True``, carries the block in its solution's ``extras`` (the next
model step reads it from the warm start), and the driver alternates even when the relation
is fixed.  For a fixed relation and an inner solver without state
(:class:`~multilabel_core.relations.Independent`: BSVM, LaRank) the driver does one model step.
"""

from __future__ import annotations

import time
from typing import ClassVar

import attrs
import numpy as np

from ..base import CapabilityError, Fit, LabelRelation, Problem, Solution, Solver
from ..certificate import within_gap_rtol
from ..validation import count, positive
from ._convergence import warn_not_converged
from .smo import SMOSolver

__all__ = ["OBJECTIVE_FLOOR", "AlternatingSolver", "HeldRelation", "relative_change", "weight_factor"]

#: The floor of the stopping rule's relative change (module docstring).
OBJECTIVE_FLOOR = 1.0


@attrs.frozen(eq=False)
class HeldRelation(LabelRelation):
    """A relation held at a given matrix during one model step (not learned)."""

    matrix: np.ndarray

    learned: ClassVar[bool] = False

    def initial(self, n_labels: int) -> np.ndarray:
        return self.matrix

    def update(self, gram) -> np.ndarray:
        return self.matrix


def relative_change(previous: float, current: float) -> float:
    """``|J_{k-1} - J_k| / max(OBJECTIVE_FLOOR, |J_{k-1}|)``, the stopping rule's measure."""
    return abs(previous - current) / max(OBJECTIVE_FLOOR, abs(previous))


def weight_factor(solution: Solution) -> np.ndarray:
    """A factor F with ``F^T F = W^T W`` for the relation step: the solver's own, else ``coef``."""
    factor = solution.extras.get("weight_factor")
    if factor is not None:
        return np.asarray(factor)
    if solution.coef is None:
        raise ValueError(
            "the model step returned neither primal weights nor extras['weight_factor']: the relation step needs W^T W"
        )
    return np.asarray(solution.coef)


@attrs.frozen
class AlternatingSolver(Solver):
    """Alternate model steps (any inner solver) and relation steps (module docstring).

    Solves a :class:`~multilabel_core.base.Problem` whose relation provides ``initial``
    and ``update`` and whose regulariser provides ``with_relation`` (the same regulariser
    with the relation held at a given matrix).  Composed with the hinge loss,
    ``label_covariance``, ``learned_covariance``, any kernel and ``inner=SMOSolver()`` this
    is MLRL; with ``frobenius_label_covariance`` it is MTRL; with the ranking hinge and the
    ranking solver, CLaRank.

    Parameters
    ----------
    inner : Solver, default SMOSolver()
        The solver of the model steps; it must accept the problem with a fixed relation.
    max_iter : int, default 100
        Largest number of model steps.
    tol : float, default 1e-4
        The stopping rule's relative change (module docstring).

    Notes
    -----
    ``solve`` returns a :class:`~multilabel_core.base.Fit` whose ``solution`` is the last
    accepted model step's, with ``relation`` the Omega it was solved for; ``steps`` holds
    every accepted step's certificate; ``history`` the ``"objective"`` J_k, and where the
    regulariser and the inner solver provide them (module docstring) the ``"bounds"``
    (g_k, U_k) -- lower first, as every ``"bounds"`` history -- and the relative ``"joint_gap"``.  A ``warm_start`` carrying a ``relation``
    starts there.
    """

    inner: Solver = attrs.field(factory=SMOSolver, validator=attrs.validators.instance_of(Solver))
    max_iter: int = attrs.field(default=100, validator=count)
    tol: float = attrs.field(default=1e-4, validator=positive)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"relation": ("initial", "update")}

    @property
    def consumes(self) -> dict[str, tuple[str, ...]]:
        """What the model steps read: the inner solver's requirements and optional inputs (the driver
        passes a fixed relation's problem to it unchanged)."""
        roles = set(self.inner.requires) | set(getattr(self.inner, "consumes", {}))
        return {
            role: tuple(self.inner.requires.get(role, ())) + tuple(getattr(self.inner, "consumes", {}).get(role, ()))
            for role in roles
        }

    def check(self, problem: Problem) -> None:
        super().check(problem)
        if problem.relation.learned and not callable(getattr(problem.regularizer, "with_relation", None)):
            raise CapabilityError(
                f"{type(self).__name__} learns the relation through regularizer.with_relation, which "
                f"{type(problem.regularizer).__name__} does not provide"
            )
        self.inner.check(self.step_problem(problem, problem.relation.initial(problem.n_labels)))

    @staticmethod
    def step_problem(problem: Problem, relation: np.ndarray) -> Problem:
        """The model step's problem: the regulariser with the relation held at ``relation``.

        A fixed relation leaves the problem as it is.
        """
        if not problem.relation.learned:
            return problem
        return attrs.evolve(
            problem, regularizer=problem.regularizer.with_relation(relation), relation=HeldRelation(relation)
        )

    def _alternates(self, problem: Problem) -> bool:
        learns_state = getattr(self.inner, "learns_state", None)
        return bool(problem.relation.learned or (callable(learns_state) and learns_state(problem)))

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        relation = problem.relation.initial(problem.n_labels)
        if warm_start is not None and warm_start.relation is not None and problem.relation.learned:
            relation = np.asarray(warm_start.relation, dtype=np.float64)
        warm = warm_start
        steps: list[tuple[Fit, np.ndarray]] = []
        bounds: list[tuple[float, float]] = []
        converged = False
        alternates = self._alternates(problem)
        while len(steps) < self.max_iter:
            fit = self.inner.solve(self.step_problem(problem, relation), warm_start=warm)
            if steps and fit.certificate.primal > steps[-1][0].certificate.primal:
                converged = True  # no progress the inner solver can resolve: keep the previous step
                break
            steps.append((fit, relation))
            if not alternates:
                converged = True
                break
            if not fit.certificate.converged and (
                within_gap_rtol(fit.certificate.primal, fit.certificate.dual)
                or (len(steps) > 1 and not steps[-2][0].certificate.converged)
            ):
                # An unconverged step far from its optimum (an inner budget spent) is usually
                # followed by a warm-started one that converges.  One already within GAP_RTOL
                # missed a tolerance finer than its rounding resolves, and two failures in
                # a row mean the inner solve cannot get there: every further step would spend
                # the whole budget again.
                warn_not_converged(
                    "AlternatingSolver",
                    f"model step {len(steps)} ({fit.certificate.solver}) did not converge (gap "
                    f"{fit.certificate.gap:.3g}) and a further step would not get closer; the alternation stopped there",
                )
                return self._fit(steps, bounds, False, time.perf_counter() - start)
            if problem.relation.learned:
                factor = weight_factor(fit.solution)
                bound = _joint_bounds(problem.regularizer, fit, factor)
                if bound is not None:
                    bounds.append(bound)
            if len(steps) > 1 and self._change(steps) <= self.tol:
                converged = True
                break
            if problem.relation.learned:
                relation = problem.relation.update(_gram(factor))
            warm = _without_dual_coef(fit.solution)
        if not converged:
            warn_not_converged(
                "AlternatingSolver",
                f"max_iter={self.max_iter} model steps reached; relative change {self._change(steps):.3g} > tol={self.tol:.3g}",
            )
        return self._fit(steps, bounds, converged, time.perf_counter() - start)

    @staticmethod
    def _change(steps) -> float:
        if len(steps) < 2:
            return np.inf
        return relative_change(steps[-2][0].certificate.primal, steps[-1][0].certificate.primal)

    def _fit(self, steps, bounds, converged: bool, elapsed: float) -> Fit:
        last, relation = steps[-1]
        certificates = [fit.certificate for fit, _ in steps]
        history = {
            "objective": [float(c.primal) for c in certificates],
            "inner_iterations": [int(c.n_iter) for c in certificates],
        }
        if bounds:
            history["bounds"] = list(bounds)
            history["joint_gap"] = _joint_gap_history(bounds)
        certificate = attrs.evolve(
            last.certificate,
            n_iter=len(steps),
            time=elapsed,
            converged=bool(last.certificate.converged and converged),
            solver=f"AlternatingSolver({last.certificate.solver})",
            statistics={
                "objective_history": history["objective"],
                "inner_iterations": history["inner_iterations"],
                "joint_gap_history": history.get("joint_gap", []),
                "inner": last.certificate.statistics,
            },
        )
        solution = attrs.evolve(last.solution, relation=relation)
        return Fit(solution, certificate, steps=certificates, history=history)


def _gram(factor: np.ndarray) -> np.ndarray:
    gram = factor.T @ factor
    return (gram + gram.T) / 2.0


def _without_dual_coef(solution: Solution) -> Solution:
    """The next model step's warm start: the dual variables, which do not depend on Omega.

    ``dual_coef`` does (``B M(Omega)`` for kernel solvers): a solution without its own dual
    variables cannot be carried to the next Omega, and starts that step cold.
    """
    if solution.dual is not None or solution.dual_coef is None:
        return solution
    return None


def _joint_bounds(regularizer, fit: Fit, factor: np.ndarray) -> tuple[float, float] | None:
    """``(g_k, U_k)``, the lower and upper bounds of the module docstring, or None when the parts cannot give them."""
    extras = fit.solution.extras
    needed = ("dual_gram", "regularizer_value")
    if not all(key in extras for key in needed) or not all(
        callable(getattr(regularizer, name, None)) for name in ("relation_value", "relation_dual")
    ):
        return None
    current = float(extras["regularizer_value"])
    certificate = fit.certificate
    upper = float(certificate.primal) - current + float(regularizer.relation_value(factor))
    lower = float(certificate.dual) + current - float(regularizer.relation_dual(extras["dual_gram"]))
    return lower, upper


def _joint_gap_history(bounds) -> list[float]:
    """``(min_{j<=k} U_j - max_{j<=k} g_j) / max(OBJECTIVE_FLOOR, |min_{j<=k} U_j|)`` per step (non-increasing)."""
    lower = np.maximum.accumulate([g for g, _ in bounds])
    upper = np.minimum.accumulate([u for _, u in bounds])
    return [float((u - g) / max(OBJECTIVE_FLOOR, abs(u))) for u, g in zip(upper, lower)]

