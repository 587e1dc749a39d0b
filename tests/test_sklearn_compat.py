"""scikit-learn compatibility: clone, params, GridSearchCV, Pipeline, cross_val_score, estimator checks."""

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.metrics import f1_score, make_scorer  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import multilabel_core  # noqa: E402
from multilabel_core.datasets import make_correlated_multilabel  # noqa: E402
from multilabel_core.metrics import average_precision  # noqa: E402
from multilabel_core_plugins.br import BinaryRelevance  # noqa: E402

#: Average precision (MLRL section 5.1) of the decision_function scores, as a scorer.
AVERAGE_PRECISION = make_scorer(average_precision, response_method="decision_function")


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=150, n_features=8, n_labels=4, random_state=0)
    return dataset.X, dataset.Y


def test_tags_declare_a_multi_label_classifier():
    tags = get_tags(BinaryRelevance())
    assert is_classifier(BinaryRelevance())
    assert tags.classifier_tags.multi_label and not tags.classifier_tags.multi_class
    assert tags.target_tags.multi_output and not tags.target_tags.single_output
    assert tags.input_tags.sparse


def test_clone_and_params(data):
    model = BinaryRelevance(C=0.3, max_iter=50).fit(*data)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "coef_")
    assert copy.set_params(C=2.0) is copy and copy.C == 2.0 and model.C == 0.3
    with pytest.raises(ValueError, match="Invalid parameter 'loss'"):
        copy.set_params(loss="hinge")  # a preset fixes its parts


def test_grid_search_with_a_multi_label_scorer(data):
    X, Y = data
    search = GridSearchCV(BinaryRelevance(), {"C": [0.01, 1.0]}, scoring=AVERAGE_PRECISION, cv=3).fit(X, Y)
    assert search.best_params_["C"] in (0.01, 1.0)
    assert 0.5 < search.best_score_ <= 1.0
    assert search.predict(X).shape == Y.shape


def test_grid_search_with_sklearn_f1_over_samples(data):
    # The 'f1_samples' scorer with rows without labels scored 0 explicitly (no warning).
    X, Y = data
    f1_samples = make_scorer(f1_score, average="samples", zero_division=0.0)
    search = GridSearchCV(BinaryRelevance(), {"C": [0.1, 10.0]}, scoring=f1_samples, cv=3).fit(X, Y)
    assert 0.0 < search.best_score_ <= 1.0


def test_pipeline_with_a_scaler(data):
    X, Y = data
    shifted = 10.0 * X + 3.0
    pipeline = make_pipeline(StandardScaler(), BinaryRelevance(C=0.5))
    pipeline.set_params(binaryrelevance__C=1.0).fit(shifted, Y)
    scaled = StandardScaler().fit_transform(shifted)
    reference = BinaryRelevance(C=1.0).fit(scaled, Y)
    np.testing.assert_allclose(pipeline.decision_function(shifted), reference.decision_function(scaled))


def test_cross_val_score(data):
    X, Y = data
    scores = cross_val_score(BinaryRelevance(), X, Y, cv=KFold(3, shuffle=True, random_state=0), scoring=AVERAGE_PRECISION)
    assert scores.shape == (3,) and np.all((scores > 0.5) & (scores <= 1.0))
    subset_accuracy = cross_val_score(BinaryRelevance(), X, Y, cv=3)  # the default: ClassifierMixin.score
    assert np.all((subset_accuracy >= 0.0) & (subset_accuracy <= 1.0))


# -- scikit-learn's estimator checks over every registered method -----------------------

def _one_d(values: str) -> str:
    return f"fits a 1-D y of {values}; multi-label targets are (n, L) indicator matrices and a 1-D y is refused"


_CODED_1_2 = (
    "binarises its target to the values {1, 2} and reshapes it to one column; an indicator matrix holds 0/1, "
    "so that column is refused as non-binary"
)

