"""Nystroem and random Fourier features: their error against the exact kernel, the component contract, fits by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import multilabel_core
from multilabel_core.kernel_approximation import NystroemKernel, RandomFourierKernel
from multilabel_core.kernels import PolynomialKernel, PrecomputedKernel, RBFKernel, make_kernel
from multilabel_core.testing import check_component
from multilabel_core.testing.rounding import U

EPS = np.finfo(np.float64).eps


def _rows(n=60, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def _nystroem_rounding(K: np.ndarray, m: int) -> float:
    """Spectral-norm allowance of C W^+ C^T against K when the landmarks are every row.

    W = K: the pseudo-inverse drops eigenvalues below m eps lambda_max (each dropped direction
    leaves at most that much of K out), and the eigendecomposition and the products round with a
    backward error of order m u ||K||.
    """
    largest = float(np.linalg.norm(K, 2))
    return m * EPS * largest + 64 * m * U * largest


@given(st.integers(2, 25), st.integers(1, 6), st.integers(0, 2**16), st.sampled_from(["rbf", "poly", "linear"]))
@settings(max_examples=30, deadline=None)
def test_nystroem_with_every_row_as_a_landmark_recovers_the_kernel(n, d, seed, base):
    X = _rows(n, d, seed)
    approximation = NystroemKernel(base=base, n_components=n, random_state=seed).resolve(X)
    exact = approximation.base_kernel_(X)
    error = np.linalg.norm(approximation(X) - exact, 2)
    assert error <= _nystroem_rounding(exact, n)


def test_nystroem_error_shrinks_as_landmarks_are_added():
    # Uniform landmarks with one seed are nested (the first m of one permutation), so the residual
    # K - C W^+ C^T (a Schur complement) shrinks in the Loewner order: its trace cannot grow.
    X = _rows(120, 6, 3)
    exact = RBFKernel().resolve(X)(X)
    traces, norms = [], []
    for m in (5, 10, 20, 40, 80, 120):
        approximation = NystroemKernel(n_components=m, random_state=7).resolve(X)
        residual = exact - approximation(X)
        traces.append(float(np.trace(residual)))
        norms.append(float(np.linalg.norm(residual, 2)))
        # The residual is positive semi-definite up to rounding.
        assert np.linalg.eigvalsh((residual + residual.T) / 2)[0] >= -_nystroem_rounding(exact, m)
    allowance = _nystroem_rounding(exact, 120)
    assert all(later <= earlier + allowance for earlier, later in zip(traces, traces[1:]))
    assert norms[-1] <= allowance < norms[0]


def test_nystroem_kmeans_landmarks_approximate_better_than_a_handful_of_rows():
    X = np.vstack([_rows(40, 3, s) + 6.0 * s for s in range(3)])  # three clusters
    exact = RBFKernel(gamma=0.2)(X)
    errors = {
        choice: np.linalg.norm(exact - NystroemKernel(n_components=3, landmarks=choice, gamma=0.2).resolve(X)(X), 2)
        for choice in ("uniform", "kmeans")
    }
    # One landmark per cluster: k-means puts one in each, a uniform draw of 3 rows may miss one.
    assert errors["kmeans"] <= errors["uniform"] + 1e-12
    assert errors["kmeans"] < 0.5 * np.linalg.norm(exact, 2)


def test_random_fourier_features_converge_to_the_rbf_kernel():
    # E[phi(x) phi(z)] = k(x, z); each entry is a mean of D bounded terms (|2 cos cos| <= 2), so by
    # Hoeffding its error exceeds t with probability <= 2 exp(-D t^2 / 8).  t chosen so that the
    # failure probability over the 15 x 15 entries is below 1e-9 at every D; the mean error must fall.
    X = _rows(15, 4, 5)
    exact = RBFKernel(gamma=0.3)(X)
    mean_errors = []
    for D in (100, 1000, 10000):
        K = RandomFourierKernel(n_components=D, gamma=0.3, random_state=11).resolve(X)(X)
        t = np.sqrt(8.0 * np.log(2 * 15 * 15 / 1e-9) / D)
        assert np.abs(K - exact).max() <= t
        mean_errors.append(np.abs(K - exact).mean())
    assert mean_errors[2] < mean_errors[0]


def test_random_fourier_features_average_over_seeds_to_the_kernel():
    X = _rows(6, 3, 9)
    exact = RBFKernel(gamma=0.5)(X)
    draws = [RandomFourierKernel(n_components=50, gamma=0.5, random_state=s).resolve(X)(X) for s in range(400)]
    # 400 x 50 = 20000 terms per entry: Hoeffding at failure 1e-9 over 36 entries.
    t = np.sqrt(8.0 * np.log(2 * 36 / 1e-9) / 20000)
    assert np.abs(np.mean(draws, axis=0) - exact).max() <= t


@pytest.mark.parametrize(
    "kernel",
    [
        NystroemKernel(n_components=4),
        NystroemKernel(n_components=3, landmarks="kmeans", gamma=0.5),
        NystroemKernel(base=PolynomialKernel(degree=2), n_components=5),
        RandomFourierKernel(n_components=20),
    ],
    ids=repr,
)
def test_check_component_passes(kernel):
    check_component(kernel, max_examples=25)


def test_features_are_explicit_and_kernel_is_their_inner_product():
    X, Xs = _rows(30, 4, 1), sp.csr_matrix(_rows(30, 4, 1))
    for kernel in (NystroemKernel(n_components=10), RandomFourierKernel(n_components=40)):
        fitted = kernel.resolve(X)
        Phi = fitted.features(X)
        assert Phi.shape[0] == 30 and Phi.shape[1] <= 40
        np.testing.assert_allclose(fitted(X[:7], X), Phi[:7] @ Phi.T, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fitted.features(Xs), Phi, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fitted.diagonal(X), np.einsum("ij,ij->i", Phi, Phi), rtol=1e-12)
        assert fitted.resolve(_rows(5, 4, 2)) is fitted  # fitted once, on the training rows


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="resolve"):
        NystroemKernel()(_rows(3, 2))
    with pytest.raises(ValueError, match="resolve"):
        RandomFourierKernel().features(_rows(3, 2))
    with pytest.raises(ValueError, match="n_components"):
        NystroemKernel(n_components=0)
    with pytest.raises(ValueError, match="landmarks"):
        NystroemKernel(landmarks="random")
    with pytest.raises(ValueError, match="random_state"):
        RandomFourierKernel(random_state=-1)
    with pytest.raises(ValueError, match="base must be a kernel of feature rows"):
        NystroemKernel(base=PrecomputedKernel())
    with pytest.raises(ValueError, match="not both"):
        RandomFourierKernel(gamma=1.0, width=3.0)
    with pytest.raises(ValueError, match="is 0 on the"):
        NystroemKernel(base="linear", n_components=2).resolve(np.zeros((4, 2)))


def test_registered_by_name():
    names = {spec.name for spec in multilabel_core.list_components("kernel")}
    assert {"nystroem", "rff"} <= names
    assert make_kernel("nystroem", gamma=0.5) == NystroemKernel(gamma=0.5)
    assert make_kernel("rff", gamma=0.5, n_components=30) == RandomFourierKernel(gamma=0.5, n_components=30)


@pytest.mark.parametrize("method", ["bsvm", "mlrl", "mtrl"])
@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
def test_kernel_methods_fit_by_name_on_the_approximate_kernel(method, kernel):
    # A method given the approximation by name solves the problem of the approximate kernel matrix
    # phi(X) phi(X)^T: the same fit as the method given that matrix as a precomputed kernel (the same
    # matrix, bit for bit, and the same deterministic solver), so the same dual coefficients and scores.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((70, 5))
    Y = (X[:, :3] + 0.3 * rng.standard_normal((70, 3)) > 0).astype(int)
    approximate = multilabel_core.make_method(method, kernel=kernel).fit(X, Y)
    assert type(approximate.kernel_).__name__ in ("NystroemKernel", "RandomFourierKernel")
    K = approximate.kernel_(X)
    given = multilabel_core.make_method(method, kernel="precomputed").fit(K, Y)
    np.testing.assert_array_equal(approximate.dual_coef_, given.dual_coef_)
    K_new = approximate.kernel_(X[:9], X)
    np.testing.assert_allclose(approximate.decision_function(X[:9]), given.decision_function(K_new), rtol=1e-12,
                               atol=1e-12 * np.abs(approximate.dual_coef_).sum())


@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
def test_a_model_with_an_approximation_saves_and_loads(tmp_path, kernel):
    from multilabel_core.persistence import load_model, save_model

    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 4))
    Y = (X[:, :2] > 0).astype(int)
    model = multilabel_core.make_method("bsvm", kernel=kernel, lam=1e-2).fit(X, Y)
    model.decision_function(X)  # fills the feature cache, which the file must not carry
    save_model(model, tmp_path / "model.skops")
    loaded = load_model(tmp_path / "model.skops")
    assert loaded.kernel_ == model.kernel_
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
