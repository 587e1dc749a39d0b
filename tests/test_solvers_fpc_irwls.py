"""The core's FPC (singular value shrinkage with continuation) and IRWLS (multi-output SVR) solvers.

Ma, Goldfarb & Chen, *Fixed point and Bregman iterative methods for matrix rank minimization*; Tao, Xu &
Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace* (eqs. 6-15).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import multilabel_core as mlc
from multilabel_core.kernels import RBFKernel
from multilabel_core.solvers import irwls_msvr, msvr_objective, singular_value_threshold
from multilabel_core_plugins.lieml.fpc import fixed_point_continuation


@st.composite
def matrices(draw, max_side=12):
    p = draw(st.integers(1, max_side))
    n = draw(st.integers(1, max_side))
    seed = draw(st.integers(0, 2**31 - 1))
    rank = draw(st.integers(1, min(p, n)))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((p, rank)) @ rng.standard_normal((rank, n)) + 0.1 * rng.standard_normal((p, n))
    return A


# -- singular value shrinkage --------------------------------------------------------------------


@settings(max_examples=40)
@given(A=matrices(), fraction=st.floats(0.05, 0.9))
def test_the_truncated_shrinkage_equals_the_full_svd_one(A, fraction):
    threshold = fraction * np.linalg.norm(A, 2)
    full = singular_value_threshold(A, threshold, method="full")
    auto = singular_value_threshold(A, threshold, method="auto")
    assert auto.rank == full.rank
    # Up to a spread sigma_max^2 / threshold^2 of 1e10 the Gram route's triplets carry the squared
    # values' error, eps * sigma_max^2 / threshold on the kept values; beyond it its Rayleigh-Ritz
    # step makes them as accurate as a direct SVD's (module docstring).  Either way only the values
    # inside the eigenvalue error band delta about threshold^2 can be misplaced, by delta / threshold.
    eps, scale = np.finfo(float).eps, np.linalg.norm(A, 2)
    band = 2 * sum(A.shape) * eps * float((A**2).sum())
    spread = (scale / threshold) ** 2
    bound = 1e3 * max(A.shape) * eps * scale**2 / threshold * max(1, full.rank) + 10 * band / threshold
    np.testing.assert_allclose(auto.matrix, full.matrix, atol=bound, rtol=0)
    orthonormal = 1e2 * max(A.shape) * eps * spread
    np.testing.assert_allclose(auto.left.T @ auto.left, np.eye(auto.rank), atol=orthonormal)
    np.testing.assert_allclose(auto.right @ auto.right.T, np.eye(auto.rank), atol=orthonormal)


def test_the_gram_route_resolves_values_near_the_threshold_under_a_large_spread():
    # sigma_max^2 / threshold^2 = 1e12: the squared values alone would put 1e-6 (1 + 1e-9) at the
    # threshold's rounding; the Rayleigh-Ritz step keeps it and shrinks it by the right amount.
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((30, 5)))
    V, _ = np.linalg.qr(rng.standard_normal((20, 5)))
    values = np.array([1.0, 0.5, 1e-6 * (1 + 1e-3), 1e-6 * (1 - 1e-3), 1e-9])
    A = (U * values) @ V.T
    shrunk = singular_value_threshold(A, 1e-6, method="gram")
    assert shrunk.method == "gram" and shrunk.rank == 3
    # A backward-stable SVD (the Ritz step's, and the full route's) is exact for a matrix within
    # c max(m, n) eps ||A|| of A, as is A itself (one BLAS product), so each value is known to
    # that much absolutely: 7e-13 here, three orders below the 1e-9 that separates the values
    # either side of the threshold.  (The earlier rtol of 1e-9 on the 1e-6 value asked for 1e-15,
    # a few eps, and a CI run's BLAS path missed it by 1.4e-15.)
    accuracy = 1e2 * max(A.shape) * np.finfo(float).eps * values[0]
    np.testing.assert_allclose(shrunk.values, values[:3], atol=accuracy, rtol=0)
    full = singular_value_threshold(A, 1e-6, method="full")
    np.testing.assert_allclose(shrunk.matrix, full.matrix, atol=2 * accuracy, rtol=0)
    np.testing.assert_allclose(shrunk.left.T @ shrunk.left, np.eye(3), atol=accuracy)
    np.testing.assert_allclose(shrunk.right @ shrunk.right.T, np.eye(3), atol=accuracy)


@settings(max_examples=40)
@given(A=matrices(), fraction=st.floats(0.0, 1.2))
def test_the_shrinkage_is_the_proximal_operator_of_the_nuclear_norm(A, fraction):
    # B = S_t(A) iff A - B lies in t d||B||_*: ||A - B||_2 <= t and <A - B, B> = t ||B||_*.
    threshold = fraction * np.linalg.norm(A, 2)
    B = singular_value_threshold(A, threshold).matrix
    tol = 1e-10 * max(1.0, np.linalg.norm(A, 2))
    assert np.linalg.norm(A - B, 2) <= threshold + tol
    nuclear = np.linalg.svd(B, compute_uv=False).sum()
    assert np.vdot(A - B, B) == pytest.approx(threshold * nuclear, abs=tol * max(1.0, nuclear))


def test_the_gram_route_refuses_a_spread_it_cannot_resolve():
    # Its eigenvalue error band 2 (p + n) eps ||A||_F^2 = 1.8e-15 exceeds a quarter of threshold^2 = 1e-16.
    A = np.diag([1.0, 1e-8])
    with pytest.raises(np.linalg.LinAlgError, match="band"):
        singular_value_threshold(A, 1e-8, method="gram")
    assert singular_value_threshold(A, 1e-8, method="auto").method == "full"
    with pytest.raises(ValueError, match="method"):
        singular_value_threshold(A, 0.1, method="randomized")
    with pytest.raises(ValueError, match="threshold"):
        singular_value_threshold(A, -1.0)


# -- fixed point continuation ----------------------------------------------------------------------


def _completion_problem(seed, p=8, n=15):
    """f(Z) = 1/2 ||Z[:-1] - M||^2 with the last row fixed to 1 (f does not depend on it)."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((p - 1, 2)) @ rng.standard_normal((2, n)) + 0.05 * rng.standard_normal((p - 1, n))
    Z0 = np.vstack([M, np.ones((1, n))])

    def value(Z):
        return 0.5 * float(((Z[:-1] - M) ** 2).sum())

    def gradient(Z):
        G = np.zeros_like(Z)
        G[:-1] = Z[:-1] - M
        return G

    def conjugate(Mdual):
        return float(np.vdot(Mdual[:-1], M)) + 0.5 * float((Mdual[:-1] ** 2).sum())

    return Z0, value, gradient, conjugate


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_fpc_keeps_the_fixed_row_and_converges_to_a_certified_point(seed):
    Z0, value, gradient, conjugate = _completion_problem(seed)
    fit = fixed_point_continuation(
        Z0, value, gradient, step=1.0, mu_min=1e-2, fixed_rows=[Z0.shape[0] - 1], f_conjugate=conjugate, max_iter=5000
    )
    Z = fit.solution.coef
    np.testing.assert_array_equal(Z[-1], np.ones(Z.shape[1]))
    assert fit.certificate.converged
    assert fit.certificate.gap >= -1e-9 * max(1.0, fit.certificate.primal)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_fpc_never_raises_the_objective_within_a_stage(seed):
    # Without fixed rows each step is a proximal gradient step with tau <= 1 / L: T is non-increasing.
    # (Resetting fixed rows after the shrinkage, as LIEML's Algorithm 1 does, can raise T slightly: on
    # this problem with seed 25 by 4e-6 at the first step of the last stage; the certificate covers it.)
    Z0, value, gradient, conjugate = _completion_problem(seed)
    fit = fixed_point_continuation(Z0, value, gradient, step=1.0, mu_min=1e-2, f_conjugate=None, max_iter=5000, warn=False)
    for stage in fit.solution.model_state["stages"]:
        steps = np.diff(stage.objective)
        assert (steps <= 1e-10 * max(1.0, abs(stage.objective[0]))).all(), stage.mu


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), budget=st.integers(1, 30))
def test_fpc_certificates_bound_the_optimum_from_below(seed, budget):
    # A bound computed at a poor iterate never exceeds the objective at a converged point.
    Z0, value, gradient, conjugate = _completion_problem(seed)
    kw = dict(step=1.0, mu_min=1e-2, fixed_rows=[Z0.shape[0] - 1], warn=False)
    good = fixed_point_continuation(Z0, value, gradient, f_conjugate=conjugate, max_iter=5000, **kw)
    for conj in (conjugate, None):
        poor = fixed_point_continuation(Z0, value, gradient, f_conjugate=conj, max_iter=budget, **kw)
        assert poor.certificate.dual <= good.certificate.primal + 1e-9 * max(1.0, good.certificate.primal)


