"""Iterative stratification, the splitters and cross_validate."""

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from multilabel_core.certificate import Certificate
from multilabel_core.metrics import evaluate
from multilabel_core.model_selection import (
    IterativeStratifiedKFold,
    RepeatedIterativeStratifiedKFold,
    cross_validate,
    iterative_stratification,
    train_test_split_stratified,
)


# ------------------------------------------------------------------------------- data
def skewed_labels(seed, n=400, L=10):
    """Label frequencies from 40 % down to 2 %, correlated through a shared latent factor."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 1))
    frequency = np.geomspace(0.4, 0.02, L) * np.exp(0.5 * latent - 0.125)
    return (rng.random((n, L)) < frequency).astype(np.int8)


def features_for(Y, seed=0, d=6):
    """Features that carry the labels through a random linear map, plus noise."""
    rng = np.random.default_rng(seed)
    return Y @ rng.normal(size=(Y.shape[1], d)) + 0.5 * rng.normal(size=(Y.shape[0], d))


def label_distribution(Y, folds):
    """Sechidis et al.'s LD: mean over labels and folds of |fold share - global share| of positives."""
    n_folds = folds.max() + 1
    overall = Y.mean(axis=0)
    return np.mean([np.abs(Y[folds == f].mean(axis=0) - overall) for f in range(n_folds)])


@st.composite
def label_matrices(draw):
    n = draw(st.integers(2, 40))
    L = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    Y = (rng.random((n, L)) < draw(st.floats(0.0, 0.8))).astype(np.int8)
    return Y, draw(st.integers(2, n))


# ------------------------------------------------------------------ test estimators
def gram(A, B):
    product = A @ B.T
    return product.toarray() if sp.issparse(product) else np.asarray(product)


class KernelNearestCentroid:
    """Per label, +1 when x is nearer (in the kernel's feature space) to the positives' centroid.

    ``||phi(x) - mu_+||^2 - ||phi(x) - mu_-||^2`` expands into kernel evaluations only, so
    ``kernel='precomputed'`` on ``K = X X^T`` must give what ``kernel='linear'`` gives on X.
    """

    def __init__(self, kernel="linear"):
        self.kernel = kernel

    def get_params(self, deep=True):
        return {"kernel": self.kernel}

    def _kernel(self, X, Z):
        return np.asarray(X, dtype=float) if self.kernel == "precomputed" else gram(X, Z)

    def fit(self, X, Y):
        Y = np.asarray(Y, dtype=float)
        K = self._kernel(X, X)
        positive = Y / np.maximum(Y.sum(axis=0), 1)
        negative = (1 - Y) / np.maximum((1 - Y).sum(axis=0), 1)
        self.X_fit_ = X
        self.dual_coef_ = 2 * (positive - negative)
        self.intercept_ = np.einsum("il,ij,jl->l", negative, K, negative) - np.einsum(
            "il,ij,jl->l", positive, K, positive
        )
        return self

    def decision_function(self, X):
        return self._kernel(X, self.X_fit_) @ self.dual_coef_ + self.intercept_

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


