"""ML-kNN: hand-computed posteriors, the neighbour search, dense = sparse, and scikit-multilearn-ng's MLkNN."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core_plugins.baselines import MLkNN
from multilabel_core_plugins.baselines.neighbors import nearest_neighbors

# Five points on a line, gaps 1, 2, 4, 8: no two distances from one point are equal.
X_LINE = np.array([[0.0], [1.0], [3.0], [7.0], [15.0]])
Y_LINE = np.array([[1, 0], [1, 1], [0, 1], [0, 1], [1, 0]])


def test_posteriors_match_a_hand_computation():
    model = MLkNN(k=2, s=1.0).fit(X_LINE, Y_LINE)
    # N(x_i), self left out: 0 -> {1, 3}, 1 -> {0, 3}, 3 -> {1, 0}, 7 -> {3, 1}, 15 -> {7, 3} (by position)
    # so the counts C_i(l) of label 0 are 1, 1, 2, 1, 0 and of label 1 are 2, 1, 1, 2, 2.
    # Label 0 is relevant for rows 0, 1, 4 (counts 1, 1, 0) and irrelevant for rows 2, 3 (counts 2, 1);
    # label 1 is relevant for rows 1, 2, 3 (counts 1, 1, 2) and irrelevant for rows 0, 4 (counts 2, 2).
    np.testing.assert_array_equal(model.relevant_counts_, [[1, 2, 0], [0, 2, 1]])
    np.testing.assert_array_equal(model.irrelevant_counts_, [[0, 1, 1], [0, 0, 2]])
    # P(H_1) = (s + 3) / (2 s + 5) for both labels
    np.testing.assert_allclose(model.prior_, [4 / 7, 4 / 7])
    # P(E_j | H_1) = (1 + c[j]) / (3 + 3), P(E_j | H_0) = (1 + c'[j]) / (3 + 2)
    np.testing.assert_allclose(model.likelihood_relevant_, [[2 / 6, 3 / 6, 1 / 6], [1 / 6, 3 / 6, 2 / 6]])
    np.testing.assert_allclose(model.likelihood_irrelevant_, [[1 / 5, 2 / 5, 2 / 5], [1 / 5, 1 / 5, 3 / 5]])

    # x = 2.2: neighbours 3 and 1, counts (1, 2); x = 12: neighbours 15 and 7, counts (1, 1).
    # label 0, count 1: (4/7)(3/6) = 10/35 against (3/7)(2/5) = 6/35 -> r = 10/16
    # label 1, count 2: (4/7)(2/6) = 20/105 against (3/7)(3/5) = 27/105 -> r = 20/47
    # label 1, count 1: (4/7)(3/6) = 10/35 against (3/7)(1/5) = 3/35 -> r = 10/13
    X_new = np.array([[2.2], [12.0]])
    expected = np.array([[10 / 16, 20 / 47], [10 / 16, 10 / 13]])
    np.testing.assert_allclose(model.posterior(X_new), expected)
    np.testing.assert_allclose(model.decision_function(X_new), np.log(expected / (1 - expected)))
    np.testing.assert_array_equal(model.predict(X_new), [[1, 0], [1, 1]])


def test_an_exact_tie_is_predicted_irrelevant():
    # Four pairs of mutual nearest neighbours labelled (1, 1), (0, 0), (1, 0), (0, 1): relevant and
    # irrelevant rows have the same counts c = c' = [2, 2] and the prior is 1/2, so every posterior is 1/2.
    X = np.array([[0.0], [1.0], [10.0], [11.0], [20.0], [21.0], [30.0], [31.0]])
    Y = np.array([[1], [1], [0], [0], [1], [0], [0], [1]])
    model = MLkNN(k=1).fit(X, Y)
    np.testing.assert_array_equal(model.relevant_counts_, model.irrelevant_counts_)
    assert np.all(model.posterior(X) == 0.5) and np.all(model.decision_function(X) == 0.0)
    np.testing.assert_array_equal(model.predict(X), 0)


@pytest.mark.parametrize("exclude_self", [False, True])
def test_neighbour_search_is_exact_dense_and_sparse(exclude_self):
    rng = np.random.default_rng(0)
    X_fit = rng.standard_normal((60, 8))  # no two distances equal
    X_query = X_fit if exclude_self else rng.standard_normal((25, 8))
    distances = ((X_query[:, None, :] - X_fit[None, :, :]) ** 2).sum(axis=2)
    if exclude_self:
        np.fill_diagonal(distances, np.inf)
    expected = np.sort(np.argsort(distances, axis=1)[:, :4], axis=1)
    for fit, query in ((X_fit, X_query), (sp.csr_matrix(X_fit), sp.csr_matrix(X_query))):
        found = nearest_neighbors(fit, query, 4, exclude_self=exclude_self)
        np.testing.assert_array_equal(np.sort(found, axis=1), expected)


def test_blocked_search_gives_the_same_neighbours_in_small_blocks(monkeypatch):
    from multilabel_core_plugins.baselines import neighbors

    X = sp.random(40, 6, density=0.5, random_state=1, format="csr")
    whole = np.sort(nearest_neighbors(X, X, 3, exclude_self=True), axis=1)
    monkeypatch.setattr(neighbors, "BLOCK_ENTRIES", 7 * X.shape[0])
    # Exact: scipy's sparse product builds each row from that row alone, whatever the block.
    np.testing.assert_array_equal(np.sort(nearest_neighbors(X, X, 3, exclude_self=True), axis=1), whole)


def test_duplicate_rows_still_leave_self_out():
    X = np.zeros((4, 2))  # every row at distance 0 from every other
    found = nearest_neighbors(X, X, 3, exclude_self=True)
    for i, row in enumerate(found):
        assert sorted(row) == sorted(set(range(4)) - {i})


def test_dense_and_sparse_give_the_same_model():
    data = make_correlated_multilabel(n_samples=120, n_features=10, n_labels=4, random_state=3)
    X = np.where(np.abs(data.X) > 0.6, data.X, 0.0)
    dense = MLkNN(k=7).fit(X, data.Y)
    sparse = MLkNN(k=7).fit(sp.csr_matrix(X), data.Y)
    np.testing.assert_array_equal(dense.relevant_counts_, sparse.relevant_counts_)
    np.testing.assert_array_equal(dense.irrelevant_counts_, sparse.irrelevant_counts_)
    np.testing.assert_allclose(dense.decision_function(X[:30]), sparse.decision_function(sp.csc_matrix(X[:30])))


@pytest.mark.parametrize("to_sparse", [sp.csr_matrix, sp.csc_matrix])
def test_a_model_fitted_on_dense_rows_predicts_on_sparse_ones(to_sparse, monkeypatch):
    from multilabel_core_plugins.baselines import neighbors

    data = make_correlated_multilabel(n_samples=120, n_features=10, n_labels=4, random_state=3)
    X = np.where(np.abs(data.X) > 0.6, data.X, 0.0)
    model = MLkNN(k=7).fit(X, data.Y)
    # The same rows, so the same tree queries: the same scores exactly.
    expected = model.decision_function(X[:30])
    np.testing.assert_array_equal(model.decision_function(to_sparse(X[:30])), expected)
    np.testing.assert_array_equal(model.predict(to_sparse(X[:30])), model.predict(X[:30]))
    monkeypatch.setattr(neighbors, "BLOCK_ENTRIES", 3 * X.shape[0])  # blocks of 3 query rows
    np.testing.assert_array_equal(model.decision_function(to_sparse(X[:30])), expected)
    np.testing.assert_array_equal(model.decision_function(X[:30]), expected)
    blocked = MLkNN(k=7).fit(X, data.Y)  # the training rows' own neighbours, in blocks too
    np.testing.assert_array_equal(blocked.relevant_counts_, model.relevant_counts_)
    np.testing.assert_array_equal(blocked.irrelevant_counts_, model.irrelevant_counts_)


@pytest.mark.parametrize(
    ("params", "message"),
    [({"k": 0}, "k must be >= 1"), ({"k": 2.5}, "k must be a Integral"), ({"s": 0.0}, "s must be > 0"),
     ({"n_jobs": 0}, "n_jobs must be a nonzero")],
)  # fmt: skip
def test_bad_parameters_are_refused_in_fit(params, message):
    with pytest.raises(ValueError, match=message):
        MLkNN(**params).fit(X_LINE, Y_LINE)


def test_a_small_training_set_makes_every_other_row_a_neighbour():
    with pytest.warns(UserWarning, match="k=5 neighbours need 6 training rows, got 5: .* \\(k = 4\\)"):
        small = MLkNN(k=5).fit(X_LINE, Y_LINE)
    assert small.n_neighbors_ == 4 and small.relevant_counts_.shape == (2, 5)
    np.testing.assert_allclose(small.posterior(X_LINE), MLkNN(k=4).fit(X_LINE, Y_LINE).posterior(X_LINE))
    with pytest.raises(ValueError, match="5 neighbours besides the row itself need more than 5 training rows"):
        nearest_neighbors(X_LINE, X_LINE, 5, exclude_self=True)


def scikit_multilearn():
    """skmultilearn.adapt, or a skip outside CI (the test extra installs scikit-multilearn-ng: in CI it must run)."""
    try:
        import skmultilearn.adapt
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("scikit-multilearn-ng is missing, but the test extra installs it (CI=true)")
        pytest.skip("needs scikit-multilearn-ng (pip install 'multilabel-core[baselines]')")
    return skmultilearn.adapt


def test_same_predictions_as_scikit_multilearn_ng():
    adapt = scikit_multilearn()
    data = make_correlated_multilabel(n_samples=160, n_features=6, n_labels=5, random_state=7)
    train, test = slice(0, 120), slice(120, None)
    ours = MLkNN(k=8).fit(data.X[train], data.Y[train])
    # Theirs counts a training row among its own neighbours unless the first one is ignored,
    # and then ignores the first neighbour of new rows too: fit ignoring it, predict without.
    theirs = adapt.MLkNN(k=8, s=1.0, ignore_first_neighbours=1).fit(data.X[train], data.Y[train])
    theirs.ignore_first_neighbours = 0
    np.testing.assert_allclose(ours.posterior(data.X[test]), theirs.predict_proba(data.X[test]).toarray())
    scores = ours.decision_function(data.X[test])
    assert np.abs(scores).min() > 1e-9, "no tie, where the two MAP rules differ"
    np.testing.assert_array_equal(ours.predict(data.X[test]), theirs.predict(data.X[test]).toarray())


@pytest.mark.parametrize("scale", [1e200, 1e300, 1e-300])
def test_mlknn_neighbours_do_not_depend_on_a_common_scale(scale):
    """Squared distances of rows scaled 1e200 overflow and of 1e-300 underflow; the neighbours
    (and so the scores) of rows under one positive scale are those of the unscaled rows."""
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=0)
    reference = MLkNN().fit(data.X, data.Y).decision_function(data.X)
    scaled = MLkNN().fit(data.X * scale, data.Y).decision_function(data.X * scale)
    np.testing.assert_array_equal(scaled, reference)


@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("kind", ["gaussian", "binary", "duplicated"])
def test_exhaustive_dense_search_gives_the_trees_neighbours(kind, exclude_self, monkeypatch):
    # The matrix-product search only selects candidates; their directly computed distances, stably
    # sorted, decide: the tree's rule, ties (binary rows, duplicates) included.
    from multilabel_core_plugins.baselines import neighbors

    rng = np.random.default_rng(7)
    if kind == "binary":
        X_fit = (rng.random((300, 30)) < 0.1).astype(float)
    else:
        X_fit = rng.standard_normal((300, 30))
    if kind == "duplicated":
        X_fit[50:80] = X_fit[0]  # thirty equidistant copies: the k-th distance is shared
    X_query = X_fit if exclude_self else np.vstack([X_fit[:40], rng.standard_normal((40, 30))])
    monkeypatch.setattr(neighbors, "TREE_MAX_FEATURES", 10**6)
    tree = nearest_neighbors(X_fit, X_query, 10, exclude_self=exclude_self)
    monkeypatch.setattr(neighbors, "TREE_MAX_FEATURES", 0)
    monkeypatch.setattr(neighbors, "QUERY_BLOCK_ROWS", 7)
    dense = nearest_neighbors(X_fit, X_query, 10, exclude_self=exclude_self)
    np.testing.assert_array_equal(np.sort(dense, axis=1), np.sort(tree, axis=1))
