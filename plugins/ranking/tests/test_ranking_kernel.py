"""SubsetKernel: eq. 18's kernel of a working set of feature subsets (Gu, Li & Han, CIKM 2011)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from multilabel_core_plugins.ranking import SubsetKernel

from multilabel_core.base import Kernel


@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans())
def test_the_kernel_is_eq_18s_weighted_sum_over_the_subsets(seed, T, sparse):
    # sum_t lambda_t (p_t o x)^T (p_t o z) = x^T diag(s) z with s = P^T lambda.
    rng = np.random.default_rng(seed)
    d = 6
    subsets = rng.random((T, d)) < 0.5
    subsets[np.arange(T), rng.integers(0, d, T)] = True
    weights = rng.dirichlet(np.ones(T))
    X, Z = rng.standard_normal((5, d)), rng.standard_normal((3, d))
    kernel = SubsetKernel(subsets, weights=weights)
    expected = sum(w * (X * p) @ (Z * p).T for w, p in zip(weights, subsets))
    given_X, given_Z = (sp.csr_matrix(X), sp.csr_matrix(Z)) if sparse else (X, Z)
    np.testing.assert_allclose(kernel(given_X, given_Z), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.diagonal(given_X), np.diag(kernel(X)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.feature_weights(), weights @ subsets, rtol=1e-15)


def test_the_default_weights_are_uniform_and_the_kernel_is_linear():
    kernel = SubsetKernel([[1, 0, 1], [0, 1, 1]])
    assert isinstance(kernel, Kernel) and kernel.linear and not kernel.precomputed
    assert kernel.subsets.dtype == bool and kernel.n_subsets == 2
    np.testing.assert_array_equal(kernel.weights, [0.5, 0.5])
    np.testing.assert_array_equal(kernel.feature_weights(), [0.5, 0.5, 1.0])
    assert kernel.resolve(np.ones((2, 3))) is kernel


@pytest.mark.parametrize(
    "subsets, weights, message",
    [
        ([1, 0, 1], None, "non-empty \\(T, d\\) matrix"),
        (np.zeros((0, 3)), None, "non-empty \\(T, d\\) matrix"),
        ([[1, 2, 0]], None, "boolean"),
        ([[1, 0, 0], [0, 0, 0]], None, "subsets \\[1\\] are empty"),
        ([[1, 0, 0], [0, 1, 0]], [1.0], "one entry per subset"),
        ([[1, 0, 0], [0, 1, 0]], [0.7, 0.7], "simplex"),
        ([[1, 0, 0], [0, 1, 0]], [1.5, -0.5], "simplex"),
        ([[1, 0, 0], [0, 1, 0]], [np.nan, 1.0], "simplex"),
    ],
)
def test_bad_subsets_and_weights_are_refused(subsets, weights, message):
    with pytest.raises(ValueError, match=message):
        SubsetKernel(subsets) if weights is None else SubsetKernel(subsets, weights=weights)


def test_rows_with_another_number_of_features_are_refused():
    with pytest.raises(ValueError, match="X has 4 features but the subsets have 3"):
        SubsetKernel([[1, 0, 1]])(np.ones((2, 4)))
