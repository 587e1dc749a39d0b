"""MTRL as a composition: its parts, its objective, and the two methods it contains as limits."""

import numpy as np
import pytest
from multilabel_core_plugins.mlrl import BSVM, MLRL
from multilabel_core_plugins.mtrl import MTRL

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.regularizers import FrobeniusLabelCovariance
from multilabel_core.solvers import AlternatingSolver, SMOSolver

TIGHT = {"tol": 1e-9, "smo_tol": 1e-7, "max_iter": 500}


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=90, n_features=8, n_labels=4, random_state=3)
    return dataset.X, dataset.Y


def test_registered_as_a_composition():
    spec = mlc.get_method("mtrl")
    assert spec.estimator is MTRL and spec.parts == MTRL.PARTS
    model = MTRL()
    parts = model._parts()
    assert isinstance(parts["regularizer"], FrobeniusLabelCovariance)
    assert isinstance(parts["solver"], AlternatingSolver) and isinstance(parts["solver"].inner, SMOSolver)


def test_objective_is_mtrl_problem_4(data):
    # objective_history_ is 1/n sum hinge + lam1/2 ||W||^2 + lam2/2 tr(W Omega^-1 W^T) at the returned point,
    # with the Omega the last W-step was solved for: recompute it from the model (W = phi(X)^T D).
    X, Y = data
    lam1, lam2 = 0.01, 0.05
    model = MTRL(lam1=lam1, lam2=lam2, kernel="linear", **TIGHT).fit(X, Y)
    W = X.T @ model.dual_coef_
    T = X @ W + model.intercept_
    signs = 2.0 * Y - 1.0
    loss = np.maximum(0.0, 1.0 - signs * T).sum() / len(X)
    omega = model.label_covariance_
    value = loss + lam1 / 2 * np.sum(W * W) + lam2 / 2 * np.trace(W @ np.linalg.solve(omega, W.T))
    assert model.objective_history_[-1] == pytest.approx(value, rel=1e-6)
    assert np.all(np.diff(model.objective_history_) <= 1e-12 * abs(model.objective_history_[0]))
    np.testing.assert_allclose(np.trace(omega), 1.0)


def test_lam2_to_zero_is_bsvm(data):
    # lam2 -> 0: the label coupling (I + mu Omega^-1)^-1 -> I, i.e. BSVM at lam = lam1.  The distance of the
    # decision values is O(mu) with mu = lam2 / lam1: check it shrinks with mu, and is small at mu = 1e-6.
    X, Y = data
    lam = 0.01
    bsvm = BSVM(lam=lam, tol=1e-7).fit(X, Y).decision_function(X)
    distances = []
    for lam2 in (1e-4, 1e-6, 1e-8):
        mtrl = MTRL(lam1=lam, lam2=lam2, **TIGHT).fit(X, Y).decision_function(X)
        distances.append(np.abs(mtrl - bsvm).max())
    assert distances[2] < 1e-4 * np.abs(bsvm).max()
    assert distances[0] > distances[2]


def test_lam1_to_zero_is_mlrl(data):
    # lam1 -> 0: lam1/2 ||W||^2 vanishes and MTRL is MLRL's problem (6) with lam = lam2.
    X, Y = data
    lam = 0.01
    mlrl = MLRL(lam=lam, **TIGHT).fit(X, Y)
    distances = []
    for lam1 in (1e-4, 1e-6, 1e-8):
        mtrl = MTRL(lam1=lam1, lam2=lam, **TIGHT).fit(X, Y)
        distances.append(np.abs(mtrl.decision_function(X) - mlrl.decision_function(X)).max())
    assert distances[2] < 1e-3 * np.abs(mlrl.decision_function(X)).max()
    assert distances[0] > distances[2]
    np.testing.assert_allclose(mtrl.label_covariance_, mlrl.label_covariance_, atol=1e-3)
    assert mtrl.objective_history_[-1] == pytest.approx(mlrl.objective_history_[-1], rel=1e-4)


def test_joint_certificate_closes(data):
    # FrobeniusLabelCovariance gives relation_value and relation_dual: the driver certifies the joint problem.
    X, Y = data
    model = MTRL(lam1=0.01, lam2=0.05, **TIGHT).fit(X, Y)
    gaps = np.array(model.joint_gap_history_)
    assert len(gaps) == model.n_iter_
    assert np.all(np.diff(gaps) <= 1e-12) and gaps[-1] >= -1e-9 and gaps[-1] < 1e-4


def test_warm_start_lands_on_the_cold_fit(data):
    # Both fits are certified by their joint gaps: their objectives differ by no more than the two gaps allow.
    X, Y = data
    warm = MTRL(lam1=0.01, lam2=0.01, warm_start=True, **TIGHT).fit(X, Y)
    warm.set_params(lam2=0.05).fit(X, Y)
    cold = MTRL(lam1=0.01, lam2=0.05, **TIGHT).fit(X, Y)
    slack = sum(model.joint_gap_history_[-1] * model.objective_history_[-1] for model in (warm, cold))
    assert abs(warm.objective_history_[-1] - cold.objective_history_[-1]) <= slack


@pytest.mark.parametrize("params, message", [({"lam1": 0.0}, "lam1 must be > 0"), ({"lam2": -1.0}, "lam2 must be >= 0")])
def test_bad_parameters_are_named(data, params, message):
    with pytest.raises(ValueError, match=message):
        MTRL(**params).fit(*data)
