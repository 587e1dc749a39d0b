"""Public hypothesis strategies for multi-label data and the parts of a method.

Plugin authors test their solvers with the same generators the core uses::

    from hypothesis import given
    from multilabel_core.testing.strategies import multilabel_problems

    @given(multilabel_problems(sparse=None, degenerate=True))
    def test_fit(problem):
        X, Y = problem
        ...

Every size argument accepts an int or a hypothesis strategy of ints; the defaults are
small so that solver properties stay fast.  Floats are finite, never subnormal, and
bounded by ``magnitude`` so that sums and products stay well conditioned.  Options added
after the first release are keyword-only.

The strategies for the dual solvers follow the notation of the papers: ``K`` an (n, n)
kernel matrix, ``Omega`` an (L, L) label covariance, ``Y`` (n, L) signs y_j^i and ``C``
the upper bounds of the box 0 <= alpha <= C.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "DEGENERACIES",
    "box_bounds",
    "feature_matrices",
    "kernel_dual_problems",
    "label_covariances",
    "label_embeddings",
    "label_matrices",
    "multilabel_problems",
    "psd_kernels",
    "score_matrices",
    "sign_labels",
    "sign_matrices",
    "spd_matrices",
]

_SAMPLES = st.integers(4, 12)
_LABELS = st.integers(2, 5)
_FEATURES = st.integers(1, 6)

#: The degenerate cases :func:`multilabel_problems` can build on request.
DEGENERACIES = ("duplicate_rows", "constant_labels", "rank_deficient")


def _sizes(value) -> st.SearchStrategy[int]:
    return st.just(value) if isinstance(value, int) else value


def _bounded_floats(magnitude: float) -> st.SearchStrategy[float]:
    return st.floats(-magnitude, magnitude, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def _seeded_rng(draw) -> np.random.Generator:
    """A generator seeded by hypothesis, for the parts whose exact values need not shrink."""
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


# -- labels ------------------------------------------------------------------------------------


def _positive_counts(n: int, label_density, both_classes: bool) -> tuple[int, int]:
    """Smallest and largest number of ones a column of ``n`` rows may hold."""
    low, high = label_density
    if not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"label_density must be (low, high) with 0 <= low <= high <= 1, got {label_density!r}")
    if both_classes and n < 2:
        raise ValueError(f"both_classes needs n_samples >= 2, got {n}")
    smallest, largest = math.ceil(low * n), math.floor(high * n)
    if both_classes:
        smallest, largest = max(smallest, 1), min(largest, n - 1)
    if smallest > largest:
        raise ValueError(f"no column of {n} rows has a label density in {label_density!r} (both_classes={both_classes})")
    return smallest, largest


@st.composite
def label_matrices(
    draw, n_samples=_SAMPLES, n_labels=_LABELS, both_classes: bool = True, *, label_density=(0.0, 1.0)
) -> np.ndarray:
    """A dense (n, L) int8 {0, 1} indicator matrix.

    Parameters
    ----------
    n_samples, n_labels : int or strategy of ints
    both_classes : bool, default True
        Every label column holds at least one 0 and one 1 (what a per-label classifier
        needs); ``n_samples`` must then be at least 2.
    label_density : (float, float), default (0, 1)
        Range of the fraction of ones in each column; each column draws its own count
        of ones in it, then which rows hold them.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(label_matrices(n_samples=10, n_labels=3, label_density=(0.1, 0.3)))
    ... def test(Y):
    ...     assert (Y.sum(axis=0) <= 3).all()
    >>> test()
    """
    n = draw(_sizes(n_samples))
    n_lab = draw(_sizes(n_labels))
    smallest, largest = _positive_counts(n, label_density, both_classes)
    Y = np.zeros((n, n_lab), dtype=np.int8)
    for j in range(n_lab):
        count = draw(st.integers(smallest, largest))
        rows = draw(st.permutations(range(n)))[:count]
        Y[rows, j] = 1
    return Y


@st.composite
def sign_labels(
    draw, *, n_samples=_SAMPLES, n_labels=_LABELS, label_density=(0.0, 1.0), both_signs: bool = True
) -> np.ndarray:
    """A dense (n, L) float64 matrix of signs y_j^i in {-1, +1}.

    With ``both_signs`` (the default) every column holds both signs, so the equality
    constraint ``sum_j alpha_j^i y_j^i = 0`` of the SMO family has solutions with
    alpha != 0.

    Parameters
    ----------
    n_samples : int or strategy of ints, default=st.integers(4, 12)
        n, the number of rows.
    n_labels : int or strategy of ints, default=st.integers(2, 5)
        L, the number of labels.
    label_density : (float, float), default=(0, 1)
        The range of the fraction of +1 per column.
    both_signs : bool, default=True
        Whether every column holds both signs.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing such matrices.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(sign_labels(n_samples=6, n_labels=2))
    ... def test(Y):
    ...     assert (Y.max(axis=0) == 1).all() and (Y.min(axis=0) == -1).all()
    >>> test()
    """
    Y = draw(label_matrices(n_samples, n_labels, both_classes=both_signs, label_density=label_density))
    return 2.0 * Y.astype(np.float64) - 1.0


def sign_matrices(n_samples=_SAMPLES, n_labels=_LABELS, both_classes: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Draw sign matrices: :func:`sign_labels` with positional sizes and, by default, no promise on a column.

    Parameters
    ----------
    n_samples : int or strategy of ints, default=st.integers(4, 12)
        n, the number of rows.
    n_labels : int or strategy of ints, default=st.integers(2, 5)
        L, the number of labels.
    both_classes : bool, default=False
        Whether every column holds both signs.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing dense (n, L) float64 matrices of signs in {-1, +1}.
    """
    return sign_labels(n_samples=n_samples, n_labels=n_labels, both_signs=both_classes)


