"""Stock losses: gradients, convexity, conjugates, hand-worked values, validation."""

from __future__ import annotations

import itertools

import attrs
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import approx_fprime

import multilabel_core.losses as losses_module
from multilabel_core.losses import EpsilonInsensitive, Hinge, Logistic, PairwiseRankingHinge, SquaredHinge
from multilabel_core.testing.strategies import score_matrices, sign_matrices

ALL_LOSSES = [Hinge(), SquaredHinge(), Logistic(), PairwiseRankingHinge(), EpsilonInsensitive(0.1), EpsilonInsensitive(0.0)]
CONJUGATE_LOSSES = [Hinge(), SquaredHinge(), Logistic()]
#: Dual domain of a = y * u for each loss with a conjugate.
DUAL_DOMAIN = {Hinge: (-1.0, 0.0), SquaredHinge: (-5.0, 0.0), Logistic: (-1.0, 0.0)}
ids = [repr(loss) for loss in ALL_LOSSES]


@st.composite
def targets_and_scores(draw, loss, n_scores: int = 1):
    """``(Y, T_1, ..., T_k)`` of one shape, Y in the loss's target convention."""
    n, n_labels = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    Y = draw(sign_matrices(n, n_labels) if loss.target == "sign" else score_matrices(n, n_labels, magnitude=3.0))
    return (Y, *(draw(score_matrices(n, n_labels, magnitude=3.0)) for _ in range(n_scores)))


def kink_distance(loss, Y, T) -> float:
    """Distance of T to the loss's non-differentiable points (inf for smooth losses)."""
    if isinstance(loss, Hinge):
        return float(np.abs(1.0 - Y * T).min())
    if isinstance(loss, PairwiseRankingHinge):
        margins = [np.abs(1.0 - T[i, k] + T[i, l]) for i in range(len(Y)) for k in range(Y.shape[1])
                   for l in range(Y.shape[1]) if Y[i, k] > 0 > Y[i, l]]
        return float(min(margins, default=np.inf))
    return np.inf


