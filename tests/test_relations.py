"""Label relations: the MLRL closed-form covariance update, independence, correlations."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.relations import Independent, LearnedCovariance, correlation_from_covariance, psd_sqrt
from multilabel_core.testing.strategies import spd_matrices


@st.composite
def weight_matrices(draw, max_rank: int | None = None):
    """Gaussian (d, L) weights, d >= L (full rank almost surely); with ``max_rank``, of rank at most that."""
    n_labels = draw(st.integers(1, 5))
    d = draw(st.integers(n_labels, n_labels + 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if max_rank is None:
        return rng.standard_normal((d, n_labels))
    return rng.standard_normal((d, max_rank)) @ rng.standard_normal((max_rank, n_labels))


def assert_covariance(omega, n_labels):
    assert omega.shape == (n_labels, n_labels)
    np.testing.assert_array_equal(omega, omega.T)
    assert np.trace(omega) == pytest.approx(1.0, rel=1e-12)
    np.linalg.cholesky(omega)  # positive definite


@given(weight_matrices(), st.floats(1e-10, 1e-2))
def test_update_is_the_closed_form_of_mlrl(W, epsilon):
    omega = LearnedCovariance(epsilon).update(W.T @ W)
    assert_covariance(omega, W.shape[1])
    root = np.real(scipy.linalg.sqrtm(W.T @ W)) + epsilon * np.eye(W.shape[1])
    np.testing.assert_allclose(omega, root / np.trace(root), atol=1e-7)


@given(weight_matrices(max_rank=1), st.floats(1e-10, 1e-2))
def test_rank_deficient_weights_still_give_a_positive_definite_covariance(W, epsilon):
    omega = LearnedCovariance(epsilon).update(W.T @ W)
    assert_covariance(omega, W.shape[1])
    # Undo the normalisation and the shift: what is left squares to W^T W.
    shifted_trace = np.trace(psd_sqrt(W.T @ W)) + epsilon * W.shape[1]
    root = omega * shifted_trace - epsilon * np.eye(W.shape[1])
    np.testing.assert_allclose(root @ root, W.T @ W, atol=1e-6 * (1 + np.abs(W.T @ W).max()))


def test_zero_weights_give_the_uniform_covariance():
    np.testing.assert_allclose(LearnedCovariance().update(np.zeros((3, 3))), np.eye(3) / 3)


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(spd_matrices(n), spd_matrices(n))))
def test_update_minimises_the_trace_objective_of_problem_11(matrices):
    # min tr(Omega^-1 A) over Omega > 0, tr(Omega) = 1 is (tr A^(1/2))^2, reached by the update.
    A, other = matrices
    omega = LearnedCovariance(epsilon=1e-12).update(A)
    best = np.trace(np.linalg.solve(omega, A))
    assert best == pytest.approx(np.trace(psd_sqrt(A)) ** 2, rel=1e-6)
    other = other / np.trace(other)
    assert np.trace(np.linalg.solve(other, A)) >= best * (1 - 1e-9)


def test_initial_relations():
    np.testing.assert_array_equal(LearnedCovariance().initial(4), np.eye(4) / 4)
    np.testing.assert_array_equal(Independent().initial(3), np.eye(3))
    with pytest.raises(ValueError, match="n_labels"):
        Independent().initial(0)


@given(weight_matrices())
def test_independent_relation_stays_the_identity(W):
    np.testing.assert_array_equal(Independent().update(W.T @ W), np.eye(W.shape[1]))


def test_learned_flags_are_class_attributes():
    assert Independent.learned is False and LearnedCovariance.learned is True
    assert [field.name for field in attrs.fields(LearnedCovariance)] == ["epsilon"]


@pytest.mark.parametrize("epsilon", [-1e-8, 0.0, np.nan, "small"])
def test_epsilon_is_validated(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        LearnedCovariance(epsilon=epsilon)


@pytest.mark.parametrize(
    "gram, message",
    [
        (np.ones((2, 3)), "square"),
        (np.array([[1.0, 0.5], [0.2, 1.0]]), "symmetric"),
        (np.array([[1.0, np.inf], [np.inf, 1.0]]), "NaN or infinity"),
        (np.array([[1.0, 0.0], [0.0, -1.0]]), "positive semi-definite"),
        (-np.eye(2), "positive semi-definite"),
    ],
)
def test_bad_gram_matrices_are_refused(gram, message):
    with pytest.raises(ValueError, match=message):
        LearnedCovariance().update(gram)


def test_round_off_negative_eigenvalues_are_clipped():
    v = np.array([1.0, -1.0]) / np.sqrt(2)
    gram = np.eye(2) - (1 + 1e-14) * np.outer(v, v)  # eigenvalues 1 and -1e-14
    root = psd_sqrt(gram)
    np.testing.assert_allclose(root @ root, np.eye(2) - np.outer(v, v), atol=1e-12)


@given(spd_matrices(st.integers(1, 5)))
def test_correlation_has_unit_diagonal_and_rescales_the_covariance(omega):
    correlation = correlation_from_covariance(omega)
    np.testing.assert_array_equal(np.diag(correlation), 1.0)
    np.testing.assert_array_equal(correlation, correlation.T)
    assert np.all(np.abs(correlation) <= 1.0)
    scale = np.sqrt(np.diag(omega))
    np.testing.assert_allclose(correlation * np.outer(scale, scale), omega, rtol=1e-10, atol=1e-12)


def test_correlation_needs_a_positive_diagonal():
    with pytest.raises(ValueError, match="positive diagonal"):
        correlation_from_covariance(np.diag([1.0, 0.0]))
