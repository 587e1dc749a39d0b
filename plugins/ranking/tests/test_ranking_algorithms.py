"""Algorithms 1 and 2 of Gu, Li & Han (CIKM 2011) on the core's alternating driver.

Optimality of the alpha-steps, the D-step (Theorem 3.4), the joint certificate of CLaRank,
the model step's solution (its regulariser value, H, F), the bounds of Theorem 3.5, eq. 32,
the lambda-step (eq. 31), warm starts.
"""

import itertools

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.ranking import CuttingPlaneSolver, RankingCDSolver, SubsetKernel, ranking_alternating
from multilabel_core_plugins.ranking.cutting_plane import most_violated_subset
from multilabel_core_plugins.ranking.subsets import lambda_step, violation_scores

from multilabel_core.base import CapabilityError, Problem, Solution, WarmState
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.regularizers import Frobenius, FrobeniusLabelCovariance
from multilabel_core.relations import Independent, LearnedCovariance, psd_sqrt
from multilabel_core.solvers import AlternatingSolver, ConvergenceWarning
from multilabel_core_plugins.ranking.engine import coupling_inverse
from multilabel_core.testing.checks import assert_kkt
from multilabel_core.testing.strategies import label_covariances
from multilabel_core.validation import to_signs

SUBSETS = np.array([[1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 0, 1, 1]], dtype=bool)


def problem(n=80, d=6, c=4, *, C=1.0, mu=None, seed=0, kernel=None, fit_intercept=True):
    """Problem (6) on synthetic data: LaRank's parts when mu is None, CLaRank's otherwise."""
    data = make_correlated_multilabel(n_samples=n, n_features=d, n_labels=c, random_state=seed)
    regularizer, relation = (
        (Frobenius(), Independent()) if mu is None else (FrobeniusLabelCovariance(mu), LearnedCovariance())
    )
    kernel = LinearKernel() if kernel is None else kernel
    return Problem(
        data.X, to_signs(data.Y), PairwiseRankingHinge(), regularizer, relation, kernel, C=C, fit_intercept=fit_intercept
    )


def upper_bounds(prob):
    """C / (|y_i| |ybar_i|) of every pair's row, in the order of the loss's pairs."""
    Y = prob.Y > 0
    pair_row, _, _ = prob.loss.pairs(prob.Y)
    return (prob.C / np.maximum(Y.sum(axis=1) * (~Y).sum(axis=1), 1))[pair_row]


def pair_gradients(solution, prob):
    """Eq. 25 per pair, from the model's scores: G = (w_k - w_l)^T x_i + b_k - b_l - 1."""
    scores = prob.X @ solution.coef + solution.intercept
    pair_row, pair_k, pair_l = prob.loss.pairs(prob.Y)
    return scores[pair_row, pair_k] - scores[pair_row, pair_l] - 1.0


@pytest.mark.parametrize(
    "solver, mu",
    [
        (RankingCDSolver(), None),
        (ranking_alternating(), 0.5),
        (CuttingPlaneSolver(n_features=3), None),
        (CuttingPlaneSolver(n_features=3), 0.5),
    ],
    ids=["larank", "clarank", "mlfs", "cmlfs"],
)
def test_the_last_alpha_step_meets_the_kkt_conditions_of_algorithm_1(solver, mu):
    # The re-weighted rows' scores equal the raw rows' scores with W on the raw features,
    # so eq. 25 can be checked on X itself whatever the feature weights.
    prob = problem(mu=mu)
    fit = solver.solve(prob)
    G = pair_gradients(fit.solution, prob)
    assert_kkt(fit.solution.dual, G, None, upper_bounds(prob), equality=False, tol=fit.steps[-1].statistics["eps"])


def test_a_wrong_gradient_fails_the_kkt_check():
    prob = problem()
    fit = RankingCDSolver().solve(prob)
    G = pair_gradients(fit.solution, prob) + 1.0  # the margin, not the gradient
    with pytest.raises(AssertionError, match="KKT violated"):
        assert_kkt(fit.solution.dual, G, None, upper_bounds(prob), equality=False, tol=fit.certificate.statistics["eps"])


@pytest.mark.parametrize("solver", [ranking_alternating(), CuttingPlaneSolver(n_features=3)], ids=["clarank", "cmlfs"])
@pytest.mark.parametrize("mu", [0.1, 10.0])
def test_the_learned_d_is_symmetric_positive_definite_with_trace_one(solver, mu):
    D = solver.solve(problem(mu=mu)).solution.relation
    np.testing.assert_array_equal(D, D.T)
    assert np.linalg.eigvalsh(D).min() > 0.0
    assert np.trace(D) == pytest.approx(1.0, abs=1e-12)


