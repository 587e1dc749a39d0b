"""score_rounding_bound: the rounding bound that a model and its loaded copy are held to."""

from __future__ import annotations

import numpy as np
import pytest
from multilabel_core_plugins.baselines import MLkNN
from multilabel_core_plugins.br import BinaryRelevance
from multilabel_core_plugins.mlrl import BSVM

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.kernels import LinearKernel, PolynomialKernel, PrecomputedKernel, RBFKernel
from multilabel_core.testing.rounding import gamma, kernel_rounding_bound, score_rounding_bound


@pytest.fixture(scope="module")
def data():
    dataset = make_correlated_multilabel(n_samples=50, n_features=7, n_labels=3, random_state=3)
    return dataset.X, dataset.Y


def misaligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` 8 bytes past a 64-byte boundary: SIMD kernels take their unaligned path."""
    buffer = np.empty(a.nbytes + 128, dtype=np.uint8)
    start = (-buffer.ctypes.data) % 64 + 8
    view = buffer[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    view[...] = a
    return view


def evaluations(model, X):
    """The scores of X by every path we can provoke: aliasing, alignment, order, row by row."""
    yield model.decision_function(X)
    yield model.decision_function(misaligned(X))
    yield model.decision_function(np.asfortranarray(X))
    yield np.vstack([model.decision_function(X[i : i + 1]) for i in range(X.shape[0])])


MODELS = {
    "linear": lambda: BinaryRelevance(C=1.0),
    "rbf expansion": lambda: BSVM(kernel="rbf"),
    "linear expansion": lambda: BSVM(kernel="linear"),
    "poly expansion": lambda: BSVM(kernel=PolynomialKernel(degree=3)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_evaluation_path_is_within_the_bound(name, data):
    X, Y = data
    model = MODELS[name]().fit(X, Y)
    # Scoring the model's own training copy aliases X_fit_ (numpy's rank-k update path).
    rows = getattr(model, "X_fit_", X)
    reference = model.decision_function(rows)
    bound = score_rounding_bound(model, rows, reference)
    assert bound is not None
    for scores in evaluations(model, rows):
        assert np.all(np.abs(scores - reference) <= bound)
    # A bound of rounding, far below any solver tolerance: a 1e-9 change is detected.
    assert bound.max() < 1e-12 * max(1.0, np.abs(reference).max()) * rows.shape[0]
    assert np.any(np.abs(reference + 1e-9 - reference) > bound)


def test_a_precomputed_kernel_has_no_kernel_rounding(data):
    X, _ = data
    K = RBFKernel(gamma=0.5)(X)
    np.testing.assert_array_equal(kernel_rounding_bound(PrecomputedKernel(), K, K), np.zeros_like(K))


@pytest.mark.parametrize("kernel", [LinearKernel(), RBFKernel(gamma=0.3), PolynomialKernel(degree=2, gamma=0.2)])
def test_kernel_values_are_within_their_bound(kernel, data):
    X, _ = data
    Z = X[::2] * 3.0
    reference = kernel(X, Z)
    bound = kernel_rounding_bound(kernel, X, Z)
    for A, B in ((misaligned(X), Z), (np.asfortranarray(X), misaligned(Z)), (X.T.copy().T, Z)):
        assert np.all(np.abs(kernel(A, B) - reference) <= bound)
    assert np.all(bound <= 1e-12 * np.maximum(1.0, np.abs(reference)))


def test_no_bound_is_claimed_for_scores_of_another_form(data):
    X, Y = data
    assert score_rounding_bound(MLkNN().fit(X, Y), X) is None

    class ScoresSquared(BinaryRelevance):
        def decision_function(self, X):
            return super().decision_function(X) ** 2

    assert score_rounding_bound(ScoresSquared().fit(X, Y), X) is None


def test_gamma():
    assert gamma(1) == pytest.approx(np.finfo(float).eps / 2)
    with pytest.raises(ValueError, match="undefined"):
        gamma(2**53)
