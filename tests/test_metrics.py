"""Metrics: agreement with scikit-learn where it has the measure, hand-worked cases where it does not."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from multilabel_core import metrics as mlm


# --------------------------------------------------------------------------- strategies
@st.composite
def problems(draw, min_labels=2, relevant_in_every_row=False, ties=None):
    """(Y_true, scores, Y_pred); scores from a small integer set (many ties) or from floats."""
    n = draw(st.integers(1, 25))
    L = draw(st.integers(min_labels, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.floats(0.05, 0.95))
    Y = (rng.random((n, L)) < density).astype(np.int8)
    if relevant_in_every_row:
        empty = ~Y.any(axis=1)
        Y[empty, rng.integers(L, size=empty.sum())] = 1
    if ties if ties is not None else draw(st.booleans()):
        scores = rng.integers(-2, 3, size=(n, L)).astype(float)
    else:
        scores = rng.normal(size=(n, L))
    Y_pred = (rng.random((n, L)) < density).astype(np.int8)
    return Y, scores, Y_pred


def with_a_relevant_label(Y, scores):
    rows = Y.any(axis=1)
    return Y[rows], scores[rows]


# ------------------------------------------------------------ against scikit-learn
@given(problems())
def test_hamming_loss_and_subset_accuracy_match_sklearn(problem):
    Y, _, Y_pred = problem
    assert mlm.hamming_loss(Y, Y_pred) == pytest.approx(skm.hamming_loss(Y, Y_pred))
    assert mlm.subset_accuracy(Y, Y_pred) == pytest.approx(skm.accuracy_score(Y, Y_pred))


@given(problems())
def test_f1_matches_sklearn_with_zero_division_zero(problem):
    Y, _, Y_pred = problem
    for average, ours in (("micro", mlm.micro_f1), ("macro", mlm.macro_f1)):
        expected = skm.f1_score(Y, Y_pred, average=average, zero_division=0)
        assert ours(Y, Y_pred) == pytest.approx(expected, abs=1e-12)


@given(problems(relevant_in_every_row=True))
def test_ranking_measures_match_sklearn_when_every_row_has_a_relevant_label(problem):
    Y, scores, _ = problem
    assert mlm.coverage(Y, scores) == pytest.approx(skm.coverage_error(Y, scores) - 1)
    assert mlm.ranking_loss(Y, scores) == pytest.approx(skm.label_ranking_loss(Y, scores), abs=1e-12)
    assert mlm.average_precision(Y, scores) == pytest.approx(
        skm.label_ranking_average_precision_score(Y, scores)
    )


@given(problems())
def test_rows_without_a_relevant_label_are_left_out(problem):
    """Where scikit-learn scores such rows (LRAP 1, ranking loss 0, coverage 0), we skip them."""
    Y, scores, _ = problem
    kept_Y, kept_scores = with_a_relevant_label(Y, scores)
    if kept_Y.shape[0] == 0:
        for measure in (mlm.coverage, mlm.ranking_loss, mlm.average_precision, mlm.one_error):
            assert math.isnan(measure(Y, scores))
        return
    assert mlm.coverage(Y, scores) == pytest.approx(skm.coverage_error(kept_Y, kept_scores) - 1)
    assert mlm.ranking_loss(Y, scores) == pytest.approx(skm.label_ranking_loss(kept_Y, kept_scores), abs=1e-12)
    assert mlm.average_precision(Y, scores) == pytest.approx(
        skm.label_ranking_average_precision_score(kept_Y, kept_scores)
    )
    assert mlm.one_error(Y, scores) == pytest.approx(mlm.one_error(kept_Y, kept_scores))


@given(problems())
def test_coverage_normalized_divides_by_the_number_of_labels(problem):
    Y, scores, _ = problem
    Y[:, 0] = 1
    assert mlm.coverage(Y, scores, normalize=True) == pytest.approx(mlm.coverage(Y, scores) / Y.shape[1])
    assert mlm.METRICS["coverage_normalized"].function(Y, scores) == mlm.coverage(Y, scores, normalize=True)


@given(problems())
def test_macro_auc_matches_sklearn_on_columns_with_both_classes(problem):
    Y, scores, _ = problem
    both = Y.any(axis=0) & ~Y.all(axis=0)
    if not both.any():
        assert math.isnan(mlm.macro_auc(Y, scores))
        return
    expected = skm.roc_auc_score(Y[:, both], scores[:, both], average="macro")
    assert mlm.macro_auc(Y, scores) == pytest.approx(expected)


# ------------------------------------------------------------------ hand-worked cases
def test_one_error_without_ties():
    Y = [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    scores = [[0.9, 0.1, 0.5], [0.9, 0.1, 0.5], [0.2, 0.3, 0.1]]
    # top labels 0, 0, 1: relevant, irrelevant, relevant
    assert mlm.one_error(Y, scores) == pytest.approx(1 / 3)


def test_one_error_with_ties_is_the_expected_error_of_a_random_tie_break():
    Y = [[1, 0, 0, 0], [0, 1, 1, 0]]
    scores = [[2.0, 2.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]]
    # row 0: top-tied {0, 1, 2}, two irrelevant -> 2/3; row 1: all tied, two of four irrelevant -> 1/2
    assert mlm.one_error(Y, scores) == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_one_error_leaves_out_rows_without_a_relevant_label():
    Y = [[0, 0, 0], [1, 0, 0]]
    scores = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert mlm.one_error(Y, scores) == 1.0
    assert math.isnan(mlm.one_error([[0, 0, 0]], [[1.0, 0.0, 0.0]]))


def test_pessimistic_ranks_on_a_hand_worked_row():
    Y = [[0, 1, 0, 1]]
    scores = [[3.0, 2.0, 2.0, 1.0]]
    # ranks: label 1 ties with label 2 -> rank 3; label 3 -> rank 4
    assert mlm.coverage(Y, scores) == 3
    # pairs (1,0) (1,2) (3,0) (3,2) all misordered (the tie counts as an error)
    assert mlm.ranking_loss(Y, scores) == 1.0
    # label 1: 1 relevant within rank 3; label 3: 2 relevant within rank 4
    assert mlm.average_precision(Y, scores) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert mlm.one_error(Y, scores) == 1.0


def test_a_row_with_every_label_relevant():
    Y = np.ones((1, 4))
    scores = [[0.3, -1.0, 2.0, 0.0]]
    assert mlm.ranking_loss(Y, scores) == 0.0
    assert mlm.coverage(Y, scores) == 3
    assert mlm.average_precision(Y, scores) == 1.0
    assert mlm.one_error(Y, scores) == 0.0


def test_all_tied_scores_give_the_worst_ranking():
    Y = [[1, 1, 0, 0, 0]]
    scores = np.zeros((1, 5))
    assert mlm.coverage(Y, scores) == 4
    assert mlm.ranking_loss(Y, scores) == 1.0
    assert mlm.average_precision(Y, scores) == pytest.approx(2 / 5)


def test_macro_auc_skips_single_class_columns_and_counts_ties_half():
    Y = [[1, 1, 0], [0, 1, 0], [1, 1, 0]]
    scores = [[0.5, 0.0, 1.0], [0.5, 3.0, 2.0], [0.9, 1.0, 0.0]]
    # only label 0 has both classes: positives 0.5, 0.9 vs negative 0.5 -> (1/2 + 1) / 2
    assert mlm.macro_auc(Y, scores) == pytest.approx(0.75)
    assert math.isnan(mlm.macro_auc([[1, 0], [1, 0]], [[0.0, 1.0], [1.0, 0.0]]))


def test_f1_zero_over_zero_counts_as_zero():
    Y_true = np.array([[1, 0], [0, 0]])
    Y_pred = np.array([[1, 0], [0, 0]])
    # label 1 is never relevant and never predicted: 0/0 -> 0
    assert mlm.macro_f1(Y_true, Y_pred) == 0.5
    assert mlm.micro_f1(Y_true, Y_pred) == 1.0
    assert mlm.micro_f1(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0


# ---------------------------------------------------------------------------- evaluate
def test_evaluate_defaults_to_every_metric_and_to_positive_scores_as_predictions():
    rng = np.random.default_rng(0)
    Y = (rng.random((30, 5)) < 0.4).astype(int)
    scores = rng.normal(size=(30, 5))
    result = mlm.evaluate(Y, scores)
    assert list(result) == list(mlm.METRICS)
    assert result["hamming_loss"] == mlm.hamming_loss(Y, scores > 0)
    assert result["coverage"] == mlm.coverage(Y, scores)
    assert mlm.evaluate(Y, scores, Y_pred=np.ones_like(Y), metrics=["micro_f1"]) == {
        "micro_f1": mlm.micro_f1(Y, np.ones_like(Y))
    }


def test_directions_in_the_table_rank_a_perfect_model_above_a_random_one():
    rng = np.random.default_rng(1)
    Y = (rng.random((40, 6)) < 0.4).astype(int)
    Y[:, 0], Y[0, 0] = 1, 0  # every row relevant somewhere; every column with both classes
    perfect = mlm.evaluate(Y, 2.0 * Y - 1)
    random = mlm.evaluate(Y, rng.normal(size=Y.shape))
    for name, metric in mlm.METRICS.items():
        assert metric.needs in ("scores", "predictions")
        better = perfect[name] > random[name] if metric.greater_is_better else perfect[name] < random[name]
        assert better, name


def test_sparse_inputs_give_the_same_values():
    rng = np.random.default_rng(2)
    Y = (rng.random((20, 4)) < 0.5).astype(int)
    Y_pred = (rng.random((20, 4)) < 0.5).astype(int)
    scores = rng.normal(size=(20, 4))
    dense = mlm.evaluate(Y, scores, Y_pred)
    sparse = mlm.evaluate(sp.csr_matrix(Y), scores, sp.csc_matrix(Y_pred))
    assert sparse == pytest.approx(dense, nan_ok=True)


# -------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mlm.hamming_loss(np.ones((3, 2)), np.ones((3, 3))), "shape"),
        (lambda: mlm.coverage(np.ones((3, 2)), np.ones((2, 2))), "shape"),
        (lambda: mlm.micro_f1([[0, 2]], [[0, 1]]), "binary"),
        (lambda: mlm.ranking_loss([[0, 1]], [[np.nan, 1.0]]), "NaN"),
        (lambda: mlm.one_error([1, 0], [[0.0, 1.0]]), "2-D"),
        (lambda: mlm.macro_auc([[0, 1]], [["a", "b"]]), "numeric"),
        (lambda: mlm.subset_accuracy(np.zeros((0, 2)), np.zeros((0, 2))), "no rows"),
        (lambda: mlm.evaluate([[0, 1]], [[0.0, 1.0]], metrics=["accuracy"]), "unknown metric"),
    ],
)
def test_bad_inputs_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
