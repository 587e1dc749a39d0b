"""Binary relevance with ridge regression: one regularised least-squares fit per label.

Notation: X is the n x d feature matrix, Y the n x L {0,1} label matrix and
S = 2Y - 1 its {-1,+1} signs.  Label j gets the linear score f_j(x) = x w_j + b_j
that minimises (Hoerl & Kennard 1970)

    sum_i (x_i w_j + b_j - s_ij)^2 + alpha ||w_j||^2.                        (1)

The intercept is not penalised, so it is eliminated by centring: with mu the mean
row of X, Xc = X - 1 mu and Sc = S - 1 mean(S),

    (Xc^T Xc + alpha I) W = Xc^T Sc,        b = mean(S) - mu W.               (2)

Every label shares the matrix of (2): one Cholesky factorisation serves all L
right-hand sides.  When n < d the equivalent n x n system is smaller:

    W = Xc^T (Xc Xc^T + alpha I)^{-1} Sc.                                      (3)

A sparse X is never centred explicitly (that would densify it).  Instead (1) is
solved label by label with LSQR on the centred operator v -> X v - 1 (mu v); LSQR's
damping term damp^2 ||w||^2 with damp = sqrt(alpha) is exactly the ridge penalty.
"""

import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from multilabel_core import MultiLabelEstimator

LSQR_TOL = 1e-10


class RidgeBR(MultiLabelEstimator):
    """Per-label ridge regression on {-1, +1} targets, thresholded at zero.

    :class:`~multilabel_core.MultiLabelEstimator` supplies the scikit-learn contract
    (``get_params``/``set_params``, input validation, ``fit``/``predict``); this class
    only solves (1) and scores.

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
    """

    def __init__(self, alpha=1.0, tol=None):
        self.alpha = alpha
        self.tol = tol

    def _fit(self, X, Y):
        """Solve (2)/(3) for dense X, (1) with LSQR for sparse X."""
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real) or not 0 < self.alpha < np.inf:
            raise ValueError(f"alpha must be a positive finite number, got {self.alpha!r}")
        S = 2.0 * Y - 1.0
        mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        s_mean = S.mean(axis=0)
        if sp.issparse(X):
            self.coef_ = self._solve_sparse(X, mu, S - s_mean)
        else:
            self.coef_ = self._solve_dense(np.asarray(X, dtype=np.float64) - mu, S - s_mean)
        self.intercept_ = s_mean - mu @ self.coef_

    def _solve_dense(self, Xc, Sc):
        n, d = Xc.shape
        if n >= d:  # equation (2): d x d system
            return scipy.linalg.solve(Xc.T @ Xc + self.alpha * np.eye(d), Xc.T @ Sc, assume_a="pos")
        gram = Xc @ Xc.T + self.alpha * np.eye(n)  # equation (3): n x n system
        return Xc.T @ scipy.linalg.solve(gram, Sc, assume_a="pos")

    def _solve_sparse(self, X, mu, Sc):
        n, d = X.shape
        ones = np.ones(n)
        centred = scipy.sparse.linalg.LinearOperator(
            (n, d),
            matvec=lambda v: X @ v - ones * (mu @ v),
            rmatvec=lambda u: X.T @ u - mu * u.sum(),
            dtype=np.float64,
        )
        damp = np.sqrt(self.alpha)
        tol = LSQR_TOL if self.tol is None else self.tol
        columns = [
            scipy.sparse.linalg.lsqr(centred, Sc[:, j], damp=damp, atol=tol, btol=tol)[0]
            for j in range(Sc.shape[1])
        ]
        return np.column_stack(columns)

    def _decision_function(self, X):
        """Scores X W + b (equation (1)'s linear model)."""
        return np.asarray(X @ self.coef_) + self.intercept_