def test_the_d_step_is_theorem_3_4_on_the_reweighted_weights():
    # D minimises tr(W_z D^-1 W_z^T) over {D > 0, tr D = 1}: any other feasible D gives more.
    prob = problem(mu=1.0)
    solution = ranking_alternating().solve(prob).solution
    W_z = np.vstack([solution.coef, solution.intercept])
    D = LearnedCovariance().update(W_z.T @ W_z)
    best = np.trace(W_z @ np.linalg.solve(D, W_z.T))
    assert best == pytest.approx(np.linalg.svd(W_z, compute_uv=False).sum() ** 2, rel=1e-6)  # (tr C^1/2)^2
    rng = np.random.default_rng(0)
    for _ in range(20):
        A = rng.standard_normal((4, 4))
        other = A @ A.T + 1e-3 * np.eye(4)
        other /= np.trace(other)
        assert np.trace(W_z @ np.linalg.solve(other, W_z.T)) >= best * (1 - 1e-9)


def test_the_driver_solves_the_next_model_step_at_theorem_3_4s_d():
    # Two model steps: the second is solved at D = (C^(1/2) + eps I) / tr, C = [W; b]^T [W; b] of the first.
    prob = problem(mu=1.0)
    first = RankingCDSolver().solve(AlternatingSolver.step_problem(prob, np.eye(4) / 4))
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        second = AlternatingSolver(inner=RankingCDSolver(), tol=1e-12, max_iter=2).solve(prob)
    W_z = np.vstack([first.solution.coef, first.solution.intercept])
    root = psd_sqrt(W_z.T @ W_z) + 1e-8 * np.eye(4)
    np.testing.assert_allclose(second.solution.relation, root / np.trace(root), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(second.steps[0].primal, first.certificate.primal)


@pytest.mark.parametrize("mu", [0.1, 1.0, 10.0])
def test_the_clarank_objective_never_increases(mu):
    # Alpha-steps at the tightest certified gap: at the default 1e-3 the alternation may stop after
    # two steps (a third within the solve's precision is discarded), and whether it does depends on
    # the draw, which make_correlated_multilabel's eigenvectors tie to the BLAS kernels.
    fit = ranking_alternating(tol=1e-8, cd=RankingCDSolver(tol=1e-9)).solve(problem(mu=mu))
    objectives = fit.history["objective"]
    assert len(objectives) > 2 and np.all(np.diff(objectives) <= 0.0)
    # Every model step is certified; whether the run is (its joint gap within 1e-8, at mu = 10 it stops at 2.3e-8)
    # is the joint certificate's business, tested below.
    assert all(certificate.converged for certificate in fit.steps)


@pytest.mark.parametrize("mu", [0.1, 1.0, 10.0])
def test_clarank_carries_a_joint_certificate_that_closes(mu):
    # The model step gives H and 1/2 tr(H R^-1), the regulariser the joint bounds over D
    # (relation_value, relation_dual): min_k U_k - max_k g_k bounds the distance to the optimum
    # of problem (6) (p = 1) over (W, b, D) whatever the path, and closes as the steps tighten.
    fit = ranking_alternating(tol=1e-10, max_iter=300, cd=RankingCDSolver(tol=1e-10)).solve(problem(mu=mu))
    gaps = np.array(fit.history["joint_gap"])
    assert len(gaps) == len(fit.steps) > 2
    assert np.all(np.diff(gaps) <= 0.0) and gaps.min() >= -1e-10
    assert gaps[-1] <= 1e-6
    lower, upper = np.array(fit.history["bounds"]).T
    assert np.all(lower <= upper.min() * (1 + 1e-10))


def test_the_joint_bounds_of_two_clarank_runs_from_different_starts_are_consistent():
    # Every g_k lies below min J and every U_k above it, whatever the path: the lower bounds of a run
    # started at a skewed D stay below the upper bounds of the run from I / c, and conversely.
    prob = problem(mu=1.0)
    solver = ranking_alternating(tol=1e-10, max_iter=300, cd=RankingCDSolver(tol=1e-10))
    runs = [
        solver.solve(prob),
        solver.solve(prob, warm_start=Solution(coef=None, intercept=np.zeros(4), relation=np.diag([0.7, 0.1, 0.1, 0.1]))),
    ]
    (lower_a, upper_a), (lower_b, upper_b) = (np.array(run.history["bounds"]).T for run in runs)
    assert runs[1].history["objective"][0] > runs[0].history["objective"][0]  # the skewed D starts elsewhere
    assert lower_b.max() <= upper_a.min() * (1 + 1e-12) and lower_a.max() <= upper_b.min() * (1 + 1e-12)


def test_the_model_steps_regulariser_value_and_h_match_its_certificate():
    # primal = 1/2 tr(H R^-1) + C loss, dual = sum alpha - 1/2 tr(H R^-1), with H the dual (7)'s
    # quadratic matrix V^T diag(s) V + (1^T beta)^T (1^T beta) (computed from beta, not from W).
    D = np.array([[0.4, 0.1, 0.0, 0.0], [0.1, 0.3, 0.0, 0.0], [0.0, 0.0, 0.2, 0.05], [0.0, 0.0, 0.05, 0.1]])
    for kernel, fit_intercept in [(LinearKernel(), True), (SubsetKernel([[1, 0, 1, 0, 0, 0]]), True), (LinearKernel(), False)]:
        prob = problem(mu=None, kernel=kernel, fit_intercept=fit_intercept)
        prob = attrs.evolve(prob, regularizer=FrobeniusLabelCovariance(2.0, covariance=D))
        fit = RankingCDSolver(tol=1e-6).solve(prob)
        state, certificate = fit.solution.relation_state, fit.certificate
        scores = prob.X @ fit.solution.coef + fit.solution.intercept
        loss = prob.C * prob.loss.value(prob.Y, scores)
        assert certificate.primal - loss == pytest.approx(state.regularizer_value, rel=1e-9)
        assert certificate.dual == pytest.approx(fit.solution.dual.sum() - state.regularizer_value, rel=1e-9)
        R_inv = prob.regularizer.label_gram(4)
        assert state.regularizer_value == pytest.approx(0.5 * np.trace(state.dual_gram @ R_inv), rel=1e-12)
        # On the selected features the regulariser itself: 1/2 tr(W_s R W_s^T) + 1/2 b R b^T (b when fitted).
        s = fit.solution.model_state["feature_weights"]
        W_s = np.vstack([fit.solution.coef[s > 0], fit.solution.intercept[None, :]])
        assert prob.regularizer.value(W_s) == pytest.approx(state.regularizer_value, rel=1e-9)


def test_with_lambda_learned_the_step_gives_no_h_and_f_uses_the_weights_after_the_lambda_step():
    # F^T F = sum_j (w^j)^T w^j / s'_j + b^T b with s' after eq. 31's lambda-step: the D-step of
    # Theorem 3.4 sees the features re-weighted as the next alpha-step will.
    prob = problem(n=60, d=5, c=3, kernel=SubsetKernel(SUBSETS))
    fit = RankingCDSolver(tol=1e-8).solve(prob)
    fitted = fit.solution.model_state
    assert fit.solution.relation_state.dual_gram is None
    np.testing.assert_array_equal(fitted["subset_weights"], np.full(3, 1 / 3))
    s_next = fitted["next_subset_weights"] @ SUBSETS
    assert not np.allclose(s_next, fitted["feature_weights"])  # the lambda-step moved
    support = s_next > 0
    G = fit.solution.coef[support].T @ (fit.solution.coef[support] / s_next[support, None])
    G += np.outer(fit.solution.intercept, fit.solution.intercept)
    F = fit.solution.relation_state.weight_factor
    np.testing.assert_allclose(F.T @ F, G, rtol=1e-10, atol=1e-14)


def test_the_subset_weights_come_from_the_warm_start_else_the_kernel():
    prob = problem(n=60, d=5, c=3, kernel=SubsetKernel(SUBSETS, weights=[0.5, 0.25, 0.25]))
    solver = RankingCDSolver()
    assert solver.learns_state(prob) and not solver.learns_state(problem()) and not solver.learns_state(
        problem(kernel=SubsetKernel(np.ones((1, 6), dtype=bool)))
    )
    kernel_weights = solver.solve(prob).solution.model_state["subset_weights"]
    np.testing.assert_array_equal(kernel_weights, [0.5, 0.25, 0.25])
    given_weights = np.array([0.2, 0.3, 0.5])
    start = Solution(coef=None, intercept=np.zeros(3), warm_state=_weights_state(subset_weights=given_weights))
    np.testing.assert_array_equal(solver.solve(prob, warm_start=start).solution.model_state["subset_weights"], given_weights)
    start = attrs.evolve(start, warm_state=_weights_state(subset_weights=given_weights, next_subset_weights=np.full(3, 1 / 3)))
    np.testing.assert_array_equal(solver.solve(prob, warm_start=start).solution.model_state["subset_weights"], np.full(3, 1 / 3))
    start = attrs.evolve(start, warm_state=_weights_state(subset_weights=np.full(4, 0.25)))  # another working set's: not used
    np.testing.assert_array_equal(solver.solve(prob, warm_start=start).solution.model_state["subset_weights"], kernel_weights)


def _weights_state(**weights):
    """A RankingCDSolver warm state carrying only subset weights (no alphas: a cold alpha-step)."""
    return WarmState("RankingCDSolver", fixed=weights)


def inner_problem(mu, subsets, *, tol=1e-9, max_iter=500, seed=0):
    """Algorithm 2's inner problem on the working set ``subsets``: the driver over RankingCDSolver."""
    prob = problem(n=60, d=subsets.shape[1], c=3, mu=mu, seed=seed, kernel=SubsetKernel(subsets))
    return AlternatingSolver(inner=RankingCDSolver(tol=1e-9), tol=tol, max_iter=max_iter).solve(prob)


@pytest.mark.parametrize("mu", [None, 1.0], ids=["lambda", "lambda_and_d"])
def test_the_inner_objective_never_increases_with_lambda_learned(mu):
    fit = inner_problem(mu, SUBSETS, tol=1e-12, max_iter=50)
    objectives = fit.history["objective"]
    assert len(objectives) > 3 and np.all(np.diff(objectives) <= 0.0)
    assert "joint_gap" not in fit.history  # no joint bound with lambda learned


def test_one_subset_and_a_fixed_relation_is_one_model_step():
    fit = inner_problem(None, SUBSETS[:1])
    assert len(fit.steps) == 1 and fit.converged


def every_subset(d, m):
    return np.array([[j in chosen for j in range(d)] for chosen in itertools.combinations(range(d), m)])


@pytest.mark.parametrize("master", ["proximal", "kelley"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cutting_plane_bounds_are_monotone_and_bracket_the_relaxed_optimum(seed, master):
    # MLFS (mu = 0): theta*, the optimum over the hull of every subset, is the inner problem
    # with all of them in the working set; l_t <= theta* <= u_t (Theorem 3.5).
    d, m = 5, 2
    prob = problem(n=60, d=d, c=3, seed=seed)
    fit = CuttingPlaneSolver(n_features=m, tol=1e-6, cd=RankingCDSolver(tol=1e-9), master=master).solve(prob)
    bounds = np.array(fit.history["bounds"])
    optimum = inner_problem(None, every_subset(d, m), seed=seed).history["objective"][-1]
    assert np.all(np.diff(bounds[:, 0]) >= 0.0) and np.all(np.diff(bounds[:, 1]) <= 0.0)
    assert np.all(bounds[:, 0] <= optimum * (1 + 1e-6))
    assert np.all(bounds[:, 1] >= optimum * (1 - 1e-4))
    assert bounds[-1, 1] == pytest.approx(optimum, rel=1e-3)  # and the cutting plane gets there


@pytest.mark.parametrize("master", ["proximal", "kelley"])
def test_every_lower_bound_lies_below_every_upper_bound(master):
    with pytest.warns(ConvergenceWarning, match="CuttingPlaneSolver"):
        fit = CuttingPlaneSolver(n_features=2, max_iter=6, tol=1e-9, master=master).solve(problem(n=60, d=6, c=3))
    lower, upper = np.array(fit.history["bounds"]).T
    assert lower.max() <= upper.min() * (1 + 1e-9)


def quadratic_term(X, beta, R_inv, p):
    """sum_{k,l} R^-1_kl beta_k^T K_p beta_l with K_p = (X o p)(X o p)^T + 1 1^T, the p-dependent part of (7)."""
    Z = X * p
    K = Z @ Z.T + 1.0
    return float(np.sum(R_inv * (beta.T @ K @ beta)))


@settings(deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 6),
    st.integers(1, 5),
    label_covariances(n_labels=st.integers(2, 4)),
    st.floats(0.01, 100.0),
)
def test_eq_32_with_r_inverse_finds_the_most_violated_subset(seed, d, m, D, mu):
    # The dual (7) at p is sum alpha - 1/2 quadratic_term(p): the most violated subset maximises
    # the quadratic term; eq. 32's top-m scores (V R^-1 V^T)_jj find it (brute force over all subsets).
    m = min(m, d)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((7, d))
    beta = rng.standard_normal((7, D.shape[0]))
    D = D / np.trace(D)
    R_inv = coupling_inverse(D, mu)
    q, _ = violation_scores(X, beta, R_inv, True)
    chosen = quadratic_term(X, beta, R_inv, most_violated_subset(q, m))
    best = max(quadratic_term(X, beta, R_inv, p) for p in every_subset(d, m))
    assert chosen == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_eq_32_as_printed_with_r_picks_a_less_violated_subset():
    # R^-1 = diag(0.9, 0.1) (D = diag(0.9, 0.1), mu = 0.9 * 0.1 / 0.1 ... any D, mu with this R^-1).
    # Feature 0 has V row (1, 0), feature 1 (0, 0.5): R^-1 scores 0.9 and 0.025, R scores 1.11 and 2.5.
    R_inv = np.diag([0.9, 0.1])
    X = np.array([[1.0, 0.0], [0.0, 0.5]])  # beta = I, so V = X^T beta = X^T
    beta = np.eye(2)
    with_inverse, _ = violation_scores(X, beta, R_inv, False)
    as_printed, _ = violation_scores(X, beta, np.linalg.inv(R_inv), False)
    by_inverse, by_printed = most_violated_subset(with_inverse, 1), most_violated_subset(as_printed, 1)
    assert by_inverse.tolist() == [True, False] and by_printed.tolist() == [False, True]
    Z = lambda p: X * p
    term = lambda p: float(np.sum(R_inv * (beta.T @ Z(p) @ Z(p).T @ beta)))
    assert term(by_inverse) > term(by_printed)


@given(st.integers(0, 2**32 - 1), st.integers(2, 6))
def test_the_lambda_step_decreases_h_to_a_stationary_point_on_the_simplex(seed, T):
    rng = np.random.default_rng(seed)
    d = 8
    subsets = rng.random((T, d)) < 0.5
    subsets[np.arange(T), rng.integers(0, d, T)] = True
    covered = subsets.any(axis=0)
    a = np.where(covered, rng.random(d) * 10, 0.0)
    start = np.full(T, 1.0 / T)
    lam = lambda_step(subsets, start, a)

    def h(weights):
        s = weights @ subsets
        return 0.5 * np.sum(a[covered] / s[covered])

    assert lam.min() >= 0.0 and lam.sum() == pytest.approx(1.0)
    assert h(lam) <= h(start) + 1e-12
    # Stationarity (KKT on the simplex): every subset with weight has the least gradient.
    gradient = -0.5 * subsets[:, covered] @ (a[covered] / (lam @ subsets[:, covered]) ** 2)
    active = lam > 1e-6
    assert gradient[active].max() - gradient.min() <= 1e-3 * (np.abs(gradient).max() + 1.0)


def test_the_alpha_step_reaches_the_requested_relative_gap():
    for C in (0.1, 10.0):
        fit = RankingCDSolver(tol=1e-6).solve(problem(C=C))
        assert 0.0 <= fit.certificate.relative_gap <= 1e-6


def test_a_gap_below_round_off_is_not_reached_and_says_so():
    # eps stops at SMALLEST_EPS; a tol below what double precision certifies leaves the solve unconverged, loudly.
    with pytest.warns(ConvergenceWarning, match=r"RankingCDSolver did not converge: relative duality gap .* > tol=1e-16"):
        fit = RankingCDSolver(tol=1e-16).solve(problem())
    assert not fit.certificate.converged and fit.certificate.relative_gap > 1e-16


@pytest.mark.parametrize("solver, mu", [(RankingCDSolver(), None), (ranking_alternating(), 1.0)], ids=["larank", "clarank"])
def test_a_warm_start_at_the_solution_has_little_left_to_do(solver, mu):
    # The solution carries alpha (dual), the eps reached and D (relation): restarting there costs a
    # fifth of the epochs at most.
    prob = problem(mu=mu)
    cold = solver.solve(prob)
    warm = solver.solve(prob, warm_start=cold.solution)
    assert sum(c.n_iter for c in warm.steps) <= sum(c.n_iter for c in cold.steps) / 5
    np.testing.assert_allclose(warm.solution.coef, cold.solution.coef, atol=1e-2 * np.abs(cold.solution.coef).max())


def test_the_ranking_solver_refuses_a_learned_relation_and_the_driver_a_regulariser_without_with_relation():
    with pytest.raises(CapabilityError, match="fixed label relation.*LearnedCovariance.*never runs its update"):
        RankingCDSolver().solve(problem(mu=1.0))
    prob = attrs.evolve(problem(), relation=LearnedCovariance())
    with pytest.raises(Exception, match="with_relation"):
        ranking_alternating().solve(prob)


def test_subset_weights_off_the_simplex_in_a_warm_start_are_refused():
    prob = problem(n=60, d=5, c=3, kernel=SubsetKernel(SUBSETS))
    start = Solution(coef=None, intercept=np.zeros(3), warm_state=_weights_state(subset_weights=np.array([0.5, 0.5, 0.5])))
    with pytest.raises(ValueError, match="simplex"):
        RankingCDSolver().solve(prob, warm_start=start)
