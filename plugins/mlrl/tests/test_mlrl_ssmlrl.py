"""SSMLRL (section 4): the data-dependent kernel of eq. (22), the Omega-step with F, inductive prediction."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel, RBFKernel
from multilabel_core.relations import psd_sqrt
from multilabel_core.testing.strategies import feature_matrices
from multilabel_core_plugins.mlrl import MLRL, SSMLRL, DataDependentKernel

TIGHT = {"tol": 1e-9, "smo_tol": 1e-9, "max_iter": 2000}


@pytest.fixture(scope="module")
def split():
    dataset = make_correlated_multilabel(n_samples=150, n_features=6, n_labels=4, random_state=5)
    X, Y = dataset.X, dataset.Y
    return X[:50], Y[:50], X[50:130], X[130:]


def assert_same_weights(model, reference, X):
    """The two models' W^T phi(x) agree on X (their decision values without the biases)."""
    np.testing.assert_allclose(model.decision_function(X) - model.intercept_,
                               reference.decision_function(X) - reference.intercept_, atol=1e-6)  # fmt: skip


def explicit_k_prime(base, X, Z, X_unlabeled, ratio):
    """Eq. (22) written out with an explicit inverse (reference only)."""
    inverse = np.linalg.inv(ratio * np.eye(len(X_unlabeled)) + base(X_unlabeled))
    return base(X, Z) - base(X, X_unlabeled) @ inverse @ base(X_unlabeled, Z)


@given(
    feature_matrices(n_samples=st.integers(1, 12), n_features=st.just(3), sparse=None),
    feature_matrices(n_samples=st.integers(1, 12), n_features=st.just(3), sparse=None),
    st.sampled_from([1e-2, 1.0, 100.0]),
)
def test_data_dependent_kernel_is_eq_22(X, X_unlabeled, ratio):
    base = RBFKernel(gamma=0.02)
    kernel = DataDependentKernel(base, X_unlabeled, ratio)
    Xd = X.toarray() if sp.issparse(X) else X
    Ud = X_unlabeled.toarray() if sp.issparse(X_unlabeled) else X_unlabeled
    expected = explicit_k_prime(base, Xd, Xd, Ud, ratio)
    np.testing.assert_allclose(kernel(X), expected, atol=1e-9)
    np.testing.assert_allclose(kernel(X, X[:1]), expected[:, :1], atol=1e-9)
    np.testing.assert_allclose(kernel.diagonal(X), np.diag(expected), atol=1e-9)
    # K~ is a Schur complement of a PSD matrix: PSD.
    assert np.linalg.eigvalsh(kernel(X)).min() >= -1e-9


def test_k_prime_tends_to_k_as_lambda2_vanishes(split):
    X, _, X_unlabeled, X_new = split
    base = RBFKernel().resolve(np.vstack([X, X_unlabeled]))
    K = base(X_new, X)
    # rho = lambda_1 / lambda_2: the correction is O(1 / rho).
    gaps = [
        np.abs(DataDependentKernel(base, X_unlabeled, 0.1 / lam2)(X_new, X) - K).max() for lam2 in (1e-4, 1e-6, 1e-8)
    ]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-5
    assert gaps[1] / gaps[2] == pytest.approx(100.0, rel=0.05)


def test_without_unlabelled_rows_ssmlrl_is_mlrl(split):
    X, Y, _, X_new = split
    mlrl = MLRL(lam=0.1).fit(X, Y)
    for unlabeled in (None, np.empty((0, X.shape[1]))):
        ssmlrl = SSMLRL(lam1=0.1, lam2=3.0).fit(X, Y, X_unlabeled=unlabeled)
        assert ssmlrl.n_unlabeled_ == 0
        # Exact: without unlabelled rows SSMLRL._fit calls MLRL's _fit_relation with the same kernel,
        # lambda and settings, so both run the same operations on identical inputs in one process.
        np.testing.assert_array_equal(ssmlrl.decision_function(X_new), mlrl.decision_function(X_new))
        np.testing.assert_array_equal(ssmlrl.label_covariance_, mlrl.label_covariance_)
        assert ssmlrl.objective_history_ == mlrl.objective_history_


