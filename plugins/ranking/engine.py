"""Pairwise label-ranking SVM by dual coordinate descent (Gu, Li & Han, Algorithm 1).

Gu, Li & Han, *Correlated Multi-Label Feature Selection*, CIKM 2011.  Notation: rows
x_i (d features), c labels, y_i / ybar_i the relevant / irrelevant labels of row i,
s (d, non-negative) the feature weights, z_i = sqrt(s) o x_i the re-weighted row,
D the label covariance (c x c, positive definite) with strength mu, R = I + mu D^-1.
For fixed D and s the primal (eq. 6, the bias absorbed as in eq. 1) is::

    min_W  1/2 tr(W R W^T) + C sum_i 1/(|y_i||ybar_i|) sum_{(k,l) in y_i x ybar_i} max(0, 1 - (w_k - w_l)^T z_i)

(``1/2 sum_k ||w_k||^2 + mu/2 tr(W D^-1 W^T) = 1/2 tr(W R W^T)``) and its dual (eq. 7,
eqs. 19-20 in minimisation form), with beta_ik and u_k = sum_i beta_ik z_i of eqs. 8-10::

    min_alpha  g(alpha) = 1/2 sum_{k,l} R^-1_kl u_k^T u_l - sum alpha_ikl,
               0 <= alpha_ikl <= C / (|y_i| |ybar_i|),        W = U R^-1.

Feature weights.  The paper's kernel over a working set of binary subsets p_t with
weights lambda_t (eqs. 18 and 20) is ``sum_t lambda_t (p_t o x_i)^T (p_t o x_j) =
x_i^T diag(s) x_j`` with ``s = sum_t lambda_t p_t``: one re-weighting of the features,
so the solve runs on the rows ``z_i = sqrt(s) o x_i`` restricted to the support of s,
never on stacked copies of X.  For a single binary p, z_i = p o x_i as in eq. 5.  (Eq. 20
writes the stacked row as ``[lambda_1 x_i; ...]``, whose inner products carry lambda_t^2;
sqrt(lambda_t) is what reproduces (18).)

Pairs.  Rows whose label set is empty or full have no pair: they do not enter the dual,
the primal or W.  With ``fit_intercept`` the constant feature 1 is appended to every z_i
(eq. 1's ``x <- [x; 1]``), so the biases are regularised like the weights and only their
differences matter.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import scipy.sparse as sp

from multilabel_core.base import Fit, Solution
from multilabel_core.certificate import Certificate
from multilabel_core.losses import ranking_pairs
from multilabel_core.solvers.kit import (
    as_rows,
    augmented_adjoint as adjoint,
    augmented_product as product,
    solve_dual,
    warn_not_converged,
)
from multilabel_core.validation import (
    MAX_ITER_LIMIT,
    check_flag,
    check_random_state,
    check_scalar,
    check_symmetric,
    check_X,
    check_Y,
)

from ._cd_ranking import RankingDual

__all__ = ["ENGINE_COUNTS", "coupling_inverse", "ranking_cd"]

#: The engine's counts in a certificate's ``statistics`` (``n_visits``: the coordinates an
#: epoch visited, its work; summed when solves are chained).
ENGINE_COUNTS = ("n_updates", "n_visits", "n_shrunk", "n_resets")


def coupling_inverse(D, mu: float) -> np.ndarray:
    """Return R^-1 = (I + mu D^-1)^-1 = D (D + mu I)^-1 for a symmetric positive definite D.

    Gu, Li & Han, *Correlated Multi-Label Feature Selection* (CIKM 2011): the label coupling of
    the ranking dual (7).  Computed on D's eigenbasis (eigenvalues d_j -> d_j / (d_j + mu)), so no
    inverse of D is formed; the result is symmetrised exactly (the engine requires a symmetric R^-1).

    Parameters
    ----------
    D : array-like of shape (L, L)
        The label covariance, symmetric positive definite.
    mu : float
        The coupling's weight (>= 0; 0 gives the identity).

    Returns
    -------
    ndarray of shape (L, L)
        R^-1, symmetric.
    """
    D = _check_square(D, "D")
    check_scalar(mu, "mu", low=0.0)
    eigenvalues, vectors = np.linalg.eigh(D)
    if eigenvalues.min() <= 0.0:
        raise ValueError(f"D must be positive definite, its smallest eigenvalue is {eigenvalues.min():.3g}")
    R_inv = (vectors * (eigenvalues / (eigenvalues + mu))) @ vectors.T
    return (R_inv + R_inv.T) / 2.0


def ranking_cd(
    X, Y, C: float = 1.0, R_inv=None, feature_weights=None, *, fit_intercept: bool = False, tol: float = 0.1,
    max_iter: int = 1000, shrinking: bool = True, random_state=None, alpha0=None, record_dual: bool = False,
    warn: bool = True,
) -> Fit:
    """Solve the ranking dual (7) for fixed R^-1 and feature weights by Algorithm 1.

    Parameters
    ----------
    X : array or sparse matrix (n, d)
        Rows x_i; CSR/CSC stay sparse (CSC is converted to CSR, never densified).
    Y : array or sparse matrix (n, c) of {0, 1}
        Relevant labels y_i; c >= 2.
    C : float > 0
        Loss weight of eq. 1.
    R_inv : array (c, c), optional
        R^-1, symmetric positive definite (see :func:`coupling_inverse`); identity by
        default (mu = 0: the Elisseeff-Weston ranking SVM).
    feature_weights : array (d,), optional
        s >= 0, not all zero; ones by default (p = 1).
    fit_intercept : bool
        Append the constant feature 1 (the bias of eq. 1).
    tol : float > 0, default 0.1
        LIBLINEAR's eps: stop when every projected gradient (eq. 25) of a full pass lies
        in [-tol, tol].
    max_iter : int >= 1
        Most epochs; reaching it issues a ConvergenceWarning.
    shrinking : bool
        Drop coordinates stuck at a bound (restored before the final check).
    random_state : None, int or numpy Generator
        Seeds this call's permutation stream.
    alpha0 : array (n_pairs,), optional
        Warm start, in the order of :func:`ranking_pairs`, inside the box.
    record_dual : bool
        Record the dual objective (7), -g(alpha), after every epoch in
        ``certificate.statistics["dual_trace"]`` (non-decreasing).
    warn : bool, default True
        Issue a ConvergenceWarning when ``max_iter`` is reached (a caller that reports the
        outcome itself passes False).

    Returns
    -------
    Fit
        ``solution.coef`` W (d, c), the coefficients on the raw features: the label scores
        are ``X @ W + intercept`` (``W = diag(sqrt(s)) W_z`` with W_z the weights on the
        rows z_i); ``solution.intercept`` (c,) the biases (zeros without
        ``fit_intercept``); ``solution.dual`` alpha (n_pairs,), alpha_ikl of each pair;
        ``solution.model_state``: ``"pairs"``, the tuple ``(pair_row, pair_k, pair_l)`` of intp
        arrays from :func:`ranking_pairs` (row i, relevant label k, irrelevant label l),
        ``"beta"`` (n, c), beta_ik of eq. 8 (``X^T beta`` gives the per-feature sums eq.
        32's scores need), and ``"weight_gram"`` (c, c), ``W_z^T W_z`` (bias included), the
        matrix C = W^T W of Theorem 3.4 (the D update).  ``certificate``: primal (6), dual
        (7) and gap, all evaluated from alpha; ``kkt_violation`` the largest |projected
        gradient| (eq. 25); ``statistics`` holds the engine's counts (``n_updates``,
        ``n_visits``, ``n_shrunk``, ``n_resets``, ``min_active``), ``n_pairs``,
        ``rows_without_pairs`` and, with ``record_dual``, ``dual_trace``: the dual (7),
        -g(alpha), after every epoch (it never decreases).
    """
    start = time.perf_counter()
    X = check_X(X)
    Y = check_Y(Y, n_samples=X.shape[0])
    R_inv, weights, seed = _check_settings(Y.shape[1], X.shape[1], C, R_inv, feature_weights, tol, max_iter,
                                           random_state, fit_intercept=fit_intercept, shrinking=shrinking,
                                           record_dual=record_dual, warn=warn)
    pair_row, pair_k, pair_l = ranking_pairs(Y)
    pairs_of_row = Y.sum(axis=1, dtype=np.int64) * (Y.shape[1] - Y.sum(axis=1, dtype=np.int64))
    # Rows without pairs get the finite bound C; no variable ever reads it.
    box = C / np.maximum(pairs_of_row, 1).astype(np.float64)
    alpha = _check_start(alpha0, box[pair_row])
    support = np.flatnonzero(weights > 0.0)
    Z = _reweighted(X, support, np.sqrt(weights[support]))
    rows = as_rows(Z, 1.0 if fit_intercept else 0.0)

    buffers = np.zeros((2, Y.shape[1], rows.dimension))
    problem = RankingDual(rows, pair_row, pair_k, pair_l, box, R_inv, alpha, buffers[0], buffers[1])
    run = solve_dual(problem, tol=tol, max_iter=max_iter, shrinking=bool(shrinking), seed=seed, record_dual=record_dual)
    if warn and not run["converged"]:
        warn_not_converged(
            "ranking_cd", f"{run['n_epochs']} epochs, projected-gradient spread {run['spread']:.3g} > tol {tol:g}"
        )

    beta = _beta(pair_row, pair_k, pair_l, alpha, Y.shape)
    U, W_z = _dual_vectors(Z, rows.bias, beta, R_inv)
    statistics = {key: run[key] for key in ENGINE_COUNTS + ("min_active", "spread")}
    if record_dual:
        statistics["dual_trace"] = np.negative(run["dual_trace"])
    statistics |= {"n_pairs": int(pair_row.size), "rows_without_pairs": int(np.sum(pairs_of_row == 0))}
    certificate = Certificate(
        **_objectives(Z, rows.bias, U, W_z, pair_row, pair_k, pair_l, alpha, box[pair_row]), n_iter=run["n_epochs"],
        time=time.perf_counter() - start, converged=run["converged"], solver="ranking_cd", statistics=statistics,
    )
    W = np.zeros((X.shape[1], Y.shape[1]))
    W[support] = np.sqrt(weights[support])[:, None] * W_z[: support.size]
    solution = Solution(
        coef=W,
        intercept=W_z[-1].copy() if fit_intercept else np.zeros(Y.shape[1]),
        dual=alpha,
        model_state={"pairs": (pair_row, pair_k, pair_l), "beta": beta, "weight_gram": W_z.T @ W_z},
    )
    return Fit(solution, certificate)


# -- the linear algebra of the certificate ------------------------------------------------


def _beta(pair_row, pair_k, pair_l, alpha, shape) -> np.ndarray:
    """beta_ik of eq. 8: +alpha on the relevant label of each pair, -alpha on the irrelevant one."""
    n, n_labels = shape
    flat = np.bincount(pair_row * n_labels + pair_k, alpha, n * n_labels)
    flat -= np.bincount(pair_row * n_labels + pair_l, alpha, n * n_labels)
    return flat.reshape(shape)


def _dual_vectors(Z, bias: float, beta, R_inv) -> tuple[np.ndarray, np.ndarray]:
    """U = Z_a^T beta (eq. 10) and W_z = U R^-1, Z_a the rows with the constant feature when bias > 0."""
    U = adjoint(Z, bias, beta)
    return U, U @ R_inv


def _objectives(Z, bias, U, W_z, pair_row, pair_k, pair_l, alpha, upper) -> dict:
    """Primal (6), dual (7), gap and KKT violation at alpha, in O(nnz c + n_pairs + d c^2).

    With G_p = (w_k - w_l)^T z_i - 1 (eq. 23) the gap splits over the pairs into
    ``alpha_p G_p + upper_p max(0, -G_p) >= 0``, summed without cancellation.
    """
    T = product(Z, bias, W_z)
    G = T[pair_row, pair_k] - T[pair_row, pair_l] - 1.0
    half_norm = 0.5 * float(np.sum(U * W_z))
    hinge = np.maximum(0.0, -G)
    projected = np.where(alpha <= 0.0, np.minimum(G, 0.0), np.where(alpha >= upper, np.maximum(G, 0.0), G))
    return {
        "primal": half_norm + float(upper @ hinge),
        "dual": float(alpha.sum()) - half_norm,
        "gap": float(np.sum(alpha * G + upper * hinge)),
        "kkt_violation": float(np.abs(projected).max(initial=0.0)),
    }


# -- inputs ------------------------------------------------------------------------------


def _reweighted(X, support, scale):
    """The rows z_i = sqrt(s) o x_i on the support of s (X itself when s = 1)."""
    if support.size == X.shape[1] and np.all(scale == 1.0):
        return X
    if sp.issparse(X):
        return sp.csr_matrix(X)[:, support] @ sp.diags(scale)
    return X[:, support] * scale


def _check_settings(n_labels, n_features, C, R_inv, feature_weights, tol, max_iter, random_state, **flags):
    """The checked R^-1 (identity by default), feature weights (ones by default) and the engine's seed."""
    if n_labels < 2:
        raise ValueError(f"Y has {n_labels} label column: ranking needs at least 2 labels")
    check_scalar(C, "C", low=0.0, low_inclusive=False)
    check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    for name, flag in flags.items():
        check_flag(flag, name)
    R_inv = np.eye(n_labels) if R_inv is None else _check_coupling(R_inv, n_labels)
    weights = np.ones(n_features) if feature_weights is None else _check_feature_weights(feature_weights, n_features)
    return R_inv, weights, int(check_random_state(random_state).integers(2**63))


