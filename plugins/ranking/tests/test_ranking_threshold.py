"""Set-size prediction (section 3.8): eq. 34's targets, the regressors of t(x), out-of-fold targets."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from multilabel_core_plugins.ranking import CMLFS, LaRankSVM
from multilabel_core_plugins.ranking.threshold import (
    REGRESSORS,
    LinearThreshold,
    threshold_regressors,
    threshold_targets,
)
from sklearn.base import clone

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.model_selection import iterative_stratification
from multilabel_core.testing.strategies import score_matrices

pytestmark = pytest.mark.filterwarnings("ignore:CuttingPlaneSolver did not converge")


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=90, n_features=6, n_labels=4, random_state=3)
    return dataset.X, dataset.Y


@st.composite
def correctly_ranked(draw, same_set_size=False):
    """Scores (n, c) and labels Y whose relevant labels are each row's s_i top-scoring ones, 1 <= s_i < c."""
    scores = draw(score_matrices(n_labels=st.integers(2, 6)))
    n, c = scores.shape
    sizes = (
        np.full(n, draw(st.integers(1, c - 1)))
        if same_set_size
        else np.array(draw(st.lists(st.integers(1, c - 1), min_size=n, max_size=n)))
    )
    rank = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1)  # 0 = the top score
    return scores, (rank < sizes[:, None]).astype(np.int8)


@given(correctly_ranked())
def test_eq_34_on_a_correctly_ranked_row_is_the_mean_of_its_s_th_and_s_plus_1_th_largest_scores(case):
    scores, Y = case
    descending = -np.sort(-scores, axis=1)
    s = Y.sum(axis=1)
    rows = np.arange(len(s))
    np.testing.assert_allclose(threshold_targets(scores, Y), 0.5 * (descending[rows, s - 1] + descending[rows, s]))


@given(correctly_ranked(same_set_size=True))
def test_sorted_scores_fit_eq_34_exactly_when_every_row_is_ranked_correctly_with_the_same_set_size(case):
    scores, Y = case
    threshold = LinearThreshold.fit(scores, Y, "sorted_scores")
    np.testing.assert_allclose(threshold(scores), threshold_targets(scores, Y), atol=1e-8)


def test_label_ordered_scores_cannot_put_the_threshold_between_the_top_two_scores_of_every_row():
    # One relevant label per row, on top, every label on top in turn: the targets (2.5 and 1.75)
    # are not a function of the label-ordered scores, so least squares leaves residuals -- here
    # t(x) = 2.125 for every row, above every score of the second profile.
    profiles = [(0.0, 1.0, 4.0), (1.5, 1.6, 1.9)]
    scores = np.array([p for profile in profiles for p in itertools.permutations(profile)])
    Y = (scores == scores.max(axis=1, keepdims=True)).astype(np.int8)
    targets = threshold_targets(scores, Y)
    np.testing.assert_allclose(LinearThreshold.fit(scores, Y, "sorted_scores")(scores), targets, atol=1e-12)
    by_label = LinearThreshold.fit(scores, Y, "scores")(scores)
    assert np.abs(by_label - targets).max() > 0.2
    assert np.any(by_label >= scores.max(axis=1))  # some rows would get an empty label set


@given(score_matrices(n_labels=st.integers(2, 5)), st.data())
def test_the_sorted_scores_threshold_does_not_depend_on_which_label_holds_which_score(scores, draw):
    Y = (scores > np.median(scores, axis=1, keepdims=True)).astype(np.int8)
    order = np.array(draw.draw(st.permutations(range(scores.shape[1]))))
    threshold = LinearThreshold.fit(scores, Y, "sorted_scores")
    permuted = LinearThreshold.fit(scores[:, order], Y[:, order], "sorted_scores")
    np.testing.assert_allclose(permuted(scores[:, order]), threshold(scores), atol=1e-6 * (1 + np.abs(scores).max()))


