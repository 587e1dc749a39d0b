"""The concept network on a kernel of explicit features (Zhang et al., *Multi-Kernel Multi-Label Learning with
Max-Margin Concept Network*, section 3 and eq. 17, on Williams & Seeger's Nystroem kernel): the eigenbasis from
``Phi^T Phi`` is an eigenbasis of ``Phi Phi^T``, its extension to new rows is eq. 17, the model with every
training row as a landmark is the exact kernel's, and no n x n array is formed.

Tolerances.  ``G = Phi^T Phi`` is formed and eigendecomposed with backward errors of about ``(n + p) eps
||Phi||_2^2 = (n + p) eps eta_1`` (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.13, and
LAPACK's symmetric eigensolvers); ``c = 8 (n + p) eps`` below.  A residual ``G v - eta v = r`` becomes
``K u - eta u = Phi r / sqrt(eta)`` for ``u = Phi v / sqrt(eta)``, of norm at most ``||r|| sqrt(eta_1 / eta)``;
relative to eta_1 and with ``eta >= eig_rtol eta_1`` that is ``c / sqrt(eig_rtol)``.  ``U^T U - I`` has entries
``v^T r / sqrt(eta_j eta_k)``, at most ``c / eig_rtol``; eq. 17 from the kernel row divides once more by eta,
``c / eig_rtol^(3/2)`` relative to ``||phi(x)|| / sqrt(eta_1)``.
"""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from multilabel_core_plugins.concept_network import ConceptNetwork, top_eigenpairs
from multilabel_core_plugins.concept_network.kernels import feature_eigenpairs

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernel_approximation import NystroemKernel, RandomFourierKernel
from multilabel_core.kernels import RBFKernel

pytestmark = pytest.mark.filterwarnings("ignore::multilabel_core_plugins.concept_network.ClippingWarning")

EPS = float(np.finfo(np.float64).eps)


def _data(n, d=5, n_labels=4, seed=0):
    data = make_correlated_multilabel(n, d, n_labels, random_state=seed)
    return np.asarray(data.X, dtype=np.float64), np.asarray(data.Y)


@st.composite
def _features(draw):
    n = draw(st.integers(3, 40))
    p = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # Decaying columns, as a Nystroem map's are (its columns are scaled by W's inverse square roots).
    Phi = rng.standard_normal((n, p)) * np.logspace(0, -draw(st.floats(0.0, 4.0)), p)
    return Phi * draw(st.sampled_from([1e-3, 1.0, 1e3])), draw(st.floats(1e-3, 0.5)), draw(st.integers(1, 40))


@given(_features())
def test_the_basis_from_phi_t_phi_is_an_orthonormal_eigenbasis_of_phi_phi_t(case):
    Phi, eig_rtol, m = case
    n, p = Phi.shape
    basis = feature_eigenpairs(Phi, m, eig_rtol=eig_rtol)
    U, eta = basis.vectors, basis.values
    top = eta[0]
    c = 8.0 * (n + p) * EPS
    assert basis.method == "features" and basis.n_components <= min(m, n, p)
    assert np.all(eta >= eig_rtol * top) and np.all(np.diff(eta) <= 0.0)
    K = Phi @ Phi.T
    assert np.linalg.norm(K @ U - U * eta, axis=0).max() <= c * top / np.sqrt(eig_rtol) + c * top
    assert np.abs(U.T @ U - np.eye(U.shape[1])).max() <= c / eig_rtol + c
    # The same top eigenvalues as the n x n matrix's own eigensolver (Weyl: both within their backward errors).
    reference = top_eigenpairs(K, m, eig_rtol=eig_rtol)
    common = min(reference.n_components, basis.n_components)
    assert np.abs(reference.values[:common] - eta[:common]).max() <= 2 * c * top
    # The eigenvalue cut agrees too, up to an eigenvalue within rounding of eig_rtol eta_1.
    kept = {reference.n_components, basis.n_components}
    if len(kept) > 1:
        boundary = np.concatenate([reference.values, eta])[common:]
        assert np.all(np.abs(boundary - eig_rtol * top) <= 2 * c * top)


