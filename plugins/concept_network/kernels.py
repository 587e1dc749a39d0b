"""Label- and pair-specific kernels on a shared eigenbasis, and their Nystrom extension.

Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin Concept Network*, sections 3-4.
The base kernel K (n x n, an RBF Gram matrix of the training rows) is truncated to its top m
eigenpairs, ``K ~ sum_k eta_k u_k u_k^T``.  The learned kernels share that basis,

    K_l = sum_k omega_lk u_k u_k^T,        K_lt = sum_k zeta_ltk u_k u_k^T,

with the weights maximising (12) and (14).  Both are separable concave quadratics in each
weight, so their stationary points are the maximisers:

    (12)  d/d omega_lk [omega_lk c_lk - gamma_l (omega_lk - eta_k)^2] = 0
          ->  omega_lk = eta_k + c_lk / (2 gamma_l),            c_lk = (Y_l^T u_k)^2 >= 0;
    (14)  zeta_ltk = eta_k + b_ltk / (2 Upsilon_lt),            b_ltk = (Y_l^T u_k)(u_k^T Y_t).

omega_lk >= eta_k > 0, so K_l is positive semi-definite.  b_ltk has either sign, and a negative
zeta_ltk would make K_lt indefinite (the local duals (8) would lose their concavity): zeta is
clipped at 0, a deviation from the paper, counted in :attr:`LearnedKernels.n_clipped`.

Trade-offs.  The paper's gamma_l and Upsilon_lt have the units of (Y^T u)^2 / eta, which grow
with the number of rows and of a label's positives.  They are set here from dimensionless
parameters: ``gamma_l = site_tradeoff * sum_k c_lk / sum_k eta_k`` and
``Upsilon_lt = edge_tradeoff * sum_k |b_ltk| / sum_k eta_k``, so that the label term adds
``sum_k |omega_lk - eta_k| = sum_k eta_k / (2 site_tradeoff)``: at ``site_tradeoff = 1`` half the
trace of the truncated base kernel, whatever the label's frequency and the number of rows.  The
paper's values are kept (``site_gamma``, ``edge_upsilon``).

Nystrom (eq. 17).  For a new row x, ``phi_k(x) = (1 / eta_k) sum_i K(x, x_i) u_k(i)``, which gives
``phi_k(x_i) = u_k(i)`` at the training rows since K u_k = eta_k u_k; then (eq. 18)
``K_l(x, x_i) = sum_k omega_lk phi_k(x) u_k(i)``.  An eigenpair with a tiny eta_k amplifies the
error of u_k by 1 / eta_k, so the basis keeps only the eigenpairs with ``eta_k >= eig_rtol eta_1``
(:func:`top_eigenpairs`).

Explicit features (:func:`feature_eigenpairs`).  When the base kernel is an inner product of p explicit
features, ``K = Phi Phi^T`` with Phi (n, p) (the Nystroem or random Fourier kernels of
:mod:`multilabel_core.kernel_approximation`), its nonzero eigenpairs come from the p x p matrix
``G = Phi^T Phi = V diag(eta) V^T``: ``K (Phi v_k) = Phi G v_k = eta_k (Phi v_k)`` and
``||Phi v_k||^2 = eta_k``, so ``u_k = Phi v_k / sqrt(eta_k)``, in O(n p^2) time and O(n p) memory, with no
n x n matrix.  Eq. 17 then needs no training row either:
``phi_k(x) = (1 / eta_k) phi(x)^T Phi^T u_k = phi(x)^T v_k / sqrt(eta_k)``, since
``Phi^T Phi v_k = eta_k v_k``; the basis keeps ``V diag(eta)^{-1/2}`` as :attr:`EigenBasis.feature_map`.
"""

from __future__ import annotations

import numbers
import time

import attrs
import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from multilabel_core.validation import check_scalar

__all__ = [
    "EigenBasis", "LearnedKernels", "feature_eigenpairs", "learn_kernels", "site_weights", "edge_weights",
    "top_eigenpairs",
]

#: Below this many rows the dense symmetric eigensolver is cheaper than ARPACK's Lanczos iteration.
DENSE_EIGH_ROWS = 200


