"""The alternating driver's stopping rule (multilabel_core.solvers.alternating).

A scripted inner solver returns certificates with chosen primal, dual and converged flags, so
that each branch of the rule is reached exactly: an unconverged step far from its optimum
(an inner budget spent) is followed by another step; one already within GAP_RTOL, or a second
unconverged step in a row, ends the alternation, not converged, with a ConvergenceWarning; an
objective increase is recorded, warned about beyond tol, and never convergence beyond tol; a
change within tol from steps coarser than tol is not convergence.  MLRL and MTRL (the joint-gap
rule) are then fitted for real: converged certifies the joint gap within tol, tol moves the stop.
"""

from __future__ import annotations

import math
import warnings

import attrs
import numpy as np
import pytest

from multilabel_core.base import Fit, Problem, Solution, Solver
from multilabel_core.certificate import GAP_RTOL, Certificate
from multilabel_core.datasets import load_dataset, make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.experiments.preprocessing import preprocessed
from multilabel_core.plugins import make_component
from multilabel_core.solvers import AlternatingSolver, ConvergenceWarning
from multilabel_core.solvers.alternating import INNER_TOL_FLOOR, TOL_FLOOR
from multilabel_core_plugins.mlrl import MLRL
from multilabel_core_plugins.mtrl import MTRL


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
    # Step 1 spent its budget at a relative gap of 0.5; step 2 converges; step 3 meets the outer rule
    # (no change, and a relative gap 5.6e-5 within tol = 1e-4).
    fit, calls = _run([(100.0, 50.0, False), (90.0, 89.995, True), (90.0, 89.995, True)])
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


# -- the rule without a joint gap (the scripted solver learns a state; no relation is learned) ------------


def _quiet_run(script, tol=1e-4):
    inner = Scripted(script)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = AlternatingSolver(inner=inner, max_iter=len(script), tol=tol).solve(_problem())
    return fit, inner.calls, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_an_objective_increase_beyond_tol_is_reported_and_is_not_convergence():
    # The defect: an increase ended the alternation as converged, whatever tol.  Step 3 is 0.5 above step 2.
    fit, calls, caught = _quiet_run([(100.0, 99.995, True), (90.0, 89.995, True), (90.5, 90.495, True), (80.0, 80.0, True)])
    assert calls == 3 and fit.certificate.converged is False
    [warning] = caught
    assert "model step 3 raised the objective by 0.5" in str(warning.message)
    # The step is discarded: the model and the history are step 2's; the increase is recorded twice.
    assert fit.history["objective"] == [100.0, 90.0] and fit.certificate.primal == 90.0
    [record] = fit.certificate.statistics["objective_increases"]
    assert record["step"] == 3 and record["increase"] == pytest.approx(0.5) and record["resolved"] is False
    assert fit.steps[-1].statistics["objective_increase"] == record


def test_an_increase_within_tol_meets_the_rule_quietly_and_is_recorded():
    # |J_2 - J_3| = 0.001 <= tol * 90 = 0.009, and step 2's relative gap 5.6e-5 <= tol.
    fit, calls, caught = _quiet_run([(100.0, 99.995, True), (90.0, 89.995, True), (90.001, 89.996, True)])
    assert calls == 3 and fit.certificate.converged is True and caught == []
    assert fit.history["objective"] == [100.0, 90.0]
    assert fit.certificate.statistics["objective_increases"][0]["step"] == 3


@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_tol_decides_where_the_alternation_stops(tol):
    # The same objectives for every tol: a change of 1e-6 relative, then 1e-10, then 0.
    script = [(1.0e3, 1.0e3 - 1e-14, True), (999.999, 999.999 - 1e-14, True), (999.9989999, 999.9989999 - 1e-14, True),
              (999.9989999, 999.9989999 - 1e-14, True)]
    fit, calls, caught = _quiet_run(script, tol=tol)
    assert fit.certificate.converged and caught == []
    assert calls == {1e-4: 2, 1e-8: 3, 1e-12: 4}[tol]


def test_a_change_within_tol_from_steps_coarser_than_tol_is_not_convergence():
    # Relative gap 1e-3 > tol = 1e-6: a change of 0 says nothing the steps can certify.
    fit, calls, caught = _quiet_run([(100.0, 99.9, True), (100.0, 99.9, True), (99.0, 98.9, True)], tol=1e-6)
    assert calls == 2 and fit.certificate.converged is False
    [warning] = caught
    assert "below what the model steps certify" in str(warning.message) and "0.001" in str(warning.message)


