"""The label-ranking family: conformance, composition = presets, special cases, set-size prediction, sparse data."""

import numpy as np
import pytest
import scipy.sparse as sp
from multilabel_core_plugins.ranking import (
    CMLFS,
    DEFAULT_GRIDS,
    MLFS,
    PAPER_GRIDS,
    CLaRankSVM,
    CuttingPlaneSolver,
    LaRankSVM,
    RankingCDSolver,
    ranking_alternating,
)
from multilabel_core_plugins.ranking.threshold import threshold_targets

import multilabel_core as mlc
from multilabel_core import ComposedEstimator
from multilabel_core.datasets import load_dataset, make_correlated_multilabel
from multilabel_core.relations import LearnedCovariance
from multilabel_core.testing.checks import check_method
from multilabel_core.testing.rounding import score_rounding_bound

METHODS = ("larank", "clarank", "mlfs", "cmlfs")

# The cutting plane often stops at max_iter with its bound gap open (docs/methods/ranking.md); the
# tests of this module are about the models, test_ranking_algorithms.py about convergence.
pytestmark = pytest.mark.filterwarnings("ignore:CuttingPlaneSolver did not converge")


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=120, n_features=8, n_labels=4, random_state=1)
    return dataset.X, dataset.Y


def presets():
    return [LaRankSVM(C=2.0), CLaRankSVM(C=2.0, mu=0.5), MLFS(C=2.0, n_features=3), CMLFS(C=2.0, mu=0.5, n_features=3)]


@pytest.mark.parametrize("name", METHODS)
def test_conformance(name):
    check_method(name)


@pytest.mark.parametrize("name", METHODS)
def test_registration(name):
    spec = mlc.get_method(name)
    assert "Gu, Li & Han" in spec.citation and "CIKM 2011" in spec.citation
    assert spec.parts["loss"] == "pairwise_ranking_hinge" and spec.parts["kernel"] == "linear"
    for parameter, values in DEFAULT_GRIDS[name].items():
        beyond = [value for value in values if value not in PAPER_GRIDS[name][parameter]]
        # Only LaRank's C reaches below the paper's grid (its lowest point was chosen on yeast).
        assert beyond == ([1e-4] if (name, parameter) == ("larank", "C") else [])


def composed(name, C, tol=1e-3):
    """The method as ComposedEstimator parts (docs/methods/ranking.md, "Composition")."""
    cd = RankingCDSolver(tol=tol, random_state=0)
    prior = mlc.make_component("regularizer", "frobenius_label_covariance", mu=0.5)
    parts = {
        "larank": {"regularizer": "frobenius", "relation": "independent", "solver": cd},
        "clarank": {
            "regularizer": prior,
            "relation": LearnedCovariance(),
            "solver": ranking_alternating(cd=cd, tol=tol),
        },
        "mlfs": {
            "regularizer": "frobenius",
            "relation": "independent",
            "solver": CuttingPlaneSolver(n_features=3, cd=cd, tol=tol),
        },
        "cmlfs": {
            "regularizer": prior,
            "relation": "learned_covariance",
            "solver": CuttingPlaneSolver(n_features=3, cd=cd, tol=tol),
        },
    }[name]
    return ComposedEstimator(loss="pairwise_ranking_hinge", kernel="linear", C=C, fit_intercept=True, **parts)


@pytest.mark.parametrize("name, preset", list(zip(METHODS, presets())), ids=METHODS)
def test_the_composed_parts_fit_the_preset(data, name, preset):
    X, Y = data
    preset.fit(X, Y)
    model = composed(name, C=2.0).fit(X, Y)
    # Exact: both build the same Problem from the same parts and run the same solver on it in this process.
    np.testing.assert_array_equal(model.coef_, preset.coef_)
    np.testing.assert_array_equal(model.intercept_, preset.intercept_)
    np.testing.assert_array_equal(model.decision_function(X), preset.decision_function(X))
    if hasattr(preset, "label_covariance_"):
        np.testing.assert_array_equal(model.label_covariance_, preset.label_covariance_)
        np.testing.assert_array_equal(model.label_correlation_, preset.label_correlation_)


