"""Warm starts are for speed only: every registered method with ``warm_start``, fitted along a grid.

The experiment runner's search fits one object with ``warm_start=True`` along the grid (in
either direction).  For every method the registry lists with a ``warm_start`` parameter, a
chain of fits over grid points drawn from the method's own ``param_grid`` must never raise,
and each warm fit must give the decisions of a cold fit of the same problem within what the
two fits' certificates allow.

The tolerance, for the kernel dual family (BSVM, MLRL, SSMLRL, MTRL: the hinge loss solved by
SMO, alone or in the alternating driver; W = phi(X)^T D with D the ``dual_coef_``), in the
units of the core's Problem: take the model step of the cold fit,
``P(W, b) = 1/2 tr(W M^-1 W^T) + C sum hinge`` with M the label coupling its regulariser gives
at the cold fit's relation (``label_gram``: Omega for MLRL, I for BSVM, (I + mu Omega^-1)^-1 for
MTRL) and C the Problem's cost.  It is 1-strongly convex in W (norm
``tr(W M^-1 W^T)^(1/2)``), and the cold certificate's dual value d lower-bounds its optimum, so
any (W, b) is within ``sqrt(2 (P(W, b) - d))`` of its minimiser W*.  A score w_j^T phi(x)
moves by at most ``sqrt(k(x, x) M_jj)`` times that distance, and the bias (the midpoint of the
minimisers of P over b, multilabel_core.solvers.smo._intercept) by at most the largest move of
the training scores.  Hence, on the training rows, per label j::

    |warm - cold| <= 2 sqrt(k_max M_jj) (sqrt(2 (P(warm) - d)) + sqrt(2 (P(cold) - d))).

For the relation learners the bound needs no assumption on the warm fit's relation: if the
warm fit stopped elsewhere, P(warm) - d is large and so is the bound; it is small when both
fits reached the joint optimum.

For PrBR (You et al., Privileged Multi-label Learning, problem 5 with W = I: one SVM+ per label,
linear, the bias a constant feature): P(D, w~) = 1/2 ||D||^2 + gamma/2 ||w~||^2 + C sum slacks is
1-strongly convex in D, its certificates are taken at feasible points, and the cold dual value d
lower-bounds the optimum, so ``||D - D*|| <= sqrt(2 (P - d))`` for either fit, and a training score
moves by at most ``max_j ||[x_j; 1]||`` times that distance::

    |warm - cold| <= max_j ||[x_j; 1]|| (sqrt(2 (P(warm) - d)) + sqrt(2 (P(cold) - d))).
"""

import inspect
import warnings

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.plugins import list_methods
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.testing.strategies import multilabel_problems
from multilabel_core.estimator import ComposedEstimator

WARM_METHODS = sorted(
    spec.name for spec in list_methods() if "warm_start" in inspect.signature(spec.estimator).parameters
)


def _spec(name):
    return next(spec for spec in list_methods() if spec.name == name)


def _label_coupling(model) -> np.ndarray:
    """M, the label_gram of the model's regulariser at its fitted relation."""
    regularizer, L = model.parts_["regularizer"], model.dual_coef_.shape[1]
    if model.parts_["relation"].learned:
        regularizer = regularizer.with_relation(model.label_covariance_)
    return regularizer.label_gram(L)