def test_fpc_accelerated_reaches_the_plain_iterations_point():
    Z0, value, gradient, conjugate = _completion_problem(3, p=10, n=30)
    # A step well below 1 / L, where the plain iteration needs many steps per stage.
    kw = dict(step=0.1, mu_min=1e-3, fixed_rows=[9], f_conjugate=conjugate, max_iter=20000, gap_tol=1e-7)
    plain = fixed_point_continuation(Z0, value, gradient, **kw)
    fast = fixed_point_continuation(Z0, value, gradient, accelerate=True, **kw)
    assert plain.certificate.converged and fast.certificate.converged
    assert fast.certificate.primal == pytest.approx(plain.certificate.primal, abs=2e-7 * max(1.0, plain.certificate.primal))
    assert fast.certificate.n_iter < plain.certificate.n_iter


def test_fpc_stops_and_says_so_at_a_fixed_point_short_of_the_optimum():
    # M's rows have a nonzero mean: moving Z[:-1] towards it along the ones row costs the nuclear
    # norm only at second order, so the optimum with the last row held at 1 is not Z[:-1] = 0.  At a
    # mu that shrinks the whole of A = [M; 1] to zero, every step resets to [0; 1], the same point:
    # the iteration cannot close the gap and must stop there rather than run out its budget.
    rng = np.random.default_rng(0)
    M = 1.0 + 0.1 * rng.standard_normal((4, 12))
    Z0 = np.vstack([M, np.ones((1, 12))])

    def f_value(Z):
        return 0.5 * float(((Z[:-1] - M) ** 2).sum())

    def f_gradient(Z):
        G = np.zeros_like(Z)
        G[:-1] = Z[:-1] - M
        return G

    mu = 2.0 * float(np.linalg.norm(Z0, 2))
    with pytest.warns(mlc.solvers.ConvergenceWarning, match="stopped moving"):
        fit = fixed_point_continuation(Z0, f_value, f_gradient, step=1.0, mu_min=mu, fixed_rows=[4], max_iter=5000)
    assert fit.certificate.statistics["stalled"] and not fit.certificate.converged
    assert fit.certificate.n_iter <= 3
    np.testing.assert_array_equal(fit.solution.coef[:-1], 0.0)
    # The gap is real: a small step of Z[:-1] towards the rows' means lowers the objective.
    nudged = Z0.copy()
    nudged[:-1] = 1e-3 * M.mean(axis=1, keepdims=True)
    objective = f_value(nudged) + mu * np.linalg.svd(nudged, compute_uv=False).sum()
    assert objective < fit.certificate.primal


