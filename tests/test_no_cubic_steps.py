"""No n x n factorisation at every step: the shrinkage's eigensolvers agree, and each family's steps work in their rank.

1. Singular value shrinkage (:func:`multilabel_core.proximal.singular_value_threshold`): the Gram route
   with the subset eigensolver (``syevr``, ``rank_hint`` small) and with divide and conquer (``syevd``,
   no hint) both equal the shrinkage of a direct SVD within a tolerance derived from the Gram route's
   backward error (below).
2. The steps of the alternating and continuation methods, recorded by wrapping every dense
   decomposition LAPACK is asked for: MLRL's relation steps factorise (L, L) matrices only (one n x n
   matrix at most, a check of the kernel, never one per alternation step); LIEML's shrinkages
   factorise Gram matrices of the stacked matrix's shorter side, t + d + 1 here, never n; the concept
   network computes its eigenbasis once per fit.

The tolerance of 1.  ``S_t(A) = f(A A^T) A`` with ``f(w) = max(0, 1 - t / sqrt(w))`` applied to the
eigenvalues (the same with ``A^T A`` on the right for a tall A).  The Gram route computes ``f(G + E) A``
where E is the rounding of forming G and the eigensolver's backward error, ``||E||_2 <= delta = 2 (p + n)
eps ||A||_F^2`` (the module docstring of :mod:`multilabel_core.proximal`), so ``||E||_F <= sqrt(r) delta``
for the order r of G.  f is Lipschitz with constant ``1 / (2 t^2)`` (its slope ``t / (2 w^1.5)`` is
largest at ``w = t^2``), and a Lipschitz function of Hermitian matrices is Lipschitz in the Frobenius
norm with the same constant (Kittaneh, *On Lipschitz functions of normal operators*, Proc. AMS 94,
1985), so ``||f(G + E) A - f(G) A||_F <= sqrt(r) delta ||A||_2 / (2 t^2)``.  The products that form the
result, and the reference SVD's own backward error, add ``c (p + n) eps ||A||_F`` each; c = 4 for both.
The drawn thresholds keep the spread ``sigma_max^2 / t^2`` below the route's Rayleigh-Ritz limit.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
from hypothesis import given
from hypothesis import strategies as st

from multilabel_core.datasets import make_correlated_multilabel
from multilabel_core.plugins import list_methods, make_method
from multilabel_core.proximal import GRAM_SPREAD_LIMIT, SUBSET_EIGH_FRACTION, singular_value_threshold

EPS = float(np.finfo(np.float64).eps)

# The plugins are imported now, before any test wraps a decomposition: a module that imports a function
# by name (the concept network's ``eigsh``) would otherwise keep the wrapper of whichever test imported it.
list_methods()
import multilabel_core_plugins.concept_network.kernels as concept_kernels  # noqa: E402


def _reference(A: np.ndarray, t: float) -> np.ndarray:
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > t
    return (U[:, keep] * (s[keep] - t)) @ Vt[keep]


def _tolerance(A: np.ndarray, t: float) -> float:
    p, n = A.shape
    frobenius, spectral = float(np.linalg.norm(A)), float(np.linalg.norm(A, 2))
    delta = 2.0 * (p + n) * EPS * frobenius**2
    return np.sqrt(min(p, n)) * delta * spectral / (2.0 * t * t) + 8.0 * (p + n) * EPS * frobenius


@st.composite
def _matrix_and_threshold(draw):
    p = draw(st.integers(1, 30))
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # Decaying singular values (a low-rank part plus a small full-rank part), as FPC's iterates have.
    rank = draw(st.integers(1, min(p, n)))
    A = rng.standard_normal((p, rank)) @ rng.standard_normal((rank, n)) + 1e-3 * rng.standard_normal((p, n))
    A *= draw(st.sampled_from([1e-3, 1.0, 1e3]))
    top = float(np.linalg.norm(A, 2))
    fraction = draw(st.floats(1e-3, 1.5))
    return A, fraction * top


@given(_matrix_and_threshold())
def test_gram_shrinkage_with_either_eigensolver_equals_direct_svd(case):
    A, t = case
    assert np.linalg.norm(A, 2) ** 2 / t**2 <= GRAM_SPREAD_LIMIT  # the eigenpair route, not Rayleigh-Ritz
    expected = _reference(A, t)
    tolerance = _tolerance(A, t)
    for hint in (0, None):  # 0: the subset eigensolver (syevr); None: every eigenpair (syevd)
        shrunk = singular_value_threshold(A, t, method="gram", rank_hint=hint)
        assert shrunk.method == "gram"
        assert np.linalg.norm(shrunk.matrix - expected) <= tolerance, (hint, tolerance)
        # The kept triplets reproduce the matrix, with orthonormal vectors.
        k = shrunk.rank
        np.testing.assert_allclose(shrunk.left.T @ shrunk.left, np.eye(k), atol=1e-6)
        assert np.all(shrunk.values > t)


def test_the_hint_only_picks_the_eigensolver(monkeypatch):
    """A hint at most SUBSET_EIGH_FRACTION of the order asks syevr for a subset; a larger one or None, syevd for all."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 90))
    drivers = []
    original = scipy.linalg.eigh

    def recording(G, *args, **kwargs):
        drivers.append((kwargs.get("driver"), "subset_by_value" in kwargs))
        return original(G, *args, **kwargs)

    monkeypatch.setattr(scipy.linalg, "eigh", recording)
    t = 0.5 * float(np.linalg.norm(A, 2))
    results = [singular_value_threshold(A, t, method="gram", rank_hint=h).matrix for h in (4, 5, None)]
    assert drivers == [("evr", True), ("evd", False), ("evd", False)]
    assert int(SUBSET_EIGH_FRACTION * 40) == 4
    for matrix in results[1:]:
        assert np.linalg.norm(matrix - results[0]) <= _tolerance(A, t)


