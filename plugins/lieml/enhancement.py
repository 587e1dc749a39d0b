"""Label enhancement (LE) with a low-rank stacked matrix: LIEML's first step, usable on its own.

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*,
section 3.1.  With logical labels y in {-1, +1} (t labels, n rows, d features), the stacked matrix
Z = [U; X^; 1^T] ((t + d + 1) x n) minimises (eq. 6)

    T1(Z) = lambda / (t n) sum_ij log(1 + exp(-y_ij z_ij)) + mu ||Z||_* + 1 / (d n) sum 1/2 (z_(t+i)j - x_ij)^2

with its last row fixed to 1 (eq. 3); the numerical labels are U = Z[:t].  The smooth part's
gradient is eq. 7.  It is solved by the core's fixed point continuation
(:func:`multilabel_core.solvers.fixed_point_continuation`) from Z0 = [Y; X; 1^T], with
mu_1 = 0.25 sigma_max(Z0), mu <- max(0.25 mu, mu_min = 1e-5), and the step
tau = min(3.8 t n / lambda, d n): the label part's gradient is Lipschitz with constant
lambda / (4 t n) and the feature part's with 1 / (d n), so tau is 0.95 / L of the first and
exactly 1 / L of the second, at most 1 / L of the sum -- a stable step (FPC needs tau < 2 / L).
"""

from __future__ import annotations

import numbers

import attrs
import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy

from multilabel_core.base import LabelRelation
from multilabel_core.certificate import Certificate
from multilabel_core.solvers import SVT_METHODS, fixed_point_continuation
from multilabel_core.validation import check_scalar, check_signs, check_X, check_Y, count, flag, open_unit, positive, to_signs

__all__ = ["LabelEnhancement", "LowRankEnhancement", "enhance_labels", "stacked_objective"]


@attrs.frozen(eq=False)
class LabelEnhancement:
    """The outcome of label enhancement.

    Attributes
    ----------
    labels : (n, t) the numerical labels U (``Z[:t].T``).
    rank : the numerical rank of the final Z; singular_values : its nonzero singular values.
    stages : list of :class:`~multilabel_core.solvers.FPCStage` (mu, iterations, T1 after each, rank).
    certificate : the FPC certificate of T1 at mu_min (primal, lower bound, gap).
    lam, step : lambda and tau.
    """

    labels: np.ndarray
    rank: int
    singular_values: np.ndarray
    stages: list
    certificate: Certificate
    lam: float
    step: float


def stacked_objective(X, S, lam: float):
    """f of T1 without the nuclear norm, and its gradient (eq. 7), for the stacked Z of (X, S).

    ``X`` (n, d) dense or sparse, ``S`` (n, t) signs.
    Returns ``(Z0, value, gradient, conjugate, step)`` with Z0 = [S^T; X^T; 1^T], the convex
    conjugate of f (for the FPC certificate's Fenchel bound) and step = min(3.8 t n / lambda, d n).
    """
    n, d = X.shape
    t = S.shape[1]
    signs = np.ascontiguousarray(S.T, dtype=np.float64)
    features = X.T.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64).T
    Z0 = np.vstack([signs, features, np.ones((1, n))])
    label_weight, feature_weight = lam / (t * n), 1.0 / (d * n)

    def value(Z):
        margins = signs * Z[:t]
        return label_weight * float(np.logaddexp(0.0, -margins).sum()) + 0.5 * feature_weight * float(
            ((Z[t : t + d] - features) ** 2).sum()
        )

    def gradient(Z):
        G = np.zeros_like(Z)
        G[:t] = -label_weight * signs * expit(-signs * Z[:t])
        G[t : t + d] = feature_weight * (Z[t : t + d] - features)
        return G

    def conjugate(M):
        # f* of the label part: w sum p log p + (1 - p) log(1 - p) with p = -y m / w in [0, 1];
        # of the feature part: <m, x> + (d n / 2) ||m||^2.
        p = -signs * M[:t] / label_weight
        if p.min() < -1e-12 or p.max() > 1.0 + 1e-12:
            return np.inf
        p = np.clip(p, 0.0, 1.0)
        entropy = float((xlogy(p, p) + xlogy(1.0 - p, 1.0 - p)).sum())
        block = M[t : t + d]
        return label_weight * entropy + float(np.vdot(block, features)) + 0.5 * d * n * float((block**2).sum())

    return Z0, value, gradient, conjugate, min(3.8 * t * n / lam, float(d * n))