class GradientRidge:
    """Per-label ridge regression on the signs 2Y - 1, by gradient descent, with a duality gap.

    Primal P(W) = ||XW - S||^2 / 2 + lam ||W||^2 / 2; dual D(A) = <A, S> - ||A||^2 / 2
    - ||X^T A||^2 / (2 lam) at A = S - XW.  Stops when P - D <= tol.
    """

    def __init__(self, lam=1.0, max_iter=500, tol=1e-8):
        self.lam, self.max_iter, self.tol = lam, max_iter, tol

    def get_params(self, deep=True):
        return {"lam": self.lam, "max_iter": self.max_iter, "tol": self.tol}

    def fit(self, X, Y):
        X, S = np.asarray(X, dtype=float), 2.0 * np.asarray(Y, dtype=float) - 1
        W = np.zeros((X.shape[1], S.shape[1]))
        step = 1.0 / (np.linalg.norm(X, 2) ** 2 + self.lam)
        for n_iter in range(1, self.max_iter + 1):
            A = S - X @ W
            primal = 0.5 * np.sum(A**2) + 0.5 * self.lam * np.sum(W**2)
            dual = np.sum(A * S) - 0.5 * np.sum(A**2) - 0.5 * np.sum((X.T @ A) ** 2) / self.lam
            if primal - dual <= self.tol:
                break
            W -= step * (self.lam * W - X.T @ A)
        self.coef_ = W
        self.certificate_ = Certificate.from_objectives(
            primal, dual, kkt_violation=float("nan"), n_iter=n_iter, time=0.0,
            converged=bool(primal - dual <= self.tol), solver="gradient descent",
        )
        return self

    def decision_function(self, X):
        return np.asarray(X, dtype=float) @ self.coef_

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(int)


# -------------------------------------------------------------- iterative stratification
@given(label_matrices())
def test_folds_partition_the_rows(case):
    Y, n_splits = case
    tests = []
    for train, test in IterativeStratifiedKFold(n_splits, random_state=0).split(np.zeros((len(Y), 1)), Y):
        assert np.intersect1d(train, test).size == 0
        assert np.union1d(train, test).tolist() == list(range(len(Y)))
        tests.append(test)
    assert sorted(np.concatenate(tests).tolist()) == list(range(len(Y)))


@given(label_matrices(), st.integers(0, 1000))
def test_deterministic_for_an_int_seed(case, seed):
    Y, n_folds = case
    np.testing.assert_array_equal(
        iterative_stratification(Y, n_folds, seed), iterative_stratification(Y, n_folds, seed)
    )


def test_different_seeds_give_different_folds():
    Y = skewed_labels(0)
    assert not np.array_equal(iterative_stratification(Y, 5, 0), iterative_stratification(Y, 5, 1))


@pytest.mark.parametrize("seed", range(3))
def test_fold_sizes_and_label_counts_follow_the_desired_proportions(seed):
    Y, n_folds = skewed_labels(seed), 10
    folds = iterative_stratification(Y, n_folds, seed)
    assert np.all(np.abs(np.bincount(folds, minlength=n_folds) - len(Y) / n_folds) <= 1)
    for fold in range(n_folds):
        assert np.all(np.abs(Y[folds == fold].sum(axis=0) - Y.sum(axis=0) / n_folds) <= 2)


def test_iterative_stratification_beats_random_folds_on_label_distribution():
    def random_folds(Y, k, seed):
        return np.random.default_rng(seed).permutation(np.arange(len(Y)) % k)

    stratified, random = [], []
    for seed in range(5):
        Y = skewed_labels(seed)
        stratified.append(label_distribution(Y, iterative_stratification(Y, 10, seed)))
        random.append(label_distribution(Y, random_folds(Y, 10, seed)))
    assert np.mean(stratified) < 0.5 * np.mean(random)


@pytest.mark.parametrize("seed", range(3))
def test_every_label_with_enough_positives_appears_in_every_training_part(seed):
    Y, n_splits = skewed_labels(seed, n=150), 5
    frequent = Y.sum(axis=0) >= n_splits
    for train, _ in IterativeStratifiedKFold(n_splits, random_state=seed).split(Y, Y):
        assert np.all(Y[train][:, frequent].sum(axis=0) > 0)


def test_rows_without_labels_are_spread_evenly():
    Y = np.zeros((30, 3), dtype=int)
    Y[:6, 0] = 1
    folds = iterative_stratification(Y, 3, 0)
    np.testing.assert_array_equal(np.bincount(folds), [10, 10, 10])
    np.testing.assert_array_equal(np.bincount(folds[:6]), [2, 2, 2])