def score_matrices(n_samples=_SAMPLES, n_labels=_LABELS, magnitude: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """Draw a dense (n, L) float64 matrix of scores (or real targets) in [-magnitude, magnitude].

    Parameters
    ----------
    n_samples : int or strategy of ints, default=st.integers(4, 12)
        n, the number of rows.
    n_labels : int or strategy of ints, default=st.integers(2, 5)
        L, the number of labels.
    magnitude : float, default=10.0
        The bound on the entries' absolute values.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing such matrices.
    """
    return _sizes(n_samples).flatmap(
        lambda n: _sizes(n_labels).flatmap(
            lambda n_lab: hnp.arrays(np.float64, (n, n_lab), elements=_bounded_floats(magnitude))
        )
    )


# -- features --------------------------------------------------------------------------------


def _as_sparse(draw, dense: np.ndarray, keep: np.ndarray, formats) -> sp.spmatrix:
    matrix = sp.csr_matrix(np.where(keep, dense, 0.0))
    return matrix.asformat(draw(st.sampled_from(formats)))


@st.composite
def feature_matrices(
    draw, n_samples=_SAMPLES, n_features=_FEATURES, sparse: bool | None = False, magnitude: float = 10.0,
    formats=("csr", "csc"),
):
    """A finite (n, d) float64 feature matrix.

    Parameters
    ----------
    n_samples : int or strategy of ints, default=st.integers(4, 12)
        n, the number of rows.
    n_features : int or strategy of ints, default=st.integers(1, 6)
        d, the number of features.
    sparse : bool or None, default=False
        False: a dense ndarray; True: a scipy.sparse matrix in one of ``formats`` with about
        half of its entries zero; None: either.
    magnitude : float, default=10.0
        The bound on the entries' absolute values.
    formats : tuple of str, default=("csr", "csc")
        The sparse formats drawn from.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing such matrices.
    """
    n = draw(_sizes(n_samples))
    d = draw(_sizes(n_features))
    dense = draw(hnp.arrays(np.float64, (n, d), elements=_bounded_floats(magnitude)))
    if sparse is None:
        sparse = draw(st.booleans())
    if not sparse:
        return dense
    return _as_sparse(draw, dense, draw(hnp.arrays(np.bool_, (n, d))), formats)


def _degeneracies(draw, degenerate) -> frozenset:
    if degenerate is False:
        return frozenset()
    if degenerate is True:
        return frozenset(draw(st.sets(st.sampled_from(DEGENERACIES))))
    kinds = frozenset([degenerate] if isinstance(degenerate, str) else degenerate)
    unknown = kinds - set(DEGENERACIES)
    if unknown:
        raise ValueError(f"unknown degenerate case(s) {sorted(unknown)}; choose from {DEGENERACIES}")
    return kinds


@st.composite
def multilabel_problems(
    draw, *, n_samples=_SAMPLES, n_features=_FEATURES, n_labels=_LABELS, sparse: bool | None = False,
    both_classes: bool = True, label_density=(0.0, 1.0), degenerate=False, magnitude: float = 10.0,
):
    """A pair ``(X, Y)``: features (n, d) and a {0, 1} indicator matrix (n, L).

    Parameters
    ----------
    n_samples, n_features, n_labels : int or strategy of ints
    sparse : bool or None, default False
        Dense X (False), CSR/CSC X (True) or either (None).
    both_classes, label_density
        As in :func:`label_matrices`.
    degenerate : bool or collection of str, default False
        Degenerate cases to build, from :data:`DEGENERACIES`: ``"duplicate_rows"``
        (some rows of X repeat others; their labels are drawn independently, so a
        repeated point may carry conflicting labels), ``"constant_labels"`` (some label
        columns are all 0 or all 1, overriding ``both_classes`` for them),
        ``"rank_deficient"`` (X = U V with rank r < min(n, d), r = 0 when
        min(n, d) = 1, so the linear kernel X X^T is rank-deficient; sparse X then
        gets zero columns rather than scattered zeros, which would restore the rank).
        True draws any subset per example; False builds none.
    magnitude : float
        Bound on the entries of X.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(multilabel_problems(sparse=None, degenerate={"duplicate_rows"}))
    ... def test(problem):
    ...     X, Y = problem
    ...     assert X.shape[0] == Y.shape[0]
    >>> test()
    """
    kinds = _degeneracies(draw, degenerate)
    n = draw(_sizes(n_samples))
    d = draw(_sizes(n_features))
    if "rank_deficient" in kinds:
        X = _low_rank_features(draw, n, d, magnitude)
    else:
        X = draw(hnp.arrays(np.float64, (n, d), elements=_bounded_floats(magnitude)))
    if sparse is None:
        sparse = draw(st.booleans())
    if "rank_deficient" in kinds:
        keep = np.broadcast_to(draw(hnp.arrays(np.bool_, (1, d))), (n, d)).copy()
    else:
        keep = draw(hnp.arrays(np.bool_, (n, d)))
    if "duplicate_rows" in kinds and n >= 2:
        for _ in range(draw(st.integers(1, n // 2))):
            source, target = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            X[target], keep[target] = X[source], keep[source]
    Y = draw(label_matrices(n, n_labels, both_classes=both_classes, label_density=label_density))
    if "constant_labels" in kinds:
        columns = draw(st.sets(st.integers(0, Y.shape[1] - 1), min_size=1))
        for j in sorted(columns):
            Y[:, j] = draw(st.integers(0, 1))
    return (_as_sparse(draw, X, keep, ("csr", "csc")) if sparse else X), Y


def _low_rank_features(draw, n: int, d: int, magnitude: float) -> np.ndarray:
    largest = min(n, d) - 1
    rank = draw(st.integers(min(1, largest), largest))
    factor = math.sqrt(magnitude / max(rank, 1))
    U = draw(hnp.arrays(np.float64, (n, rank), elements=_bounded_floats(factor)))
    V = draw(hnp.arrays(np.float64, (rank, d), elements=_bounded_floats(factor)))
    return U @ V


# -- matrices of the dual problems ---------------------------------------------------------------


@st.composite
def spd_matrices(draw, n=_LABELS, min_eigenvalue: float = 1e-2, max_eigenvalue: float = 1e2) -> np.ndarray:
    """A symmetric positive definite (n, n) float64 matrix, eigenvalues in [min, max].

    Built as ``Q diag(lambda) Q^T`` with ``Q`` orthogonal (from the QR factorisation of a
    drawn matrix), so the condition number is bounded by ``max / min``.

    Parameters
    ----------
    n : int or strategy of ints, default=st.integers(2, 5)
        The size.
    min_eigenvalue : float, default=0.01
        The least eigenvalue drawn, positive.
    max_eigenvalue : float, default=100.0
        The largest eigenvalue drawn.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing such matrices.
    """
    size = draw(_sizes(n))
    eigenvalues = draw(
        hnp.arrays(np.float64, size, elements=st.floats(min_eigenvalue, max_eigenvalue, allow_subnormal=False))
    )
    Q, _ = np.linalg.qr(_seeded_rng(draw).standard_normal((size, size)))
    A = (Q * eigenvalues) @ Q.T
    return (A + A.T) / 2.0


@st.composite
def label_covariances(draw, *, n_labels=_LABELS, condition: float = 1e2) -> np.ndarray:
    """A positive definite (L, L) label covariance Omega with trace 1 (MLRL's constraint).

    Eigenvalues are drawn in [1, ``condition``] before the scaling to unit trace, so the
    condition number of Omega is at most ``condition``.

    Parameters
    ----------
    n_labels : int or strategy of ints, default=st.integers(2, 5)
        L, the number of labels.
    condition : float, default=100.0
        The bound on the condition number.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing such matrices.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> @given(label_covariances(n_labels=3))
    ... def test(omega):
    ...     assert abs(np.trace(omega) - 1.0) < 1e-12 and np.linalg.eigvalsh(omega).min() > 0
    >>> test()
    """
    if not condition >= 1.0:
        raise ValueError(f"condition must be >= 1, got {condition!r}")
    omega = draw(spd_matrices(n_labels, 1.0, condition))
    return omega / np.trace(omega)


@st.composite
def psd_kernels(draw, *, n=_SAMPLES, rank=None, magnitude: float = 3.0) -> np.ndarray:
    """A symmetric positive semi-definite (n, n) Gram matrix K = F F^T of rank at most ``rank``.

    Parameters
    ----------
    n : int or strategy of ints
        Number of points.
    rank : int, strategy of ints or None
        Inner dimension of F (the rank of K for a generic F); None draws it in [1, n],
        so rank-deficient kernels (rank < n) are drawn as often as full-rank ones
        allow.  0 gives the zero kernel.
    magnitude : float
        Bound on the entries of F (each is 0 or at least 1e-3 in magnitude).

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> @given(psd_kernels(n=5, rank=2))
    ... def test(K):
    ...     assert np.linalg.matrix_rank(K) <= 2
    >>> test()
    """
    size = draw(_sizes(n))
    inner = draw(st.integers(1, max(size, 1)) if rank is None else _sizes(rank))
    if not 0 <= inner:
        raise ValueError(f"rank must be >= 0, got {inner}")
    # Entries are 0 or at least 1e-3 in magnitude: products of tinier ones underflow to subnormal kernels.
    entries = st.floats(1e-3, magnitude) | st.floats(-magnitude, -1e-3) | st.just(0.0)
    F = draw(hnp.arrays(np.float64, (size, inner), elements=entries))
    K = F @ F.T
    return (K + K.T) / 2.0


@st.composite
def box_bounds(draw, *, shape, tiny: float = 1e-6, huge: float = 1e6, constant: bool = False) -> np.ndarray:
    """Upper bounds C > 0 of a dual box, log-uniform from ``tiny`` to ``huge``.

    Parameters
    ----------
    shape : int, tuple or strategy of tuples
        Shape of the array (``()`` for one scalar C as a 0-d array).
    tiny, huge : float
        Smallest and largest bound, ``0 < tiny <= huge < inf``.
    constant : bool, default False
        One bound for every entry (a scalar cost C) rather than one per entry.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(box_bounds(shape=(4, 2)))
    ... def test(C):
    ...     assert ((1e-6 <= C) & (C <= 1e6)).all()
    >>> test()
    """
    if not 0.0 < tiny <= huge < math.inf:
        raise ValueError(f"box bounds need 0 < tiny <= huge < inf, got tiny={tiny!r}, huge={huge!r}")
    shape = draw(st.just(shape) if isinstance(shape, (int, tuple)) else shape)
    exponents = st.floats(math.log10(tiny), math.log10(huge), allow_subnormal=False)
    if constant:
        return np.full(shape, 10.0 ** draw(exponents))
    return np.clip(10.0 ** draw(hnp.arrays(np.float64, shape, elements=exponents)), tiny, huge)


@st.composite
def kernel_dual_problems(
    draw, *, n_samples=_SAMPLES, n_labels=_LABELS, rank=None, identity_relation: bool = False,
    tiny: float = 1e-6, huge: float = 1e6, constant_box: bool = False,
):
    """A tuple ``(K, omega_tilde, Y, C)`` defining a dual of the SMO family.

    The dual min_a 1/2 (a.y)^T (omega_tilde (x) K) (a.y) - 1^T a, s.t.
    sum_j a_j^i y_j^i = 0 per label and 0 <= a <= C, in the argument order of
    :func:`multilabel_core.testing.reference.mlrl_dual_matrices`: ``K`` from
    :func:`psd_kernels` (``rank`` passed on), ``omega_tilde`` from
    :func:`label_covariances` (the identity with ``identity_relation``: BSVM), ``Y``
    from :func:`sign_labels` (both signs in every column) and ``C`` (n, L) from
    :func:`box_bounds` (one value with ``constant_box``).

    Parameters
    ----------
    n_samples : int or strategy of ints, default=st.integers(4, 12)
        n, the number of rows.
    n_labels : int or strategy of ints, default=st.integers(2, 5)
        L, the number of labels.
    rank : int or None, default=None
        Passed to :func:`psd_kernels` (None: full rank possible).
    identity_relation : bool, default=False
        Whether ``omega_tilde`` is the identity (BSVM).
    tiny : float, default=1e-6
        The smallest box bound :func:`box_bounds` may draw.
    huge : float, default=1e6
        The largest box bound :func:`box_bounds` may draw.
    constant_box : bool, default=False
        Whether one C holds for every variable.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing ``(K, omega_tilde, Y, C)`` tuples.

    Examples
    --------
    >>> from hypothesis import given
    >>> from multilabel_core.testing.reference import mlrl_dual_matrices
    >>> @given(kernel_dual_problems(n_samples=4, n_labels=2))
    ... def test(problem):
    ...     alpha, objective = mlrl_dual_matrices(*problem).solve()
    ...     assert objective <= 0.0
    >>> test()
    """
    n = draw(_sizes(n_samples))
    n_lab = draw(_sizes(n_labels))
    K = draw(psd_kernels(n=n, rank=rank))
    omega_tilde = np.eye(n_lab) if identity_relation else draw(label_covariances(n_labels=n_lab))
    Y = draw(sign_labels(n_samples=n, n_labels=n_lab))
    C = draw(box_bounds(shape=(n, n_lab), tiny=tiny, huge=huge, constant=constant_box))
    return K, omega_tilde, Y, C


@st.composite
def label_embeddings(draw, n_labels: int):
    """Draw a low-rank label embedding, or None.

    A (k, L) matrix A with k <= 3 and entries in [-2, 2], as PrML's W, for the PrML plugin's
    ``embedded_hinge_cd`` and ``svmplus_cd``; None means no embedding (A = I).

    Parameters
    ----------
    n_labels : int
        L, the number of labels.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        A strategy drawing None or such matrices.
    """
    if not draw(st.booleans()):
        return None
    k = draw(st.integers(1, 3))
    return draw(hnp.arrays(np.float64, (k, n_labels), elements=st.floats(-2.0, 2.0)))
