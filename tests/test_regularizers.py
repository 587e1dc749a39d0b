"""Stock regularisers: gradients, convexity, conjugates, the prox, the low-rank factors, validation."""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import approx_fprime

from multilabel_core.plugins import make_component
from multilabel_core.relations import LearnedCovariance
from multilabel_core.regularizers import Frobenius, FrobeniusLabelCovariance, LabelCovariance, LowRank, NuclearNorm
from multilabel_core.testing.strategies import spd_matrices

SEEDS = st.integers(0, 2**32 - 1)


@st.composite
def weights(draw, n_matrices: int = 1):
    """``n_matrices`` Gaussian (d, L) matrices of one shape (full rank almost surely)."""
    d, n_labels = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(SEEDS))
    return [rng.standard_normal((d, n_labels)) for _ in range(n_matrices)]


@st.composite
def regularizers(draw, n_labels: int, d: int):
    """One stock regulariser for (d, L) weights; LowRank with a rank that leaves it convex."""
    kind = draw(st.sampled_from(["frobenius", "covariance", "default_covariance", "nuclear", "low_rank"]))
    if kind == "frobenius":
        return Frobenius()
    if kind == "covariance":
        return LabelCovariance(draw(spd_matrices(n_labels)))
    if kind == "default_covariance":
        return LabelCovariance()
    if kind == "nuclear":
        return NuclearNorm()
    return LowRank(rank=min(d, n_labels) + draw(st.integers(0, 2)), gamma=draw(st.floats(0.1, 10.0)))


def numeric_gradient(f, W):
    return approx_fprime(W.ravel(), lambda w: f(w.reshape(W.shape)), 1e-7).reshape(W.shape)


@given(data=st.data())
def test_gradient_matches_central_differences(data):
    (W,) = data.draw(weights())
    reg = data.draw(regularizers(W.shape[1], W.shape[0]))
    # The nuclear norm is differentiable where W has full rank min(d, L).
    assume(np.linalg.svd(W, compute_uv=False).min() > 1e-2)
    np.testing.assert_allclose(reg.gradient(W), numeric_gradient(reg.value, W), rtol=1e-4, atol=1e-4)


@given(data=st.data(), t=st.floats(0.0, 1.0))
def test_convex_along_segments(data, t):
    A, B = data.draw(weights(2))
    reg = data.draw(regularizers(A.shape[1], A.shape[0]))
    bound = t * reg.value(A) + (1 - t) * reg.value(B)
    assert reg.value(t * A + (1 - t) * B) <= bound + 1e-9 * (1.0 + bound)


@given(data=st.data())
def test_fenchel_young_equality_at_the_gradient_and_inequality_elsewhere(data):
    W, V = data.draw(weights(2))
    reg = data.draw(regularizers(W.shape[1], W.shape[0]).filter(lambda r: hasattr(r, "conjugate")))
    G = reg.gradient(W)
    assert reg.value(W) + reg.conjugate(G) == pytest.approx(np.vdot(G, W), rel=1e-9, abs=1e-9)
    assert reg.value(W) + reg.conjugate(V) >= np.vdot(V, W) - 1e-9


def test_frobenius_and_label_covariance_values():
    W = np.array([[1.0, 2.0], [0.0, -1.0]])
    assert Frobenius().value(W) == pytest.approx(3.0)
    np.testing.assert_array_equal(Frobenius().gradient(W), W)
    omega = np.array([[2.0, 0.5], [0.5, 1.0]])
    expected = 0.5 * np.trace(W @ np.linalg.inv(omega) @ W.T)
    assert LabelCovariance(omega).value(W) == pytest.approx(expected)
    np.testing.assert_allclose(LabelCovariance(omega).gradient(W), W @ np.linalg.inv(omega), atol=1e-12)
    assert LabelCovariance(omega).conjugate(W) == pytest.approx(0.5 * np.trace(W @ omega @ W.T))


@given(weights())
def test_label_covariance_with_identity_is_frobenius(ws):
    (W,) = ws
    reg = LabelCovariance(np.eye(W.shape[1]))
    assert reg.value(W) == pytest.approx(Frobenius().value(W))
    np.testing.assert_allclose(reg.gradient(W), Frobenius().gradient(W))


