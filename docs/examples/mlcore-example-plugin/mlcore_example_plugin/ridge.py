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

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg


class RidgeBR:
    """Per-label ridge regression on {-1, +1} targets, thresholded at zero.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Ridge penalty of equation (1).
    tol : float > 0, default 1e-10
        LSQR stopping tolerance (``atol`` and ``btol``) for sparse X; dense X is
        solved exactly.

    Attributes
    ----------
    coef_ : ndarray (d, L)
        W: column j holds the weights of label j, so scores are X W + b.
    intercept_ : ndarray (L,)
        b.
    n_features_in_ : int
    """

    def __init__(self, alpha=1.0, tol=1e-10):
        self.alpha = alpha
        self.tol = tol

    # -- scikit-learn's parameter protocol ------------------------------------

    def get_params(self, deep=True):
        return {"alpha": self.alpha, "tol": self.tol}

    def set_params(self, **params):
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"RidgeBR has no parameter {name!r}; valid parameters: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        return f"RidgeBR(alpha={self.alpha!r}, tol={self.tol!r})"

    # -- learning -------------------------------------------------------------

    def fit(self, X, Y):
        """Solve (2)/(3) for dense X, (1) with LSQR for sparse X; return self."""
        for name in ("alpha", "tol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < np.inf:
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        X = _check_features(X)
        S = 2.0 * _check_labels(Y, X.shape[0]) - 1.0
        mu = np.asarray(X.mean(axis=0)).ravel()
        s_mean = S.mean(axis=0)
        if sp.issparse(X):
            W = self._solve_sparse(X, mu, S - s_mean)
        else:
            W = self._solve_dense(X - mu, S - s_mean)
        self.coef_ = W
        self.intercept_ = s_mean - mu @ W
        self.n_features_in_ = X.shape[1]
        return self

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
        columns = [
            scipy.sparse.linalg.lsqr(centred, Sc[:, j], damp=damp, atol=self.tol, btol=self.tol)[0]
            for j in range(Sc.shape[1])
        ]
        return np.column_stack(columns)

    # -- prediction -----------------------------------------------------------

    def decision_function(self, X):
        """Scores X W + b, float (n, L)."""
        if not hasattr(self, "coef_"):
            raise ValueError("this RidgeBR is not fitted yet: call fit(X, Y) first")
        X = _check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but RidgeBR was fitted with {self.n_features_in_}")
        return np.asarray(X @ self.coef_) + self.intercept_

    def predict(self, X):
        """Label j is predicted relevant where its score is positive: dense {0,1} (n, L)."""
        return (self.decision_function(X) > 0).astype(np.int64)


def _check_features(X):
    """X as a finite 2-D float64 array, or CSR matrix when sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        values = X
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"X must be a non-empty 2-D (n_samples, n_features) matrix, got shape {X.shape}")
    if not np.isfinite(values).all():
        raise ValueError("X contains NaN or infinity")
    return X


def _check_labels(Y, n_samples):
    """Y as a dense (n, L) float64 {0,1} indicator matrix."""
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] != n_samples:
        raise ValueError(f"Y must be an ({n_samples}, n_labels) indicator matrix, got shape {Y.shape}")
    if not np.isin(Y, (0.0, 1.0)).all():
        raise ValueError("Y must hold only 0 and 1")
    return Y
