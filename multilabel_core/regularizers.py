"""Stock regularisers: Frobenius, label covariance, low rank (PrML/LEML factors), nuclear norm, L1, L2,1,
elastic net, a label-similarity quadratic, and sums of regularisers.

``W`` is the (d, L) weight matrix, one column per label (:mod:`multilabel_core.base.regularizer`).
The quadratic regularisers carry the factor 1/2 (as in the papers' primals), so their
gradients are linear in ``W`` without a factor 2; the nuclear norm carries none.
Conjugates ``Omega*(V) = sup_W <V, W> - Omega(W)`` are given where they have a closed
form; they satisfy Fenchel--Young with equality at ``V = gradient(W)``.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
import scipy.linalg

from .base import Regularizer
from .plugins import make_component
from .proximal import group_soft_threshold, singular_value_threshold, soft_threshold
from .validation import check_scalar, check_symmetric, count, non_negative, positive

__all__ = [
    "SPECTRAL_TOL",
    "ElasticNet",
    "Frobenius",
    "FrobeniusLabelCovariance",
    "L1",
    "L21",
    "LabelCovariance",
    "LabelSimilarity",
    "LowRank",
    "NuclearNorm",
    "Sum",
    "label_cosine_similarity",
    "trace_norm",
]

#: Relative slack on the spectral-norm ball of the nuclear norm's conjugate (round-off of U V^T).
SPECTRAL_TOL = 1e-10


def _matrix(W, name: str = "W") -> np.ndarray:
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (d, L) matrix, got shape {W.shape}")
    return W


def trace_norm(factor) -> float:
    """Compute ``tr((F^T F)^(1/2))``, the sum of F's singular values.

    Exact where F is rank deficient: square roots of the eigenvalues of F^T F would turn a
    rounding-level eigenvalue eps ||F||^2 into sqrt(eps) ||F||.

    Parameters
    ----------
    factor : array_like of shape (r, L)
        A 2-D matrix F (e.g. a factor with ``F^T F = W^T W``).

    Returns
    -------
    float
        The trace (nuclear) norm of F.

    Raises
    ------
    ValueError
        If ``factor`` is not 2-D.
    """
    return float(scipy.linalg.svdvals(_matrix(factor, "factor")).sum())


def _identity_gram(n_labels) -> np.ndarray:
    check_scalar(n_labels, "n_labels", kind=int, low=1)
    return np.eye(n_labels)


@attrs.frozen
class Frobenius(Regularizer):
    """``1/2 ||W||_F^2``: independent labels (binary relevance, BSVM; MLRL with Omega = I).

    Gradient ``W``; conjugate ``1/2 ||V||_F^2``; ``label_gram(L) = I``.
    """

    smooth: ClassVar[bool] = True
    #: A sum of one function per label column: the labels are apart.
    label_separable: ClassVar[bool] = True
    #: Adding rows to W never lowers the value (zero rows are optimal for features no row uses).
    row_monotone: ClassVar[bool] = True

    def hessian_bounds(self, n_labels: int) -> tuple[float, float]:
        """Give the least and largest eigenvalue of the Hessian.

        Parameters
        ----------
        n_labels : int
            L, the number of labels (unused: the Hessian is the identity for any L).

        Returns
        -------
        tuple of float
            ``(1.0, 1.0)``: the Hessian is the identity.
        """
        return 1.0, 1.0

    def label_hessian(self, n_labels: int) -> np.ndarray:
        """Give M with this regulariser ``= 1/2 tr(W M W^T)`` (an exact quadratic).

        Parameters
        ----------
        n_labels : int
            L, the number of labels.

        Returns
        -------
        ndarray of shape (L, L)
            The identity.
        """
        return np.eye(n_labels)

    def value(self, W) -> float:
        W = _matrix(W)
        return 0.5 * float(np.vdot(W, W))

    def gradient(self, W) -> np.ndarray:
        return _matrix(W).copy()

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here ``1/2 ||V||_F^2``.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        return self.value(V)

    def label_gram(self, n_labels: int) -> np.ndarray:
        """Give the label coupling M a dual sees.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            The identity, for the plain Frobenius norm.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer.
        """
        return _identity_gram(n_labels)


def _omega(value) -> np.ndarray:
    """Omega symmetric within round-off, made exactly symmetric, in a read-only copy."""
    omega = check_symmetric(value, "omega")
    omega.setflags(write=False)
    return omega


@attrs.frozen
class LabelCovariance(Regularizer):
    """``1/2 tr(W Omega^-1 W^T)``: the MLRL regulariser for a label covariance Omega (L, L).

    MLRL (Zhang & Yeung, *Multi-Label Relationship Learning*, problem 6) couples the labels
    through the matrix-variate prior whose column covariance is Omega; Omega = I gives :class:`Frobenius`.  Omega must be
    symmetric positive definite; its Cholesky factor is computed once and every
    ``Omega^-1`` product is a triangular solve.

    ``omega=None`` (the default, and what ``regularizer="label_covariance"`` builds) is
    ``Omega = I / L`` for the L label columns of the weights it is given: MLRL's starting
    point, "all labels are unrelated initially" (section 2.2), which is also where
    :class:`~multilabel_core.relations.LearnedCovariance` starts.  With a fixed relation
    it is ``L/2 ||W||_F^2``, Frobenius at cost ``C / L``; the alternating solver replaces
    it by the learned Omega at every W-step.

    Gradient ``W Omega^-1``; conjugate ``1/2 tr(V Omega V^T)``; ``label_gram(L) = Omega``.

    Parameters
    ----------
    omega : array_like of shape (L, L) or None, default=None
        The label covariance Omega, symmetric (within round-off, then made exactly
        symmetric) positive definite; None for ``I / L`` at whatever L the weights have.

    Raises
    ------
    ValueError
        If ``omega`` is not symmetric or not positive definite.
    """

    omega: np.ndarray | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(_omega),
        eq=attrs.cmp_using(eq=np.array_equal),
        hash=False,
        repr=False,
    )
    _cholesky: tuple | None = attrs.field(init=False, default=None, eq=False, hash=False, repr=False)

    smooth: ClassVar[bool] = True

    def __attrs_post_init__(self):
        if self.omega is None:
            return
        try:
            factor = scipy.linalg.cho_factor(self.omega, lower=True)
        except np.linalg.LinAlgError:
            raise ValueError("omega must be positive definite (its Cholesky factorisation failed)") from None
        object.__setattr__(self, "_cholesky", factor)

    @property
    def n_labels(self) -> int | None:
        """L of the given Omega; None for the default ``I / L``, which fits any L."""
        return None if self.omega is None else self.omega.shape[0]

    def _check(self, W) -> np.ndarray:
        W = _matrix(W)
        if self.omega is not None and W.shape[1] != self.n_labels:
            raise ValueError(f"W has {W.shape[1]} label columns but omega is {self.n_labels} x {self.n_labels}")
        return W

    def value(self, W) -> float:
        W = self._check(W)
        return 0.5 * float(np.vdot(W, self.gradient(W)))

    def gradient(self, W) -> np.ndarray:
        W = self._check(W)
        if self.omega is None:
            return W.shape[1] * W  # (I / L)^-1 = L I
        return scipy.linalg.cho_solve(self._cholesky, W.T).T

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here ``1/2 tr(V Omega V^T)``.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        V = self._check(V)
        if self.omega is None:
            return 0.5 * float(np.vdot(V, V)) / V.shape[1]
        return 0.5 * float(np.vdot(V @ self.omega, V))

    def with_relation(self, omega) -> "LabelCovariance":
        """Hold the label covariance at ``omega`` (a model step of the alternating driver).

        Parameters
        ----------
        omega : array_like of shape (L, L) or None
            The covariance of the step, symmetric positive definite; None for ``I / L``.

        Returns
        -------
        LabelCovariance
            A new regulariser for that covariance.
        """
        return LabelCovariance(omega)

    def relation_value(self, factor) -> float:
        """Minimise the regulariser over the relation: ``min_Omega 1/2 tr(W Omega^-1 W^T)``.

        The minimum over {Omega > 0, tr Omega = 1} is ``1/2 (tr (W^T W)^(1/2))^2`` (Zhang &
        Yeung, *Multi-Label Relationship Learning*, problem 11 and its closed form); the trace
        norm is the sum of F's singular values.

        Parameters
        ----------
        factor : array_like of shape (r, L)
            Any F with ``F^T F = W^T W``.

        Returns
        -------
        float
            ``1/2 (tr (F^T F)^(1/2))^2``.
        """
        return 0.5 * trace_norm(factor) ** 2

    def relation_dual(self, H) -> float:
        """Maximise ``1/2 tr(H Omega)`` over the relations {Omega >= 0, tr Omega = 1}.

        The term of the joint dual of Zhang & Yeung's MLRL problem (6) that the label
        covariance adds (the W-step dual, eq. 10, is ``d(B) - 1/2 tr(H Omega)`` with
        H = B^T K B).

        Parameters
        ----------
        H : array_like of shape (L, L)
            The symmetric matrix of the dual's quadratic term, ``B^T K B``.

        Returns
        -------
        float
            ``1/2 lambda_max(H)``.
        """
        return 0.5 * float(np.linalg.eigvalsh(_matrix(H, "H"))[-1])

    def label_gram(self, n_labels: int) -> np.ndarray:
        """Give the coupling of the labels in the kernel dual, Omega.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            A copy of Omega, or ``I / L`` for the default ``omega=None``.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from Omega's size.
        """
        check_scalar(n_labels, "n_labels", kind=int, low=1)
        if self.omega is None:
            return np.eye(n_labels) / n_labels
        if n_labels != self.n_labels:
            raise ValueError(f"omega is {self.n_labels} x {self.n_labels} but the problem has {n_labels} labels")
        return self.omega.copy()


def _thin_svd(W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``W = U diag(s) V^T`` restricted to the numerical rank (numpy's matrix_rank tolerance)."""
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    tol = s[0] * max(W.shape) * np.finfo(np.float64).eps if s.size else 0.0
    keep = s > tol
    return U[:, keep], s[keep], Vt[keep]


