"""The synthetic generator: known label covariance, learnable labels, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from multilabel_core.datasets import label_covariance, make_correlated_multilabel


def test_defaults_and_determinism():
    ds, sigma = make_correlated_multilabel(random_state=0, return_covariance=True)
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (500, 20, 6)
    assert ds.name == "synthetic" and ds.X.dtype == np.float64 and ds.Y.dtype == np.int8
    again = make_correlated_multilabel(random_state=0)
    np.testing.assert_array_equal(ds.X, again.X)
    np.testing.assert_array_equal(ds.Y, again.Y)
    other = make_correlated_multilabel(random_state=1)
    assert not np.array_equal(ds.X, other.X)
    np.testing.assert_allclose(sigma, label_covariance(6))


def test_block_covariance():
    sigma = label_covariance(8, correlation=0.5, group_size=2)
    # groups {0,1} {2,3} form pair 0, {4,5} {6,7} pair 1
    assert sigma[0, 1] == 0.5 and sigma[0, 2] == -0.5 and sigma[2, 3] == 0.5 and sigma[0, 4] == 0.0
    np.testing.assert_array_equal(np.diag(sigma), 1.0)
    assert np.linalg.eigvalsh(sigma).min() > 0


@given(
    st.integers(2, 60), st.integers(1, 8), st.integers(1, 9), st.floats(0.05, 0.9), st.integers(0, 2**32 - 1)
)
def test_every_label_has_both_classes(n, d, n_labels, density, seed):
    ds, cov = make_correlated_multilabel(n, d, n_labels, density=density, random_state=seed, return_covariance=True)
    counts = ds.Y.sum(axis=0)
    assert np.all(counts >= 1) and np.all(counts <= n - 1)
    assert cov.shape == (n_labels, n_labels)
    np.testing.assert_allclose(cov, cov.T, atol=1e-12)


def test_low_rank_weights():
    ds, cov = make_correlated_multilabel(n_labels=6, n_features=20, rank=2, random_state=0, return_covariance=True)
    assert np.linalg.matrix_rank(cov, tol=1e-8) == 2
    with pytest.raises(ValueError, match="rank"):
        make_correlated_multilabel(n_features=3, n_labels=6, rank=4)


def test_label_correlations_are_recoverable():
    ds, sigma = make_correlated_multilabel(n_samples=600, n_labels=9, random_state=3, return_covariance=True)
    empirical = np.corrcoef(ds.Y, rowvar=False)
    strong = np.abs(sigma) >= 0.3
    np.fill_diagonal(strong, False)
    assert strong.sum() > 0
    np.testing.assert_array_equal(np.sign(empirical[strong]), np.sign(sigma[strong]))
    weak = np.abs(sigma) < 1e-9
    assert np.abs(empirical[weak]).max() < 0.2


def test_a_linear_per_label_classifier_beats_chance_clearly():
    train = make_correlated_multilabel(random_state=0)
    X, Y = train.X, train.Y
    cut = 350
    for j in range(Y.shape[1]):
        model = LogisticRegression().fit(X[:cut], Y[:cut, j])
        auc = roc_auc_score(Y[cut:, j], model.decision_function(X[cut:]))
        assert auc > 0.9, (j, auc)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 1}, "n_samples"),
        ({"noise": -1.0}, "noise"),
        ({"density": 1.0}, "density"),
        ({"correlation": 1.0}, "correlation"),
        ({"group_size": 0}, "group_size"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_correlated_multilabel(**kwargs)


@given(st.integers(1, 14), st.integers(1, 5), st.floats(0.0, 0.95), st.integers(1, 14))
def test_closed_form_eigenpairs_and_best_low_rank(n_labels, group_size, correlation, rank):
    # W is built from a closed-form eigenbasis of Sigma instead of eigh's (which, for the
    # repeated eigenvalues, follows the BLAS kernels): it must be one, and W^T W the best
    # rank-r approximation.  Rounding: sums of at most L products of numbers <= 1 + (L-1) rho.
    from multilabel_core.datasets.synthetic import _block_eigenpairs

    rank = min(rank, n_labels)
    sigma = label_covariance(n_labels, correlation=correlation, group_size=group_size)
    values, vectors = _block_eigenpairs(n_labels, correlation, group_size)
    tol = 8 * n_labels * np.finfo(float).eps * (1 + (n_labels - 1) * correlation)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(n_labels), rtol=0, atol=tol)
    np.testing.assert_allclose(sigma @ vectors, vectors * values, rtol=0, atol=tol)
    ds, cov = make_correlated_multilabel(20, n_labels + 2, n_labels, rank=rank, correlation=correlation,
                                         group_size=group_size, random_state=0, return_covariance=True)
    top = np.sort(np.linalg.eigvalsh(sigma))[::-1]
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(cov))[::-1][:rank], top[:rank], rtol=0, atol=10 * tol)
    gap = np.linalg.norm(sigma - cov, 2)
    assert abs(gap - (top[rank] if rank < n_labels else 0.0)) <= 10 * tol
