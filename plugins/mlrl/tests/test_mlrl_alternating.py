"""MLRL's alternating algorithm (section 2.2): certificates, monotone objective (6), Omega, prediction, composition."""

import attrs
import numpy as np
import pytest
import scipy.optimize
from hypothesis import example, given
from hypothesis import strategies as st

from multilabel_core.validation import to_signs
from multilabel_core.base import CapabilityError, Kernel, Problem
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import LinearKernel, RBFKernel
from multilabel_core.losses import Hinge, SquaredHinge
from multilabel_core.regularizers import Frobenius, LabelCovariance, NuclearNorm
from multilabel_core.relations import Independent, LearnedCovariance, psd_sqrt
from multilabel_core.solvers import AlternatingSolver, ConvergenceWarning, LBFGSSolver, SMOSolver
from multilabel_core.testing.checks import check_duality_gap
from multilabel_core.testing.rounding import gamma
from multilabel_core.testing.strategies import multilabel_problems
from multilabel_core_plugins.mlrl import BSVM, MLRL


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=120, n_features=8, n_labels=5, random_state=3)
    return dataset.X, dataset.Y


def objective_6(model, X, Y) -> float:
    """Problem (6) at the fitted (W, b, Omega), from the fitted attributes alone.

    With W = phi(X)^T B Omega (B = alpha * Y / lambda), tr(W Omega^-1 W^T) = tr(B Omega B^T K),
    which needs no Omega^-1 (Omega may be close to singular).
    """
    B = model.alpha_ * to_signs(Y) / model.lam
    hinge = np.maximum(0.0, 1.0 - to_signs(Y) * model.decision_function(X)).sum() / len(Y)
    regulariser = np.sum((model.kernel_(X) @ B) * (B @ model.label_covariance_))
    return hinge + model.lam / 2.0 * regulariser


def test_one_certificate_per_outer_step(data):
    X, Y = data
    model = MLRL(lam=0.05).fit(X, Y)
    assert model.n_iter_ == len(model.certificate_) == len(model.objective_history_) >= 2
    for certificate, objective in zip(model.certificate_, model.objective_history_):
        assert certificate.solver == "SMOSolver" and certificate.converged
        check_duality_gap(certificate, tol=1e-3)
        # The certificates are in SMO's units: problem (6) divided by lambda.
        assert objective == pytest.approx(model.lam * certificate.primal, rel=1e-12)
    # Warm starts: every step after the first starts from the previous alphas and takes far fewer SMO steps.
    assert max(c.n_iter for c in model.certificate_[1:]) < model.certificate_[0].n_iter / 2


@given(
    multilabel_problems(n_samples=st.integers(8, 40), n_features=st.integers(1, 5), n_labels=st.integers(2, 4)),
    st.sampled_from([1e-3, 0.1, 10.0]),
    st.sampled_from([LinearKernel(), RBFKernel(gamma=0.05)]),
)
def test_objective_is_non_increasing_and_is_problem_6(problem, lam, kernel):
    X, Y = problem
    model = MLRL(lam=lam, kernel=kernel, max_iter=500).fit(X, Y)
    history = np.array(model.objective_history_)
    assert np.all(np.diff(history) <= 0.0)
    assert history[-1] == pytest.approx(objective_6(model, X, Y), rel=1e-8, abs=1e-12)


@given(multilabel_problems(n_samples=st.integers(8, 40), n_labels=st.integers(1, 4)), st.sampled_from([1e-2, 1.0]))
def test_label_covariance_is_symmetric_positive_definite_with_trace_one(problem, lam):
    X, Y = problem
    model = MLRL(lam=lam, kernel=RBFKernel(gamma=0.05)).fit(X, Y)
    omega = model.label_covariance_
    np.testing.assert_array_equal(omega, omega.T)
    assert np.linalg.eigvalsh(omega).min() > 0.0
    assert np.trace(omega) == pytest.approx(1.0, rel=1e-12)
    correlation = model.label_correlation_
    np.testing.assert_array_equal(np.diag(correlation), 1.0)
    assert np.all(np.abs(correlation) <= 1.0)
    np.testing.assert_allclose(correlation, omega / np.sqrt(np.outer(np.diag(omega), np.diag(omega))), atol=1e-12)


