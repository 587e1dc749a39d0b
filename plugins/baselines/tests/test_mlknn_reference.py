"""ML-kNN against the reference definition, computed here with plain loops.

Zhang & Zhou, ML-KNN: A lazy learning approach to multi-label learning, Pattern Recognition
40(7), 2007, Fig. 1: the prior P(H_1^l) = (s + sum_i y_i(l)) / (2 s + m), the counts c_l[j]
and c'_l[j] over the training rows' neighbours (each training row left out of its own), the
likelihoods (s + c_l[j]) / (s (k + 1) + sum_p c_l[p]), and the posterior of a new row.  Its
reference code (MLKNN_train) finds a row's neighbours by a stable sort of its distances with
the diagonal set to the largest float, so equidistant rows come in training order; so does
the search here (neighbors.py), and the reference below sorts (distance, index) pairs.

Integer features make every squared distance an exact integer, in the loops below as in the
tree and the sparse search, so ties (and duplicated rows) are exact and the neighbour sets must
agree exactly.  The posteriors are then the same ratios of the same integers: they agree to a
few units of rounding (the estimator goes through logarithms; rtol 1e-12).
"""

from __future__ import annotations

import os
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core_plugins.baselines import MLkNN


def reference_neighbours(rows, x, k, leave_out=None):
    """The k rows nearest to x, equidistant rows in training order, row ``leave_out`` excluded."""
    pairs = []
    for i, row in enumerate(rows):
        if i == leave_out:
            continue
        distance = 0.0
        for a, b in zip(row, x):
            distance += (a - b) * (a - b)
        pairs.append((distance, i))
    pairs.sort()
    return [i for _, i in pairs[:k]]


def reference_mlknn(X, Y, X_new, k, s, leave_self_out=True):
    """Fig. 1 of Zhang & Zhou, step by step: (prior, c, c', posteriors of X_new) as exact fractions."""
    rows, labels = [list(map(float, r)) for r in X], [list(map(int, r)) for r in Y]
    m, L = len(labels), len(labels[0])
    s = Fraction(s)
    prior = [(s + sum(labels[i][l] for i in range(m))) / (2 * s + m) for l in range(L)]
    c = [[0] * (k + 1) for _ in range(L)]
    c_not = [[0] * (k + 1) for _ in range(L)]
    for i in range(m):
        neighbours = reference_neighbours(rows, rows[i], k, leave_out=i if leave_self_out else None)
        for l in range(L):
            delta = sum(labels[a][l] for a in neighbours)
            if labels[i][l] == 1:
                c[l][delta] += 1
            else:
                c_not[l][delta] += 1
    posteriors = []
    for x in X_new:
        neighbours = reference_neighbours(rows, list(map(float, x)), k)
        row = []
        for l in range(L):
            delta = sum(labels[a][l] for a in neighbours)
            relevant = prior[l] * (s + c[l][delta]) / (s * (k + 1) + sum(c[l]))
            irrelevant = (1 - prior[l]) * (s + c_not[l][delta]) / (s * (k + 1) + sum(c_not[l]))
            row.append(relevant / (relevant + irrelevant))
        posteriors.append(row)
    return prior, c, c_not, posteriors


def assert_matches_reference(X, Y, X_new, k, s, to_matrix=np.asarray):
    prior, c, c_not, posteriors = reference_mlknn(X, Y, X_new, k, s)
    model = MLkNN(k=k, s=s).fit(to_matrix(X), Y)
    np.testing.assert_array_equal(model.relevant_counts_, c)
    np.testing.assert_array_equal(model.irrelevant_counts_, c_not)
    np.testing.assert_allclose(model.prior_, [float(p) for p in prior], rtol=1e-15)
    expected = np.array([[float(r) for r in row] for row in posteriors])
    np.testing.assert_allclose(model.posterior(to_matrix(X_new)), expected, rtol=1e-12, atol=1e-300)
    # The MAP rule of step 18 (a tie, r = 1/2 exactly, predicts irrelevant).
    exact = np.array([[r > Fraction(1, 2) for r in row] for row in posteriors])
    np.testing.assert_array_equal(model.predict(to_matrix(X_new)), exact.astype(int))


