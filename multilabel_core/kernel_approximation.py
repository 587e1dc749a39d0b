"""Kernel approximations with explicit features: Nystroem landmarks and random Fourier features.

Both are :class:`~multilabel_core.base.Kernel` components, registered as ``"nystroem"`` and
``"rff"``, so every kernel method takes them by name (``kernel="nystroem"``).  Each maps a row
x to an explicit feature vector ``phi(x)`` of length m (or D), and its kernel is the inner
product of the features::

    k~(x, z) = phi(x)^T phi(z).

:meth:`features` returns ``phi(X)`` (n, m): a solver that works on features holds O(n m)
numbers instead of the (n, n) kernel matrix.  ``__call__(X, Z)`` is ``phi(X) phi(Z)^T``, so
a kernel solver (SMO, box coordinate descent) runs on the approximate kernel unchanged; the
features of the last rows seen are kept (by identity of the array), so that a solver that asks
for the kernel column by column (SMO beyond its ``cache_size``) computes ``phi(X)`` once, not
once per column.

- **Nystroem** (Williams & Seeger, *Using the Nystroem method to speed up kernel machines*,
  NIPS 2001, eq. 8-9): m landmark rows ``Z`` (a uniform sample of the training rows, or the
  centres of k-means on them), ``W = k(Z, Z)`` and ``phi(x) = W^{+1/2} k(Z, x)``, so that
  ``phi(X) phi(X)^T = C W^+ C^T`` with ``C = k(X, Z)``.  For a positive semi-definite base
  kernel ``K - C W^+ C^T`` is the Schur complement of W in the kernel of ``[X; Z]``: positive
  semi-definite, zero when the landmarks are all the training rows, and shrinking (in the
  Loewner order, so in trace and in spectral norm) as landmarks are added to a nested set.
  Eigenvalues of W below ``m * eps * lambda_max(W)`` are dropped from the pseudo-inverse
  (their directions are rounding).
- **Random Fourier features** for the RBF kernel ``exp(-gamma ||x - z||^2)`` (Rahimi & Recht,
  *Random features for large-scale kernel machines*, NIPS 2007, Algorithm 1):
  ``phi(x) = sqrt(2 / D) cos(W^T x + b)`` with the columns of W drawn from N(0, 2 gamma I)
  (the kernel's Fourier transform, Bochner's theorem) and b uniform on [0, 2 pi], so that
  ``E[phi(x)^T phi(z)] = k(x, z)`` and each entry's error is O(1 / sqrt(D)) (their Claim 1).

Both draw from ``random_state`` (an int; the same seed gives the same features) and are fitted
by :meth:`resolve` on the training rows, like the RBF width; an unresolved approximation
refuses to compute.
"""

from __future__ import annotations

import numbers
from abc import abstractmethod
from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from ._blocks import BLOCK_BUDGET_BYTES
from .base import Kernel
from .kernels import RBFKernel, make_kernel
from .validation import check_X

__all__ = ["DEFAULT_COMPONENTS", "DEFAULT_RANDOM_FEATURES", "NystroemKernel", "RandomFourierKernel"]

#: Default number of Nystroem landmarks: the AP of bsvm on yeast and scene with it is within
#: 0.01 of the exact RBF kernel's (docs/components.md, "Kernel approximations"; a test).
DEFAULT_COMPONENTS = 500

#: Default number of random Fourier features.  Their error falls as 1 / sqrt(D) whatever the
#: data, where data-chosen landmarks capture the kernel's leading directions, so RFF needs more
#: features for the same accuracy: at D = 500 bsvm's test AP was 0.010-0.021 below the exact
#: kernel's on yeast and scene, at D = 1000 0.001-0.009, at D = 2000 0.004-0.008 (two seeds
#: each; docs/components.md).  The features cost n D floats (160 MB at n = 10^4).
DEFAULT_RANDOM_FEATURES = 2000

#: Lloyd iterations of the k-means landmark choice (the landmarks need not be a converged
#: clustering: any set of rows of the span works, k-means only spreads them over the data).
_KMEANS_ITERATIONS = 10


def _rows(X, name: str):
    X = check_X(X, name=name)
    return X.tocsr().astype(np.float64, copy=False) if sp.issparse(X) else X.astype(np.float64, copy=False)