def test_prediction_is_the_formula_of_section_2_3(data):
    # t_* = Omega~ (M * Y)^T k_*^T + b with Omega~ = Omega / lambda and M the paper's alphas (box 1/n).
    X, Y = data
    model = MLRL(lam=0.05).fit(X[:100], Y[:100])
    assert model.alpha_.min() >= 0.0 and model.alpha_.max() <= (1.0 + 1e-12) / 100
    np.testing.assert_allclose((model.alpha_ * to_signs(Y[:100])).sum(axis=0), 0.0, atol=1e-15)
    k_star = model.kernel_(X[100:], X[:100])
    t = (model.label_covariance_ / model.lam @ (model.alpha_ * to_signs(Y[:100])).T @ k_star.T).T + model.intercept_
    np.testing.assert_allclose(model.decision_function(X[100:]), t, atol=1e-10)
    # predict is [decision_function > 0], the same computation: exact.  The formula's t is another
    # product order, held above to 1e-10, so its sign must agree only where |t| exceeds that.
    predictions = model.predict(X[100:])
    np.testing.assert_array_equal(predictions, (model.decision_function(X[100:]) > 0).astype(int))
    decided = np.abs(t) > 1e-10
    np.testing.assert_array_equal(predictions[decided], (t[decided] > 0).astype(int))


def test_the_omega_step_without_w_equals_the_closed_form_on_explicit_w(data):
    # Linear kernel: W = X^T D is explicit, so the kernelised W^T W = D^T K D can be checked against it.
    X, Y = data
    problem = Problem(
        X, to_signs(Y), Hinge(), LabelCovariance(np.eye(5) / 5), LearnedCovariance(), LinearKernel(), C=0.1
    )
    with pytest.warns(ConvergenceWarning, match="max_iter=1 model steps"):
        first = AlternatingSolver(max_iter=1).solve(problem)
    W = X.T @ first.solution.dual_coef
    expected = psd_sqrt(W.T @ W) + 1e-8 * np.eye(5)
    expected /= np.trace(expected)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 model steps"):
        second = AlternatingSolver(max_iter=2).solve(problem)
    assert len(second.steps) == 2
    np.testing.assert_allclose(second.solution.relation, expected, rtol=1e-9, atol=1e-14)


def test_the_kernel_is_computed_once_per_fit(data):
    @attrs.frozen
    class Counting(Kernel):
        base: Kernel
        calls: list = attrs.field(factory=list, eq=False)

        def __call__(self, X, Z=None):
            self.calls.append("train" if Z is None else "cross")
            return self.base(X, Z)

        def diagonal(self, X):
            return self.base.diagonal(X)

    kernel = Counting(RBFKernel(gamma=0.1))
    model = MLRL(kernel=kernel).fit(*data)
    assert model.n_iter_ >= 3 and kernel.calls == ["train"]


def test_warm_start_continues_from_the_previous_fit(data):
    X, Y = data
    # A tol the joint gap can certify here: its lower bound keeps a slack of about 6e-4 at lambda = 0.1 (the learned
    # Omega is nearly singular), so a tighter tol would end every fit on the stall rule, warm or cold.
    tight = {"tol": 1e-3, "smo_tol": 1e-6, "max_iter": 1000}
    model = MLRL(lam=0.1, warm_start=True, **tight).fit(X, Y)
    first = model.decision_function(X)
    model.fit(X, Y)
    assert model.n_iter_ <= 2 and model.certificate_[0].n_iter <= 5
    np.testing.assert_allclose(model.decision_function(X), first, atol=1e-4)
    # Along a grid: the fit at lambda = 1 from the lambda = 0.1 solution reaches the cold fit at lambda = 1.
    warm = model.set_params(lam=1.0).fit(X, Y)
    cold = MLRL(lam=1.0, **tight).fit(X, Y)
    assert warm.certificate_[0].n_iter < cold.certificate_[0].n_iter
    # Both reach the minimum of (6) within their joint gaps, which is all the certificates promise: (6) is not strongly
    # convex along Omega's small eigen-directions, so the scores themselves have no certified distance.
    slack = warm.joint_gap_history_[-1] + cold.joint_gap_history_[-1]
    assert warm.objective_history_[-1] == pytest.approx(cold.objective_history_[-1], rel=slack)


def test_not_reaching_tol_warns(data):
    with pytest.warns(ConvergenceWarning, match="AlternatingSolver did not converge: max_iter=2"):
        model = MLRL(max_iter=2, tol=1e-12).fit(*data)
    assert model.n_iter_ == 2


