"""BRkNN-a and BRkNN-b: a reference computed here with plain loops, hand-checked cases, the scores'
promises, dense = sparse, and scikit-multilearn-ng's BRkNN classifiers."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core import make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_method
from multilabel_core_plugins.baselines import BRkNN, BRkNNa, BRkNNb


def reference_brknn(X, Y, X_new, k, variant):
    """Spyromitros, Tsoumakas & Vlahavas (SETN 2008), section 3, one row and one label at a time.

    Returns, per new row, the neighbour counts and the predicted labels, with ties between equally
    confident labels broken by the documented preference (more frequent in Y first, then lower index).
    """
    rows, labels = [list(map(float, r)) for r in X], [list(map(int, r)) for r in Y]
    L = len(labels[0])
    frequency = [sum(row[l] for row in labels) for l in range(L)]
    counts_out, predicted = [], []
    for x in X_new:
        pairs = []
        for i, row in enumerate(rows):
            distance = 0.0
            for a, b in zip(row, x):
                distance += (a - b) * (a - b)
            pairs.append((distance, i))
        pairs.sort()
        neighbours = [i for _, i in pairs[:k]]
        counts = [sum(labels[a][l] for a in neighbours) for l in range(L)]
        # most confident first; equal confidence: more frequent label first, then lower index
        order = sorted(range(L), key=lambda l: (-counts[l], -frequency[l], l))
        chosen = {l for l in range(L) if Fraction(counts[l], k) >= Fraction(1, 2)}
        if variant == "a" and not chosen:
            chosen = {order[0]}
        if variant == "b":
            mean_size = Fraction(sum(sum(labels[a]) for a in neighbours), k)
            chosen = set(order[: math.floor(mean_size + Fraction(1, 2))])
        counts_out.append(counts)
        predicted.append([int(l in chosen) for l in range(L)])
    return np.array(counts_out), np.array(predicted)


ESTIMATORS = {"plain": BRkNN, "a": BRkNNa, "b": BRkNNb}


def assert_matches_reference(X, Y, X_new, k, variant, to_matrix=np.asarray):
    counts, expected = reference_brknn(X, Y, X_new, k, variant)
    model = ESTIMATORS[variant](k=k).fit(to_matrix(X), Y)
    np.testing.assert_array_equal(model.confidences(to_matrix(X_new)), counts / k)
    np.testing.assert_array_equal(model.predict(to_matrix(X_new)), expected)
    scores = model.decision_function(to_matrix(X_new))
    # Within a row the scores order the labels by confidence, ties by the preference.
    frequency = np.asarray(Y).sum(axis=0)
    for row_scores, row_counts in zip(scores, counts):
        order = sorted(range(len(row_counts)), key=lambda l: (-row_counts[l], -frequency[l], l))
        assert list(np.argsort(-row_scores, kind="stable")) == order
        assert len(set(row_scores.tolist())) == len(row_scores), "distinct scores: no tie left for predict"


def integer_problem(seed, n=60, d=3, L=5, duplicates=8):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)
    X[n - duplicates :] = X[:duplicates]
    Y = (rng.random((n, L)) < rng.uniform(0.1, 0.6, size=L)).astype(np.int8)
    Y[0], Y[1] = 1, 0
    return X, Y


@pytest.mark.parametrize("variant", ["plain", "a", "b"])
@pytest.mark.parametrize("to_matrix", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
@pytest.mark.parametrize(("seed", "k"), [(0, 4), (1, 5), (2, 10), (3, 1)])
def test_matches_the_reference_with_ties(seed, k, variant, to_matrix):
    X, Y = integer_problem(seed)
    X_new = np.random.default_rng(50 + seed).integers(0, 3, size=(30, X.shape[1])).astype(np.float64)
    assert_matches_reference(X, Y, X_new, k, variant, to_matrix)


@pytest.mark.parametrize("variant", ["plain", "a", "b"])
def test_matches_the_reference_on_continuous_features(variant):
    data = make_correlated_multilabel(n_samples=100, n_features=6, n_labels=5, random_state=4)
    X, Y = np.asarray(data.X), np.asarray(data.Y)
    assert_matches_reference(X[:70], Y[:70], X[70:], 7, variant)


@settings(deadline=None, max_examples=30)
@given(
    X=hnp.arrays(np.float64, st.tuples(st.integers(4, 20), st.integers(1, 3)), elements=st.integers(-2, 2).map(float)),
    variant=st.sampled_from(["plain", "a", "b"]),
    data=st.data(),
)
def test_any_small_integer_problem(X, variant, data):
    n = X.shape[0]
    L = data.draw(st.integers(1, 5))
    Y = data.draw(hnp.arrays(np.int8, (n, L), elements=st.integers(0, 1)))
    Y[0], Y[1] = 1, 0
    k = data.draw(st.integers(1, n))
    assert_matches_reference(X, Y, np.vstack([X[:3], X[:3] + 0.5]), k, variant)


# Five points on a line, gaps 1, 2, 4, 8; labels (a, b, c) with a the most frequent.
X_LINE = np.array([[0.0], [1.0], [3.0], [7.0], [15.0]])
Y_LINE = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 0], [1, 0, 0]], dtype=np.int8)


def test_hand_computed_cases():
    # x = 2: neighbours 1 and 3 -> counts (2, 1, 1) of k = 2; x = 10: neighbours 7 and 15 -> (1, 1, 0).
    X_new = np.array([[2.0], [10.0]])
    plain = BRkNN(k=2).fit(X_LINE, Y_LINE)
    np.testing.assert_array_equal(plain.confidences(X_new), [[1.0, 0.5, 0.5], [0.5, 0.5, 0.0]])
    # Plain and -a: every label at least half of the neighbours have (an exact half included).
    np.testing.assert_array_equal(plain.predict(X_new), [[1, 1, 1], [1, 1, 0]])
    np.testing.assert_array_equal(BRkNNa(k=2).fit(X_LINE, Y_LINE).predict(X_new), [[1, 1, 1], [1, 1, 0]])
    # -b: x = 2, neighbour set sizes 2 and 2 -> s = 2: label a, then b or c at 1/2 each: b and c are
    # equally frequent (2 rows each), so the lower index, b.  x = 10: sizes 1 and 1 -> s = 1: a or b
    # at 1/2 each; a is more frequent (4 rows against 2).
    np.testing.assert_array_equal(BRkNNb(k=2).fit(X_LINE, Y_LINE).predict(X_new), [[1, 1, 0], [1, 0, 0]])


def test_brknn_a_outputs_the_most_confident_label_when_none_reaches_half():
    # k = 3 at x = 100: neighbours 15, 7 and 3, labelled a, c and b: every confidence is 1/3.
    Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=np.int8)
    x = np.array([[100.0]])
    plain, a = BRkNN(k=3).fit(X_LINE, Y), BRkNNa(k=3).fit(X_LINE, Y)
    np.testing.assert_allclose(plain.confidences(x), [[1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_array_equal(plain.predict(x), [[0, 0, 0]])
    # Equal confidence: label a is the most frequent (3 rows), so it is the one.
    np.testing.assert_array_equal(a.predict(x), [[1, 0, 0]])
    scores = a.decision_function(x)[0]
    assert scores[0] > 0 > scores[1] > scores[2]


def test_brknn_b_predicts_the_rounded_mean_size_and_rounds_halves_up():
    # k = 2 at x = 2: neighbours 1 (labels a, b) and 3 (label a) -> mean size 3/2 -> s = 2 (half up,
    # and half to even alike).
    Y = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]], dtype=np.int8)
    b = BRkNNb(k=2).fit(X_LINE, Y)
    np.testing.assert_array_equal(b.predict([[2.0]]), [[1, 1, 0]])
    # x = 12: neighbours 15 (3 labels) and 7 (2 labels) -> 5/2 -> s = 3 (half to even, numpy's round, gives 2).
    np.testing.assert_array_equal(b.predict([[12.0]]), [[1, 1, 1]])


def test_brknn_b_predicts_nothing_when_every_neighbour_has_an_empty_label_set():
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    Y = np.array([[0, 0], [0, 0], [1, 1], [1, 0]], dtype=np.int8)
    b = BRkNNb(k=2).fit(X, Y)
    np.testing.assert_array_equal(b.predict([[0.5], [10.5]]), [[0, 0], [1, 1]])
    assert np.all(b.decision_function([[0.5]]) < 0)


@pytest.mark.parametrize("variant", ["a", "b"])
def test_scores_are_confidence_minus_a_cut(variant):
    data = make_correlated_multilabel(n_samples=120, n_features=5, n_labels=6, random_state=2)
    model = ESTIMATORS[variant](k=9).fit(data.X[:90], data.Y[:90])
    X_new = data.X[90:]
    scores, confidence = model.decision_function(X_new), model.confidences(X_new)
    # t = c + (tie-breaker below 1/(2k)) - cut: differences within a row are those of c up to 1/(2k).
    spread = (scores - confidence) - (scores - confidence).mean(axis=1, keepdims=True)
    assert np.abs(spread).max() < 1 / (2 * 9)
    if variant == "a":
        passing = (confidence >= 0.5).any(axis=1)
        # Rows with a passing label share one cut, k/2 - 1/(4L), in confidence units 1/2 - 1/(4 L k).
        cut = confidence[passing] - scores[passing]
        assert np.all(np.abs(cut - (0.5 - 1 / (4 * 6 * 9))) < 1 / (2 * 9))
        assert np.all(model.predict(X_new).sum(axis=1) >= 1)


def test_dense_and_sparse_give_the_same_scores():
    data = make_correlated_multilabel(n_samples=120, n_features=10, n_labels=4, random_state=3)
    X = np.where(np.abs(data.X) > 0.6, np.round(data.X), 0.0)  # integer entries: exact distances both ways
    for cls in (BRkNNa, BRkNNb):
        dense = cls(k=7).fit(X, data.Y).decision_function(X[:40])
        sparse = cls(k=7).fit(sp.csr_matrix(X), data.Y).decision_function(sp.csc_matrix(X[:40]))
        np.testing.assert_array_equal(sparse, dense)


@pytest.mark.parametrize("name", ["brknn_a", "brknn_b"])
def test_conformance(name):
    check_method(name)


@pytest.mark.parametrize(("params", "message"), [({"k": 0}, "k must be >= 1"), ({"k": 2.5}, "k must be a Integral"),
                                                 ({"n_jobs": 0}, "n_jobs must be a nonzero")])  # fmt: skip
def test_bad_parameters_are_refused_in_fit(params, message):
    with pytest.raises(ValueError, match=message):
        BRkNNa(**params).fit(X_LINE, Y_LINE)


def test_a_small_training_set_makes_every_row_a_neighbour():
    with pytest.warns(UserWarning, match="k=7 neighbours need 7 training rows, got 5: .* \\(k = 5\\)"):
        small = BRkNNb(k=7).fit(X_LINE, Y_LINE)
    assert small.n_neighbors_ == 5
    every_row = BRkNNb(k=5).fit(X_LINE, Y_LINE)
    np.testing.assert_array_equal(small.decision_function(X_LINE), every_row.decision_function(X_LINE))


def test_registered_with_their_rule():
    assert type(make_method("brknn_a")) is BRkNNa and type(make_method("brknn_b")) is BRkNNb


def test_fuzz_matrix_of_brknn_a_is_clean():
    from multilabel_core.testing.fuzz import assert_fuzz_clean

    assert_fuzz_clean("brknn_a", n_workers=2)


def scikit_multilearn():
    try:
        import skmultilearn.adapt
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("scikit-multilearn-ng is missing, but the test extra installs it (CI=true)")
        pytest.skip("needs scikit-multilearn-ng (pip install 'multilabel-core[baselines]')")
    return skmultilearn.adapt


def test_scikit_multilearn_brknna_is_plain_brknn_with_halves_irrelevant():
    """scikit-multilearn(-ng)'s BRkNNaClassifier rounds the confidences (numpy's rint: an exact half
    goes to 0) and has no fallback for an empty set: it is plain BRkNN with a strict majority.  With
    an odd k (no exact half) it predicts what our plain BRkNN does, and brknn_a differs from it
    exactly on its empty rows."""
    adapt = scikit_multilearn()
    data = make_correlated_multilabel(n_samples=200, n_features=6, n_labels=5, random_state=8)
    X, Y = np.asarray(data.X), np.asarray(data.Y)
    theirs = adapt.BRkNNaClassifier(k=7).fit(X[:150], sp.csr_matrix(Y[:150])).predict(X[150:]).toarray()
    np.testing.assert_array_equal(BRkNN(k=7).fit(X[:150], Y[:150]).predict(X[150:]), theirs)
    ours_a = BRkNNa(k=7).fit(X[:150], Y[:150]).predict(X[150:])
    empty = theirs.sum(axis=1) == 0
    assert empty.any(), "a row with no label at a neighbour majority, where the two differ"
    np.testing.assert_array_equal(ours_a[~empty], theirs[~empty])
    assert np.all(ours_a[empty].sum(axis=1) == 1)
