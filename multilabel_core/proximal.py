"""Proximal operators shared by the regularisers and the solvers.

The proximal operator of a convex ``h`` at ``W`` with step ``s`` is
``prox_{s h}(W) = argmin_Z 1/2 ||Z - W||_F^2 + s h(Z)`` (Parikh & Boyd, *Proximal Algorithms*,
Foundations and Trends in Optimization 1(3), 2014, section 1.1).  Three closed forms cover the
stock penalties (ibid., section 6.5):

- :func:`soft_threshold`: ``h = ||.||_1`` (entrywise), ``sign(w) max(|w| - s, 0)``;
- :func:`group_soft_threshold`: ``h = sum_i ||W_i.||_2`` (rows), ``W_i. max(0, 1 - s / ||W_i.||)``;
- :func:`singular_value_threshold`: ``h = ||.||_*``, ``U max(Sigma - s, 0) V^T``.

The regularisers' ``prox`` methods (:mod:`multilabel_core.regularizers`) and the solvers (the
accelerated proximal gradient of :mod:`multilabel_core.solvers.proximal`, the fixed point
continuation of :mod:`multilabel_core_plugins.lieml.fpc`) call these, so each operator is written once.

*Truncated singular value shrinkage.*  ``S_threshold`` needs only the singular triplets above the
threshold.  :func:`singular_value_threshold` gets them from the Gram matrix of the shorter side with
one symmetric eigensolve instead of a full SVD with all vectors: LAPACK's subset eigensolver
(``syevr`` with a lower bound: the tridiagonal reduction, then eigenvectors only for the
eigenvalues above the bound) when few triplets are expected to pass, its divide-and-conquer
solver of every eigenpair (``syevd``) otherwise (:data:`SUBSET_EIGH_FRACTION`).
Forming the Gram matrix squares the singular values, so its eigenvalues carry an absolute error of
up to ``delta = 2 (p + n) eps ||A||_F^2`` (the product's rounding, then the eigensolver's backward
error), and the eigenvectors are taken down to ``threshold^2 - delta`` so that no triplet above the
threshold is missed.  While the spread ``sigma_max^2 / threshold^2`` stays within
:data:`GRAM_SPREAD_LIMIT` the triplets come from the eigenpairs directly (``s = sqrt(w)``, the
other side's vectors by one product): relative errors of ``eps * spread``, 1e-6 at the limit, on
the values near the threshold, less above it.  Beyond it a Rayleigh-Ritz step (the SVD of A
restricted to the computed subspace) gives the triplets to the accuracy of a direct SVD,
``eps sigma_max``, with orthonormal vectors; values it puts at or below the threshold are dropped.
The route falls back to the full SVD when ``delta`` exceeds :data:`GRAM_BAND_LIMIT`
``threshold^2`` (the eigenvalues near the threshold would then be noise) or LAPACK fails.
"""

from __future__ import annotations

import numbers

import attrs
import numpy as np
import scipy.linalg

from .validation import check_scalar

__all__ = [
    "GRAM_BAND_LIMIT",
    "GRAM_SPREAD_LIMIT",
    "SUBSET_EIGH_FRACTION",
    "SVT_METHODS",
    "Shrinkage",
    "group_soft_threshold",
    "singular_value_threshold",
    "soft_threshold",
]


def _threshold(threshold) -> float:
    check_scalar(threshold, "threshold", low=0.0)
    return float(threshold)


def soft_threshold(W, threshold: float) -> np.ndarray:
    """Return ``sign(W) max(|W| - threshold, 0)`` entrywise: the prox of ``threshold * ||.||_1``.

    Parameters
    ----------
    W : array-like
        The point to shrink, of any shape; converted to float64.
    threshold : float
        The shrinkage ``s >= 0`` (the step times the penalty weight).

    Returns
    -------
    ndarray
        The shrunk array, of the shape of ``W``.

    Raises
    ------
    ValueError
        If ``threshold`` is negative or not a real number.
    """
    W = np.asarray(W, dtype=np.float64)
    threshold = _threshold(threshold)
    return np.sign(W) * np.maximum(np.abs(W) - threshold, 0.0)