def test_as_lambda2_vanishes_ssmlrl_tends_to_mlrl_on_the_labelled_rows(split):
    X, Y, X_unlabeled, X_new = split
    kernel = RBFKernel(gamma=0.05)
    mlrl = MLRL(lam=0.1, kernel=kernel, **TIGHT).fit(X, Y)
    ssmlrl = SSMLRL(lam1=0.1, lam2=1e-12, kernel=kernel, **TIGHT).fit(X, Y, X_unlabeled=X_unlabeled)
    # W is unique (the objective is strictly convex in it), b need not be: a label without a free
    # alpha takes the midpoint of an interval of optimal biases.  Compare W^T phi(x) and the objective.
    assert_same_weights(ssmlrl, mlrl, X_new)
    assert ssmlrl.objective_history_[-1] == pytest.approx(mlrl.objective_history_[-1], rel=1e-8)


def test_the_solver_sees_k_tilde_and_predicts_inductively_with_k_prime(split):
    X, Y, X_unlabeled, X_new = split
    lam1, lam2 = 0.1, 0.5
    model = SSMLRL(lam1=lam1, lam2=lam2).fit(X, Y, X_unlabeled=X_unlabeled)
    assert model.n_unlabeled_ == len(X_unlabeled) and model.X_fit_.shape[0] == len(X) + len(X_unlabeled)
    # The RBF width is the mean pairwise distance of the labelled and unlabelled rows (section 5.2).
    assert model.kernel_ == RBFKernel().resolve(np.vstack([X, X_unlabeled]))
    k_prime = DataDependentKernel(model.kernel_, X_unlabeled, lam1 / lam2)
    # SSMLRL is MLRL (lambda = lambda_1) on the labelled rows with the kernel k'.
    reference = MLRL(lam=lam1, kernel=k_prime).fit(X, Y)
    assert model.objective_history_ == pytest.approx(reference.objective_history_, rel=1e-10)
    np.testing.assert_allclose(model.label_covariance_, reference.label_covariance_, rtol=1e-8, atol=1e-14)
    # Inductive prediction: t = k'(x, X_l) (alpha * Y) Omega / lambda_1 + b.
    B = model.alpha_ * (2.0 * Y - 1.0) / lam1
    expected = k_prime(X_new, X) @ B @ model.label_covariance_ + model.intercept_
    np.testing.assert_allclose(model.decision_function(X_new), expected, atol=1e-9)
    np.testing.assert_allclose(reference.decision_function(X_new), expected, atol=1e-8)


def test_the_omega_step_is_lambda1_wtw_plus_lambda2_ftf(split):
    # Linear kernel: W and F = X_u^T W are explicit.  The solver's Omega-step uses D^T K~ D, which must be
    # A = lambda_1 W^T W + lambda_2 F^T F divided by lambda_1 (the paper's update, up to the trace scaling).
    X, Y, X_unlabeled, _ = split
    lam1, lam2 = 0.1, 0.5
    model = SSMLRL(lam1=lam1, lam2=lam2, kernel="linear", **TIGHT).fit(X, Y, X_unlabeled=X_unlabeled)
    W = model.X_fit_.T @ model.dual_coef_  # W = [X_l; X_u]^T [D; Gamma-part]
    F = X_unlabeled @ W
    A = lam1 * W.T @ W + lam2 * F.T @ F
    D = model.dual_coef_[: len(X)]
    K_tilde = DataDependentKernel(LinearKernel(), X_unlabeled, lam1 / lam2)(X)
    np.testing.assert_allclose(A, lam1 * D.T @ K_tilde @ D, rtol=1e-8, atol=1e-12 * np.abs(A).max())
    # At the fixed point of the alternation, Omega = A^(1/2) / tr(A^(1/2)) (+ the epsilon of LearnedCovariance).
    root = psd_sqrt(A)
    np.testing.assert_allclose(model.label_covariance_, root / np.trace(root), atol=1e-4)


def test_objective_is_non_increasing(split):
    X, Y, X_unlabeled, _ = split
    model = SSMLRL(lam1=0.01, lam2=1.0).fit(X, Y, X_unlabeled=X_unlabeled)
    assert len(model.certificate_) == model.n_iter_ >= 2
    assert np.all(np.diff(model.objective_history_) <= 0.0)
    assert all(certificate.converged for certificate in model.certificate_)


def test_sparse_unlabelled_rows(split):
    X, Y, X_unlabeled, X_new = split
    dense = SSMLRL(kernel="linear", **TIGHT).fit(X, Y, X_unlabeled=X_unlabeled)
    sparse = SSMLRL(kernel="linear", **TIGHT).fit(sp.csr_matrix(X), Y, X_unlabeled=sp.csr_matrix(X_unlabeled))
    assert sp.issparse(sparse.X_fit_)
    assert_same_weights(sparse, dense, X_new)
