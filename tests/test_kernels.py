"""Stock kernels agree with scikit-learn's pairwise kernels on dense and sparse rows."""

from __future__ import annotations

from contextlib import contextmanager

import attrs
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

import multilabel_core
import multilabel_core.kernels as kernels_module
from multilabel_core.base import Kernel
from multilabel_core.kernels import (
    LinearKernel,
    PolynomialKernel,
    PrecomputedKernel,
    RBFKernel,
    make_kernel,
    mean_pairwise_distance,
)
from multilabel_core.testing.strategies import feature_matrices


def dense(X):
    return X.toarray() if sp.issparse(X) else X


@st.composite
def row_pairs(draw):
    """``(X, Z)`` with one feature count, each dense or sparse (CSR/CSC) at random."""
    d = draw(st.integers(1, 6))
    return draw(feature_matrices(st.integers(1, 10), d, sparse=None)), draw(feature_matrices(st.integers(1, 6), d, sparse=None))


@st.composite
def kernels_and_references(draw):
    """A stock kernel and the scikit-learn function computing the same matrix."""
    kind = draw(st.sampled_from(["linear", "rbf", "poly"]))
    if kind == "linear":
        return LinearKernel(), linear_kernel
    gamma = draw(st.floats(1e-3, 1.0))
    if kind == "rbf":
        return RBFKernel(gamma=gamma), lambda X, Z: rbf_kernel(X, Z, gamma=gamma)
    degree, coef0 = draw(st.integers(1, 4)), draw(st.floats(-1.0, 2.0))
    return (
        PolynomialKernel(degree=degree, gamma=gamma, coef0=coef0),
        lambda X, Z: polynomial_kernel(X, Z, degree=degree, gamma=gamma, coef0=coef0),
    )


def assert_kernels_close(actual, expected):
    scale = 1.0 + np.abs(expected).max()
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9 * scale)


@given(row_pairs(), kernels_and_references())
def test_kernels_equal_scikit_learn(rows, kernel_and_reference):
    (X, Z), (kernel, reference) = rows, kernel_and_reference
    assert_kernels_close(kernel(X, Z), reference(dense(X), dense(Z)))
    assert_kernels_close(kernel(X), reference(dense(X), dense(X)))


@given(row_pairs(), kernels_and_references())
def test_diagonal_is_the_diagonal_of_the_kernel_matrix(rows, kernel_and_reference):
    X, kernel = rows[0], kernel_and_reference[0]
    assert_kernels_close(kernel.diagonal(X), np.diag(kernel(X)))


@contextmanager
def one_row_blocks():
    original = kernels_module.row_blocks
    kernels_module.row_blocks = lambda n_rows, bytes_per_row, budget=None: original(n_rows, bytes_per_row, budget=1)
    try:
        yield
    finally:
        kernels_module.row_blocks = original


@given(row_pairs(), kernels_and_references())
def test_blocking_does_not_change_the_result(rows, kernel_and_reference):
    (X, Z), kernel = rows, kernel_and_reference[0]
    whole = kernel(X, Z)
    with one_row_blocks():
        np.testing.assert_allclose(kernel(X, Z), whole, rtol=1e-12, atol=1e-12)


def test_polynomial_default_gamma_is_one_over_n_features():
    X = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(PolynomialKernel()(X), polynomial_kernel(X, degree=3, coef0=1.0))
    assert PolynomialKernel().resolve(X) == PolynomialKernel(gamma=1.0 / 3)


def test_float32_rows_are_computed_in_float64():
    X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    K = RBFKernel(gamma=0.5)(X, sp.csr_matrix(X))
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, rbf_kernel(X.astype(np.float64), gamma=0.5), atol=1e-12)


@given(feature_matrices(st.integers(2, 12), st.integers(1, 5)), st.sampled_from(["csr", "csc"]))
def test_mean_pairwise_distance_dense_equals_sparse_equals_pdist(X, fmt):
    expected = pdist(X).mean()
    scale = 1.0 + np.linalg.norm(X, axis=1).max()
    assert mean_pairwise_distance(X) == pytest.approx(expected, rel=1e-9, abs=1e-7 * scale)
    assert mean_pairwise_distance(sp.csr_matrix(X).asformat(fmt)) == pytest.approx(expected, rel=1e-9, abs=1e-7 * scale)


def test_mean_pairwise_distance_in_one_row_blocks():
    X = np.random.default_rng(1).standard_normal((7, 4))
    with one_row_blocks():
        assert mean_pairwise_distance(X) == pytest.approx(pdist(X).mean(), rel=1e-12)


def test_rbf_width_convention_on_a_hand_computed_triangle():
    # A 3-4-5 right triangle: the distinct pairwise distances are 3, 4 and 5, mean 4.
    X = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    resolved = RBFKernel().resolve(X)
    assert resolved.width == pytest.approx(4.0)
    assert resolved.gamma == pytest.approx(1.0 / 32.0)
    np.testing.assert_allclose(resolved(X)[0, 1], np.exp(-9.0 / 32.0))
    assert resolved.resolve(np.ones((2, 2))) is resolved  # resolving again keeps the training width


