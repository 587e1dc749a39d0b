"""SMO with Omega = I against scikit-learn's SVC (LIBSVM), and SMOSolver in the framework.

BSVM (Zhang & Yeung, *Multi-Label Relationship Learning*, eq. 12) is problem (10) with
Omega~ = I / lambda and C = 1/n.  Per label it is SVC's dual with C_svc = 1/(n lambda),
rescaled: alpha = lambda alpha_svc and h = lambda h_svc (multilabel_core.solvers.smo).
Decision values do not change.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.svm import SVC

from multilabel_core.base import CapabilityError, Problem, Solution
from multilabel_core.datasets import load_dataset
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import LinearKernel, PrecomputedKernel, RBFKernel
from multilabel_core.losses import Hinge, SquaredHinge
from multilabel_core.regularizers import Frobenius, LabelCovariance, NuclearNorm
from multilabel_core.relations import Independent, LearnedCovariance
from multilabel_core.solvers.smo import KernelSource, SMOSolver, kernel_expansion, smo_solve
from multilabel_core.testing.strategies import label_covariances, multilabel_problems

RTOL = 1e-4


def svc_per_label(K, Y, C_svc, tol):
    """alpha_svc (n, L), SVC's dual objective h_svc per label and its decision values."""
    n, n_labels = Y.shape
    alpha, objectives, decisions = np.zeros((n, n_labels)), np.zeros(n_labels), np.zeros((n, n_labels))
    for i in range(n_labels):
        svc = SVC(C=C_svc, kernel="precomputed", tol=tol).fit(K, Y[:, i])
        beta = np.zeros(n)
        beta[svc.support_] = svc.dual_coef_[0]
        # SVC orders its classes (-1, +1) so that dual_coef_ = y alpha (a positive decision means +1).
        alpha[:, i] = beta * Y[:, i]
        objectives[i] = 0.5 * beta @ K @ beta - np.abs(beta).sum()
        decisions[:, i] = svc.decision_function(K)
    return alpha, objectives, decisions


def relative(a, b) -> float:
    """Largest difference relative to the largest |b|, at least 1 (the margin's scale)."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0))


def assert_bsvm_matches_svc(K, Y, lam, tol):
    n, n_labels = Y.shape
    ours = smo_solve(K, Y, np.eye(n_labels) / lam, 1.0 / n, tol=tol)
    alpha_svc, h_svc, decisions = svc_per_label(K, Y, 1.0 / (n * lam), tol)
    B = ours.solution.dual * Y
    h = 0.5 * np.einsum("ji,jk,ki->i", B, K, B) / lam - ours.solution.dual.sum(axis=0)
    assert relative(h, lam * h_svc) <= RTOL
    assert -ours.certificate.dual == pytest.approx(lam * h_svc.sum(), rel=RTOL)
    assert relative(ours.solution.model_state["scores"], decisions) <= RTOL
    return ours, alpha_svc


@given(multilabel_problems(n_samples=st.integers(6, 40), n_labels=st.integers(1, 3)), st.sampled_from([0.01, 1.0]))
def test_bsvm_is_svc_label_by_label(problem, lam):
    X, Y01 = problem
    Y = 2.0 * Y01 - 1.0
    K = RBFKernel(gamma=0.1)(X)
    ours, alpha_svc = assert_bsvm_matches_svc(K, Y, lam, tol=1e-9)
    if np.linalg.eigvalsh(K).min() > 1e-6:  # strictly convex: alpha is unique
        np.testing.assert_allclose(ours.solution.dual, lam * alpha_svc, atol=RTOL / Y.shape[0])


@pytest.mark.parametrize("lam", [0.01, 1.0])
def test_bsvm_is_svc_on_emotions(datasets_dir, lam):
    dataset = load_dataset(datasets_dir / "emotions.arff")
    X = np.asarray(dataset.X, dtype=np.float64)
    Y = 2.0 * dataset.Y - 1.0
    K = RBFKernel().resolve(X)(X)
    assert_bsvm_matches_svc(K, Y, lam, tol=1e-6)


def test_omega_identity_scaled_and_c_scaled_give_one_model():
    """(Omega~, C) = (I / lambda, 1/n) and (I, 1/(n lambda)): the same W and b, alphas scaled by lambda."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    Y = np.sign(X[:, :2] + rng.standard_normal((50, 2)))
    K = RBFKernel(gamma=0.3)(X)
    lam = 0.05
    paper = smo_solve(K, Y, np.eye(2) / lam, 1 / 50, tol=1e-10)
    svc_scale = smo_solve(K, Y, np.eye(2), 1 / (50 * lam), tol=1e-10)
    np.testing.assert_allclose(paper.solution.dual, lam * svc_scale.solution.dual, atol=1e-9)
    np.testing.assert_allclose(paper.solution.dual_coef, svc_scale.solution.dual_coef, atol=1e-8)
    np.testing.assert_allclose(paper.solution.model_state["scores"], svc_scale.solution.model_state["scores"], atol=1e-8)
    assert paper.certificate.dual == pytest.approx(lam * svc_scale.certificate.dual, rel=1e-9)


# -- SMOSolver and the framework --------------------------------------------------------


def problem_with(X, Y, **parts):
    defaults = dict(loss=Hinge(), regularizer=Frobenius(), relation=Independent(), kernel=LinearKernel(), C=1.0)
    defaults |= parts
    return Problem(X, Y, defaults.pop("loss"), defaults.pop("regularizer"), defaults.pop("relation"),
                   defaults.pop("kernel"), **defaults)