@pytest.mark.parametrize("loss", ALL_LOSSES, ids=ids)
@given(data=st.data())
def test_gradient_matches_central_differences(loss, data):
    Y, T = data.draw(targets_and_scores(loss))
    assume(kink_distance(loss, Y, T) > 1e-3)
    numeric = approx_fprime(T.ravel(), lambda t: loss.value(Y, t.reshape(T.shape)), 1e-7)
    np.testing.assert_allclose(loss.gradient(Y, T).ravel(), numeric, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("loss", ALL_LOSSES, ids=ids)
@given(data=st.data(), t=st.floats(0.0, 1.0))
def test_convex_along_segments(loss, data, t):
    Y, A, B = data.draw(targets_and_scores(loss, n_scores=2))
    mixed = loss.value(Y, t * A + (1 - t) * B)
    bound = t * loss.value(Y, A) + (1 - t) * loss.value(Y, B)
    assert mixed <= bound + 1e-9 * (1.0 + abs(bound))


@pytest.mark.parametrize("loss", ALL_LOSSES, ids=ids)
@given(data=st.data())
def test_value_is_nonnegative_float_and_gradient_has_the_shape_of_T(loss, data):
    Y, T = data.draw(targets_and_scores(loss))
    value, gradient = loss.value(Y, T), loss.gradient(Y, T)
    assert isinstance(value, float) and value >= 0.0
    assert gradient.shape == T.shape and gradient.dtype == np.float64


@pytest.mark.parametrize("loss", CONJUGATE_LOSSES, ids=repr)
@given(data=st.data())
def test_fenchel_young_equality_at_the_gradient(loss, data):
    Y, T = data.draw(targets_and_scores(loss))
    G = loss.gradient(Y, T)
    gap = loss.value(Y, T) + loss.conjugate(Y, G) - np.vdot(G, T)
    assert abs(gap) <= 1e-9 * (1.0 + loss.value(Y, T))


@pytest.mark.parametrize("loss", CONJUGATE_LOSSES, ids=repr)
@given(data=st.data())
def test_fenchel_young_inequality_inside_the_dual_domain(loss, data):
    Y, T = data.draw(targets_and_scores(loss))
    low, high = DUAL_DOMAIN[type(loss)]
    A = data.draw(score_matrices(*Y.shape, magnitude=1.0)) * (high - low) / 2.0 + (high + low) / 2.0
    U = Y * A
    assert loss.value(Y, T) + loss.conjugate(Y, U) >= np.vdot(U, T) - 1e-9


@pytest.mark.parametrize("loss", CONJUGATE_LOSSES, ids=repr)
def test_conjugate_is_infinite_outside_the_domain_and_tolerates_round_off(loss):
    Y = np.array([[1.0, -1.0]])
    assert loss.conjugate(Y, Y * np.array([[1e-6, -0.5]])) == np.inf
    # -(C * g) / C can land one ulp outside the domain; the gap must stay finite there.
    C = 3.0
    G = loss.gradient(Y, np.array([[-5.0, 5.0]]))
    assert np.isfinite(loss.conjugate(Y, -(-C * G * (1 + 1e-15)) / C))


def test_hinge_conjugate_leaves_the_box_below_minus_one():
    assert Hinge().conjugate(np.array([[1.0]]), np.array([[-1.0 - 1e-6]])) == np.inf
    assert Logistic().conjugate(np.array([[-1.0]]), np.array([[1.0 + 1e-6]])) == np.inf


def test_hand_worked_values():
    Y = np.array([[1.0, -1.0, 1.0]])
    T = np.array([[0.5, 0.5, 2.0]])
    assert Hinge().value(Y, T) == pytest.approx(0.5 + 1.5 + 0.0)
    np.testing.assert_array_equal(Hinge().gradient(Y, T), [[-1.0, 1.0, 0.0]])
    assert SquaredHinge().value(Y, T) == pytest.approx(0.25 + 2.25)
    np.testing.assert_allclose(SquaredHinge().gradient(Y, T), [[-1.0, 3.0, 0.0]])
    assert Logistic().value(Y, T) == pytest.approx(np.log1p(np.exp(-0.5)) + np.log1p(np.exp(0.5)) + np.log1p(np.exp(-2)))
    # Pairs (k, l) = (0, 1): 1 - 0 = 1; (2, 1): max(0, 1 - 1.5) = 0; mean over the 2 pairs.
    assert PairwiseRankingHinge().value(Y, T) == pytest.approx(0.5)
    np.testing.assert_allclose(PairwiseRankingHinge().gradient(Y, T), [[-0.5, 0.5, 0.0]])


def reference_ranking_loss(Y, T) -> float:
    """Gu, Li & Han, *Correlated Multi-Label Feature Selection*, eq. 1, one example and one pair at a time."""
    total = 0.0
    for y, t in zip(Y, T):
        relevant, irrelevant = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        if len(relevant) and len(irrelevant):
            pairs = itertools.product(relevant, irrelevant)
            total += sum(max(0.0, 1.0 - (t[k] - t[l])) for k, l in pairs) / (len(relevant) * len(irrelevant))
    return total


@given(data=st.data())
def test_ranking_loss_matches_the_pairwise_definition(data):
    Y, T = data.draw(targets_and_scores(PairwiseRankingHinge()))
    assert PairwiseRankingHinge().value(Y, T) == pytest.approx(reference_ranking_loss(Y, T), rel=1e-12, abs=1e-12)


def test_ranking_rows_with_empty_or_full_label_sets_contribute_nothing():
    Y = np.array([[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]])
    T = np.array([[-3.0, 0.0, 2.0], [4.0, -1.0, 0.0]])
    assert PairwiseRankingHinge().value(Y, T) == 0.0
    np.testing.assert_array_equal(PairwiseRankingHinge().gradient(Y, T), np.zeros_like(T))


@given(data=st.data())
def test_ranking_loss_is_the_same_in_one_row_blocks(data):
    Y, T = data.draw(targets_and_scores(PairwiseRankingHinge()))
    whole = PairwiseRankingHinge().value(Y, T), PairwiseRankingHinge().gradient(Y, T)
    original = losses_module.row_blocks
    losses_module.row_blocks = lambda n_rows, bytes_per_row: original(n_rows, bytes_per_row, budget=1)
    try:
        blocked = PairwiseRankingHinge().value(Y, T), PairwiseRankingHinge().gradient(Y, T)
    finally:
        losses_module.row_blocks = original
    assert blocked[0] == pytest.approx(whole[0], rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(blocked[1], whole[1], rtol=1e-12, atol=1e-12)


@given(data=st.data())
def test_ranking_pairs_are_every_relevant_irrelevant_pair_in_row_order(data):
    # The ranking solvers' dual variables, one per pair, are in this order (Gu, Li & Han, eq. 7).
    Y, _ = data.draw(targets_and_scores(PairwiseRankingHinge()))
    expected = [(i, k, l) for i in range(Y.shape[0]) for k in np.flatnonzero(Y[i] > 0) for l in np.flatnonzero(Y[i] < 0)]
    for given_Y in (Y, (Y > 0).astype(int)):  # signs, or the relevance as {0, 1}
        pair_row, pair_k, pair_l = PairwiseRankingHinge().pairs(given_Y)
        assert list(zip(pair_row.tolist(), pair_k.tolist(), pair_l.tolist())) == expected


@pytest.mark.parametrize("Y", [np.array([[1, 0, -1]]), np.array([[2, 0]]), np.array([1, 0])])
def test_ranking_pairs_refuse_other_targets(Y):
    with pytest.raises(ValueError, match="Y must"):
        PairwiseRankingHinge().pairs(Y)


def test_epsilon_insensitive_ignores_rows_inside_the_tube():
    loss = EpsilonInsensitive(epsilon=1.0)
    Y = np.array([[0.0, 0.0], [0.0, 0.0]])
    T = np.array([[0.6, 0.6], [3.0, 4.0]])  # radii 0.85 (inside) and 5 (outside)
    assert loss.value(Y, T) == pytest.approx((5.0 - 1.0) ** 2)
    np.testing.assert_allclose(loss.irwls_weights(Y, T), [0.0, 2.0 * 4.0 / 5.0])
    np.testing.assert_allclose(loss.gradient(Y, T), [[0.0, 0.0], [1.6 * 3.0, 1.6 * 4.0]])


@given(data=st.data())
def test_epsilon_insensitive_with_zero_tube_is_the_squared_error(data):
    Y, T = data.draw(targets_and_scores(EpsilonInsensitive(0.0)))
    loss = EpsilonInsensitive(epsilon=0.0)
    assert loss.value(Y, T) == pytest.approx(float(((Y - T) ** 2).sum()), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(loss.gradient(Y, T), 2.0 * (T - Y), rtol=1e-12, atol=1e-12)


def test_logistic_is_stable_at_large_margins():
    Y = np.array([[1.0, -1.0]])
    T = np.array([[-800.0, -800.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        assert Logistic().value(Y, T) == pytest.approx(800.0)
        np.testing.assert_allclose(Logistic().gradient(Y, T), [[-1.0, 0.0]])


def test_smoothness_flags_and_targets_are_class_attributes_not_fields():
    assert [type(loss).smooth for loss in ALL_LOSSES[:5]] == [False, True, True, False, True]
    assert EpsilonInsensitive.target == "real" and Hinge.target == "sign"
    for loss in ALL_LOSSES:
        names = {field.name for field in attrs.fields(type(loss))}
        assert not names & {"smooth", "target"}


def test_hinge_dual_box_is_zero_to_C():
    assert Hinge().dual_box(2.5) == (0.0, 2.5)
    with pytest.raises(ValueError, match="C"):
        Hinge().dual_box(0.0)


def test_svm_dual_capabilities_of_the_hinge_losses():
    assert (Hinge().dual_box(2.5), Hinge().dual_diagonal(2.5)) == ((0.0, 2.5), 0.0)
    assert (SquaredHinge().dual_box(2.5), SquaredHinge().dual_diagonal(2.5)) == ((0.0, np.inf), 0.2)
    for loss, name in itertools.product([Hinge(), SquaredHinge()], ["dual_box", "dual_diagonal"]):
        with pytest.raises(ValueError, match="C"):
            getattr(loss, name)(0.0)


@pytest.mark.parametrize("loss", [Hinge(), SquaredHinge()], ids=["hinge", "squared_hinge"])
@given(C=st.floats(0.01, 100.0), fractions=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_svm_dual_capabilities_are_the_conjugate(loss, C, fractions):
    # An SVM-dual loss: C ell*(-alpha / C) = -alpha + D alpha^2 / 2 on the box (0, U) = dual_box(C),
    # D = dual_diagonal(C) -- the terms of the dual 1/2 alpha^T (Q + D I) alpha - e^T alpha.
    low, high = loss.dual_box(C)
    alpha = low + np.array(fractions) * (min(high, 10.0 * C) - low)
    Y = np.ones((alpha.size, 1))
    conjugate = C * loss.conjugate(Y, -alpha[:, None] / C)
    expected = float(np.sum(-alpha + loss.dual_diagonal(C) * alpha**2 / 2.0))
    assert conjugate == pytest.approx(expected, rel=1e-12, abs=1e-12 * max(1.0, C))


@pytest.mark.parametrize("epsilon", [-0.1, np.nan, np.inf, "0.1", True])
def test_epsilon_is_validated(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        EpsilonInsensitive(epsilon=epsilon)


@pytest.mark.parametrize("loss", ALL_LOSSES, ids=ids)
def test_mismatched_shapes_are_refused(loss):
    with pytest.raises(ValueError, match="shape"):
        loss.value(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="2-D"):
        loss.gradient(np.ones(3), np.ones(3))


def test_losses_are_frozen_and_compare_by_value():
    assert EpsilonInsensitive(0.2) == EpsilonInsensitive(0.2) != EpsilonInsensitive(0.3)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        EpsilonInsensitive(0.2).epsilon = 1.0


# -- least squares -----------------------------------------------------------------------------------

from multilabel_core.losses import LeastSquares  # noqa: E402


@given(data=st.data())
def test_least_squares_value_gradient_and_conjugate(data):
    n, L = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 4))
    Y = data.draw(score_matrices(n, L, magnitude=3.0))
    T = data.draw(score_matrices(n, L, magnitude=10.0))
    U = data.draw(score_matrices(n, L, magnitude=10.0))
    loss = LeastSquares()
    assert loss.value(Y, T) == pytest.approx(0.5 * np.sum((T - Y) ** 2))
    G = loss.gradient(Y, T)
    assert np.array_equal(G, T - Y)
    # Fenchel-Young: equality at the gradient, inequality elsewhere (the conjugate is finite everywhere).
    scale = 1e-12 * (1.0 + np.sum(T**2) + np.sum(Y**2) + np.sum(U**2))
    assert abs(loss.value(Y, T) + loss.conjugate(Y, G) - np.vdot(G, T)) <= scale
    assert loss.value(Y, T) + loss.conjugate(Y, U) - np.vdot(U, T) >= -scale


def test_least_squares_targets():
    assert LeastSquares().target == "sign" and LeastSquares(target="real").target == "real"
    with pytest.raises(ValueError, match="target must be"):
        LeastSquares(target="binary")


def test_sign_targets_with_a_free_intercept_are_the_01_problem_with_halved_l1():
    # The docstring's equivalence: the {-1, +1} problem with L1 weight 2 beta is the {0, 1} problem with weight
    # beta, the scores mapped by t' = 2t - 1 (W' = 2W, b' = 2b - 1) and the objective by 4.
    from multilabel_core import ComposedEstimator

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    Y = (X[:, :3] + 0.5 * rng.standard_normal((40, 3)) > 0).astype(int)
    Y[0], Y[1] = 1, 0
    common = dict(regularizer="l1", solver="fista", solver_params={"tol": 1e-12}, C=1.0)
    signs = ComposedEstimator(loss="least_squares", regularizer_params={"weight": 0.4}, **common).fit(X, Y)
    indicator = ComposedEstimator(loss="least_squares", loss_params={"target": "real"},
                                  regularizer_params={"weight": 0.2}, **common).fit(X, Y)
    assert signs.certificate_.primal == pytest.approx(4.0 * indicator.certificate_.primal, rel=1e-9)
    # P - P* >= C/2 ||T - T*||^2 (the loss is C-strongly convex in the scores): each fit's scores are within
    # sqrt(2 gap / C) of its optimum's, and the {0, 1} scores are doubled.
    gaps = max(signs.certificate_.gap, 0.0), max(indicator.certificate_.gap, 0.0)
    tolerance = np.sqrt(2.0 * gaps[0]) + 2.0 * np.sqrt(2.0 * gaps[1]) + 1e-8
    mapped = 2.0 * indicator.decision_function(X) - 1.0
    assert np.linalg.norm(signs.decision_function(X) - mapped) <= tolerance
    clear = np.abs(mapped) > tolerance
    assert np.array_equal((signs.decision_function(X) > 0)[clear], (indicator.decision_function(X) > 0.5)[clear])
