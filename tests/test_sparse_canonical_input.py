"""Sparse rows with duplicate or unsorted entries are read as scipy defines them.

scipy.sparse allows a CSR/CSC matrix to store one position several times (its value is
the sum) and its indices unsorted; code that walks ``indices`` and ``data`` directly
(LIBSVM through scikit-learn, the Cython engines) reads such a matrix differently from
its canonical form.  ``check_X`` canonicalises at the public boundary (a copy: the caller's
matrix is left as it was), so every method sees the same numbers either way.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import multilabel_core
from multilabel_core.validation import check_X


def _split_entries(A: sp.csr_matrix, fmt: str):
    """A matrix equal to ``A`` whose every stored entry is split in two (0.3 v and 0.7 v), the halves
    of each row (or column) stored in reverse order: duplicate, unsorted indices."""
    A = A.tocsr() if fmt == "csr" else A.tocsc()
    data, indices, indptr = [], [], [0]
    for major in range(A.shape[0] if fmt == "csr" else A.shape[1]):
        lo, hi = A.indptr[major], A.indptr[major + 1]
        values, positions = A.data[lo:hi], A.indices[lo:hi]
        data += [*(0.3 * values)[::-1], *(0.7 * values)]
        indices += [*positions[::-1], *positions]
        indptr.append(len(indices))
    matrix = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    return matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)), shape=A.shape)


def _canonical_copy(A):
    B = A.copy()
    B.sum_duplicates()
    return B


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 6))
    X[rng.random(X.shape) < 0.4] = 0.0
    Y = (X[:, :3] + 0.5 * rng.standard_normal((60, 3)) > 0).astype(int)
    return sp.csr_matrix(X), Y


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_check_x_sums_duplicates_and_sorts_without_touching_the_input(data, fmt):
    raw = _split_entries(data[0], fmt)
    before = (raw.data.copy(), raw.indices.copy(), raw.indptr.copy())
    checked = check_X(raw)
    assert checked.format == fmt and checked is not raw
    assert checked.has_canonical_format and checked.nnz == data[0].nnz
    np.testing.assert_allclose(checked.toarray(), data[0].toarray(), rtol=1e-15, atol=0.0)
    for array, kept in zip((raw.data, raw.indices, raw.indptr), before):
        np.testing.assert_array_equal(array, kept)


def test_check_x_keeps_a_canonical_matrix_without_copying(data):
    canonical = data[0].copy()
    assert check_X(canonical) is canonical


@pytest.mark.parametrize(
    "arrays, message",
    [
        ((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), "column index 7 out of range"),
        ((np.ones(2), np.array([0, -1]), np.array([0, 1, 2])), "column index -1 out of range"),
        ((np.ones(2), np.array([0, 1]), np.array([0, 2, 1])), "indptr must be non-decreasing"),
    ],
)
def test_check_x_refuses_malformed_compressed_arrays(arrays, message):
    X = sp.csr_matrix((2, 3))
    X.data, X.indices, X.indptr = arrays  # what a hostile file reader could hand over
    with pytest.raises(ValueError, match=message):
        check_X(X)


def test_summed_duplicates_that_overflow_are_refused():
    X = sp.csr_matrix((np.array([1e308, 1e308]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_X(X)


@pytest.mark.parametrize("spec", multilabel_core.list_methods(), ids=lambda spec: spec.name)
def test_every_method_predicts_alike_on_duplicate_entries_and_on_the_canonical_form(data, spec):
    X, Y = data
    raw = _split_entries(X, "csr")
    canonical = _canonical_copy(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the default budgets are not the point
        try:
            on_raw = spec.estimator().fit(raw, Y)
        except ImportError:
            pytest.skip(f"{spec.name} needs an optional package")
        on_canonical = spec.estimator().fit(canonical, Y)
        # The same rows, the same numbers: the same computation, bit for bit.
        np.testing.assert_array_equal(on_raw.predict(raw), on_canonical.predict(canonical))
        np.testing.assert_array_equal(on_raw.decision_function(raw), on_canonical.decision_function(canonical))