@pytest.mark.parametrize("hint", [-1, 1.5, "3"])
def test_rank_hint_is_validated(hint):
    with pytest.raises((ValueError, TypeError), match="rank_hint"):
        singular_value_threshold(np.eye(3), 0.1, rank_hint=hint)


class _Orders:
    """The orders (smaller dimension) of every dense decomposition called while installed."""

    def __init__(self, monkeypatch):
        self.orders: list[tuple[str, int]] = []
        targets = [
            (np.linalg, ("eigh", "eigvalsh", "svd", "cholesky", "qr")),
            (scipy.linalg, ("eigh", "eigvalsh", "svd", "svdvals", "cholesky", "cho_factor", "lu_factor", "qr")),
            (scipy.sparse.linalg, ("eigsh",)),
        ]
        for module, names in targets:
            for name in names:
                monkeypatch.setattr(module, name, self._wrap(name, getattr(module, name)))
        monkeypatch.setattr(concept_kernels, "eigsh", self._wrap("eigsh", concept_kernels.eigsh))

    def _wrap(self, name, function):
        def recorded(a, *args, **kwargs):
            shape = np.shape(a)
            self.orders.append((name, int(min(shape)) if len(shape) == 2 else 0))
            return function(a, *args, **kwargs)

        return recorded

    def at_least(self, order: int) -> list[str]:
        return [name for name, size in self.orders if size >= order]


def _data(n, n_features, n_labels, seed=0):
    data = make_correlated_multilabel(n, n_features, n_labels, random_state=seed)
    return np.asarray(data.X), np.asarray(data.Y)


def test_mlrl_relation_steps_factorise_label_matrices_only(monkeypatch):
    X, Y = _data(90, 6, 4)
    orders = _Orders(monkeypatch)
    model = make_method("mlrl", lam=0.1, tol=1e-6).fit(X, Y)
    steps = len(model.step_certificates_)
    assert steps >= 3, "too few alternation steps for the test to tell one factorisation from one per step"
    large = orders.at_least(X.shape[0])
    assert len(large) <= 1, f"{len(large)} n x n decompositions over {steps} steps: {large}"
    # The relation steps' own factorisations are of (L, L) matrices, at least one per step.
    assert sum(1 for _, size in orders.orders if size == Y.shape[1]) >= steps - 1


def test_lieml_shrinkage_factorises_the_short_side(monkeypatch):
    X, Y = _data(120, 5, 3)
    orders = _Orders(monkeypatch)
    model = make_method("lieml", lam=1.0, fpc_max_iter=400).fit(X, Y)
    steps = int(model.enhancement_.certificate.n_iter)
    stacked = Y.shape[1] + X.shape[1] + 1
    assert steps >= 5
    # The regressor's IRWLS solves its (n + 1) linear systems by LU; every other factorisation is of
    # the stacked matrix's order t + d + 1 at most, plus the held row of the reset's small SVD.
    others = [(name, size) for name, size in orders.orders if size > stacked + 1 and name != "lu_factor"]
    assert others == [], f"{len(others)} decompositions larger than t + d + 2 = {stacked + 1}: {sorted(set(others))}"
    assert ("eigh", stacked) in orders.orders  # the shrinkage's Gram matrix: the short side, not n


def test_concept_network_eigenbasis_once_per_fit(monkeypatch):
    X, Y = _data(260, 5, 4)
    orders = _Orders(monkeypatch)
    make_method("concept_network").fit(X, Y)
    large = orders.at_least(X.shape[0])
    assert len(large) == 1, large