def test_label_gram():
    np.testing.assert_array_equal(Frobenius().label_gram(3), np.eye(3))
    omega = np.array([[2.0, 0.5], [0.5, 1.0]])
    np.testing.assert_array_equal(LabelCovariance(omega).label_gram(2), omega)
    with pytest.raises(ValueError, match="3 labels"):
        LabelCovariance(omega).label_gram(3)
    with pytest.raises(ValueError, match="n_labels"):
        Frobenius().label_gram(0)


@pytest.mark.parametrize(
    "omega, message",
    [
        (np.array([[1.0, 0.5], [0.0, 1.0]]), "symmetric"),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
        (np.zeros((2, 2)), "positive definite"),
        (np.ones((2, 3)), "square"),
        (np.array([[np.nan, 0.0], [0.0, 1.0]]), "NaN"),
    ],
)
def test_label_covariance_refuses_bad_omega(omega, message):
    with pytest.raises(ValueError, match=message):
        LabelCovariance(omega)


def test_label_covariance_checks_the_label_count_of_W():
    with pytest.raises(ValueError, match="label columns"):
        LabelCovariance(np.eye(2)).value(np.ones((3, 3)))


def test_label_covariance_is_frozen_compares_by_value_and_hashes():
    reg = LabelCovariance(np.eye(2))
    assert reg == LabelCovariance(np.eye(2)) != LabelCovariance(2 * np.eye(2))
    assert hash(reg) == hash(LabelCovariance(np.eye(2)))
    with pytest.raises(ValueError):
        reg.omega[0, 0] = 5.0  # read-only: the Cholesky factor stays valid


def test_nuclear_norm_values_and_conjugate():
    W = np.diag([3.0, 1.0])
    assert NuclearNorm().value(W) == pytest.approx(4.0)
    np.testing.assert_allclose(NuclearNorm().gradient(W), np.eye(2))
    np.testing.assert_array_equal(NuclearNorm().gradient(np.zeros((2, 3))), np.zeros((2, 3)))
    assert NuclearNorm().conjugate(np.diag([1.0, 0.3])) == 0.0
    assert NuclearNorm().conjugate(np.diag([1.01, 0.3])) == np.inf


@given(weights(2), st.floats(0.0, 3.0))
def test_prox_is_singular_value_shrinkage_and_minimises_the_prox_objective(ws, step):
    W, direction = ws
    P = NuclearNorm().prox(W, step)
    np.testing.assert_allclose(
        np.linalg.svd(P, compute_uv=False), np.maximum(np.linalg.svd(W, compute_uv=False) - step, 0.0), atol=1e-10
    )

    def objective(X):
        return 0.5 * np.sum((X - W) ** 2) + step * NuclearNorm().value(X)

    for scale in (1e-3, 1e-1):
        assert objective(P) <= objective(P + scale * direction) + 1e-10


def test_prox_extremes_and_validation():
    W = np.diag([3.0, 1.0])
    np.testing.assert_allclose(NuclearNorm().prox(W, 0.0), W)
    np.testing.assert_array_equal(NuclearNorm().prox(W, 3.0), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="step"):
        NuclearNorm().prox(W, -1.0)


@given(weights(), st.floats(0.1, 10.0), SEEDS)
def test_low_rank_factorize_reaches_the_induced_value(ws, gamma, seed):
    (W,) = ws
    reg = LowRank(rank=min(W.shape) + 1, gamma=gamma)
    D, V = reg.factorize(W)
    assert D.shape == (reg.rank, W.shape[0]) and V.shape == (reg.rank, W.shape[1])
    np.testing.assert_allclose(D.T @ V, W, atol=1e-10)
    assert reg.factor_value(D, V) == pytest.approx(reg.value(W), rel=1e-10)
    assert reg.value(W) == pytest.approx(np.sqrt(gamma) * NuclearNorm().value(W), rel=1e-12)
    # Any other factorisation D'^T V' = W (D' = R^-T D, V' = R V) costs at least as much.
    R = np.eye(reg.rank) + 0.5 * np.random.default_rng(seed).standard_normal((reg.rank, reg.rank))
    assume(abs(np.linalg.det(R)) > 1e-2)
    assert reg.factor_value(np.linalg.solve(R.T, D), R @ V) >= reg.value(W) - 1e-9