def test_without_shuffle_the_folds_depend_only_on_Y():
    Y = skewed_labels(3, n=60)
    splits = [list(IterativeStratifiedKFold(4, shuffle=False).split(Y, Y)) for _ in range(2)]
    for (a_train, a_test), (b_train, b_test) in zip(*splits):
        np.testing.assert_array_equal(a_test, b_test)


def test_repeated_splits_are_partitions_that_differ_between_repeats():
    Y = skewed_labels(4, n=60)
    cv = RepeatedIterativeStratifiedKFold(n_splits=3, n_repeats=2, random_state=7)
    splits = list(cv.split(Y, Y))
    assert len(splits) == cv.get_n_splits() == 6
    for repeat in (splits[:3], splits[3:]):
        assert sorted(np.concatenate([test for _, test in repeat]).tolist()) == list(range(60))
    assert not np.array_equal(splits[0][1], splits[3][1])
    again = list(cv.split(Y, Y))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))


def test_train_test_split_keeps_proportions_and_sparsity():
    Y = skewed_labels(5)
    X = sp.random(len(Y), 30, density=0.1, format="csr", random_state=0)
    X_train, X_test, Y_train, Y_test = train_test_split_stratified(X, sp.csr_matrix(Y), 0.25, random_state=0)
    assert sp.issparse(X_train) and sp.issparse(Y_test)
    assert X_test.shape[0] == Y_test.shape[0] == 100 and X_train.shape[0] == 300
    assert np.all(np.abs(Y_test.toarray().sum(axis=0) - Y.sum(axis=0) / 4) <= 1)
    _, X_test, _, _ = train_test_split_stratified(X.toarray(), Y, 40, random_state=0)
    assert X_test.shape[0] == 40


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: iterative_stratification(np.ones((5, 2)), 1), "n_folds"),
        (lambda: iterative_stratification(np.ones((5, 2)), 6), "larger than the number of rows"),
        (lambda: iterative_stratification(np.full((5, 2), 2), 2), "binary"),
        (lambda: IterativeStratifiedKFold(1), "n_splits"),
        (lambda: IterativeStratifiedKFold(3, shuffle=False, random_state=0), "shuffle=False"),
        (lambda: next(IterativeStratifiedKFold(3).split(np.ones((9, 1)))), "needs the label matrix"),
        (lambda: next(IterativeStratifiedKFold(3).split(np.ones((9, 1)), np.ones((8, 2)))), "rows"),
        (lambda: RepeatedIterativeStratifiedKFold(3, 0), "n_repeats"),
        (lambda: train_test_split_stratified(np.ones((9, 1)), np.ones((9, 2)), 1.5), "test_size"),
        (lambda: train_test_split_stratified(np.ones((9, 1)), np.ones((9, 2)), 9), "test_size"),
    ],
)
def test_bad_arguments_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_splitter_works_as_cv_in_sklearn():
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    Y = skewed_labels(6, n=120, L=4)
    X = features_for(Y)
    cv = IterativeStratifiedKFold(4, random_state=0)
    assert len(cross_val_score(KNeighborsClassifier(3), X, Y, cv=cv)) == 4
    search = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": [1, 5]}, cv=cv).fit(X, Y)
    assert search.n_splits_ == 4


# ---------------------------------------------------------------------- cross_validate
@pytest.fixture(scope="module")
def data():
    Y = skewed_labels(8, n=160, L=5)
    return features_for(Y, seed=1), Y


def test_cross_validate_reports_every_metric_per_fold(data):
    X, Y = data
    result = cross_validate(KernelNearestCentroid(), X, Y, cv=4, random_state=0)
    for name in ("hamming_loss", "coverage_normalized", "macro_auc", "subset_accuracy"):
        assert len(result[name]) == 4
        assert result["mean"][name] == pytest.approx(np.mean(result[name]))
        assert result["std"][name] == pytest.approx(np.std(result[name]))
    assert len(result["fit_time"]) == len(result["predict_time"]) == 4
    assert result["certificate"] == [None] * 4
    assert result["mean"]["average_precision"] > 0.7  # the features carry the labels