def _kernel_dual_tolerance(warm, cold, Y) -> np.ndarray:
    """Per label, the certified bound on |warm - cold| decisions on the training rows (module docstring)."""
    X = cold.X_fit_
    K = cold.kernel_(X, X)
    n, L = cold.dual_coef_.shape
    omega = _label_coupling(cold)
    certificate = cold.certificate_[-1] if isinstance(cold.certificate_, list) else cold.certificate_
    C, signs = cold._cost(n), np.where(np.asarray(Y) > 0, 1.0, -1.0)

    def primal(model) -> float:
        D, b = np.asarray(model.dual_coef_), np.asarray(model.intercept_)
        B = scipy.linalg.solve(omega, D.T, assume_a="pos").T
        KD = K @ D
        return 0.5 * float(np.sum(B * KD)) + C * float(np.maximum(0.0, 1.0 - signs * (KD + b)).sum())

    # P and d are sums of n L terms each, so they carry a rounding of about n L eps (|P| + |d|): at a gap of
    # zero the distance to W* is sqrt(2 x rounding), not zero (the square root turns eps into sqrt(eps)).
    def excess(model) -> float:
        value = primal(model)
        rounding = 8.0 * Y.size * np.finfo(np.float64).eps * (abs(value) + abs(certificate.dual))
        return max(value - certificate.dual, 0.0) + rounding

    radius = sum(np.sqrt(2.0 * excess(model)) for model in (warm, cold))
    return 2.0 * np.sqrt(np.max(np.diag(K)) * np.diag(omega)) * radius


def _svmplus_tolerance(warm, cold, X) -> np.ndarray:
    """PrBR's certified bound on |warm - cold| decisions on the training rows (module docstring)."""
    dual = cold.certificate_[-1].dual
    row_norm = float(np.sqrt(np.max(np.sum(np.asarray(X) ** 2, axis=1) + 1.0)))

    def excess(model) -> float:
        primal = model.certificate_[-1].primal
        rounding = 8.0 * model.coef_.size * np.finfo(np.float64).eps * (abs(primal) + abs(dual))
        return max(primal - dual, 0.0) + rounding

    radius = sum(np.sqrt(2.0 * excess(model)) for model in (warm, cold))
    return np.full(cold.coef_.shape[1], row_norm * radius)


#: Methods whose warm-start tolerance is the linear SVM+ bound (module docstring).
SVMPLUS_METHODS = ("prbr",)


@st.composite
def chains(draw, name):
    """A small problem, a kernel and 2-4 grid points from the method's registered grid (any order, repeats allowed)."""
    X, Y = draw(multilabel_problems(n_samples=st.integers(6, 18), n_features=st.integers(1, 3),
                                    n_labels=st.integers(1, 3), magnitude=5.0))  # fmt: skip
    grid = _spec(name).param_grid
    point = st.fixed_dictionaries({key: st.sampled_from(list(values)) for key, values in grid.items()})
    # gamma is given: the default RBF width refuses data whose rows all coincide, which is not
    # what this test is about.
    kernels = [{"kernel": "linear"}, {"kernel": "rbf", "gamma": 0.1}, {"kernel": "rbf", "gamma": 2.0}]
    kernel = draw(st.sampled_from([{}] if name in SVMPLUS_METHODS else kernels))
    return X, Y, kernel, draw(st.lists(point, min_size=2, max_size=4))


@pytest.mark.parametrize("name", WARM_METHODS)
def test_every_method_with_warm_start_is_covered(name):
    spec = _spec(name)
    assert spec.param_grid, f"{name} has warm_start but no registered grid to walk"
    kernel_dual = (
        issubclass(spec.estimator, ComposedEstimator)
        and spec.parts.get("loss") == "hinge"
        and spec.parts.get("solver") in ("smo", "alternating")
    )
    assert kernel_dual or name in SVMPLUS_METHODS, (
        f"{name} has warm_start: give this test its certified tolerance (module docstring) before registering it"
    )


@pytest.mark.parametrize("name", WARM_METHODS)
def test_warm_chain_never_raises_and_matches_cold_fits(name):
    spec = _spec(name)

    @given(chains(name))
    def check(chain):
        X, Y, kernel, points = chain
        warm = spec.estimator(warm_start=True, **kernel)
        for point in points:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warm.set_params(**point).fit(X, Y)
                cold = spec.estimator(**kernel, **point).fit(X, Y)
            bound = _svmplus_tolerance(warm, cold, X) if name in SVMPLUS_METHODS else _kernel_dual_tolerance(warm, cold, Y)
            difference = np.abs(warm.decision_function(X) - cold.decision_function(X)).max(axis=0)
            assert np.all(difference <= bound + 1e-9), (point, difference, bound)

    check()
