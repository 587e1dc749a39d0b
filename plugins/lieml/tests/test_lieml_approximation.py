"""LIEML's regressor on a kernel of explicit features (Tao, Xu & Geng, *Labeling Information Enhancement for
Multi-label Learning with Low-Rank Subspace*, T2 of eq. 8, on Williams & Seeger's Nystroem kernel): IRWLS in
the primal over the p features solves the kernel route's problem for ``K = Phi Phi^T``, with every training
row as a landmark it solves the exact kernel's, and no n x n array is formed.

What is compared.  Each route's certificate brackets its optimum, ``D <= T2* <= P``, so two routes of the
same problem must have ``D_1 <= P_2`` and ``D_2 <= P_1``; a solution of one route evaluated in the other's
objective (the representer form, :func:`multilabel_core.solvers.msvr_objective`) is within the two gaps of
that optimum.  ROUND_OFF covers the separate BLAS computations of the two sides: T2 sums O(n t) terms of the
objective's size, so relative round-off of order ``n t eps``; 1e-9 is far above it for these sizes.
"""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multilabel_core_plugins.lieml import LIEML, LIEMLRawLabels
from multilabel_core_plugins.lieml.primal import irwls_msvr_features, msvr_features_objective

from multilabel_core.certificate import GAP_RTOL
from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernel_approximation import NystroemKernel, RandomFourierKernel
from multilabel_core.solvers import irwls_msvr, msvr_objective

ROUND_OFF = 1e-9


def _data(n, d=5, t=3, seed=0):
    data = make_correlated_multilabel(n_samples=n, n_features=d, n_labels=t, random_state=seed)
    return np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)


def _brackets_the_same_optimum(first, second):
    a, b = first.certificate, second.certificate
    scale = ROUND_OFF * max(1.0, abs(a.primal), abs(b.primal))
    assert a.dual <= b.primal + scale and b.dual <= a.primal + scale, (a.primal, a.dual, b.primal, b.dual)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(5, 40),
    p=st.integers(1, 12),
    t=st.integers(1, 4),
    gamma1=st.sampled_from([0.1, 1.0, 10.0]),
    gamma2=st.sampled_from([0.0, 0.1, 1.0]),
    epsilon=st.sampled_from([0.0, 0.1, 1.0]),
)
def test_the_primal_route_solves_the_kernel_routes_problem_for_phi_phi_t(seed, n, p, t, gamma1, gamma2, epsilon):
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((n, p)) / np.sqrt(p)
    S = np.where(rng.standard_normal((n, t)) > 0, 1.0, -1.0)
    U = S + 0.3 * rng.standard_normal((n, t))
    settings_ = dict(gamma1=gamma1, gamma2=gamma2, epsilon=epsilon, tol=1e-12, max_iter=500, warn=False)
    primal = irwls_msvr_features(Phi, U, S, **settings_)
    kernel = irwls_msvr(Phi @ Phi.T, U, S, **settings_)
    _brackets_the_same_optimum(primal, kernel)
    solution = primal.solution
    Theta, beta, m = solution.model_state["feature_coef"], solution.dual_coef, solution.intercept
    scale = ROUND_OFF * max(1.0, abs(primal.certificate.primal))
    # The certificate's primal is T2 at (Theta, m), and (beta, m) is the same point in the representer form:
    # Theta = Phi^T beta to the solve's round-off (the first block of the system), beta zero-sum.
    assert primal.certificate.primal == pytest.approx(
        msvr_features_objective(Phi, Theta, m, U, S, gamma1=gamma1, gamma2=gamma2, epsilon=epsilon), abs=scale
    )
    np.testing.assert_allclose(beta.sum(axis=0), 0.0, atol=1e-9 * max(1.0, np.abs(beta).max()) * n)
    if primal.certificate.converged:
        representer = msvr_objective(Phi @ Phi.T, beta, m, U, S, gamma1=gamma1, gamma2=gamma2, epsilon=epsilon)
        assert representer - primal.certificate.dual <= primal.certificate.gap + scale + np.abs(
            Theta - Phi.T @ beta
        ).max() * (1.0 + np.abs(Theta).max()) * n * p


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), ratio=st.sampled_from([0.1, 3.0]))
def test_a_warm_start_reaches_the_cold_starts_optimum(seed, ratio):
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((30, 6))
    S = np.where(rng.standard_normal((30, 2)) > 0, 1.0, -1.0)
    U = S + 0.2 * rng.standard_normal((30, 2))
    for gamma2 in (0.0, 0.1):
        cold = irwls_msvr_features(Phi, U, S, gamma1=ratio, gamma2=gamma2, tol=1e-12, warn=False)
        start = irwls_msvr_features(Phi, U, S, gamma1=1.0, gamma2=gamma2, tol=1e-12, warn=False).solution
        warm = irwls_msvr_features(Phi, U, S, gamma1=ratio, gamma2=gamma2, tol=1e-12, start=start, warn=False)
        # With the sign term IRWLS can stop at the hinge's kink short of the gap (the kernel route too, at the
        # same point): the brackets still hold; without it both starts are certified.
        assert gamma2 or (cold.certificate.converged and warm.certificate.converged)
        _brackets_the_same_optimum(cold, warm)


