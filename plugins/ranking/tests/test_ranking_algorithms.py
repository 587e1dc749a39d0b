"""Algorithms 1 and 2 of Gu, Li & Han (CIKM 2011): optimality, the D-step, the bounds, eq. 32, the lambda-step."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.ranking import (
    CuttingPlaneSolver,
    FrobeniusLabelCovariance,
    RankingAlternatingSolver,
    RankingCDSolver,
)
from multilabel_core_plugins.ranking._problem import RankingTask
from multilabel_core_plugins.ranking.alternation import Coupling, InnerState, alternate, lambda_step, violation_scores
from multilabel_core_plugins.ranking.cutting_plane import most_violated_subset

from multilabel_core.validation import to_signs
from multilabel_core.base import Problem
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.regularizers import Frobenius
from multilabel_core.relations import Independent, LearnedCovariance
from multilabel_core.solvers import ConvergenceWarning, coupling_inverse
from multilabel_core.testing.checks import assert_kkt
from multilabel_core.testing.strategies import label_covariances


def problem(n=80, d=6, c=4, *, C=1.0, mu=None, seed=0):
    """Problem (6) on synthetic data: LaRank's parts when mu is None, CLaRank's otherwise."""
    data = make_correlated_multilabel(n_samples=n, n_features=d, n_labels=c, random_state=seed)
    regularizer, relation = (
        (Frobenius(), Independent()) if mu is None else (FrobeniusLabelCovariance(mu), LearnedCovariance())
    )
    return Problem(data.X, to_signs(data.Y), PairwiseRankingHinge(), regularizer, relation, LinearKernel(), C=C)


def upper_bounds(prob, step):
    """C / (|y_i| |ybar_i|) of every pair's row."""
    Y = prob.Y > 0
    return (prob.C / np.maximum(Y.sum(axis=1) * (~Y).sum(axis=1), 1))[step.pair_row]


def projected_gradient_check(run, prob):
    """Eq. 25 per pair, from the model's scores: G = (w_k - w_l)^T x_i + b_k - b_l - 1."""
    step = run.step
    scores = prob.X @ step.W + step.intercept
    G = scores[step.pair_row, step.pair_k] - scores[step.pair_row, step.pair_l] - 1.0
    assert_kkt(step.alpha, G, None, upper_bounds(prob, step), equality=False, tol=step.certificate.statistics["eps"])


@pytest.mark.parametrize(
    "solver, mu",
    [
        (RankingCDSolver(), None),
        (RankingAlternatingSolver(), 0.5),
        (CuttingPlaneSolver(n_features=3), None),
        (CuttingPlaneSolver(n_features=3), 0.5),
    ],
    ids=["larank", "clarank", "mlfs", "cmlfs"],
)
def test_the_last_alpha_step_meets_the_kkt_conditions_of_algorithm_1(solver, mu):
    # The re-weighted rows' scores equal the raw rows' scores with W on the raw features,
    # so eq. 25 can be checked on X itself whatever the feature weights.
    prob = problem(mu=mu)
    projected_gradient_check(solver.run(prob), prob)


def test_a_wrong_gradient_fails_the_kkt_check():
    prob = problem()
    run = RankingCDSolver().run(prob)
    step = run.step
    scores = prob.X @ step.W + step.intercept
    G = scores[step.pair_row, step.pair_k] - scores[step.pair_row, step.pair_l]  # the margin, not the gradient
    with pytest.raises(AssertionError, match="KKT violated"):
        assert_kkt(
            step.alpha, G, None, upper_bounds(prob, step), equality=False, tol=step.certificate.statistics["eps"]
        )


@pytest.mark.parametrize(
    "solver", [RankingAlternatingSolver(), CuttingPlaneSolver(n_features=3)], ids=["clarank", "cmlfs"]
)
@pytest.mark.parametrize("mu", [0.1, 10.0])
def test_the_learned_d_is_symmetric_positive_definite_with_trace_one(solver, mu):
    D = solver.run(problem(mu=mu)).covariance
    np.testing.assert_array_equal(D, D.T)
    assert np.linalg.eigvalsh(D).min() > 0.0
    assert np.trace(D) == pytest.approx(1.0, abs=1e-12)


def test_the_d_step_is_theorem_3_4_on_the_reweighted_weights():
    # D minimises tr(W_z D^-1 W_z^T) over {D > 0, tr D = 1}: any other feasible D gives more.
    prob = problem(mu=1.0)
    run = RankingAlternatingSolver().run(prob)
    W_z = np.vstack([run.step.W, run.step.intercept])
    D = LearnedCovariance().update(W_z.T @ W_z)
    best = np.trace(W_z @ np.linalg.solve(D, W_z.T))
    assert best == pytest.approx(np.linalg.svd(W_z, compute_uv=False).sum() ** 2, rel=1e-6)  # (tr C^1/2)^2
    rng = np.random.default_rng(0)
    for _ in range(20):
        A = rng.standard_normal((4, 4))
        other = A @ A.T + 1e-3 * np.eye(4)
        other /= np.trace(other)
        assert np.trace(W_z @ np.linalg.solve(other, W_z.T)) >= best * (1 - 1e-9)


