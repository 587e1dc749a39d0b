"""Properties of the SMO solver for the MLRL dual (10), on drawn problems.

KKT (Appendix A's three cases per label), the duality gap, agreement with a reference
QP, a dual objective that never increases, shrinking and cache settings that do not
change the solution, warm starts, the tau path on indefinite kernels.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import ConvergenceWarning
from multilabel_core.solvers.smo import KernelSource, smo_solve
from multilabel_core.testing.checks import assert_duality_gap, assert_kkt, assert_matches_reference, check_solver
from multilabel_core.testing.reference import mlrl_dual_gradient, mlrl_dual_matrices, mlrl_dual_objective
from multilabel_core.testing.strategies import kernel_dual_problems, multilabel_problems

#: Box bounds of the drawn problems: wide enough to reach both bounds and free variables.
SMALL_C, LARGE_C = 1e-3, 1e3


def tolerance(K, omega, C, relative=1e-7) -> float:
    """eps for a drawn problem, relative to the largest possible |f| (round-off in f scales with it).

    Much smaller values make SMO crawl on the nearly singular kernels the strategy draws
    (a zig-zag of tiny steps along a flat valley, as in LIBSVM), not fail.
    """
    n = K.shape[0]
    return relative * (1.0 + n * np.abs(K).max() * np.abs(omega).max() * np.max(C))


def dual_problems(**options):
    options.setdefault("tiny", SMALL_C)
    options.setdefault("huge", LARGE_C)
    return kernel_dual_problems(**options)


@given(dual_problems())
def test_kkt_cases_hold_per_label(problem):
    K, omega, Y, C = problem
    eps = tolerance(K, omega, C)
    result = smo_solve(K, Y, omega, C, tol=eps)
    gradient = mlrl_dual_gradient(K, omega, Y, result.solution.dual)
    slack = eps + 1e-12 * (1.0 + np.abs(gradient).max())
    assert result.certificate.converged
    assert result.certificate.kkt_violation <= eps
    assert_kkt(result.solution.dual, gradient, Y, C, tol=slack)
    # With the reported bias, each variable against its own case (gamma = -b).
    assert_kkt(result.solution.dual, gradient, Y, C, bias=result.solution.intercept, tol=slack)


@given(dual_problems())
def test_duality_gap_is_nonnegative_and_bounded_by_eps(problem):
    K, omega, Y, C = problem
    eps = tolerance(K, omega, C)
    certificate = smo_solve(K, Y, omega, C, tol=eps).certificate
    # gap = sum_ij [alpha u + C max(0, -u)], u = y (f - gamma): each term is at most C times
    # the variable's KKT violation, itself at most eps.
    bound = eps * C.sum()
    scale = max(1.0, abs(certificate.primal))
    assert_duality_gap(certificate, rtol=bound / scale + 1e-12, atol=1e-12 * scale)


@given(dual_problems(n_samples=st.integers(2, 7), n_labels=st.integers(1, 3)))
def test_equals_the_reference_qp(problem):
    K, omega, Y, C = problem
    reference_alpha, reference_objective = mlrl_dual_matrices(K, omega, Y, C).solve()
    with warnings.catch_warnings():
        # A tolerance this tight may need more steps than allowed on a nearly singular kernel
        # (K = [[4 + 1e-6, -4], [-4, 4]] drawn): such a solve says so in its certificate (the
        # max_iter test covers it) and has no optimum to compare; the others must match.
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = smo_solve(K, Y, omega, C, tol=tolerance(K, omega, C, relative=1e-11), max_iter=10**5)
    assume(result.certificate.converged)
    objective = mlrl_dual_objective(K, omega, Y, result.solution.dual)
    # h at the solution, from the certificate (D = -h) and recomputed, against the reference.
    assert_matches_reference(result.solution.dual, objective, reference_alpha, reference_objective,
                             rtol_objective=1e-6, atol_objective=1e-9 * C.sum(), atol_alpha=None)
    assert -result.certificate.dual == pytest.approx(objective, rel=1e-9, abs=1e-9 * C.sum())


@given(dual_problems(n_samples=st.integers(4, 20)), st.booleans())
def test_dual_objective_never_increases(problem, shrinking):
    K, omega, Y, C = problem
    result = smo_solve(K, Y, omega, C, tol=tolerance(K, omega, C), shrinking=shrinking, record_dual=True)
    trace = np.asarray(result.certificate.statistics["dual_trace"])
    scale = 1e-12 * (1.0 + np.abs(trace).max())
    assert trace[0] == pytest.approx(mlrl_dual_objective(K, omega, Y, np.zeros_like(C)), abs=scale)
    assert np.all(np.diff(trace) <= scale)
    # The trace is kept by adding each step's decrease; it ends at the exact objective.
    assert trace[-1] == pytest.approx(mlrl_dual_objective(K, omega, Y, result.solution.dual), rel=1e-8, abs=1e3 * scale)


@given(dual_problems(n_samples=st.integers(8, 40), n_labels=st.integers(1, 4)))
def test_shrinking_does_not_change_the_solution(problem):
    K, omega, Y, C = problem
    eps = tolerance(K, omega, C)
    on = smo_solve(K, Y, omega, C, tol=eps, shrinking=True)
    off = smo_solve(K, Y, omega, C, tol=eps, shrinking=False)
    bound = 2.0 * eps * C.sum() + 1e-12 * (1.0 + abs(on.certificate.dual))
    assert abs(on.certificate.dual - off.certificate.dual) <= bound
    for result in (on, off):
        assert_kkt(result.solution.dual, mlrl_dual_gradient(K, omega, Y, result.solution.dual), Y, C, tol=2 * eps)


def test_shrinking_shrinks_and_reconstructs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 5))
    Y = np.sign(X[:, :3] + 0.3 * rng.standard_normal((400, 3)))
    K = RBFKernel(gamma=0.1)(X)
    omega = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.0]])
    on = smo_solve(K, Y, omega, 5.0, tol=1e-6, shrinking=True)
    off = smo_solve(K, Y, omega, 5.0, tol=1e-6, shrinking=False)
    statistics = on.certificate.statistics
    assert statistics["shrunk"] > 0 and statistics["reconstructions"] >= 2
    assert off.certificate.statistics["shrunk"] == 0
    assert on.certificate.dual == pytest.approx(off.certificate.dual, rel=1e-6)
    np.testing.assert_allclose(on.solution.model_state["scores"], off.solution.model_state["scores"], atol=1e-4)


@given(multilabel_problems(n_samples=st.integers(3, 25), sparse=None))
def test_cache_size_does_not_change_the_solution(problem):
    X, Y01 = problem
    Y = 2.0 * Y01 - 1.0
    omega = np.eye(Y.shape[1]) + 0.2 * (1 - np.eye(Y.shape[1])) / Y.shape[1]
    source = KernelSource(RBFKernel(gamma=0.05), X)
    n = X.shape[0]
    # Two columns (evictions on almost every step) against all but one column.
    tiny, large = 2 * 8 * n / 2**20, (n - 1) * 8 * n / 2**20
    small_cache = smo_solve(source, Y, omega, 1.0, tol=1e-8, cache_size=tiny)
    large_cache = smo_solve(source, Y, omega, 1.0, tol=1e-8, cache_size=large)
    whole = smo_solve(source, Y, omega, 1.0, tol=1e-8)
    assert small_cache.certificate.statistics["kernel"] == "column cache"
    assert whole.certificate.statistics["kernel"] == "precomputed"
    # Exact: every column is computed by the same call, kernel(X, X[j:j+1]), whether cached or
    # recomputed after an eviction, so both solves take the same steps on identical numbers.
    np.testing.assert_array_equal(small_cache.solution.dual, large_cache.solution.dual)
    assert small_cache.certificate.n_iter == large_cache.certificate.n_iter
    # The whole matrix rounds its entries differently: the same solution within eps.
    assert whole.certificate.dual == pytest.approx(small_cache.certificate.dual, rel=1e-7, abs=1e-7)


@given(dual_problems())
def test_warm_start_from_the_optimum_takes_no_step(problem):
    K, omega, Y, C = problem
    eps = tolerance(K, omega, C)
    first = smo_solve(K, Y, omega, C, tol=eps)
    again = smo_solve(K, Y, omega, C, tol=eps, alpha0=first.solution.dual)
    assert again.certificate.converged
    assert again.certificate.n_iter == 0 and again.certificate.statistics["label_visits"] == 0
    # Exact: no step was taken, so alpha is the warm start with no arithmetic on it.
    np.testing.assert_array_equal(again.solution.dual, first.solution.dual)


def test_conforms_to_the_solver_kit():
    def solve(problem, *, random_state, warm_start=None):
        K, omega, Y, C = problem
        result = smo_solve(K, Y, omega, C, tol=1e-7, alpha0=warm_start)
        return result.solution.dual, result.certificate

    def conditioned(problem):
        # check_solver's tolerances are absolute: a ridge keeps the kernel well conditioned
        # (the crawl on singular ones is the other tests' business) and sum C <= 1 bounds
        # the gap, at most eps * sum C.
        K, omega, Y, C = problem
        return K + 0.1 * (1.0 + np.abs(K).max()) * np.eye(len(K)), omega, Y, np.minimum(C, 1.0 / C.size)

    check_solver(
        solve,
        dual_problems().map(conditioned),
        gradient=lambda problem, alpha: mlrl_dual_gradient(problem[0], problem[1], problem[2], alpha),
        upper=lambda problem: problem[3],
        signs=lambda problem: problem[2],
        kkt_tol=1e-6,
        gap_tol=1e-6,
        warm_start_passes=0,
    )


@given(dual_problems())
def test_warm_start_after_an_omega_update(problem):
    """The alternating methods re-solve from the previous alpha after each Omega update."""
    K, omega, Y, C = problem
    eps = tolerance(K, omega, C)
    first = smo_solve(K, Y, omega, C, tol=eps)
    updated = 0.5 * (omega + np.eye(len(omega)) / len(omega))
    warm = smo_solve(K, Y, updated, C, tol=eps, alpha0=first.solution.dual)
    cold = smo_solve(K, Y, updated, C, tol=eps)
    assert warm.certificate.converged
    assert abs(warm.certificate.dual - cold.certificate.dual) <= 2.0 * eps * C.sum() + 1e-12 * abs(cold.certificate.dual)


@given(st.integers(0, 2**32 - 1), st.integers(3, 15), st.integers(1, 3))
def test_indefinite_kernel_and_omega_terminate_with_a_certificate(seed, n, n_labels):
    """The tau fallback (eqs. 33, 37): steps still decrease h, the solve ends with a certificate."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    K = (A + A.T) / 2.0
    B = rng.standard_normal((n_labels, n_labels))
    omega = (B + B.T) / 2.0
    Y = np.where(rng.random((n, n_labels)) < 0.5, -1.0, 1.0)
    Y[0], Y[-1] = 1.0, -1.0
    result = smo_solve(K, Y, omega, 1.0, tol=1e-8, record_dual=True)
    certificate = result.certificate
    assert certificate.converged and certificate.kkt_violation <= 1e-8
    assert all(np.isfinite([certificate.primal, certificate.dual, certificate.gap, certificate.time]))
    assert np.all(np.diff(certificate.statistics["dual_trace"]) <= 1e-9)
    # A local solution: the Appendix A conditions hold even though (10) is not convex.
    assert_kkt(result.solution.dual, mlrl_dual_gradient(K, omega, Y, result.solution.dual), Y, 1.0, tol=1e-7)