@pytest.mark.parametrize("cls", [LIEMLRawLabels, LIEML])
def test_every_training_row_as_a_landmark_solves_the_exact_kernels_t2(cls):
    """m = n landmarks: ``Phi Phi^T = K`` up to the pseudo-inverse's cut; the approximate route's (beta, m), put
    in the exact kernel's T2, is within both certificates' gaps of the exact route's bound."""
    X, Y = _data(120)
    gamma = 0.2
    exact = cls(gamma=gamma).fit(X, Y)
    approximate = cls(kernel=NystroemKernel(n_components=X.shape[0], gamma=gamma)).fit(X, Y)
    assert exact.certificate_.converged and approximate.certificate_.converged
    assert approximate.certificate_.statistics["n_features"] <= X.shape[0]
    K = exact.kernel_(X)
    Phi = approximate.kernel_.features(X)
    n = X.shape[0]
    top = np.linalg.norm(K, 2)
    assert np.linalg.norm(K - Phi @ Phi.T, 2) <= 8.0 * n * n * np.finfo(float).eps * top
    targets = approximate.solution_.model_state["targets"]
    np.testing.assert_allclose(targets, exact.solution_.model_state["targets"], rtol=0, atol=1e-6 * np.abs(targets).max())
    solver = exact.parts_["solver"]
    signs = 2.0 * Y - 1.0
    value = msvr_objective(
        K, approximate.dual_coef_, approximate.intercept_, exact.solution_.model_state["targets"], signs,
        gamma1=exact.gamma1, gamma2=solver.gamma2, epsilon=exact.epsilon,
    )  # fmt: skip
    certificates = (exact.certificate_, approximate.certificate_)
    allowed = sum(c.gap for c in certificates) + ROUND_OFF * max(1.0, abs(exact.certificate_.primal))
    assert value - exact.certificate_.dual <= allowed
    assert allowed <= 2 * GAP_RTOL * max(1.0, abs(exact.certificate_.primal)) + ROUND_OFF * abs(value)
    # And the scores: both models are within their certificates of one optimum, and here of each other.
    scores = exact.decision_function(X)
    np.testing.assert_allclose(approximate.decision_function(X), scores, rtol=0, atol=1e-6 * np.abs(scores).max())


