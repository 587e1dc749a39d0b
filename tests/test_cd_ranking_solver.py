"""RankingCDSolver's chained solves (eps, eps / 10, ...): one certificate that counts them all."""

import numpy as np

from multilabel_core.solvers.ranking import ENGINE_COUNTS, ranking_cd
from multilabel_core_plugins.ranking._problem import RankingTask
from multilabel_core_plugins.ranking.cd_solver import RankingCDSolver


def test_the_certificate_sums_epochs_and_engine_counts_over_the_chained_solves():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 5)), (rng.random((40, 4)) < 0.4).astype(int)
    task = RankingTask(X=X, Y=Y, C=5.0, fit_intercept=True)
    step, eps = RankingCDSolver(tol=1e-8).solve_alpha(task, np.eye(4), None, None, np.random.default_rng(3), 0.1)
    # The same chain by hand: the same seeds drawn from the same stream, each call warm-started.
    stream, alpha, calls, tol = np.random.default_rng(3), None, [], 0.1
    while True:
        calls.append(ranking_cd(X, Y, 5.0, fit_intercept=True, tol=tol, max_iter=10000, random_state=stream,
                                alpha0=alpha))
        if tol == eps:
            break
        alpha, tol = calls[-1].solution.dual, tol / 10.0
    assert len(calls) >= 2
    # Exact: the solver makes these very calls (R_inv None is np.eye(c), as passed) in this process.
    np.testing.assert_array_equal(step.alpha, calls[-1].solution.dual)
    assert step.certificate.n_iter == sum(call.certificate.n_iter for call in calls)
    for key in ENGINE_COUNTS:
        assert step.certificate.statistics[key] == sum(call.certificate.statistics[key] for call in calls)