def group_soft_threshold(W, threshold: float) -> np.ndarray:
    """Scale each row ``W_i.`` by ``max(0, 1 - threshold / ||W_i.||_2)``: the prox of ``threshold * sum_i ||W_i.||_2``.

    A row whose norm is at most the threshold becomes zero as a whole (row sparsity: the feature
    is dropped for every label).

    Parameters
    ----------
    W : array-like of shape (d, L)
        The weight matrix, one row per feature.
    threshold : float
        The shrinkage ``s >= 0`` applied to each row's Euclidean norm.

    Returns
    -------
    ndarray of shape (d, L)
        The shrunk matrix (float64).

    Raises
    ------
    ValueError
        If ``W`` is not 2-D or ``threshold`` is negative.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be a 2-D (d, L) matrix, got shape {W.shape}")
    threshold = _threshold(threshold)
    norms = np.linalg.norm(W, axis=1)
    scale = np.divide(np.maximum(norms - threshold, 0.0), norms, out=np.zeros_like(norms), where=norms > 0.0)
    return W * scale[:, None]


#: The shrinkage routes: "gram" (subset eigensolver on the Gram matrix of the shorter side), "full"
#: (a full SVD, what the papers do) and "auto" ("gram" with the safe fallback to "full").
SVT_METHODS = ("auto", "gram", "full")

#: Largest error band of the Gram route's eigenvalues, ``2 (p + n) eps ||A||_F^2``, as a fraction of
#: ``threshold^2`` (module docstring).  Below it the eigenvalues near ``threshold^2`` still mean
#: something, and the band adds only the few triplets inside it to the subspace; the Rayleigh-Ritz
#: step then sorts them.  On the LIEML problem of an enron half at lambda = 100 the band is below
#: 1% of ``threshold^2`` down to mu_min, where a spread limit on ``sigma_max^2 / threshold^2`` sent
#: every step of the last stages to the full SVD.
GRAM_BAND_LIMIT = 0.25
#: Largest spread ``sigma_max^2 / threshold^2`` at which the Gram route takes its triplets straight
#: from the eigenpairs: an eigenvalue near ``threshold^2`` then has a relative error of about
#: ``eps * spread`` (2e-6 at 1e10, 1e-6 on its singular value, less above it).  Beyond it the
#: Rayleigh-Ritz step (module docstring) makes them as accurate as a direct SVD's.
GRAM_SPREAD_LIMIT = 1e10
#: The Gram route asks the subset eigensolver (``syevr``) for the eigenpairs above the bound only when
#: the caller expects at most this fraction of the Gram matrix's order to pass (``rank_hint``), and
#: else computes every eigenpair by divide and conquer (``syevd``): ``syevr`` computes each
#: eigenvector by inverse iteration, and past about a tenth of the order its vectors cost more than
#: all of ``syevd``'s (measured on one core: benchmarks/RESULTS.md, "No n^3 per step" and
#: "Timings behind code comments").
SUBSET_EIGH_FRACTION = 0.1


@attrs.frozen(eq=False)
class Shrinkage:
    """Hold ``S_threshold(A)`` and the singular triplets it kept.

    Parameters
    ----------
    matrix : ndarray of shape (p, n)
        The shrunk matrix ``U (s - threshold) V^T``.
    left : ndarray of shape (p, k)
        U, the left singular vectors of the k kept triplets.
    values : ndarray of shape (k,)
        The kept singular values s, before shrinking, in descending order.
    right : ndarray of shape (k, n)
        V^T, the right singular vectors of the kept triplets.
    method : {"gram", "full"}
        The route that computed it.
    threshold : float
        The shrinkage applied.
    """

    matrix: np.ndarray
    left: np.ndarray
    values: np.ndarray
    right: np.ndarray
    method: str
    threshold: float

    @property
    def rank(self) -> int:
        """Number of singular values kept."""
        return int(self.values.size)


def singular_value_threshold(A, threshold: float, *, method: str = "auto", rank_hint: int | None = None) -> Shrinkage:
    """Shrink the singular values: ``S_threshold(A) = U max(Sigma - threshold, 0) V^T``.

    The proximal operator of ``threshold * ||.||_*`` (Ma, Goldfarb & Chen, "Fixed point and
    Bregman iterative methods for matrix rank minimization", Theorem 3; Cai, Candes & Shen,
    "A singular value thresholding algorithm for matrix completion").

    Parameters
    ----------
    A : array-like of shape (p, n)
        A finite matrix.
    threshold : float
        The shrinkage ``s >= 0`` subtracted from every singular value.
    method : {"auto", "gram", "full"}, default="auto"
        "full" computes every singular triplet; "gram" only those above the threshold, from the
        Gram matrix of the shorter side (see the module docstring); "auto" is "gram" with a fallback
        to "full" where the Gram route would lose accuracy (its eigenvalue error band above
        :data:`GRAM_BAND_LIMIT` ``threshold^2``, or ``threshold = 0``) or fails.
    rank_hint : int or None, default=None
        How many triplets the caller expects to pass (an iterative caller, the previous
        shrinkage's rank); it only chooses the eigensolver of the Gram route
        (:data:`SUBSET_EIGH_FRACTION`), never the result beyond rounding.  None: every eigenpair.

    Returns
    -------
    Shrinkage
        The shrunk matrix, the kept triplets, the route taken and the threshold.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``A`` is not a finite 2-D matrix, ``threshold`` is negative or
        ``rank_hint`` is not a non-negative integer.
    numpy.linalg.LinAlgError
        With ``method="gram"``, when the Gram route cannot shrink at this threshold or its
        eigensolver fails.
    """
    if method not in SVT_METHODS:
        raise ValueError(f"method must be one of {SVT_METHODS}, got {method!r}")
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or not np.isfinite(A).all():
        raise ValueError(f"A must be a finite 2-D matrix, got shape {A.shape}")
    check_scalar(threshold, "threshold", low=0.0)
    if rank_hint is not None:
        check_scalar(rank_hint, "rank_hint", kind=numbers.Integral, low=0)
    if method != "full":
        try:
            shrunk = _gram_shrinkage(A, float(threshold), rank_hint)
        except np.linalg.LinAlgError:
            if method == "gram":
                raise
            shrunk = None
        if shrunk is not None:
            return shrunk
        if method == "gram":
            raise np.linalg.LinAlgError(
                f"the Gram route cannot shrink at threshold {threshold!r}: its eigenvalue error band "
                f"2 (p + n) eps ||A||_F^2 exceeds {GRAM_BAND_LIMIT:g} threshold^2 (use method='auto' or 'full')"
            )
    return _full_shrinkage(A, float(threshold))


def _full_shrinkage(A: np.ndarray, threshold: float) -> Shrinkage:
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > threshold
    U, s, Vt = U[:, keep], s[keep], Vt[keep]
    return Shrinkage((U * (s - threshold)) @ Vt, U, s, Vt, "full", threshold)


def _gram_shrinkage(A: np.ndarray, threshold: float, rank_hint: int | None = None) -> Shrinkage | None:
    """The triplets above ``threshold`` from the Gram matrix of the shorter side; None when unsafe."""
    if threshold == 0.0 or min(A.shape) == 0:
        return None
    p, n = A.shape
    wide = p <= n
    G = A @ A.T if wide else A.T @ A
    band = 2.0 * (p + n) * np.finfo(np.float64).eps * float(np.trace(G))
    if band > GRAM_BAND_LIMIT * threshold * threshold:
        return None
    # One eigensolve, down to the band's lower edge: a triplet whose eigenvalue rounding put just
    # below threshold^2 is still in the subspace, and the Rayleigh-Ritz SVD decides.
    lowest = threshold * threshold - band
    if rank_hint is not None and rank_hint <= SUBSET_EIGH_FRACTION * len(G):
        w, vectors = scipy.linalg.eigh(G, subset_by_value=(lowest, np.inf), driver="evr")
    else:
        w, vectors = scipy.linalg.eigh(G, driver="evd")
        above = w > lowest
        w, vectors = w[above], vectors[:, above]
    if w.size == 0:
        return Shrinkage(np.zeros_like(A), np.zeros((p, 0)), np.zeros(0), np.zeros((0, n)), "gram", threshold)
    if w.max() <= GRAM_SPREAD_LIMIT * threshold * threshold:
        # The eigenpairs are accurate enough: the other side's vectors by one product.
        order = np.argsort(w)[::-1]
        s, vectors = np.sqrt(w[order]), vectors[:, order]
        if wide:
            left, right = vectors, (vectors.T @ A) / s[:, None]
        else:
            left, right = (A @ vectors) / s, vectors.T
    elif wide:
        left, s, right = np.linalg.svd(vectors.T @ A, full_matrices=False)
        left = vectors @ left
    else:
        left, s, right = np.linalg.svd(A @ vectors, full_matrices=False)
        right = right @ vectors.T
    keep = s > threshold
    U, s, Vt = left[:, keep], s[keep], right[keep]
    return Shrinkage((U * (s - threshold)) @ Vt, U, s, Vt, "gram", threshold)
