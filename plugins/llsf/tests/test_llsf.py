"""LLSF as a composition: conformance, the same model by name, the L1 threshold, the paper's R refused where unbounded."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.llsf import LLSF

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_method
from multilabel_core.thresholds import FixedThreshold


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=4, random_state=2)
    X = dataset.X / np.linalg.norm(dataset.X, axis=1, keepdims=True)  # the paper's unit-norm rows
    return X, dataset.Y


def test_llsf_conforms():
    check_method("llsf")


def test_registered_as_a_pure_composition():
    spec = mlc.get_method("llsf")
    assert spec.estimator is LLSF and spec.parts == LLSF.PARTS
    assert spec.parts["solver"] == "fista" and spec.parts["regularizer"] == "sum"


def test_the_preset_is_the_composition_by_name(data):
    X, Y = data
    preset = LLSF(alpha=0.5, beta=0.05, fit_intercept=False, tol=1e-9).fit(X, Y)
    by_name = mlc.ComposedEstimator(
        loss="least_squares", loss_params={"target": "real"}, regularizer="sum",
        regularizer_params={"terms": (("label_similarity", {"alpha": 0.5}), ("l1", {"weight": 0.05}))},
        solver="fista", fit_intercept=False, tol=1e-9, thresholding=FixedThreshold(0.5),
    ).fit(X, Y)  # fmt: skip
    first, second = preset.certificate_, by_name.certificate_
    assert first.converged and second.converged
    assert abs(first.primal - second.primal) <= first.gap + second.gap + 1e-12 * max(1.0, abs(first.primal))
    # Strongly convex here (n > d): ||W1 - W2||^2 <= 2 (gap1 + gap2) / m bounds the score difference.
    m = first.statistics["modulus"]
    radius = np.sqrt(2.0 * (first.gap + second.gap) / m)
    assert np.abs(preset.coef_ - by_name.coef_).max() <= radius + 1e-12
    assert preset.intercept_ is not None and not np.any(preset.intercept_)


@settings(max_examples=10)
# factor >= 1.05: a fitted intercept converges with the certificate, not exactly, and within 0.1 % of the edge the
# prox step can see its leftover as a gradient above beta (a 1e-4 weight at factor 1.002).
@given(alpha=st.floats(0.0, 2.0), factor=st.floats(1.05, 3.0), fit_intercept=st.booleans())
def test_w_is_zero_exactly_when_beta_reaches_the_gradient_at_zero(data, alpha, factor, fit_intercept):
    # At W = 0 (b minimised out when fitted: X and Y centred) the smooth part's gradient is -X^T Y (the
    # quadratic's vanishes): W = 0 is optimal iff beta >= max |X^T Y|, the L1 term's subdifferential at 0.
    X, Y = data
    Xc, Yc = (X - X.mean(axis=0), Y - Y.mean(axis=0)) if fit_intercept else (X, Y)
    edge = float(np.abs(Xc.T @ Yc).max())
    assert not np.any(LLSF(alpha=alpha, beta=edge * factor, fit_intercept=fit_intercept).fit(X, Y).coef_)
    assert np.any(LLSF(alpha=alpha, beta=edge / factor, fit_intercept=fit_intercept, max_iter=50).fit(X, Y).coef_)


def test_the_papers_r_is_refused_where_the_objective_is_unbounded(data):
    X, Y = data
    wide = np.hstack([X, X[:, :3] + X[:, 3:]])[:12]  # 12 rows, 9 columns of rank 6: X^T X singular
    for fit_intercept in (False, True):
        with pytest.raises(ValueError, match="unbounded below"):
            LLSF(form="distance", alpha=0.5, fit_intercept=fit_intercept).fit(wide, Y[:12])


def test_the_papers_r_is_certified_where_the_data_make_it_convex(data):
    X, Y = data
    model = LLSF(form="distance", alpha=1e-4, beta=0.01).fit(X, Y)
    assert model.certificate_.converged and model.certificate_.statistics["route"] == "strong convexity"


@pytest.mark.parametrize("params, name", [({"alpha": -1.0}, "alpha"), ({"beta": float("nan")}, "beta"),
                                          ({"form": "cosine"}, "form")])
def test_bad_parameters_are_value_errors_naming_them(data, params, name):
    X, Y = data
    with pytest.raises(ValueError, match=name):
        LLSF(**params).fit(X, Y)
