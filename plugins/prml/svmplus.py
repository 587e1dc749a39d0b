"""SVM+ with privileged features by dual coordinate descent (You et al., Algorithm 1).

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning* (PrML).  Each symbol once:

* x_j (j = 1..n): the rows of X (d features); y_ji in {-1, +1}: the sign of label i
  (i = 1..L) for example j (the paper's Y_ij, transposed to this project's (n, L) layout).
* x~_j: the rows of the privileged matrix X_priv (d~ features), seen by label i through
  its 0/1 mask m_i as x~_ij = m_i o x~_j.  The paper's privileged label feature (eq. 3),
  y~_ij = y_j with its i-th entry set to 0, is x~_j = y_j and m_i = 1 - e_i
  (:func:`privileged_label_features`).
* a_i: a fixed embedding of label i, column i of A (k x L).  A = I (the default) gives
  L independent SVM+ problems, one per label (eq. 6 with the rows D x_j: pass X D^T as
  X; PrBR when D = I); A = the paper's W gives the dictionary problem (eq. 10).
* M (k x d): the learned matrix, the weights w_i as rows when A = I, the dictionary D
  otherwise; the margin of (j, i) is ``a_i^T M x_j`` (``<D^T w_i, x_j>`` in the paper).
* w~_i (d~): the correcting function of label i; the slack of (j, i) is
  ``xi_ji = w~_i^T x~_ij`` (eq. 4).
* C, gamma > 0: the paper's C and gamma after its rescaling (for eq. 6,
  ``gamma = gamma_2 / gamma_1`` and ``C = C / gamma_1``; for eq. 10, ``gamma = gamma_2``).

The primal (eqs. 6 and 10; Appendix C, eq. 14)::

    min_{M, w~}  1/2 ||M||_F^2 + gamma/2 sum_i ||w~_i||^2 + C sum_ji w~_i^T x~_ij
    s.t.         y_ji a_i^T M x_j >= 1 - w~_i^T x~_ij,   w~_i^T x~_ij >= 0,

and its dual over eta = [alpha; beta] >= 0 (eqs. 7 and 11, in minimisation form)::

    g(alpha, beta) = 1/2 ||M||_F^2 + gamma/2 sum_i ||w~_i||^2 - sum_ji alpha_ji,
    M = sum_ji alpha_ji y_ji a_i x_j^T,   w~_i = 1/gamma sum_j (alpha_ji + beta_ji - C) x~_ij   (eqs. 8-9, 12-13).

Biases are absorbed as in the paper (x <- [x; 1]): ``fit_intercept`` for the decision
function, ``privileged_intercept`` (on by default) for the correcting functions
(x~_ij <- [x~_ij; 1]).  The latter matters: without a constant privileged feature the
primal can be infeasible -- two examples with opposite privileged features force both
slacks to 0, and eq. 3's label features produce such pairs whenever two label vectors
are complementary outside label i -- and then the dual is unbounded below and the solver
can only stop at max_iter.  With it, ``w~_i = t e_const`` for a large t is feasible.

Certificate.  The primal point (M, w~) built from eta satisfies the constraints exactly
when every coordinate's gradient is >= 0 (``G(alpha_ji)`` is the margin constraint's
residual, ``G(beta_ji)`` the slack itself), and then ``primal - dual = sum eta G >= 0``.  At
an approximate solution the point may violate a constraint by up to the KKT violation
(``statistics["primal_infeasibility"]``).  With ``privileged_intercept`` (the default) both
constraints of (j, i) are met by a larger slack, so each label's correcting function is
raised through its bias by its largest violation, which makes the point feasible; then, M
fixed, each label's correcting function is replaced by the best one for M (a QP in the d~ + 1
values of w~_i, over the distinct privileged rows: ``statistics["best_correcting_labels"]``
counts the labels replaced), which pays the violations only where they occur.  The returned
point is feasible, its objective is the certificate's ``primal`` and ``gap = primal - dual >= 0``
is a true duality gap (weak duality).  On an enron D-step after 400 epochs the bias repair
alone gave a primal of 70 816, the best correcting functions 18 428 (dual 5 131).  Without
the constant feature no such repair exists (the slacks are the function w~ and may be forced
to 0): the ``primal`` is then taken at the recovered point and the ``gap`` is the
complementarity residual ``sum eta G``, which tends to 0 with the KKT violation but is no
bound.  ``statistics["complementarity"]`` holds that residual in both cases.

Without privileged features, :func:`embedded_hinge_cd` solves the same margins with the hinge's
slacks (the low-rank problem 2, LEML; its dual has alpha in [0, C] and no beta).

Limits that switch the privileged part off (tested): with x~_j = e_j (one privileged
feature per example) the slack is free, and the problem is the SVM with the loss
``C h + gamma/2 h^2`` of the hinge h; gamma -> 0 then gives the plain hinge SVM (box
[0, C]).  With any x~, gamma -> infinity forces w~ = 0: the hard-margin SVM.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from scipy.linalg import cho_solve

from multilabel_core.base import Fit, Solution
from multilabel_core.certificate import Certificate
from multilabel_core.solvers.kit import (
    as_rows,
    augmented_adjoint as adjoint,
    augmented_product as product,
    check_signs,
    solve_dual,
    warn_not_converged,
)
from multilabel_core.validation import (
    MAX_ITER_LIMIT,
    check_flag,
    check_random_state,
    check_scalar,
    check_X,
)

from ._cd_svmplus import EmbeddedHingeDual, SVMPlusDual
from .interior_point import inequality_qp, mehrotra, reduced_system, robust_cholesky, solve_reduced, weighted_gram

__all__ = ["embedded_hinge_cd", "embedded_hinge_ipm", "embedded_solution", "privileged_label_features", "svmplus_cd",
           "svmplus_ipm"]


def privileged_label_features(Y) -> tuple[np.ndarray, np.ndarray]:
    """Return the privileged label features of eq. 3 as ``(X_priv, privileged_mask)``.

    You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, eq. 3: each label sees the other
    labels' values of the example as privileged information.

    Parameters
    ----------
    Y : array-like of shape (n, L)
        The signs -1/+1.

    Returns
    -------
    X_priv : ndarray of shape (n, L)
        ``Y`` itself (x~_j = y_j).
    privileged_mask : ndarray of bool, shape (L, L)
        ``1 - I``: label i's own value is removed from what label i sees.
    """
    Y = check_signs(Y, np.shape(Y)[0] if np.ndim(Y) else 0)
    return Y, ~np.eye(Y.shape[1], dtype=bool)


def svmplus_cd(
    X, X_priv, Y, C: float = 1.0, gamma: float = 1.0, *, embedding=None, privileged_mask=None,
    fit_intercept: bool = False, privileged_intercept: bool = True, tol: float = 0.1, max_iter: int = 1000,
    shrinking: bool = True, random_state=None, alpha0=None, beta0=None, record_dual: bool = False, warn: bool = True,
) -> Fit:
    """Solve the SVM+ dual (7)/(11) by Algorithm 1 (see the module docstring for the symbols).

    Parameters
    ----------
    X : array or sparse matrix (n, d)
        Rows x_j; CSR/CSC stay sparse.
    X_priv : array or sparse matrix (n, d~)
        Privileged rows x~_j.
    Y : array (n, L) or (n,)
        Signs y_ji in {-1, +1}; a vector is one label.
    C, gamma : float > 0
    embedding : array (k, L), optional
        A; None for the identity (L independent problems).
    privileged_mask : bool array (L, d~), optional
        m_i as rows; all ones by default.
    fit_intercept : bool, default False
        Append the constant feature 1 to x_j (the bias of the decision function).
    privileged_intercept : bool, default True
        Append the constant feature 1 to every x~_ij (the correcting functions' bias,
        never masked).  It keeps the primal feasible (see the module docstring).
    tol : float > 0, default 0.1
        Stop when every projected gradient of a full pass lies in [-tol, tol].
    max_iter : int >= 1
        Most epochs; reaching it issues a ConvergenceWarning.
    shrinking : bool
        Drop coordinates stuck at 0 (restored before the final check).
    random_state : None, int or numpy Generator
        Seeds this call's permutation stream.
    alpha0, beta0 : array (n, L), optional
        Warm start (>= 0).
    record_dual : bool
        Record -g after every epoch in ``certificate.statistics["dual_trace"]``.
    warn : bool, default True
        Issue a ConvergenceWarning when ``max_iter`` is reached (a caller that reports the
        outcome itself, as :func:`tighten_to_relative_gap`'s callers do, passes False).

    Returns
    -------
    Fit
        ``solution.coef`` (d, L): scores are ``X @ coef + intercept``, the weights w_i as
        columns (A = I) or Z = D^T A (eq. 2); ``solution.intercept`` (L,) the biases (zeros
        without ``fit_intercept``); ``solution.dual`` alpha (n, L); ``solution.model_state``:
        ``"beta"`` (n, L) the other dual variables, ``"D"`` (k, d) the dictionary (eq. 12)
        when an embedding A is given (None otherwise), ``"W_tilde"`` (d~, L) the correcting
        functions w~_i as columns (eqs. 9 and 13) and ``"intercept_tilde"`` (L,) their
        biases (zeros without ``privileged_intercept``; with it, raised to make the point
        feasible).  ``certificate``: primal (14), dual (max form, -g), gap and KKT violation
        evaluated from alpha and beta (see the module docstring); ``statistics`` holds the
        engine's counts, ``primal_infeasibility`` (of the recovered point) and ``complementarity``,
        plus ``dual_trace`` (-g after every epoch, non-decreasing) with ``record_dual``.
    """
    start = time.perf_counter()
    X, X_priv, Y = _check_data(X, X_priv, Y)
    A, mask, seed = _check_settings(
        Y.shape[1], X_priv.shape[1], C, gamma, tol, max_iter, embedding, privileged_mask, random_state,
        fit_intercept=fit_intercept, privileged_intercept=privileged_intercept, shrinking=shrinking,
        record_dual=record_dual, warn=warn,
    )
    # The engine's layout: example by example, alpha_ji then beta_ji.
    eta = np.stack([_check_start(alpha0, "alpha0", Y.shape), _check_start(beta0, "beta0", Y.shape)], axis=-1).ravel()

    rows, privileged = as_rows(X, 1.0 if fit_intercept else 0.0), as_rows(X_priv, 1.0 if privileged_intercept else 0.0)
    # The engine's buffers (M transposed, (dimension, k)); the solution is rebuilt from eta below.
    M_transposed = np.zeros((rows.dimension, Y.shape[1] if A is None else A.shape[0]))
    W_tilde = np.zeros((Y.shape[1], privileged.dimension))
    problem = SVMPlusDual(rows, privileged, Y, A, *_exclusions(mask), float(C), float(gamma), eta, M_transposed,
                          W_tilde)
    run = solve_dual(problem, tol=tol, max_iter=max_iter, shrinking=bool(shrinking), seed=seed, record_dual=record_dual)
    if warn and not run["converged"]:
        warn_not_converged(
            "svmplus_cd", f"{run['n_epochs']} epochs, projected-gradient spread {run['spread']:.3g} > tol {tol:g}"
        )

    pairs = eta.reshape(*Y.shape, 2)
    alpha, beta = np.ascontiguousarray(pairs[..., 0]), np.ascontiguousarray(pairs[..., 1])
    primal = _primal_point(X, X_priv, rows.bias, privileged.bias, Y, A, mask, alpha, beta, C, gamma)
    statistics = {key: run[key] for key in ("n_updates", "n_shrunk", "n_resets", "min_active", "spread")}
    statistics["primal_infeasibility"] = primal.pop("primal_infeasibility")
    statistics["complementarity"] = primal.pop("complementarity")
    statistics["best_correcting_labels"] = primal.pop("best_correcting_labels")
    if record_dual:
        statistics["dual_trace"] = np.negative(run["dual_trace"])
    certificate = Certificate(
        **primal.pop("objectives"), n_iter=run["n_epochs"], time=time.perf_counter() - start,
        converged=run["converged"], solver="svmplus_cd", statistics=statistics,
    )
    solution = Solution(
        coef=primal["W"],
        intercept=primal["intercept"],
        dual=alpha,
        model_state={"beta": beta, **{key: primal[key] for key in ("D", "D_intercept", "W_tilde", "intercept_tilde")}},
    )
    return Fit(solution, certificate)


def embedded_hinge_cd(
    X, Y, C: float = 1.0, *, embedding=None, fit_intercept: bool = False, tol: float = 0.1, max_iter: int = 1000,
    shrinking: bool = True, random_state=None, alpha0=None, record_dual: bool = False, warn: bool = True,
) -> Fit:
    """Solve the hinge problem with margins ``a_i^T M x_j`` by dual coordinate descent.

    You et al.'s low-rank problem (2) (*Privileged Multi-label Learning*; LEML's) for a fixed W
    (A = W: the dictionary step, M = D) or fixed D (A = I on the rows D x_j: L independent hinge
    SVMs), the hinge's slacks in place of SVM+'s correcting functions::

        min_M  1/2 ||M||_F^2 + C sum_ji max(0, 1 - y_ji a_i^T M x_j),

    whose dual is ``min 1/2 ||M||_F^2 - sum alpha`` over ``0 <= alpha_ji <= C`` with
    ``M = sum_ji alpha_ji y_ji a_i x_j^T``.  The certificate's gap is a true duality gap (the
    hinge's slacks make every point feasible).

    Parameters
    ----------
    X, Y, C, embedding, fit_intercept, tol, max_iter, shrinking, random_state, record_dual, warn
        As :func:`svmplus_cd`'s.
    alpha0 : array-like of shape (n, L), optional
        A warm start in [0, C].

    Returns
    -------
    Fit
        As :func:`svmplus_cd`'s: ``solution.coef``, ``intercept``, ``dual`` alpha (n, L), and in
        ``solution.model_state`` ``"D"`` and ``"D_intercept"`` with an embedding.
    """
    start = time.perf_counter()
    X = check_X(X)
    Y = np.ascontiguousarray(check_signs(np.reshape(Y, (-1, 1)) if np.ndim(Y) == 1 else Y, X.shape[0]))
    A, _, seed = _check_settings(
        Y.shape[1], 1, C, 1.0, tol, max_iter, embedding, None, random_state,
        fit_intercept=fit_intercept, shrinking=shrinking, record_dual=record_dual, warn=warn,
    )
    alpha = _check_start(alpha0, "alpha0", Y.shape)
    if np.any(alpha > C):
        raise ValueError(f"alpha0 must lie in the box [0, C = {C}]")
    eta = alpha.ravel().copy()
    rows = as_rows(X, 1.0 if fit_intercept else 0.0)
    # The engine keeps M transposed, (dimension, k): an example's rows of it are then contiguous.
    M_transposed = np.zeros((rows.dimension, Y.shape[1] if A is None else A.shape[0]))
    run = solve_dual(EmbeddedHingeDual(rows, Y, A, float(C), eta, M_transposed), tol=tol, max_iter=max_iter,
                     shrinking=bool(shrinking), seed=seed, record_dual=record_dual)
    M = M_transposed.T
    if warn and not run["converged"]:
        warn_not_converged(
            "embedded_hinge_cd", f"{run['n_epochs']} epochs, projected-gradient spread {run['spread']:.3g} > tol {tol:g}"
        )
    alpha = eta.reshape(Y.shape)
    bias = rows.bias
    coef = M.T if A is None else M.T @ A
    margins = Y * product(X, bias, coef)
    half_norm = 0.5 * float(np.sum(M * M))
    primal = half_norm + C * float(np.maximum(0.0, 1.0 - margins).sum())
    dual = float(alpha.sum()) - half_norm
    statistics = {key: run[key] for key in ("n_updates", "n_shrunk", "n_resets", "min_active", "spread")}
    if record_dual:
        statistics["dual_trace"] = np.negative(run["dual_trace"])
    certificate = Certificate(
        primal=primal, dual=dual, gap=primal - dual, kkt_violation=run["kkt_violation"], n_iter=run["n_epochs"],
        time=time.perf_counter() - start, converged=run["converged"], solver="embedded_hinge_cd",
        statistics=statistics,
    )
    d = X.shape[1]
    solution = Solution(
        coef=np.ascontiguousarray(coef[:d]),
        intercept=coef[d].copy() if bias > 0.0 else np.zeros(Y.shape[1]),
        dual=alpha,
        model_state={
            "D": None if A is None else np.ascontiguousarray(M[:, :d]),
            "D_intercept": None if A is None or bias == 0.0 else M[:, d].copy(),
        },
    )
    return Fit(solution, certificate)


def _check_data(X, X_priv, Y):
    """The checked rows, privileged rows (of as many examples) and signs (n, L) (a vector is one label)."""
    X = check_X(X)
    X_priv = check_X(X_priv, name="X_priv")
    if X_priv.shape[0] != X.shape[0]:
        raise ValueError(f"X_priv has {X_priv.shape[0]} rows but X has {X.shape[0]}")
    return X, X_priv, np.ascontiguousarray(check_signs(np.reshape(Y, (-1, 1)) if np.ndim(Y) == 1 else Y, X.shape[0]))


def _exclusions(mask) -> tuple[np.ndarray, np.ndarray]:
    """The columns each m_i removes, CSR-like by label: (excluded_indptr, excluded)."""
    labels, columns = np.nonzero(~mask)
    counts = np.bincount(labels, minlength=mask.shape[0])
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.intp), columns.astype(np.intp)


def _primal_point(X, X_priv, bias, privileged_bias, Y, A, mask, alpha, beta, C, gamma, best_correcting=True) -> dict:
    """M, w~ (eqs. 8-9, 12-13), the objectives and the KKT violation at (alpha, beta).

    With ``privileged_bias`` the point is repaired to feasibility, and with ``best_correcting``
    each label's correcting function is then the best one for M (:func:`_best_correcting_functions`;
    a caller that needs only the dual value skips that).

    O(nnz(X) k + nnz(X_priv) L + d k L): the gradients are ``y o T + Xi - 1`` and ``Xi``,
    with the scores T and the slacks Xi = X~_a W~ of every (j, i).
    """
    P = adjoint(X, bias, alpha * Y)  # sum_j alpha_ji y_ji x_j, one column per label
    M = P.T if A is None else A @ P.T
    coef = M.T if A is None else M.T @ A  # scores X_a @ coef
    W_tilde = adjoint(X_priv, privileged_bias, alpha + beta - C) / gamma
    W_tilde[: X_priv.shape[1]] *= mask.T
    Xi = product(X_priv, privileged_bias, W_tilde)
    G_alpha, G_beta = Y * product(X, bias, coef) + Xi - 1.0, Xi
    half_norms = 0.5 * float(np.sum(M * M)) + 0.5 * gamma * float(np.sum(W_tilde * W_tilde))
    projected = np.concatenate([np.where(alpha > 0.0, G_alpha, np.minimum(G_alpha, 0.0)).ravel(),
                                np.where(beta > 0.0, G_beta, np.minimum(G_beta, 0.0)).ravel()])
    dual = float(alpha.sum()) - half_norms
    complementarity = float(np.sum(alpha * G_alpha) + np.sum(beta * G_beta))
    infeasibility = float(max(0.0, -G_alpha.min(), -G_beta.min()))
    d, d_tilde = X.shape[1], X_priv.shape[1]
    best_labels = 0
    if privileged_bias > 0.0:
        # Both constraints of (j, i) ask for a larger slack, so raising label i's correcting
        # function by its largest violation (through its bias) makes the point feasible; the
        # certificate then bounds the primal at a feasible point, and primal - dual is a true gap.
        W_tilde[d_tilde] += np.maximum(0.0, np.maximum(-G_alpha.min(axis=0), -G_beta.min(axis=0))) / privileged_bias
        if best_correcting:
            hinges = np.maximum(0.0, Xi - G_alpha)  # 1 - y a_i^T M x_j, at least 0: the slack each pair needs
            best_labels = _best_correcting_functions(X_priv, privileged_bias, mask, hinges, W_tilde, C, gamma)
        Xi = product(X_priv, privileged_bias, W_tilde)
        primal = 0.5 * float(np.sum(M * M)) + 0.5 * gamma * float(np.sum(W_tilde * W_tilde)) + C * float(Xi.sum())
        gap = primal - dual
    else:
        primal, gap = half_norms + C * float(Xi.sum()), complementarity
    objectives = {
        "primal": primal,
        "dual": dual,
        "gap": gap,
        "kkt_violation": float(np.abs(projected).max()),
    }
    return {
        "W": np.ascontiguousarray(coef[:d]),
        "intercept": coef[d].copy() if bias > 0.0 else np.zeros(Y.shape[1]),
        "D": None if A is None else np.ascontiguousarray(M[:, :d]),
        "D_intercept": None if A is None or bias == 0.0 else M[:, d].copy(),
        "W_tilde": np.ascontiguousarray(W_tilde[:d_tilde]),
        "intercept_tilde": W_tilde[d_tilde].copy() if privileged_bias > 0.0 else np.zeros(Y.shape[1]),
        "objectives": objectives,
        "primal_infeasibility": infeasibility,
        "complementarity": complementarity,
        "best_correcting_labels": best_labels,
    }


#: Largest ``n q^2`` (rows times the square of a label's correcting-function length) for which
#: :func:`_best_correcting_functions` solves a label's QP: one of its Newton steps.  Enron's
#: D-step (851 rows, 53 privileged features) is 2.4e6; bibtex's (3700 rows, 160) is 9.5e7.
BEST_CORRECTING_MAX_FLOPS = 2.5e7


def _best_correcting_functions(X_priv, privileged_bias, mask, hinges, W_tilde, C, gamma) -> int:
    """Replace each label's repaired correcting function by the best one for the fixed margins, in place.

    For a fixed M the primal (14) separates by label into ``min gamma/2 ||v||^2 + C sum_j <v,
    x~_ij>`` subject to ``<v, x~_ij> >= h_ji``, h the hinge ``max(0, 1 - y_ji a_i^T M x_j)`` (both
    constraints of a pair in one).  Raising the bias by the largest violation (the caller's
    repair) pays that violation on every example; this QP pays it where it is needed.  Rows with
    the same privileged vector share a slack, so each distinct row is kept once with its largest
    h (PrML's label features: 139 to 162 distinct rows of 1500 on yeast).  The solution is made
    exactly feasible through its bias, and replaces the column only when its objective is lower:
    the certificate's primal can only fall.  Labels whose Newton step would cost more than
    :data:`BEST_CORRECTING_MAX_FLOPS` keep the bias repair.  Returns the number of labels replaced.
    """
    n, d_tilde = X_priv.shape
    replaced = 0
    for i in range(hinges.shape[1]):
        seen = np.flatnonzero(mask[i])
        if n * (seen.size + 1) ** 2 > BEST_CORRECTING_MAX_FLOPS:
            continue
        rows = X_priv[:, seen]
        rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
        rows = np.column_stack([rows, np.full(n, privileged_bias)])
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        needed = np.full(distinct.shape[0], -np.inf)
        np.maximum.at(needed, inverse.reshape(-1), hinges[:, i])
        linear = C * rows.sum(axis=0)
        v, _ = inequality_qp(distinct, linear, needed, gamma)
        v[-1] += max(0.0, float(np.max(needed - distinct @ v))) / privileged_bias
        current = np.append(W_tilde[seen, i], W_tilde[d_tilde, i])
        best, repaired = (0.5 * gamma * float(w @ w) + float(linear @ w) for w in (v, current))
        if best < repaired:
            W_tilde[:, i] = 0.0
            W_tilde[seen, i], W_tilde[d_tilde, i] = v[:-1], v[-1]
            replaced += 1
    return replaced


def _check_settings(n_labels, n_privileged, C, gamma, tol, max_iter, embedding, privileged_mask, random_state,
                    **flags):
    """The checked embedding A (None for I), the masks m_i (all ones by default) and the engine's seed."""
    check_scalar(C, "C", low=0.0, low_inclusive=False)
    check_scalar(gamma, "gamma", low=0.0, low_inclusive=False)
    check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
    for name, flag in flags.items():
        check_flag(flag, name)
    A = None if embedding is None else _check_embedding(embedding, n_labels)
    shape = (n_labels, n_privileged)
    mask = np.ones(shape, dtype=bool) if privileged_mask is None else _check_mask(privileged_mask, shape)
    return A, mask, int(check_random_state(random_state).integers(2**63))


def _check_embedding(A, n_labels: int) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[1] != n_labels or A.shape[0] == 0:
        raise ValueError(f"embedding must have shape (k >= 1, {n_labels}), got {A.shape}")
    if not np.issubdtype(A.dtype, np.number) or np.issubdtype(A.dtype, np.complexfloating):
        raise ValueError(f"embedding must be a real matrix, got dtype {A.dtype}")
    A = np.ascontiguousarray(A, dtype=np.float64)
    if not np.all(np.isfinite(A)):
        raise ValueError("embedding contains NaN or infinity")
    return A


def _check_mask(mask, shape) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.shape != shape:
        raise ValueError(f"privileged_mask must have shape {shape} (labels x privileged features), got {mask.shape}")
    if not (mask.dtype == bool or np.issubdtype(mask.dtype, np.number)) or not np.all((mask == 0) | (mask == 1)):
        raise ValueError("privileged_mask must hold 0/1 (or booleans) only")
    return mask.astype(bool)


def _check_start(start, name: str, shape) -> np.ndarray:
    """A fresh float64 (n, L) copy of a warm start (zeros by default)."""
    if start is None:
        return np.zeros(shape)
    start = np.array(start, dtype=np.float64)
    if start.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {start.shape}")
    if not np.all(np.isfinite(start)) or np.any(start < 0.0):
        raise ValueError(f"{name} must be finite and >= 0")
    return start



def svmplus_ipm(
    X, X_priv, Y, C: float = 1.0, gamma: float = 1.0, *, embedding=None, privileged_mask=None,
    fit_intercept: bool = False, tol: float = 1e-6, max_iter: int = 100, warn: bool = True,
    squared_slack: bool = False,
) -> Fit:
    """Solve the SVM+ primal (6)/(10) by a primal-dual interior-point method (symbols: module docstring).

    The dual (7)/(11) that :func:`svmplus_cd` descends has 2 n L variables, no upper bound and
    a Hessian of rank at most ``k dim(x) + L dim(x~)``: on You et al.'s problems its coordinate
    descent can spend thousands of epochs without closing the gap.  The primal has only the
    ``k dim(x) + L dim(x~)`` variables (M, w~) and 2 n L linear constraints, so Mehrotra's
    predictor-corrector (J. Nocedal and S. Wright, *Numerical Optimization*, 2nd ed.,
    Algorithm 16.4, for the convex QP ``min 1/2 z^T H z + c^T z`` s.t. ``G z >= h``) solves it
    in a few dozen Newton steps whose multipliers are the dual's (alpha, beta).

    Each step solves ``(H + G^T Theta G) dz = r`` with Theta = Lambda / S.  Its blocks follow the
    constraints' structure: the correcting function w~_i meets only label i's rows, so its
    block ``gamma I + X~_i^T diag(theta) X~_i`` is eliminated (a Schur complement), and the
    rest is ``I + sum_i (a_i a_i^T) kron R_i`` with ``R_i`` (dim(x) x dim(x)) built from label
    i's rows -- one dense system of ``k dim(x)`` unknowns (without an embedding, one of
    ``dim(x)`` per label: the labels separate).  A step costs
    ``O(L n (dim(x) + dim(x~))^2 + (k dim(x))^3)``: this is the solver for small
    ``k dim(x)`` (PrML's W-step; the D-step of a low-dimensional X), dual CD the one for
    large.

    Certificate.  The primal is objective (6)/(10) at the iterate (M, w~), each correcting
    function's bias raised by its label's largest constraint violation (as :func:`svmplus_cd`
    does), so at a feasible point; the dual is ``-g(alpha, beta)`` (eq. 7/11) at the
    multipliers (any alpha, beta >= 0 bound the optimum; those of the constraints the iterate
    leaves inactive, lambda < s, are also tried at 0 and the better bound is kept);
    ``gap = primal - dual >= 0`` is a true duality gap.  The iteration stops when
    ``gap <= tol * max(1, |primal|)``, or when round-off stops it from improving (the best
    iterate is returned, not converged if it misses ``tol``).  The correcting functions'
    bias is required (the constant privileged feature): without it the primal can be
    infeasible, which an interior-point method cannot certify (use :func:`svmplus_cd`
    with ``privileged_intercept=False``).

    Parameters
    ----------
    X, X_priv, Y, C, gamma, embedding, privileged_mask, fit_intercept
        As :func:`svmplus_cd`.  X may be sparse (only ``X_a^T diag(theta) X_a`` products,
        dense (dim(x) x dim(x)), are formed); X_priv is used dense, (n, dim(x~)).
    tol : float in (0, 1), default 1e-6
        Relative duality gap to stop at.
    max_iter : int >= 1, default 100
        Most Newton steps (a ConvergenceWarning beyond, with ``warn``).
    warn : bool, default True
    squared_slack : bool, default False
        Penalise the correcting functions' values squared, ``C sum_ji (w~_i^T x~_ij)^2`` in place of
        ``C sum_ji w~_i^T x~_ij``, the constraints unchanged: the slack of the L2-SVM (the squared
        hinge, Hsieh et al., *A dual coordinate descent method for large-scale linear SVM*, ICML 2008,
        eq. 1 with the squared slack) replaced by SVM+'s correcting function.  A free slack per example
        (x~_j = e_j) gives back the squared-hinge SVM.  The Newton step's w~_i block gains
        ``2 C X~_i^T X~_i``, and the dual bound is the Lagrangian's exact minimum over (M, w~) at
        alpha, beta >= 0: ``sum alpha - 1/2 ||M(alpha)||^2 - 1/2 sum_i r_i^T S_i^-1 r_i`` with
        ``r_i = X~_i^T (alpha_i + beta_i)`` and ``S_i = gamma I + 2 C X~_i^T X~_i`` (a (dim(x~) + 1)
        square system per label), so the gap is again a true one.

    Returns
    -------
    Fit
        As :func:`svmplus_cd`'s (``solution.dual`` alpha, ``model_state["beta"]``, ``"D"``,
        ``"W_tilde"``, ...); ``certificate.n_iter`` counts Newton steps and its ``statistics``
        hold ``primal_infeasibility`` (the largest violation the bias repair removed),
        ``complementarity`` (of the multipliers at the recovered point) and ``mu`` (the last
        complementarity measure ``s^T lambda / (2 n L)``).
    """
    start = time.perf_counter()
    X, X_priv, Y = _check_data(X, X_priv, Y)
    check_scalar(tol, "tol", low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)
    A, mask, _ = _check_settings(
        Y.shape[1], X_priv.shape[1], C, gamma, 1.0, max_iter, embedding, privileged_mask, None,
        fit_intercept=fit_intercept, warn=warn,
    )
    check_flag(squared_slack, "squared_slack")
    problem = _SVMPlusPrimal(X, 1.0 if fit_intercept else 0.0, X_priv, Y, mask, float(C), float(gamma),
                             squared=bool(squared_slack))
    M, _, alpha, beta, n_iter, mu, certificate = _by_interior_point(problem, A, tol, max_iter)
    V = certificate["V"]  # the correcting functions with their bias raised to feasibility
    statistics = {"primal_infeasibility": certificate["infeasibility"], "complementarity": certificate["complementarity"],
                  "mu": mu}
    fit_certificate = _ipm_certificate("svmplus_ipm", certificate["objectives"], n_iter, tol, warn, start, statistics)
    d, d_tilde = X.shape[1], X_priv.shape[1]
    solution = embedded_solution(M, A, d, fit_intercept, alpha, {
        "beta": beta, "W_tilde": np.ascontiguousarray(V[:, :d_tilde].T), "intercept_tilde": V[:, d_tilde].copy(),
    })
    return Fit(solution, fit_certificate)


def embedded_hinge_ipm(
    X, Y, C: float = 1.0, *, embedding=None, fit_intercept: bool = False, tol: float = 1e-6, max_iter: int = 100,
    warn: bool = True, squared_slack: bool = False,
) -> Fit:
    """Solve the hinge problem of :func:`embedded_hinge_cd` by the interior-point method of :func:`svmplus_ipm`.

    You et al.'s low-rank problem (2) for a fixed W or D::

        min_{M, xi}  1/2 ||M||_F^2 + C sum_ji xi_ji   s.t.  y_ji a_i^T M x_j + xi_ji >= 1,  xi_ji >= 0.

    The slacks' Newton blocks are diagonal and are eliminated in closed form, leaving the same
    dense system of ``k dim(x_a)`` unknowns (``dim(x_a)`` per label without an embedding).  The
    certificate: the primal at the iterate's M (the hinge's slacks make every M feasible), the
    dual ``sum alpha - 1/2 ||M(alpha)||^2`` at the multipliers clipped to the box [0, C] (those of
    constraints the iterate leaves inactive set to 0 when that bound is better): a true duality
    gap.

    Parameters
    ----------
    X, Y, C, embedding, fit_intercept
        As :func:`embedded_hinge_cd`'s.
    tol, max_iter, warn
        As :func:`svmplus_ipm`'s.
    squared_slack : bool, default False
        Solve the squared hinge instead, ``C sum_ji xi_ji^2`` (the L2-SVM, Hsieh et al., ICML
        2008, eq. 1): the slacks' Newton blocks gain ``2 C``, and the dual bound is
        ``sum alpha - 1/2 ||M(alpha)||^2 - sum alpha^2 / (4 C)`` at alpha >= 0 (no upper bound),
        again a true gap.

    Returns
    -------
    Fit
        As :func:`embedded_hinge_cd`'s; ``statistics["mu"]`` is the last complementarity measure.
    """
    start = time.perf_counter()
    X = check_X(X)
    Y = np.ascontiguousarray(check_signs(np.reshape(Y, (-1, 1)) if np.ndim(Y) == 1 else Y, X.shape[0]))
    check_scalar(tol, "tol", low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)
    A, _, _ = _check_settings(Y.shape[1], 1, C, 1.0, 1.0, max_iter, embedding, None, None,
                              fit_intercept=fit_intercept, warn=warn)
    check_flag(squared_slack, "squared_slack")
    problem = _HingePrimal(X, 1.0 if fit_intercept else 0.0, Y, float(C), squared=bool(squared_slack))
    M, _, alpha, _, n_iter, mu, certificate = _by_interior_point(problem, A, tol, max_iter)
    fit_certificate = _ipm_certificate("embedded_hinge_ipm", certificate["objectives"], n_iter, tol, warn, start,
                                       {"mu": mu})
    return Fit(embedded_solution(M, A, X.shape[1], fit_intercept, alpha), fit_certificate)


def _by_interior_point(problem, A, tol, max_iter):
    """:func:`~.interior_point.mehrotra` on ``problem``; without an embedding label by label (the labels
    separate: L problems with the embedding [1] each), certified together: each to ``tol / L``, so
    that the summed gaps meet ``tol`` even where the labels' objectives are below 1."""
    if A is None:
        n_labels = problem.Y.shape[1]
        parts = [mehrotra(problem.label(i), np.ones((1, 1)), tol / n_labels, max_iter) for i in range(n_labels)]
        M, V = np.vstack([part["M"] for part in parts]), problem.stack_v([part["V"] for part in parts])
        alpha = np.column_stack([part["alpha"] for part in parts])
        beta = np.column_stack([part["beta"] for part in parts])
        n_iter, mu = max(part["n_iter"] for part in parts), max(part["mu"] for part in parts)
        certificate = problem.certify(np.eye(n_labels), M, V, alpha, beta)
    else:
        part = mehrotra(problem, A, tol, max_iter)
        M, V, alpha, beta, n_iter, mu = (part[key] for key in ("M", "V", "alpha", "beta", "n_iter", "mu"))
        certificate = part["certificate"] or problem.certify(A, M, V, alpha, beta)
    return M, V, alpha, beta, n_iter, mu, certificate


def embedded_solution(M, A, d: int, fit_intercept: bool, dual, model_state: dict | None = None) -> Solution:
    """Return the Solution of a point M of the embedded problems (:func:`embedded_hinge_cd`, :func:`svmplus_ipm`).

    The scores' weights are ``M^T A`` (``M^T`` without an embedding), split into ``coef`` (d, L)
    and the intercept (the last row, zeros without an intercept).

    Parameters
    ----------
    M : ndarray of shape (k, d + fit_intercept) or (L, d + fit_intercept)
        The point: with the embedding A (k, L), or without one (A None).
    A : ndarray of shape (k, L) or None
        The embedding.
    d : int
        The number of features.
    fit_intercept : bool
        Whether M's last column is the constant feature's.
    dual : ndarray
        The multipliers, stored as ``solution.dual``.
    model_state : dict, optional
        Further family quantities, stored after the dictionary.

    Returns
    -------
    Solution
        ``coef``, ``intercept``, ``dual``; with an embedding ``model_state`` holds the dictionary
        ``D = M[:, :d]`` and ``D_intercept``, then the given ``model_state``.
    """
    coef = M.T if A is None else M.T @ A
    return Solution(
        coef=np.ascontiguousarray(coef[:d]), intercept=coef[d].copy() if fit_intercept else np.zeros(coef.shape[1]),
        dual=dual,
        model_state={"D": None if A is None else np.ascontiguousarray(M[:, :d]),
                     "D_intercept": None if A is None or not fit_intercept else M[:, d].copy(), **(model_state or {})},
    )


def _ipm_certificate(name, objectives, n_iter, tol, warn, start, statistics) -> Certificate:
    relative = objectives["gap"] / max(1.0, abs(objectives["primal"]))
    converged = relative <= tol
    if warn and not converged:
        warn_not_converged(name, f"{n_iter} Newton steps, relative duality gap {relative:.3g} > tol {tol:g}")
    return Certificate(**objectives, n_iter=n_iter, time=time.perf_counter() - start, converged=bool(converged),
                       solver=name, statistics=statistics)


class _SVMPlusPrimal:
    """SVM+ (6)/(10) for :func:`~.interior_point.mehrotra`: V holds the correcting functions w~_i as rows.

    x_a's rows, x~_a's (with the constant 1, never masked), the masks, C and gamma.
    """

    def __init__(self, X, bias, X_priv, Y, mask, C, gamma, squared=False):
        self.X, self.bias, self.Y, self.C, self.gamma = X, bias, Y, C, gamma
        self.X_priv, self.mask, self.squared = X_priv, mask, squared
        n = Y.shape[0]
        priv = np.asarray(X_priv.toarray() if hasattr(X_priv, "toarray") else X_priv, dtype=np.float64)
        self.priv = np.hstack([priv, np.ones((n, 1))])  # the correcting functions' bias, never masked
        self.masks = np.hstack([mask, np.ones((mask.shape[0], 1), dtype=bool)]).astype(np.float64)
        self.p = X.shape[1] + (bias > 0.0)
        self.scale = C

    def zeros_v(self):
        return np.zeros((self.Y.shape[1], self.priv.shape[1]))

    @staticmethod
    def stack_v(parts):
        return np.vstack(parts)

    def dual_residual_v(self, V, adjoint_v):
        if self.squared:
            # The gradient of C ||X~_i w~_i||^2 is 2 C X~_i^T (the slacks of label i).
            return (self.gamma * V + 2.0 * self.C * (self.priv.T @ self.slacks(V)).T) * self.masks - adjoint_v
        return (self.gamma * V + self.C * self.priv.sum(axis=0)[None, :]) * self.masks - adjoint_v

    def factorise(self, A, ta, tb) -> _CorrectingFactor:
        """V_i's blocks ``gamma I + X~_i^T diag(theta) X~_i`` (``theta + 2 C`` with squared slacks) by
        Cholesky, then the reduced M system."""
        n_labels, p, q = self.Y.shape[1], self.p, self.priv.shape[1]
        blocks, couplings, parts = [], [], np.empty((n_labels, p, p))
        curvature = 2.0 * self.C if self.squared else 0.0
        for i in range(n_labels):
            Pi = self.priv * self.masks[i]
            Vi = self.gamma * np.diag(self.masks[i]) + Pi.T @ ((ta[:, i] + tb[:, i] + curvature)[:, None] * Pi)
            Vi[np.diag_indices(q)] += 1.0 - self.masks[i]  # a masked w~ entry: an identity row, held at 0
            block = robust_cholesky(Vi)
            Ei = adjoint(self.X, self.bias, (ta[:, i] * self.Y[:, i])[:, None] * Pi)  # X_a^T diag(theta y) X~_i
            parts[i] = weighted_gram(self.X, self.bias, ta[:, i]) - Ei @ cho_solve(block, Ei.T)
            blocks.append(block)
            couplings.append(Ei)
        return _CorrectingFactor(reduced_system(A, parts), blocks, np.stack(couplings), A)

    def label(self, i: int) -> _SVMPlusPrimal:
        return _SVMPlusPrimal(self.X, self.bias, self.X_priv, self.Y[:, [i]], self.mask[[i]], self.C, self.gamma,
                              self.squared)

    def slacks(self, V):
        return self.priv @ (V * self.masks).T  # Xi (n, L)

    def constraints(self, A, M, V):
        """The linear parts of G z: (margins, slacks), each (n, L)."""
        xi = self.slacks(V)
        return self.Y * (product(self.X, self.bias, M.T) @ A) + xi, xi

    def adjoint(self, A, la, lb):
        """G^T lambda: the M and V blocks."""
        return A @ adjoint(self.X, self.bias, la * self.Y).T, (self.priv.T @ (la + lb)).T * self.masks

    def _dual(self, A, alpha, beta) -> dict:
        if self.squared:
            return self._squared_dual(A, alpha, beta)
        return _primal_point(self.X, self.X_priv, self.bias, 1.0, self.Y, A, self.mask, alpha, beta, self.C,
                             self.gamma, best_correcting=False)

    def _squared_dual(self, A, alpha, beta) -> dict:
        """The Lagrangian's minimum over (M, w~) at alpha, beta >= 0 with squared slacks (:func:`svmplus_ipm`).

        M(alpha) as for the linear slacks; each w~_i solves ``S_i w~_i = r_i``.  The KKT violation is
        the largest projected gradient of the dual at that minimiser, the complementarity ``sum eta G``.
        """
        P = adjoint(self.X, self.bias, alpha * self.Y)
        M = P.T if A is None else A @ P.T
        coef = M.T if A is None else M.T @ A
        q = self.priv.shape[1]
        V = np.zeros((self.Y.shape[1], q))
        correcting = 0.0
        for i in range(self.Y.shape[1]):
            Pi = self.priv * self.masks[i]
            S = self.gamma * np.diag(self.masks[i]) + 2.0 * self.C * (Pi.T @ Pi)
            S[np.diag_indices(q)] += 1.0 - self.masks[i]  # masked entries: identity rows, r = 0 there
            r = Pi.T @ (alpha[:, i] + beta[:, i])
            V[i] = cho_solve(robust_cholesky(S), r)
            correcting += 0.5 * float(r @ V[i])
        xi = self.slacks(V)
        G_alpha = self.Y * product(self.X, self.bias, coef) + xi - 1.0
        projected = np.concatenate([np.where(alpha > 0.0, G_alpha, np.minimum(G_alpha, 0.0)).ravel(),
                                    np.where(beta > 0.0, xi, np.minimum(xi, 0.0)).ravel()])
        dual = float(alpha.sum()) - 0.5 * float(np.sum(M * M)) - correcting
        return {"objectives": {"dual": dual, "kkt_violation": float(np.abs(projected).max(initial=0.0))},
                "complementarity": float(np.sum(alpha * G_alpha) + np.sum(beta * xi))}

    def certify(self, A, M, V, alpha, beta, sa=None, sb=None) -> dict:
        """The primal at (M, V) made feasible through the biases, the dual at the (cleaned) multipliers."""
        ga, gb = self.constraints(A, M, V)
        violation = np.maximum(0.0, np.maximum((1.0 - ga).max(axis=0), (-gb).max(axis=0)))
        V = V * self.masks
        V[:, -1] += violation
        xi = self.slacks(V)
        slack_cost = float(np.sum(xi * xi)) if self.squared else float(xi.sum())
        primal = 0.5 * float(np.sum(M * M)) + 0.5 * self.gamma * float(np.sum(V * V)) + self.C * slack_cost
        dual = self._dual(A, alpha, beta)
        if sa is not None:
            # Multipliers of constraints the iterate leaves inactive are 0 at the solution; any
            # alpha, beta >= 0 bound the primal from below, so the better bound is kept.
            cleaned = np.where(alpha < sa, 0.0, alpha), np.where(beta < sb, 0.0, beta)
            other = self._dual(A, *cleaned)
            if other["objectives"]["dual"] >= dual["objectives"]["dual"]:
                (alpha, beta), dual = cleaned, other
        objectives = dict(dual["objectives"], primal=primal, gap=primal - dual["objectives"]["dual"])
        return {"objectives": objectives, "V": V, "infeasibility": float(violation.max(initial=0.0)),
                "complementarity": dual["complementarity"], "alpha": alpha, "beta": beta}




class _CorrectingFactor:
    """The Newton matrix of :class:`_SVMPlusPrimal` through its correcting-function blocks (Schur complement)."""

    def __init__(self, reduced, blocks, couplings, A):
        self.reduced, self.blocks, self.couplings, self.A = reduced, blocks, couplings, A

    def solve(self, rM, rV):
        t = np.stack([cho_solve(block, r) for block, r in zip(self.blocks, rV)])  # V_i^{-1} r_Vi
        Et = np.einsum("ipq,iq->ip", self.couplings, t)  # E_i V_i^{-1} r_Vi, (L, p)
        dM = solve_reduced(self.reduced, rM - self.A @ Et)
        back = dM.T @ self.A  # column i is dM^T a_i
        dV = np.stack([cho_solve(block, r - E.T @ back[:, i])
                       for i, (block, r, E) in enumerate(zip(self.blocks, rV, self.couplings))])
        return dM, dV


class _HingePrimal:
    """The hinge problem (You et al.'s (2); :func:`embedded_hinge_ipm`): V is the slacks xi (n, L) themselves.

    Their Newton blocks are diagonal, ``theta_a + theta_b``, so eliminating them leaves
    ``R_i = X_a^T diag(theta_a theta_b / (theta_a + theta_b)) X_a``.
    """

    def __init__(self, X, bias, Y, C, squared=False):
        self.X, self.bias, self.Y, self.C, self.squared = X, bias, Y, C, squared
        self.p = X.shape[1] + (bias > 0.0)
        self.scale = C

    def label(self, i: int) -> _HingePrimal:
        return _HingePrimal(self.X, self.bias, self.Y[:, [i]], self.C, self.squared)

    def zeros_v(self):
        return np.zeros(self.Y.shape)

    @staticmethod
    def stack_v(parts):
        return np.hstack(parts)

    def margins(self, A, M):
        return self.Y * (product(self.X, self.bias, M.T) @ A)

    def constraints(self, A, M, V):
        return self.margins(A, M) + V, V

    def adjoint(self, A, la, lb):
        return A @ adjoint(self.X, self.bias, la * self.Y).T, la + lb

    def dual_residual_v(self, V, adjoint_v):
        if self.squared:
            return 2.0 * self.C * V - adjoint_v
        return self.C - adjoint_v

    def factorise(self, A, ta, tb) -> _SlackFactor:
        if self.squared:
            # The squared slack's own curvature 2C joins the diagonal block: R_i's weights are
            # theta_a - theta_a^2 / (theta_a + theta_b + 2C).
            diagonal = ta + tb + 2.0 * self.C
            weights = ta * (tb + 2.0 * self.C) / diagonal
        else:
            diagonal = ta + tb
            weights = ta * tb / diagonal
        parts = np.stack([weighted_gram(self.X, self.bias, weights[:, i]) for i in range(self.Y.shape[1])])
        return _SlackFactor(self, A, reduced_system(A, parts), ta, diagonal)

    def certify(self, A, M, V, alpha, beta, sa=None, sb=None) -> dict:
        """The primal at M (the hinge's slacks make every M feasible); the dual at alpha clipped to [0, C]."""
        hinge = np.maximum(0.0, 1.0 - self.margins(A, M))
        primal = 0.5 * float(np.sum(M * M)) + self.C * float(np.sum(hinge * hinge) if self.squared else hinge.sum())
        # The squared hinge's dual has no upper bound (its conjugate's alpha^2 / (4C) term instead).
        upper = np.inf if self.squared else self.C
        candidates = [np.clip(alpha, 0.0, upper)]
        if sa is not None:
            # Multipliers of constraints the iterate leaves inactive are 0 at the solution.
            candidates.append(np.where(alpha < sa, 0.0, candidates[0]))
        best = None
        for candidate in candidates:
            P = A @ adjoint(self.X, self.bias, candidate * self.Y).T  # M(alpha)
            dual = float(candidate.sum()) - 0.5 * float(np.sum(P * P))
            if self.squared:
                dual -= float(np.sum(candidate * candidate)) / (4.0 * self.C)
            if best is None or dual > best[1]:
                best = (candidate, dual, P)
        alpha, dual, P = best
        gradient = self.margins(A, P) - 1.0
        if self.squared:
            gradient = gradient + alpha / (2.0 * self.C)
        projected = np.where(alpha <= 0.0, np.minimum(gradient, 0.0),
                             np.where(alpha >= upper, np.maximum(gradient, 0.0), gradient))
        objectives = {"primal": primal, "dual": dual, "gap": primal - dual,
                      "kkt_violation": float(np.abs(projected).max(initial=0.0))}
        return {"objectives": objectives, "V": V, "alpha": alpha, "beta": np.maximum(beta, 0.0)}


class _SlackFactor:
    """The Newton matrix of :class:`_HingePrimal`: the diagonal slack blocks eliminated in closed form."""

    def __init__(self, problem, A, reduced, ta, diagonal):
        self.problem, self.A, self.reduced, self.ta, self.diagonal = problem, A, reduced, ta, diagonal

    def solve(self, rM, rV):
        problem = self.problem
        t = rV / self.diagonal
        dM = solve_reduced(self.reduced, rM - self.A @ adjoint(problem.X, problem.bias, self.ta * t * problem.Y).T)
        dV = (rV - self.ta * problem.margins(self.A, dM)) / self.diagonal
        return dM, dV
