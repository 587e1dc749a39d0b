"""Planted bugs: minimal variants of the clean plugin (tests/kit_mutation/plugin.py), one change each.

Every kind of bug is a subclass that overrides one method (or one line of one) of the
regulariser, the solver or the estimator, and :data:`KINDS` maps the kind's name to the
estimator that carries it (and, for a bug in a part, the part).  The mutated part classes are
declared through ``register_trusted_types``, as a plugin's own classes must be, so that
``check_method``'s persistence round trip reaches the bug rather than refusing an unknown class.
"""

from __future__ import annotations

import attrs
import numpy as np

import multilabel_core
from kit_mutation_plugin import HalfSquaredNorm, KitSVM, ProximalGradient

# -- bugs in the regulariser ---------------------------------------------------------------------


@attrs.frozen
class HalvedConjugate(HalfSquaredNorm):
    """Wrong conjugate: ``1/4 ||V||^2`` for ``1/2 ||V||^2`` (the dual comes out too high, the gap too small)."""

    def conjugate(self, V) -> float:
        return 0.5 * super().conjugate(V)


@attrs.frozen
class ShrinksTwice(HalfSquaredNorm):
    """A prox that is not a prox: ``V / (1 + 2 s)``, the prox of ``||V||^2`` rather than of ``1/2 ||V||^2``."""

    def prox(self, W, step: float) -> np.ndarray:
        return super().prox(W, 2 * step)


# -- bugs in the solver --------------------------------------------------------------------------


class FlippedGradient(ProximalGradient):
    """Gradient sign flipped: the step climbs the loss (the certificate stays honest)."""

    def smooth_gradient(self, problem, A, V):
        return -super().smooth_gradient(problem, A, V)


class ClaimsConvergence(ProximalGradient):
    """Convergence claimed: ``converged`` once a step decreases the primal by at most tol relative, whatever the gap."""

    def converged(self, primal, dual, decrease) -> bool:
        return decrease <= self.tol * max(1.0, abs(primal))


class DualWithoutTheBias(ProximalGradient):
    """Wrong conjugate in the gap: ``Omega*`` evaluated at ``X^T U``, forgetting the bias's row ``1^T U``.

    The dual comes out above the true dual at the same point by ``1/2 ||1^T U||^2``; on the kit's
    problems above the primal from the first iterate on (a negative gap).
    """

    def objectives(self, problem, A, V):
        primal, dual = super().objectives(problem, A, V)
        if problem.fit_intercept:
            U = self.dual_point(problem, np.asarray(A @ V))
            dual += 0.5 * float((U.sum(axis=0) ** 2).sum())  # Omega*(A^T U) - Omega*(X^T U): the bias row's share
        return primal, dual


class HingeDualBox(ProximalGradient):
    """Wrong dual box: the dual point clipped to the hinge's ``[0, C]`` instead of the loss's ``dual_box(C)``."""

    def dual_point(self, problem, T):
        alpha = np.clip(-problem.C * problem.Y * problem.loss.gradient(problem.Y, T), 0.0, problem.C)
        return alpha * problem.Y


class BiasOfTheNextLabel(ProximalGradient):
    """Off-by-one in the bias: label j is given the bias of label j - 1."""

    def solve(self, problem, warm_start=None):
        fit = super().solve(problem, warm_start)
        solution = attrs.evolve(fit.solution, intercept=np.roll(fit.solution.intercept, 1))
        return attrs.evolve(fit, solution=solution)


class IgnoresWarmStart(ProximalGradient):
    """Warm start ignored: every solve starts from zero."""

    def start(self, problem, warm_start, shape):
        return super().start(problem, None, shape)


# -- bugs in the estimator -----------------------------------------------------------------------


class Planted(KitSVM):
    """KitSVM with its regulariser and solver replaced by (possibly mutated) classes."""

    REGULARIZER: type = HalfSquaredNorm
    SOLVER: type = ProximalGradient

    def _parts(self) -> dict:
        return super()._parts() | {"regularizer": self.REGULARIZER(),
                                   "solver": self.SOLVER(tol=self.tol, max_iter=self.max_iter)}


class PlantedHalvedConjugate(Planted):
    REGULARIZER = HalvedConjugate


class PlantedShrinksTwice(Planted):
    REGULARIZER = ShrinksTwice


class PlantedFlippedGradient(Planted):
    SOLVER = FlippedGradient


class PlantedClaimsConvergence(Planted):
    SOLVER = ClaimsConvergence


class PlantedDualWithoutTheBias(Planted):
    SOLVER = DualWithoutTheBias


class PlantedHingeDualBox(Planted):
    SOLVER = HingeDualBox


class PlantedBiasOfTheNextLabel(Planted):
    SOLVER = BiasOfTheNextLabel


class PlantedIgnoresWarmStart(Planted):
    SOLVER = IgnoresWarmStart


class InterceptDropped(KitSVM):
    """The intercept dropped at predict time."""

    def _decision_function(self, X):
        return np.asarray(X @ self.coef_)


class IgnoresALabel(KitSVM):
    """A decision function that ignores the last label's weights (its scores are its bias alone)."""

    def _decision_function(self, X):
        scores = super()._decision_function(X)
        scores[:, -1] = self.intercept_[-1]
        return scores


class DropsTheLastRow(KitSVM):
    """A model that depends on row order: the fit leaves out the last row (an off-by-one in a loop bound)."""

    def _fit(self, X, Y, **data):
        super()._fit(X[:-1], Y[:-1], **data)


class PredictsAboveTheMean(KitSVM):
    """``predict`` not the documented function of ``decision_function``: each label cut at its mean score."""

    def predict(self, X):
        scores = self.decision_function(X)
        return (scores > scores.mean(axis=0)).astype(np.int64)


class AlwaysWarm(KitSVM):
    """State leaking from one fit into the next: every refit starts from the previous solution, warm_start or not."""

    def _warm_solution(self, problem):
        previous = getattr(self, "solution_", None)
        return previous if getattr(self, "_problem_shape_", None) == problem.Y.shape else None


#: kind of planted bug -> (the estimator carrying it, the mutated part or None).
KINDS = {
    "gradient sign flipped": (PlantedFlippedGradient, FlippedGradient),
    "intercept dropped at predict time": (InterceptDropped, None),
    "convergence claimed": (PlantedClaimsConvergence, ClaimsConvergence),
    "wrong conjugate: negative gap": (PlantedHalvedConjugate, HalvedConjugate),
    "wrong conjugate: the bias's share of the dual forgotten": (PlantedDualWithoutTheBias, DualWithoutTheBias),
    "wrong dual box": (PlantedHingeDualBox, HingeDualBox),
    "off-by-one in the bias": (PlantedBiasOfTheNextLabel, BiasOfTheNextLabel),
    "a prox that is not a prox": (PlantedShrinksTwice, ShrinksTwice),
    "a decision function that ignores a label": (IgnoresALabel, None),
    "warm start ignored": (PlantedIgnoresWarmStart, IgnoresWarmStart),
    "a model that depends on row order": (DropsTheLastRow, None),
    "predict not the documented function of decision_function": (PredictsAboveTheMean, None),
    "state leaking between fits": (AlwaysWarm, None),
}


@multilabel_core.hookimpl
def register_trusted_types(register):
    for part in (HalvedConjugate, ShrinksTwice, FlippedGradient, ClaimsConvergence, DualWithoutTheBias, HingeDualBox, BiasOfTheNextLabel,
                 IgnoresWarmStart):
        register(part)