def integer_problem(seed, n=70, d=4, L=4, levels=3, duplicates=10):
    """Features in {0, ..., levels - 1} (many exact ties), some rows duplicated, labels with both values."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(np.float64)
    X[n - duplicates :] = X[:duplicates]
    Y = (rng.random((n, L)) < 0.4).astype(np.int8)
    Y[0], Y[1] = 1, 0
    return X, Y


@pytest.mark.parametrize("to_matrix", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
@pytest.mark.parametrize(("seed", "k", "s"), [(0, 5, 1.0), (1, 8, 0.5), (2, 3, 2.0), (3, 10, 1.0)])
def test_integer_features_with_ties_and_duplicates(seed, k, s, to_matrix):
    X, Y = integer_problem(seed)
    X_new = np.random.default_rng(100 + seed).integers(0, 3, size=(25, X.shape[1])).astype(np.float64)
    assert_matches_reference(X, Y, np.vstack([X_new, X[:5]]), k, s, to_matrix)


@pytest.mark.parametrize("to_matrix", [np.asarray, sp.csr_matrix], ids=["dense", "sparse"])
def test_continuous_features(to_matrix):
    data = make_correlated_multilabel(n_samples=90, n_features=5, n_labels=4, random_state=11)
    X, Y = np.asarray(data.X), np.asarray(data.Y)
    assert_matches_reference(X[:70], Y[:70], X[70:], 7, 1.0, to_matrix)


@settings(deadline=None, max_examples=25)
@given(
    X=hnp.arrays(np.float64, st.tuples(st.integers(8, 24), st.integers(1, 3)), elements=st.integers(-2, 2).map(float)),
    data=st.data(),
)
def test_any_small_integer_problem(X, data):
    n = X.shape[0]
    Y = data.draw(hnp.arrays(np.int8, (n, 3), elements=st.integers(0, 1)))
    Y[0], Y[1] = 1, 0  # every label takes both values, as fit requires
    k = data.draw(st.integers(1, n - 1))
    s = data.draw(st.sampled_from([0.25, 1.0, 3.0]))
    assert_matches_reference(X, Y, X[: min(n, 6)] + 0.5, k, s)


def test_every_row_equal():
    # Every distance is 0: each training row's neighbours are the k earliest other rows.
    X = np.zeros((12, 2))
    Y = np.tile([[1, 0], [0, 1], [1, 1]], (4, 1)).astype(np.int8)
    assert_matches_reference(X, Y, X[:3], 4, 1.0)


def scikit_multilearn():
    try:
        import skmultilearn.adapt
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("scikit-multilearn-ng is missing, but the test extra installs it (CI=true)")
        pytest.skip("needs scikit-multilearn-ng (pip install 'multilabel-core[baselines]')")
    return skmultilearn.adapt


def test_scikit_multilearn_default_counts_each_training_row_among_its_own_neighbours():
    """The difference from scikit-multilearn(-ng)'s MLkNN, pinned down: its default is the reference
    computation with the training row left in its own neighbourhood (so a relevant row always sees
    its own label), and its posteriors then differ from the paper's; leaving the row out, its
    posteriors are ours."""
    adapt = scikit_multilearn()
    data = make_correlated_multilabel(n_samples=110, n_features=5, n_labels=4, random_state=5)
    X, Y = np.asarray(data.X), np.asarray(data.Y)
    X_fit, Y_fit, X_new = X[:80], Y[:80], X[80:]
    theirs = adapt.MLkNN(k=6, s=1.0).fit(X_fit, sp.csr_matrix(Y_fit)).predict_proba(X_new).toarray()
    *_, self_counted = reference_mlknn(X_fit, Y_fit, X_new, 6, 1.0, leave_self_out=False)
    np.testing.assert_allclose(theirs, np.array(self_counted, dtype=float), rtol=1e-12)
    ours = MLkNN(k=6).fit(X_fit, Y_fit).posterior(X_new)
    assert np.abs(ours - theirs).max() > 0.1, "the two definitions differ materially"
