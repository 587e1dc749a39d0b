"""save_model / load_model: round trip, header, version warning, refusal of other files."""

import warnings

import joblib
import numpy as np
import pytest

import multilabel_core
from multilabel_core import persistence
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.persistence import ModelVersionWarning, load_model, save_model
from multilabel_core.testing.checks import PERSISTENCE_FALLBACK_RTOL
from multilabel_core.testing.rounding import score_rounding_bound
from multilabel_core_plugins.br import BinaryRelevance


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=3, random_state=0)
    return dataset.X, dataset.Y


def test_round_trip_keeps_predictions_and_records_the_method(tmp_path, data):
    X, Y = data
    model = BinaryRelevance(C=0.5).fit(X, Y)
    path = save_model(model, tmp_path / "br.joblib")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path)
    assert type(loaded) is BinaryRelevance and loaded.get_params() == model.get_params()
    # The promise (docs/estimators.md, Saving models): the coefficients bit for bit, the
    # scores up to the rounding of their sums, which BLAS may order differently.
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    scores = model.decision_function(X)
    assert np.all(np.abs(loaded.decision_function(X) - scores) <= score_rounding_bound(model, X, scores))
    assert loaded.certificate_ == model.certificate_
    header = joblib.load(path)
    assert header["format"] == persistence.FORMAT
    assert header["multilabel_core"] == multilabel_core.__version__
    assert header["method"] == "br"


def test_an_unregistered_estimator_is_saved_without_a_method_name(tmp_path, data):
    path = save_model(ComposedEstimator().fit(*data), tmp_path / "composed.joblib")
    assert joblib.load(path)["method"] is None
    assert isinstance(load_model(path), ComposedEstimator)


def test_the_recorded_method_name_can_be_given(tmp_path, data):
    path = save_model(ComposedEstimator().fit(*data), tmp_path / "named.joblib", method="br")
    assert joblib.load(path)["method"] == "br"


def test_a_pipeline_can_be_saved(tmp_path, data):
    pipeline = pytest.importorskip("sklearn.pipeline")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X, Y = data
    model = pipeline.make_pipeline(preprocessing.StandardScaler(), BinaryRelevance()).fit(X, Y)
    loaded = load_model(save_model(model, tmp_path / "pipeline.joblib"))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_file_from_another_version_warns(tmp_path, data, monkeypatch):
    model = BinaryRelevance().fit(*data)
    monkeypatch.setattr(persistence, "__version__", "0.0.1")
    path = save_model(model, tmp_path / "old.joblib")
    monkeypatch.undo()
    with pytest.warns(ModelVersionWarning, match=r"written by multilabel_core 0\.0\.1 \(method 'br'\)"):
        loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(data[0]), model.predict(data[0]))


def test_files_that_are_not_model_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a model\n")
    other = tmp_path / "array.joblib"
    joblib.dump(np.arange(3), other)
    header_only = tmp_path / "header.joblib"
    joblib.dump({"format": "something.else", "estimator": None}, header_only)
    for path in (text, other, header_only):
        with pytest.raises(ValueError, match="is not a multilabel_core model file"):
            load_model(path)
    with pytest.raises(ValueError, match="no such model file"):
        load_model(tmp_path / "missing.joblib")


def test_a_model_of_a_plugin_that_is_gone_is_refused(tmp_path):
    # A pickle whose only object is a class from a module that is not installed (GLOBAL opcode).
    path = tmp_path / "orphan.joblib"
    path.write_bytes(b"\x80\x04cmultilabel_core_plugins.removed\nMethod\n.")
    with pytest.raises(ValueError, match="refers to code that is not installed"):
        load_model(path)


@pytest.mark.parametrize("method", ["bsvm", "mlrl", "mlknn"])
def test_a_model_keeps_its_own_copy_of_the_training_rows(method, data):
    """Changing the array given to fit afterwards leaves the model (and what it saves) unchanged."""
    X, Y = data
    X_train = X.copy()
    model = multilabel_core.make_method(method).fit(X_train, Y)
    before = model.decision_function(X)
    X_train[:] = 0.0
    assert not np.shares_memory(model.X_fit_, X_train)
    np.testing.assert_array_equal(model.X_fit_, X)  # a copy of data: no arithmetic, exact
    bound = score_rounding_bound(model, X, before)
    if bound is None:  # ML-kNN's neighbour counts: the kit's fallback tolerance
        bound = PERSISTENCE_FALLBACK_RTOL * np.abs(before).max()
    assert np.all(np.abs(model.decision_function(X) - before) <= bound)
