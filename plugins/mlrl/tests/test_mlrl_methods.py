"""The mlrl family's registration, conformance with the testing kit, and input validation."""

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.experiments.runner import evaluate_split
from multilabel_core.experiments.search import accepts_unlabeled
from multilabel_core.kernels import RBFKernel
from multilabel_core.testing.checks import check_method
from multilabel_core_plugins.mlrl import BSVM, MLRL, SSMLRL

METHODS = {"mlrl": MLRL, "ssmlrl": SSMLRL, "bsvm": BSVM}

#: Tolerances tight enough that two fits of one problem agree far below the scores' scale.
TIGHT = {
    MLRL: {"tol": 1e-9, "smo_tol": 1e-9, "max_iter": 1000},
    SSMLRL: {"tol": 1e-9, "smo_tol": 1e-9, "max_iter": 1000},
    BSVM: {"tol": 1e-9},
}


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=80, n_features=6, n_labels=4, random_state=1)
    return dataset.X, dataset.Y


@pytest.mark.parametrize("name", sorted(METHODS))
def test_registration(name):
    spec = multilabel_core.get_method(name)
    assert spec.estimator is METHODS[name] and spec.plugin == "mlrl"
    assert "Zhang & Yeung" in spec.citation and "relationship learning" in spec.citation
    low = [1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1]
    grids = {"mlrl": {"lam": low}, "bsvm": {"lam": low},
             "ssmlrl": {"lam1": [1e-4, 1e-3, 0.01], "lam2": [1e-5, 1e-4, 1e-3]}}  # fmt: skip
    assert spec.param_grid == grids[name]
    assert spec.parts["loss"] == "hinge"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_conformance(name):
    check_method(name)


@pytest.mark.parametrize("cls", [MLRL, BSVM, SSMLRL])
def test_sparse_input_gives_the_dense_model(cls, data):
    X, Y = data
    dense = cls(kernel="linear", **TIGHT[cls]).fit(X, Y)
    sparse = cls(kernel="linear", **TIGHT[cls]).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.decision_function(sp.csc_matrix(X)), dense.decision_function(X), atol=1e-6)


@pytest.mark.parametrize("cls", [MLRL, BSVM, SSMLRL])
def test_precomputed_kernel_gives_the_rbf_model(cls, data):
    X, Y = data
    kernel = RBFKernel().resolve(X[:60])
    features = cls(kernel=kernel, **TIGHT[cls]).fit(X[:60], Y[:60])
    precomputed = cls(kernel="precomputed", **TIGHT[cls]).fit(kernel(X[:60]), Y[:60])
    np.testing.assert_allclose(precomputed.decision_function(kernel(X[60:], X[:60])), features.decision_function(X[60:]),
                               atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("cls", [MLRL, BSVM])
def test_column_cache_gives_the_precomputed_model(cls, data):
    # 80 x 80 float64 is 0.05 MB: a 0.01 MB budget makes SMO cache columns instead.
    X, Y = data
    whole, columns = cls(**TIGHT[cls]).fit(X, Y), cls(cache_size=0.01, **TIGHT[cls]).fit(X, Y)
    np.testing.assert_allclose(columns.decision_function(X), whole.decision_function(X), atol=1e-6)


@pytest.mark.parametrize(
    ("cls", "params", "message"),
    [
        (MLRL, {"lam": 0.0}, "lam must be > 0"),
        (MLRL, {"smo_tol": -1.0}, "smo_tol must be > 0"),
        (MLRL, {"cache_size": 0}, "cache_size must be > 0"),
        (MLRL, {"warm_start": "yes"}, "warm_start must be True or False"),
        (MLRL, {"kernel": "sigmoid"}, "kernel must be a registered kernel name"),
        (MLRL, {"max_iter": 0}, "max_iter must be >= 1"),
        (BSVM, {"lam": -1.0}, "lam must be > 0"),
        (BSVM, {"gamma": 0.0}, "gamma must be > 0"),
        (SSMLRL, {"lam2": 0.0}, "lam2 must be > 0"),
        (SSMLRL, {"lam1": float("nan")}, "lam1 must be finite"),
    ],
)
def test_bad_parameters_are_named(cls, params, message, data):
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(*data)


def test_bad_unlabeled_rows_are_refused(data):
    X, Y = data
    with pytest.raises(ValueError, match="X_unlabeled has 5 features, X has 6"):
        SSMLRL().fit(X, Y, X_unlabeled=X[:, :5])
    with pytest.raises(ValueError, match="X_unlabeled contains NaN"):
        SSMLRL().fit(X, Y, X_unlabeled=np.full((3, 6), np.nan))
    with pytest.raises(ValueError, match="cannot use a precomputed kernel with unlabelled rows"):
        SSMLRL(kernel="precomputed").fit(X @ X.T, Y, X_unlabeled=X[:5] @ X.T)


def test_the_runner_passes_unlabelled_rows_to_ssmlrl(data):
    X, Y = data
    assert accepts_unlabeled(SSMLRL()) and not accepts_unlabeled(MLRL())
    rows = np.arange(len(Y))
    labeled, unlabeled = rows[:40], rows[40:]
    outcome = evaluate_split(SSMLRL(), {"lam1": 0.1, "lam2": 1.0}, X, Y, labeled, unlabeled, unlabeled)
    assert outcome["n_unlabeled"] == 40
    assert 0.0 < outcome["metrics"]["average_precision"] <= 1.0
