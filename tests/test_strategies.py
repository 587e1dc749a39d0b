"""The public hypothesis strategies keep their promises."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.testing.strategies import (
    feature_matrices,
    label_matrices,
    multilabel_problems,
    score_matrices,
    sign_matrices,
    spd_matrices,
)


@given(label_matrices(n_samples=st.integers(2, 8), n_labels=3))
def test_label_matrices_have_both_classes_in_every_column(Y):
    assert Y.dtype == np.int8 and Y.shape[1] == 3
    assert set(np.unique(Y)) <= {0, 1}
    assert np.all(Y.min(axis=0) == 0) and np.all(Y.max(axis=0) == 1)


@given(st.data())
def test_both_classes_needs_two_rows(data):
    with pytest.raises(ValueError, match="n_samples >= 2"):
        data.draw(label_matrices(n_samples=1))


@given(sign_matrices(4, 2), score_matrices(4, 2, magnitude=2.0))
def test_signs_and_scores(Y, T):
    assert set(np.unique(Y)) <= {-1.0, 1.0} and Y.dtype == np.float64
    assert T.shape == (4, 2) and np.all(np.abs(T) <= 2.0)


@given(feature_matrices(sparse=True))
def test_sparse_feature_matrices_are_csr_or_csc_and_finite(X):
    assert sp.issparse(X) and X.format in ("csr", "csc")
    assert np.all(np.isfinite(X.data))


@given(spd_matrices(st.integers(1, 5)))
def test_spd_matrices_are_symmetric_positive_definite(A):
    np.testing.assert_array_equal(A, A.T)
    assert np.linalg.eigvalsh(A).min() > 0.0


@given(multilabel_problems(sparse=None))
def test_problems_pair_rows(problem):
    X, Y = problem
    assert X.shape[0] == Y.shape[0]
