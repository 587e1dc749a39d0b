"""Public hypothesis strategies for multi-label data and the parts of a method.

Plugin authors test their solvers with the same generators the core uses::

    from hypothesis import given
    from multilabel_core.testing.strategies import multilabel_problems

    @given(multilabel_problems(sparse=None))
    def test_fit(problem):
        X, Y = problem
        ...

Every size argument accepts an int or a hypothesis strategy of ints; the defaults are
small so that solver properties stay fast.  Floats are finite, never subnormal, and
bounded by ``magnitude`` so that sums and products stay well conditioned.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "feature_matrices",
    "label_matrices",
    "multilabel_problems",
    "score_matrices",
    "sign_matrices",
    "spd_matrices",
]

_SAMPLES = st.integers(4, 12)
_LABELS = st.integers(2, 5)
_FEATURES = st.integers(1, 6)


def _sizes(value) -> st.SearchStrategy[int]:
    return st.just(value) if isinstance(value, int) else value


def _bounded_floats(magnitude: float) -> st.SearchStrategy[float]:
    return st.floats(-magnitude, magnitude, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def label_matrices(draw, n_samples=_SAMPLES, n_labels=_LABELS, both_classes: bool = True) -> np.ndarray:
    """A dense (n, L) int8 {0, 1} indicator matrix.

    With ``both_classes`` every label column holds at least one 0 and one 1 (what a
    per-label classifier needs); ``n_samples`` must then be at least 2.
    """
    n = draw(_sizes(n_samples))
    n_lab = draw(_sizes(n_labels))
    if both_classes and n < 2:
        raise ValueError(f"both_classes needs n_samples >= 2, got {n}")
    Y = draw(hnp.arrays(np.int8, (n, n_lab), elements=st.integers(0, 1)))
    if both_classes:
        for j in range(n_lab):
            if Y[:, j].min() == Y[:, j].max():
                # Flip one drawn row so the column keeps the rest of its draw.
                i = draw(st.integers(0, n - 1))
                Y[i, j] = 1 - Y[i, j]
    return Y


@st.composite
def sign_matrices(draw, n_samples=_SAMPLES, n_labels=_LABELS, both_classes: bool = False) -> np.ndarray:
    """A dense (n, L) float64 {-1, +1} matrix (the papers' y_ij)."""
    Y = draw(label_matrices(n_samples, n_labels, both_classes=both_classes))
    return 2.0 * Y.astype(np.float64) - 1.0


def score_matrices(n_samples=_SAMPLES, n_labels=_LABELS, magnitude: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """A dense (n, L) float64 matrix of scores (or real targets) in [-magnitude, magnitude]."""
    return _sizes(n_samples).flatmap(
        lambda n: _sizes(n_labels).flatmap(
            lambda n_lab: hnp.arrays(np.float64, (n, n_lab), elements=_bounded_floats(magnitude))
        )
    )


@st.composite
def feature_matrices(
    draw, n_samples=_SAMPLES, n_features=_FEATURES, sparse: bool | None = False, magnitude: float = 10.0,
    formats=("csr", "csc"),
):
    """A finite (n, d) float64 feature matrix.

    ``sparse``: False -> dense ndarray; True -> scipy.sparse matrix in one of ``formats``
    with about half of its entries zero; None -> either.
    """
    n = draw(_sizes(n_samples))
    d = draw(_sizes(n_features))
    dense = draw(hnp.arrays(np.float64, (n, d), elements=_bounded_floats(magnitude)))
    if sparse is None:
        sparse = draw(st.booleans())
    if not sparse:
        return dense
    keep = draw(hnp.arrays(np.bool_, (n, d)))
    matrix = sp.csr_matrix(np.where(keep, dense, 0.0))
    return matrix.asformat(draw(st.sampled_from(formats)))


@st.composite
def spd_matrices(draw, n=_LABELS, min_eigenvalue: float = 1e-2, max_eigenvalue: float = 1e2) -> np.ndarray:
    """A symmetric positive definite (n, n) float64 matrix, eigenvalues in [min, max].

    Built as ``Q diag(lambda) Q^T`` with ``Q`` orthogonal (from the QR factorisation of a
    drawn matrix), so the condition number is bounded by ``max / min``.
    """
    size = draw(_sizes(n))
    eigenvalues = draw(
        hnp.arrays(np.float64, size, elements=st.floats(min_eigenvalue, max_eigenvalue, allow_subnormal=False))
    )
    seed = draw(st.integers(0, 2**32 - 1))
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((size, size)))
    A = (Q * eigenvalues) @ Q.T
    return (A + A.T) / 2.0


@st.composite
def multilabel_problems(
    draw, n_samples=_SAMPLES, n_features=_FEATURES, n_labels=_LABELS, sparse: bool | None = False,
    both_classes: bool = True,
):
    """A pair ``(X, Y)``: features from :func:`feature_matrices`, labels from :func:`label_matrices`."""
    n = draw(_sizes(n_samples))
    X = draw(feature_matrices(n, n_features, sparse=sparse))
    Y = draw(label_matrices(n, n_labels, both_classes=both_classes))
    return X, Y