def test_fpc_budget_is_reported():
    Z0, value, gradient, conjugate = _completion_problem(0)
    with pytest.warns(mlc.solvers.ConvergenceWarning, match="did not converge"):
        fit = fixed_point_continuation(Z0, value, gradient, step=1.0, mu_min=1e-6, fixed_rows=[7], max_iter=2)
    assert not fit.certificate.converged and fit.certificate.n_iter == 2
    with pytest.raises(ValueError, match="fixed_rows"):
        fixed_point_continuation(Z0, value, gradient, step=1.0, fixed_rows=[99])
    with pytest.raises(ValueError, match="step"):
        fixed_point_continuation(Z0, value, gradient, step=0.0)


# -- IRWLS -----------------------------------------------------------------------------------------


def _regression(seed, n=30, t=3, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    U = X @ rng.standard_normal((d, t)) + 0.3 * rng.standard_normal((n, t))
    S = np.where(U + 0.5 * rng.standard_normal((n, t)) > 0, 1.0, -1.0)
    K = RBFKernel().resolve(X)(X)
    return K, U, S


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), gamma2=st.sampled_from([0.0, 0.1, 1.0]), epsilon=st.sampled_from([0.0, 0.1, 1.0]))
def test_irwls_decreases_t2_and_ends_at_its_optimality_conditions(seed, gamma2, epsilon):
    K, U, S = _regression(seed)
    fit = irwls_msvr(K, U, S, gamma1=1.0, gamma2=gamma2, epsilon=epsilon, warn=False)
    history = np.array(fit.history["objective"])
    assert (np.diff(history) < 0).all()
    beta, m = fit.solution.dual_coef, fit.solution.intercept
    assert msvr_objective(K, beta, m, U, S, gamma2=gamma2, epsilon=epsilon) == pytest.approx(history[-1], rel=1e-12)
    # The representer's bias equation: every column of beta sums to 0.
    np.testing.assert_allclose(beta.sum(axis=0), 0.0, atol=1e-10 * max(1.0, np.abs(beta).max()))
    c = fit.certificate
    assert c.gap >= -1e-9 * max(1.0, c.primal)
    if c.converged:
        # beta = gamma1 a e + gamma2 sigma y at the optimum, sigma = 1(q <= 0) away from the hinge's kink and
        # anything in [0, 1] at it (q = 0); checked to the accuracy the gap allows.
        F = K @ beta + m
        E = U - F
        r = np.linalg.norm(E, axis=1)
        a = np.full(len(r), 2.0) if epsilon == 0 else np.divide(2 * (r - epsilon), r, out=np.zeros(len(r)), where=r > epsilon)
        hinge = (beta - a[:, None] * E) * S  # gamma2 sigma at the optimum
        q = S * F
        tol = 0.05 * max(1.0, np.abs(beta).max())
        away = np.abs(q) > 1e-2
        np.testing.assert_allclose(hinge[away], gamma2 * (q[away] <= 0), atol=tol)
        assert (hinge[~away] >= -tol).all() and (hinge[~away] <= gamma2 + tol).all()


