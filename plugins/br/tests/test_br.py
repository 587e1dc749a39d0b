"""Binary relevance: equals LIBLINEAR's L2-SVM per label with either solver, dense = sparse, certified, learns real data."""

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.datasets import make_correlated_multilabel, read_mulan
from multilabel_core.metrics import average_precision
from multilabel_core.testing.checks import check_duality_gap, check_method
from multilabel_core_plugins.br import PARTS, SOLVERS, BinaryRelevance

#: Tight settings per solver: CD needs many epochs at large C (thousands at C = 100), each cheap.
TIGHT = {"cd": {"tol": 1e-8, "max_iter": 1000000}, "lbfgs": {"tol": 1e-8, "max_iter": 10000}}


@pytest.fixture(scope="module")
def synthetic():
    dataset = make_correlated_multilabel(n_samples=300, n_features=20, n_labels=6, random_state=0)
    return dataset.X, dataset.Y


def test_registration():
    spec = multilabel_core.get_method("br")
    assert spec.estimator is BinaryRelevance and spec.plugin == "br"
    assert "Boutell" in spec.citation and "Tsoumakas" in spec.citation
    assert spec.parts == PARTS
    assert spec.param_grid == {"C": [1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10]}
    assert isinstance(multilabel_core.make_method("br", C=0.1), BinaryRelevance)


def test_conformance():
    check_method("br")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_equals_liblinear_l2_svm_per_label(synthetic, C, solver):
    svm = pytest.importorskip("sklearn.svm")
    X, Y = synthetic[0][:120], synthetic[1][:120]
    model = BinaryRelevance(C=C, solver=solver, **TIGHT[solver]).fit(X, Y)
    for j in range(Y.shape[1]):
        # intercept_scaling=1: LIBLINEAR regularises the bias as the weight of a constant feature, like BR.
        reference = svm.LinearSVC(
            loss="squared_hinge", penalty="l2", dual=False, C=C, fit_intercept=True, intercept_scaling=1,
            tol=1e-12, max_iter=100000,
        ).fit(X, Y[:, j])
        scale = max(1.0, np.abs(reference.coef_).max())
        np.testing.assert_allclose(model.coef_[:, j], reference.coef_[0], atol=1e-5 * scale)
        np.testing.assert_allclose(model.intercept_[j], reference.intercept_[0], atol=1e-5 * scale)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_both_solvers_reach_the_same_model(synthetic, C):
    cd, lbfgs = (BinaryRelevance(C=C, solver=solver, **TIGHT[solver]).fit(*synthetic) for solver in SOLVERS)
    assert cd.certificate_.solver == "CDSolver" and lbfgs.certificate_.solver == "LBFGSSolver"
    scale = max(1.0, np.abs(lbfgs.coef_).max())
    np.testing.assert_allclose(cd.coef_, lbfgs.coef_, atol=1e-5 * scale)
    np.testing.assert_allclose(cd.intercept_, lbfgs.intercept_, atol=1e-5 * scale)
    np.testing.assert_allclose(cd.certificate_.primal, lbfgs.certificate_.primal, rtol=1e-9)


def test_solver_defaults_and_refusal(synthetic):
    assert BinaryRelevance().solver == "cd" and PARTS["solver"] == "cd"
    with pytest.raises(ValueError, match="solver must be one of"):
        BinaryRelevance(solver="smo").fit(*synthetic)


@pytest.mark.parametrize("solver", SOLVERS)
def test_dense_and_sparse_give_the_same_model(synthetic, solver):
    X, Y = synthetic
    X = np.where(np.abs(X) > 0.5, X, 0.0)
    dense = BinaryRelevance(solver=solver, tol=1e-8).fit(X, Y)
    for sparse in (sp.csr_matrix(X), sp.csc_matrix(X.astype(np.float32))):
        model = BinaryRelevance(solver=solver, tol=1e-8).fit(sparse, Y)
        np.testing.assert_allclose(model.coef_, dense.coef_, atol=1e-5)
        np.testing.assert_allclose(model.intercept_, dense.intercept_, atol=1e-5)
        # Two solves on two storages: the scores may differ by up to 1e-5 (sum_k |x_k| + 1), the
        # coefficients' tolerance carried through X w + b, so signs must agree only beyond that.
        scores = dense.decision_function(X)
        decided = np.abs(scores) > 1e-5 * (np.abs(X).sum(axis=1, keepdims=True) + 1.0)
        np.testing.assert_array_equal(model.predict(sparse)[decided], (scores[decided] > 0).astype(np.int64))


#: (solver, tol, relative gap bound): the default tolerance, then a tight one.
GAPS = [("cd", None, 1e-6), ("cd", 1e-8, 1e-9), ("lbfgs", None, 1e-5), ("lbfgs", 1e-8, 1e-9)]


@pytest.mark.parametrize("C", [0.01, 1.0])
@pytest.mark.parametrize("solver, tol, gap_tol", GAPS)
def test_certificate_duality_gap_is_small_and_nonnegative(synthetic, C, solver, tol, gap_tol):
    certificate = BinaryRelevance(C=C, tol=tol, solver=solver).fit(*synthetic).certificate_
    assert certificate.converged and certificate.solver == {"cd": "CDSolver", "lbfgs": "LBFGSSolver"}[solver]
    assert certificate.gap >= -1e-12 * max(1.0, abs(certificate.primal))
    check_duality_gap(certificate, tol=gap_tol)


@pytest.mark.parametrize("solver", SOLVERS)
def test_certificate_at_large_C(synthetic, solver):
    certificate = BinaryRelevance(C=100.0, solver=solver, **TIGHT[solver]).fit(*synthetic).certificate_
    assert certificate.converged
    check_duality_gap(certificate, tol=1e-9)


def test_learns_the_synthetic_data(synthetic):
    X, Y = synthetic
    model = BinaryRelevance().fit(X[:200], Y[:200])
    assert average_precision(Y[200:], model.decision_function(X[200:])) > 0.9


def test_learns_emotions(datasets_dir):
    dataset = read_mulan(datasets_dir / "emotions.arff")
    X, Y = dataset.X, dataset.Y
    order = np.random.default_rng(0).permutation(len(X))
    train, test = order[:400], order[400:]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    X = (X - mean) / np.where(std > 0, std, 1.0)
    model = BinaryRelevance(C=0.1).fit(X[train], Y[train])
    # BR with a linear SVM reaches about 0.79 average precision on emotions.
    assert average_precision(Y[test], model.decision_function(X[test])) > 0.75
    check_duality_gap(model.certificate_, tol=1e-6)