@given(weights(2), st.floats(0.1, 10.0), st.floats(0.0, 1.0))
def test_low_rank_factor_regularizer_is_convex_with_the_paper_gradient(ws, gamma, t):
    A, B = ws  # read as (D, V) pairs sharing k = d rows
    reg = LowRank(rank=A.shape[0], gamma=gamma)
    bound = t * reg.factor_value(A, B) + (1 - t) * reg.factor_value(B, A)
    assert reg.factor_value(t * A + (1 - t) * B, t * B + (1 - t) * A) <= bound + 1e-9 * (1.0 + bound)
    gD, gV = reg.factor_gradient(A, B)
    np.testing.assert_allclose(gD, numeric_gradient(lambda D: reg.factor_value(D, B), A), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gV, numeric_gradient(lambda V: reg.factor_value(A, V), B), rtol=1e-4, atol=1e-4)


def test_low_rank_refuses_matrices_above_its_rank():
    W = np.diag([3.0, 2.0, 1.0])
    reg = LowRank(rank=2)
    assert reg.value(W) == np.inf
    with pytest.raises(ValueError, match="rank 3 > rank=2"):
        reg.gradient(W)
    with pytest.raises(ValueError, match="rank=2 rows"):
        reg.factor_value(np.ones((3, 3)), np.ones((2, 3)))
    assert LowRank(rank=2).value(np.diag([3.0, 2.0, 0.0])) == pytest.approx(5.0)


@pytest.mark.parametrize("params", [{"rank": 0}, {"rank": 1.5}, {"rank": 2, "gamma": 0.0}, {"rank": 2, "gamma": np.nan}])
def test_low_rank_validates_parameters(params):
    with pytest.raises(ValueError, match="rank|gamma"):
        LowRank(**params)


@given(weights=weights())
def test_label_covariance_without_omega_is_mlrls_starting_point(weights):
    (W,) = weights
    n_labels = W.shape[1]
    default, explicit = LabelCovariance(), LabelCovariance(np.eye(n_labels) / n_labels)
    assert default.value(W) == pytest.approx(explicit.value(W), rel=1e-12)
    np.testing.assert_allclose(default.gradient(W), explicit.gradient(W), rtol=1e-12)
    assert default.conjugate(W) == pytest.approx(explicit.conjugate(W), rel=1e-12)
    np.testing.assert_allclose(default.label_gram(n_labels), explicit.omega, rtol=1e-15)
    assert default.omega is None and default == LabelCovariance() != explicit


def test_label_covariance_is_buildable_by_name():
    assert make_component("regularizer", "label_covariance") == LabelCovariance()


@pytest.mark.parametrize(
    "reg, smooth",
    [(Frobenius(), True), (LabelCovariance(), True), (LabelCovariance(np.eye(2)), True), (NuclearNorm(), False),
     (LowRank(rank=2), False)],
    ids=repr,
)
def test_smoothness_is_a_class_attribute_not_a_field(reg, smooth):
    assert reg.smooth is type(reg).smooth is smooth
    assert "smooth" not in attrs.fields_dict(type(reg))


@pytest.mark.parametrize(
    "reg", [Frobenius(), NuclearNorm(), LowRank(rank=2), LabelCovariance(np.eye(2)), LabelCovariance()], ids=repr
)
def test_non_matrix_weights_are_refused(reg):
    with pytest.raises(ValueError, match="2-D"):
        reg.value(np.ones(4))


def test_regularizers_are_frozen_attrs_classes():
    for cls in (Frobenius, LabelCovariance, LowRank, NuclearNorm):
        assert attrs.has(cls)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        LowRank(rank=2).gamma = 3.0


# -- FrobeniusLabelCovariance: the joint bounds of the alternating driver ----------------------


def _simplex_grid(n_labels: int, steps: int) -> np.ndarray:
    """Every point of the simplex in R^L with coordinates in multiples of 1 / steps (L = 2 or 3)."""
    if n_labels == 2:
        t = np.arange(steps + 1) / steps
        return np.column_stack([t, 1.0 - t])
    i, j = np.meshgrid(np.arange(steps + 1), np.arange(steps + 1), indexing="ij")
    keep = i + j <= steps
    i, j = i[keep], j[keep]
    return np.column_stack([i, j, steps - i - j]) / steps


def _coupled_trace(H, D, mu) -> float:
    """1/2 tr(H D (D + mu I)^-1), what relation_dual maximises over D (D >= 0, tr D = 1)."""
    return 0.5 * float(np.trace(H @ D @ np.linalg.inv(D + mu * np.eye(len(D)))))


@given(H=spd_matrices(st.integers(2, 3), min_eigenvalue=1e-3, max_eigenvalue=1e2), rank_one=st.booleans(),
       mu=st.floats(1e-3, 1e2), seed=SEEDS)