def test_composed_mlrl_equals_the_preset(data):
    X, Y = data
    lam, n, n_labels = 1e-3, len(Y), Y.shape[1]  # a lambda whose joint gap the default tol certifies on these data
    composed = ComposedEstimator(
        loss="hinge",
        regularizer=LabelCovariance(np.eye(n_labels) / n_labels),
        relation="learned_covariance",
        kernel=RBFKernel(),
        solver=AlternatingSolver(inner=SMOSolver(tol=1e-3), max_iter=100, tol=1e-4),
        C=1.0 / (n * lam),
    ).fit(X, Y)
    preset = MLRL(lam=lam).fit(X, Y)
    np.testing.assert_allclose(composed.decision_function(X), preset.decision_function(X), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(composed.label_covariance_, preset.label_covariance_, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(composed.label_correlation_, preset.label_correlation_, atol=1e-6)
    summary = composed.certificate_
    assert summary.solver == "AlternatingSolver(SMOSolver)" and summary.converged
    assert composed.n_iter_ == preset.n_iter_ == len(summary.statistics["objective_history"])
    np.testing.assert_allclose(lam * np.array(summary.statistics["objective_history"]), preset.objective_history_,
                               rtol=1e-8)  # fmt: skip


def test_a_fixed_relation_takes_one_step_and_is_bsvm(data):
    X, Y = data
    lam = 0.1
    problem = Problem(
        X, to_signs(Y), Hinge(), Frobenius(), Independent(), RBFKernel().resolve(X), C=1.0 / (len(Y) * lam)
    )
    result = AlternatingSolver(inner=SMOSolver(tol=1e-3)).solve(problem)
    assert len(result.steps) == 1 and result.converged
    np.testing.assert_array_equal(result.solution.relation, np.eye(Y.shape[1]))
    bsvm = BSVM(lam=lam).fit(X, Y)
    np.testing.assert_allclose(result.solution.dual_coef, bsvm.dual_coef_, atol=1e-12)
    np.testing.assert_allclose(result.solution.intercept, bsvm.intercept_, atol=1e-12)


def test_a_primal_inner_solver_learns_omega_too(data):
    # Squared hinge, linear kernel, L-BFGS on the primal: the Omega-step uses coef directly.
    X, Y = data
    problem = Problem(X, to_signs(Y), SquaredHinge(), LabelCovariance(), LearnedCovariance(), LinearKernel(), C=0.1)
    result = AlternatingSolver(inner=LBFGSSolver()).solve(problem)
    assert result.converged and len(result.steps) >= 2
    assert np.all(np.diff(result.history["objective"]) <= 0.0)
    assert (
        np.trace(result.solution.relation) == pytest.approx(1.0)
        and np.linalg.eigvalsh(result.solution.relation).min() > 0
    )


def test_capabilities_are_checked_before_solving(data):
    X, Y = data
    parts = {"loss": Hinge(), "regularizer": NuclearNorm(), "relation": LearnedCovariance(), "kernel": LinearKernel()}
    with pytest.raises(CapabilityError, match="regularizer.with_relation, which NuclearNorm does not provide"):
        AlternatingSolver().solve(Problem(X, to_signs(Y), **parts))
    parts.update(loss=SquaredHinge(), regularizer=LabelCovariance())
    with pytest.raises(CapabilityError, match=r"SMOSolver solves the dual \(10\).*SquaredHinge has dual_box"):
        AlternatingSolver().solve(Problem(X, to_signs(Y), **parts))


def test_smo_warm_starts_are_exact_under_an_ill_conditioned_omega(data):
    # A learned Omega can approach singularity; SMO's Solution carries alpha itself (Solution.dual),
    # so a warm start from the optimum does not go through Omega^-1 and stops at once.
    X, Y = data
    eigenvalues = np.array([1e-11, 1e-9, 1e-3, 0.3, 0.7])
    rotation = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 5)))[0]
    omega = (rotation * eigenvalues) @ rotation.T
    omega = (omega + omega.T) / 2.0
    problem = Problem(X, to_signs(Y), Hinge(), LabelCovariance(omega), Independent(), RBFKernel(gamma=0.1), C=10.0)
    solver = SMOSolver(tol=1e-6)
    fit = solver.solve(problem)
    solution, certificate = fit.solution, fit.certificate
    again = solver.solve(problem, warm_start=solution)
    warm, warm_certificate = again.solution, again.certificate
    assert certificate.converged and warm_certificate.converged and warm_certificate.n_iter == 0
    # Exact: no step was taken, so the returned alpha is the warm start's, with no arithmetic on it.
    np.testing.assert_array_equal(warm.dual, solution.dual)


def _fixed_omega_optimum(X, signs, C, omega) -> float:
    """min over (W, b) of (6)/lambda at a fixed Omega: one tight SMO solve (the reference's inner problem)."""
    problem = Problem(X, signs, Hinge(), LabelCovariance(omega), Independent(), LinearKernel(), C=C)
    certificate = SMOSolver(tol=1e-9).solve(problem).certificate
    return certificate.primal