def test_cross_validate_matches_a_manual_loop(data):
    X, Y = data
    cv = IterativeStratifiedKFold(3, random_state=1)
    result = cross_validate(KernelNearestCentroid(), X, Y, cv=cv, metrics=["ranking_loss", "micro_f1"])
    for fold, (train, test) in enumerate(cv.split(X, Y)):
        model = KernelNearestCentroid().fit(X[train], Y[train])
        expected = evaluate(Y[test], model.decision_function(X[test]), model.predict(X[test]))
        # Exact: cross_validate fits and scores these same rows with the same code in this process.
        assert result["ranking_loss"][fold] == expected["ranking_loss"]
        assert result["micro_f1"][fold] == expected["micro_f1"]
    assert set(result["mean"]) == {"ranking_loss", "micro_f1"}


def test_parallel_equals_serial(data):
    # worker processes unpickle the estimator by module name, so it must come from an
    # installed package (test modules are imported by path and are not importable there)
    from multilabel_core_plugins.br import BinaryRelevance

    X, Y = data
    # Exact at one BLAS thread on both sides: a worker then runs the serial code on the same
    # (pickled, bit-identical) arrays with the same BLAS.  Left alone, joblib caps each worker at
    # cores / n_jobs threads while this process keeps them all, and some BLAS libraries (MKL
    # among them) sum in a thread-count-dependent order, which can move a score and a metric.
    with threadpool_limits(limits=1), joblib.parallel_config(backend="loky", inner_max_num_threads=1):
        serial = cross_validate(BinaryRelevance(), X, Y, cv=4, random_state=3)
        parallel = cross_validate(BinaryRelevance(), X, Y, cv=4, random_state=3, n_jobs=2)
    for key in ("mean", "std", "hamming_loss", "one_error", "macro_auc"):
        assert parallel[key] == serial[key]


def test_sparse_X_and_a_precomputed_kernel_give_the_dense_results(data):
    X, Y = data
    dense = cross_validate(KernelNearestCentroid(), X, Y, cv=3, random_state=0)
    sparse = cross_validate(KernelNearestCentroid(), sp.csr_matrix(X), sp.csr_matrix(Y), cv=3, random_state=0)
    kernel = cross_validate(KernelNearestCentroid("precomputed"), X @ X.T, Y, cv=3, random_state=0)
    assert sparse["mean"] == pytest.approx(dense["mean"])
    assert kernel["mean"] == pytest.approx(dense["mean"])


def test_certificates_and_estimators_are_recorded(data):
    X, Y = data
    result = cross_validate(GradientRidge(max_iter=2000), X, Y, cv=3, random_state=0, return_estimators=True)
    assert all(c["converged"] and 0 <= c["gap"] <= 1e-8 for c in result["certificate"])
    models = result["estimators"]
    assert len({id(m) for m in models}) == 3 and all(hasattr(m, "coef_") for m in models)
    stopped_early = cross_validate(GradientRidge(max_iter=2), X, Y, cv=3, random_state=0)
    assert not any(c["converged"] for c in stopped_early["certificate"])


def test_progress_bar_and_explicit_folds(data, capsys):
    X, Y = data
    folds = [(np.arange(40, 160), np.arange(40)), (np.arange(120), np.arange(120, 160))]
    result = cross_validate(KernelNearestCentroid(), X, Y, cv=folds, metrics=["hamming_loss"], progress=True)
    assert len(result["hamming_loss"]) == 2
    assert "cross-validation" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metrics": ["accuracy"]}, "unknown metric"),
        ({"cv": IterativeStratifiedKFold(3), "random_state": 0}, "random_state only seeds"),
        ({"cv": 1}, "n_splits"),
        ({"cv": 3.5}, "cv must be"),
    ],
)
def test_cross_validate_rejects_bad_arguments(data, kwargs, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        cross_validate(KernelNearestCentroid(), X, Y, **kwargs)