def _peak_bytes(function):
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_with_nystroem_landmarks_no_n_by_n_array_is_allocated():
    """numpy reports its arrays to tracemalloc: with 40 landmarks the fit and the prediction stay far below one
    n x n float64 array, while the exact kernel's fit holds at least one (the control)."""
    n = 2400
    X, Y = _data(n)
    square = 8 * n * n
    # gamma is given: the default width is a blocked O(n^2 d) pass whose blocks reach the 64 MiB block budget.
    kernel = NystroemKernel(n_components=40, gamma=0.2)
    model = LIEMLRawLabels(kernel=kernel).fit(X, Y)  # once untraced: imports and caches are not the fit's
    raw_peak = _peak_bytes(lambda: LIEMLRawLabels(kernel=kernel).fit(X, Y))
    enhanced_peak = _peak_bytes(lambda: LIEML(kernel=kernel, lam=1.0, fpc_max_iter=200).fit(X, Y))
    predict_peak = _peak_bytes(lambda: model.decision_function(X))
    exact_peak = _peak_bytes(lambda: LIEMLRawLabels(gamma=0.2, max_iter=2).fit(X, Y))
    assert exact_peak >= square, "the control: the exact kernel's fit should hold the n x n matrix"
    for peak in (raw_peak, enhanced_peak, predict_peak):
        assert peak < square / 4, (peak, square)


@pytest.mark.parametrize("cls", [LIEMLRawLabels, LIEML])
@pytest.mark.parametrize("kernel", [NystroemKernel(n_components=20), RandomFourierKernel(n_components=20)])
def test_fit_and_predict_never_ask_the_kernel_for_a_matrix(cls, kernel, monkeypatch):
    """The kernel's ``__call__`` (phi(X) phi(Z)^T, the only way to a kernel matrix) is never reached."""
    calls = []
    original = type(kernel).__call__

    def spy(self, X, Z=None):
        calls.append((np.shape(X)[0], None if Z is None else np.shape(Z)[0]))
        return original(self, X, Z)

    monkeypatch.setattr(type(kernel), "__call__", spy)
    X, Y = _data(90)
    model = cls(kernel=kernel).fit(X, Y)
    model.predict(X[:17])
    model.decision_function(X[:5])
    assert calls == []


def test_each_irwls_iteration_factorises_a_p_plus_1_system_never_one_of_order_n(monkeypatch):
    """Every dense factorisation of the regressor is recorded: one Cholesky of order p + 1 per IRWLS iteration
    (p = the 30 landmark features), and nothing of order n (the kernel route's LU is of order n + 1)."""
    import scipy.linalg

    orders = []
    for name in ("cho_factor", "lu_factor", "eigh", "svd", "cholesky", "qr"):
        original = getattr(scipy.linalg, name)

        def recorded(a, *args, _name=name, _original=original, **kwargs):
            orders.append((_name, min(np.shape(a))))
            return _original(a, *args, **kwargs)

        monkeypatch.setattr(scipy.linalg, name, recorded)
    X, Y = _data(300)
    model = LIEMLRawLabels(kernel=NystroemKernel(n_components=30, gamma=0.2)).fit(X, Y)
    p = model.feature_coef_.shape[0]
    iterations = model.certificate_.n_iter
    assert p <= 30 and iterations >= 2
    assert [size for name, size in orders if name == "cho_factor"] == [p + 1] * iterations
    assert max(size for _, size in orders) <= max(p + 1, 30) < X.shape[0]


def test_random_fourier_features_and_the_names_fit_and_predict():
    X, Y = _data(150)
    for kernel in ("nystroem", "rff", RandomFourierKernel(n_components=64, gamma=0.2)):
        model = LIEMLRawLabels(kernel=kernel).fit(X, Y)
        assert model.certificate_.converged
        assert model.feature_coef_.shape == (model.kernel_.features(X[:2]).shape[1], Y.shape[1])
        assert model.predict(X).shape == Y.shape
    # The exact kernel has no feature weights (a refit forgets a previous fit's).
    model.set_params(kernel="rbf").fit(X, Y)
    assert not hasattr(model, "feature_coef_")


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"kernel": "no_such_kernel"}, ValueError, "kernel must be a registered kernel name"),
        ({"kernel": NystroemKernel(n_components=10), "gamma": 0.5}, ValueError, "kernel is a Kernel object"),
        ({"kernel": "precomputed"}, ValueError, "kernel='precomputed' cannot be used by LIEML"),
    ],
)
def test_a_kernel_it_cannot_use_is_refused_naming_it(params, error, match):
    X, Y = _data(30)
    with pytest.raises(error, match=match):
        LIEML(**params).fit(X @ X.T if params.get("kernel") == "precomputed" else X, Y)