def test_frobenius_label_covariance_relation_dual_is_the_maximum_over_the_simplex(H, rank_one, mu, seed):
    # Brute force: D = Q diag(d) Q^T over a grid of the eigenvalue simplex with H's eigenvectors
    # (the maximiser shares them, von Neumann), and random D with any eigenvectors never beats it.
    if rank_one:
        top = np.linalg.eigh(H)[1][:, -1]
        H = 10.0 * np.outer(top, top)
    regularizer = FrobeniusLabelCovariance(mu=mu)
    value = regularizer.relation_dual(H)
    n_labels = len(H)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        Q, _ = np.linalg.qr(rng.standard_normal((n_labels, n_labels)))
        d = rng.dirichlet(np.ones(n_labels))
        assert _coupled_trace(H, (Q * d) @ Q.T, mu) <= value * (1 + 1e-10) + 1e-12
    h, vectors = np.linalg.eigh(H)
    grid = _simplex_grid(n_labels, 2000 if n_labels == 2 else 300)
    # tr(H D (D + mu I)^-1) = sum_j h_j d_j / (d_j + mu) on H's eigenbasis.
    best = 0.5 * float(np.max((grid / (grid + mu)) @ np.clip(h, 0.0, None)))
    assert best <= value * (1 + 1e-10) + 1e-12
    # The grid's spacing bounds how far below the maximum its best point can be (d/(d+mu) is 1/mu-Lipschitz).
    spacing = 1.0 / (2000 if n_labels == 2 else 300)
    assert value - best <= 0.5 * n_labels * spacing * np.abs(h).max() / mu + 1e-12


def test_frobenius_label_covariance_relation_dual_limits():
    H = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert FrobeniusLabelCovariance(mu=0.0).relation_dual(H) == pytest.approx(0.5 * np.trace(H))  # R^-1 = I
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # H = 0 (a problem without pairs) is silent: no round-off warning
        assert FrobeniusLabelCovariance(mu=1.0).relation_dual(np.zeros((3, 3))) == 0.0
    # mu -> inf: R^-1 ~ D / mu, so the maximum tends to lambda_max(H) / (2 mu) (the MLRL bound, scaled).
    mu = 1e6
    assert FrobeniusLabelCovariance(mu=mu).relation_dual(H) * mu == pytest.approx(
        0.5 * np.linalg.eigvalsh(H)[-1], rel=1e-5
    )


@given(W=weights(), mu=st.floats(0.0, 1e2), seed=SEEDS)
def test_frobenius_label_covariance_relation_value_is_the_minimum_over_d(W, mu, seed):
    # Theorem 3.4 of Gu, Li & Han: D = (W^T W)^(1/2) / tr attains it; no other D does better.
    (W,) = W
    n_labels = W.shape[1]
    regularizer = FrobeniusLabelCovariance(mu=mu)
    value = regularizer.relation_value(W)
    # The relation step's D (kept positive definite by epsilon I, in the units of (W^T W)^(1/2)).
    best = LearnedCovariance(epsilon=1e-10).update(W.T @ W)
    assert regularizer.with_relation(best).value(W) == pytest.approx(value, rel=1e-6)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        A = rng.standard_normal((n_labels, n_labels))
        D = A @ A.T + 1e-3 * np.eye(n_labels)
        assert regularizer.with_relation(D / np.trace(D)).value(W) >= value * (1 - 1e-10)


# -- the label similarity, the sum, the norm penalties' dual balls ---------------------------------------

from multilabel_core.regularizers import L1, L21, ElasticNet, LabelSimilarity, Sum, label_cosine_similarity  # noqa: E402


def _labels(seed, n=20, L=4):
    rng = np.random.default_rng(seed)
    Y = (rng.uniform(size=(n, L)) < 0.4).astype(np.int8)
    Y[0] = 1
    return Y


