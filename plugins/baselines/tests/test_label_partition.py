"""Label-space partitioning: the co-occurrence graph, modularity against a loop computation and
networkx, the greedy agglomeration's stopping property, label propagation's fixed point, the
vote, the base, and scikit-multilearn-ng's MajorityVotingClassifier."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.testing.checks import check_method
from multilabel_core_plugins.baselines import BRkNNa, LabelSpacePartitioning, MLkNN
from multilabel_core_plugins.baselines.label_partition import (
    cooccurrence_graph,
    greedy_modularity,
    label_propagation,
    modularity,
)


def loop_modularity(W, parts):
    """Newman's Q, one pair of labels at a time."""
    n = len(W)
    total = sum(W[i][j] for i in range(n) for j in range(n))
    if total == 0:
        return 0.0
    degree = [sum(W[i][j] for j in range(n)) for i in range(n)]
    q = 0.0
    for part in parts:
        for i in part:
            for j in part:
                q += W[i][j] / total - degree[i] * degree[j] / total**2
    return q


def two_cliques():
    """Labels 0-3 always together, labels 4-6 always together, one row linking 3 and 4."""
    Y = np.zeros((21, 7), dtype=np.int8)
    Y[:10, :4] = 1
    Y[10:20, 4:] = 1
    Y[20, [3, 4]] = 1
    return Y


random_Y = hnp.arrays(np.int8, st.tuples(st.integers(2, 30), st.integers(2, 8)), elements=st.integers(0, 1))


def test_cooccurrence_graph_counts_rows_with_both_labels():
    Y = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(cooccurrence_graph(Y), [[0, 2, 1], [2, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(cooccurrence_graph(Y, weighted=False), [[0, 1, 1], [1, 0, 1], [1, 1, 0]])


@settings(deadline=None, max_examples=40)
@given(Y=random_Y, data=st.data())
def test_modularity_equals_the_loop_computation(Y, data):
    W = cooccurrence_graph(Y)
    L = Y.shape[1]
    membership = data.draw(hnp.arrays(np.int64, L, elements=st.integers(0, L - 1)))
    parts = [np.flatnonzero(membership == c) for c in np.unique(membership)]
    assert modularity(W, parts) == pytest.approx(loop_modularity(W.tolist(), parts), abs=1e-12)


@settings(deadline=None, max_examples=40)
@given(Y=random_Y)
def test_greedy_modularity_stops_where_no_merge_helps(Y):
    W = cooccurrence_graph(Y)
    parts = greedy_modularity(W)
    assert sorted(np.concatenate(parts).tolist()) == list(range(Y.shape[1])), "a partition of the labels"
    assert [p[0] for p in parts] == sorted(p[0] for p in parts)
    q = modularity(W, parts)
    assert q >= modularity(W, [[i] for i in range(Y.shape[1])]) - 1e-12, "never worse than where it started"
    for a, b in itertools.combinations(range(len(parts)), 2):
        merged = [p for c, p in enumerate(parts) if c not in (a, b)] + [np.concatenate([parts[a], parts[b]])]
        assert modularity(W, merged) <= q + 1e-12, f"merging parts {a} and {b} would raise Q"


def test_greedy_modularity_finds_planted_communities():
    parts = greedy_modularity(cooccurrence_graph(two_cliques()))
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6]]


def test_a_graph_without_edges_keeps_every_label_apart():
    Y = np.eye(4, dtype=np.int8)
    W = cooccurrence_graph(Y)
    assert [p.tolist() for p in greedy_modularity(W)] == [[0], [1], [2], [3]]
    assert modularity(W, greedy_modularity(W)) == 0.0
    parts, _ = label_propagation(W, 0)
    assert [p.tolist() for p in parts] == [[0], [1], [2], [3]]


def test_same_as_networkx_greedy_modularity_and_modularity():
    nx = pytest.importorskip("networkx")
    for seed in range(5):
        rng = np.random.default_rng(seed)
        Y = (rng.random((80, 12)) < rng.uniform(0.05, 0.5, size=12)).astype(np.int8)
        W = cooccurrence_graph(Y)
        graph = nx.from_numpy_array(W)
        ours = greedy_modularity(W)
        theirs = nx.community.greedy_modularity_communities(graph, weight="weight")
        assert modularity(W, ours) == pytest.approx(nx.community.modularity(graph, [set(p) for p in ours]), abs=1e-12)
        assert modularity(W, ours) == pytest.approx(modularity(W, [sorted(c) for c in theirs]), abs=1e-12)


@settings(deadline=None, max_examples=40)
@given(Y=random_Y, seed=st.integers(0, 2**31 - 1))
def test_label_propagation_ends_at_a_fixed_point(Y, seed):
    W = cooccurrence_graph(Y)
    parts, sweeps = label_propagation(W, seed)
    assert sweeps >= 1
    community = np.empty(Y.shape[1], dtype=int)
    for c, part in enumerate(parts):
        community[part] = c
    for i in range(Y.shape[1]):
        if W[i].sum() == 0:
            assert len(parts[community[i]]) == 1, "an isolated label stays alone"
            continue
        weight = {c: W[i][community == c].sum() for c in set(community[W[i] > 0])}
        assert weight.get(community[i], -1) == max(weight.values()), f"label {i} is not in a heaviest community"
    again, _ = label_propagation(W, seed)
    assert [p.tolist() for p in again] == [p.tolist() for p in parts], "seeded: the same partition"


def test_label_propagation_says_when_it_did_not_settle():
    W = cooccurrence_graph(two_cliques())
    with pytest.warns(ConvergenceWarning, match="did not settle in 0 sweeps: 7 of 7 labels could still change"):
        parts, sweeps = label_propagation(W, 0, max_sweeps=0)
    assert sweeps == 0 and len(parts) == 7


def test_label_propagation_finds_planted_communities():
    parts, _ = label_propagation(cooccurrence_graph(two_cliques()), 3)
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6]]