@given(_features(), st.integers(1, 6))
def test_eq_17_from_features_is_eq_17_from_the_kernel_row(case, n_new):
    Phi, eig_rtol, m = case
    n, p = Phi.shape
    basis = feature_eigenpairs(Phi, m, eig_rtol=eig_rtol)
    F = np.random.default_rng(n_new).standard_normal((n_new, p)) * np.abs(Phi).max()
    from_features = basis.extend_features(F)
    from_kernel = basis.extend(F @ Phi.T)
    c = 8.0 * (n + p) * EPS
    scale = np.linalg.norm(F, axis=1, keepdims=True) / np.sqrt(basis.values[0])
    assert np.all(np.abs(from_features - from_kernel) <= c * scale / eig_rtol**1.5 + c * scale)
    # At the training rows eq. 17 returns the eigenvectors themselves.
    np.testing.assert_allclose(basis.extend_features(Phi), basis.vectors, rtol=0, atol=c * np.abs(basis.vectors).max())


def test_extend_features_is_refused_for_a_basis_of_a_kernel_matrix():
    X, _ = _data(30)
    basis = top_eigenpairs(RBFKernel().resolve(X)(X), 5)
    with pytest.raises(ValueError, match="not from explicit features"):
        basis.extend_features(X)
    with pytest.raises(ValueError, match="features must be"):
        feature_eigenpairs(np.ones(4), 2)


def test_the_default_kernel_is_the_rbf_kernel_by_name_or_object():
    X, Y = _data(80)
    by_default = ConceptNetwork(gamma=0.2).fit(X, Y)
    by_object = ConceptNetwork(kernel=RBFKernel(gamma=0.2)).fit(X, Y)
    assert by_default.basis_.method == by_object.basis_.method != "features"
    np.testing.assert_array_equal(by_default.decision_function(X), by_object.decision_function(X))


def test_every_training_row_as_a_landmark_gives_the_exact_kernels_model():
    """m = n landmarks: ``Phi Phi^T = K W^+ K = K`` up to the pseudo-inverse's cut, so the two routes solve the same
    problems; the scores agree within the certificates' bound (test_concept_network_composition's module docstring:
    ``||z(x)|| (sqrt(2 gap_l) + sqrt(2 gap'_l))`` for a score linear in theta_l with feature vector z(x))."""
    X, Y = _data(150)
    X_new, _ = _data(40, seed=1)
    gamma = 0.15
    exact = ConceptNetwork(gamma=gamma, tol=1e-6).fit(X, Y)
    approximate = ConceptNetwork(kernel=NystroemKernel(n_components=X.shape[0], gamma=gamma), tol=1e-6).fit(X, Y)
    assert approximate.basis_.method == "features" and exact.basis_.method != "features"
    assert exact.certificate_.converged and approximate.certificate_.converged
    Phi = approximate.kernel_.features(X)
    K = exact.kernel_(X)
    perturbation = np.linalg.norm(K - Phi @ Phi.T, 2)
    top = exact.basis_.values[0]
    # The cut drops eigenvalues below m eps lambda_max(W), W = K: the kernels differ at rounding level.
    n = X.shape[0]
    assert perturbation <= 8.0 * n * n * EPS * top
    assert exact.basis_.n_components == approximate.basis_.n_components
    # Weyl: eigenvalues move by at most the perturbation, plus both eigensolvers' backward errors.
    assert np.abs(exact.basis_.values - approximate.basis_.values).max() <= perturbation + 16.0 * n * EPS * top
    eps = exact.parts_["solver"].eps
    for model_a, model_b in ((exact, approximate),):
        scores_a, scores_b = model_a.site_scores(X_new), model_b.site_scores(X_new)
        phi = model_a.eigenfunctions(X_new)
        for label in range(Y.shape[1]):
            z = (1.0 + eps) * np.linalg.norm(phi * np.sqrt(model_a.learned_kernels_.omega[label]), axis=1)
            gaps = [max(m.certificate_.statistics["primal"][label] - m.certificate_.statistics["dual"][label], 0.0)
                    for m in (model_a, model_b)]  # fmt: skip
            bound = z * sum(np.sqrt(2.0 * g) for g in gaps) + 1e-9 * (1.0 + np.abs(scores_a[:, label]))
            assert np.all(np.abs(scores_a[:, label] - scores_b[:, label]) <= bound), label


