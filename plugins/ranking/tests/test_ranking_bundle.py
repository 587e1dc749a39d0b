"""The proximal bundle of MLFS / CMLFS (plugins/ranking/bundle.py and CuttingPlaneSolver's default master).

Its pieces against their definitions (the projection onto the hull H of the m-subsets, the
best s of a W, the decomposition into subsets, the simplex QP and the master), then the
method: bounds that bracket the optimum over every subset (hypothesis), a non-increasing gap
for MLFS, agreement with the relaxed optimum solved without any cutting plane and with a
long Kelley run, the outer certificate, and default fits that converge without warnings.
"""

import itertools
import warnings

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.ranking import CMLFS, MLFS, CuttingPlaneSolver, RankingCDSolver
from multilabel_core_plugins.ranking.bundle import (
    cheapest_weights,
    decompose,
    model_value,
    project_capped_simplex,
    proximal_master,
    simplex_qp,
)
from multilabel_core_plugins.ranking.cutting_plane import relative_gap
from multilabel_core_plugins.ranking.simplex import project_simplex
from multilabel_core_plugins.ranking.subsets import violation_scores

from multilabel_core import ConvergenceWarning
from multilabel_core.datasets import load_dataset, make_correlated_multilabel
from multilabel_core_plugins.ranking.engine import ranking_cd
from multilabel_core.testing.reference import every_subset, ranking_problem, spectral_projected_gradient


def problem(d, *, mu=0.0, seed=0, n=60, c=3):
    return ranking_problem(d, mu=mu, seed=seed, n_samples=n, n_labels=c)


def relaxed_optimum(prob, subsets):
    """theta* of MLFS over the hull of ``subsets``, without a cutting plane, and its certified slack.

    F(lambda) = max_alpha f(alpha, P^T lambda) is minimised over the simplex of the weights of
    every subset by projected gradient (Barzilai-Borwein; the engine solved to 1e-11 at each
    point); F is convex with gradient -1/2 P q, so ``g^T lambda - min_t g_t`` bounds F - min F.
    Returns F at the last point and that bound: the optimum lies in [F - slack, F].
    """
    Y = (prob.Y > 0).astype(np.int8)

    def evaluate(weights, state):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = ranking_cd(prob.X, Y, prob.C, None, weights @ subsets, fit_intercept=True, tol=1e-11,
                             max_iter=100_000, random_state=0, alpha0=None if state is None else state[0])
        q, _ = violation_scores(prob.X, fit.solution.model_state["beta"], np.eye(prob.n_labels), True)
        gradient = -0.5 * subsets @ q
        return fit.certificate.primal, gradient, (fit.solution.dual, gradient)

    def slack(weights, state):
        return float(state[1] @ weights - state[1].min())

    weights, value, state = spectral_projected_gradient(
        evaluate,
        np.full(len(subsets), 1.0 / len(subsets)),
        project_simplex,
        converged=lambda weights, value, state: slack(weights, state) <= 1e-9 * abs(value),
        first_step=lambda g: 1.0 / np.ptp(g),
        max_iter=100,
    )
    return value, slack(weights, state)


def random_hull_point(rng, d, m):
    return project_capped_simplex(rng.normal(scale=3.0, size=d), m)


# -- the pieces ------------------------------------------------------------------------


@given(st.integers(0, 10_000), st.integers(2, 12), st.data())
@settings(max_examples=60, deadline=None)
def test_the_projection_onto_the_hull_meets_its_variational_inequality(seed, d, data):
    # s = proj_H(v) iff s in H and (v - s)^T (z - s) <= 0 for every z in H; H's vertices suffice.
    m = data.draw(st.integers(1, d))
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=3.0, size=d)
    s = project_capped_simplex(v, m)
    assert s.min() >= 0.0 and s.max() <= 1.0 and s.sum() == pytest.approx(m, abs=1e-9)
    vertices = every_subset(d, m).astype(float) if d <= 8 else [random_hull_point(rng, d, m) for _ in range(50)]
    for z in vertices:
        assert (v - s) @ (z - s) <= 1e-9 * max(1.0, np.abs(v).max())


@given(st.integers(0, 10_000), st.integers(2, 10), st.data())
@settings(max_examples=60, deadline=None)
def test_the_best_weights_of_a_w_beat_every_point_of_the_hull(seed, d, data):
    m = data.draw(st.integers(1, d))
    rng = np.random.default_rng(seed)
    a = rng.exponential(size=d) * (rng.random(d) < 0.8)

    def cost(s):
        held = a > 0.0
        return np.inf if np.any(s[held] <= 0.0) else float(np.sum(a[held] / s[held]))

    best = cheapest_weights(a, m)
    assert best.min() >= 0.0 and best.max() <= 1.0 + 1e-12 and best.sum() == pytest.approx(m, abs=1e-9)
    for _ in range(100):
        assert cost(best) <= cost(random_hull_point(rng, d, m)) * (1 + 1e-12)