@pytest.mark.parametrize("regressors", REGRESSORS)
def test_the_threshold_is_the_least_squares_fit_of_eq_34_on_the_regressors(data, regressors):
    X, Y = data
    model = LaRankSVM(threshold=regressors).fit(X, Y)
    scores = model.decision_function(X)
    Z = np.sort(scores, axis=1) if regressors == "sorted_scores" else scores
    design = np.hstack([Z, np.ones((len(Z), 1))])
    coef, *_ = np.linalg.lstsq(design, threshold_targets(scores, Y), rcond=None)
    np.testing.assert_allclose(model.threshold_.coef, coef, atol=1e-10)
    np.testing.assert_allclose(model.decision_threshold(X), Z @ coef[:-1] + coef[-1], atol=1e-10)


@pytest.mark.parametrize("threshold_cv", [None, 3])
@pytest.mark.parametrize("regressors", REGRESSORS)
@pytest.mark.parametrize("preset", [LaRankSVM(C=0.5), CMLFS(C=0.5, mu=0.5, n_features=3)], ids=["larank", "cmlfs"])
def test_predict_is_the_scores_above_the_threshold_for_every_variant(data, preset, regressors, threshold_cv):
    X, Y = data
    model = clone(preset).set_params(threshold=regressors, threshold_cv=threshold_cv).fit(X, Y)
    scores = model.decision_function(X)
    np.testing.assert_array_equal(model.predict(X), (scores > model.decision_threshold(X)[:, None]).astype(np.int64))
    np.testing.assert_allclose(model.decision_threshold(X), model.threshold_(scores))


def test_the_cross_fitted_targets_are_eq_34_on_the_out_of_fold_scores(data):
    X, Y = data
    model = LaRankSVM(C=0.5, threshold_cv=3, random_state=7).fit(X, Y)
    folds = iterative_stratification(Y, 3, random_state=7)
    oof = np.empty(Y.shape)
    for fold in range(3):
        fit_rows, held_out = folds != fold, folds == fold
        oof[held_out] = LaRankSVM(C=0.5, random_state=7).fit(X[fit_rows], Y[fit_rows]).decision_function(X[held_out])
    np.testing.assert_allclose(model.threshold_.coef, LinearThreshold.fit(oof, Y, "sorted_scores").coef, atol=1e-10)
    in_sample = LaRankSVM(C=0.5, random_state=7).fit(X, Y)
    # Exact: cross-fitting changes the threshold only; W comes from the same solve on the same rows.
    np.testing.assert_array_equal(model.coef_, in_sample.coef_)
    assert not np.allclose(model.threshold_.coef, in_sample.threshold_.coef)


def test_the_cross_fitted_threshold_is_deterministic_under_a_fixed_random_state(data):
    X, Y = data
    # Exact: the same code on identical inputs and seed in one process.
    first, second = (CMLFS(C=0.5, n_features=3, threshold_cv=4, random_state=1).fit(X, Y) for _ in range(2))
    np.testing.assert_array_equal(first.threshold_.coef, second.threshold_.coef)
    other = CMLFS(C=0.5, n_features=3, threshold_cv=4, random_state=2).fit(X, Y)
    assert not np.array_equal(other.threshold_.coef, first.threshold_.coef)  # other folds


def test_the_threshold_parameters_survive_get_params_and_clone():
    model = LaRankSVM(threshold="scores", threshold_cv=5)
    assert model.get_params()["threshold"] == "scores" and model.get_params()["threshold_cv"] == 5
    assert clone(model).get_params() == model.get_params()
    assert CMLFS().get_params()["threshold"] == "sorted_scores" and CMLFS().threshold_cv is None


@pytest.mark.parametrize(
    "params",
    [
        {"threshold": "sorted"},
        {"threshold": "SCORES"},
        {"threshold": None},
        {"threshold": 1},
        {"threshold_cv": 1},
        {"threshold_cv": 0},
        {"threshold_cv": 2.5},
        {"threshold_cv": "5"},
        {"threshold_cv": 1000},  # more folds than rows
    ],
)
def test_bad_threshold_parameters_are_refused(data, params):
    with pytest.raises(ValueError, match="threshold|n_folds"):
        LaRankSVM(**params).fit(*data)


def test_the_threshold_function_refuses_unknown_regressors():
    with pytest.raises(ValueError, match="regressors must be one of"):
        threshold_regressors(np.zeros((2, 3)), "features")
    with pytest.raises(ValueError, match="regressors must be one of"):
        LinearThreshold("ranks", np.zeros(4))
