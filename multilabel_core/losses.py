"""Stock losses: hinge, squared hinge, pairwise ranking hinge, logistic, epsilon-insensitive, least squares.

Notation (see :mod:`multilabel_core.base.loss`): ``Y`` is the (n, L) target matrix --
signs y_ij in {-1, +1} for the classification losses (``target = "sign"``), real
values for :class:`EpsilonInsensitive` (``target = "real"``) -- and ``T`` the (n, L)
score matrix.  Every ``value`` is a sum over examples; every ``gradient`` is the
(n, L) matrix of partial derivatives (a subgradient at kinks) with respect to ``T``.

The margin-based losses are sums of one scalar function of the margin s_ij = y_ij t_ij.
Their Fenchel conjugates ``conjugate(Y, U) = sup_T <U, T> - loss(Y, T)`` are finite
only where a_ij = y_ij u_ij lies in the loss's dual domain; points outside it by at
most ``DOMAIN_TOL`` (round-off of ``-(C * gradient) / C``) are projected onto it, points
farther out give ``+inf``.  They satisfy Fenchel--Young with equality at
``U = gradient(Y, T)``, which is what primal solvers use for their duality gaps.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
from scipy.special import expit, xlogy

from ._blocks import row_blocks
from .validation import check_scalar, check_Y, non_negative
from .base import Loss

__all__ = [
    "DOMAIN_TOL",
    "EpsilonInsensitive",
    "Hinge",
    "LeastSquares",
    "Logistic",
    "PairwiseRankingHinge",
    "SquaredHinge",
    "ranking_pairs",
    "tube_weights",
]

#: Distance outside a conjugate's domain still accepted as round-off.
DOMAIN_TOL = 1e-12


def _pair(Y, T) -> tuple[np.ndarray, np.ndarray]:
    Y = np.asarray(Y, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != T.shape:
        raise ValueError(f"Y and T must be 2-D arrays of one shape, got {Y.shape} and {T.shape}")
    return Y, T


def _dual_margins(Y, U, low: float, high: float) -> np.ndarray | None:
    """a = Y * U projected onto [low, high], or None when an entry lies farther than DOMAIN_TOL outside."""
    Y, U = _pair(Y, U)
    A = Y * U
    if np.any(A < low - DOMAIN_TOL) or np.any(A > high + DOMAIN_TOL):
        return None
    return np.clip(A, low, high)


@attrs.frozen
class Hinge(Loss):
    """Hinge loss ``sum_ij max(0, 1 - y_ij t_ij)``.

    Subgradient ``-y_ij [y_ij t_ij < 1]`` (0 at the kink s = 1).  Conjugate: with
    a_ij = y_ij u_ij, ``sum_ij a_ij`` when every a_ij is in [-1, 0], else +inf.
    ``dual_box(C) = (0, C)``: the dual variable alpha_ij = -C y_ij d ell / d t_ij of
    ``C * loss`` lies in [0, C], the box of the SVM dual; ``dual_diagonal(C) = 0``: the
    dual ``1/2 alpha^T Q alpha - e^T alpha`` has no diagonal term (Hsieh et al., *A dual
    coordinate descent method for large-scale linear SVM*, ICML 2008, eq. 4, L1-SVM).
    """

    smooth: ClassVar[bool] = False
    target: ClassVar[str] = "sign"
    #: A sum of one function per entry (i, j): the labels are apart given the scores.
    label_separable: ClassVar[bool] = True
    #: The least value (the loss is nonnegative).
    lower_bound: ClassVar[float] = 0.0

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        return float(np.maximum(0.0, 1.0 - Y * T).sum())

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        return np.where(Y * T < 1.0, -Y, 0.0)

    def conjugate(self, Y, U) -> float:
        """Evaluate the Fenchel conjugate at the dual point ``U``.

        With a_ij = y_ij u_ij the domain is the one in the class docstring; points outside it
        by at most :data:`DOMAIN_TOL` are projected onto it (round-off).

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The targets, as for :meth:`value`.
        U : array_like of shape (n, L)
            The dual point (a scaled negative of the scores' gradient at the optimum).

        Returns
        -------
        float
            ``ell*(Y, U) = sup_T <U, T> - ell(Y, T)``; ``inf`` outside the conjugate's domain.

        Raises
        ------
        ValueError
            If ``Y`` and ``U`` are not 2-D arrays of one shape.
        """
        A = _dual_margins(Y, U, -1.0, 0.0)
        return np.inf if A is None else float(A.sum())

    def dual_box(self, C: float) -> tuple[float, float]:
        """Give the box of a dual variable ``alpha_ij = -C y_ij d ell / d t_ij`` for cost ``C``.

        Parameters
        ----------
        C : float
            The cost (the weight of the loss), positive.

        Returns
        -------
        tuple of float
            ``(0, C)``, the box of the L1-SVM dual.

        Raises
        ------
        ValueError
            If ``C`` is not a positive real number.
        """
        check_scalar(C, "C", low=0.0, low_inclusive=False)
        return 0.0, float(C)

    def dual_diagonal(self, C: float) -> float:
        """Give the diagonal term D of the SVM dual for cost ``C``.

        The dual is ``1/2 alpha^T (Q + D I) alpha - e^T alpha`` on the box of :meth:`dual_box`
        (Hsieh et al., *A dual coordinate descent method for large-scale linear SVM*, ICML
        2008, eq. 4).

        Parameters
        ----------
        C : float
            The cost (the weight of the loss), positive.

        Returns
        -------
        float
            0 for the hinge loss (L1-SVM).

        Raises
        ------
        ValueError
            If ``C`` is not a positive real number.
        """
        check_scalar(C, "C", low=0.0, low_inclusive=False)
        return 0.0


@attrs.frozen
class SquaredHinge(Loss):
    """Squared hinge loss ``sum_ij max(0, 1 - y_ij t_ij)^2`` (C^1, the L2-SVM loss).

    Gradient ``-2 y_ij max(0, 1 - y_ij t_ij)``.  Conjugate: with a_ij = y_ij u_ij,
    ``sum_ij (a_ij + a_ij^2 / 4)`` when every a_ij <= 0, else +inf (the supremum over
    s is reached at s = 1 + a / 2).

    ``dual_box(C) = (0, inf)``: the dual variable alpha_ij = -C y_ij d ell / d t_ij =
    2 C max(0, 1 - s_ij) of ``C * loss`` is only bounded below.  ``dual_diagonal(C) =
    1 / (2C)``: from the conjugate, ``C ell*(-alpha / C) = -alpha + alpha^2 / (4C)``, so the
    SVM dual is ``1/2 alpha^T (Q + I / (2C)) alpha - e^T alpha`` (Hsieh et al., ICML 2008,
    eq. 4, L2-SVM).
    """

    smooth: ClassVar[bool] = True
    target: ClassVar[str] = "sign"
    #: A sum of one function per entry (i, j): the labels are apart given the scores.
    label_separable: ClassVar[bool] = True
    #: The least value (the loss is nonnegative).
    lower_bound: ClassVar[float] = 0.0

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        return float((np.maximum(0.0, 1.0 - Y * T) ** 2).sum())

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        return -2.0 * Y * np.maximum(0.0, 1.0 - Y * T)

    def conjugate(self, Y, U) -> float:
        """Evaluate the Fenchel conjugate at the dual point ``U``.

        With a_ij = y_ij u_ij the domain is the one in the class docstring; points outside it
        by at most :data:`DOMAIN_TOL` are projected onto it (round-off).

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The targets, as for :meth:`value`.
        U : array_like of shape (n, L)
            The dual point (a scaled negative of the scores' gradient at the optimum).

        Returns
        -------
        float
            ``ell*(Y, U) = sup_T <U, T> - ell(Y, T)``; ``inf`` outside the conjugate's domain.

        Raises
        ------
        ValueError
            If ``Y`` and ``U`` are not 2-D arrays of one shape.
        """
        A = _dual_margins(Y, U, -np.inf, 0.0)
        return np.inf if A is None else float((A + A**2 / 4.0).sum())

    def dual_box(self, C: float) -> tuple[float, float]:
        """Give the box of a dual variable ``alpha_ij = -C y_ij d ell / d t_ij`` for cost ``C``.

        Parameters
        ----------
        C : float
            The cost (the weight of the loss), positive.

        Returns
        -------
        tuple of float
            ``(0, inf)``: the L2-SVM dual variable is only bounded below.

        Raises
        ------
        ValueError
            If ``C`` is not a positive real number.
        """
        check_scalar(C, "C", low=0.0, low_inclusive=False)
        return 0.0, np.inf

    def dual_diagonal(self, C: float) -> float:
        """Give the diagonal term D of the SVM dual for cost ``C``.

        The dual is ``1/2 alpha^T (Q + D I) alpha - e^T alpha`` on the box of :meth:`dual_box`
        (Hsieh et al., *A dual coordinate descent method for large-scale linear SVM*, ICML
        2008, eq. 4).

        Parameters
        ----------
        C : float
            The cost (the weight of the loss), positive.

        Returns
        -------
        float
            ``1 / (2C)`` for the squared hinge (L2-SVM).

        Raises
        ------
        ValueError
            If ``C`` is not a positive real number.
        """
        check_scalar(C, "C", low=0.0, low_inclusive=False)
        return 1.0 / (2.0 * float(C))


@attrs.frozen
class Logistic(Loss):
    """Logistic loss ``sum_ij log(1 + exp(-y_ij t_ij))``.

    Gradient ``-y_ij sigma(-y_ij t_ij)`` with sigma the logistic function.  Conjugate:
    with p_ij = -y_ij u_ij, ``sum_ij p log p + (1 - p) log(1 - p)`` (0 log 0 = 0) when
    every p_ij is in [0, 1], else +inf.
    """

    smooth: ClassVar[bool] = True
    target: ClassVar[str] = "sign"
    #: A sum of one function per entry (i, j): the labels are apart given the scores.
    label_separable: ClassVar[bool] = True
    #: The least value (the loss is nonnegative).
    lower_bound: ClassVar[float] = 0.0

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        return float(np.logaddexp(0.0, -Y * T).sum())

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        return -Y * expit(-Y * T)

    def conjugate(self, Y, U) -> float:
        """Evaluate the Fenchel conjugate at the dual point ``U``.

        With a_ij = y_ij u_ij the domain is the one in the class docstring; points outside it
        by at most :data:`DOMAIN_TOL` are projected onto it (round-off).

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The targets, as for :meth:`value`.
        U : array_like of shape (n, L)
            The dual point (a scaled negative of the scores' gradient at the optimum).

        Returns
        -------
        float
            ``ell*(Y, U) = sup_T <U, T> - ell(Y, T)``; ``inf`` outside the conjugate's domain.

        Raises
        ------
        ValueError
            If ``Y`` and ``U`` are not 2-D arrays of one shape.
        """
        A = _dual_margins(Y, U, -1.0, 0.0)
        if A is None:
            return np.inf
        P = -A
        return float((xlogy(P, P) + (1.0 - P) * np.log1p(-P, where=P < 1.0, out=np.zeros_like(P))).sum())


@attrs.frozen
class PairwiseRankingHinge(Loss):
    """Pairwise ranking hinge loss (Elisseeff & Weston; Gu, Li & Han, *Correlated Multi-Label Feature Selection*, eq. 1).

    For row i with relevant labels y_i = {k : y_ik = +1} and irrelevant ones
    ybar_i = {l : y_il = -1}::

        ell_i = 1 / (|y_i| |ybar_i|) * sum_{k in y_i, l in ybar_i} max(0, 1 - (t_ik - t_il))

    A row whose label set is empty or full has no pair to rank and contributes 0.
    The subgradient takes 0 at the kinks t_ik - t_il = 1.  Rows are processed in blocks
    whose (rows, L, L) pair tensors fit the block memory budget.
    """

    smooth: ClassVar[bool] = False
    target: ClassVar[str] = "sign"

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        total = 0.0
        for rows in _pair_tensor_blocks(Y):
            violation, weight = _ranking_pairs(Y[rows], T[rows])
            total += float(weight @ violation.sum(axis=(1, 2)))
        return total

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        G = np.empty_like(T)
        for rows in _pair_tensor_blocks(Y):
            violation, weight = _ranking_pairs(Y[rows], T[rows])
            active = violation > 0.0
            # d/dt_ik of max(0, 1 - t_ik + t_il) is -1 for active pairs with k relevant, +1 with l irrelevant.
            G[rows] = weight[:, None] * (active.sum(axis=1) - active.sum(axis=2))
        return G

    def pairs(self, Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """List the ranked pairs: row i, relevant label k, irrelevant label l.

        The pairs are ordered by row, then k, then l, as :func:`ranking_pairs` gives them (the
        order of the ranking solvers' dual variables, one per pair).

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The labels, in {-1, +1} (this loss's targets) or {0, 1}.

        Returns
        -------
        pair_row, pair_k, pair_l : ndarray of np.intp
            Row i, relevant label k and irrelevant label l of each pair.

        Raises
        ------
        ValueError
            If ``Y`` is not 2-D or holds other values than {-1, +1} or {0, 1}.
        """
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(f"Y must be a 2-D (n, L) matrix, got shape {Y.shape}")
        values = np.unique(Y)
        if not (np.isin(values, (-1, 1)).all() or np.isin(values, (0, 1)).all()):
            raise ValueError(f"Y must hold {{-1, +1}} or {{0, 1}} labels, got the values {values[:5].tolist()}")
        return ranking_pairs((Y > 0).astype(np.int8))


def ranking_pairs(Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (i, k, l), k in y_i and l in ybar_i, ordered by row, then k, then l.

    The pairs ``(k, l) in y_i x ybar_i`` of the ranking SVM's constraints (Gu, Li & Han,
    *Correlated Multi-Label Feature Selection*, eq. 1), one dual variable each in the ranking solvers.  Vectorised over
    the CSR layout of the irrelevant labels: each relevant entry (i, k) is repeated
    ``|ybar_i|`` times and paired with row i's irrelevant block.  It lives beside the loss
    (and :mod:`multilabel_core.solvers` re-exports it) so that the solvers, which import the
    losses, and the loss share it without an import cycle.

    Parameters
    ----------
    Y : array-like of shape (n, L)
        Labels in {0, 1}.

    Returns
    -------
    pair_row, pair_k, pair_l : ndarray of np.intp
        Row i, relevant label k and irrelevant label l of each pair.
    """
    relevant = check_Y(Y).astype(bool)
    irrelevant_count = (~relevant).sum(axis=1)
    irrelevant_start = np.concatenate([[0], np.cumsum(irrelevant_count)[:-1]])
    irrelevant_labels = np.nonzero(~relevant)[1]
    relevant_rows, relevant_labels = np.nonzero(relevant)
    repeats = irrelevant_count[relevant_rows]
    pair_row = np.repeat(relevant_rows, repeats).astype(np.intp)
    pair_k = np.repeat(relevant_labels, repeats).astype(np.intp)
    first_of_entry = np.repeat(np.cumsum(repeats) - repeats, repeats)
    offset = np.arange(pair_row.size) - first_of_entry
    pair_l = irrelevant_labels[irrelevant_start[pair_row] + offset].astype(np.intp)
    return pair_row, pair_k, pair_l


def _pair_tensor_blocks(Y: np.ndarray):
    """Row blocks for :func:`_ranking_pairs`, whose (rows, L, L) temporaries take about 4 float64 tensors."""
    return row_blocks(Y.shape[0], 4 * 8 * Y.shape[1] ** 2)


def _ranking_pairs(Y: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hinge terms ``H[i, k, l] = max(0, 1 - t_ik + t_il)`` on (relevant k, irrelevant l) pairs, and row weights."""
    relevant = Y > 0
    pairs = relevant[:, :, None] & ~relevant[:, None, :]
    violation = np.where(pairs, np.maximum(0.0, 1.0 - T[:, :, None] + T[:, None, :]), 0.0)
    n_pairs = relevant.sum(axis=1) * (~relevant).sum(axis=1)
    weight = np.divide(1.0, n_pairs, out=np.zeros(len(n_pairs)), where=n_pairs > 0)
    return violation, weight


@attrs.frozen
class EpsilonInsensitive(Loss):
    """Multi-output epsilon-insensitive loss of MSVR (Tao, Xu & Geng, LIEML, eqs. 8-9).

    LIEML: Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with
    Low-Rank Subspace*.

    With residual rows e_i = y_i - t_i and r_i = ||e_i||_2 (one radius for all outputs,
    so a row is a support vector for all labels at once)::

        ell = sum_i Omega_1(r_i),   Omega_1(r) = 0 if r < epsilon, (r - epsilon)^2 otherwise   (eq. 9)

    Omega_1 is convex, nondecreasing and C^1 in r, so the loss is convex and C^1.  Its
    gradient with respect to t_i is ``a_i (t_i - y_i)`` with the IRWLS weights ``a_i``
    of eq. 13 (:meth:`irwls_weights`).

    Parameters
    ----------
    epsilon : float, default=0.1
        The radius of the insensitive tube, at least 0.
    """

    epsilon: float = attrs.field(default=0.1, validator=non_negative)

    smooth: ClassVar[bool] = True
    target: ClassVar[str] = "real"

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        radius = np.linalg.norm(Y - T, axis=1)
        return float((np.maximum(0.0, radius - self.epsilon) ** 2).sum())

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        return self.irwls_weights(Y, T)[:, None] * (T - Y)

    def conjugate(self, Y, U) -> float:
        """Evaluate the Fenchel conjugate at the dual point ``U``.

        It is ``sum_i <u_i, y_i> + epsilon ||u_i|| + ||u_i||^2 / 4``.  Per row, with
        t = y - r: ``sup_t <u, t> - Omega_1(||y - t||) = <u, y> + sup_{s >= 0} s ||u||
        - Omega_1(s)``, attained at s = epsilon + ||u|| / 2; finite everywhere, so primal solvers
        (L-BFGS) certify MSVR problems by their duality gap.

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The targets, as for :meth:`value`.
        U : array_like of shape (n, L)
            The dual point (a scaled negative of the scores' gradient at the optimum).

        Returns
        -------
        float
            ``ell*(Y, U) = sup_T <U, T> - ell(Y, T)``; ``inf`` outside the conjugate's domain.

        Raises
        ------
        ValueError
            If ``Y`` and ``U`` are not 2-D arrays of one shape.
        """
        Y, U = _pair(Y, U)
        norms = np.linalg.norm(U, axis=1)
        return float(np.sum(Y * U) + self.epsilon * norms.sum() + (norms**2).sum() / 4.0)

    def irwls_weights(self, Y, T) -> np.ndarray:
        """Compute the IRWLS weights ``a_i = Omega_1'(r_i) / r_i`` (LIEML, eq. 13).

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The real targets.
        T : array_like of shape (n, L)
            The scores.

        Returns
        -------
        ndarray of shape (n,)
            :func:`tube_weights` at the residual norms ``r_i = ||y_i - t_i||``.

        Raises
        ------
        ValueError
            If ``Y`` and ``T`` are not 2-D arrays of one shape.
        """
        Y, T = _pair(Y, T)
        return tube_weights(np.linalg.norm(Y - T, axis=1), self.epsilon)


def tube_weights(radius: np.ndarray, epsilon: float) -> np.ndarray:
    """Compute the IRWLS weights ``a_i = Omega_1'(r_i) / r_i`` of MSVR at the residual norms.

    Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank
    Subspace*, eq. 13.

    Parameters
    ----------
    radius : ndarray of shape (n,)
        The residual norms r_i >= 0.
    epsilon : float
        The radius of the insensitive tube, at least 0.

    Returns
    -------
    ndarray of shape (n,)
        0 inside the tube (r_i <= epsilon), ``2 (r_i - epsilon) / r_i`` outside.  With
        epsilon = 0, Omega_1(r) = r^2 and a_i = 2 for every row, r_i = 0 included.
    """
    if epsilon == 0.0:
        return np.full(len(radius), 2.0)
    outside = radius > epsilon
    return np.divide(2.0 * (radius - epsilon), radius, out=np.zeros(len(radius)), where=outside)


def _target(instance, attribute, value) -> None:
    if value not in ("sign", "real"):
        raise ValueError(f"target must be 'sign' ({{-1, +1}} targets) or 'real' (the {{0, 1}} indicator as is), got {value!r}")


@attrs.frozen
class LeastSquares(Loss):
    """Least squares ``1/2 sum_ij (t_ij - y_ij)^2``.

    Gradient ``T - Y``; curvature exactly 1 in every entry (the Hessian in T is the identity:
    ``curvature = 1``); conjugate ``<U, Y> + 1/2 ||U||_F^2``, finite everywhere.  A sum of one
    function per entry (``label_separable``) and nonnegative (``lower_bound = 0``).

    Parameters
    ----------
    target : {"sign", "real"}, default "sign"
        The targets it regresses, as :class:`~multilabel_core.ComposedEstimator` maps the {0, 1}
        labels: ``"sign"`` regresses y in {-1, +1}, so that the core's default threshold (t > 0)
        is the midpoint of the two targets; ``"real"`` regresses the indicator {0, 1} as given
        (and real targets a relation feeds, e.g. LIEML's enhanced labels).

    Notes
    -----
    LLSF (Huang, Li, Huang & Wu, *Learning Label Specific Features for Multi-Label
    Classification*, ICDM 2015) regresses Y in {0, 1} and predicts label j
    where the score exceeds 0.5 (the ``fixed`` threshold part with ``value=0.5``).  What is
    equivalent, exactly: with a *free* (unpenalised) intercept, the ``"sign"`` problem with
    targets 2Y - 1 is the ``"real"`` problem with the scores mapped by t' = 2t - 1 (W' = 2W,
    b' = 2b - 1): the squared residuals scale by 4, so with the loss weight C unchanged, every
    penalty term homogeneous of degree 2 (``frobenius``, ``label_similarity``) keeps its weight
    and every term homogeneous of degree 1 (``l1``, ``l21``, ``nuclear_norm``) has its weight
    halved; then ``t' > 0`` exactly when ``t > 0.5``.  Without an intercept (LLSF's own
    formulation has none) the map needs b' = -1 and the two problems differ: LLSF without an
    intercept is ``target="real"`` with a 0.5 threshold, nothing else.
    """

    target: str = attrs.field(default="sign", validator=_target)

    smooth: ClassVar[bool] = True
    label_separable: ClassVar[bool] = True
    lower_bound: ClassVar[float] = 0.0
    #: The Hessian of the loss in the scores is ``curvature * I`` (solvers bound Lipschitz and
    #: strong-convexity constants with it).
    curvature: ClassVar[float] = 1.0

    def value(self, Y, T) -> float:
        Y, T = _pair(Y, T)
        R = T - Y
        return 0.5 * float(np.vdot(R, R))

    def gradient(self, Y, T) -> np.ndarray:
        Y, T = _pair(Y, T)
        return T - Y

    def conjugate(self, Y, U) -> float:
        """Evaluate the Fenchel conjugate at the dual point ``U``.

        It is ``<U, Y> + 1/2 ||U||^2`` (``sup_T <U, T> - 1/2 ||T - Y||^2``, attained at
        T = Y + U), finite everywhere.

        Parameters
        ----------
        Y : array_like of shape (n, L)
            The targets, as for :meth:`value`.
        U : array_like of shape (n, L)
            The dual point (a scaled negative of the scores' gradient at the optimum).

        Returns
        -------
        float
            ``ell*(Y, U) = sup_T <U, T> - ell(Y, T)``; ``inf`` outside the conjugate's domain.

        Raises
        ------
        ValueError
            If ``Y`` and ``U`` are not 2-D arrays of one shape.
        """
        Y, U = _pair(Y, U)
        return float(np.vdot(U, Y)) + 0.5 * float(np.vdot(U, U))
