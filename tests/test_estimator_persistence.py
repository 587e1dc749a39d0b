"""save_model / load_model: round trip, manifest, version warning, refusal of other files.

tests/test_persistence_safety.py holds the hostile and corrupt files, the round trip of every
registered method and the plugin hook for trusted classes.
"""

import json
import warnings
import zipfile

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


def manifest(path):
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["manifest.json", "estimator.skops"]  # the manifest is read first
        return json.loads(archive.read("manifest.json"))


def test_round_trip_keeps_predictions_and_records_the_method(tmp_path, data):
    X, Y = data
    model = BinaryRelevance(C=0.5).fit(X, Y)
    path = save_model(model, tmp_path / "br.mlcore")
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
    header = manifest(path)
    assert header["format"] == persistence.FORMAT and header["format_version"] == persistence.FORMAT_VERSION == 1
    assert header["multilabel_core"] == multilabel_core.__version__
    assert header["method"] == "br"
    assert header["estimator"] == "multilabel_core_plugins.br.estimator.BinaryRelevance"
    assert header["params"] == model.get_params(deep=False)


def test_an_unregistered_estimator_is_saved_without_a_method_name(tmp_path, data):
    path = save_model(ComposedEstimator().fit(*data), tmp_path / "composed.mlcore")
    assert manifest(path)["method"] is None
    assert isinstance(load_model(path), ComposedEstimator)


def test_the_recorded_method_name_can_be_given(tmp_path, data):
    path = save_model(ComposedEstimator().fit(*data), tmp_path / "named.mlcore", method="br")
    assert manifest(path)["method"] == "br"
    assert isinstance(load_model(path), ComposedEstimator)


def test_the_content_decides_not_the_suffix(tmp_path, data):
    X, Y = data
    model = BinaryRelevance().fit(X, Y)
    named_like_a_pickle = save_model(model, tmp_path / "model.joblib")
    assert zipfile.is_zipfile(named_like_a_pickle)
    np.testing.assert_array_equal(load_model(named_like_a_pickle).predict(X), model.predict(X))
    pickled = save_model(model, tmp_path / "model.mlcore", format="joblib")
    with pytest.raises(ValueError, match="is a pickle"):
        load_model(pickled)


def test_the_joblib_format_is_written_on_request_and_read_only_when_trusted(tmp_path, data):
    X, Y = data
    model = BinaryRelevance().fit(X, Y)
    path = save_model(model, tmp_path / "br.joblib", format="joblib")
    assert joblib.load(path)["method"] == "br"  # the pre-skops layout
    with pytest.raises(ValueError, match=r"br\.joblib is a pickle \(joblib\) file.*trusted=True"):
        load_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path, trusted=True)
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    with pytest.raises(ValueError, match="format must be one of 'mlcore', 'joblib', got 'pickle'"):
        save_model(model, tmp_path / "x", format="pickle")


def test_a_pipeline_can_be_saved(tmp_path, data):
    pipeline = pytest.importorskip("sklearn.pipeline")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X, Y = data
    model = pipeline.make_pipeline(preprocessing.StandardScaler(), BinaryRelevance()).fit(X, Y)
    path = save_model(model, tmp_path / "pipeline.mlcore")
    assert manifest(path)["method"] is None and manifest(path)["estimator"] == "sklearn.pipeline.Pipeline"
    loaded = load_model(path)
    assert [type(step) for _, step in loaded.steps] == [preprocessing.StandardScaler, BinaryRelevance]
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_file_from_another_version_warns(tmp_path, data, monkeypatch):
    model = BinaryRelevance().fit(*data)
    monkeypatch.setattr(persistence, "__version__", "0.0.1")
    path = save_model(model, tmp_path / "old.mlcore")
    pickled = save_model(model, tmp_path / "old.joblib", format="joblib")
    monkeypatch.undo()
    with pytest.warns(ModelVersionWarning, match=r"written by multilabel_core 0\.0\.1 \(method 'br'\)"):
        loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(data[0]), model.predict(data[0]))
    with pytest.warns(ModelVersionWarning, match=r"written by multilabel_core 0\.0\.1 \(method 'br'\)"):
        load_model(pickled, trusted=True)


def test_files_that_are_not_model_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a model\n")
    other = tmp_path / "array.joblib"
    joblib.dump(np.arange(3), other)
    header_only = tmp_path / "header.joblib"
    joblib.dump({"format": "something.else", "estimator": None}, header_only)
    with pytest.raises(ValueError, match=r"notes\.txt is not a multilabel_core model file \(not a zip archive\)"):
        load_model(text)
    for path in (other, header_only):
        with pytest.raises(ValueError, match="is a pickle"):
            load_model(path)
        with pytest.raises(ValueError, match="is not a multilabel_core model file"):
            load_model(path, trusted=True)
    with pytest.raises(ValueError, match="no such model file"):
        load_model(tmp_path / "missing.mlcore")


def test_a_pickled_model_of_a_plugin_that_is_gone_is_refused(tmp_path):
    # A pickle whose only object is a class from a module that is not installed (GLOBAL opcode).
    path = tmp_path / "orphan.joblib"
    path.write_bytes(b"\x80\x04cmultilabel_core_plugins.removed\nMethod\n.")
    with pytest.raises(ValueError, match="is a pickle"):
        load_model(path)
    with pytest.raises(ValueError, match="refers to code that is not installed"):
        load_model(path, trusted=True)


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
