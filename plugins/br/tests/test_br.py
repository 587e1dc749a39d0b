"""Binary relevance: equals LIBLINEAR's L2-SVM per label with either solver, dense = sparse, certified, learns real data."""

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.datasets import make_correlated_multilabel, read_mulan
from multilabel_core.metrics import average_precision
from multilabel_core.testing.checks import check_duality_gap, check_method
from multilabel_core.testing.reference import linear_svm_primal, strongly_convex_distance
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
    certificate = model.certificate_
    assert certificate.converged
    ours, ours_rounding, reference, reference_rounding, distance, finished = ([] for _ in range(6))
    for j in range(Y.shape[1]):
        signs = 2.0 * Y[:, j] - 1.0
        # intercept_scaling=1: LIBLINEAR regularises the bias as the weight of a constant feature, like BR.
        # Its primal solver (TRON) is deterministic; seeded all the same, as every LIBLINEAR reference here.
        svc = svm.LinearSVC(
            loss="squared_hinge", penalty="l2", dual=False, C=C, fit_intercept=True, intercept_scaling=1,
            tol=1e-12, max_iter=100000, random_state=0,
        ).fit(X, Y[:, j])
        for weights, intercept, values, roundings in (
            (model.coef_[:, j], model.intercept_[j], ours, ours_rounding),
            (svc.coef_[0], svc.intercept_[0], reference, reference_rounding),
        ):
            value, rounding = linear_svm_primal(X, signs, C, weights, intercept, bias_weight=intercept)
            values.append(value)
            roundings.append(rounding)
        difference = np.append(model.coef_[:, j] - svc.coef_[0], model.intercept_[j] - svc.intercept_[0])
        distance.append(np.linalg.norm(difference))
        finished.append(svc.n_iter_ < svc.max_iter)
    ours, reference, distance, finished = map(np.array, (ours, reference, distance, finished))
    ours_rounding, reference_rounding = np.array(ours_rounding), np.array(reference_rounding)
    # P = sum_j P_j (docs/methods/br.md, eq. 2) and P_k(v_k) >= P_k* for every k, so the certified
    # gap bounds each label: P_j* >= P_j(v_j) - gap.  The solver evaluated its gap from the same
    # margins; its rounding is counted as one more evaluation of the primal.
    slack = certificate.gap + ours_rounding.sum()
    lower = ours - ours_rounding - slack
    # LIBLINEAR's primal bounds P_j* from above whether or not it met its tolerance: it can never
    # beat the certified lower bound.
    assert np.all(reference + reference_rounding >= lower), (reference, lower)
    # P_j is 1-strongly convex in v_j = [w_j; b_j] (1/2 ||v_j||^2 plus a convex loss), so each
    # solution is within sqrt(2 (P_j(v) - P_j*)) of the minimiser.  The reference is trusted only
    # where it met its tolerance (elsewhere its distance bound is still true, but says nothing).
    assert finished.any()
    bound = strongly_convex_distance(ours + ours_rounding - lower) + strongly_convex_distance(
        reference + reference_rounding - lower
    )
    assert np.all(distance[finished] <= bound[finished]), (distance, bound)


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