def _check_random_state(instance, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative int, got {value!r}")


def _check_components(instance, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive int (the number of features m), got {value!r}")


class _FeatureCache:
    """The features of the last two row arrays seen, keyed by identity (not part of the kernel's equality).

    Two, because the solvers alternate two operands: the training rows and a column's row
    (SMO's column cache), or a block of new rows and the training rows (prediction).
    """

    def __init__(self):
        self.entries: tuple = ()

    def get(self, X):
        entries = self.entries
        for i, (rows, features) in enumerate(entries):
            if rows is X:
                if i:
                    # Most recent first: the other operand is the one to evict next.
                    self.entries = ((rows, features),) + tuple(e for e in entries if e[0] is not X)
                return features
        return None

    def put(self, X, features) -> None:
        # One tuple assignment: a racing thread at worst recomputes.
        self.entries = ((X, features),) + self.entries[:1]


def _fitted_copy(kernel, **fitted):
    """A copy of ``kernel`` (same parameters, an empty feature cache) holding the fitted values.

    Not ``attrs.evolve``: that would run the constructor's checks again (for Nystroem a registry
    look-up of the base kernel's name), which the parameters passed when ``kernel`` was built.
    """
    copy = object.__new__(type(kernel))
    copy.__setstate__(kernel.__getstate__() | fitted)
    return copy


def _cache_field():
    return attrs.field(factory=_FeatureCache, init=False, eq=False, repr=False, hash=False)


class _ExplicitFeatures(Kernel):
    """What both approximations share: the kernel is the inner product of :meth:`features`."""

    linear: ClassVar[bool] = False
    precomputed: ClassVar[bool] = False
    #: The kernel is ``phi(x)^T phi(z)`` with ``phi = features`` (m explicit columns).
    explicit_features: ClassVar[bool] = True

    def __getstate__(self) -> dict:
        # The feature cache is a by-product of the last calls, not part of the kernel: a saved model
        # carries the parameters and the fitted values only.
        return {field.name: getattr(self, field.name) for field in attrs.fields(type(self)) if field.name != "_cache"}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_cache", _FeatureCache())

    @abstractmethod
    def _map(self, X) -> np.ndarray:
        """phi(X), the explicit features of the rows X under the fitted parameters."""

    @abstractmethod
    def _fitted(self) -> bool:
        """Whether ``resolve`` has fitted the parameters the features need."""

    def features(self, X) -> np.ndarray:
        """The explicit features ``phi(X)``, a dense (n, m) float64 array (m after resolution)."""
        if not self._fitted():
            raise ValueError(f"{type(self).__name__} is not fitted: call resolve(X_train) first")
        cached = self._cache.get(X)
        if cached is not None:
            return cached
        rows = _rows(X, "X")
        if rows.shape[0] == 1:
            # One row goes through BLAS's matrix-vector path, which sums in another order than the
            # matrix-matrix path of two or more rows; Nystroem's W^{+1/2} amplifies that round-off by the
            # conditioning of W, so a kernel column computed alone would not be the matrix's column.
            # The row is computed as one of two identical rows instead.
            twice = sp.vstack([rows, rows], format="csr") if sp.issparse(rows) else np.vstack([rows, rows])
            Phi = np.ascontiguousarray(self._map(twice)[:1])
        else:
            Phi = self._map(rows)
        self._cache.put(X, Phi)
        return Phi

    def __call__(self, X, Z=None) -> np.ndarray:
        Phi = self.features(X)
        if Z is None:
            return Phi @ Phi.T
        Psi = self.features(Z) if Z is not X else Phi
        if Psi.shape[1] != Phi.shape[1]:  # pragma: no cover - one map
            raise ValueError("X and Z have different feature maps")
        return Phi @ Psi.T

    def diagonal(self, X) -> np.ndarray:
        """Compute the diagonal ``phi(x_i)^T phi(x_i)`` for the rows of ``X``, without forming the matrix.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The rows.

        Returns
        -------
        ndarray of shape (n,)
            The approximate ``k(x_i, x_i)`` for every row.
        """
        Phi = self.features(X)
        return np.einsum("ij,ij->i", Phi, Phi)


@attrs.frozen(getstate_setstate=False)
class NystroemKernel(_ExplicitFeatures):
    """The Nystroem approximation of a base kernel by m landmarks (Williams & Seeger, NIPS 2001, eq. 8-9).

    Parameters
    ----------
    base : str or Kernel, default "rbf"
        The kernel approximated: a registered name or a Kernel object (not a precomputed one,
        nor another approximation).
    n_components : int, default 500
        m, the number of landmarks (at most the number of training rows: fewer rows use them all).
    landmarks : {"uniform", "kmeans"}, default "uniform"
        Uniform: m training rows drawn without replacement.  k-means: the centres of
        ``_KMEANS_ITERATIONS`` Lloyd iterations from the uniform draw (dense centres; empty
        clusters keep their previous centre).
    gamma : float, optional
        Passed to the base kernel when it takes a gamma (as the estimators' ``gamma``).
    random_state : int, default 0
        Seed of the landmark draw.

    Notes
    -----
    :meth:`resolve` resolves the base kernel on the training rows (e.g. the RBF width), picks
    the landmarks and computes ``W^{+1/2}``; the resolved kernel holds ``landmarks_`` (m, d) and
    ``normalization_`` (m, r), r the numerical rank of W.
    """

    base: object = attrs.field(default="rbf")
    n_components: int = attrs.field(default=DEFAULT_COMPONENTS, validator=_check_components)
    landmarks: str = attrs.field(default="uniform", validator=attrs.validators.in_(("uniform", "kmeans")))
    gamma: float | None = attrs.field(default=None)
    random_state: int = attrs.field(default=0, validator=_check_random_state)
    _base_built: Kernel | None = attrs.field(default=None, init=False, eq=False, repr=False)
    base_kernel_: Kernel | None = attrs.field(default=None, init=False, repr=False)
    landmarks_: np.ndarray | None = attrs.field(default=None, init=False, eq=False, repr=False)
    normalization_: np.ndarray | None = attrs.field(default=None, init=False, eq=False, repr=False)
    _cache: _FeatureCache = _cache_field()

    def __attrs_post_init__(self):
        base = self._build_base()
        object.__setattr__(self, "_base_built", base)
        if base.precomputed or getattr(base, "explicit_features", False):
            raise ValueError(
                f"base must be a kernel of feature rows, not {type(base).__name__}: a precomputed kernel has no "
                "rows to choose landmarks from, and an approximation is approximated directly"
            )

    def _base(self) -> Kernel:
        return self._base_built

    def _build_base(self) -> Kernel:
        if isinstance(self.base, Kernel):
            if self.gamma is not None:
                raise ValueError("base is a Kernel object: set gamma on the object, not on the Nystroem kernel")
            return self.base
        return make_kernel(self.base, self.gamma)

    def _fitted(self) -> bool:
        return self.normalization_ is not None

    def resolve(self, X) -> "NystroemKernel":
        """Fit the approximation on the training rows: base kernel resolved, landmarks, ``W^{+1/2}``.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The training rows the landmarks are drawn from.

        Returns
        -------
        NystroemKernel
            ``self`` when already fitted, else a fitted copy.

        Raises
        ------
        ValueError
            If the base kernel is 0 on every landmark (the features would be 0).
        """
        if self._fitted():
            return self
        X = _rows(X, "X")
        base = self._base().resolve(X)
        rng = np.random.default_rng(self.random_state)
        m = min(int(self.n_components), X.shape[0])
        chosen = np.sort(rng.permutation(X.shape[0])[:m])
        Z = X[chosen]
        if self.landmarks == "kmeans":
            Z = _kmeans_centres(X, Z)
        W = base(Z)
        W = (W + W.T) / 2.0
        eigenvalues, vectors = np.linalg.eigh(W)
        largest = float(eigenvalues[-1]) if eigenvalues.size else 0.0
        if not largest > 0.0:
            raise ValueError(
                f"the base kernel {type(base).__name__} is 0 on the {m} landmarks: the Nystroem features would be 0"
            )
        # Directions with eigenvalues at rounding level carry no kernel information; 1/sqrt of them would
        # amplify rounding.  m eps lambda_max bounds the eigensolver's backward error (Weyl).
        keep = eigenvalues > m * np.finfo(np.float64).eps * largest
        normalization = vectors[:, keep] / np.sqrt(eigenvalues[keep])
        return _fitted_copy(self, base_kernel_=base, landmarks_=Z, normalization_=normalization)

    def _map(self, X) -> np.ndarray:
        return self.base_kernel_(X, self.landmarks_) @ self.normalization_


def _kmeans_centres(X, centres) -> np.ndarray:
    """Lloyd's iterations from ``centres`` (rows of X); dense centres, an empty cluster keeps its centre."""
    centres = centres.toarray() if sp.issparse(centres) else np.array(centres, dtype=np.float64)
    m, d = centres.shape
    if 8 * m * d > BLOCK_BUDGET_BYTES:
        raise ValueError(
            f"landmarks='kmeans' holds {m} dense centres of {d} features ({8 * m * d / 2**20:.0f} MiB), above the "
            f"block budget: use landmarks='uniform' (rows of X, kept sparse) or fewer components"
        )
    x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    for _ in range(_KMEANS_ITERATIONS):
        c_sq = np.einsum("ij,ij->i", centres, centres)
        cross = np.asarray(X @ centres.T)
        nearest = np.argmin(x_sq[:, None] + c_sq[None, :] - 2.0 * cross, axis=1)
        counts = np.bincount(nearest, minlength=m)
        assign = sp.csr_matrix((np.ones(X.shape[0]), (nearest, np.arange(X.shape[0]))), shape=(m, X.shape[0]))
        sums = np.asarray(assign @ X.toarray() if sp.issparse(X) and 8 * X.shape[0] * d <= BLOCK_BUDGET_BYTES
                          else assign @ X)
        sums = sums.toarray() if sp.issparse(sums) else sums
        filled = counts > 0
        updated = centres.copy()
        updated[filled] = sums[filled] / counts[filled, None]
        if np.array_equal(updated, centres):
            break
        centres = updated
    return centres


@attrs.frozen(getstate_setstate=False)
class RandomFourierKernel(_ExplicitFeatures):
    """Random Fourier features of the RBF kernel (Rahimi & Recht, NIPS 2007, Algorithm 1).

    Parameters
    ----------
    n_components : int, default 2000
        D, the number of random features (:data:`DEFAULT_RANDOM_FEATURES`).
    gamma : float, optional
        The RBF kernel's gamma in ``exp(-gamma ||x - z||^2)``; None: set by :meth:`resolve` as
        the RBF kernel's default (width = the mean pairwise distance of the training rows).
    width : float, optional
        The RBF width, gamma = 1 / (2 width^2) (give one of gamma and width).
    random_state : int, default 0
        Seed of the frequencies and phases.

    Notes
    -----
    The resolved kernel holds ``frequencies_`` (d, D), drawn from N(0, 2 gamma), and ``phases_``
    (D,), uniform on [0, 2 pi].  ``phi(x)^T phi(z)`` is an unbiased estimate of the RBF kernel,
    but not 1 on the diagonal: ``diagonal`` is ``||phi(x)||^2``.
    """

    n_components: int = attrs.field(default=DEFAULT_RANDOM_FEATURES, validator=_check_components)
    gamma: float | None = attrs.field(default=None)
    width: float | None = attrs.field(default=None)
    random_state: int = attrs.field(default=0, validator=_check_random_state)
    rbf_: RBFKernel | None = attrs.field(default=None, init=False, repr=False)
    frequencies_: np.ndarray | None = attrs.field(default=None, init=False, eq=False, repr=False)
    phases_: np.ndarray | None = attrs.field(default=None, init=False, eq=False, repr=False)
    _cache: _FeatureCache = _cache_field()

    def __attrs_post_init__(self):
        RBFKernel(gamma=self.gamma, width=self.width)  # validates gamma and width and their agreement

    def _fitted(self) -> bool:
        return self.frequencies_ is not None

    def resolve(self, X) -> "RandomFourierKernel":
        """Fit the approximation on the training rows: the RBF gamma and the random draws.

        Parameters
        ----------
        X : array or sparse matrix of shape (n, d)
            The training rows (they fix the default width when neither gamma nor width was
            given, and the number of frequencies' rows).

        Returns
        -------
        RandomFourierKernel
            ``self`` when already fitted, else a fitted copy.

        Raises
        ------
        ValueError
            If the default width cannot be computed from ``X`` (see :meth:`RBFKernel.resolve`).
        """
        if self._fitted():
            return self
        X = _rows(X, "X")
        rbf = RBFKernel(gamma=self.gamma, width=self.width).resolve(X)
        rng = np.random.default_rng(self.random_state)
        D = int(self.n_components)
        frequencies = rng.standard_normal((X.shape[1], D)) * np.sqrt(2.0 * rbf.effective_gamma)
        phases = rng.uniform(0.0, 2.0 * np.pi, D)
        return _fitted_copy(self, rbf_=rbf, frequencies_=frequencies, phases_=phases)

    def _map(self, X) -> np.ndarray:
        projection = np.asarray(X @ self.frequencies_)
        projection += self.phases_
        np.cos(projection, out=projection)
        projection *= np.sqrt(2.0 / self.frequencies_.shape[1])
        return projection