@attrs.frozen
class NuclearNorm(Regularizer):
    """``||W||_* = sum_i sigma_i(W)``, the convex surrogate of rank.

    Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank
    Subspace* (LIEML), eq. 5.

    Subgradient ``U V^T`` from the thin SVD over the nonzero singular values (0 at W = 0).
    Conjugate: the indicator of the spectral-norm ball, 0 when ``||V||_2 <= 1`` (with a
    relative slack :data:`SPECTRAL_TOL`) and +inf otherwise.
    ``prox(W, step)``: singular value shrinkage ``S_step(W) = U max(Sigma - step, 0) V^T``,
    the proximal operator of ``step * ||.||_*`` used by fixed point continuation (FPC).
    """

    # Not differentiable wherever W is rank deficient, W = 0 included, and optimal points
    # of nuclear-norm problems are low rank by design.
    smooth: ClassVar[bool] = False
    #: ||[A; B]||_* >= ||A||_* (singular values interlace): zero rows are optimal for unused features.
    row_monotone: ClassVar[bool] = True

    def value(self, W) -> float:
        return float(np.linalg.svd(_matrix(W), compute_uv=False).sum())

    def gradient(self, W) -> np.ndarray:
        U, _, Vt = _thin_svd(_matrix(W))
        return U @ Vt

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here the indicator of the spectral-norm ball of radius 1
        (with the relative slack :data:`SPECTRAL_TOL`).

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        spectral = np.linalg.norm(_matrix(V, "V"), 2)
        return 0.0 if spectral <= 1.0 + SPECTRAL_TOL else np.inf

    def prox(self, W, step: float) -> np.ndarray:
        """Apply the proximal operator of ``step * ||.||_*``: singular value soft-thresholding.

        The same operator the FPC solver uses
        (:func:`~multilabel_core.proximal.singular_value_threshold`).

        Parameters
        ----------
        W : array_like of shape (d, L)
            The point to shrink.
        step : float
            The threshold subtracted from every singular value, at least 0.

        Returns
        -------
        ndarray of shape (d, L)
            ``U max(Sigma - step, 0) V^T``.

        Raises
        ------
        ValueError
            If ``step`` is negative or not a real number.
        """
        check_scalar(step, "step", low=0.0)
        return singular_value_threshold(_matrix(W), step).matrix

    #: ``||W||_* >= ||W||_F``: the factor by which this norm bounds the Frobenius norm from above.
    norm_modulus: ClassVar[float] = 1.0

    def dual_norm(self, V) -> tuple[float, float]:
        """Give the dual norm of ``V`` and the radius of the conjugate's ball.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point.

        Returns
        -------
        tuple of float
            ``(||V||_2, 1)``: the conjugate is the indicator of the spectral-norm ball of
            radius 1.
        """
        return float(np.linalg.norm(_matrix(V, "V"), 2)), 1.0


