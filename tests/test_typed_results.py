"""Typed solver results: what a solver returns is declared, and a preset needs no code to expose it.

``Solution`` has no untyped side channel: a solver's warm start state is one opaque
:class:`~multilabel_core.base.WarmState` whose names the solver declares (``warm_state_names``), a
family's fitted quantities are ``model_state`` under declared names (``model_state_names``), and what
the relation side reads is a :class:`~multilabel_core.base.RelationState`.  The composing estimator
copies a solver's ``fitted_attributes`` itself, so no preset overrides ``_store_fit``, and its one
warm-start path rescales a warm state by the ratio of the costs.
"""

import warnings

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import multilabel_core
from multilabel_core.base import Fit, Solution, Solver, WarmState, undeclared_state, warm_state_of
from multilabel_core.certificate import Certificate
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.plugins import list_methods
from multilabel_core.solvers import CDSolver

COMPOSED = sorted(spec.name for spec in list_methods() if issubclass(spec.estimator, ComposedEstimator))

arrays = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4), elements=st.floats(-1e3, 1e3))
ratios = st.floats(1e-3, 1e3)


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=40, n_features=5, n_labels=3, random_state=0)
    return dataset.X, dataset.Y


def test_solution_has_no_untyped_side_channel():
    names = {field.name for field in attrs.fields(Solution)}
    assert "extras" not in names
    assert {"warm_state", "relation_state", "model_state", "regularizer"} <= names


@given(arrays, arrays, st.floats(-5, 5), ratios, ratios)
def test_a_warm_state_rescales_its_duals_and_keeps_the_rest(dual, inner_dual, eps, first, second):
    inner = WarmState("Inner", scaled={"dual": inner_dual}, fixed={"eps": eps})
    state = WarmState("Outer", scaled={"dual": dual, "inner": inner}, fixed={"relation": dual.copy()})
    scaled = state.rescaled(first)
    np.testing.assert_array_equal(scaled.get("dual"), first * dual)
    np.testing.assert_array_equal(scaled.get("inner").get("dual"), first * inner_dual)
    assert scaled.get("inner").get("eps") == eps and scaled.get("relation") is state.get("relation")
    np.testing.assert_array_equal(state.get("dual"), dual)  # the original is not changed
    # Rescaling twice is rescaling once by the product, up to one rounding per multiplication.
    twice = scaled.rescaled(second).get("dual")
    np.testing.assert_allclose(twice, (first * second) * dual, rtol=4 * np.finfo(np.float64).eps, atol=0.0)


@pytest.mark.parametrize("ratio", [0.0, -1.0, np.inf, np.nan])
def test_a_warm_state_refuses_a_ratio_that_is_no_ratio_of_costs(ratio):
    with pytest.raises(ValueError, match="ratio"):
        WarmState("S", scaled={"dual": np.ones(2)}).rescaled(ratio)


def test_a_name_is_either_scaled_or_fixed():
    with pytest.raises(ValueError, match="both scaled and fixed"):
        WarmState("S", scaled={"dual": np.ones(2)}, fixed={"dual": 1.0})


def test_a_solution_built_by_hand_is_read_as_its_point():
    dual, coef = np.ones((4, 2)), np.zeros((3, 2))
    state = warm_state_of(Solution(coef=coef, intercept=np.zeros(2), dual=dual))
    assert state.owner == "Solution" and state.get("dual") is dual and state.get("coef") is coef
    assert "dual_coef" not in state and "relation" not in state
    np.testing.assert_array_equal(state.rescaled(2.0).get("dual"), 2.0 * dual)
    np.testing.assert_array_equal(state.rescaled(2.0).get("coef"), coef)  # primal weights are not duals
    assert warm_state_of(None) is None


def test_no_preset_overrides_store_fit():
    for spec in list_methods():
        for cls in spec.estimator.__mro__:
            if cls is ComposedEstimator:
                break
            assert "_store_fit" not in vars(cls), f"{cls.__name__} ({spec.name}) overrides _store_fit"


@pytest.mark.parametrize("method", COMPOSED)
def test_every_composed_method_returns_only_declared_state(data, method):
    X, Y = data
    model = multilabel_core.make_method(method)
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence on 40 rows is not what this test is about
        model.fit(X, Y)
    solver, solution = model.parts_["solver"], model.solution_
    assert undeclared_state(solver, solution) == []
    for key, attribute in solver.fitted_attributes.items():
        if key == "dual" or key in solution.model_state:
            assert hasattr(model, attribute), f"{method}: {attribute} (from {key}) was not stored"
    for key, attribute in solver.history_attributes.items():
        assert hasattr(model, attribute), f"{method}: {attribute} (from history {key!r}) was not stored"


def test_the_scaled_dual_attribute_is_in_the_estimators_objective_units(data):
    # MLRL's alpha_ is lambda times SMO's alphas (Zhang & Yeung, section 2: the paper's box is 1/n).
    X, Y = data
    model = multilabel_core.make_method("bsvm", lam=0.5).fit(X, Y)
    np.testing.assert_array_equal(model.alpha_, 0.5 * model.solution_.dual)
    assert np.all(model.alpha_ <= (1.0 + 1e-12) / X.shape[0])


def test_a_refit_with_another_solver_forgets_the_previous_solvers_attributes(data):
    X, Y = data
    model = ComposedEstimator(loss="hinge", regularizer="frobenius", kernel="rbf", solver="smo").fit(X, Y)
    assert hasattr(model, "alpha_")
    model.set_params(solver=CDSolver()).fit(X, Y)
    assert not hasattr(model, "alpha_")


@attrs.frozen
class _Undeclaring(Solver):
    """A solver that puts a name in model_state without declaring it."""

    def solve(self, problem, warm_start=None):
        certificate = Certificate.from_objectives(
            0.0, 0.0, kkt_violation=0.0, n_iter=0, time=0.0, converged=True, solver="U"
        )
        W = np.zeros((problem.X.shape[1], problem.n_labels))
        return Fit(Solution(coef=W, intercept=np.zeros(problem.n_labels), model_state={"secret": 1}), certificate)


def test_undeclared_model_state_is_refused_at_fit(data):
    X, Y = data
    with pytest.raises(TypeError, match="secret"):
        ComposedEstimator(loss="hinge", regularizer="frobenius", kernel="linear", solver=_Undeclaring()).fit(X, Y)


@pytest.mark.parametrize("solver", ["smo", "cd"])
def test_a_warm_refit_at_another_cost_starts_from_the_rescaled_duals(data, solver):
    # The warm state of the fit at C is rescaled to C' (duals in a box [0, C] scale with C), so the
    # warm fit is a fit of the problem at C': its certificate bounds the same optimum as a cold fit's.
    X, Y = data
    settings = {"loss": "hinge", "regularizer": "frobenius", "kernel": "rbf", "solver": solver}
    warm = ComposedEstimator(C=0.3, warm_start=True, **settings).fit(X, Y)
    previous = warm.solution_.warm_state
    warm.set_params(C=0.7).fit(X, Y)
    cold = ComposedEstimator(C=0.7, **settings).fit(X, Y)
    a, b = warm.certificate_, cold.certificate_
    assert a.converged and b.converged
    # Both certified intervals [dual, primal] contain the optimum: they overlap.
    assert max(a.dual, b.dual) <= min(a.primal, b.primal) + 1e-12 * max(1.0, abs(b.primal))
    name = "dual" if solver == "smo" else "dual_coef"
    start = previous.rescaled(0.7 / 0.3).get(name)
    np.testing.assert_array_equal(start, (0.7 / 0.3) * previous.get(name))