def test_max_iter_warns_and_reports_not_converged():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 3))
    Y = np.sign(X[:, :2] + rng.standard_normal((60, 2)))
    K = RBFKernel(gamma=0.5)(X)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        result = smo_solve(K, Y, np.eye(2), 10.0, tol=1e-6, max_iter=5)
    assert not result.certificate.converged
    # Omega~ = I: the two labels are solved apart, each with its share ceil(5 / 2) = 3 of the budget.
    assert result.certificate.n_iter == 2 * 3
    assert result.certificate.statistics["label_steps"] == [3, 3]
    assert result.certificate.kkt_violation > 1e-6
    # The returned point is still feasible and its certificate exact.
    assert np.all((result.solution.dual >= 0) & (result.solution.dual <= 10.0))
    np.testing.assert_allclose((result.solution.dual * Y).sum(axis=0), 0.0, atol=1e-12)
    assert result.certificate.gap >= 0


def test_overflowing_problem_stops_at_once():
    K = 1e300 * (np.ones((4, 4)) + np.eye(4))
    Y = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    with pytest.warns(ConvergenceWarning, match="no step could make progress"):
        result = smo_solve(K, Y, np.eye(1) * 1e100, 1e200)
    assert not result.certificate.converged and result.certificate.n_iter == 0