@attrs.frozen
class LowRank(Regularizer):
    """The low-rank regulariser of PrML / LEML (You et al., *Privileged Multi-label Learning*, eqs. 2 and 5).

    The predictors are factored as ``W = D^T V`` with a dictionary ``D`` (k, d) and
    coefficients ``V`` (k, L), k = ``rank``, and the paper regularises the factors::

        R(D, V) = 1/2 ||D||_F^2 + gamma/2 ||V||_F^2          (eq. 5; eq. 2 is gamma = 1)

    ``factor_value`` / ``factor_gradient`` evaluate it on the factors, where the
    alternating solver works (convex in (D, V); the product makes the learning problem
    non-convex).  On ``W`` itself, ``value(W)`` is the induced regulariser, the least
    ``R`` over all rank-k factorisations of ``W``::

        min_{D^T V = W} R(D, V) = sqrt(gamma) ||W||_*   if rank(W) <= k,   +inf otherwise

    reached by the balanced factors of :meth:`factorize`.  ``gradient(W)`` is then
    ``sqrt(gamma) U V^T`` (see :class:`NuclearNorm`).  The rank constraint makes the
    induced regulariser non-convex unless k >= min(d, L).

    Parameters
    ----------
    rank : int
        k, the number of rows of the factors, at least 1.
    gamma : float, default=1.0
        The weight of the coefficients' penalty, positive.
    """

    # sqrt(gamma) ||W||_* on its domain (not differentiable at low rank), +inf beyond it.
    smooth: ClassVar[bool] = False

    rank: int = attrs.field(validator=count)
    gamma: float = attrs.field(default=1.0, validator=positive)

    def factor_value(self, D, V) -> float:
        """Evaluate the penalty ``1/2 ||D||^2 + gamma/2 ||V||^2`` on the factors of ``W = D^T V``.

        Parameters
        ----------
        D : array_like of shape (rank, d)
            The dictionary.
        V : array_like of shape (rank, L)
            The coefficients.

        Returns
        -------
        float
            R(D, V) of You et al., *Privileged Multi-label Learning*, eq. 5.

        Raises
        ------
        ValueError
            If a factor is not 2-D or does not have ``rank`` rows.
        """
        D, V = self._check_factors(D, V)
        return 0.5 * float(np.vdot(D, D)) + 0.5 * self.gamma * float(np.vdot(V, V))

    def factor_gradient(self, D, V) -> tuple[np.ndarray, np.ndarray]:
        """Compute the gradients of :meth:`factor_value` with respect to ``D`` and ``V``.

        Parameters
        ----------
        D : array_like of shape (rank, d)
            The dictionary.
        V : array_like of shape (rank, L)
            The coefficients.

        Returns
        -------
        tuple of ndarray
            ``(D, gamma V)``, of the shapes of ``D`` and ``V``.

        Raises
        ------
        ValueError
            If a factor is not 2-D or does not have ``rank`` rows.
        """
        D, V = self._check_factors(D, V)
        return D.copy(), self.gamma * V

    def factorize(self, W) -> tuple[np.ndarray, np.ndarray]:
        """Factor ``W`` into balanced factors ``(D, V)`` with ``D^T V = W``.

        From the thin SVD W = U Sigma Q^T: D^T = gamma^(1/4) U Sigma^(1/2) and
        V = gamma^(-1/4) Sigma^(1/2) Q^T, zero-padded to k rows; then
        ``R(D, V) = sqrt(gamma) ||W||_*``, the least penalty of any factorisation.

        Parameters
        ----------
        W : array_like of shape (d, L)
            The weights, of rank at most ``rank``.

        Returns
        -------
        D : ndarray of shape (rank, d)
            The dictionary.
        V : ndarray of shape (rank, L)
            The coefficients.

        Raises
        ------
        ValueError
            If ``W`` is not 2-D or its numerical rank exceeds ``rank``.
        """
        U, s, Qt = self._low_rank_svd(W)
        root = np.sqrt(s) * self.gamma**0.25
        D = np.zeros((self.rank, U.shape[0]))
        V = np.zeros((self.rank, Qt.shape[1]))
        D[: len(s)] = (U * root).T
        V[: len(s)] = (np.sqrt(s) / self.gamma**0.25)[:, None] * Qt
        return D, V

    def value(self, W) -> float:
        W = _matrix(W)
        if _thin_svd(W)[1].size > self.rank:
            return np.inf
        return np.sqrt(self.gamma) * NuclearNorm().value(W)

    def gradient(self, W) -> np.ndarray:
        U, _, Qt = self._low_rank_svd(W)
        return np.sqrt(self.gamma) * (U @ Qt)

    def _low_rank_svd(self, W):
        U, s, Qt = _thin_svd(_matrix(W))
        if s.size > self.rank:
            raise ValueError(f"W has rank {s.size} > rank={self.rank}: it has no rank-{self.rank} factorisation")
        return U, s, Qt

    def _check_factors(self, D, V) -> tuple[np.ndarray, np.ndarray]:
        D, V = _matrix(D, "D"), _matrix(V, "V")
        if D.shape[0] != self.rank or V.shape[0] != self.rank:
            raise ValueError(f"D and V must have rank={self.rank} rows, got shapes {D.shape} and {V.shape}")
        return D, V


def _covariance(value):
    """None (the isotropic I / L, fixed when the number of labels is known) or a read-only float64 copy."""
    if value is None:
        return None
    value = np.array(value, dtype=np.float64)
    value.setflags(write=False)
    return value