@given(st.integers(0, 10_000), st.integers(1, 15), st.data())
@settings(max_examples=60, deadline=None)
def test_a_point_of_the_hull_is_a_convex_combination_of_m_subsets(seed, d, data):
    m = data.draw(st.integers(1, d))
    s = random_hull_point(np.random.default_rng(seed), d, m)
    subsets, weights = decompose(s, m)
    assert subsets.sum(axis=1).tolist() == [m] * len(subsets) and len(subsets) <= d + 1
    assert weights.min() > 0.0 and weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(weights @ subsets, s, atol=1e-9)


@given(st.integers(0, 10_000), st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_the_simplex_qp_matches_the_best_face(seed, k):
    # The optimum over the simplex is the optimum of one face's equality-constrained problem:
    # enumerate the faces (every support) and keep the best feasible stationary point.
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(k, max(1, k - 1)))
    A, b = M @ M.T + 1e-3 * np.eye(k), rng.normal(size=k)
    x = simplex_qp(A, b, np.eye(k)[0])

    def objective(z):
        return 0.5 * z @ A @ z - b @ z

    best = np.inf
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            S = list(support)
            kkt = np.block([[A[np.ix_(S, S)], np.ones((size, 1))], [np.ones((1, size)), np.zeros((1, 1))]])
            z = np.zeros(k)
            z[S] = np.linalg.solve(kkt, np.concatenate([b[S], [1.0]]))[:size]
            if z.min() >= -1e-12:
                best = min(best, objective(z))
    assert x.min() >= 0.0 and x.sum() == pytest.approx(1.0)
    assert objective(x) <= best + 1e-9 * max(1.0, abs(best))


@pytest.mark.parametrize("seed", range(5))
def test_the_proximal_master_is_solved_to_its_certified_gap(seed):
    # Its candidate's master value is within the returned gap of the minimum: no point of H does better.
    rng = np.random.default_rng(seed)
    d, m, k = 12, 4, 6
    Q, c = rng.exponential(size=(k, d)), rng.normal(size=k)
    centre, t = random_hull_point(rng, d, m), 0.7
    s, nu, model, gap, _ = proximal_master(c, Q, centre, t, m)
    assert model == pytest.approx(model_value(c, Q, s))
    assert gap >= -1e-12 and nu.min() >= 0.0 and nu.sum() == pytest.approx(1.0)

    def master(z):
        return model_value(c, Q, z) + np.sum((z - centre) ** 2) / (2 * t)

    for _ in range(300):
        assert master(random_hull_point(rng, d, m)) >= master(s) - gap - 1e-12


# -- the method ------------------------------------------------------------------------