def test_labels_with_one_class_and_zero_boxes():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 2))
    K = RBFKernel(gamma=1.0)(X)
    Y = np.ones((30, 3))
    Y[:10, 1] = -1.0
    C = np.full((30, 3), 0.5)
    C[:, 2] = 0.0
    result = smo_solve(K, Y, np.eye(3), C, tol=1e-8)
    assert result.certificate.converged
    # One class: alpha = 0 and a bias that puts every example on the right side of the margin.
    np.testing.assert_array_equal(result.solution.dual[:, 0], 0.0)
    assert np.all(Y[:, 0] * result.solution.model_state["scores"][:, 0] >= 1.0 - 1e-12)
    np.testing.assert_array_equal(result.solution.dual[:, 2], 0.0)
    assert np.all(np.isfinite(result.solution.intercept))


def test_converged_means_the_relative_gap_not_only_the_kkt_rule():
    """At a large C (lambda = 1e-4 on 30 rows) LIBSVM's eps = 1e-3 leaves a relative gap near 1%: the
    solver tightens eps, warm-started, until the certificate's gap meets GAP_RTOL."""
    import multilabel_core as mlc
    from multilabel_core.certificate import GAP_RTOL
    from multilabel_core.datasets import make_correlated_multilabel

    data = make_correlated_multilabel(30, 5, 3, random_state=0)
    X, Y = np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)
    fit = mlc.make_method("bsvm", lam=1e-4, tol=1e-3).fit(X, Y)
    cert = fit.certificate_
    assert cert.converged and cert.relative_gap <= GAP_RTOL
    assert cert.statistics["eps"] < 1e-3  # one tightening at least was needed here
    for lam in (1e-4, 1e-2):
        for model in (mlc.make_method("mlrl", lam=lam).fit(X, Y), mlc.make_method("bsvm", lam=lam).fit(X, Y)):
            certs = model.certificate_ if isinstance(model.certificate_, list) else [model.certificate_]
            for c in certs:
                assert not c.converged or c.relative_gap <= GAP_RTOL, c


def test_the_steps_of_every_tightening_are_counted():
    # A large C on unscaled rows: eps = 1e-3 leaves a relative gap above the certificate's
    # tolerance, so the solver tightens eps; the per-label steps must add up to all the work.
    import warnings

    from multilabel_core import make_method
    from multilabel_core.datasets import make_correlated_multilabel

    data = make_correlated_multilabel(n_samples=120, n_features=6, n_labels=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_method("bsvm", lam=1e-7, n_jobs=1).fit(30.0 * data.X, data.Y)
    certificate = model.certificate_
    assert certificate.statistics["eps"] < 1e-3  # the case this test is about: eps was tightened
    assert sum(certificate.statistics["label_steps"]) == certificate.n_iter
