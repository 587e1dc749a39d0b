"""Binary relevance with ridge regression: one regularised least-squares fit per label.

Notation: X is the n x d feature matrix, Y the n x L {0,1} label matrix and
S = 2Y - 1 its {-1,+1} signs.  Label j gets the linear score f_j(x) = x w_j + b_j
that minimises (Hoerl & Kennard 1970)

    sum_i (x_i w_j + b_j - s_ij)^2 + alpha ||w_j||^2.                        (1)

The intercept is not penalised, so it is eliminated by centring: with mu the mean
row of X, Xc = X - 1 mu and Sc = S - 1 mean(S), the objective summed over labels is

    P(W) = ||Xc W - Sc||^2 + alpha ||W||^2,   minimised by
    (Xc^T Xc + alpha I) W = Xc^T Sc,        b = mean(S) - mu W.               (2)

Every label shares the matrix of (2): one Cholesky factorisation serves all L
right-hand sides.  When n < d the equivalent n x n system is smaller:

    W = Xc^T (Xc Xc^T + alpha I)^{-1} Sc.                                      (3)

A sparse X is never centred explicitly (that would densify it).  Instead (1) is
solved label by label with LSQR on the centred operator v -> X v - 1 (mu v); LSQR's
damping term damp^2 ||w||^2 with damp = sqrt(alpha) is exactly the ridge penalty.

Certificate.  Writing P with the residual R = Sc - Xc W as a constraint and
maximising the Lagrangian over its multiplier U gives the dual

    D(U) = <U, Sc> - ||U||^2 / 4 - ||Xc^T U||^2 / (4 alpha),                   (4)

whose optimum is U = 2R at the optimal W; so P(W) - D(2R) >= 0 is the duality gap
of any W, zero exactly at the solution of (2).  The KKT condition is the vanishing
gradient of P, 2 (alpha W - Xc^T R).
"""

import numbers
import time

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from multilabel_core import Certificate, MultiLabelEstimator

LSQR_TOL = 1e-10
LSQR_ITERATION_LIMIT = 7  # LSQR's ``istop`` when it ran out of iterations


class RidgeBR(MultiLabelEstimator):
    """Per-label ridge regression on {-1, +1} targets, thresholded at zero.

    :class:`~multilabel_core.MultiLabelEstimator` supplies the scikit-learn contract
    (``get_params``/``set_params``, input validation, ``fit``/``predict``); this class
    solves (1), certifies the solution with (4) and scores.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Ridge penalty of equation (1).
    tol : float > 0 or None, default None
        LSQR stopping tolerance (``atol`` and ``btol``) for sparse X; None means
        1e-10.  Dense X is solved exactly.

    Attributes
    ----------
    coef_ : ndarray (d, L)
        W: column j holds the weights of label j, so the scores are X W + b.
    intercept_ : ndarray (L,)
        b.
    certificate_ : Certificate
        Primal (2), dual (4), their gap and the largest gradient entry of P.
    """

    def __init__(self, alpha=1.0, tol=None):
        self.alpha = alpha
        self.tol = tol

    def _fit(self, X, Y):
        """Solve (2)/(3) for dense X, (1) with LSQR for sparse X, then certify."""
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real) or not 0 < self.alpha < np.inf:
            raise ValueError(f"alpha must be a positive finite number, got {self.alpha!r}")
        start = time.perf_counter()
        S = 2.0 * Y - 1.0
        mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        s_mean = S.mean(axis=0)
        Sc = S - s_mean
        if sp.issparse(X):
            W, n_iter, converged = self._solve_sparse(X, mu, Sc)
        else:
            W, n_iter, converged = self._solve_dense(np.asarray(X, dtype=np.float64) - mu, Sc), 1, True
        self.coef_ = W
        self.intercept_ = s_mean - mu @ W
        self.certificate_ = self._certify(X, mu, Sc, n_iter, converged, start)

    def _solve_dense(self, Xc, Sc):
        n, d = Xc.shape
        if n >= d:  # equation (2): d x d system
            return scipy.linalg.solve(Xc.T @ Xc + self.alpha * np.eye(d), Xc.T @ Sc, assume_a="pos")
        gram = Xc @ Xc.T + self.alpha * np.eye(n)  # equation (3): n x n system
        return Xc.T @ scipy.linalg.solve(gram, Sc, assume_a="pos")

    def _solve_sparse(self, X, mu, Sc):
        n, d = X.shape
        centred = scipy.sparse.linalg.LinearOperator(
            (n, d),
            matvec=lambda v: X @ v - mu @ v,
            rmatvec=lambda u: X.T @ u - mu * u.sum(),
            dtype=np.float64,
        )
        tol = LSQR_TOL if self.tol is None else self.tol
        runs = [
            scipy.sparse.linalg.lsqr(centred, Sc[:, j], damp=np.sqrt(self.alpha), atol=tol, btol=tol)
            for j in range(Sc.shape[1])
        ]
        W = np.column_stack([run[0] for run in runs])
        return W, sum(run[2] for run in runs), all(run[1] != LSQR_ITERATION_LIMIT for run in runs)

    def _certify(self, X, mu, Sc, n_iter, converged, start):
        """The duality gap P(W) - D(2R) of (2) and (4), and the gradient of P."""
        W = self.coef_
        R = Sc - (np.asarray(X @ W) - mu @ W)
        XcT_R = np.asarray(X.T @ R) - np.outer(mu, R.sum(axis=0))
        primal = np.sum(R**2) + self.alpha * np.sum(W**2)
        dual = 2.0 * np.sum(R * Sc) - np.sum(R**2) - np.sum(XcT_R**2) / self.alpha
        return Certificate.from_objectives(
            primal,
            dual,
            kkt_violation=float(np.max(np.abs(2.0 * (self.alpha * W - XcT_R)))),
            n_iter=n_iter,
            time=time.perf_counter() - start,
            converged=converged,
            solver="lsqr" if sp.issparse(X) else "cholesky",
        )

    def _decision_function(self, X):
        """Scores X W + b (equation (1)'s linear model)."""
        return np.asarray(X @ self.coef_) + self.intercept_