def enhance_labels(
    X,
    Y,
    *,
    lam: float = 1.0,
    mu_min: float = 1e-5,
    eta_mu: float = 0.25,
    stage_tol: float = 1e-5,
    max_iter: int = 20000,
    svt: str = "auto",
    accelerate: bool = True,
    warn: bool = True,
) -> LabelEnhancement:
    """Numerical labels U from the logical labels Y by LE (module docstring).

    Parameters
    ----------
    X : (n, d) dense or sparse features; Y : (n, t) labels, {0, 1} or {-1, +1}.
    lam : lambda of (4), the weight of the logistic label term.
    mu_min, eta_mu, stage_tol : the continuation (paper: 1e-5, 0.25, 1e-5).
    max_iter : shrinkage steps over all stages.
    svt : "auto" (the truncated shrinkage with its fallback), "gram" or "full" (the paper's full SVD).
    accelerate : momentum with adaptive restart on the FPC steps (same fixed point, far fewer
        steps; False is the paper's plain iteration).
    warn : issue a ConvergenceWarning when the FPC certificate is not met.
    """
    X = check_X(X)
    S = _signs(Y, X.shape[0])
    check_scalar(lam, "lam", low=0.0, low_inclusive=False)
    Z0, value, gradient, conjugate, step = stacked_objective(X, S, float(lam))
    t = S.shape[1]
    fit = fixed_point_continuation(
        Z0, value, gradient, step=step, mu_min=mu_min, eta_mu=eta_mu, stage_tol=stage_tol, max_iter=max_iter,
        fixed_rows=[Z0.shape[0] - 1], f_conjugate=conjugate, svt=svt, accelerate=accelerate, warn=warn,
    )  # fmt: skip
    extras = fit.solution.extras
    return LabelEnhancement(
        labels=np.ascontiguousarray(fit.solution.coef[:t].T),
        rank=extras["rank"],
        singular_values=extras["singular_values"],
        stages=list(extras["stages"]),
        certificate=fit.certificate,
        lam=float(lam),
        step=float(step),
    )


def _signs(Y, n_samples: int) -> np.ndarray:
    """Y as signs: a {0, 1} indicator (the library's convention) or {-1, +1} (the paper's)."""
    dense = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    if dense.dtype != object and np.issubdtype(dense.dtype, np.number) and (dense == -1).any():
        return check_signs(dense, n_samples=n_samples, name="Y")
    return to_signs(check_Y(dense, n_samples=n_samples))


def _svt_method(instance, attribute, value) -> None:
    if value not in SVT_METHODS:
        raise ValueError(f"{attribute.name} must be one of {SVT_METHODS}, got {value!r}")


@attrs.frozen
class LowRankEnhancement(LabelRelation):
    """Label enhancement on the low-rank stacked matrix [U; X; 1] (LIEML's label relation).

    The labels relate through the low rank of the stacked matrix, not through a covariance:
    :meth:`enhance` turns logical labels into numerical ones (:func:`enhance_labels`), and the
    model step then sees independent outputs (``initial`` and ``update`` are the identity).

    Parameters: ``lam`` (lambda of eq. 4, default 1), ``mu_min``, ``eta_mu``, ``stage_tol``,
    ``max_iter``, ``svt`` and ``accelerate``, as in :func:`enhance_labels`.
    """

    lam: float = attrs.field(default=1.0, validator=positive)
    mu_min: float = attrs.field(default=1e-5, validator=positive)
    eta_mu: float = attrs.field(default=0.25, validator=open_unit)
    stage_tol: float = attrs.field(default=1e-5, validator=positive)
    max_iter: int = attrs.field(default=20000, validator=count)
    svt: str = attrs.field(default="auto", validator=_svt_method)
    accelerate: bool = attrs.field(default=True, validator=flag)

    learned = False
    # The enhanced labels are what this relation contributes.
    state = ("enhance",)

    def initial(self, n_labels: int) -> np.ndarray:
        return np.eye(check_scalar(n_labels, "n_labels", kind=numbers.Integral, low=1))

    def update(self, gram) -> np.ndarray:
        return np.eye(np.shape(gram)[0])

    def enhance(self, X, Y, *, warn: bool = True) -> LabelEnhancement:
        """The numerical labels of (X, Y) (:func:`enhance_labels` with this relation's settings)."""
        return enhance_labels(
            X, Y, lam=self.lam, mu_min=self.mu_min, eta_mu=self.eta_mu, stage_tol=self.stage_tol,
            max_iter=self.max_iter, svt=self.svt, accelerate=self.accelerate, warn=warn,
        )  # fmt: skip
