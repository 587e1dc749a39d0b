"""Label powerset, RAkEL and ECC: scores that are the members' votes, the subsets, the samples, any classifier."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.baselines import EnsembleClassifierChains, LabelPowerset, RAkEL
from multilabel_core_plugins.baselines.ensembles import bootstrap_rows, label_subsets, vote_scores

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_method

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=160, n_features=6, n_labels=5, random_state=1)
    return np.asarray(dataset.X), np.asarray(dataset.Y)


@settings(max_examples=50, deadline=None)
@given(members=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_the_score_is_positive_exactly_for_a_majority_and_orders_equal_votes_by_probability(members, seed):
    rng = np.random.default_rng(seed)
    votes = rng.integers(0, 2, size=(40, members)).sum(axis=1, keepdims=True).astype(float)
    probabilities = rng.random((40, members)).sum(axis=1, keepdims=True)
    scores = vote_scores(votes, probabilities, [members])
    share = votes / members
    majority = (share > 0.5) | ((share == 0.5) & (probabilities / members > 0.5))
    np.testing.assert_array_equal(scores > 0, majority)
    for v in np.unique(votes):
        same = votes[:, 0] == v
        order = np.argsort(probabilities[same, 0])
        assert np.all(np.diff(scores[same, 0][order]) >= 0)


def test_label_powerset_predicts_the_most_probable_label_set(data):
    X, Y = data
    model = LabelPowerset(random_state=0).fit(X, Y)
    sets, classes = np.unique(Y, axis=0, return_inverse=True)
    reference = LogisticRegression(max_iter=1000, random_state=0).fit(X, classes.ravel())
    np.testing.assert_array_equal(model.predict(X), sets[reference.predict(X)])
    assert model.n_classes_ == len(sets)
    # the scores' order within the predicted set and outside it is the marginal probability's
    marginal = reference.predict_proba(X) @ sets[reference.classes_]
    scores = model.decision_function(X)
    for i in range(5):
        inside = model.predict(X)[i] == 1
        for group in (inside, ~inside):
            np.testing.assert_array_equal(np.argsort(scores[i, group]), np.argsort(marginal[i, group]))


def test_probability_scores_are_the_marginals(data):
    X, Y = data
    model = LabelPowerset(scores="probability", random_state=0).fit(X, Y)
    sets, classes = np.unique(Y, axis=0, return_inverse=True)
    reference = LogisticRegression(max_iter=1000, random_state=0).fit(X, classes.ravel())
    marginal = reference.predict_proba(X) @ sets[reference.classes_]
    np.testing.assert_allclose(model.decision_function(X), marginal - 0.5, rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n_labels=st.integers(1, 12), k=st.integers(1, 5), extra=st.integers(0, 30), seed=st.integers(0, 1000))
def test_rakel_subsets_partition_or_cover_the_labels(n_labels, k, extra, seed):
    k = min(k, n_labels)
    disjoint = label_subsets(n_labels, k, False, None, np.random.default_rng(seed))
    assert sorted(np.concatenate(disjoint)) == list(range(n_labels))
    assert all(len(s) == k for s in disjoint[:-1]) and 1 <= len(disjoint[-1]) <= k
    overlapping = label_subsets(n_labels, k, True, extra, np.random.default_rng(seed))
    assert set(np.concatenate(overlapping)) == set(range(n_labels)), "every label has a vote"
    assert len({tuple(s) for s in overlapping}) == len(overlapping), "distinct subsets"
    assert len(overlapping) >= min(extra, len(disjoint))


def test_rakel_d_with_k_at_least_l_is_one_label_powerset(data):
    X, Y = data
    rakel = RAkEL(labelset_size=Y.shape[1], random_state=0).fit(X, Y)
    assert len(rakel.subsets_) == 1
    lp = LabelPowerset(random_state=0).fit(X, Y)
    np.testing.assert_array_equal(rakel.predict(X), lp.predict(X))


def test_rakel_o_votes_on_two_l_subsets_by_default(data):
    X, Y = data
    model = RAkEL(overlap=True, random_state=0).fit(X, Y)
    assert len(model.subsets_) == 2 * Y.shape[1]
    assert model.decision_function(X).shape == Y.shape


def test_ecc_bags_and_orders_its_chains(data):
    X, Y = data
    model = EnsembleClassifierChains(n_chains=4, random_state=0).fit(X, Y)
    assert len(model.chains_) == 4
    assert len({tuple(chain.order_) for chain in model.chains_}) > 1
    for rows in model.samples_:
        assert len(rows) == len(Y) and len(np.unique(rows)) < len(Y)
        assert np.all(Y[rows].sum(axis=0) > 0) and np.all(Y[rows].sum(axis=0) < len(Y))
    votes = sum(chain.predict(X) for chain in model.chains_)
    np.testing.assert_array_equal(model.predict(X)[votes != 2], (votes > 2)[votes != 2])


def test_bootstrap_repairs_a_draw_that_loses_a_rare_label():
    # 30 labels of one relevant row each: a plain draw keeps them all with probability about 0.632^30 = 1e-6.
    Y = np.vstack([np.eye(30, dtype=np.int8), np.zeros((10, 30), dtype=np.int8)])
    for seed in range(5):
        rows, repaired = bootstrap_rows(Y, np.random.default_rng(seed))
        assert repaired and rows.shape == (40,) and rows.min() >= 0 and rows.max() < 40
        assert np.all(Y[rows].sum(axis=0) > 0) and np.all(Y[rows].sum(axis=0) < 40)
    # Data a plain draw keeps whole is not repaired: the sample is Read et al.'s bootstrap.
    common = (np.random.default_rng(1).random((200, 3)) < 0.5).astype(np.int8)
    assert not bootstrap_rows(common, np.random.default_rng(0))[1]


def test_ecc_fits_rare_labels_and_counts_the_repaired_samples():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((300, 5)), np.zeros((300, 20), dtype=np.int8)
    for label in range(20):
        Y[rng.choice(300, 1 + label % 2, replace=False), label] = 1
    with pytest.warns(UserWarning, match=r"of 4 bootstrap samples were repaired .* held by 1 of 300 rows") as caught:
        model = EnsembleClassifierChains(n_chains=4, random_state=0).fit(X, Y)
    assert len([w for w in caught if "repaired" in str(w.message)]) == 1
    for rows in model.samples_:
        assert np.all(Y[rows].sum(axis=0) > 0) and np.all(Y[rows].sum(axis=0) < len(Y))
    assert model.decision_function(X).shape == Y.shape


@pytest.mark.parametrize("classifier", [GaussianNB(), LinearSVC()])
@pytest.mark.parametrize("cls", [LabelPowerset, RAkEL, EnsembleClassifierChains])
def test_any_scikit_learn_classifier_serves(data, cls, classifier):
    X, Y = data
    model = cls(classifier=classifier, random_state=0).fit(X, Y)
    scores = model.decision_function(X)
    assert scores.shape == Y.shape and np.all(np.isfinite(scores))
    np.testing.assert_array_equal(model.predict(X), (scores > 0).astype(int))


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (LabelPowerset(classifier=GaussianNB(), C=10.0), "set C on it"),
        (LabelPowerset(classifier="logistic"), "scikit-learn classifier"),
        (RAkEL(labelset_size=0), "labelset_size must be"),
        (RAkEL(n_subsets=5), "n_subsets applies to RAkEL-o"),
        (RAkEL(overlap="yes"), "overlap must be True or False"),
        (EnsembleClassifierChains(n_chains=0), "n_chains must be"),
        (EnsembleClassifierChains(bootstrap=1), "bootstrap must be True or False"),
        (LabelPowerset(max_iter=0), "max_iter must be"),
        (RAkEL(scores="soft"), "scores must be one of"),
    ],
)
def test_bad_parameters_are_refused_in_fit(data, estimator, message):
    with pytest.raises(ValueError, match=message):
        estimator.fit(*data)


@pytest.mark.parametrize("name", ["label_powerset", "rakel", "ecc"])
def test_conformance(name):
    check_method(name)
