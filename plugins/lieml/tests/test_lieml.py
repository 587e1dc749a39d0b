"""LIEML (Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*):
the gradient (7), label enhancement, the regressor, conformance and sparse input."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.lieml import LIEML, LIEMLRawLabels, enhance_labels, stacked_objective

import multilabel_core as mlc
from multilabel_core.datasets import load_dataset, make_correlated_multilabel
from multilabel_core.kernels import RBFKernel
from multilabel_core.testing.checks import check_method


def _data(seed=0, n=40, d=5, t=3):
    data = make_correlated_multilabel(n_samples=n, n_features=d, n_labels=t, random_state=seed)
    return np.asarray(data.X), np.asarray(data.Y)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), lam=st.sampled_from([0.1, 1.0, 100.0]))
def test_the_gradient_of_eq_7_matches_finite_differences(seed, lam):
    X, Y = _data(seed % 1000, n=12, d=4, t=3)
    Z0, value, gradient, conjugate, step = stacked_objective(X, 2.0 * Y - 1.0, lam)
    rng = np.random.default_rng(seed)
    Z = Z0 + rng.standard_normal(Z0.shape)
    direction = rng.standard_normal(Z0.shape)
    h = 1e-6
    numeric = (value(Z + h * direction) - value(Z - h * direction)) / (2 * h)
    assert np.vdot(gradient(Z), direction) == pytest.approx(numeric, rel=1e-5, abs=1e-9)
    # The all-ones row does not enter f: its gradient row is 0 (eq. 7, third case).
    np.testing.assert_array_equal(gradient(Z)[-1], 0.0)
    t, n, d = Y.shape[1], X.shape[0], X.shape[1]
    assert step == pytest.approx(min(3.8 * t * n / lam, d * n))


def test_the_conjugate_is_fenchel_tight_at_the_gradient():
    # f(Z) + f*(g(Z)) = <g(Z), Z> on the rows f depends on (Fenchel-Young with equality).
    X, Y = _data(3, n=15)
    Z0, value, gradient, conjugate, _ = stacked_objective(X, 2.0 * Y - 1.0, 2.0)
    Z = Z0 + 0.3 * np.random.default_rng(0).standard_normal(Z0.shape)
    G = gradient(Z)
    assert value(Z) + conjugate(G) == pytest.approx(np.vdot(G[:-1], Z[:-1]), rel=1e-9)


def test_label_enhancement_keeps_the_ones_row_and_is_certified():
    X, Y = _data(1)
    enhancement = enhance_labels(X, Y, lam=1.0)
    assert enhancement.certificate.converged
    assert enhancement.labels.shape == Y.shape
    assert enhancement.rank >= 1 and enhancement.stages[-1].mu == pytest.approx(1e-5)
    # The paper's continuation: mu_{k+1} = max(0.25 mu_k, 1e-5).
    mus = [stage.mu for stage in enhancement.stages]
    np.testing.assert_allclose(mus[1:-1], 0.25 * np.array(mus[:-2]), rtol=1e-12)
    # Signs or 0/1 labels give the same enhancement; full and truncated shrinkage the same labels.
    same = enhance_labels(X, 2 * Y - 1, lam=1.0)
    np.testing.assert_allclose(same.labels, enhancement.labels, rtol=1e-10, atol=1e-10)
    full = enhance_labels(X, Y, lam=1.0, svt="full")
    np.testing.assert_allclose(full.labels, enhancement.labels, atol=1e-4 * np.abs(full.labels).max())


def test_enhance_labels_validates():
    X, Y = _data(0)
    with pytest.raises(ValueError, match="lam"):
        enhance_labels(X, Y, lam=0.0)
    with pytest.raises(ValueError, match="rows"):
        enhance_labels(X, Y[:5])
    with pytest.raises(ValueError, match="binary|signs"):
        enhance_labels(X, Y + 2)


def test_lieml_exposes_enhancement_and_predicts_by_sign():
    X, Y = _data(2, n=60)
    model = LIEML(lam=10.0).fit(X[:40], Y[:40])
    assert model.enhanced_labels_.shape == (40, Y.shape[1])
    assert model.rank_ == model.enhancement_.rank
    assert len(model.step_certificates_) == 2 and model.certificate_.converged
    scores = model.decision_function(X[40:])
    np.testing.assert_array_equal(model.predict(X[40:]), (scores > 0).astype(int))
    # The regressor's representer: scores = K beta + m, beta summing to 0 per label.
    K = model.kernel_(X[40:], model.X_fit_)
    np.testing.assert_allclose(scores, K @ model.dual_coef_ + model.intercept_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.dual_coef_.sum(axis=0), 0.0, atol=1e-8)


def test_the_raw_label_ablation_trains_the_same_regressor_on_the_signs():
    X, Y = _data(4)
    raw = LIEMLRawLabels().fit(X, Y)
    assert raw.certificate_.converged
    np.testing.assert_array_equal(raw.solution_.model_state["targets"], 2.0 * Y - 1.0)


def test_the_rbf_kernel_matrix_is_positive_semidefinite():
    X, _ = _data(5, n=50)
    K = RBFKernel().resolve(X)(X)
    assert np.linalg.eigvalsh(K).min() >= -1e-10 * np.abs(K).max() * len(K)


@pytest.mark.parametrize("name", ["lieml", "lieml_raw"])
def test_lieml_conforms(name):
    check_method(name)


@pytest.mark.parametrize("dataset", ["medical", "enron"])
def test_sparse_text_data_fit_as_the_dense_copy(dataset, datasets_dir):
    data = load_dataset(dataset, data_home=datasets_dir)
    assert sp.issparse(data.X)
    rows = np.arange(120)
    X, Y = data.X[rows], np.asarray(data.Y.toarray() if sp.issparse(data.Y) else data.Y)[rows]
    keep = (Y.sum(axis=0) > 0) & (Y.sum(axis=0) < len(rows))
    Y = Y[:, keep][:, :5]
    sparse_model = LIEML(lam=1.0).fit(X, Y)
    dense_model = LIEML(lam=1.0).fit(X.toarray(), Y)
    assert sp.issparse(sparse_model.X_fit_)
    np.testing.assert_allclose(
        sparse_model.decision_function(X[:20]), dense_model.decision_function(X[:20].toarray()), rtol=1e-6, atol=1e-6
    )


def test_registry_names_the_parts():
    spec = mlc.get_method("lieml")
    assert spec.parts["relation"] == "label_enhancement" and spec.parts["solver"] == "lieml_irwls"
    assert set(spec.param_grid) == {"lam", "epsilon"}