@attrs.frozen(eq=False)
class EigenBasis:
    """The top eigenpairs of the training Gram matrix, the basis the learned kernels share.

    Parameters
    ----------
    values : ndarray of shape (m,)
        eta_k, the eigenvalues kept, descending.
    vectors : ndarray of shape (n, m)
        u_k, the orthonormal eigenvectors, one column per eigenvalue.
    n_requested : int
        The m asked for.
    n_dropped : int
        How many of those were dropped by the ``eig_rtol`` rule.
    eig_rtol : float
        The rule: eigenpairs with ``eta_k < eig_rtol eta_1`` are dropped.
    method : {"eigsh", "eigh", "features"}
        The eigensolver: ARPACK's Lanczos or LAPACK's dense solver on the kernel matrix, or
        the dense solver on ``Phi^T Phi``.
    time : float
        The eigensolver's seconds.
    feature_map : ndarray of shape (p, m) or None, default None
        ``V diag(eta)^{-1/2}`` for a basis computed from explicit features
        (:func:`feature_eigenpairs`), None otherwise.
    """

    values: np.ndarray
    vectors: np.ndarray
    n_requested: int
    n_dropped: int
    eig_rtol: float
    method: str
    time: float
    feature_map: np.ndarray | None = None

    @property
    def n_components(self) -> int:
        """The number m of eigenpairs kept."""
        return self.values.shape[0]

    def extend(self, K_new) -> np.ndarray:
        """Extend the eigenvectors to new rows by Nystrom's formula (eq. 17).

        Parameters
        ----------
        K_new : array-like of shape (n_new, n)
            The base kernel between the new rows and the training rows.

        Returns
        -------
        ndarray of shape (n_new, m)
            phi_k(x) = ``(K_new U) / eta``.  At the training rows themselves (``K_new = K``)
            this is ``U`` up to the truncation's round-off.

        Raises
        ------
        ValueError
            When ``K_new`` is not two-dimensional with the n training rows as columns.
        """
        K_new = np.asarray(K_new, dtype=np.float64)
        if K_new.ndim != 2 or K_new.shape[1] != self.vectors.shape[0]:
            raise ValueError(f"K_new must be (n_new, {self.vectors.shape[0]}), got shape {K_new.shape}")
        return (K_new @ self.vectors) / self.values

    def extend_features(self, features) -> np.ndarray:
        """Extend the eigenvectors to new rows (eq. 17) from their explicit features.

        Parameters
        ----------
        features : array-like of shape (n_new, p)
            phi(X_new), the new rows' features under the kernel the basis was computed from.

        Returns
        -------
        ndarray of shape (n_new, m)
            ``features @ feature_map``: :meth:`extend` of ``K_new = features Phi^T`` (the module
            docstring), in O(n_new p m) and without the training rows.

        Raises
        ------
        ValueError
            When the basis was computed from a kernel matrix (no ``feature_map``), or
            ``features`` does not have its p columns.
        """
        if self.feature_map is None:
            raise ValueError("this basis was computed from a kernel matrix, not from explicit features: use extend")
        features = np.asarray(features, dtype=np.float64)
        if features.ndim != 2 or features.shape[1] != self.feature_map.shape[0]:
            raise ValueError(
                f"features must be (n_new, {self.feature_map.shape[0]}), got shape {features.shape}"
            )
        return features @ self.feature_map


def _oriented(vectors: np.ndarray, *others: np.ndarray):
    """Each eigenvector flipped so that its largest-magnitude entry is positive (and ``others``' columns with it)."""
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])])
    signs[signs == 0.0] = 1.0
    return (vectors * signs,) + tuple(other * signs for other in others)