def test_the_ranking_cd_solver_is_composable_by_name(data):
    X, Y = data
    model = ComposedEstimator(
        loss="pairwise_ranking_hinge",
        regularizer="frobenius",
        relation="independent",
        kernel="linear",
        solver="ranking_cd",
        tol=1e-4,
        max_iter=500,
    ).fit(X, Y)
    # Exact: LaRankSVM's parts are these, solved by the same code on identical inputs in this process.
    np.testing.assert_array_equal(model.coef_, LaRankSVM(tol=1e-4, max_iter=500).fit(X, Y).coef_)


@pytest.mark.parametrize("solver", ["ranking_cd", "ranking_alternating", "cutting_plane"])
def test_the_solvers_refuse_other_losses(data, solver):
    # The ranking dual (7) has one variable per ranked pair: the loss must enumerate them.
    with pytest.raises(mlc.CapabilityError, match=r"requires loss\.pairs, which Hinge does not provide"):
        ComposedEstimator(loss="hinge", regularizer="frobenius", relation="independent", solver=solver).fit(*data)


def test_a_learned_relation_needs_the_frobenius_label_covariance_regulariser(data):
    with pytest.raises(mlc.CapabilityError, match="with_relation, which Frobenius does not provide"):
        ComposedEstimator(
            loss="pairwise_ranking_hinge",
            regularizer="frobenius",
            relation="learned_covariance",
            solver="ranking_alternating",
        ).fit(*data)


@pytest.mark.parametrize("preset", presets(), ids=METHODS)
@pytest.mark.parametrize("layout", [sp.csr_matrix, sp.csc_matrix])
def test_dense_and_sparse_rows_give_the_same_model(data, preset, layout):
    # Round-off differs between the layouts; tight solves keep its effect on the model small.
    X, Y = data
    X = np.where(np.abs(X) < 0.5, 0.0, X)  # real zeros, so the sparse layout skips them
    preset.set_params(tol=1e-6)
    dense = preset.fit(X, Y).decision_function(X)
    sparse = preset.fit(layout(X), Y).decision_function(layout(X))
    np.testing.assert_allclose(sparse, dense, rtol=1e-5, atol=1e-5)


def test_mlfs_keeping_every_feature_is_larank(data):
    X, Y = data
    larank = LaRankSVM(tol=1e-9).fit(X, Y)
    mlfs = MLFS(n_features=X.shape[1], tol=1e-9).fit(X, Y)
    assert mlfs.n_iter_ == 1 and mlfs.selected_features_.tolist() == list(range(X.shape[1]))
    np.testing.assert_allclose(mlfs.coef_, larank.coef_, atol=1e-4)
    np.testing.assert_allclose(mlfs.intercept_, larank.intercept_, atol=1e-4)


def test_clarank_without_the_prior_is_larank(data):
    X, Y = data
    larank = LaRankSVM(tol=1e-9).fit(X, Y)
    clarank = CLaRankSVM(mu=0.0, tol=1e-9).fit(X, Y)
    np.testing.assert_allclose(clarank.coef_, larank.coef_, atol=1e-4)
    np.testing.assert_allclose(clarank.intercept_, larank.intercept_, atol=1e-4)


def test_cmlfs_without_the_prior_is_mlfs(data):
    X, Y = data
    mlfs = MLFS(n_features=3, tol=1e-6).fit(X, Y)
    cmlfs = CMLFS(mu=0.0, n_features=3, tol=1e-6).fit(X, Y)
    np.testing.assert_array_equal(cmlfs.subsets_, mlfs.subsets_)
    np.testing.assert_allclose(cmlfs.coef_, mlfs.coef_, atol=1e-3)


def test_the_prior_changes_the_model(data):
    X, Y = data
    assert not np.allclose(CLaRankSVM(mu=1.0).fit(X, Y).coef_, LaRankSVM().fit(X, Y).coef_, atol=1e-2)


