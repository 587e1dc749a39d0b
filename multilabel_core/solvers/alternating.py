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
   step's solution: a factor F with ``F^T F = W^T W`` in ``solution.relation_state.weight_factor``
   (kernel solvers give it without a pass over the kernel, :func:`~.smo.relation_statistics`;
   the ranking solvers give the re-weighted features' one), else the primal ``coef``.

Stopping rule (the one rule of every alternating method; docs/solvers/alternating.md).  The
objective after each model step, ``J_k`` (its certificate's primal), is recorded.  ``tol`` is
what "converged" certifies:

* **Joint gap, where one exists** (the regulariser provides ``relation_value`` and
  ``relation_dual`` and the model steps give ``relation_state.dual_gram`` and
  ``relation_state.regularizer_value``: MLRL, SSMLRL, MTRL, CLaRank): converged means the relative
  joint gap (below) is at most ``tol``, and the iterations stop there.  The change of the
  objective decides nothing: it can be tiny while the joint gap is not.  The iterations stop,
  not converged (a ConvergenceWarning with the joint gap), when over the last
  :data:`STALL_WINDOW` steps the objective changed by at most ``tol`` per step and the joint
  gap shrank by less than :data:`STALL_SHRINK`.
* **Otherwise** (a state-learning inner solver such as PrML's rounds): converged means
  ``|J_{k-1} - J_k| <= tol * max(OBJECTIVE_FLOOR, |J_{k-1}|)`` *and* a relative gap of the
  step's own certificate of at most ``tol``; a change within ``tol`` from steps coarser than
  ``tol`` certifies nothing and stops the iterations, not converged (a ConvergenceWarning
  with the steps' gap).

The objectives are sums over examples of losses of order one, so the floor (1, one example's
loss) makes the rule absolute only for problems whose whole objective is below one example's
loss, where a relative change means nothing.  After ``max_iter`` model steps the iterations
stop, not converged (a ConvergenceWarning).

Precision of the model steps.  With ``P_k = J(., Omega_k)``, the inner gap ``G_k`` and an exact
relation step, ``J_k <= min P_k + G_k <= P_k(W_{k-1}) + G_k <= J_{k-1} + G_k``: the steps' gaps
bound any increase, and a joint gap below the steps' precision cannot be reached.  Under the
joint-gap rule the driver therefore tightens the inner solver (``attrs.evolve(inner,
tol=TIGHTENING * tol)``, for an inner solver with a ``tol`` field, never below
:data:`INNER_TOL_FLOOR`) before the next step when the step's relative gap exceeds ``tol``, or
its gap exceeds the relation step's gain ``J_k - U_k`` (the decrease the next model step
starts with: a coarser step could end above ``J_k``).  Without a joint gap the steps'
tolerance is the method's own parameter (PrML's ``cd_tol``), and a rule finer than it is
reported, not pursued.  History ``"inner_tol"`` holds the tolerance of each accepted step.

An objective **increase** (``J_k > J_{k-1}`` by more than the objective's rounding, ``n L eps``
relative) is never taken for convergence beyond what the rule allows.  The step is discarded
(the recorded objectives never increase) and recorded: ``statistics["objective_increases"]`` of
the returned certificate, and ``statistics["objective_increase"]`` of the step certificate it
concerns, which fitted models expose as ``step_certificates_``.  Under the joint-gap rule, an
increase the step's gap explains is solved again from the same start with the tightened inner
solver; otherwise, or at the tightest inner solver, the iterations stop, and converged is
decided by the joint gap.  Without a joint gap the iterations stop there: converged only when
the increase is within ``tol`` (``|J_{k-1} - J_k| <= tol ...`` holds) and the kept step's
relative gap too.  A ConvergenceWarning naming the step and the size of the increase is issued
for every increase beyond ``tol`` and for every increase that ends the iterations not
converged; an increase within ``tol`` that is solved again, or ends a converged run, is recorded
only.  A ``tol`` below :data:`TOL_FLOOR` is refused (ValueError): float64 objectives cannot
certify it.

A model step whose own certificate is not converged ends the iterations, not converged (a
ConvergenceWarning), when its relative gap is already within
:data:`~multilabel_core.certificate.GAP_RTOL` (the inner tolerance is below what the solver
can certify) or the previous step did not converge either (the inner budget is too small for
any step); otherwise the next, warm-started step goes on from it, which usually converges.

Joint certificate.  Each model step's certificate bounds J only for its fixed Omega.  Where
the regulariser provides ``relation_value(F)`` (the least regulariser value over the
relations, for weights with ``W^T W = F^T F``) and ``relation_dual(H)`` (the largest
``1/2 tr(H M(Omega))`` over the relations, M the label coupling the dual sees) and the model
step's solution gives H, the matrix of its dual's quadratic term (``relation_state.dual_gram``),
the joint problem has the bounds::

    g_k = D_k + Q_k - relation_dual(H_k)  <=  min J  <=  U_k = J_k - Q_k + relation_value(F_k)

with D_k the step's dual objective and Q_k its regulariser value (``relation_state.regularizer_value``,
``1/2 tr(H M)``): U_k is J at (W_k, b_k) with the best relation, and g_k is the dual of the
joint problem (Sion's minimax theorem: the Lagrangian is linear in M(Omega)'s argument and
concave in the dual variables, the set {Omega >= 0, tr Omega = 1} compact).
``[max_k g_k, min_k U_k]`` brackets the optimum of the joint problem whatever the path; the
stopping rule compares ``tol`` with the gap of the point returned (below), ``history["joint_gap"]``.

Returned point.  The driver returns the last accepted step, (W_k, b_k) with the relation Omega_k
it was solved at (a kernel model's dual coefficients are tied to that Omega: MLRL's scores are
``Omega (alpha o Y)^T k / lambda + b``), and "converged" is a claim about that point: the joint
gap compared with ``tol`` is ``(min_j J_j - max_j g_j) / max(OBJECTIVE_FLOOR, |min_j J_j|)``,
with the steps' objectives J_j in place of U_j (J_k exceeds ``min_j J_j`` by at most the
objective's rounding: larger increases are discarded).  ``statistics["returned"]`` of the
certificate (and the last step certificate's ``"alternation"``) holds ``step``, ``objective``
(J_k) and ``lower_bound`` (``max_j g_j``).  The bracket with U_j certified a point never formed:
CLaRank (mu = 0.01, C = 1) on ``make_correlated_multilabel(random_state=0)`` stopped after its
first model step, ``(U_1 - g_1)`` relative 8.1e-4 <= tol = 1e-3, and returned D = I / L at
J = 21.66, 1.1 % above the optimum 21.42 (U_1 = 21.43 is J at the same weights with the D-step
never taken).  It now takes the D-step and a second model step: J_2 = 21.429, gap 3.7e-4.

Model state.  An inner solver may learn a block of its own from step to step -- the ranking
solver's feature-subset weights lambda (Gu, Li & Han, eq. 31): it then provides
``learns_state(problem) -> True``, carries the block in its solution's ``warm_state`` (the next
model step reads it from the warm start), and the driver alternates even when the relation
is fixed.  For a fixed relation and an inner solver without state
(:class:`~multilabel_core.relations.Independent`: BSVM, LaRank) the driver does one model step.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import ClassVar

import attrs
import numpy as np

from ..base import CapabilityError, Fit, LabelRelation, Problem, Solution, Solver, WarmState, warm_state_of
from ..certificate import within_gap_rtol
from ..validation import check_scalar, count
from ._convergence import SMALLEST_EPS, ConvergenceWarning, warn_not_converged
from .smo import SMOSolver

__all__ = [
    "INNER_TOL_FLOOR", "OBJECTIVE_FLOOR", "STALL_SHRINK", "STALL_WINDOW", "TIGHTENING", "TOL_FLOOR", "AlternatingSolver",
    "HeldRelation", "relative_change", "weight_factor",
]

#: The floor of the stopping rule's relative change (module docstring).
OBJECTIVE_FLOOR = 1.0

#: The smallest ``tol`` the driver accepts: 8 machine epsilons (1.8e-15).  The joint gap is
#: formed from a handful of additions of numbers of the objective's size (``J - Q + relation_value``
#: and ``D + Q - relation_dual``), each rounded by eps/2 of that size, and two float64 objectives
#: differ relatively by 0 or at least eps/2: below this the rule can only be met by rounding.
TOL_FLOOR = 8.0 * float(np.finfo(np.float64).eps)

#: The tightest ``tol`` the driver gives an inner solver when it tightens one (module docstring):
#: the projected-gradient and KKT rules of the core's inner solvers reach round-off there
#: (:data:`~multilabel_core.solvers.SMALLEST_EPS`); a stricter outer ``tol`` is reported as one
#: the model steps cannot certify, with the relative gap they reached.
INNER_TOL_FLOOR = SMALLEST_EPS

#: The factor of one tightening of the inner solver's ``tol``.
TIGHTENING = 0.1

#: The joint-gap rule gives up early (not converged, a ConvergenceWarning) when, over the last
#: STALL_WINDOW model steps, the objective changed by at most ``tol`` per step and the relative
#: joint gap shrank by less than STALL_SHRINK (10%): on MLRL's nearly singular relations the
#: gap then stays flat for hundreds of steps (docs/solvers/alternating.md), and spending the rest
#: of ``max_iter`` would change the model by less than ``tol``.
STALL_WINDOW = 10
STALL_SHRINK = 0.1


def _tol_validator(instance, attribute, value) -> None:
    """attrs validator: a finite ``tol`` >= :data:`TOL_FLOOR` (ValueError naming the floor and why)."""
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)
    if value < TOL_FLOOR:
        raise ValueError(
            f"{attribute.name}={value:g} is below {TOL_FLOOR:.3g} (8 machine epsilons): the joint gap and the "
            "relative change of float64 objectives cannot be certified that finely, only met by rounding"
        )


