"""Algorithm 2's cutting plane against the relaxed problem solved with every subset enumerated.

For tiny d the relaxed MLFS problem -- the primal (6) over W and the hull of all C(d, m)
subsets -- can be solved directly: minimise F(lambda) = max_alpha f(alpha, P^T lambda) over
the simplex of the weights of *every* subset, by projected gradient with eq. 31's
gradient ``-1/2 P q`` and an exact alpha-solve at every point (no alternation, no cutting
plane).  Its own certificate is the restricted gap ``sum_t lambda_t g_t - min_t g_t``,
which bounds F(lambda) - min F (F is convex): the optimum lies in [F - gap, F].
"""

import warnings

import attrs
import numpy as np
import pytest
from multilabel_core_plugins.ranking import CuttingPlaneSolver, RankingCDSolver, SubsetKernel
from multilabel_core_plugins.ranking.cutting_plane import INNER_FRACTION, relative_gap
from multilabel_core_plugins.ranking.simplex import project_simplex
from multilabel_core_plugins.ranking.subsets import violation_scores

from multilabel_core import ConvergenceWarning
from multilabel_core.base import Solution
from multilabel_core.solvers import AlternatingSolver
from multilabel_core.testing.reference import every_subset, ranking_problem, spectral_projected_gradient


def problem(d, *, mu=0.0, seed=0, n=60, c=3):
    return ranking_problem(d, mu=mu, seed=seed, n_samples=n, n_labels=c)


def restricted_gap(subsets, weights, q) -> float:
    """sum_t lambda_t g_t - min_t g_t with g = -1/2 P q (eq. 31): zero exactly at the simplex optimum."""
    g = -0.5 * subsets @ q
    return float(g @ weights - g.min())


def relaxed_optimum(prob, subsets):
    """min over the simplex of F(P^T lambda) (mu = 0) by projected gradient, an exact alpha-solve per point.

    Each point is solved by RankingCDSolver on the problem whose kernel is the working set at
    those weights (its own lambda-step is not used).  Returns F at the last point and its
    restricted gap: the minimum lies in [F - gap, F].  F is known to its solves' round-off
    (~1e-10), which ends the search's progress where F is that flat (measured: restricted gaps
    of 4e-8 to 1.2e-5 relative on these problems, the same after 100 or 500 iterations).
    """
    cd, identity = RankingCDSolver(tol=1e-11), np.eye(prob.n_labels)

    def evaluate(weights, state):
        kernel = SubsetKernel(subsets, weights=weights)
        start = None if state is None else Solution(coef=None, intercept=np.zeros(prob.n_labels), dual=state[1])
        with warnings.catch_warnings():
            # The reference asks for the tightest gap there is: the smallest eps ends each solve short of 1e-11.
            warnings.filterwarnings("ignore", "RankingCDSolver did not converge: relative duality gap", ConvergenceWarning)
            fit = cd.solve(attrs.evolve(prob, kernel=kernel), warm_start=start)
        q, _ = violation_scores(prob.X, fit.solution.model_state["beta"], identity, prob.fit_intercept)
        return fit.certificate.primal, -0.5 * subsets @ q, (q, fit.solution.dual)

    weights, value, (q, _) = spectral_projected_gradient(
        evaluate,
        np.full(len(subsets), 1.0 / len(subsets)),
        project_simplex,
        converged=lambda weights, value, state: restricted_gap(subsets, weights, state[0]) <= 1e-9 * abs(value),
        first_step=lambda g: 1.0 / np.ptp(g),
        max_iter=100,
    )
    return value, restricted_gap(subsets, weights, q)


