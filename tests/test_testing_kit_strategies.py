"""The strategies added for the solver tests keep their promises (label density, degenerate cases, PSD kernels, ...)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.testing.strategies import (
    DEGENERACIES,
    box_bounds,
    kernel_dual_problems,
    label_covariances,
    label_matrices,
    multilabel_problems,
    psd_kernels,
    sign_labels,
    sign_matrices,
)


def dense(X):
    return X.toarray() if sp.issparse(X) else X


def draw_once(strategy):
    @given(st.data())
    def draw(data):
        data.draw(strategy)

    draw()


@given(label_matrices(n_samples=st.integers(4, 20), n_labels=3, label_density=(0.2, 0.4)))
def test_label_density_bounds_every_column(Y):
    n = Y.shape[0]
    counts = Y.sum(axis=0)
    assert np.all(counts >= np.ceil(0.2 * n)) and np.all(counts <= np.floor(0.4 * n))
    assert np.all(counts >= 1) and np.all(counts <= n - 1)


@given(label_matrices(n_samples=10, n_labels=2, both_classes=False, label_density=(0.0, 0.0)))
def test_zero_density_gives_empty_columns(Y):
    assert not Y.any()


@pytest.mark.parametrize(
    "options, message",
    [
        ({"label_density": (0.5, 0.2)}, "0 <= low <= high <= 1"),
        ({"label_density": (0.0, 0.1), "n_samples": 5}, "no column of 5 rows"),
    ],
)
def test_impossible_label_densities_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        draw_once(label_matrices(**{"n_samples": 8, **options}))


@given(sign_labels(n_samples=st.integers(2, 10), n_labels=st.integers(1, 4)))
def test_sign_labels_hold_both_signs_in_every_column(Y):
    assert Y.dtype == np.float64 and set(np.unique(Y)) == {-1.0, 1.0}
    assert np.all(Y.max(axis=0) == 1.0) and np.all(Y.min(axis=0) == -1.0)


@given(sign_matrices(3, 2))
def test_sign_matrices_keep_their_positional_sizes(Y):
    assert Y.shape == (3, 2)


@given(multilabel_problems(degenerate={"duplicate_rows"}, sparse=None))
def test_duplicate_rows(problem):
    X, _ = problem
    rows = dense(X)
    assert len({row.tobytes() for row in rows}) < len(rows)


@given(multilabel_problems(degenerate={"constant_labels"}))
def test_constant_label_columns(problem):
    _, Y = problem
    assert np.any(Y.min(axis=0) == Y.max(axis=0))


@given(multilabel_problems(degenerate={"rank_deficient"}, n_features=st.integers(1, 6), sparse=None))
def test_rank_deficient_features(problem):
    X, _ = problem
    X = dense(X)
    assert np.linalg.matrix_rank(X) < min(X.shape)
    K = X @ X.T
    assert np.linalg.matrix_rank(K) < K.shape[0]


@given(multilabel_problems(degenerate=True, sparse=True))
def test_any_degenerate_problem_is_well_formed(problem):
    X, Y = problem
    assert sp.issparse(X) and X.shape[0] == Y.shape[0] and np.all(np.isfinite(X.data))
    assert Y.dtype == np.int8 and set(np.unique(Y)) <= {0, 1}


def test_unknown_degenerate_cases_are_refused():
    with pytest.raises(ValueError, match="unknown degenerate case"):
        draw_once(multilabel_problems(degenerate={"duplicate_columns"}))
    assert set(DEGENERACIES) == {"duplicate_rows", "constant_labels", "rank_deficient"}


@given(psd_kernels(n=st.integers(1, 8)))
def test_psd_kernels_are_symmetric_positive_semidefinite(K):
    np.testing.assert_array_equal(K, K.T)
    eigenvalues = np.linalg.eigvalsh(K)
    assert eigenvalues.min() >= -1e-10 * max(1.0, eigenvalues.max())


@given(st.integers(2, 8).flatmap(lambda n: st.tuples(st.just(n), psd_kernels(n=n, rank=st.integers(0, n - 1)))))
def test_psd_kernels_of_low_rank_are_singular(case):
    n, K = case
    assert K.shape == (n, n) and np.linalg.matrix_rank(K) < n


@given(label_covariances(n_labels=st.integers(1, 6), condition=1e3))
def test_label_covariances_are_positive_definite_with_unit_trace(omega):
    np.testing.assert_array_equal(omega, omega.T)
    eigenvalues = np.linalg.eigvalsh(omega)
    assert eigenvalues.min() > 0 and eigenvalues.max() / eigenvalues.min() <= 1e3 * (1 + 1e-9)
    assert np.trace(omega) == pytest.approx(1.0, abs=1e-12)


@given(box_bounds(shape=(5, 3)))
def test_box_bounds_range_from_tiny_to_huge(C):
    assert C.shape == (5, 3) and np.all((1e-6 <= C) & (C <= 1e6))


@given(box_bounds(shape=st.sampled_from([(4,), (2, 2)]), tiny=0.5, huge=2.0, constant=True))
def test_constant_box_bounds(C):
    assert np.all(C == C.flat[0]) and 0.5 <= C.flat[0] <= 2.0


def test_box_bounds_refuse_bad_ranges():
    with pytest.raises(ValueError, match="0 < tiny <= huge"):
        draw_once(box_bounds(shape=3, tiny=0.0))


@given(kernel_dual_problems(n_samples=st.integers(2, 6), n_labels=st.integers(1, 3)))
def test_kernel_dual_problems_fit_together(problem):
    K, omega, Y, C = problem
    n, n_labels = Y.shape
    assert K.shape == (n, n) and omega.shape == (n_labels, n_labels) and C.shape == (n, n_labels)
    assert np.trace(omega) == pytest.approx(1.0) and np.all(Y.max(axis=0) == 1) and np.all(Y.min(axis=0) == -1)


@given(kernel_dual_problems(n_samples=3, n_labels=2, identity_relation=True, constant_box=True))
def test_kernel_dual_problems_for_bsvm(problem):
    _, omega, _, C = problem
    np.testing.assert_array_equal(omega, np.eye(2))
    assert np.all(C == C[0, 0])