@attrs.frozen(eq=False)
class HeldRelation(LabelRelation):
    """A relation held at a given matrix during one model step (not learned).

    Parameters
    ----------
    matrix : ndarray of shape (L, L)
        The relation of the step; :meth:`initial` and :meth:`update` both return it.
    """

    matrix: np.ndarray

    learned: ClassVar[bool] = False

    def initial(self, n_labels: int) -> np.ndarray:
        return self.matrix

    def update(self, gram) -> np.ndarray:
        return self.matrix


def relative_change(previous: float, current: float) -> float:
    """Measure the relative change of the objective, the stopping rule's measure.

    Parameters
    ----------
    previous : float
        The objective J_{k-1} after the previous step.
    current : float
        The objective J_k after this step.

    Returns
    -------
    float
        ``|J_{k-1} - J_k| / max(OBJECTIVE_FLOOR, |J_{k-1}|)``.
    """
    return abs(previous - current) / max(OBJECTIVE_FLOOR, abs(previous))


def weight_factor(solution: Solution) -> np.ndarray:
    """Give a factor F with ``F^T F = W^T W`` for the relation step.

    Parameters
    ----------
    solution : Solution
        The model step's point.

    Returns
    -------
    ndarray of shape (r, L)
        The solver's own ``relation_state.weight_factor``, else ``coef`` itself.

    Raises
    ------
    ValueError
        If the point carries neither (a kernel solver that gives no factor).
    """
    factor = solution.relation_state.weight_factor
    if factor is not None:
        return np.asarray(factor)
    if solution.coef is None:
        raise ValueError(
            "the model step returned neither primal weights nor relation_state.weight_factor: the relation step needs W^T W"
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
        What "converged" certifies (module docstring): the relative joint gap where the parts
        give the joint bounds, else the relative change of the objective between model steps
        together with the last step's relative gap.  At least :data:`TOL_FLOOR` (ValueError).

    Notes
    -----
    ``solve`` returns a :class:`~multilabel_core.base.Fit` whose ``solution`` is the last
    accepted model step's, with ``relation`` the Omega it was solved for; ``steps`` holds
    every accepted step's certificate; ``history`` the ``"objective"`` J_k, the
    ``"inner_tol"`` each step was solved at (NaN for an inner solver without ``tol``), and
    where the regulariser and the inner solver provide them (module docstring) the
    ``"bounds"`` (g_k, U_k) -- lower first, as every ``"bounds"`` history -- and the relative
    ``"joint_gap"``.  The certificate's ``statistics`` hold these histories, the
    ``"stop_rule"`` (``"joint_gap"``, ``"objective_change"`` or ``"single_step"``) and the
    ``"objective_increases"`` (one dict per increase: ``step``, ``increase``, ``relative``,
    ``step_gap``, ``inner_tol``, ``resolved``).  A ``warm_start`` carrying a ``relation`` (in its
    warm state: this driver's own, or a Solution's ``relation``) starts there; the driver's warm
    state keeps the last relation and the inner solver's state.
    """

    inner: Solver = attrs.field(factory=SMOSolver, validator=attrs.validators.instance_of(Solver))
    max_iter: int = attrs.field(default=100, validator=count)
    tol: float = attrs.field(default=1e-4, validator=_tol_validator)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"relation": ("initial", "update")}

    @property
    def warm_state_names(self) -> dict[str, str]:
        """The driver's warm state: the relation it stopped at and the inner solver's state."""
        return {
            "relation": "fixed: the label relation (L, L) of the last model step, where a warm start begins",
            "inner": f"scaled: the warm state of the inner {type(self.inner).__name__}",
        }

    @property
    def model_state_names(self) -> dict[str, str]:
        """The inner solver's: the driver returns the last model step's solution."""
        return dict(getattr(self.inner, "model_state_names", {}) or {})

    @property
    def fitted_attributes(self) -> dict[str, str]:
        """The inner solver's."""
        return dict(getattr(self.inner, "fitted_attributes", {}) or {})

    @property
    def objective_units(self) -> frozenset:
        """The inner solver's."""
        return frozenset(getattr(self.inner, "objective_units", ()) or ())

    @property
    def history_attributes(self) -> dict[str, str]:
        """The inner solver's: their series are the model steps' own, concatenated in step order."""
        return dict(getattr(self.inner, "history_attributes", {}) or {})

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
        """Build the model step's problem: the regulariser with the relation held at ``relation``.

        Parameters
        ----------
        problem : Problem
            The alternating problem.
        relation : ndarray of shape (L, L)
            The relation the step holds fixed.

        Returns
        -------
        Problem
            ``problem`` with ``regularizer.with_relation(relation)`` and a
            :class:`HeldRelation`; a fixed relation leaves the problem as it is.
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
        state = warm_state_of(warm_start)
        if state is not None and state.get("relation") is not None and problem.relation.learned:
            relation = np.asarray(state.get("relation"), dtype=np.float64)
        warm = None
        if state is not None:
            # The driver's own state holds the inner solver's; another's (a Solution built by hand)
            # goes to the inner solver as it is.
            inner = state.get("inner") if state.owner == type(self).__name__ else state
            warm = None if inner is None else attrs.evolve(warm_start, warm_state=inner)
        run = _Run(inner=self.inner, rounding=_rounding(problem))
        # numpy reports each floating-point overflow of the solve (model steps, relation steps, bounds) to
        # run.overflow instead of a RuntimeWarning: a solve that overflowed certifies nothing.
        with np.errstate(over="call", call=run.overflow):
            return self._solve(problem, relation, warm, run, start)

    def _solve(self, problem: Problem, relation: np.ndarray, warm: Solution | None, run: _Run, start: float) -> Fit:
        alternates = self._alternates(problem)
        while len(run.steps) < self.max_iter:
            fit = run.inner.solve(self.step_problem(problem, relation), warm_start=warm)
            if run.overflows:
                return self._overflowed(run, fit, relation, start)
            if run.steps and run.increase(fit) > 0.0:
                verdict = self._on_increase(run, fit)
                if verdict is None:
                    continue  # the same step again, from the same start, with the tightened inner solver
                return self._fit(run, verdict, start)
            run.accept(fit, relation)
            if not alternates:
                run.rule = "single_step"
                return self._fit(run, True, start)
            if not fit.certificate.converged and (
                within_gap_rtol(fit.certificate.primal, fit.certificate.dual)
                or (len(run.steps) > 1 and not run.steps[-2][0].certificate.converged)
            ):
                # An unconverged step far from its optimum (an inner budget spent) is usually
                # followed by a warm-started one that converges.  One already within GAP_RTOL
                # missed a tolerance finer than its rounding resolves, and two failures in
                # a row mean the inner solve cannot get there: every further step would spend
                # the whole budget again.
                warn_not_converged(
                    "AlternatingSolver",
                    f"model step {len(run.steps)} ({fit.certificate.solver}) did not converge (gap "
                    f"{fit.certificate.gap:.3g}) and a further step would not get closer; the alternation stopped there",
                )
                return self._fit(run, False, start)
            gain = math.nan
            if problem.relation.learned:
                factor = weight_factor(fit.solution)
                bound = _joint_bounds(problem.regularizer, fit, factor)
                if bound is not None:
                    run.bounds.append(bound)
                    gain = float(fit.certificate.primal) - bound[1]
            verdict = self._verdict(run, gain)
            if verdict is not None:
                return self._fit(run, verdict, start)
            if problem.relation.learned:
                relation = problem.relation.update(_gram(factor))
            if run.overflows:
                return self._overflowed(run, None, relation, start)
            warm = _next_warm(fit.solution)
        warn_not_converged(
            "AlternatingSolver",
            f"max_iter={self.max_iter} model steps reached; {run.measure_text(self.tol)}",
        )
        return self._fit(run, False, start)

    def _verdict(self, run: _Run, gain: float) -> bool | None:
        """After an accepted step: True (converged), False (stopped, not converged, warned) or None (go on).

        Tightens ``run.inner`` when the step was too coarse for the rule (module docstring).
        """
        certificate = run.steps[-1][0].certificate
        step_gap = certificate.relative_gap
        coarse = not step_gap <= self.tol  # NaN (no dual) is coarse too: nothing certifies the change
        if run.bounds:
            run.rule = "joint_gap"
            if run.joint_gap() <= self.tol:
                return True
            # A step whose gap exceeds the relation step's gain may end above J_k (module docstring).
            if (coarse or float(certificate.gap) > gain) and self._tighten(run):
                return None
            if run.stalled(self.tol):
                warn_not_converged(
                    "AlternatingSolver",
                    f"the relative joint gap is {run.joint_gap():.3g} > tol={self.tol:g} at model step {len(run.steps)} "
                    f"and shrank by less than {STALL_SHRINK:.0%} over the last {STALL_WINDOW} steps (from "
                    f"{run.joint_gap(-STALL_WINDOW - 1):.3g}), while the objective changed by at most tol per step (the "
                    f"steps' own relative gap {step_gap:.3g}, inner solver "
                    f"{_inner_description(run.inner)}); the alternation stopped there.  Where the learned relation is "
                    "nearly singular most of the gap can be the lower bound's slack (docs/solvers/alternating.md)",
                )
                return False
            return None
        run.rule = "objective_change"
        if len(run.steps) < 2 or not run.decrease() <= self.tol:
            return None
        if not coarse:
            return True
        warn_not_converged(
            "AlternatingSolver",
            f"the objective changed by {run.decrease():.3g} <= tol={self.tol:g} (relative) at model step {len(run.steps)}, "
            f"but tol is below what the model steps certify: their relative gap is {step_gap:.3g} "
            f"({_inner_description(run.inner)}); the alternation stopped there.  Tighten the model steps' tolerance "
            f"to about tol, or loosen tol to at least {step_gap:.2g}",
        )
        return False

    def _overflowed(self, run: _Run, fit: Fit | None, relation: np.ndarray, start: float) -> Fit:
        """Stop, not converged: a floating-point overflow happened in the last model or relation step.

        The step that overflowed (``fit``; None when it was the relation step after the last
        accepted one) is kept with ``converged=False``: its numbers came through an infinity.
        """
        if fit is not None:
            run.accept(fit, relation)
        step, _ = run.steps[-1]
        certificate = attrs.evolve(
            step.certificate, converged=False, statistics=dict(step.certificate.statistics) | {"overflows": run.overflows}
        )
        run.steps[-1] = (Fit(step.solution, certificate, steps=step.steps, history=step.history), run.steps[-1][1])
        warn_not_converged(
            "AlternatingSolver",
            f"{run.overflows} floating-point overflow(s) during model step {len(run.steps)} or its relation step: "
            "its certificate certifies nothing and the alternation stopped there",
        )
        return self._fit(run, False, start)

    @staticmethod
    def _tighten(run: _Run) -> bool:
        tighter = _tightened(run.inner)
        if tighter is None:
            return False
        run.inner = tighter
        return True

    def _on_increase(self, run: _Run, fit: Fit) -> bool | None:
        """A model step ended above the last accepted one: record it, then solve it again or stop.

        Returns None when the step is to be solved again with ``run.inner`` tightened, else the
        verdict of the stop (the step is discarded: the last accepted one is kept).  Only under the
        joint-gap rule is the inner solver tightened, and only when its precision explains the
        increase (at most the step's own gap, module docstring); a larger one comes from elsewhere
        (a relation step that keeps Omega positive definite is not the exact minimiser), which no
        tightening removes.  An increase of at most ``tol`` (relative) meets the rule's
        ``|J_{k-1} - J_k| <= tol * max(OBJECTIVE_FLOOR, |J_{k-1}|)`` and is recorded without a
        warning when the run goes on or converges; every other one is warned about.
        """
        previous = float(run.steps[-1][0].certificate.primal)
        increase = float(fit.certificate.primal) - previous
        scale = max(OBJECTIVE_FLOOR, abs(previous))
        relative = increase / scale
        beyond = relative > self.tol
        explained = increase <= float(fit.certificate.gap) + run.rounding * scale
        tighter = _tightened(run.inner) if run.bounds and explained else None
        record = {
            "step": len(run.steps) + 1,
            "increase": increase,
            "relative": relative,
            "step_gap": float(fit.certificate.gap),
            "inner_tol": _inner_tol(run.inner),
            "resolved": tighter is not None,
        }
        run.increases.append(record)
        what = (
            f"model step {record['step']} raised the objective by {increase:.3g} (relative {relative:.3g}, tol={self.tol:g}) "
            f"above step {len(run.steps)}'s {previous:.10g} (model steps {fit.certificate.solver}, relative gap "
            f"{fit.certificate.relative_gap:.3g})"
        )
        if tighter is not None:
            run.inner = tighter
            if beyond:
                warnings.warn(
                    f"AlternatingSolver: {what}; the step is solved again with the inner solver at "
                    f"tol={_inner_tol(tighter):g}",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            return None
        kept = run.steps[-1][0].certificate
        if run.bounds:
            converged = run.joint_gap() <= self.tol
            cause = (
                f"the inner solver ({_inner_description(run.inner)}) is at its tightest"
                if explained
                else f"the increase exceeds the step's own gap {float(fit.certificate.gap):.3g}, which a tighter inner "
                "solver would not remove"
            )
            reason = f"{cause}; relative joint gap {run.joint_gap():.3g} > tol={self.tol:g}"
        else:
            converged = not beyond and kept.relative_gap <= self.tol
            reason = (
                f"an increase beyond tol: the model steps are coarser than tol; tighten their tolerance "
                f"({_inner_description(run.inner)}) to about tol or loosen tol"
                if beyond
                else f"tol is below what the model steps certify (step {len(run.steps)}'s relative gap "
                f"{kept.relative_gap:.3g} > tol)"
            )
        if not converged:
            warn_not_converged("AlternatingSolver", f"{what}; {reason}; the alternation stopped at step {len(run.steps)}")
        return converged

    def _fit(self, run: _Run, converged: bool, start: float) -> Fit:
        elapsed = time.perf_counter() - start
        last, relation = run.steps[-1]
        point = {}
        if run.bounds:
            # What the joint gap certifies: the returned point (the last accepted step, with the relation it was
            # solved at) and its objective J_k against the best lower bound (module docstring, "Returned point").
            point = {
                "step": len(run.steps),
                "objective": float(last.certificate.primal),
                "lower_bound": float(max(lower for lower, _ in run.bounds)),
            }
        certificates = run.step_certificates()
        history = {
            "objective": [float(c.primal) for c in certificates],
            "inner_iterations": [int(c.n_iter) for c in certificates],
            "inner_tol": list(run.inner_tols),
        }
        if run.bounds:
            history["bounds"] = list(run.bounds)
            history["joint_gap"] = run.joint_gap_history()
        for key in self.history_attributes:
            series = [value for fit, _ in run.steps for value in fit.history.get(key, ())]
            if series:
                history[key] = series
        certificate = attrs.evolve(
            last.certificate,
            n_iter=len(run.steps),
            time=elapsed,
            converged=bool(last.certificate.converged and converged),
            solver=f"AlternatingSolver({last.certificate.solver})",
            statistics={
                "objective_history": history["objective"],
                "inner_iterations": history["inner_iterations"],
                "inner_tol_history": history["inner_tol"],
                "joint_gap_history": history.get("joint_gap", []),
                "stop_rule": run.rule,
                "objective_increases": list(run.increases),
                "inner": last.certificate.statistics,
            }
            | ({"returned": point} if point else {}),
        )
        # Presets that expose the steps' certificates (MLRL's certificate_) show the verdict on the last one.
        final = certificates[-1]
        certificates[-1] = attrs.evolve(
            final,
            statistics=dict(final.statistics)
            | {
                "alternation": {
                    "converged": certificate.converged,
                    "stop_rule": run.rule,
                    "joint_gap": history["joint_gap"][-1] if run.bounds else math.nan,
                    "tol": float(self.tol),
                    "inner_tols": list(run.inner_tols),
                    "objective_increases": len(run.increases),
                }
                | point
            },
        )
        scaled = {} if last.solution.warm_state is None else {"inner": last.solution.warm_state}
        state = WarmState(type(self).__name__, scaled=scaled, fixed={"relation": relation})
        solution = attrs.evolve(last.solution, relation=relation, warm_state=state)
        return Fit(solution, certificate, steps=certificates, history=history)


@attrs.define
class _Run:
    """The state of one alternating solve: accepted steps, bounds, increases and the current inner solver."""

    inner: Solver
    rounding: float
    steps: list = attrs.field(factory=list)
    bounds: list = attrs.field(factory=list)
    inner_tols: list = attrs.field(factory=list)
    increases: list = attrs.field(factory=list)
    rule: str = "objective_change"
    overflows: int = 0

    def overflow(self, kind: str, flag: int) -> None:
        """numpy's error callback (``np.errstate(over="call")``): count one floating-point overflow."""
        self.overflows += 1

    def accept(self, fit: Fit, relation: np.ndarray) -> None:
        self.steps.append((fit, relation))
        self.inner_tols.append(_inner_tol(self.inner))

    def joint_gap(self, index: int = -1) -> float:
        return self.joint_gap_history()[index]

    def joint_gap_history(self) -> list[float]:
        # The objectives of the steps that have bounds (an overflowed step accepted last has none).
        objectives = [float(fit.certificate.primal) for fit, _ in self.steps[: len(self.bounds)]]
        return _joint_gap_history(self.bounds, objectives)

    def increase(self, fit: Fit) -> float:
        """How far ``fit``'s objective is above the last accepted one's, beyond the objective's rounding (else <= 0)."""
        previous = float(self.steps[-1][0].certificate.primal)
        return float(fit.certificate.primal) - previous - self.rounding * max(OBJECTIVE_FLOOR, abs(previous))

    def stalled(self, tol: float) -> bool:
        """Whether, over the last STALL_WINDOW steps, the objective changed by at most ``tol`` (relative) per
        step and the joint gap shrank by less than STALL_SHRINK."""
        if len(self.bounds) <= STALL_WINDOW:
            return False
        objectives = [float(fit.certificate.primal) for fit, _ in self.steps[-STALL_WINDOW - 1 :]]
        settled = all(
            abs(before - after) <= tol * max(OBJECTIVE_FLOOR, abs(before))
            for before, after in zip(objectives, objectives[1:])
        )
        return settled and self.joint_gap() > (1.0 - STALL_SHRINK) * self.joint_gap(-STALL_WINDOW - 1)

    def decrease(self) -> float:
        """``(J_{k-1} - J_k) / max(OBJECTIVE_FLOOR, |J_{k-1}|)``: the signed relative change (positive: a decrease)."""
        previous, current = (float(fit.certificate.primal) for fit, _ in self.steps[-2:])
        return (previous - current) / max(OBJECTIVE_FLOOR, abs(previous))

    def measure_text(self, tol: float) -> str:
        """What the rule measured last, against ``tol``, for a warning."""
        if self.bounds:
            return f"relative joint gap {self.joint_gap():.3g} > tol={tol:.3g}"
        if len(self.steps) < 2:
            return f"one model step, no change to compare with tol={tol:.3g}"
        last = self.steps[-1][0].certificate.relative_gap
        return f"relative change {self.decrease():.3g}, last step's relative gap {last:.3g}, tol={tol:.3g}"

    def step_certificates(self) -> list:
        """The accepted steps' certificates; a step that followed (or ended on) an increase says so in its statistics."""
        certificates = [fit.certificate for fit, _ in self.steps]
        for record in self.increases:
            # A resolved increase concerns the step solved again (its number); an unresolved one the last step kept.
            index = record["step"] - 1 if record["resolved"] else len(certificates) - 1
            if index < len(certificates):
                certificate = certificates[index]
                certificates[index] = attrs.evolve(
                    certificate, statistics=dict(certificate.statistics) | {"objective_increase": dict(record)}
                )
        return certificates


def _rounding(problem: Problem) -> float:
    """The relative rounding of an objective summed over the n L loss terms: ``n L eps`` (an increase below it is none)."""
    return float(problem.n_samples * problem.n_labels) * float(np.finfo(np.float64).eps)


def _inner_tol(inner: Solver | None) -> float:
    """The inner solver's ``tol`` (NaN when it has none)."""
    tol = getattr(inner, "tol", None)
    try:
        return float(tol)
    except (TypeError, ValueError):
        return math.nan


def _inner_description(inner: Solver) -> str:
    tol = _inner_tol(inner)
    return type(inner).__name__ + ("" if math.isnan(tol) else f" at tol={tol:g}")


def _tightened(inner: Solver) -> Solver | None:
    """``inner`` with ``tol`` times :data:`TIGHTENING` (not below :data:`INNER_TOL_FLOOR`), or None when it cannot be."""
    if not attrs.has(type(inner)) or "tol" not in attrs.fields_dict(type(inner)):
        return None
    tol = _inner_tol(inner)
    if not math.isfinite(tol) or tol <= INNER_TOL_FLOOR:
        return None
    try:
        return attrs.evolve(inner, tol=max(TIGHTENING * tol, INNER_TOL_FLOOR))
    except (TypeError, ValueError):  # the inner solver's own floor (its validator) refuses it
        return None


def _gram(factor: np.ndarray) -> np.ndarray:
    gram = factor.T @ factor
    return (gram + gram.T) / 2.0


def _next_warm(solution: Solution) -> Solution | None:
    """The next model step's warm start: the dual variables, which do not depend on Omega.

    ``dual_coef`` does (``B M(Omega)`` for kernel solvers): a warm state holding it without the
    dual variables themselves cannot be carried to the next Omega, and that step starts cold.
    """
    state = warm_state_of(solution)
    if state is not None and "dual_coef" in state and state.get("dual") is None:
        return None
    return solution


def _joint_bounds(regularizer, fit: Fit, factor: np.ndarray) -> tuple[float, float] | None:
    """``(g_k, U_k)``, the lower and upper bounds of the module docstring, or None when the parts cannot give them."""
    state = fit.solution.relation_state
    if state.dual_gram is None or state.regularizer_value is None or not all(
        callable(getattr(regularizer, name, None)) for name in ("relation_value", "relation_dual")
    ):
        return None
    current = float(state.regularizer_value)
    certificate = fit.certificate
    upper = float(certificate.primal) - current + float(regularizer.relation_value(factor))
    lower = float(certificate.dual) + current - float(regularizer.relation_dual(state.dual_gram))
    return lower, upper


def _joint_gap_history(bounds, objectives) -> list[float]:
    """``(min_{j<=k} J_j - max_{j<=k} g_j) / max(OBJECTIVE_FLOOR, |min_{j<=k} J_j|)`` per step (non-increasing).

    J_j, not U_j: the gap of the point returned, (W_k, b_k, Omega_k), whose objective is J_k (an
    accepted step's J_k exceeds ``min_{j<=k} J_j`` by at most the objective's rounding, ``n L eps``
    relative: larger increases are discarded).  ``U_j <= J_j`` brackets the optimum more tightly,
    but at a point the driver does not return (module docstring, "Returned point").
    """
    lower = np.maximum.accumulate([g for g, _ in bounds])
    upper = np.minimum.accumulate(objectives)
    return [float((u - g) / max(OBJECTIVE_FLOOR, abs(u))) for u, g in zip(upper, lower)]

