"""Nystroem and random Fourier features: their error against the exact kernel, the component contract, fits by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import multilabel_core
from multilabel_core.kernel_approximation import NystroemKernel, RandomFourierKernel, _ExplicitFeatures
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


def _labelled(n=90, d=5, L=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X[:, :L] + 0.3 * rng.standard_normal((n, L)) > 0).astype(int)
    return X, Y


def _approximation(kernel: str, m: int):
    return NystroemKernel(n_components=m) if kernel == "nystroem" else RandomFourierKernel(n_components=m)


def _spy_on_kernel_calls(monkeypatch) -> list:
    """Record the row counts of every ``__call__`` of an explicit-feature kernel (the kernel matrix route)."""
    calls = []
    original = _ExplicitFeatures.__call__

    def spy(self, X, Z=None):
        calls.append((np.shape(X)[0], None if Z is None else np.shape(Z)[0]))
        return original(self, X, Z)

    monkeypatch.setattr(_ExplicitFeatures, "__call__", spy)
    return calls


def _smo_certificates(model) -> list:
    certificates = model.certificate_ if isinstance(model.certificate_, list) else [model.certificate_]
    return [c for c in certificates if "kernel" in c.statistics]


@pytest.mark.parametrize("method", ["bsvm", "mlrl", "mtrl", "ssmlrl"])
@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
def test_a_fit_with_explicit_features_never_forms_a_kernel_matrix(method, kernel, monkeypatch):
    # n = 90 rows, m = 20 features: SMO takes its columns Phi phi(x_j) from the features (the "explicit
    # features" route; a cache_size of 0.01 MB holds 14 of the 90 columns), and the kernel's __call__ --
    # the only way to a kernel matrix, phi(X) phi(Z)^T -- is never reached, in fit or in prediction.
    X, Y = _labelled()
    calls = _spy_on_kernel_calls(monkeypatch)
    model = multilabel_core.make_method(method, kernel=_approximation(kernel, 20), cache_size=0.01).fit(X, Y)
    model.decision_function(X[:17])
    model.predict(X[:3])
    assert calls == []
    certificates = _smo_certificates(model)
    assert certificates and all(c.statistics["kernel"] == "explicit features" for c in certificates)
    # SMO's certificates name its 14 cached columns; the linear route's (tried first for labels apart
    # when the cache holds fewer than n columns, tests/test_smo_feature_route.py) caches none.
    assert all(c.statistics["cache_columns"] == (0 if "route" in c.statistics else 14) for c in certificates)


def test_the_kernel_matrix_route_is_still_taken_by_an_exact_kernel(monkeypatch):
    # The control of the spy: the same fit with the exact RBF kernel computes its matrix.
    X, Y = _labelled()
    model = multilabel_core.make_method("bsvm").fit(X, Y)
    assert model.certificate_.statistics["kernel"] == "precomputed"


def _primal_weights(kernel, X, model) -> np.ndarray:
    """W = phi(X)^T dual_coef (m, L): the model's weights in the approximation's feature space."""
    return kernel.features(X).T @ model.dual_coef_


@given(st.integers(0, 2**16), st.sampled_from(["nystroem", "rff"]), st.sampled_from([1e-4, 1e-2]))
@settings(max_examples=12, deadline=None)
def test_the_feature_route_solves_the_problem_of_the_materialised_kernel(seed, kernel, lam):
    # The same problem solved twice: by SMO on columns of the features, and by SMO on the matrix
    # K = phi(X) phi(X)^T passed precomputed.  Each certificate bounds its primal P above the optimum P*
    # and its dual D below it, so each primal is above the other's dual (weak duality across the two
    # solves).  The primal is 1-strongly convex in W in the norm tr(W M^-1 W^T) (M the label coupling),
    # so P(W) - P* >= 1/2 ||W - W*||^2 and the two weight matrices are within sqrt(2 gap) of W* each.
    X, Y = _labelled(n=60, seed=seed)
    assume(np.all(Y.min(axis=0) < Y.max(axis=0)))  # every label with both classes (an SVM each)
    features = multilabel_core.make_method("bsvm", kernel=_approximation(kernel, 25), lam=lam, tol=1e-6).fit(X, Y)
    K = features.kernel_.features(X) @ features.kernel_.features(X).T
    matrix = multilabel_core.make_method("bsvm", kernel="precomputed", lam=lam, tol=1e-6).fit(K, Y)
    a, b = features.certificate_, matrix.certificate_
    assert a.statistics["kernel"] == "explicit features" and b.statistics["kernel"] == "precomputed"
    # The objectives are sums of n L terms of size up to max(P): their rounding.
    rounding = 8 * Y.size * U * max(abs(a.primal), abs(b.primal), 1.0)
    assert a.primal >= b.dual - rounding and b.primal >= a.dual - rounding
    assert abs(a.primal - b.primal) <= max(a.gap, b.gap) + rounding
    M = features.parts_["regularizer"].label_gram(Y.shape[1])
    difference = _primal_weights(features.kernel_, X, features) - _primal_weights(features.kernel_, X, matrix)
    distance = np.sqrt(max(np.trace(difference @ np.linalg.solve(M, difference.T)), 0.0))
    assert distance <= np.sqrt(2 * max(a.gap, 0.0)) + np.sqrt(2 * max(b.gap, 0.0)) + np.sqrt(rounding)


@pytest.mark.parametrize("method", ["mlrl", "mtrl"])
@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
def test_alternating_methods_reach_the_optimum_of_the_materialised_kernel(method, kernel):
    # MLRL and MTRL learn the relation jointly with the weights (a convex joint problem): both routes'
    # returned objectives J are certified within the relative joint gap g of the optimum,
    # J - g max(1, |J|) <= J* <= J, so the two J differ by at most the larger of those widths.
    X, Y = _labelled(n=70)
    features = multilabel_core.make_method(method, kernel=_approximation(kernel, 25)).fit(X, Y)
    K = features.kernel_.features(X) @ features.kernel_.features(X).T
    matrix = multilabel_core.make_method(method, kernel="precomputed").fit(K, Y)
    assert all(c.statistics["kernel"] == "explicit features" for c in _smo_certificates(features))
    J = [model.objective_history_[-1] for model in (features, matrix)]
    width = [model.joint_gap_history_[-1] * max(1.0, abs(j)) for model, j in zip((features, matrix), J)]
    rounding = 8 * Y.size * U * max(1.0, *map(abs, J))
    assert abs(J[0] - J[1]) <= max(width) + rounding


@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
def test_prediction_from_the_features_is_the_kernel_expansion(kernel):
    # decision_function takes phi(X_new) (phi(X)^T dual_coef), never the (n_new, n) kernel rows; it is
    # the kernel route's phi(X_new) phi(X)^T dual_coef summed in another order: each entry of either is a
    # sum of n m products, which rounds by at most (n + m) u times the sum of the products' magnitudes.
    X, Y = _labelled(n=80)
    model = multilabel_core.make_method("bsvm", kernel=_approximation(kernel, 30), lam=1e-3).fit(X, Y)
    X_new = np.random.default_rng(5).standard_normal((23, X.shape[1]))
    expansion = model.kernel_(X_new, model.X_fit_) @ model.dual_coef_ + model.intercept_
    Phi_new, Phi = model.kernel_.features(X_new), model.kernel_.features(model.X_fit_)
    magnitude = np.abs(Phi_new) @ (np.abs(Phi).T @ np.abs(model.dual_coef_)) + np.abs(model.intercept_)
    allowance = 2 * (X.shape[0] + Phi.shape[1] + 2) * U * magnitude
    assert np.all(np.abs(model.decision_function(X_new) - expansion) <= allowance)
    # One row alone is the row of the block.
    np.testing.assert_allclose(model.decision_function(X_new[4:5]), expansion[4:5], rtol=0, atol=allowance[4].max())


def test_smo_solve_on_an_explicit_kernel_source_matches_the_matrix_and_warm_starts():
    # smo_solve with a KernelSource of an explicit-feature kernel: the column route, whatever the cache
    # budget (here 18 of the 70 columns); a coupled Omega~ (MLRL's joint engine) warm-started from the cold solution's alpha starts
    # from the gradient computed through the features and is certified optimal at once.
    from multilabel_core.solvers.smo import KernelSource, smo_solve

    X, Y = _labelled(n=70)
    S = 2.0 * Y - 1.0
    kernel = NystroemKernel(n_components=15).resolve(X)
    omega = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.0]])
    source = KernelSource(kernel, X)
    cold = smo_solve(source, S, omega, 0.05, tol=1e-8, cache_size=0.01)
    matrix = smo_solve(kernel.features(X) @ kernel.features(X).T, S, omega, 0.05, tol=1e-8)
    assert cold.certificate.statistics["kernel"] == "explicit features"
    assert cold.certificate.statistics["cache_columns"] == 18  # 0.01 MB of columns of 70 rows
    rounding = 8 * Y.size * U * max(1.0, abs(cold.certificate.primal))
    assert cold.certificate.primal >= matrix.certificate.dual - rounding
    assert matrix.certificate.primal >= cold.certificate.dual - rounding
    warm = smo_solve(KernelSource(kernel, X), S, omega, 0.05, alpha0=cold.solution.dual, tol=1e-8)
    assert warm.certificate.converged and warm.certificate.n_iter <= cold.certificate.n_iter
    assert abs(warm.certificate.primal - cold.certificate.primal) <= cold.certificate.gap + warm.certificate.gap + rounding


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


def _standard_split(datasets_dir, name):
    from multilabel_core.datasets import load_dataset

    def dense(dataset):
        X = dataset.X.toarray() if sp.issparse(dataset.X) else np.asarray(dataset.X, dtype=np.float64)
        Y = dataset.Y.toarray() if sp.issparse(dataset.Y) else np.asarray(dataset.Y)
        return X, Y.astype(int)

    X, Y = dense(load_dataset(datasets_dir / f"{name}-train.arff"))
    X_test, Y_test = dense(load_dataset(datasets_dir / f"{name}-test.arff"))
    mean, deviation = X.mean(axis=0), X.std(axis=0)
    deviation[deviation == 0.0] = 1.0
    return (X - mean) / deviation, Y, (X_test - mean) / deviation, Y_test


@pytest.mark.parametrize("kernel", ["nystroem", "rff"])
@pytest.mark.parametrize("name", ["yeast", "scene"])
def test_an_approximation_at_its_default_size_keeps_the_exact_kernels_test_ap_within_001(datasets_dir, name, kernel):
    # The claim of docs/components.md, "Kernel approximations": bsvm at its defaults with the Nystroem
    # kernel of the default m = 500 landmarks, or random Fourier features of the default D = 2000, fitted
    # on the standard training file (features standardised by the training rows), ranks the test file's
    # labels within 0.01 of the exact RBF kernel's average precision.  The fit takes the feature route
    # (no n x n matrix).
    from multilabel_core.kernel_approximation import DEFAULT_COMPONENTS, DEFAULT_RANDOM_FEATURES
    from multilabel_core.metrics import average_precision

    X, Y, X_test, Y_test = _standard_split(datasets_dir, name)
    exact = multilabel_core.make_method("bsvm").fit(X, Y)
    approximate = multilabel_core.make_method("bsvm", kernel=kernel).fit(X, Y)
    assert approximate.certificate_.statistics["kernel"] == "explicit features"
    if kernel == "nystroem":
        # m landmarks (the numerical rank of W may be less)
        assert approximate.kernel_.landmarks_.shape[0] == DEFAULT_COMPONENTS == 500
    else:
        assert approximate.kernel_.frequencies_.shape == (X.shape[1], DEFAULT_RANDOM_FEATURES)
    ap_exact = average_precision(Y_test, exact.decision_function(X_test))
    ap_approximate = average_precision(Y_test, approximate.decision_function(X_test))
    assert abs(ap_approximate - ap_exact) <= 0.01


def test_a_kernel_declaring_explicit_features_without_them_is_refused_by_name():
    from multilabel_core.solvers.smo import KernelSource

    class Declared(RBFKernel):
        explicit_features = True

    with pytest.raises(ValueError, match="Declared declares explicit_features but provides no features"):
        KernelSource(Declared(gamma=1.0), _rows(5, 2))