def test_joint_bounds_bracket_the_optimum_found_by_a_reference_search_over_omega():
    # Two labels: Omega = [[a, c], [c, 1 - a]] has two free parameters, and min over (W, b) at fixed
    # Omega is convex in Omega; Nelder-Mead over (a, c) on tight SMO solves is an independent reference.
    dataset = make_correlated_multilabel(n_samples=40, n_features=4, n_labels=2, random_state=1)
    X, signs = dataset.X, to_signs(dataset.Y)
    lam = 0.05
    C = 1.0 / (len(X) * lam)

    def at(params):
        a, c = params
        omega = np.array([[a, c], [c, 1.0 - a]])
        if np.linalg.eigvalsh(omega)[0] <= 1e-9:
            return np.inf
        return _fixed_omega_optimum(X, signs, C, omega)

    reference = scipy.optimize.minimize(at, [0.5, 0.0], method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-10}).fun
    problem = Problem(X, signs, Hinge(), LabelCovariance(np.eye(2) / 2), LearnedCovariance(), LinearKernel(), C=C)
    result = AlternatingSolver(inner=SMOSolver(tol=1e-6), tol=1e-10, max_iter=500).solve(problem)
    best_upper = min(upper for _, upper in result.history["bounds"])
    best_lower = max(lower for lower, _ in result.history["bounds"])
    assert best_lower <= reference * (1 + 1e-7) and reference <= best_upper * (1 + 1e-7)
    assert result.history["objective"][-1] == pytest.approx(reference, rel=1e-5)
    assert result.history["joint_gap"][-1] < 1e-2


@given(
    multilabel_problems(n_samples=st.integers(8, 40), n_features=st.integers(1, 5), n_labels=st.integers(2, 4)),
    st.sampled_from([1e-3, 0.1, 10.0]),
)
# Two identical labels: W is rank one, and the square root of gram's rounding-level second
# eigenvalue (2e-16) once raised U above J by 3.6e-9 J.
@example((np.array([[0.0]] + [[4.0]] * 7), np.array([[1, 1]] + [[0, 0]] * 7)), 1e-3)
def test_joint_bounds_are_ordered_and_the_gap_history_never_increases(problem, lam):
    X, Y = problem
    problem = Problem(X, to_signs(Y), Hinge(), LabelCovariance(np.eye(Y.shape[1]) / Y.shape[1]), LearnedCovariance(),
                      RBFKernel(gamma=0.05), C=1.0 / (len(Y) * lam))  # fmt: skip
    result = AlternatingSolver(inner=SMOSolver(tol=1e-3), max_iter=500).solve(problem)
    gaps = np.array(result.history["joint_gap"])
    assert len(gaps) == len(result.history["objective"]) == len(result.history["bounds"])
    assert np.all(gaps >= -1e-9) and np.all(np.diff(gaps) <= 1e-12)
    for (lower, upper), objective, certificate in zip(result.history["bounds"], result.history["objective"], result.steps):
        # U_k = J_k - q + t^2/2 is (6) at W_k with the best Omega: q = tr(H Omega)/2 <= J_k is the
        # regulariser part of J_k and t^2/2 <= q (Cauchy-Schwarz over tr(Omega) = 1).  g = d + q -
        # lambda_max(H)/2 with lambda_max(H) >= tr(H Omega).  Both orderings are exact for the one
        # eigendecomposition H = V Lambda V^T that q, t and lambda_max are evaluated from (t from the
        # singular values of Lambda^(1/2) V^T Omega, backward stable); what is left is the rounding of
        # sums of at most L^2 + 3 terms (Higham eq. 3.5), each term at most |J_k| for U_k, and for g at
        # most |d|, |J_k| or lambda_max(H)/2 = d + q - g.
        rounding = gamma(Y.shape[1] ** 2 + 3)
        dual = certificate.dual
        # J_k is the step's primal, its regulariser part from the solver's own kernel products; q comes
        # from H = A^T K A, whose entries sum n^2 products: the two differ by that rounding (constant
        # rows of X, a kernel of equal entries, once put U above J by 2e-14 J).
        products = gamma(Y.shape[0] ** 2)
        assert upper <= objective + (rounding * 3.0 + products) * abs(objective)
        assert lower <= dual + rounding * (2.0 * abs(dual) + 2.0 * abs(objective) + abs(lower))
    assert MLRL(lam=lam, kernel=RBFKernel(gamma=0.05), max_iter=500).fit(X, Y).joint_gap_history_ == pytest.approx(gaps)
