"""BSVM (section 3, eq. 12) is m independent SVMs: scikit-learn's SVC (LIBSVM) label by label.

``1/n sum_i hinge + lambda/2 ||w_j||^2`` is SVC's problem with ``C_svc = 1/(n lambda)``; the
paper's alphas (box 1/n) are lambda times SVC's (multilabel_core.solvers.smo).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.kernels import RBFKernel
from multilabel_core.testing.strategies import multilabel_problems
from multilabel_core_plugins.mlrl import BSVM, MLRL

svm = pytest.importorskip("sklearn.svm")


@given(
    multilabel_problems(n_samples=st.integers(6, 40), n_features=st.integers(1, 4), n_labels=st.integers(1, 4)),
    st.sampled_from([1e-3, 0.1, 10.0]),
)
def test_bsvm_is_one_svc_per_label(problem, lam):
    X, Y = problem
    n = len(Y)
    kernel = RBFKernel(gamma=0.05)
    K = kernel(X)
    C_svc, tol = 1.0 / (n * lam), 1e-9
    model = BSVM(lam=lam, kernel=kernel, tol=tol).fit(X, Y)
    # The primal 1/2 ||w||^2 + C sum xi is 1-strongly convex in w: a point with duality gap g is within
    # sqrt(2 g) of the optimum, so |w^T phi(x) - w*^T phi(x)| <= sqrt(2 g) (k(x, x) = 1).  SMO's gap is
    # certified; LIBSVM's is at most tol * sum C.
    distance = np.sqrt(2.0 * max(model.certificate_.gap, 0.0)) + np.sqrt(2.0 * tol * n * C_svc)
    X_new = X[: min(n, 5)] + 0.5
    for j in range(Y.shape[1]):
        svc = svm.SVC(C=C_svc, kernel="precomputed", tol=tol).fit(K, Y[:, j])
        # W is unique; the bias is only determined up to an interval when no alpha is free, so
        # compare the kernel parts of the decision values, and the biases when SVC has free alphas.
        scores = model.decision_function(X_new)[:, j] - model.intercept_[j]
        reference = svc.decision_function(kernel(X_new, X)) - svc.intercept_[0]
        np.testing.assert_allclose(scores, reference, atol=distance + 1e-9)
        alpha_svc = np.zeros(n)
        alpha_svc[svc.support_] = np.abs(svc.dual_coef_[0])
        free = (alpha_svc > 1e-9 * C_svc) & (alpha_svc < (1.0 - 1e-9) * C_svc)
        if free.any():
            assert model.intercept_[j] == pytest.approx(svc.intercept_[0], abs=distance + 1e-6)
        smallest = np.linalg.eigvalsh(K).min()
        if smallest > 1e-6:
            # The dual is smallest-strongly convex in y alpha: alpha is unique, within sqrt(2 g / smallest).
            np.testing.assert_allclose(model.alpha_[:, j] / lam, alpha_svc, atol=distance / np.sqrt(smallest) + 1e-12)


def test_bsvm_is_mlrl_with_omega_fixed_to_the_identity():
    # Section 3: K_ML = Omega/lambda (x) K degenerates to BSVM's I/lambda (x) K at Omega = I; MLRL's first
    # step is at Omega = I/m, i.e. BSVM with lambda m.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    Y = (X @ rng.standard_normal((4, 3)) + 0.3 * rng.standard_normal((60, 3)) > 0).astype(int)
    bsvm = BSVM(lam=0.3, tol=1e-9).fit(X, Y)
    with pytest.warns(Warning, match="max_iter=1 model steps"):
        first_step = MLRL(lam=0.1, max_iter=1, smo_tol=1e-9).fit(X, Y)
    np.testing.assert_allclose(first_step.decision_function(X) - first_step.intercept_,
                               bsvm.decision_function(X) - bsvm.intercept_, atol=1e-7)  # fmt: skip
    assert bsvm.certificate_.solver == "SMOSolver" and bsvm.n_iter_ == bsvm.certificate_.n_iter