@pytest.fixture(scope="module")
def problem():
    data = make_correlated_multilabel(n_samples=150, n_features=6, n_labels=6, random_state=1)
    return np.asarray(data.X), np.asarray(data.Y)


def test_disjoint_parts_predict_what_each_part_model_predicts(problem):
    X, Y = problem
    model = LabelSpacePartitioning(base="mlknn", base_params={"k": 7}).fit(X[:100], Y[:100])
    assert len(model.partition_) > 1 and np.all(model.votes_per_label_ == 1)
    predicted = model.predict(X[100:])
    for part in model.partition_:
        alone = MLkNN(k=7).fit(X[:100], Y[:100][:, part])
        np.testing.assert_array_equal(predicted[:, part], alone.predict(X[100:]))
        # Within a part the scores keep the part model's order of labels in a row.
        scores, own = model.decision_function(X[100:])[:, part], alone.decision_function(X[100:])
        for a, b in itertools.combinations(range(len(part)), 2):
            np.testing.assert_array_equal(np.sign(scores[:, a] - scores[:, b]), np.sign(own[:, a] - own[:, b]))


def test_overlapping_parts_vote_and_break_ties_by_the_mean_score(problem):
    X, Y = problem
    parts = [[0, 1, 2], [1, 2, 3], [2, 3, 4, 5], [0, 5]]
    model = LabelSpacePartitioning(base="brknn_a", base_params={"k": 5}, communities=parts).fit(X[:100], Y[:100])
    np.testing.assert_array_equal(model.votes_per_label_, [2, 2, 3, 2, 1, 2])
    X_new = X[100:]
    votes, squashed = np.zeros((len(X_new), 6)), np.zeros((len(X_new), 6))
    for part in parts:
        alone = BRkNNa(k=5).fit(X[:100], Y[:100][:, part])
        votes[:, part] += alone.predict(X_new)
        t = alone.decision_function(X_new)
        squashed[:, part] += t / (1 + np.abs(t))
    share = votes / model.votes_per_label_
    expected = np.where(share != 0.5, share > 0.5, squashed > 0)
    np.testing.assert_array_equal(model.predict(X_new), expected.astype(int))
    assert np.any(share == 0.5), "the data has ties for the mean score to break"


def test_the_default_base_is_label_powerset_and_seeds_it(problem):
    pytest.importorskip("sklearn")
    X, Y = problem
    model = make_method("label_partition").fit(X, Y)
    assert all(type(m).__name__ == "LabelPowerset" for m in model.estimators_)
    assert all(m.random_state is not None for m in model.estimators_)
    assert model.part_certificates_ == [None] * len(model.partition_)


def test_a_certified_base_exposes_one_certificate_per_part(problem):
    X, Y = problem
    model = LabelSpacePartitioning(base="br", base_params={"C": 1.0}).fit(X, Y)
    certificates = model.part_certificates_
    assert len(certificates) == len(model.partition_)
    assert all(c is not None and c.converged for c in certificates)
    assert LabelSpacePartitioning.certified is False