def test_the_increase_is_exposed_by_the_fitted_model():
    inner = Scripted([(100.0, 99.995, True), (90.0, 89.995, True), (95.0, 94.995, True)])
    model = ComposedEstimator(loss="hinge", regularizer="frobenius", relation="independent", kernel="linear",
                              solver=AlternatingSolver(inner=inner, max_iter=3))
    with pytest.warns(ConvergenceWarning, match="model step 3 raised the objective by 5"):
        model.fit(*_problem_data())
    assert model.certificate_.converged is False
    assert model.certificate_.statistics["objective_increases"][0]["increase"] == pytest.approx(5.0)
    assert model.step_certificates_[-1].statistics["objective_increase"]["step"] == 3
    assert model.objective_history_ == [100.0, 90.0]


def _problem_data():
    problem = _problem()
    return problem.X, (problem.Y > 0).astype(int)


# -- tolerances that float64 cannot certify ------------------------------------------------------------------


@pytest.mark.parametrize("tol", [1e-300, 1e-16, 0.5 * TOL_FLOOR])
def test_a_tol_below_the_floor_is_refused_with_the_number(tol):
    with pytest.raises(ValueError, match=r"tol=.* is below 1\.78e-15"):
        AlternatingSolver(tol=tol)
    with pytest.raises(ValueError, match="tol="):
        MLRL(tol=tol).fit(*_problem_data())


def test_the_floor_itself_is_accepted():
    assert AlternatingSolver(tol=TOL_FLOOR).tol == TOL_FLOOR


# -- the joint-gap rule, on MLRL and MTRL ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def emotions(datasets_dir):
    dataset = load_dataset(datasets_dir / "emotions-train.arff")
    X = np.asarray(dataset.X, dtype=np.float64)
    return preprocessed(X, np.arange(len(X)), "standardize"), np.asarray(dataset.Y)


def _fit(model, X, Y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, Y)
    return model, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _verdict(model) -> dict:
    """The alternation's verdict, which the presets expose on the last step's certificate."""
    return model.step_certificates_[-1].statistics["alternation"]


@pytest.mark.parametrize("method", [MLRL, MTRL])
def test_the_defaults_converge_on_emotions_with_the_joint_gap_certified(emotions, method):
    # Before: MLRL stopped after 9 steps "converged" with a joint gap of 0.0041, 41 times tol.
    model, caught = _fit(method(), *emotions)
    assert caught == []
    assert _verdict(model)["converged"] is True and _verdict(model)["stop_rule"] == "joint_gap"
    assert model.joint_gap_history_[-1] <= model.tol == _verdict(model)["tol"]
    assert all(c.converged for c in model.step_certificates_)


@pytest.mark.parametrize("method", [MLRL, MTRL])
def test_tol_moves_the_stop_and_converged_certifies_the_joint_gap(emotions, method):
    # Before: tol = 1e-8 and 1e-12 stopped at the same step, on an objective increase, called converged.
    coarse, _ = _fit(method(tol=1e-4), *emotions)
    fine, caught = _fit(method(tol=1e-8, max_iter=300), *emotions)
    assert fine.n_iter_ > coarse.n_iter_
    assert fine.joint_gap_history_[-1] < coarse.joint_gap_history_[-1]
    assert _verdict(coarse)["converged"] is True and coarse.joint_gap_history_[-1] <= 1e-4
    if _verdict(fine)["converged"]:
        assert fine.joint_gap_history_[-1] <= 1e-8 and caught == []
    else:
        # MLRL: SMO at INNER_TOL_FLOOR and the relation step's positive-definite floor stop it short of 1e-8.
        assert fine.joint_gap_history_[-1] > 1e-8
        assert caught and "did not converge" in str(caught[-1].message) and "tol=1e-08" in str(caught[-1].message)
    # The model steps were tightened on the way (the joint gap needs steps finer than smo_tol = 1e-3).
    tols = _verdict(fine)["inner_tols"]
    assert len(tols) == fine.n_iter_ and tols[0] == 1e-3 and INNER_TOL_FLOOR <= min(tols) < 1e-3


def test_a_joint_gap_above_tol_is_never_called_converged():
    # Before: MLRL at tol = 1e-12 stopped after a few steps as converged with a joint gap of about 1e-3.
    dataset = make_correlated_multilabel(n_samples=120, n_features=8, n_labels=5, random_state=3)
    for tol in (1e-4, 1e-8, 1e-12):
        model, caught = _fit(MLRL(lam=0.05, tol=tol), dataset.X, dataset.Y)
        verdict, gap = _verdict(model), model.joint_gap_history_[-1]
        assert verdict["converged"] == (gap <= tol) and verdict["joint_gap"] == gap
        if not verdict["converged"]:
            assert any(f"tol={tol:g}" in str(w.message) for w in caught), [str(w.message) for w in caught]
        assert math.isfinite(gap) and verdict["stop_rule"] == "joint_gap"
