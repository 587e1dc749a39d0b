"""The alternating driver's rule for unconverged model steps (multilabel_core.solvers.alternating).

A scripted inner solver returns certificates with chosen primal, dual and converged flags, so
that each branch of the rule is reached exactly: an unconverged step far from its optimum
(an inner budget spent) is followed by another step; one already within GAP_RTOL, or a second
unconverged step in a row, ends the alternation, not converged, with a ConvergenceWarning.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from multilabel_core.base import Fit, Problem, Solution, Solver
from multilabel_core.certificate import GAP_RTOL, Certificate
from multilabel_core.plugins import make_component
from multilabel_core.solvers import AlternatingSolver, ConvergenceWarning


@attrs.define(eq=False)
class Scripted(Solver):
    """Returns the scripted (primal, dual, converged) triples in order, one per model step."""

    script: list
    calls: int = 0

    def learns_state(self, problem: Problem) -> bool:
        return True

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        primal, dual, converged = self.script[self.calls]
        self.calls += 1
        certificate = Certificate(
            primal=primal, dual=dual, gap=primal - dual, kkt_violation=0.0, n_iter=1, time=0.0,
            converged=converged, solver="Scripted",
        )
        L = problem.n_labels
        return Fit(Solution(coef=np.eye(2, L), intercept=np.zeros(L), dual=None), certificate)


def _problem() -> Problem:
    rng = np.random.default_rng(0)
    return Problem(
        rng.normal(size=(6, 2)), np.where(rng.random((6, 2)) < 0.5, -1.0, 1.0), make_component("loss", "hinge"),
        make_component("regularizer", "frobenius"), make_component("relation", "independent"),
        make_component("kernel", "linear"),
    )


def _run(script):
    inner = Scripted(script)
    return AlternatingSolver(inner=inner, max_iter=len(script)).solve(_problem()), inner.calls


def test_a_step_far_from_its_optimum_is_followed_by_another():
    # Step 1 spent its budget at a relative gap of 0.5; step 2 converges; step 3 meets the outer rule.
    fit, calls = _run([(100.0, 50.0, False), (90.0, 89.99, True), (90.0, 89.99, True)])
    assert calls == 3 and fit.certificate.converged


def test_a_step_within_gap_rtol_that_missed_its_tolerance_ends_the_alternation():
    gap = 0.5 * GAP_RTOL * 100.0
    with pytest.warns(ConvergenceWarning, match="alternation stopped"):
        fit, calls = _run([(100.0, 100.0 - gap, False), (90.0, 89.99, True)])
    assert calls == 1 and not fit.certificate.converged


def test_two_unconverged_steps_in_a_row_end_the_alternation():
    with pytest.warns(ConvergenceWarning, match="alternation stopped"):
        fit, calls = _run([(100.0, 50.0, False), (95.0, 50.0, False), (90.0, 89.99, True)])
    assert calls == 2 and not fit.certificate.converged