def _check_square(matrix, name: str) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {matrix.shape}")
    return check_symmetric(matrix, name)


def _check_coupling(R_inv, n_labels: int) -> np.ndarray:
    R_inv = _check_square(R_inv, "R_inv")
    if R_inv.shape[0] != n_labels:
        raise ValueError(f"R_inv has shape {R_inv.shape} but Y has {n_labels} labels")
    try:
        np.linalg.cholesky(R_inv)
    except np.linalg.LinAlgError:
        raise ValueError("R_inv must be positive definite") from None
    return R_inv


def _check_feature_weights(weights, n_features: int) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n_features,):
        raise ValueError(f"feature_weights must have shape ({n_features},), got {weights.shape}")
    if not np.all(np.isfinite(weights)):
        raise ValueError("feature_weights contains NaN or infinity")
    if weights.min() < 0.0:
        raise ValueError(f"feature_weights must be >= 0, got {weights.min()!r}")
    if not weights.any():
        raise ValueError("feature_weights are all zero: no feature is left")
    return weights


def _check_start(alpha0, upper) -> np.ndarray:
    """A fresh float64 copy of the warm start (zeros by default), checked against its box."""
    if alpha0 is None:
        return np.zeros(upper.size)
    alpha = np.array(alpha0, dtype=np.float64)
    if alpha.shape != upper.shape:
        raise ValueError(f"alpha0 must have shape {upper.shape} (one entry per pair), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha0 contains NaN or infinity")
    if np.any(alpha < 0.0) or np.any(alpha > upper):
        raise ValueError("alpha0 must lie in the box [0, C / (|y_i| |ybar_i|)]")
    return alpha