def test_rbf_width_and_gamma_are_two_spellings_of_one_parameter():
    assert RBFKernel(width=2.0).effective_gamma == pytest.approx(1.0 / 8.0)
    np.testing.assert_allclose(RBFKernel(width=2.0)(np.eye(2)), RBFKernel(gamma=1.0 / 8.0)(np.eye(2)))
    RBFKernel(gamma=1.0 / 8.0, width=2.0)  # consistent: accepted
    with pytest.raises(ValueError, match="not both"):
        RBFKernel(gamma=1.0, width=2.0)


def test_unresolved_rbf_refuses_to_compute():
    with pytest.raises(ValueError, match="resolve"):
        RBFKernel()(np.eye(2))
    with pytest.raises(ValueError, match="coincide"):
        RBFKernel().resolve(np.ones((3, 2)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        mean_pairwise_distance(np.ones((1, 2)))


def test_precomputed_kernel_returns_the_given_rows():
    K = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_array_equal(PrecomputedKernel()(K), K)
    np.testing.assert_array_equal(PrecomputedKernel()(K[:1], K), K[:1])
    np.testing.assert_array_equal(PrecomputedKernel().diagonal(K), [2.0, 3.0])
    with pytest.raises(ValueError, match="square"):
        PrecomputedKernel()(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one column per training row"):
        PrecomputedKernel()(np.ones((1, 3)), K)
    with pytest.raises(ValueError, match="sparse"):
        PrecomputedKernel()(sp.csr_matrix(K))
    with pytest.raises(ValueError, match="NaN"):
        PrecomputedKernel()(np.array([[np.nan]]))


@pytest.mark.parametrize(
    "kernel, expected",
    [
        ("linear", LinearKernel()),
        ("rbf", RBFKernel(gamma=0.5)),
        ("poly", PolynomialKernel(gamma=0.5)),
        ("precomputed", PrecomputedKernel()),
        (RBFKernel(width=3.0), RBFKernel(width=3.0)),
    ],
    ids=str,
)
def test_make_kernel(kernel, expected):
    gamma = None if isinstance(kernel, Kernel) else 0.5
    assert make_kernel(kernel, gamma=gamma) == expected


def test_make_kernel_passes_parameters_and_refuses_bad_ones():
    assert make_kernel("poly", degree=2, coef0=0.0) == PolynomialKernel(degree=2, coef0=0.0)
    assert make_kernel("rbf") == RBFKernel()
    registered = sorted(spec.name for spec in multilabel_core.list_components("kernel"))
    assert {"linear", "poly", "precomputed", "rbf"} <= set(registered)
    with pytest.raises(ValueError, match=rf"registered kernel name \({', '.join(registered)}\).*'sigmoid'"):
        make_kernel("sigmoid")
    with pytest.raises(ValueError, match="registered kernel name"):
        make_kernel(RBFKernel)
    with pytest.raises(ValueError, match="kernel 'rbf' has no parameter 'degree'"):
        make_kernel("rbf", degree=2)
    with pytest.raises(ValueError, match="Kernel object"):
        make_kernel(RBFKernel(), gamma=1.0)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: RBFKernel(gamma=0.0), "gamma"),
        (lambda: RBFKernel(gamma=-1.0), "gamma"),
        (lambda: RBFKernel(width=0.0), "width"),
        (lambda: PolynomialKernel(degree=0), "degree"),
        (lambda: PolynomialKernel(degree=2.5), "degree"),
        (lambda: PolynomialKernel(gamma=np.inf), "gamma"),
        (lambda: PolynomialKernel(coef0=np.nan), "coef0"),
    ],
)
def test_parameters_are_validated(build, name):
    with pytest.raises(ValueError, match=name):
        build()


@pytest.mark.parametrize("kernel", [LinearKernel(), RBFKernel(gamma=1.0), PolynomialKernel()], ids=repr)
def test_bad_rows_are_refused(kernel):
    with pytest.raises(ValueError, match="features"):
        kernel(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        kernel(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        kernel(np.ones(3))


def test_flags_are_class_attributes_not_fields():
    assert LinearKernel.linear and not RBFKernel.linear and PrecomputedKernel.precomputed
    for cls in (LinearKernel, RBFKernel, PolynomialKernel, PrecomputedKernel):
        assert not {field.name for field in attrs.fields(cls)} & {"linear", "precomputed"}


@given(feature_matrices(st.integers(1, 12), st.integers(1, 6), sparse=None), kernels_and_references())
def test_training_kernel_is_exactly_symmetric_and_its_columns_are_its_columns(X, kernel_and_reference):
    # Dense rows: G = X X^T is one symmetric rank-k update, symmetric bit for bit, and so is a function of G
    # alone (linear, polynomial); the RBF adds ||x_i||^2 and ||x_j||^2 in the two orders, symmetric to
    # rounding (sparse rows: asserted to rounding by the scikit-learn agreement above).  A column computed
    # alone, as SMO's column cache does, is the matrix's column to rounding, its diagonal entry included.
    kernel = kernel_and_reference[0]
    K = kernel(X)
    if not sp.issparse(X) and not isinstance(kernel, RBFKernel):
        np.testing.assert_array_equal(K, K.T)
    assert_kernels_close(K, K.T)
    for j in range(X.shape[0]):
        assert_kernels_close(kernel(X, X[j : j + 1])[:, 0], K[:, j])