@pytest.mark.parametrize("mu", [0.1, 1.0, 10.0])
def test_the_clarank_objective_never_increases(mu):
    # Alpha-steps at the tightest certified gap: at the default 1e-3 the alternation may stop after
    # two steps (a third within the solve's precision is discarded), and whether it does depends on
    # the draw, which make_correlated_multilabel's eigenvectors tie to the BLAS kernels.
    run = RankingAlternatingSolver(tol=1e-8, cd=RankingCDSolver(tol=1e-9)).run(problem(mu=mu))
    assert len(run.objectives) > 2 and np.all(np.diff(run.objectives) <= 0.0)
    assert all(certificate.converged for certificate in run.certificates)


def inner_problem(mu, subsets, *, tol=1e-9, max_iter=500, seed=0):
    prob = problem(n=60, d=5, c=3, mu=mu, seed=seed)
    coupling = Coupling.from_problem(RankingAlternatingSolver(), prob)
    T = subsets.shape[0]
    state = InnerState(alpha=None, covariance=coupling.initial(), subset_weights=np.full(T, 1.0 / T))
    cd = RankingCDSolver(tol=1e-9)
    return alternate(
        cd,
        RankingTask.from_problem(prob),
        coupling,
        subsets,
        state,
        np.random.default_rng(0),
        tol=tol,
        max_iter=max_iter,
    )


def test_the_inner_objective_never_increases_with_lambda_and_d_learned():
    subsets = np.array([[1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 0, 1, 1]], dtype=bool)
    objectives = inner_problem(1.0, subsets, tol=1e-12, max_iter=50).objectives
    assert len(objectives) > 3 and np.all(np.diff(objectives) <= 0.0)


def every_subset(d, m):
    return np.array([[j in chosen for j in range(d)] for chosen in itertools.combinations(range(d), m)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cutting_plane_bounds_are_monotone_and_bracket_the_relaxed_optimum(seed):
    # MLFS (mu = 0): theta*, the optimum over the hull of every subset, is the inner problem
    # with all of them in the working set; l_t <= theta* <= u_t (Theorem 3.5).
    d, m = 5, 2
    prob = problem(n=60, d=d, c=3, seed=seed)
    run = CuttingPlaneSolver(n_features=m, tol=1e-6, cd=RankingCDSolver(tol=1e-9)).run(prob)
    bounds = np.array(run.bound_history)
    optimum = inner_problem(None, every_subset(d, m), seed=seed).step.certificate.primal
    assert np.all(np.diff(bounds[:, 0]) >= 0.0) and np.all(np.diff(bounds[:, 1]) <= 0.0)
    assert np.all(bounds[:, 0] <= optimum * (1 + 1e-6))
    assert np.all(bounds[:, 1] >= optimum * (1 - 1e-4))
    assert bounds[-1, 1] == pytest.approx(optimum, rel=1e-3)  # and the cutting plane gets there


def test_every_lower_bound_lies_below_every_upper_bound():
    run = CuttingPlaneSolver(n_features=2, max_iter=6, tol=1e-9).run(problem(n=60, d=6, c=3))
    lower, upper = np.array(run.bound_history).T
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
    task = RankingTask(X, np.zeros((7, D.shape[0]), dtype=np.int8), 1.0, True)
    q, _ = violation_scores(task, beta, R_inv)
    chosen = quadratic_term(X, beta, R_inv, most_violated_subset(q, m))
    best = max(quadratic_term(X, beta, R_inv, p) for p in every_subset(d, m))
    assert chosen == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_eq_32_as_printed_with_r_picks_a_less_violated_subset():
    # R^-1 = diag(0.9, 0.1) (D = diag(0.9, 0.1), mu = 0.9 * 0.1 / 0.1 ... any D, mu with this R^-1).
    # Feature 0 has V row (1, 0), feature 1 (0, 0.5): R^-1 scores 0.9 and 0.025, R scores 1.11 and 2.5.
    R_inv = np.diag([0.9, 0.1])
    X = np.array([[1.0, 0.0], [0.0, 0.5]])  # beta = I, so V = X^T beta = X^T
    beta = np.eye(2)
    task = RankingTask(X, np.zeros((2, 2), dtype=np.int8), 1.0, False)
    with_inverse, _ = violation_scores(task, beta, R_inv)
    as_printed, _ = violation_scores(task, beta, np.linalg.inv(R_inv))
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
        run = RankingCDSolver(tol=1e-6).run(problem(C=C))
        assert 0.0 <= run.certificate.relative_gap <= 1e-6


def test_a_gap_below_round_off_is_not_reached_and_says_so():
    # eps stops at SMALLEST_EPS; a tol below what double precision certifies leaves the solve unconverged, loudly.
    with pytest.warns(ConvergenceWarning, match=r"RankingCDSolver did not converge: relative duality gap .* > tol=1e-16"):
        run = RankingCDSolver(tol=1e-16).run(problem())
    assert not run.certificate.converged and run.certificate.relative_gap > 1e-16


@pytest.mark.parametrize("solver, mu", [(RankingCDSolver(), None), (RankingAlternatingSolver(), 1.0)])
def test_a_warm_start_at_the_solution_has_little_left_to_do(solver, mu):
    # The solution carries alpha (dual) and D (relation): restarting there costs a fifth of the epochs at most.
    prob = problem(mu=mu)
    solution, certificate = solver.solve(prob)
    warm_solution, warm = solver.solve(prob, warm_start=solution)
    assert sum(warm.statistics["inner_iterations"]) <= sum(certificate.statistics["inner_iterations"]) / 5
    np.testing.assert_allclose(warm_solution.coef, solution.coef, atol=1e-2 * np.abs(solution.coef).max())
