"""Preprocessed: the scaler fitted on the training rows only, kept with the model, applied at predict."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core as mlc
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.preprocessing import PREPROCESSORS
from multilabel_core.persistence import load_model, save_model
from multilabel_core.preprocessed import Preprocessed


def data(seed=0, n=120):
    ds = make_correlated_multilabel(n_samples=n, n_features=8, n_labels=4, random_state=seed)
    return ds.X, ds.Y


@pytest.mark.parametrize("preprocess", sorted(PREPROCESSORS))
def test_it_is_the_method_fitted_on_rows_scaled_with_training_statistics(preprocess):
    X, Y = data()
    train, test = slice(0, 80), slice(80, None)
    wrapped = mlc.make_method("br", C=1.0, preprocess=preprocess).fit(X[train], Y[train])
    scaler = PREPROCESSORS[preprocess]().fit(X[train])
    direct = mlc.make_method("br", C=1.0).fit(scaler.transform(X[train]), Y[train])
    # Both are the same deterministic solve on the same rows: the scores agree to the solver's
    # tolerance, and identically when the arithmetic is the same.
    np.testing.assert_allclose(wrapped.decision_function(X[test]), direct.decision_function(scaler.transform(X[test])), atol=1e-8)
    np.testing.assert_array_equal(wrapped.predict(X[test]), direct.predict(scaler.transform(X[test])))


@settings(max_examples=20, deadline=None)
@given(shift=st.floats(-1e3, 1e3), scale=st.floats(1e-3, 1e3))
def test_standardize_makes_the_fit_invariant_to_affine_feature_changes(shift, scale):
    """The point of scaling inside: a change of units or origin of the features leaves the predictions as they were."""
    X, Y = data(seed=1)
    base = mlc.make_method("br", preprocess="standardize").fit(X, Y)
    moved = mlc.make_method("br", preprocess="standardize").fit(X * scale + shift, Y)
    agree = np.mean(base.predict(X) == moved.predict(X * scale + shift))
    assert agree >= 0.99  # only ties within the solver's tolerance may flip


def test_the_test_rows_never_reach_the_scaler():
    X, Y = data()
    model = Preprocessed(mlc.make_method("br")).fit(X[:80], Y[:80])
    before = model.scaler_.mean_.copy()
    model.predict(X[80:] * 100)
    np.testing.assert_array_equal(model.scaler_.mean_, before)
    np.testing.assert_allclose(model.scaler_.mean_, X[:80].mean(axis=0))


def test_fitted_attributes_read_through_and_the_certificate_is_the_methods():
    X, Y = data()
    model = mlc.make_method("bsvm", preprocess="standardize").fit(X, Y)
    assert model.certificate_ is model.estimator_.certificate_
    assert model.certificate_.converged
    assert model.n_features_in_ == X.shape[1] and model.n_labels_ == Y.shape[1]
    assert model.intercept_ is model.estimator_.intercept_
    with pytest.raises(AttributeError):
        Preprocessed(mlc.make_method("bsvm")).certificate_
    assert not hasattr(Preprocessed(mlc.make_method("bsvm")), "n_labels_")


def test_the_unlabelled_rows_of_ssmlrl_are_scaled_with_the_labelled_rows_statistics():
    X, Y = data(n=150)
    model = mlc.make_method("ssmlrl", preprocess="standardize").fit(X[:60], Y[:60], X_unlabeled=X[60:120] * 1.0)
    scaler = PREPROCESSORS["standardize"]().fit(X[:60])
    direct = mlc.make_method("ssmlrl").fit(scaler.transform(X[:60]), Y[:60], X_unlabeled=scaler.transform(X[60:120]))
    np.testing.assert_allclose(model.decision_function(X[120:]), direct.decision_function(scaler.transform(X[120:])), atol=1e-7)


def test_sparse_rows_stay_sparse_and_are_not_centred():
    X, Y = data()
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    model = mlc.make_method("br", preprocess="standardize").fit(Xs, Y)
    assert not model.scaler_.centred_
    assert sp.issparse(model.scaler_.transform(Xs))
    dense = mlc.make_method("br", preprocess="maxabs").fit(Xs.toarray(), Y)
    sparse = mlc.make_method("br", preprocess="maxabs").fit(Xs, Y)
    np.testing.assert_allclose(sparse.decision_function(Xs), dense.decision_function(Xs.toarray()), atol=1e-6)


def test_saved_and_loaded_without_running_code(tmp_path):
    X, Y = data()
    model = mlc.make_method("mlrl", preprocess="standardize").fit(X, Y)
    path = tmp_path / "m.mlcore"
    save_model(model, path, method="mlrl")
    loaded = load_model(path)
    assert isinstance(loaded, Preprocessed) and loaded.preprocess == "standardize"
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: mlc.make_method("br", preprocess="std"), "preprocess"),
        (lambda: Preprocessed(None).fit(*data()), "estimator"),
        (lambda: Preprocessed(mlc.make_method("br"), preprocess="zscore").fit(*data()), "zscore"),
        (lambda: Preprocessed(mlc.make_method("br")).fit(data()[0][:, :3], data()[1]).predict(data()[0]), "features"),
    ],
)
def test_bad_input_names_the_problem(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()


def test_clone_and_grid_search_treat_it_as_one_estimator():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    X, Y = data()
    model = Preprocessed(mlc.make_method("br"))
    assert clone(model).get_params()["estimator__C"] == 1.0
    search = GridSearchCV(model, {"estimator__C": [0.1, 1.0]}, cv=2).fit(X, Y)
    assert search.best_params_["estimator__C"] in (0.1, 1.0)
    assert sklearn.__version__