def top_eigenpairs(K, n_components: int, *, eig_rtol: float = 1e-3, random_state=0) -> EigenBasis:
    """Compute the top eigenpairs of the symmetric PSD matrix K with ``eta_k >= eig_rtol eta_1``.

    ARPACK's Lanczos iteration (``scipy.sparse.linalg.eigsh``, ``which="LA"``) costs
    O(n^2 m) per restart for m << n, against O(n^3) for a full ``eigh``; the full dense solver
    is used only below :data:`DENSE_EIGH_ROWS` rows or when m >= n - 1 (where ARPACK cannot
    run), asking LAPACK for the top m pairs only.

    Parameters
    ----------
    K : array-like of shape (n, n)
        The base kernel's Gram matrix of the training rows, n >= 2.
    n_components : int
        m, the eigenpairs requested (at least 1; at most n are computed).
    eig_rtol : float, default 1e-3
        Eigenpairs with ``eta_k < eig_rtol eta_1`` are dropped, in (0, 1).
    random_state : int, numpy.random.Generator or None, default 0
        Seeds ARPACK's starting vector, so the basis is reproducible (eigenvectors are
        defined up to sign: each is oriented so that its largest-magnitude entry is positive).

    Returns
    -------
    EigenBasis
        The kept eigenpairs, descending, with the counts, the solver used and its time.

    Raises
    ------
    ValueError
        When K is not a square matrix of at least 2 rows, ``n_components`` or ``eig_rtol`` is
        out of range, ARPACK does not converge (lower ``n_components``), or K has no positive
        eigenvalue.
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if K.ndim != 2 or K.shape != (n, n) or n < 2:
        raise ValueError(f"K must be a square Gram matrix of at least 2 rows, got shape {K.shape}")
    check_scalar(n_components, "n_components", kind=numbers.Integral, low=1)
    check_scalar(eig_rtol, "eig_rtol", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    m = min(int(n_components), n)
    start = time.perf_counter()
    if n <= DENSE_EIGH_ROWS or m >= n - 1:
        values, vectors = scipy.linalg.eigh(K, subset_by_index=[n - m, n - 1])
        method = "eigh"
    else:
        v0 = np.random.default_rng(random_state).uniform(-1.0, 1.0, n)
        try:
            values, vectors = eigsh(K, k=m, which="LA", v0=v0)
        except ArpackNoConvergence as exc:  # a clear error, not a partial basis
            raise ValueError(
                f"ARPACK found {len(exc.eigenvalues)} of the top {m} eigenpairs of the {n} x {n} kernel: "
                "lower n_components"
            ) from None
        method = "eigsh"
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    if not values[0] > 0.0:
        raise ValueError("the kernel matrix has no positive eigenvalue (is the kernel a Gram matrix?)")
    keep = values >= eig_rtol * values[0]
    values, vectors = values[keep], vectors[:, keep]
    (vectors,) = _oriented(vectors)
    return EigenBasis(
        values=values,
        vectors=np.ascontiguousarray(vectors),
        n_requested=m,
        n_dropped=int(m - keep.sum()),
        eig_rtol=float(eig_rtol),
        method=method,
        time=time.perf_counter() - start,
    )


def feature_eigenpairs(features, n_components: int, *, eig_rtol: float = 1e-3) -> EigenBasis:
    """The top ``n_components`` eigenpairs of ``K = Phi Phi^T`` from the p x p matrix ``Phi^T Phi`` (module docstring).

    Parameters
    ----------
    features : array (n, p)
        Phi, the explicit features of the training rows (a kernel's ``features(X)``).
    n_components : int >= 1
        m, the eigenpairs requested (at most min(n, p) exist).
    eig_rtol : float in (0, 1), default 1e-3
        Eigenpairs with ``eta_k < eig_rtol eta_1`` are dropped, as in :func:`top_eigenpairs`.

    Returns
    -------
    EigenBasis
        ``vectors`` U = Phi V diag(eta)^{-1/2} (n, m), ``values`` eta, ``feature_map`` V diag(eta)^{-1/2} (p, m),
        ``method`` "features".

    Notes
    -----
    O(n p^2) to form ``Phi^T Phi``, O(p^3) for its eigenpairs and O(n p m) for U: no n x n matrix.
    The eigenvalues of G carry an absolute error of about ``p eps eta_1`` (the Gram product's and the
    eigensolver's backward errors), so a kept ``eta_k >= eig_rtol eta_1`` is accurate to a relative
    ``p eps / eig_rtol``, and U's columns are orthonormal to that order.
    """
    Phi = np.asarray(features, dtype=np.float64)
    if Phi.ndim != 2 or Phi.shape[0] < 2 or Phi.shape[1] < 1:
        raise ValueError(f"features must be (n, p) with at least 2 rows and 1 column, got shape {Phi.shape}")
    if not np.isfinite(Phi).all():
        raise ValueError("features contain NaN or infinity")
    check_scalar(n_components, "n_components", kind=numbers.Integral, low=1)
    check_scalar(eig_rtol, "eig_rtol", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n, p = Phi.shape
    m = min(int(n_components), n, p)
    start = time.perf_counter()
    gram = Phi.T @ Phi
    gram = (gram + gram.T) / 2.0
    values, V = scipy.linalg.eigh(gram, subset_by_index=[p - m, p - 1])
    order = np.argsort(values)[::-1]
    values, V = values[order], V[:, order]
    if not values[0] > 0.0:
        raise ValueError("the features are all zero: the kernel matrix Phi Phi^T has no positive eigenvalue")
    keep = values >= eig_rtol * values[0]
    values, V = values[keep], V[:, keep]
    feature_map = V / np.sqrt(values)
    vectors, feature_map = _oriented(Phi @ feature_map, feature_map)
    return EigenBasis(
        values=values,
        vectors=np.ascontiguousarray(vectors),
        n_requested=m,
        n_dropped=int(m - keep.sum()),
        eig_rtol=float(eig_rtol),
        method="features",
        time=time.perf_counter() - start,
        feature_map=np.ascontiguousarray(feature_map),
    )


def site_weights(projections: np.ndarray, eta: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Compute the site kernel weights omega, the maximiser of (12).

    Parameters
    ----------
    projections : ndarray of shape (m, L)
        ``U^T Y``: entry (k, l) is Y_l^T u_k.
    eta : ndarray of shape (m,)
        The base kernel's eigenvalues.
    gamma : ndarray of shape (L,)
        gamma_l, positive (a label with no positive has ``Y_l^T u_k = 0`` and keeps
        omega_l = eta whatever gamma_l).

    Returns
    -------
    ndarray of shape (L, m)
        ``omega_lk = eta_k + (Y_l^T u_k)^2 / (2 gamma_l)``.
    """
    return eta[None, :] + (projections.T**2) / (2.0 * gamma[:, None])


def edge_weights(projections: np.ndarray, eta: np.ndarray, edges: np.ndarray, upsilon: np.ndarray):
    """Compute the edge kernel weights zeta, the maximiser of (14), clipped at 0.

    Parameters
    ----------
    projections : ndarray of shape (m, L)
        ``U^T Y``: entry (k, l) is Y_l^T u_k.
    eta : ndarray of shape (m,)
        The base kernel's eigenvalues.
    edges : ndarray of shape (E, 2), int
        The ordered pairs (l, t).
    upsilon : ndarray of shape (E,)
        Upsilon_lt of each ordered pair, positive.

    Returns
    -------
    clipped : ndarray of shape (E, m)
        ``max(raw, 0)``, the zeta used (a negative one would make K_lt indefinite).
    raw : ndarray of shape (E, m)
        ``eta_k + (Y_l^T u_k)(u_k^T Y_t) / (2 Upsilon_lt)``, the paper's unclipped values.
    """
    left, right = projections[:, edges[:, 0]].T, projections[:, edges[:, 1]].T
    raw = eta[None, :] + left * right / (2.0 * upsilon[:, None])
    return np.maximum(raw, 0.0), raw


@attrs.frozen(eq=False)
class LearnedKernels:
    """The learned kernel weights: omega of the sites and zeta of the ordered edges.

    Parameters
    ----------
    omega : ndarray of shape (L, m)
        The site kernel weights (12).
    zeta : ndarray of shape (E, m)
        The edge kernel weights (14) of the ordered edges, clipped at 0.
    site_gamma : ndarray of shape (L,)
        The paper's gamma_l, from ``site_tradeoff`` (module docstring).
    edge_upsilon : ndarray of shape (E,)
        The paper's Upsilon_lt, from ``edge_tradeoff``.
    n_clipped : int
        The zeta_ltk set to 0 (over all ordered edges and k); ``n_edge_weights`` counts them all.
    """

    omega: np.ndarray
    zeta: np.ndarray
    site_gamma: np.ndarray
    edge_upsilon: np.ndarray
    n_clipped: int

    @property
    def n_edge_weights(self) -> int:
        """The number of learned edge kernel weights zeta (E x m)."""
        return int(self.zeta.size)


def learn_kernels(basis: EigenBasis, Y, edges: np.ndarray, site_tradeoff: float, edge_tradeoff: float) -> LearnedKernels:
    """Learn the site and edge kernel weights by the closed forms of (12) and (14).

    Parameters
    ----------
    basis : EigenBasis
        The base kernel's truncated eigenbasis on the training rows.
    Y : array-like of shape (n, L), 0/1
        The training labels.
    edges : array-like of shape (E, 2), int
        The ordered edges (l, t) of the concept network.
    site_tradeoff : float
        The dimensionless trade-off that sets gamma_l (module docstring), positive.
    edge_tradeoff : float
        The dimensionless trade-off that sets Upsilon_lt, positive.

    Returns
    -------
    LearnedKernels
        omega, zeta, the paper's gamma_l and Upsilon_lt, and the number of zeta clipped at 0.
    """
    Y = np.asarray(Y, dtype=np.float64)
    eta = basis.values
    projections = basis.vectors.T @ Y  # (m, L): Y_l^T u_k
    trace = float(eta.sum())
    site_mass = (projections**2).sum(axis=0)
    # A label without a positive gives c_l = 0: any gamma leaves omega = eta; 1 keeps it finite.
    site_gamma = np.where(site_mass > 0.0, site_tradeoff * site_mass / trace, 1.0)
    omega = site_weights(projections, eta, site_gamma)
    edges = np.asarray(edges, dtype=np.intp).reshape(-1, 2)
    edge_mass = np.abs(projections[:, edges[:, 0]] * projections[:, edges[:, 1]]).sum(axis=0)
    edge_upsilon = np.where(edge_mass > 0.0, edge_tradeoff * edge_mass / trace, 1.0)
    zeta, raw = edge_weights(projections, eta, edges, edge_upsilon)
    return LearnedKernels(
        omega=omega,
        zeta=zeta,
        site_gamma=site_gamma,
        edge_upsilon=edge_upsilon,
        n_clipped=int(np.count_nonzero(raw < 0.0)),
    )