#: Checks that cannot apply to a multi-label-only estimator, each with the reason.
EXPECTED_FAILED_CHECKS = {
    "check_classifiers_one_label": _one_d("a single class"),
    "check_classifiers_classes": _one_d("string class names"),
    "check_classifiers_regression_target": _one_d("continuous values"),
    "check_classifier_not_supporting_multiclass": _one_d("three classes"),
    "check_classifiers_train": (
        "reshapes y to (n, 1) for multi-output-only estimators, then asserts predict returns 1-D (n,); "
        "predict returns (n, L) by contract"
    ),
    "check_estimators_dtypes": _CODED_1_2,
    "check_classifier_data_not_an_array": _CODED_1_2,
    "check_fit2d_1feature": _CODED_1_2,
    "check_dtype_object": (
        "requires a TypeError for an object array holding a dict; every bad input raises ValueError here "
        "(and object arrays are refused outright rather than converted)"
    ),
}


#: The check that cannot apply to an estimator predicting against a learned per-row threshold,
#: which it declares by a ``decision_threshold(X)`` method (the label-ranking family).
THRESHOLD_FAILED_CHECKS = {
    "check_classifier_multioutput": (
        "asserts predict == [decision_function > 0]; a ranking method's decision_function is its label scores "
        "and predict compares them with the learned threshold decision_threshold(X) (set-size prediction)"
    ),
}


#: Checks that fit a one-column y (scikit-learn reshapes its binary y to (n, 1) for a multi-output-only
#: estimator), which an estimator needing two labels or more (``min_labels``, the label-ranking family)
#: refuses.  plugins/ranking/tests/test_ranking_methods.py tests their properties on several labels.
ONE_COLUMN_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters", "check_estimator_sparse_array",
    "check_estimator_sparse_matrix", "check_estimator_sparse_tag", "check_estimators_fit_returns_self",
    "check_estimators_nan_inf", "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_predict1d", "check_fit_check_is_fitted",
    "check_fit_idempotent", "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in", "check_n_features_in_after_fitting",
    "check_non_transformer_estimators_n_iter", "check_pipeline_consistency",
    "check_positive_only_tag_during_fit", "check_readonly_memmap_input",
)  # fmt: skip
_ONE_COLUMN_REASON = (
    "fits a one-column y; ranking methods need at least two labels (a pair of labels to order) and refuse it "
    "(docs/methods/ranking.md)"
)


#: The same check for an estimator whose default threshold part is not the sign (LLSF's midpoint 0.5).
OWN_THRESHOLD_FAILED_CHECKS = {
    "check_classifier_multioutput": (
        "asserts predict == [decision_function > 0]; predict applies the estimator's threshold part to "
        "decision_function (LLSF: scores > 0.5, the midpoint of its {0, 1} targets), which check_method verifies"
    ),
}


#: The checks an estimator with a predict_proba (ML-kNN's posterior) meets: scikit-learn's layout for a
#: one-column y is the binary one, two columns; a multi-label predict_proba has one column per label.
PROBABILITY_FAILED_CHECKS = {
    "check_decision_proba_consistency": _one_d("two classes"),
    "check_estimator_sparse_array": (
        "asserts predict_proba of a one-column y has two columns (the binary layout); it has one per label"
    ),
    "check_estimator_sparse_matrix": (
        "asserts predict_proba of a one-column y has two columns (the binary layout); it has one per label"
    ),
}


def _expected_failed_checks(estimator) -> dict:
    expected = dict(EXPECTED_FAILED_CHECKS)
    if hasattr(estimator, "predict_proba"):
        expected |= PROBABILITY_FAILED_CHECKS
    if hasattr(estimator, "decision_threshold"):
        expected |= THRESHOLD_FAILED_CHECKS
    if getattr(estimator, "thresholding", "zero") not in ("zero",):
        expected |= OWN_THRESHOLD_FAILED_CHECKS
    if getattr(estimator, "min_labels", 1) > 1:
        expected |= dict.fromkeys(ONE_COLUMN_CHECKS, _ONE_COLUMN_REASON)
    return expected


def _estimators():
    return [spec.estimator() for spec in multilabel_core.list_methods()]


@parametrize_with_checks(_estimators(), expected_failed_checks=_expected_failed_checks, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_the_checks_cover_every_registered_method():
    assert [type(e) for e in _estimators()] == [spec.estimator for spec in multilabel_core.list_methods()]
    assert BinaryRelevance in [type(e) for e in _estimators()]