def test_gamma2_zero_is_msvr_and_matches_a_direct_solve():
    K, U, _ = _regression(7, n=25, t=2)
    fit = irwls_msvr(K, U, gamma1=2.0, epsilon=0.2, tol=1e-12)
    n, t = U.shape

    def objective(w):
        return msvr_objective(K, w[: n * t].reshape(n, t), w[n * t :], U, gamma1=2.0, epsilon=0.2)

    def gradient(w):
        beta, m = w[: n * t].reshape(n, t), w[n * t :]
        F = K @ beta + m
        E = U - F
        r = np.linalg.norm(E, axis=1)
        a = np.divide(2.0 * (r - 0.2), r, out=np.zeros(n), where=r > 0.2)
        dF = -2.0 * a[:, None] * E  # d T2 / d F of the loss part (gamma1 = 2)
        return np.concatenate([(K @ beta + K @ dF).ravel(), dF.sum(axis=0)])

    direct = minimize(objective, np.zeros(n * t + t), jac=gradient, method="L-BFGS-B",
                      options={"maxiter": 50000, "ftol": 1e-15, "gtol": 1e-10})  # fmt: skip
    c = fit.certificate
    assert c.converged
    assert c.primal == pytest.approx(direct.fun, rel=1e-6)
    # The certificate's bound sits below every primal value, the direct solve's included.
    assert c.dual <= direct.fun + 1e-9 * direct.fun


def test_irwls_validates_and_counts_the_jitter():
    K, U, S = _regression(1, n=10)
    with pytest.raises(ValueError, match="signs S"):
        irwls_msvr(K, U, gamma2=0.1)
    with pytest.raises(ValueError, match="S must hold"):
        irwls_msvr(K, U, np.zeros_like(U), gamma2=0.1)
    with pytest.raises(ValueError, match="K must be"):
        irwls_msvr(K[:5], U)
    # Every residual inside a wide tube: all a_i vanish and the bias equation needs the jitter.
    fit = irwls_msvr(K, 0.01 * U, S, gamma2=0.1, epsilon=100.0, warn=False)
    assert fit.certificate.statistics["n_jitter"] >= 1
    assert np.isfinite(fit.solution.dual_coef).all()


def test_the_core_irwls_solver_composes_msvr():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    Y = (X[:, :2] > 0).astype(int)
    model = mlc.ComposedEstimator(loss="epsilon_insensitive", kernel="rbf", solver="irwls").fit(X, Y)
    assert model.certificate_.converged
    K = model.kernel_(X, model.X_fit_)
    assert msvr_objective(K, model.dual_coef_, model.intercept_, Y.astype(float), epsilon=0.1) == pytest.approx(
        model.certificate_.primal, rel=1e-10
    )