@pytest.mark.parametrize("preset", [MLFS(n_features=3), CMLFS(n_features=3)], ids=["mlfs", "cmlfs"])
def test_the_feature_selection_attributes(data, preset):
    X, Y = data
    model = preset.fit(X, Y)
    T = model.subsets_.shape[0]
    assert model.subsets_.sum(axis=1).tolist() == [3] * T
    assert model.selected_features_.tolist() == np.flatnonzero(model.subsets_.any(axis=0)).tolist()
    assert model.subset_weights_.min() >= 0.0 and model.subset_weights_.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(model.feature_weights_, model.subset_weights_ @ model.subsets_)
    assert np.all(model.coef_[model.feature_weights_ == 0.0] == 0.0)  # features left out carry no weight
    assert model.bound_history_.shape == (model.n_iter_, 2)
    assert np.all(model.bound_history_[:, 0] <= model.bound_history_[:, 1])
    if isinstance(preset, MLFS):  # a fixed coupling: running bounds; CMLFS's are those of the current D (not monotone)
        assert np.all(np.diff(model.bound_history_[:, 0]) >= 0.0) and np.all(np.diff(model.bound_history_[:, 1]) <= 0.0)


@pytest.mark.parametrize("preset", [CLaRankSVM(), CMLFS(n_features=3)], ids=["clarank", "cmlfs"])
def test_the_learned_relation_attributes(data, preset):
    model = preset.fit(*data)
    D = model.label_covariance_
    assert np.trace(D) == pytest.approx(1.0) and np.linalg.eigvalsh(D).min() > 0.0
    np.testing.assert_allclose(np.diag(model.label_correlation_), 1.0)
    np.testing.assert_allclose(model.label_correlation_, D / np.sqrt(np.outer(np.diag(D), np.diag(D))), atol=1e-12)


# -- set-size prediction (section 3.8) -----------------------------------------------------


def test_the_threshold_targets_of_eq_34():
    scores = np.array([[3.0, 1.0, -1.0], [0.5, 2.0, 1.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    Y = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]])
    # Row 0: between min relevant 1 and max irrelevant -1; row 1: between 0.5 and 2;
    # row 2 (no label): half a margin above its top score; row 3 (every label): below its lowest.
    np.testing.assert_allclose(threshold_targets(scores, Y), [0.0, 1.25, 3.5, 0.5])


@pytest.mark.parametrize("preset", presets(), ids=METHODS)
def test_predict_compares_the_scores_with_the_learned_threshold(data, preset):
    X, Y = data
    model = preset.fit(X, Y)
    scores, threshold = model.decision_function(X), model.decision_threshold(X)
    np.testing.assert_array_equal(model.predict(X), (scores > threshold[:, None]).astype(np.int64))
    coef = model.threshold_.coef  # t(x) = a^T (the sorted scores) + a_0, the default regressors
    np.testing.assert_allclose(threshold, np.sort(scores, axis=1) @ coef[:-1] + coef[-1])
    # The least-squares fit reproduces the training thresholds of eq. 34 on average.
    assert np.mean(threshold) == pytest.approx(np.mean(threshold_targets(scores, Y)))


def test_the_threshold_separates_a_separable_training_set():
    X = np.eye(4)
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    model = LaRankSVM(C=100.0, tol=1e-6).fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), Y)


def test_rows_without_pairs_shape_nothing():
    X = np.random.default_rng(0).standard_normal((30, 4))
    Y = np.zeros((30, 3), dtype=int)
    Y[:10] = 1  # full label sets
    Y[10:20, 0] = 1
    model = LaRankSVM().fit(X, Y)  # rows 0-9 and 20-29 have no pair: only rows 10-19 shape the ranking
    assert model.certificate_[-1].statistics["rows_without_pairs"] == 20


@pytest.mark.parametrize("preset", presets(), ids=METHODS)
def test_a_single_label_is_refused(preset):
    # One label column has no pair to rank: the optimum W = 0 was certified at gap 0 and
    # the threshold alone labelled every row alike.  The methods refuse it instead.
    X = np.random.default_rng(0).standard_normal((30, 4))
    y = (X[:, :1] > 0).astype(int)
    with pytest.raises(ValueError, match=r"needs at least 2 label columns that take both values on the training rows "
                       r"\(it orders labels against each other\), but only 1 of the 1 do$"):
        preset.fit(X, y)