def _same_matrix(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _positive_definite(instance, attribute, value) -> None:
    if value is None:
        return
    if np.linalg.eigvalsh(check_symmetric(value, attribute.name))[0] <= 0.0:
        raise ValueError(f"{attribute.name} must be positive definite")


@attrs.frozen
class FrobeniusLabelCovariance(Regularizer):
    """``1/2 ||W||_F^2 + mu/2 tr(W D^-1 W^T) = 1/2 tr(W R W^T)`` with ``R = I + mu D^-1``.

    The regulariser of two label-relation methods:

    - Gu, Li & Han, *Correlated Multi-Label Feature Selection* (CIKM 2011), problem (6):
      the matrix-variate normal prior ``MN(0, I_d (x) D)`` on W kept beside LaRank SVM's norm
      (CLaRank SVM, CMLFS), with the ranking hinge;
    - Zhang & Yeung, *A Convex Formulation for Learning Task Relationships in Multi-Task
      Learning* (UAI 2010), problem (4): ``lam1/2 ||W||^2 + lam2/2 tr(W Omega^-1 W^T)`` is
      lam1 times this regulariser with ``mu = lam2 / lam1`` (MTRL).

    D is a label covariance (L x L, symmetric positive definite, trace 1 when learned) and
    mu >= 0 its strength; mu = 0 is the Frobenius norm.  A dual sees the labels through
    ``label_gram = R^-1 = D (D + mu I)^-1``, computed on D's eigenbasis (eigenvalues
    d_j -> d_j / (d_j + mu)), so D is never inverted.

    Gradient ``W R``; conjugate ``1/2 tr(V R^-1 V^T)``.

    Parameters
    ----------
    mu : float, default=1.0
        The strength of the covariance term, at least 0 (0 gives the Frobenius norm).
    covariance : array_like of shape (L, L) or None, default=None
        D, symmetric positive definite; None is ``I / L``, where the alternating driver
        starts (it replaces D through :meth:`with_relation` at every relation step).

    Raises
    ------
    ValueError
        If ``mu`` is negative or ``covariance`` is not symmetric positive definite.
    """

    smooth: ClassVar[bool] = True

    mu: float = attrs.field(default=1.0, validator=non_negative)
    covariance: np.ndarray | None = attrs.field(
        default=None,
        converter=_covariance,
        validator=_positive_definite,
        eq=attrs.cmp_using(eq=_same_matrix),
        hash=False,
        repr=False,
    )

    def with_covariance(self, covariance) -> "FrobeniusLabelCovariance":
        """Give the same regulariser for another label covariance D.

        Parameters
        ----------
        covariance : array_like of shape (L, L) or None
            The new D, symmetric positive definite; None for ``I / L``.

        Returns
        -------
        FrobeniusLabelCovariance
            A new regulariser with the same ``mu``.
        """
        return attrs.evolve(self, covariance=covariance)

    def with_relation(self, covariance) -> "FrobeniusLabelCovariance":
        """Hold D at ``covariance`` (a model step of the alternating driver).

        Parameters
        ----------
        covariance : array_like of shape (L, L) or None
            The covariance of the step, symmetric positive definite; None for ``I / L``.

        Returns
        -------
        FrobeniusLabelCovariance
            A new regulariser with the same ``mu`` (:meth:`with_covariance`).
        """
        return self.with_covariance(covariance)

    def covariance_for(self, n_labels: int) -> np.ndarray:
        """Give D for ``n_labels`` labels.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            A copy of the given covariance (its size checked), or ``I / L``.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        check_scalar(n_labels, "n_labels", kind=int, low=1)
        if self.covariance is None:
            return np.eye(n_labels) / n_labels
        if self.covariance.shape[0] != n_labels:
            raise ValueError(
                f"covariance is {self.covariance.shape[0]} x {self.covariance.shape[0]} but there are {n_labels} labels"
            )
        return np.array(self.covariance)

    def _spectrum(self, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
        eigenvalues, vectors = np.linalg.eigh((lambda D: (D + D.T) / 2.0)(self.covariance_for(n_labels)))
        return eigenvalues, vectors

    def coupling(self, n_labels: int) -> np.ndarray:
        """Give the coupling ``R = I + mu D^-1``.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            R, computed on D's eigenbasis (eigenvalues d_j -> 1 + mu / d_j), symmetric.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        eigenvalues, vectors = self._spectrum(n_labels)
        R = (vectors * (1.0 + self.mu / eigenvalues)) @ vectors.T
        return (R + R.T) / 2.0

    def label_gram(self, n_labels: int) -> np.ndarray:
        """Give the label coupling a dual sees, ``R^-1 = D (D + mu I)^-1``.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            R^-1, computed on D's eigenbasis (eigenvalues d_j -> d_j / (d_j + mu)), symmetric.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        eigenvalues, vectors = self._spectrum(n_labels)
        R_inv = (vectors * (eigenvalues / (eigenvalues + self.mu))) @ vectors.T
        return (R_inv + R_inv.T) / 2.0

    def value(self, W) -> float:
        W = _matrix(W)
        return 0.5 * float(np.vdot(W, self.gradient(W)))

    def gradient(self, W) -> np.ndarray:
        W = _matrix(W)
        return W @ self.coupling(W.shape[1])

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here ``1/2 tr(V R^-1 V^T)``.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        V = _matrix(V, "V")
        return 0.5 * float(np.vdot(V @ self.label_gram(V.shape[1]), V))

    def relation_value(self, factor) -> float:
        """Minimise the regulariser over the covariances {D > 0, tr D = 1}.

        The minimiser is ``D = (W^T W)^(1/2) / tr(.)`` (Gu, Li & Han, *Correlated Multi-Label
        Feature Selection*, Theorem 3.4; Zhang & Yeung, *A Convex Formulation for Learning Task
        Relationships in Multi-Task Learning*, eq. 7).

        Parameters
        ----------
        factor : array_like of shape (r, L)
            Any F with ``F^T F = W^T W``.

        Returns
        -------
        float
            ``1/2 ||W||_F^2 + mu/2 (tr (W^T W)^(1/2))^2``.
        """
        factor = _matrix(factor, "factor")
        return 0.5 * float(np.vdot(factor, factor)) + 0.5 * self.mu * trace_norm(factor) ** 2

    def relation_dual(self, H) -> float:
        """Maximise ``1/2 tr(H D (D + mu I)^-1)`` over the covariances {D >= 0, tr D = 1}.

        ``tr(H D (D + mu I)^-1) = tr(H) - mu tr(H (D + mu I)^-1)``, and for a given spectrum of
        D the last trace is least when D shares H's eigenvectors with the largest d_j on the
        largest h_j (von Neumann's trace inequality).  So with h the eigenvalues of H it is
        ``min sum_j h_j / (d_j + mu)`` over the simplex, whose solution is water-filling:
        ``d_j = max(0, s sqrt(h_j) - mu)`` with s fixed by ``sum d_j = 1``.

        Parameters
        ----------
        H : array_like of shape (L, L)
            The symmetric positive semi-definite matrix of the dual's quadratic term
            (eigenvalues below 0 by round-off count as 0).

        Returns
        -------
        float
            The maximum of ``1/2 tr(H D (D + mu I)^-1)``; ``1/2 tr(H)`` when ``mu = 0``.
        """
        h = np.clip(np.linalg.eigvalsh(_matrix(H, "H")), 0.0, None)[::-1]
        if self.mu == 0.0:
            return 0.5 * float(h.sum())
        r = np.sqrt(h)
        k = np.arange(1, h.size + 1)
        # H = 0 makes the leading cumulative sums 0: scale is inf there and r * scale nan, never active.
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = (1.0 + k * self.mu) / np.cumsum(r)
            active = np.flatnonzero(r * scale > self.mu)
        if active.size == 0:
            d = np.full(h.size, 1.0 / h.size)  # H = 0: every D gives 0
        else:
            s = scale[active[-1]]
            d = np.maximum(0.0, s * r - self.mu)
            d[active[-1] + 1 :] = 0.0
        return 0.5 * (float(h.sum()) - self.mu * float(np.sum(h / (d + self.mu))))


#: Relative slack of the dual-norm balls of the norm penalties' conjugates (round-off of the gradients).
BALL_TOL = SPECTRAL_TOL


def _ball_indicator(norm: float, radius: float) -> float:
    return 0.0 if norm <= radius * (1.0 + BALL_TOL) else np.inf


@attrs.frozen
class L1(Regularizer):
    """``weight * ||W||_1 = weight * sum_ij |w_ij|``: entrywise sparsity (the lasso penalty).

    Tibshirani, *Regression Shrinkage and Selection via the Lasso*, J. R. Statist. Soc. B 58
    (1996), eq. 1; used by LLSF (Huang, Li, Huang & Wu, *Learning Label Specific Features for
    Multi-Label Classification*, ICDM 2015) for label-specific features.

    Subgradient ``weight * sign(W)`` (0 at 0).  Conjugate: the indicator of the max-norm ball
    ``max_ij |v_ij| <= weight`` (relative slack :data:`BALL_TOL`), so ``dual_norm(V)`` is
    ``(max |V|, weight)``.  ``prox(W, step)``: soft thresholding by ``step * weight``
    (:func:`~multilabel_core.proximal.soft_threshold`).  Label-separable.

    Parameters
    ----------
    weight : float, default=1.0
        The weight of the norm, at least 0.
    """

    weight: float = attrs.field(default=1.0, validator=non_negative)

    smooth: ClassVar[bool] = False
    #: Adding rows to W never lowers the value (zero rows are optimal for features no row uses).
    row_monotone: ClassVar[bool] = True
    label_separable: ClassVar[bool] = True

    @property
    def norm_modulus(self) -> float:
        """``weight``: ``weight ||W||_1 >= weight ||W||_F``."""
        return float(self.weight)

    def value(self, W) -> float:
        return self.weight * float(np.abs(_matrix(W)).sum())

    def gradient(self, W) -> np.ndarray:
        return self.weight * np.sign(_matrix(W))

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here 0 on the max-norm ball of radius ``weight``, +inf outside.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        return _ball_indicator(*self.dual_norm(V))

    def dual_norm(self, V) -> tuple[float, float]:
        """Give the dual norm of ``V`` and the radius of the conjugate's ball.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point.

        Returns
        -------
        tuple of float
            ``(max_ij |v_ij|, weight)``.
        """
        V = _matrix(V, "V")
        return (float(np.abs(V).max()) if V.size else 0.0), float(self.weight)

    def prox(self, W, step: float) -> np.ndarray:
        """Apply the proximal operator of ``step * weight ||.||_1``: soft thresholding.

        Parameters
        ----------
        W : array_like of shape (d, L)
            The point to shrink.
        step : float
            The step size, at least 0.

        Returns
        -------
        ndarray of shape (d, L)
            ``W`` soft-thresholded entrywise by ``step * weight``.

        Raises
        ------
        ValueError
            If ``step`` is negative or not a real number.
        """
        check_scalar(step, "step", low=0.0)
        return soft_threshold(_matrix(W), step * self.weight)


@attrs.frozen
class L21(Regularizer):
    """``weight * ||W||_{2,1} = weight * sum_i ||W_i.||_2``: row sparsity, a feature kept or dropped for all labels.

    The group lasso over the rows of W (Yuan & Lin, *Model selection and estimation in regression
    with grouped variables*, J. R. Statist. Soc. B 68 (2006), eq. 2.1), the shared feature
    selection of multi-task learning (Obozinski, Taskar & Jordan, *Joint covariate selection and
    joint subspace selection for multiple classification problems*, Statistics and Computing 20
    (2010), eq. 2; Nie, Huang, Cai & Ding, *Efficient and Robust Feature Selection via Joint
    l2,1-Norms Minimization*, NIPS 2010, eq. 3).

    Subgradient ``weight * W_i. / ||W_i.||`` per nonzero row (0 for a zero row).  Conjugate: the
    indicator of ``max_i ||V_i.||_2 <= weight``.  ``prox(W, step)``: row soft thresholding
    (:func:`~multilabel_core.proximal.group_soft_threshold`).  Couples the labels of a row.

    Parameters
    ----------
    weight : float, default=1.0
        The weight of the norm, at least 0.
    """

    weight: float = attrs.field(default=1.0, validator=non_negative)

    smooth: ClassVar[bool] = False
    #: Adding rows to W never lowers the value (zero rows are optimal for features no row uses).
    row_monotone: ClassVar[bool] = True
    label_separable: ClassVar[bool] = False

    @property
    def norm_modulus(self) -> float:
        """``weight``: ``sum_i ||W_i.|| >= ||W||_F``."""
        return float(self.weight)

    def value(self, W) -> float:
        return self.weight * float(np.linalg.norm(_matrix(W), axis=1).sum())

    def gradient(self, W) -> np.ndarray:
        W = _matrix(W)
        norms = np.linalg.norm(W, axis=1)
        return self.weight * np.divide(W, norms[:, None], out=np.zeros_like(W), where=norms[:, None] > 0.0)

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here 0 when every row of V has norm at most ``weight``, +inf otherwise.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        return _ball_indicator(*self.dual_norm(V))

    def dual_norm(self, V) -> tuple[float, float]:
        """Give the dual norm of ``V`` and the radius of the conjugate's ball.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point.

        Returns
        -------
        tuple of float
            ``(max_i ||V_i.||_2, weight)``.
        """
        V = _matrix(V, "V")
        return (float(np.linalg.norm(V, axis=1).max()) if V.size else 0.0), float(self.weight)

    def prox(self, W, step: float) -> np.ndarray:
        """Apply the proximal operator of ``step * weight ||.||_{2,1}``: row soft thresholding.

        Parameters
        ----------
        W : array_like of shape (d, L)
            The point to shrink.
        step : float
            The step size, at least 0.

        Returns
        -------
        ndarray of shape (d, L)
            Every row of ``W`` shrunk in norm by ``step * weight`` (to 0 below it).

        Raises
        ------
        ValueError
            If ``step`` is negative or not a real number.
        """
        check_scalar(step, "step", low=0.0)
        return group_soft_threshold(_matrix(W), step * self.weight)


def _unit_interval(instance, attribute, value) -> None:
    check_scalar(value, attribute.name, low=0.0, high=1.0)


@attrs.frozen
class ElasticNet(Regularizer):
    """``weight * (l1_ratio ||W||_1 + (1 - l1_ratio)/2 ||W||_F^2)``.

    Zou & Hastie, *Regularization and variable selection via the elastic net*, J. R. Statist.
    Soc. B 67 (2005), eq. 3 (in the parametrisation ``alpha = l1_ratio``).  With a = weight *
    l1_ratio and c = weight * (1 - l1_ratio), per entry ``h(x) = a |x| + c x^2 / 2``:
    subgradient ``a sign(x) + c x``; conjugate ``max(|v| - a, 0)^2 / (2c)`` (c > 0; for c = 0
    the indicator of ``|v| <= a``); ``prox(x, s) = soft_threshold(x, s a) / (1 + s c)``.  Smooth
    only when ``l1_ratio = 0`` (or ``weight = 0``); strongly convex with modulus c.
    Label-separable.

    Parameters
    ----------
    weight : float, default=1.0
        The overall weight, at least 0.
    l1_ratio : float, default=0.5
        The share of the L1 part, in [0, 1] (1 is :class:`L1`, 0 the Frobenius norm times
        ``weight``).
    """

    weight: float = attrs.field(default=1.0, validator=non_negative)
    l1_ratio: float = attrs.field(default=0.5, validator=_unit_interval)

    label_separable: ClassVar[bool] = True
    #: Adding rows to W never lowers the value (zero rows are optimal for features no row uses).
    row_monotone: ClassVar[bool] = True

    @property
    def smooth(self) -> bool:
        """True when the L1 part vanishes (``l1_ratio = 0`` or ``weight = 0``)."""
        return self._a == 0.0

    @property
    def _a(self) -> float:
        return float(self.weight) * float(self.l1_ratio)

    @property
    def _c(self) -> float:
        return float(self.weight) * (1.0 - float(self.l1_ratio))

    @property
    def norm_modulus(self) -> float:
        """``weight * l1_ratio``, the weight of the L1 part (which bounds ``||W||_F`` from above)."""
        return self._a

    @property
    def strong_convexity(self) -> float:
        """``weight * (1 - l1_ratio)``: the penalty minus that times ``1/2 ||W||^2`` is convex."""
        return self._c

    def value(self, W) -> float:
        W = _matrix(W)
        return self._a * float(np.abs(W).sum()) + 0.5 * self._c * float(np.vdot(W, W))

    def gradient(self, W) -> np.ndarray:
        W = _matrix(W)
        return self._a * np.sign(W) + self._c * W

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here ``sum_ij max(|v_ij| - a, 0)^2 / (2c)`` (the indicator of ``|v| <= a``
        when c = 0).

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        V = _matrix(V, "V")
        if self._c == 0.0:
            return _ball_indicator(*self.dual_norm(V))
        excess = np.maximum(np.abs(V) - self._a, 0.0)
        return float(np.vdot(excess, excess)) / (2.0 * self._c)

    def dual_norm(self, V) -> tuple[float, float]:
        """Give the dual norm of ``V`` and the radius of the conjugate's ball.

        The ball is the conjugate's domain when ``l1_ratio = 1``.

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point.

        Returns
        -------
        tuple of float
            ``(max |V|, weight * l1_ratio)``.
        """
        V = _matrix(V, "V")
        return (float(np.abs(V).max()) if V.size else 0.0), self._a

    def prox(self, W, step: float) -> np.ndarray:
        """Apply the proximal operator of ``step`` times the elastic net.

        Parameters
        ----------
        W : array_like of shape (d, L)
            The point to shrink.
        step : float
            The step size, at least 0.

        Returns
        -------
        ndarray of shape (d, L)
            ``soft_threshold(W, step a) / (1 + step c)``.

        Raises
        ------
        ValueError
            If ``step`` is negative or not a real number.
        """
        check_scalar(step, "step", low=0.0)
        return soft_threshold(_matrix(W), step * self._a) / (1.0 + step * self._c)


def label_cosine_similarity(Y) -> np.ndarray:
    """Compute the cosine similarity of the label columns of ``Y``.

    The similarity is computed on the {0, 1} indicator ``Y > 0``, as LLSF does (Huang, Li,
    Huang & Wu, *Learning Label Specific Features for Multi-Label Classification*, ICDM 2015).
    A column with no positive entry is similar to nothing (0), itself included.

    Parameters
    ----------
    Y : array_like or sparse matrix of shape (n, L)
        The label indicator: any matrix whose positive entries mark the relevant pairs
        ({0, 1} or {-1, +1}).

    Returns
    -------
    ndarray of shape (L, L)
        S, symmetric, with ``S_jk = <y_j, y_k> / (||y_j|| ||y_k||)``.

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D with at least one column.
    """
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
    if Y.ndim != 2 or Y.shape[1] < 1:
        raise ValueError(f"Y must be a 2-D (n, L) label matrix, got shape {Y.shape}")
    B = (Y > 0).astype(np.float64)
    gram = B.T @ B
    norms = np.sqrt(np.diag(gram))
    outer = np.outer(norms, norms)
    S = np.divide(gram, outer, out=np.zeros_like(gram), where=outer > 0.0)
    return (S + S.T) / 2.0


def _coupling(value):
    if value is None:
        return None
    R = check_symmetric(value, "coupling")
    R.setflags(write=False)
    return R


def _form(instance, attribute, value) -> None:
    if value not in ("laplacian", "distance"):
        raise ValueError(f"form must be 'laplacian' (R = D - S) or 'distance' (R = 1 - S, LLSF's), got {value!r}")


@attrs.frozen
class LabelSimilarity(Regularizer):
    """``alpha/2 tr(W R W^T)``, a quadratic coupling of the label columns of W by their similarity on the training labels.

    S is the cosine similarity of the training label columns (:func:`label_cosine_similarity`),
    and ``form`` chooses R:

    - ``"laplacian"`` (default): ``R = D - S0`` with S0 = S off its diagonal and D = diag(S0 1),
      the graph Laplacian; ``tr(W R W^T) = 1/2 sum_jk S_jk ||w_j - w_k||^2`` pulls similar labels'
      weights together.  Positive semi-definite, so the penalty is convex (singular: constant
      directions across labels are free).
    - ``"distance"``: ``R = 1 - S`` (zero diagonal), LLSF's (Huang, Li, Huang & Wu, *Learning
      Label Specific Features for Multi-Label Classification*, ICDM 2015, with
      ``R_jk = 1 - cosine``), which pushes dissimilar labels towards orthogonal weights.  R is
      generally indefinite (zero trace), so the penalty is not convex; only with a loss whose
      curvature outweighs it (``C lambda_min(X^T X) + alpha mu_min(R) >= 0``) is the problem
      convex.

    The regulariser needs the training labels: built without ``coupling`` it is *unresolved*,
    lists ``"with_labels"`` in its ``state``, and a solver that reads it
    (:class:`~multilabel_core.solvers.ProximalGradientSolver`) calls :meth:`with_labels` with the
    problem's targets before solving; the composition contract refuses it to every other solver
    (:meth:`~multilabel_core.base.Solver.check`).  Unresolved, no two labels are similar (S = I:
    R = 0 for the Laplacian, R = 1 - I for the distance), which is what :meth:`value` then
    evaluates; no solver fits that by accident, since none but the resolving one accepts it.

    Gradient ``alpha W R``.  Conjugate (R positive semi-definite, eigenpairs (mu_k, q_k)):
    ``sum_{mu_k > 0} ||V q_k||^2 / (2 alpha mu_k)`` when V has no component on R's null space
    (relative slack :data:`BALL_TOL`), +inf otherwise; +inf everywhere when R has a negative
    eigenvalue (the supremum is unbounded).

    Parameters
    ----------
    alpha : float, default=1.0
        The weight of the quadratic, at least 0.
    form : {"laplacian", "distance"}, default="laplacian"
        How R is built from the similarity S (see above).
    coupling : array_like of shape (L, L) or None, default=None
        R itself (symmetric); None until :meth:`with_labels` computes it.
    """

    alpha: float = attrs.field(default=1.0, validator=non_negative)
    form: str = attrs.field(default="laplacian", validator=_form)
    coupling: np.ndarray | None = attrs.field(
        default=None, converter=_coupling, eq=attrs.cmp_using(eq=_same_matrix), hash=False, repr=False
    )

    smooth: ClassVar[bool] = True
    label_separable: ClassVar[bool] = False

    @property
    def row_monotone(self) -> bool:
        """True for the Laplacian (R positive semi-definite: every row adds ``alpha/2 w R w^T >= 0``)."""
        return self.form == "laplacian"

    @property
    def state(self) -> tuple[str, ...]:
        """``("with_labels",)`` until R is computed from the training labels, then ``()``."""
        return ("with_labels",) if self.coupling is None else ()

    def with_labels(self, Y) -> "LabelSimilarity":
        """Resolve R from the training labels (see the class docstring).

        Parameters
        ----------
        Y : array_like or sparse matrix of shape (n, L)
            The training labels; their positive entries mark the relevant pairs.

        Returns
        -------
        LabelSimilarity
            A new regulariser with ``coupling`` computed from the cosine similarity of ``Y``'s
            columns (its ``state`` is then empty).
        """
        return attrs.evolve(self, coupling=self._from_similarity(label_cosine_similarity(Y)))

    def _from_similarity(self, S: np.ndarray) -> np.ndarray:
        if self.form == "distance":
            R = 1.0 - S
            np.fill_diagonal(R, 0.0)
            return R
        S0 = S - np.diag(np.diag(S))
        return np.diag(S0.sum(axis=1)) - S0

    def coupling_for(self, n_labels: int) -> np.ndarray:
        """Give R for ``n_labels`` labels.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            A copy of the computed R (its size checked), or the unresolved one (S = I).

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        check_scalar(n_labels, "n_labels", kind=int, low=1)
        if self.coupling is None:
            return self._from_similarity(np.eye(n_labels))
        if self.coupling.shape[0] != n_labels:
            raise ValueError(
                f"LabelSimilarity's R is {self.coupling.shape[0]} x {self.coupling.shape[0]} but W has {n_labels} labels"
            )
        return np.array(self.coupling)

    def _spectrum(self, n_labels: int) -> tuple[np.ndarray, np.ndarray, float]:
        mu, Q = np.linalg.eigh(self.coupling_for(n_labels))
        tol = 64 * n_labels * np.finfo(np.float64).eps * max(1.0, float(np.abs(mu).max()))
        # Eigenvalues within the eigensolver's rounding are zero (the Laplacian's constant vector).
        mu[np.abs(mu) <= tol] = 0.0
        return mu, Q, tol

    def hessian_bounds(self, n_labels: int) -> tuple[float, float]:
        """Give the least and largest eigenvalue of the Hessian ``alpha I (x) R``.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        tuple of float
            ``alpha * (mu_min(R), mu_max(R))``.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        mu, _, _ = self._spectrum(n_labels)
        return self.alpha * float(mu[0]), self.alpha * float(mu[-1])

    def label_hessian(self, n_labels: int) -> np.ndarray:
        """Give M with this regulariser ``= 1/2 tr(W M W^T)`` (an exact quadratic).

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            ``alpha R``.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        return self.alpha * self.coupling_for(n_labels)

    def range_projector(self, n_labels: int) -> np.ndarray:
        """Give the orthogonal projector onto the range of R.

        Parameters
        ----------
        n_labels : int
            L, the number of labels, at least 1.

        Returns
        -------
        ndarray of shape (L, L)
            P; a dual point ``A P`` meets the conjugate's domain.

        Raises
        ------
        ValueError
            If ``n_labels`` is not a positive integer or differs from the size of a given
            matrix.
        """
        mu, Q, tol = self._spectrum(n_labels)
        Qr = Q[:, mu > tol]
        return Qr @ Qr.T

    def value(self, W) -> float:
        W = _matrix(W)
        return 0.5 * self.alpha * float(np.vdot(W @ self.coupling_for(W.shape[1]), W))

    def gradient(self, W) -> np.ndarray:
        W = _matrix(W)
        return self.alpha * (W @ self.coupling_for(W.shape[1]))

    def conjugate(self, V) -> float:
        """Evaluate the Fenchel conjugate ``Omega*(V) = sup_W <V, W> - Omega(W)``.

        Used for the duality gap of primal solvers.  Here ``sum_{mu_k > 0} ||V q_k||^2 / (2 alpha mu_k)`` on its domain (see the
        class docstring).

        Parameters
        ----------
        V : array_like of shape (d, L)
            The dual point, one column per label.

        Returns
        -------
        float
            ``Omega*(V)``; ``inf`` outside the conjugate's domain.
        """
        V = _matrix(V, "V")
        mu, Q, tol = self._spectrum(V.shape[1])
        if mu[0] < -tol:
            return np.inf
        B = V @ Q
        positive = mu > tol if self.alpha > 0.0 else np.zeros(mu.shape, dtype=bool)
        null = B[:, ~positive]
        if null.size and float(np.linalg.norm(null)) > BALL_TOL * float(np.linalg.norm(V)):
            return np.inf
        return float(((B[:, positive] ** 2).sum(axis=0) / (2.0 * self.alpha * mu[positive])).sum())


def _term(value) -> Regularizer:
    """A term of a :class:`Sum`: a Regularizer, a registered name, or a (name, params) pair."""
    if isinstance(value, Regularizer):
        return value
    if isinstance(value, str):
        return make_component("regularizer", value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict):
        return make_component("regularizer", value[0], **value[1])
    raise ValueError(
        f"terms must hold Regularizer objects, registered names or (name, params) pairs, got {value!r}"
    )


def _terms(values) -> tuple:
    if isinstance(values, (str, Regularizer)) or not isinstance(values, (tuple, list)):
        raise ValueError(f"terms must be a tuple of regularisers, got {values!r}")
    return tuple(_term(value) for value in values)


def _nonempty(instance, attribute, value) -> None:
    if not value:
        raise ValueError("terms must hold at least one regulariser")


@attrs.frozen
class Sum(Regularizer):
    """``sum_k Omega_k(W)``: a sum of regularisers, e.g. LLSF's label-similarity quadratic plus L1.

    Value and (sub)gradient are the sums of the terms'; ``smooth`` and ``label_separable`` when
    every term is; ``state`` the union of the terms' (a solver reading ``with_labels`` resolves
    every term that needs the training labels through :meth:`with_labels`).  There is no closed
    form for the prox or the conjugate of a general sum; a proximal-gradient solver takes the
    smooth terms into its gradient step and the one nonsmooth term's prox
    (:class:`~multilabel_core.solvers.ProximalGradientSolver`), reading them from :attr:`terms`.

    Parameters
    ----------
    terms : tuple, default ``("label_similarity", "l1")``
        The terms: Regularizer objects, registered names, or ``(name, params)`` pairs.  The
        default is LLSF's pair (Huang, Li, Huang & Wu, ICDM 2015), each with its default
        weights.
    """

    terms: tuple = attrs.field(default=("label_similarity", "l1"), converter=_terms, validator=_nonempty)

    @property
    def smooth(self) -> bool:
        """True when every term is smooth."""
        return all(bool(getattr(term, "smooth", False)) for term in self.terms)

    @property
    def row_monotone(self) -> bool:
        """True when every term is."""
        return all(bool(getattr(term, "row_monotone", False)) for term in self.terms)

    @property
    def label_separable(self) -> bool:
        """True when every term is label-separable."""
        return all(bool(getattr(term, "label_separable", False)) for term in self.terms)

    @property
    def state(self) -> tuple[str, ...]:
        """The union of the terms' ``state`` (in order)."""
        names: list[str] = []
        for term in self.terms:
            names += [name for name in getattr(term, "state", ()) if name not in names]
        return tuple(names)

    def with_labels(self, Y) -> "Sum":
        """Resolve every term that reads the training labels with ``Y``.

        Parameters
        ----------
        Y : array_like or sparse matrix of shape (n, L)
            The training labels.

        Returns
        -------
        Sum
            A new sum whose terms with a ``with_labels`` are resolved; the others are kept.
        """
        return Sum(tuple(term.with_labels(Y) if callable(getattr(term, "with_labels", None)) else term
                         for term in self.terms))

    def value(self, W) -> float:
        return float(sum(term.value(W) for term in self.terms))

    def gradient(self, W) -> np.ndarray:
        W = _matrix(W)
        total = np.zeros_like(W)
        for term in self.terms:
            total += term.gradient(W)
        return total