@pytest.mark.parametrize(
    "parts, missing",
    [
        (dict(loss=SquaredHinge()), "SquaredHinge has dual_box = .* and dual_diagonal = 0.5"),
        (dict(regularizer=NuclearNorm()), "regularizer.label_gram"),
        (dict(relation=LearnedCovariance()), "fixed label relation"),
        (dict(fit_intercept=False), "fit_intercept=True"),
    ],
)
def test_solver_refuses_problems_it_cannot_solve(parts, missing):
    X = np.eye(4)
    Y = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    with pytest.raises(CapabilityError, match=missing):
        SMOSolver().check(problem_with(X, Y, **parts))


@pytest.mark.parametrize("value, field", [(0.0, "tol"), (0, "max_iter"), (-1.0, "cache_size")])
def test_solver_settings_are_validated(value, field):
    with pytest.raises(ValueError, match=field):
        SMOSolver(**{field: value})


def test_a_tolerance_below_what_float64_resolves_is_refused_everywhere_smo_is_reached():
    # A tol of 1e-300 was accepted, and an MLRL fit of 30 rows then spent SMO's 10^7-step budget
    # in each of its alternation steps (12 s) without ever meeting it.
    import multilabel_core as mlc
    from multilabel_core.solvers import SMO_TOL_FLOOR

    Y = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    with pytest.raises(ValueError, match="tol=1e-300 is below 1e-15"):
        SMOSolver(tol=1e-300)
    with pytest.raises(ValueError, match="tol=1e-16 is below 1e-15"):
        smo_solve(np.eye(4), Y, np.eye(1), 1.0, tol=1e-16)
    X = np.random.default_rng(0).standard_normal((12, 3))
    for method in ("mlrl", "mtrl"):
        with pytest.raises(ValueError, match="smo_tol=1e-300 is below"):
            mlc.make_method(method, smo_tol=1e-300).fit(X, (X[:, :2] > 0).astype(int))
    assert smo_solve(np.eye(4), Y, np.eye(1), 1.0, tol=SMO_TOL_FLOOR).certificate.converged


@given(multilabel_problems(n_samples=st.integers(6, 25), n_labels=st.just(3), sparse=None),
       label_covariances(n_labels=st.just(3)))
def test_solver_solves_the_problem_primal_with_label_gram_as_omega(problem, omega):
    X, Y01 = problem
    Y = 2.0 * Y01 - 1.0
    kernel = RBFKernel(gamma=0.2)
    fit = SMOSolver(tol=1e-8).solve(
        problem_with(X, Y, regularizer=LabelCovariance(omega), kernel=kernel, C=0.7)
    )
    solution, certificate = fit.solution, fit.certificate
    direct = smo_solve(KernelSource(kernel, X), Y, omega, 0.7, tol=1e-8)
    np.testing.assert_allclose(solution.dual_coef, direct.solution.dual_coef, atol=1e-12)
    assert solution.coef is None and certificate.solver == "SMOSolver"
    # Decision values on new rows: the kernel expansion, here on the training rows.
    np.testing.assert_allclose(kernel_expansion(kernel, X, X, solution.dual_coef, solution.intercept),
                               direct.solution.model_state["scores"], atol=1e-8)
    # A warm start from the Solution recovers alpha (up to round-off) and stops within one pass.
    warm_fit = SMOSolver(tol=1e-8).solve(
        problem_with(X, Y, regularizer=LabelCovariance(omega), kernel=kernel, C=0.7), warm_start=solution
    )
    assert warm_fit.converged and warm_fit.n_iter <= Y.shape[1]
    np.testing.assert_allclose(warm_fit.solution.dual_coef, solution.dual_coef, atol=1e-10)


def test_precomputed_kernel_problem_and_composed_estimator():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    Y01 = (X[:, :2] + 0.5 * rng.standard_normal((40, 2)) > 0).astype(int)
    K = RBFKernel(gamma=0.5)(X)
    omega = np.array([[0.6, 0.2], [0.2, 0.4]])
    estimator = ComposedEstimator(
        loss="hinge", regularizer=LabelCovariance(omega), kernel=PrecomputedKernel(), solver=SMOSolver(tol=1e-8), C=2.0
    ).fit(K, Y01)
    direct = smo_solve(K, 2.0 * Y01 - 1.0, omega, 2.0, tol=1e-8)
    np.testing.assert_allclose(estimator.decision_function(K), direct.solution.model_state["scores"], atol=1e-8)
    assert estimator.certificate_.converged and estimator.certificate_.gap >= 0


def test_kernel_expansion_validates_shapes():
    with pytest.raises(ValueError, match="dual_coef"):
        kernel_expansion(LinearKernel(), np.ones((2, 3)), np.ones((4, 3)), np.ones((3, 2)), np.zeros(2))


def test_warm_start_from_a_solution_checks_its_shape():
    X = np.eye(4)
    Y = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    problem = problem_with(X, Y)
    zero = Solution(coef=None, intercept=np.zeros(2), dual_coef=np.zeros((4, 2)))
    solution = SMOSolver().solve(problem, warm_start=zero).solution
    assert solution.dual_coef.shape == (4, 2)
    with pytest.raises(ValueError, match="shape"):
        SMOSolver().solve(problem, warm_start=Solution(coef=None, intercept=np.zeros(2), dual_coef=np.zeros((3, 2))))