@given(
    seed=st.integers(0, 1_000),
    d=st.integers(3, 7),
    m_fraction=st.floats(0.1, 0.9),
    mu=st.sampled_from([0.0, 0.0, 0.5]),
    C=st.sampled_from([0.1, 1.0, 10.0]),
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_lower_bound_exceeds_an_upper_bound(seed, d, m_fraction, mu, C):
    # Every cut comes from an alpha in the dual box, solved only to the inner accuracy: weak
    # duality keeps it below F whatever that accuracy.  With a fixed coupling (MLFS) the bounds
    # of all iterations hold together; with D learned (CMLFS) each pair holds at its own D.
    m = max(1, min(d - 1, round(m_fraction * d)))
    prob = attrs.evolve(problem(d, mu=mu, seed=seed, n=40), C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = CuttingPlaneSolver(n_features=m, max_iter=15, cd=RankingCDSolver(tol=1e-1)).solve(prob)
    bounds = np.array(fit.history["bounds"])
    if mu == 0.0:
        assert bounds[:, 0].max() <= bounds[:, 1].min() * (1 + 1e-12) + 1e-12
    assert np.all(bounds[:, 0] <= bounds[:, 1] * (1 + 1e-12) + 1e-12)


@pytest.mark.parametrize("seed", [0, 2, 7])
def test_the_mlfs_bound_gap_never_increases(seed):
    # u_t is a running minimum and l_t a running maximum; the relative gap divides by max(1, |u_t|),
    # which shrinks with u_t, so the absolute gap is the monotone one.
    fit = CuttingPlaneSolver(n_features=3, tol=1e-6, max_iter=80).solve(problem(9, seed=seed))
    lower, upper = np.array(fit.history["bounds"]).T
    assert np.all(np.diff(upper - lower) <= 0.0)
    assert fit.converged and fit.history["relative_gap"][-1] <= 1e-6


@pytest.mark.parametrize("seed", [1, 4, 5])
def test_the_bundle_meets_the_optimum_over_every_subset(seed):
    # The reference minimises over the simplex of the weights of all 15 subsets directly
    # (projected gradient, an exact alpha-solve per point): no cutting plane, no bundle.
    d, m, tol = 6, 2, 1e-5
    prob = problem(d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = CuttingPlaneSolver(n_features=m, tol=tol).solve(prob)
    value, reference_gap = relaxed_optimum(prob, every_subset(d, m))
    lower, upper = fit.history["bounds"][-1]
    assert fit.converged and relative_gap(lower, upper) <= tol
    assert lower <= value * (1 + 1e-12) and upper >= (value - reference_gap) * (1 - 1e-12)
    s = fit.solution.model_state["feature_weights"]
    assert s.sum() == pytest.approx(m) and s.min() >= 0.0 and s.max() <= 1.0


@pytest.mark.parametrize("seed", [1, 4])
def test_loose_inner_solves_give_lower_bounds_below_the_optimum(seed):
    # Alpha-steps at a relative duality gap of 0.3: the cuts are loose but valid (weak duality),
    # so every l_t stays below theta* and every u_t above it.
    d, m = 6, 2
    prob = problem(d, seed=seed)
    value, reference_gap = relaxed_optimum(prob, every_subset(d, m))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = CuttingPlaneSolver(n_features=m, max_iter=8, cd=RankingCDSolver(tol=0.3)).solve(prob)
    lower, upper = np.array(fit.history["bounds"]).T
    assert np.all(lower <= value * (1 + 1e-12)) and np.all(upper >= (value - reference_gap) * (1 - 1e-12))


def test_the_bundle_agrees_with_a_long_kelley_run():
    # d = 12, m = 4 (495 subsets), both to 1e-6: the same optimum, the same scores.
    prob = problem(12, seed=3, n=80)
    bundle = CuttingPlaneSolver(n_features=4, tol=1e-6).solve(prob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kelley = CuttingPlaneSolver(n_features=4, tol=1e-6, max_iter=400, master="kelley").solve(prob)
    (lower_b, upper_b), (lower_k, upper_k) = bundle.history["bounds"][-1], kelley.history["bounds"][-1]
    assert bundle.converged  # Kelley stops short here (its most violated subset repeats), within 3e-5
    assert lower_b <= upper_k * (1 + 1e-9) and lower_k <= upper_b * (1 + 1e-9)  # both bracket theta*
    assert upper_b == pytest.approx(upper_k, rel=1e-5)
    scores = [prob.X @ fit.solution.coef + fit.solution.intercept for fit in (bundle, kelley)]
    np.testing.assert_allclose(scores[0], scores[1], atol=2e-2 * np.abs(scores[1]).max())


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_the_certificate_reports_the_outer_bound_gap(mu):
    # Two iterations leave the bound gap open while every alpha-step converged: the fit's
    # certificate is the cutting plane's (u_t, l_t, their gap), and it says "not converged".
    solver = CuttingPlaneSolver(n_features=2, max_iter=2)
    with pytest.warns(ConvergenceWarning, match="relative bound gap") as record:
        fit = solver.solve(problem(8, mu=mu, seed=6))
    lower, upper = fit.history["bounds"][-1]
    certificate = fit.certificate
    assert certificate.solver == "CuttingPlaneSolver" and certificate.n_iter == 2
    assert (certificate.primal, certificate.dual) == (upper, lower)
    assert certificate.relative_gap == pytest.approx(relative_gap(lower, upper))
    assert certificate.relative_gap > solver.tol
    assert all(step.converged for step in fit.steps) and not certificate.converged
    assert f"= {certificate.relative_gap:.3g} > tol={solver.tol:g}" in str(record[0].message)
    assert "max_iter=2" in str(record[0].message)


@pytest.mark.parametrize("preset", [MLFS, CMLFS], ids=["mlfs", "cmlfs"])
def test_the_estimators_certificates_end_with_the_outer_one(preset):
    data = make_correlated_multilabel(n_samples=80, n_features=12, n_labels=4, random_state=1)
    with pytest.warns(ConvergenceWarning, match="relative bound gap"):
        model = preset(n_features=4, max_iter=2).fit(data.X, data.Y)
    *steps, outer = model.certificate_
    assert all(step.solver == "ranking_cd" for step in steps) and outer.solver == "CuttingPlaneSolver"
    assert not outer.converged and (outer.dual, outer.primal) == tuple(model.bound_history_[-1])


@pytest.mark.parametrize("preset", [MLFS, CMLFS], ids=["mlfs", "cmlfs"])
def test_default_fits_on_a_small_problem_converge_without_warnings(preset):
    data = make_correlated_multilabel(n_samples=150, n_features=30, n_labels=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = preset().fit(data.X, data.Y)
    outer = model.certificate_[-1]
    assert outer.converged and outer.relative_gap <= 1e-3 and model.n_iter_ < 100


@pytest.mark.parametrize("dataset, preset", [("yeast", MLFS), ("scene", CMLFS)])
def test_default_fits_on_real_data_converge(datasets_dir, dataset, preset):
    # 400 standardised rows of the Mulan sets: converged, not stopped at a budget.
    data = load_dataset(dataset, datasets_dir)
    X, Y = np.asarray(data.X)[:400], np.asarray(data.Y)[:400]
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = preset(C=0.1, n_features=10).fit(X, Y)
    assert model.certificate_[-1].converged and model.certificate_[-1].relative_gap <= 1e-3