@given(seed=SEEDS)
def test_label_similarity_resolved_from_the_labels(seed):
    Y = _labels(seed)
    S = label_cosine_similarity(Y)
    B = Y.astype(float)
    j, k = 0, 1
    assert S[j, k] == pytest.approx(B[:, j] @ B[:, k] / np.linalg.norm(B[:, j]) / np.linalg.norm(B[:, k]))
    assert np.array_equal(label_cosine_similarity(2 * Y - 1), S)  # {-1, +1} labels: the same indicator
    laplacian = LabelSimilarity(alpha=2.0).with_labels(Y)
    distance = LabelSimilarity(alpha=2.0, form="distance").with_labels(Y)
    assert laplacian.state == () and distance.state == () and LabelSimilarity().state == ("with_labels",)
    R = laplacian.coupling
    assert np.allclose(R.sum(axis=1), 0.0) and np.linalg.eigvalsh(R)[0] >= -1e-12  # a Laplacian: PSD
    assert np.all(np.diag(distance.coupling) == 0.0) and np.allclose(distance.coupling, 1.0 - S - np.diag(np.diag(1.0 - S)))
    low, high = distance.hessian_bounds(Y.shape[1])
    assert low <= 0.0 <= high  # zero trace: indefinite unless R = 0
    W = np.random.default_rng(seed).standard_normal((5, Y.shape[1]))
    # The penalty is the smoothness sum 1/2 sum_jk S_jk ||w_j - w_k||^2 (alpha/2 of it: alpha = 2).
    pairs = sum(S[a, b] * np.sum((W[:, a] - W[:, b]) ** 2) for a in range(4) for b in range(4) if a != b)
    assert laplacian.value(W) == pytest.approx(0.5 * pairs, rel=1e-10)
    # Fenchel-Young with equality at the gradient (which lies in the range of R), +inf off the range.
    V = laplacian.gradient(W)
    assert laplacian.value(W) + laplacian.conjugate(V) == pytest.approx(float(np.vdot(V, W)), rel=1e-9, abs=1e-9)
    assert laplacian.conjugate(V + 1.0) == np.inf  # the constant direction is R's null space
    P = laplacian.range_projector(Y.shape[1])
    assert np.isfinite(laplacian.conjugate((V + 1.0) @ P))
    assert distance.conjugate(distance.gradient(W)) == np.inf or low == 0.0


def test_label_similarity_checks_its_size_and_form():
    with pytest.raises(ValueError, match="form must be"):
        LabelSimilarity(form="cosine")
    resolved = LabelSimilarity().with_labels(_labels(0, L=3))
    with pytest.raises(ValueError, match="R is 3 x 3 but W has 2 labels"):
        resolved.value(np.zeros((2, 2)))


def test_sum_adds_its_terms_and_resolves_them():
    W = np.random.default_rng(1).standard_normal((4, 3))
    total = Sum((("label_similarity", {"form": "distance", "alpha": 0.5}), "l1", Frobenius()))
    assert [type(t).__name__ for t in total.terms] == ["LabelSimilarity", "L1", "Frobenius"]
    assert total.state == ("with_labels",) and not total.smooth and not total.label_separable
    resolved = total.with_labels(_labels(2, L=3))
    assert resolved.state == ()
    assert resolved.value(W) == pytest.approx(sum(t.value(W) for t in resolved.terms))
    assert np.allclose(resolved.gradient(W), sum(t.gradient(W) for t in resolved.terms))
    assert Sum(("l1", "frobenius")).label_separable
    with pytest.raises(ValueError, match="terms must"):
        Sum("l1")
    with pytest.raises(ValueError, match="at least one"):
        Sum(())


@pytest.mark.parametrize("component", [L1(0.3), L21(0.7), ElasticNet(0.5, 1.0), ElasticNet(2.0, 0.25),
                                       ElasticNet(1.0, 0.0), LabelSimilarity(alpha=0.0)], ids=repr)
def test_new_penalties_with_non_default_parameters(component):
    from multilabel_core.testing import check_component

    check_component(component)


def test_the_norm_penalties_conjugates_are_their_dual_balls():
    V = np.array([[0.5, -1.0], [0.2, 0.1]])
    assert L1(1.0).conjugate(V) == 0.0 and L1(0.99).conjugate(V) == np.inf
    rows = np.linalg.norm(V, axis=1).max()
    assert L21(rows).conjugate(V) == 0.0 and L21(0.99 * rows).conjugate(V) == np.inf
    assert ElasticNet(1.0, 1.0).conjugate(V) == 0.0 and ElasticNet(0.5, 1.0).conjugate(V) == np.inf
    # c > 0: the Huber-like conjugate max(|v| - a, 0)^2 / (2c), a = c = 0.5.
    assert ElasticNet(1.0, 0.5).conjugate(V) == pytest.approx((0.5**2) / (2 * 0.5))
    assert ElasticNet(1.0, 0.0).smooth and not ElasticNet(1.0, 0.1).smooth
