"""Trace-norm least squares as a composition: conformance, the zero solution's edge, rank falling with lam."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.trace_ls import TraceNormLeastSquares

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_method


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=90, n_features=8, n_labels=5, random_state=4)
    return dataset.X, dataset.Y


def _edge(X, Y) -> float:
    """The spectral norm of the gradient at W = 0 with the intercept minimised out: W* = 0 iff lam >= it."""
    S = 2.0 * np.asarray(Y, dtype=float) - 1.0
    return float(np.linalg.norm((X - X.mean(axis=0)).T @ (S - S.mean(axis=0)), 2))


def test_trace_ls_conforms():
    check_method("trace_ls")


def test_registered_as_a_pure_composition():
    spec = mlc.get_method("trace_ls")
    assert spec.estimator is TraceNormLeastSquares and spec.parts == TraceNormLeastSquares.PARTS
    assert spec.parts["regularizer"] == "nuclear_norm" and spec.parts["solver"] == "fista"


def test_the_preset_is_the_composition_by_name(data):
    X, Y = data
    preset = TraceNormLeastSquares(lam=2.0, tol=1e-10).fit(X, Y)
    by_name = mlc.ComposedEstimator(loss="least_squares", regularizer="nuclear_norm", solver="auto", C=0.5,
                                    tol=1e-10).fit(X, Y)  # fmt: skip
    assert by_name.solver_name_ == "fista"
    first, second = preset.certificate_, by_name.certificate_
    assert first.converged and second.converged
    assert abs(first.primal - second.primal) <= first.gap + second.gap + 1e-12 * max(1.0, abs(first.primal))
    assert np.array_equal(preset.predict(X), by_name.predict(X))


@settings(max_examples=10)
@given(factor=st.floats(1.05, 3.0))  # the intercept converges with the certificate, not exactly
def test_w_is_zero_exactly_when_lam_reaches_the_spectral_norm_of_the_gradient(data, factor):
    X, Y = data
    edge = _edge(X, Y)
    above = TraceNormLeastSquares(lam=edge * factor).fit(X, Y)
    assert not np.any(above.coef_)
    assert np.any(TraceNormLeastSquares(lam=edge / factor).fit(X, Y).coef_)


def test_the_rank_falls_as_lam_grows(data):
    X, Y = data
    edge = _edge(X, Y)
    ranks = []
    for lam in edge * np.array([0.01, 0.1, 0.3, 0.6, 0.9]):
        W = TraceNormLeastSquares(lam=lam, tol=1e-10).fit(X, Y).coef_
        s = np.linalg.svd(W, compute_uv=False)
        ranks.append(int((s > 1e-9 * max(1.0, s[0])).sum()))
    assert ranks == sorted(ranks, reverse=True) and ranks[0] > ranks[-1] >= 1, ranks


@pytest.mark.parametrize("lam", [0.0, -1.0, float("inf")])
def test_lam_must_be_positive_and_finite(data, lam):
    X, Y = data
    with pytest.raises(ValueError, match="lam"):
        TraceNormLeastSquares(lam=lam).fit(X, Y)