@pytest.mark.parametrize("master", ["proximal", "kelley"])
@pytest.mark.parametrize("seed", [1, 4, 5])
def test_the_cutting_plane_closes_the_gap_at_the_optimum_over_every_subset(seed, master):
    # MLFS on d = 6, m = 2 (15 subsets): the stopping rule is met, and then both bounds of
    # Theorem 3.5 bracket the optimum over the hull of all subsets, u_t within tol of it.
    d, m, tol = 6, 2, 1e-4
    prob = problem(d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = CuttingPlaneSolver(n_features=m, tol=tol, max_iter=60, master=master).solve(prob)
    value, reference_gap = relaxed_optimum(prob, every_subset(d, m))
    assert reference_gap <= tol / 2 * abs(value)
    lower, upper = fit.history["bounds"][-1]
    assert fit.converged and relative_gap(lower, upper) <= tol
    assert lower <= value * (1 + 1e-12) and upper >= (value - reference_gap) * (1 - 1e-12)
    assert upper - (value - reference_gap) <= tol * max(1.0, abs(upper))


@pytest.mark.parametrize("master", ["proximal", "kelley"])
def test_the_bound_gap_is_below_tol_only_with_inner_solves_tighter_than_tol(master):
    # The gap u_t - l_t contains the last alpha-step's duality gap: the cutting plane asks
    # its inner problems for INNER_FRACTION of the gap, below the alpha-steps' own cd.tol.
    tol = 1e-4
    solver = CuttingPlaneSolver(n_features=2, tol=tol, max_iter=60, cd=RankingCDSolver(tol=1e-2), master=master)
    fit = solver.solve(problem(6, seed=3))
    assert fit.converged and relative_gap(*fit.history["bounds"][-1]) <= tol
    assert fit.steps[-1].relative_gap <= 1e-2 * INNER_FRACTION


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_the_restricted_master_lambda_meets_the_simplex_optimality_conditions(mu):
    # After the alternation on a fixed working set, eq. 31's gradient at the final alpha and
    # D is least on every subset with weight: the restricted gap vanishes.
    prob = problem(6, mu=mu, seed=4)
    subsets = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0], [1, 0, 0, 0, 0, 1]], dtype=bool)
    inner = AlternatingSolver(inner=RankingCDSolver(tol=1e-9), tol=1e-12, max_iter=300)
    fit = inner.solve(attrs.evolve(prob, kernel=SubsetKernel(subsets)))
    solution = fit.solution
    R_inv = AlternatingSolver.step_problem(prob, solution.relation).regularizer.label_gram(prob.n_labels)
    q, _ = violation_scores(prob.X, solution.model_state["beta"], R_inv, prob.fit_intercept)
    weights = solution.model_state["subset_weights"]
    assert weights.min() >= 0.0 and weights.sum() == pytest.approx(1.0)
    objective = fit.history["objective"][-1]
    assert restricted_gap(subsets, weights, q) <= 5e-5 * abs(objective)
    if mu == 0.0:  # and J is the restricted problem's optimum, solved without the alternation
        value, reference_gap = relaxed_optimum(prob, subsets)
        assert value - reference_gap - 1e-9 <= objective <= value + 1e-6 * abs(value)


@pytest.mark.parametrize("master", ["proximal", "kelley"])
def test_a_repeated_subset_is_solved_again_never_declared_converged_with_the_gap_open(master):
    # d = 3, m = 2: three subsets, so from the fourth iteration on every most violated subset
    # is already in the working set.  An unreachable tol must end with a warning, not with
    # "converged"; the working set never holds a subset twice.
    with pytest.warns(ConvergenceWarning, match="relative bound gap"):
        # 1e-14: unreachable, yet above the 8 machine epsilons below which the driver refuses a tol outright.
        fit = CuttingPlaneSolver(n_features=2, tol=1e-14, max_iter=12, master=master).solve(problem(3, seed=5))
    assert not fit.converged
    subsets = fit.solution.model_state["subsets"]
    assert len({tuple(p) for p in subsets}) == len(subsets) <= 3
    bounds = np.array(fit.history["bounds"])
    assert np.all(np.diff(bounds[:, 0]) >= 0.0) and np.all(np.diff(bounds[:, 1]) <= 0.0)


@pytest.mark.parametrize("master", ["proximal", "kelley"])
@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_the_max_iter_warning_reports_the_relative_gap_against_tol(mu, master):
    solver = CuttingPlaneSolver(n_features=2, max_iter=2, master=master)
    with pytest.warns(ConvergenceWarning) as record:
        fit = solver.solve(problem(8, mu=mu, seed=6))
    gap = relative_gap(*fit.history["bounds"][-1])
    assert not fit.converged and gap > solver.tol
    message = str(record[0].message)
    assert f"= {gap:.3g} > tol={solver.tol:g}" in message and "max_iter=2" in message