def _peak_bytes(function):
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_with_nystroem_landmarks_no_n_by_n_array_is_allocated():
    """numpy reports its array allocations to tracemalloc: the fit's and the prediction's peak stay far below one
    n x n float64 array with 40 landmarks, while the exact kernel's fit holds at least one (the control)."""
    n = 2400
    X, Y = _data(n)
    square = 8 * n * n

    def nystroem():
        # gamma is given: the default width is a blocked O(n^2 d) pass over the rows whose blocks are up to
        # the block budget (64 MiB), whatever the kernel.
        return ConceptNetwork(kernel=NystroemKernel(n_components=40, gamma=0.2), n_components=30)

    model = nystroem().fit(X, Y)  # once untraced: imports and caches are not the fit's arrays
    fit_peak = _peak_bytes(lambda: nystroem().fit(X, Y))
    predict_peak = _peak_bytes(lambda: model.predict(X))
    exact_peak = _peak_bytes(lambda: ConceptNetwork(gamma=0.2, n_components=30).fit(X, Y))
    assert exact_peak >= square, "the control: the exact kernel's fit should hold the n x n matrix"
    assert fit_peak < square / 4, (fit_peak, square)
    assert predict_peak < square / 4, (predict_peak, square)


@pytest.mark.parametrize("kernel", [NystroemKernel(n_components=20), RandomFourierKernel(n_components=20)])
def test_fit_and_predict_never_ask_the_kernel_for_a_matrix(kernel, monkeypatch):
    """The kernel's ``__call__`` (phi(X) phi(Z)^T, the only way to a kernel matrix) is never reached."""
    calls = []
    original = type(kernel).__call__

    def spy(self, X, Z=None):
        calls.append((np.shape(X)[0], None if Z is None else np.shape(Z)[0]))
        return original(self, X, Z)

    monkeypatch.setattr(type(kernel), "__call__", spy)
    X, Y = _data(90)
    model = ConceptNetwork(kernel=kernel).fit(X, Y)
    model.predict(X[:17])
    model.decision_function(X[:5])
    model.infer(X[:3])
    assert calls == []


def test_the_eigenbasis_factorises_the_p_by_p_matrix_only(monkeypatch):
    """Every dense eigensolver call of the fit is recorded: one of order p (Phi^T Phi, p = 30 landmark features,
    plus the landmarks' own W of order p), none of order n, and no Lanczos on the n x n kernel."""
    import scipy.linalg

    import multilabel_core_plugins.concept_network.kernels as concept_kernels

    orders = []
    for module, name in ((scipy.linalg, "eigh"), (np.linalg, "eigh"), (concept_kernels, "eigsh")):
        original = getattr(module, name)

        def recorded(a, *args, _name=name, _original=original, **kwargs):
            orders.append((_name, min(np.shape(a))))
            return _original(a, *args, **kwargs)

        monkeypatch.setattr(module, name, recorded)
    X, Y = _data(300)
    ConceptNetwork(kernel=NystroemKernel(n_components=30, gamma=0.2)).fit(X, Y)
    assert orders and all(name == "eigh" and size <= 30 for name, size in orders), orders


def test_random_fourier_features_and_the_nystroem_name_fit_and_predict():
    X, Y = _data(200)
    for kernel in ("nystroem", "rff", RandomFourierKernel(n_components=64, gamma=0.2)):
        model = ConceptNetwork(kernel=kernel).fit(X, Y)
        assert model.basis_.method == "features"
        assert model.basis_.feature_map.shape == (model.kernel_.features(X[:2]).shape[1], model.basis_.n_components)
        assert model.predict(X).shape == Y.shape
        np.testing.assert_allclose(model.eigenfunctions(X), model.basis_.vectors, atol=1e-8)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "no_such_kernel"}, "kernel must be a registered kernel name"),
        ({"kernel": NystroemKernel(n_components=10), "gamma": 0.5}, "kernel is a Kernel object"),
        ({"kernel": 3}, "kernel must be a registered kernel name"),
    ],
)
def test_a_bad_kernel_is_a_value_error_naming_it(params, match):
    X, Y = _data(40)
    with pytest.raises(ValueError, match=match):
        ConceptNetwork(**params).fit(X, Y)
