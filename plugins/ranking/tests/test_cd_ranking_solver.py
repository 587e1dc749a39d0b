"""RankingCDSolver's chained solves (eps, eps / 10, ...): one certificate that counts them all."""

import numpy as np

from multilabel_core.base import Problem, Solution, WarmState
from multilabel_core.kernels import LinearKernel
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.regularizers import Frobenius
from multilabel_core.relations import Independent
from multilabel_core.validation import check_random_state, to_signs
from multilabel_core_plugins.ranking.cd_solver import FIRST_EPS, RankingCDSolver
from multilabel_core_plugins.ranking.engine import ENGINE_COUNTS, ranking_cd


def test_the_certificate_sums_epochs_and_engine_counts_over_the_chained_solves():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 5)), (rng.random((40, 4)) < 0.4).astype(int)
    problem = Problem(X, to_signs(Y), PairwiseRankingHinge(), Frobenius(), Independent(), LinearKernel(), C=5.0)
    fit = RankingCDSolver(tol=1e-8, random_state=3).solve(problem)
    eps = fit.certificate.statistics["eps"]
    assert fit.certificate.statistics["eps"] == eps
    # The same chain by hand: the seeds drawn from the solve's own stream (random_state 3), each call warm-started.
    stream, alpha, calls, tol = check_random_state(3), None, [], FIRST_EPS
    while True:
        calls.append(ranking_cd(X, Y, 5.0, fit_intercept=True, tol=tol, max_iter=10000, random_state=stream,
                                alpha0=alpha))
        if tol == eps:
            break
        alpha, tol = calls[-1].solution.dual, tol / 10.0
    assert len(calls) >= 2
    # Exact: the solver makes these very calls (Frobenius's label_gram is np.eye(c), the default) in this process.
    np.testing.assert_array_equal(fit.solution.dual, calls[-1].solution.dual)
    assert fit.certificate.n_iter == sum(call.certificate.n_iter for call in calls)
    for key in ENGINE_COUNTS:
        assert fit.certificate.statistics[key] == sum(call.certificate.statistics[key] for call in calls)


def test_a_warm_start_continues_at_the_eps_it_reached():
    # The next model step of an alternation starts its chain where the previous one ended.
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((40, 5)), (rng.random((40, 4)) < 0.4).astype(int)
    problem = Problem(X, to_signs(Y), PairwiseRankingHinge(), Frobenius(), Independent(), LinearKernel(), C=5.0)
    solver = RankingCDSolver(tol=1e-8)
    first = solver.solve(problem)
    assert first.certificate.statistics["eps"] < FIRST_EPS
    # 3e-4 is on no chain from FIRST_EPS = 0.1: the eps reached is 3e-4 / 10^k only if the chain started there.
    start = Solution(coef=None, intercept=np.zeros(4), warm_state=WarmState("RankingCDSolver", scaled={"dual": first.solution.dual}, fixed={"eps": 3e-4}))
    again = solver.solve(problem, warm_start=start)
    k = np.log10(3e-4 / again.certificate.statistics["eps"])
    assert abs(k - np.round(k)) < 1e-9 and k > -1e-9 and again.certificate.relative_gap <= 1e-8