def test_a_base_estimator_is_cloned_per_part(problem):
    X, Y = problem
    base = MLkNN(k=4)
    model = LabelSpacePartitioning(base=base, communities=[[0, 1, 2], [3, 4, 5]]).fit(X, Y)
    assert not hasattr(base, "n_labels_"), "the given estimator stays unfitted"
    assert model.estimators_[0] is not model.estimators_[1] and all(m.k == 4 for m in model.estimators_)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"base": "label_partition"}, "cannot be its own base"),
        ({"base": "mlknnn"}, "base: unknown method 'mlknnn'. Did you mean 'mlknn'"),
        ({"base": "mlknn", "base_params": {"kk": 3}}, "base: method 'mlknn' has no parameter 'kk'"),
        ({"base": MLkNN(), "base_params": {"k": 3}}, "base_params apply to a base given by name"),
        ({"base": 1.5}, "base must be a registered method name"),
        ({"base": "mlknn", "base_params": [("k", 3)]}, "base_params must be a dict"),
        ({"base": "mlknn", "communities": "louvain"}, "communities must be one of"),
        ({"base": "mlknn", "communities": []}, "non-empty sequence of parts"),
        ({"base": "mlknn", "communities": [[0, 1, 2], [3, 4]]}, "leave out labels \\[5\\]"),
        ({"base": "mlknn", "communities": [[0, 1, 2], [3, 4, 6]]}, "outside \\[0, 5\\]"),
        ({"base": "mlknn", "communities": [[0, 1, 1], [2, 3, 4, 5]]}, "more than once"),
        ({"base": "mlknn", "communities": [[0, 1, 2], []]}, "part 1 must be a non-empty"),
        ({"base": "mlknn", "communities": [[0, 1.5], [2, 3, 4, 5]]}, "label indices \\(integers\\)"),
        ({"base": "mlknn", "communities": [[0, 1, 2], [3, 4, 5]], "weighted": False}, "weighted=False applies"),
        ({"base": "mlknn", "weighted": "yes"}, "weighted must be True or False"),
    ],
)  # fmt: skip
def test_bad_parameters_are_refused_naming_them(problem, params, message):
    X, Y = problem
    with pytest.raises(ValueError, match=message):
        LabelSpacePartitioning(**params).fit(X, Y)


class _FailsOnWideParts(MLkNN):
    def _fit(self, X, Y):
        if Y.shape[1] > 2:
            raise RuntimeError("this base fits at most two labels")
        super()._fit(X, Y)


def test_a_failing_part_is_named(problem):
    X, Y = problem
    with pytest.raises(RuntimeError, match="at most two labels") as caught:
        LabelSpacePartitioning(base=_FailsOnWideParts(), communities=[[0, 1], [2, 3, 4, 5]]).fit(X, Y)
    assert caught.value.__notes__ == ["label_partition: while fitting part 1 of 2 (labels [2, 3, 4, 5])"]
    with pytest.raises(ValueError, match="k must be >= 1") as caught:
        LabelSpacePartitioning(base=MLkNN(k=0), communities=[[0, 1, 2], [3, 4, 5]]).fit(X, Y)
    assert caught.value.__notes__ == ["label_partition: while fitting part 0 of 2 (labels [0, 1, 2])"]


def test_conformance():
    pytest.importorskip("sklearn")
    check_method("label_partition")


def scikit_multilearn():
    try:
        import skmultilearn
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("scikit-multilearn-ng is missing, but the test extra installs it (CI=true)")
        pytest.skip("needs scikit-multilearn-ng (pip install 'multilabel-core[baselines]')")
    return skmultilearn


def test_same_predictions_as_scikit_multilearn_majority_voting_on_the_same_partition(problem):
    """scikit-multilearn-ng's MajorityVotingClassifier over a FixedLabelSpaceClusterer with our
    partition and the same label powerset: with disjoint parts both predict each part's LP."""
    scikit_multilearn()
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression
    from skmultilearn.cluster import FixedLabelSpaceClusterer
    from skmultilearn.ensemble import MajorityVotingClassifier
    from skmultilearn.problem_transform import LabelPowerset

    X, Y = problem
    ours = make_method("label_partition", base_params={"C": 1.0, "max_iter": 1000}).fit(X[:100], Y[:100])
    partition = [p.tolist() for p in ours.partition_]
    theirs = MajorityVotingClassifier(
        classifier=LabelPowerset(classifier=LogisticRegression(C=1.0, max_iter=1000), require_dense=[True, True]),
        clusterer=FixedLabelSpaceClusterer(clusters=partition),
    ).fit(X[:100], sparse.lil_matrix(Y[:100]))
    np.testing.assert_array_equal(ours.predict(X[100:]), theirs.predict(X[100:]).toarray())
