"""LIEML and its ablation are their registered parts by name.

``lieml`` is ``ComposedEstimator(loss="epsilon_insensitive", regularizer="frobenius",
relation="label_enhancement", kernel="rbf", solver="lieml_irwls")`` with its hyper-parameters as the
parts' parameters (Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with
Low-Rank Subspace*: lambda of eq. 4 on the relation, gamma_2 of eq. 8 on the solver, gamma_1 as C,
epsilon of eq. 9 on the loss); ``lieml_raw`` the same with ``relation="independent"``.  The decision
values agree within the bound the certificates give: T2's regulariser 1/2 sum_j ||theta_j||^2 is
1-strongly convex, so each fit's weights are within sqrt(2 gap) of the optimum in the RKHS norm and
a score within sqrt(k(x, x)) (sqrt(2 gap_a) + sqrt(2 gap_b)) of the other fit's, plus the bias
difference, which the same solve on the same enhanced targets leaves at rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import multilabel_core as mlc
from multilabel_core import ComposedEstimator
from multilabel_core.datasets import make_correlated_multilabel


@pytest.fixture(scope="module")
def data():
    d = make_correlated_multilabel(n_samples=60, n_features=6, n_labels=4, random_state=1)
    return np.asarray(d.X), np.asarray(d.Y)


def _bound(a, b) -> float:
    # The RBF kernel has k(x, x) = 1; the model step is the last certificate of each fit.
    gaps = [max(float(m.step_certificates_[-1].gap), 0.0) for m in (a, b)]
    return float(sum(np.sqrt(2.0 * g) for g in gaps)) + 1e-9


@pytest.mark.parametrize("lam, epsilon, gamma1, gamma2", [(1.0, 0.1, 1.0, 0.1), (10.0, 1.0, 0.5, 0.0)])
def test_lieml_is_its_parts_by_name(data, lam, epsilon, gamma1, gamma2):
    X, Y = data
    preset = mlc.make_method("lieml", lam=lam, epsilon=epsilon, gamma1=gamma1, gamma2=gamma2).fit(X, Y)
    composed = ComposedEstimator(
        loss="epsilon_insensitive", loss_params={"epsilon": epsilon}, regularizer="frobenius",
        relation="label_enhancement", relation_params={"lam": lam}, kernel="rbf", solver="lieml_irwls",
        solver_params={"gamma2": gamma2}, C=gamma1, tol=1e-5, max_iter=500,
    ).fit(X, Y)  # fmt: skip
    assert composed.solver_name_ == "lieml_irwls" and not composed.fed_  # the solver reads the enhancement itself
    difference = np.abs(preset.decision_function(X) - composed.decision_function(X)).max()
    assert difference <= _bound(preset, composed) * max(1.0, np.abs(preset.decision_function(X)).max())
    assert [c.converged for c in composed.step_certificates_] == [c.converged for c in preset.step_certificates_]
    for role in ("loss", "regularizer", "relation", "kernel", "solver"):
        assert type(composed.parts_[role]) is type(preset.parts_[role]), role


def test_lieml_raw_is_its_parts_by_name(data):
    X, Y = data
    preset = mlc.make_method("lieml_raw", epsilon=0.1).fit(X, Y)
    composed = ComposedEstimator(
        loss="epsilon_insensitive", loss_params={"epsilon": 0.1}, relation="independent", kernel="rbf",
        solver="lieml_irwls", solver_params={"gamma2": 0.1}, C=1.0, tol=1e-5, max_iter=500,
    ).fit(X, Y)  # fmt: skip
    difference = np.abs(preset.decision_function(X) - composed.decision_function(X)).max()
    assert difference <= _bound(preset, composed) * max(1.0, np.abs(preset.decision_function(X)).max())


def test_auto_finds_lieml_s_solver_for_its_parts(data):
    X, Y = data
    model = ComposedEstimator(
        loss="epsilon_insensitive", relation="label_enhancement", kernel="rbf", solver_params={"gamma2": 0.1}
    )
    assert model.choose_solver(X, Y).name == "lieml_irwls"
