"""Every estimator accepts a label that is constant on its training rows.

The rule (MultiLabelEstimator, docs/estimators.md): the method learns the other labels only -- so
every coupling between labels leaves the constant ones out --, a constant label predicts its
training value with a constant score beyond the learned labels' training scores, 0 and the fitted
threshold's cuts, and the fit counts such labels in one ConstantLabelWarning and in
``constant_labels_`` / ``constant_scores_`` / ``fitted_labels_``.  Checked for every registered
method: predict, the shapes, the attributes, the warning, and that the learned labels' model is
the model of a fit without the constant columns; every label constant; save and load.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

import multilabel_core
from multilabel_core import list_methods, make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ConstantLabelWarning, constant_label_scores
from multilabel_core.persistence import load_model, save_model
from multilabel_core.thresholds import FixedThreshold

METHODS = [spec.name for spec in list_methods()]
N, N_TEST = 60, 25
NEVER, ALWAYS = 1, 4  # where the constant columns go among the four learnable labels
LEARNED = [0, 2, 3, 5]
#: Scores of the learned labels against a fit without the constant columns: the two fits solve
#: the same problem on the same arrays, so they may differ by rounding only (measured: not at all).
ROUNDING = 1e-12


def data():
    base = make_correlated_multilabel(n_samples=N + N_TEST, n_features=5, n_labels=4, random_state=0)
    X, Y4 = base.X[:N], base.Y[:N]
    Y = np.column_stack([Y4[:, :1], np.zeros(N), Y4[:, 1:3], np.ones(N), Y4[:, 3:]]).astype(np.int8)
    return X, Y, Y4, base.X[N:]


def seeded(method: str, **params):
    """The method with a fixed seed where it draws (so two fits are the same computation)."""
    if "random_state" in make_method(method).get_params(deep=False):
        params.setdefault("random_state", 0)
    return make_method(method, **params)


def fit_recording(model, X, Y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, Y)
    return [w for w in caught if issubclass(w.category, ConstantLabelWarning)]


def quiet_fit(model, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, Y)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_learns_the_other_labels_and_predicts_the_constant_ones(method):
    X, Y, Y4, X_test = data()
    model = seeded(method)
    constant_warnings = fit_recording(model, X, Y)
    # One warning, with the count and the indices.
    assert len(constant_warnings) == 1, [str(w.message) for w in constant_warnings]
    message = str(constant_warnings[0].message)
    assert f"2 of 6 label column(s) take one value on the {N} training rows" in message
    assert f"{NEVER} (never relevant), {ALWAYS} (always relevant)" in message
    assert "every coupling it learns between labels, is fitted on the other 4 label(s) only" in message
    # The fitted attributes.
    assert model.n_labels_ == 6 and model.constant_labels_ == {NEVER: 0, ALWAYS: 1}
    assert model.fitted_labels_.tolist() == LEARNED and set(model.constant_scores_) == {NEVER, ALWAYS}
    for rows in (X, X_test):
        scores, labels = model.decision_function(rows), model.predict(rows)
        assert scores.shape == labels.shape == (rows.shape[0], 6) and scores.dtype == np.float64
        assert labels.dtype == np.int64 and np.all(np.isfinite(scores))
        assert np.all(labels[:, NEVER] == 0) and np.all(labels[:, ALWAYS] == 1)
        assert np.all(scores[:, NEVER] == model.constant_scores_[NEVER]) and model.constant_scores_[NEVER] <= -1.0
        assert np.all(scores[:, ALWAYS] == model.constant_scores_[ALWAYS]) and model.constant_scores_[ALWAYS] >= 1.0
    # Beyond every learned score of the training rows.
    learned_training = model.decision_function(X)[:, LEARNED]
    assert model.constant_scores_[NEVER] < learned_training.min() and model.constant_scores_[ALWAYS] > learned_training.max()
    # The learned labels' model is the model of a fit on those columns alone.
    alone = quiet_fit(seeded(method), X, Y4)
    assert not alone.constant_labels_ and alone.fitted_labels_.tolist() == [0, 1, 2, 3]
    expected = alone.decision_function(X_test)
    np.testing.assert_allclose(
        model.decision_function(X_test)[:, LEARNED], expected, rtol=0, atol=ROUNDING * (1.0 + np.abs(expected).max())
    )
    np.testing.assert_array_equal(model.predict(X_test)[:, LEARNED], alone.predict(X_test))
    for name in ("label_covariance_", "label_correlation_", "coef_"):
        if hasattr(alone, name):
            np.testing.assert_allclose(getattr(model, name), getattr(alone, name), rtol=0, atol=ROUNDING * (
                1.0 + np.abs(getattr(alone, name)).max()))  # fmt: skip


@pytest.mark.parametrize("method", METHODS)
def test_every_label_constant_fits_nothing_and_predicts_the_constants(method, tmp_path):
    X, _, _, X_test = data()
    Y = np.column_stack([np.zeros(N), np.ones(N), np.zeros(N)]).astype(np.int8)
    model = seeded(method)
    # A model fitted before must leave nothing behind.
    quiet_fit(model, X, data()[2])
    (warning,) = fit_recording(model, X, Y)
    assert "3 of 3 label column(s)" in str(warning.message) and "nothing is fitted" in str(warning.message)
    assert model.fitted_labels_.size == 0 and model.constant_labels_ == {0: 0, 1: 1, 2: 0}
    assert not hasattr(model, "threshold_") and not hasattr(model, "coef_") and not hasattr(model, "certificate_")
    np.testing.assert_array_equal(model.predict(X_test), np.tile([0, 1, 0], (N_TEST, 1)))
    np.testing.assert_array_equal(model.decision_function(X_test), np.tile([-1.0, 1.0, -1.0], (N_TEST, 1)))
    loaded = load_model(save_model(model, tmp_path / f"{method}.mlcore", method=method))
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    assert loaded.constant_labels_ == model.constant_labels_


@pytest.mark.parametrize("method", METHODS)
def test_the_constant_labels_survive_save_and_load(method, tmp_path):
    X, Y, _, X_test = data()
    model = quiet_fit(seeded(method), X, Y)
    loaded = load_model(save_model(model, tmp_path / f"{method}.mlcore", method=method))
    assert loaded.constant_labels_ == model.constant_labels_ and loaded.constant_scores_ == model.constant_scores_
    np.testing.assert_array_equal(loaded.fitted_labels_, model.fitted_labels_)
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(loaded.decision_function(X_test), model.decision_function(X_test))


@pytest.mark.parametrize(
    "attribute, value, needle",
    [
        ("constant_scores_", {NEVER: 2.0, ALWAYS: 3.0}, "gives label 1 of value 0 a score of the other sign"),
        ("constant_scores_", {NEVER: -2.0, ALWAYS: float("inf")}, "gives label 4 the score inf, not a finite float"),
        ("constant_labels_", {NEVER: 0, ALWAYS: 2}, "gives label 4 the value 2, not 0 or 1"),
        ("constant_labels_", {NEVER: 0, 9: 1}, "constant_scores_ of the BinaryRelevance is not keyed by the label "
                                               "indices of constant_labels_"),
        ("fitted_labels_", np.array([0, 2, 3, 3]), "do not split the n_labels_ = 6 labels"),
        ("fitted_labels_", np.array([0, 2, 3]), "fitted_labels_ of the BinaryRelevance"),
    ],
)
def test_a_model_file_whose_labels_do_not_split_is_refused(tmp_path, attribute, value, needle):
    X, Y, _, _ = data()
    model = quiet_fit(make_method("br"), X, Y)
    setattr(model, attribute, value)
    with pytest.raises(ValueError, match=re.escape(needle)):
        save_model(model, tmp_path / "bad.mlcore")


@pytest.mark.parametrize("method", [spec.name for spec in list_methods() if getattr(spec.estimator, "min_labels", 1) > 1])
def test_a_ranking_method_with_one_learnable_label_refuses_naming_the_counts(method):
    X, Y, _, _ = data()
    Y1 = Y[:, [0, NEVER, ALWAYS]]
    with pytest.raises(ValueError, match=r"needs at least 2 label columns that take both values on the training "
                                         r"rows \(it orders labels against each other\), but only 1 of the 3 do: "
                                         r"2 are constant there \(1, 2\)"):  # fmt: skip
        make_method(method).fit(X, Y1)


@pytest.mark.parametrize("thresholding", [FixedThreshold(value=30.0), FixedThreshold(value=-30.0), "tuned_f1",
                                          "proportional_cut", "rank_cut"])  # fmt: skip
def test_the_constant_scores_lie_beyond_the_fitted_threshold(thresholding):
    X, Y, Y4, X_test = data()
    model = quiet_fit(make_method("br", thresholding=thresholding), X, Y)
    alone = quiet_fit(make_method("br", thresholding=thresholding), X, Y4)
    held = [getattr(model.threshold_, name, None) for name in ("value", "thresholds")]
    cuts = np.concatenate([np.ravel(value) for value in held if value is not None] + [[0.0]])
    assert model.constant_scores_[NEVER] < min(cuts.min(), 0.0) and model.constant_scores_[ALWAYS] > max(cuts.max(), 0.0)
    # The threshold is the one fitted on the learned labels alone, and cuts them as it cuts them there.
    np.testing.assert_array_equal(model.predict(X_test)[:, LEARNED], alone.predict(X_test))
    assert np.all(model.predict(X_test)[:, NEVER] == 0) and np.all(model.predict(X_test)[:, ALWAYS] == 1)


def test_label_names_of_a_data_frame_are_in_the_warning():
    pd = pytest.importorskip("pandas")
    X, Y, _, _ = data()
    frame = pd.DataFrame(Y, columns=[f"tag{j}" for j in range(6)])
    (warning,) = fit_recording(make_method("br"), X, frame)
    assert "1 'tag1' (never relevant), 4 'tag4' (always relevant)" in str(warning.message)


def test_a_learned_relation_is_over_the_learned_labels_only():
    X, Y, _, _ = data()
    model = quiet_fit(make_method("mlrl"), X, Y)
    assert model.label_covariance_.shape == (4, 4) and model.label_correlation_.shape == (4, 4)
    choice = make_method("mlrl").choose_solver(X, Y)
    assert choice.problem.Y.shape == (N, 4)
    with pytest.raises(ValueError, match="every label column of Y takes one value"):
        make_method("mlrl").choose_solver(X, np.ones((N, 2)))


@given(
    arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 5)),
           elements=st.floats(-1e6, 1e6, allow_nan=False)),
    arrays(np.int8, st.integers(1, 4), elements=st.integers(0, 1)),
    st.lists(st.floats(-1e6, 1e6), max_size=3),
)  # fmt: skip
def test_constant_label_scores_lie_beyond_every_score_zero_and_cut(fitted, values, cuts):
    scores = constant_label_scores(fitted, values, cuts)
    assert scores.shape == values.shape and np.all(np.isfinite(scores))
    pooled = np.concatenate([fitted.ravel(), cuts, [0.0]])
    assert np.all(scores[values == 0] <= pooled.min() - 1.0) and np.all(scores[values == 1] >= pooled.max() + 1.0)


@given(st.data())
def test_any_constant_columns_leave_the_other_labels_model_unchanged(draw):
    """Binary relevance on drawn labels with drawn constant columns put in drawn places."""
    X, _, Y4, X_test = data()
    n_constant = draw.draw(st.integers(1, 3))
    values = draw.draw(st.lists(st.integers(0, 1), min_size=n_constant, max_size=n_constant))
    order = draw.draw(st.permutations(range(4 + n_constant)))
    Y = np.column_stack([Y4, np.array(values)[None, :].repeat(N, axis=0)])[:, order].astype(np.int8)
    where = {int(np.flatnonzero(np.array(order) == 4 + k)[0]): v for k, v in enumerate(values)}
    model = quiet_fit(make_method("br"), X, Y)
    assert model.constant_labels_ == where
    learned = [j for j in range(Y.shape[1]) if j not in where]
    alone = quiet_fit(make_method("br"), X, np.ascontiguousarray(Y[:, learned]))
    expected = alone.decision_function(X_test)
    np.testing.assert_allclose(model.decision_function(X_test)[:, learned], expected, rtol=0,
                               atol=ROUNDING * (1.0 + np.abs(expected).max()))  # fmt: skip
    predictions = model.predict(X_test)
    for j, value in where.items():
        assert np.all(predictions[:, j] == value)


def test_the_warning_class_is_public():
    assert issubclass(ConstantLabelWarning, UserWarning)
    assert multilabel_core.estimator.ConstantLabelWarning is ConstantLabelWarning