@pytest.mark.parametrize("preset", presets(), ids=METHODS)
def test_labels_without_any_pair_are_refused(preset):
    # Two label columns, but every row has both labels or neither: no pair either.
    X = np.random.default_rng(0).standard_normal((30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="a training row with both a relevant and an irrelevant label"):
        preset.fit(X, np.column_stack([y, y]))


@pytest.mark.parametrize("preset", presets(), ids=METHODS)
def test_what_the_one_column_sklearn_checks_covered(data, preset):
    # scikit-learn's estimator checks fit a one-column y, which the family refuses
    # (tests/test_sklearn_compat.py lists them); the properties they test, on several labels:
    X, Y = data
    frozen = np.asfortranarray(X)
    frozen.flags.writeable = False  # read-only, F-ordered input (memmap and contiguity checks)
    params = preset.get_params()
    model = preset.fit(frozen, Y)
    assert model.get_params() == params  # fit leaves the parameters alone
    assert all(name.endswith("_") or name.startswith("_") or name in params for name in vars(model))
    state = dict(vars(model))
    scores, predictions = model.decision_function(X), model.predict(X)
    model.decision_threshold(X)
    assert vars(model).keys() == state.keys() and all(vars(model)[k] is state[k] for k in state)
    order = np.random.default_rng(0).permutation(len(X))
    np.testing.assert_array_equal(model.predict(X[order]), predictions[order])
    np.testing.assert_array_equal(model.predict(X[:7]), predictions[:7])
    bound = score_rounding_bound(model, X, scores)
    for sparse in (sp.csr_matrix(X), sp.csc_array(X)):
        assert np.all(np.abs(model.decision_function(sparse) - scores) <= bound)


@pytest.mark.parametrize("solver", ["ranking_cd", "ranking_alternating", "cutting_plane"])
def test_the_ranking_solvers_refuse_a_single_label(solver):

    X = np.random.default_rng(0).standard_normal((30, 4))
    relation = "independent" if solver == "ranking_cd" else "learned_covariance"
    regularizer = "frobenius" if solver == "ranking_cd" else "frobenius_label_covariance"
    model = ComposedEstimator("pairwise_ranking_hinge", regularizer, relation, "linear", solver)
    with pytest.raises(ValueError, match="ranking methods need at least two labels"):
        model.fit(X, (X[:, :1] > 0).astype(int))


@pytest.mark.parametrize(
    "params",
    [{"mu": -1.0}, {"mu": "big"}, {"n_features": 0}, {"n_features": 2.5}, {"C": 0.0}, {"tol": -1.0}, {"max_iter": 0}],
)
def test_bad_hyper_parameters_are_refused(data, params):
    with pytest.raises(ValueError):
        CMLFS(**params).fit(*data)


# -- sparse data end to end --------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::multilabel_core.solvers.ConvergenceWarning")
def test_yahoo_arts_stays_sparse(datasets_dir, monkeypatch):
    # Fits on the sparse rows with densifying forbidden reach the objective of the dense fits
    # (within the solves' relative gaps: the iterates themselves may take other paths).
    dataset = load_dataset(datasets_dir / "yahoo-arts.arff")
    rows = np.random.default_rng(0).permutation(dataset.X.shape[0])[:400]
    X, Y = dataset.X[rows], np.asarray(dataset.Y[rows].toarray() if sp.issparse(dataset.Y) else dataset.Y[rows])
    Y = Y[:, (Y.sum(axis=0) > 0) & (Y.sum(axis=0) < len(rows))]
    models = [LaRankSVM(), CLaRankSVM(), MLFS(n_features=20, max_iter=3), CMLFS(n_features=20, max_iter=3)]
    dense = [model.fit(X.toarray(), Y).certificate_[-1].primal for model in models]

    def densify(self, *args, **kwargs):
        raise AssertionError("a sparse X was densified")

    for layout in (sp.csr_matrix, sp.csc_matrix):
        monkeypatch.setattr(layout, "toarray", densify)
        monkeypatch.setattr(layout, "todense", densify)
    for model, objective in zip(models, dense):
        model.fit(X, Y)
        assert model.decision_function(X).shape == Y.shape and model.predict(X).shape == Y.shape
        assert model.certificate_[-1].primal == pytest.approx(objective, rel=3e-3)
