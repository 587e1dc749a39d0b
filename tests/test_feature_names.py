"""``n_features_in_`` and ``feature_names_in_`` for every registered method, as scikit-learn has them.

Fitted on a data frame whose column names are all strings, an estimator keeps them in
``feature_names_in_`` (an object array) and checks X at predict time against them: other
names, or the same in another order, are a ValueError naming them; an array without names
is a UserWarning, and so is a frame with names for an estimator fitted without them.  A
refit on an array forgets the names.  A frame is recognised by its ``columns`` attribute, so
pandas is not needed (:class:`Frame` below); the tests over every method use pandas itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from multilabel_core import get_method, list_methods, make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.validation import check_X, check_Y

METHODS = [spec.name for spec in list_methods()]
NAMES = [f"feature {i}" for i in range(5)]


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    return dataset.X, dataset.Y


def seeded(method):
    params = get_method(method).estimator().get_params(deep=False)
    return make_method(method, **({"random_state": 0} if "random_state" in params else {}))


def name_warnings(call):
    """The messages of the feature-name UserWarnings ``call()`` issues (fits may warn of other things)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if "feature names" in str(w.message)]


class Frame:
    """The least a data frame is: values and ``columns`` (no pandas)."""

    def __init__(self, values, columns):
        self.values, self.columns = np.asarray(values), list(columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_sets_n_features_in_and_checks_feature_names(method, data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    frame, labels = pd.DataFrame(X, columns=NAMES), pd.DataFrame(Y, columns=["a", "b", "c"])
    name = get_method(method).estimator.__name__
    model = seeded(method)

    # Fitted on arrays: no names; a frame at predict time is a warning, a wrong width an error.
    assert name_warnings(lambda: model.fit(X, Y)) == (model, [])
    assert model.n_features_in_ == X.shape[1] and not hasattr(model, "feature_names_in_")
    _, messages = name_warnings(lambda: model.decision_function(frame))
    assert messages == [f"X has feature names, but {name} was fitted without feature names"]
    with pytest.raises(ValueError, match=f"X has 4 features, but {name} is expecting 5 features"):
        model.decision_function(X[:, :4])

    # Fitted on frames (X and Y): the names, and the same model as on the arrays.
    scores = model.decision_function(X)
    assert name_warnings(lambda: model.fit(frame, labels)) == (model, [])
    assert model.n_features_in_ == X.shape[1]
    assert model.feature_names_in_.dtype == object and list(model.feature_names_in_) == NAMES
    framed, messages = name_warnings(lambda: model.decision_function(frame))
    assert messages == []
    np.testing.assert_allclose(framed, scores, rtol=1e-10, atol=1e-12 * np.abs(scores).max())
    _, messages = name_warnings(lambda: model.predict(X))
    assert messages == [f"X does not have valid feature names, but {name} was fitted with feature names"]
    with pytest.raises(ValueError, match="same order as they were in fit"):
        model.predict(frame[NAMES[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time:\n- feature 9\n.*yet now missing:\n- feature 0\n"):
        model.predict(frame.rename(columns={"feature 0": "feature 9"}))
    with pytest.raises(ValueError, match="yet now missing:\n- feature 4\n"):
        model.predict(frame[NAMES[:4]])

    # Refitted on arrays: the stale names are gone, and an array predicts without a warning.
    assert name_warnings(lambda: model.fit(X, Y)) == (model, [])
    assert not hasattr(model, "feature_names_in_")
    _, messages = name_warnings(lambda: model.predict(X))
    assert messages == []


def test_a_frame_needs_no_pandas_and_names_must_all_be_strings(data):
    X, Y = data
    model = make_method("br").fit(Frame(X, NAMES), Y)
    assert list(model.feature_names_in_) == NAMES
    assert name_warnings(lambda: model.predict(Frame(X, NAMES)))[1] == []
    with pytest.raises(ValueError, match="The first difference: column 0 is 'feature 1', at fit it was 'feature 0'"):
        model.predict(Frame(X, NAMES[1:2] + NAMES[:1] + NAMES[2:]))
    # Names that are not all strings are no names (scikit-learn's rule): none kept, none checked.
    model.fit(Frame(X, [0, *NAMES[1:]]), Y)
    assert not hasattr(model, "feature_names_in_")
    assert name_warnings(lambda: model.predict(Frame(X, [0, *NAMES[1:]])))[1] == []


def test_the_mismatch_lists_the_first_names_only(data):
    X, Y = data
    many = np.hstack([X, X])
    model = make_method("br").fit(Frame(many, [f"a{i}" for i in range(10)]), Y)
    with pytest.raises(ValueError, match=r"unseen at fit time:\n- b0\n- b1\n- b2\n- b3\n- b4\n- \.\.\. and 5 more\n"):
        model.predict(Frame(many, [f"b{i}" for i in range(10)]))


def test_pandas_frames_convert_as_their_values(data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    frame = pd.DataFrame(X, columns=NAMES)
    np.testing.assert_array_equal(check_X(frame), X)
    assert check_X(frame.astype(np.float32)).dtype == np.float32
    integers = pd.DataFrame(np.arange(10).reshape(5, 2), columns=["i", "j"]).astype({"i": "Int64"})
    converted = check_X(integers)
    assert converted.dtype == np.float64 and np.array_equal(converted, np.arange(10.0).reshape(5, 2))
    sparse = check_X(frame.where(frame > 0, 0.0).astype(pd.SparseDtype(np.float64, 0.0)))
    assert sparse.format == "csr" and np.array_equal(sparse.toarray(), np.where(X > 0, X, 0.0))
    missing = frame.astype("Float64")
    missing.iloc[3, 1] = pd.NA
    with pytest.raises(ValueError, match="X contains NaN"):
        check_X(missing)
    with pytest.raises(ValueError, match=r"X must be numeric; its column\(s\) 'colour' \(.*\) are not"):
        check_X(frame.assign(colour="red"))
    labels = pd.DataFrame(Y, columns=["a", "b", "c"])
    for variant in (labels, labels.astype(bool), labels.astype("boolean"), labels.astype("Int8")):
        np.testing.assert_array_equal(check_Y(variant), Y)
    with pytest.raises(ValueError, match="Y contains NaN"):
        check_Y(labels.astype("Int8").where(labels > 0, pd.NA))


@pytest.mark.parametrize("method", [spec.name for spec in list_methods() if getattr(spec.estimator, "min_labels", 1) == 1])
def test_scikit_learns_own_column_name_check(method):
    # Not among the checks parametrize_with_checks runs (tests/test_sklearn_compat.py), so run here.
    # It fits a one-column y, which the label-ranking family (min_labels = 2) refuses.
    pytest.importorskip("pandas")
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    check = getattr(checks, "check_dataframe_column_names_consistency", None)
    if check is None:
        pytest.skip("this scikit-learn has no check_dataframe_column_names_consistency")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fits' own warnings (convergence on random data)
        check(method, seeded(method))
