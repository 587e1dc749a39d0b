"""Label enhancement (LE) with a low-rank stacked matrix: LIEML's first step, usable on its own.

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*,
section 3.1.  With logical labels y in {-1, +1} (t labels, n rows, d features), the stacked matrix
Z = [U; X^; 1^T] ((t + d + 1) x n) minimises (eq. 6)

    T1(Z) = lambda / (t n) sum_ij log(1 + exp(-y_ij z_ij)) + mu ||Z||_* + 1 / (d n) sum 1/2 (z_(t+i)j - x_ij)^2

with its last row fixed to 1 (eq. 3); the numerical labels are U = Z[:t].  The smooth part's
gradient is eq. 7.  It is solved by the core's fixed point continuation
(:func:`~multilabel_core_plugins.lieml.fpc.fixed_point_continuation`) from Z0 = [Y; X; 1^T], with
mu_1 = 0.25 sigma_max(Z0), mu <- max(0.25 mu, mu_min = 1e-5), and the step
tau = min(3.8 t n / lambda, d n): the label part's gradient is Lipschitz with constant
lambda / (4 t n) and the feature part's with 1 / (d n), so tau is 0.95 / L of the first and
exactly 1 / L of the second, at most 1 / L of the sum -- a stable step (FPC needs tau < 2 / L).

Empty columns.  A feature column of X without a stored value (all zero) gives Z a row whose
target is 0.  Zeroing a row of Z never raises its nuclear norm (it multiplies Z by an
orthogonal projection) and is the minimum of that row's quadratic, so the optimum's row is 0;
FPC keeps it 0 from Z0 too (the row's gradient vanishes there, and singular value shrinkage of a
matrix with a zero row leaves it zero).  Those rows are therefore left out of Z: the iterates,
the certificate and U are those of the full stacked matrix, the weight 1/(d n) and the step keep
the declared d, and the cost follows the stored entries, not a (10^6 + t + 1) x 30 dense Z for 30
rows declaring 10^6 features (benchmarks/RESULTS.md, "Timings behind code comments").
"""

from __future__ import annotations

import numbers

import attrs
import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy

from multilabel_core.base import CapabilityError, LabelRelation, Problem
from multilabel_core.certificate import Certificate
from multilabel_core.relations import Independent
from multilabel_core.solvers import SVT_METHODS
from multilabel_core.validation import check_scalar, check_signs, check_X, check_Y, count, flag, open_unit, positive, to_signs

from .fpc import fixed_point_continuation

__all__ = ["EnhancedTargets", "LabelEnhancement", "LowRankEnhancement", "enhance_labels", "fed_targets", "stacked_objective"]


@attrs.frozen(eq=False)
class LabelEnhancement:
    """Hold the outcome of label enhancement.

    Parameters
    ----------
    labels : ndarray of shape (n, t)
        The numerical labels U (``Z[:t].T``).
    rank : int
        The numerical rank of the final Z.
    singular_values : ndarray
        The nonzero singular values of the final Z, descending.
    stages : list of FPCStage
        The continuation stages of fixed point continuation (mu, iterations, T1 after each,
        rank).
    certificate : Certificate
        The FPC certificate of T1 at mu_min (primal, lower bound, gap).
    lam : float
        lambda, the weight of the logistic label term (Tao, Xu & Geng, eq. 4).
    step : float
        tau, the FPC step (module docstring).
    """

    labels: np.ndarray
    rank: int
    singular_values: np.ndarray
    stages: list
    certificate: Certificate
    lam: float
    step: float


def stacked_objective(X, S, lam: float, *, n_features: int | None = None):
    """Build the smooth part f of T1 (eq. 6 without the nuclear norm) for the stacked Z of (X, S).

    Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank
    Subspace*, eq. 6 and its gradient, eq. 7.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d_held)
        The features (the columns Z holds).
    S : ndarray of shape (n, t)
        The logical labels as signs in {-1, +1}.
    lam : float
        lambda, the weight of the logistic label term (positive).
    n_features : int or None, default None
        The d of the feature weight 1/(d n) and of the step when X holds only some of the
        columns (:func:`enhance_labels` leaves out the empty ones); None is X's own width.

    Returns
    -------
    Z0 : ndarray of shape (t + d_held + 1, n)
        The start [S^T; X^T; 1^T].
    value : callable
        f(Z), a float.
    gradient : callable
        The gradient of f at Z (eq. 7), an array shaped like Z (zero on the last row).
    conjugate : callable
        The convex conjugate f*(M) (+inf outside its domain), for the FPC certificate's
        Fenchel bound.
    step : float
        tau = min(3.8 t n / lambda, d n) (module docstring).

    Raises
    ------
    ValueError
        When ``n_features`` is below X's number of columns.
    """
    n, held = X.shape
    d = held if n_features is None else int(n_features)
    if d < held:
        raise ValueError(f"n_features must be at least X's {held} columns, got {n_features!r}")
    t = S.shape[1]
    signs = np.ascontiguousarray(S.T, dtype=np.float64)
    features = X.T.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64).T
    Z0 = np.vstack([signs, features, np.ones((1, n))])
    label_weight, feature_weight = lam / (t * n), 1.0 / (d * n)

    def value(Z):
        margins = signs * Z[:t]
        return label_weight * float(np.logaddexp(0.0, -margins).sum()) + 0.5 * feature_weight * float(
            ((Z[t : t + held] - features) ** 2).sum()
        )

    def gradient(Z):
        G = np.zeros_like(Z)
        G[:t] = -label_weight * signs * expit(-signs * Z[:t])
        G[t : t + held] = feature_weight * (Z[t : t + held] - features)
        return G

    def conjugate(M):
        # f* of the label part: w sum p log p + (1 - p) log(1 - p) with p = -y m / w in [0, 1];
        # of the feature part: <m, x> + (d n / 2) ||m||^2.
        p = -signs * M[:t] / label_weight
        if p.min() < -1e-12 or p.max() > 1.0 + 1e-12:
            return np.inf
        p = np.clip(p, 0.0, 1.0)
        entropy = float((xlogy(p, p) + xlogy(1.0 - p, 1.0 - p)).sum())
        block = M[t : t + held]
        return label_weight * entropy + float(np.vdot(block, features)) + 0.5 * d * n * float((block**2).sum())

    return Z0, value, gradient, conjugate, min(3.8 * t * n / lam, float(d * n))


def _held_columns(X):
    """X restricted to its columns holding a nonzero value (at least one column), found from the stored entries."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        used = np.unique(X.indices[X.data != 0])
    else:
        used = np.flatnonzero(np.any(X != 0, axis=0))
    if used.size == X.shape[1]:
        return X
    return X[:, used if used.size else np.zeros(1, dtype=np.intp)]


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
    """Compute numerical labels U from the logical labels Y by label enhancement (module docstring).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The features.
    Y : array-like or sparse matrix of shape (n, t)
        The logical labels, {0, 1} or {-1, +1}.
    lam : float, default 1.0
        lambda of Tao, Xu & Geng's eq. 4, the weight of the logistic label term (positive).
    mu_min : float, default 1e-5
        The last continuation stage's mu (the paper's value).
    eta_mu : float, default 0.25
        The continuation's factor, mu <- max(eta_mu mu, mu_min), in (0, 1).
    stage_tol : float, default 1e-5
        A stage ends when T1 changes by less than this between steps.
    max_iter : int, default 20000
        Shrinkage steps over all stages.
    svt : {"auto", "gram", "full"}, default "auto"
        The singular value shrinkage: the truncated one with its fallback, through the Gram
        matrix, or the paper's full SVD.
    accelerate : bool, default True
        Momentum with adaptive restart on the FPC steps (same fixed point, far fewer steps;
        False is the paper's plain iteration).
    warn : bool, default True
        Issue a ConvergenceWarning when the FPC certificate is not met.

    Returns
    -------
    LabelEnhancement
        U, the final Z's rank and singular values, the stages, the certificate of T1 at
        mu_min, lambda and the step.
    """
    X = check_X(X)
    S = _signs(Y, X.shape[0])
    check_scalar(lam, "lam", low=0.0, low_inclusive=False)
    # Z's rows of the empty columns are left out (module docstring, "Empty columns"); d stays the declared width.
    Z0, value, gradient, conjugate, step = stacked_objective(_held_columns(X), S, float(lam), n_features=X.shape[1])
    t = S.shape[1]
    fit = fixed_point_continuation(
        Z0, value, gradient, step=step, mu_min=mu_min, eta_mu=eta_mu, stage_tol=stage_tol, max_iter=max_iter,
        fixed_rows=[Z0.shape[0] - 1], f_conjugate=conjugate, svt=svt, accelerate=accelerate, warn=warn,
    )  # fmt: skip
    model = fit.solution.model_state
    return LabelEnhancement(
        labels=np.ascontiguousarray(fit.solution.coef[:t].T),
        rank=model["rank"],
        singular_values=model["singular_values"],
        stages=list(model["stages"]),
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


def fed_targets(enhancement: LabelEnhancement, signs: np.ndarray, target: str) -> tuple[np.ndarray, int]:
    """Compute the targets a per-label model trains on after label enhancement.

    Parameters
    ----------
    enhancement : LabelEnhancement
        The enhancement of the training labels (its ``labels`` U, shape (n, t)).
    signs : ndarray of shape (n, t)
        The logical labels in {-1, +1}.
    target : {"real", "sign"}
        The loss's convention (:attr:`multilabel_core.base.Loss.target`): ``"real"`` (a
        regression loss, e.g. epsilon-insensitive) trains on the numerical labels U themselves,
        what Tao, Xu & Geng's regressor T2 (eq. 8) fits; ``"sign"`` (hinge, squared hinge,
        logistic, ranking) on the signs of U, a relabelling, where an entry with u_ij = 0 keeps
        its logical label (the enhancement gives no direction there).

    Returns
    -------
    targets : ndarray of shape (n, t), float64
        U, or its signs.
    turned_over : int
        The number of entries whose enhanced label has the other sign than the logical label.

    Raises
    ------
    ValueError
        When ``target`` is neither ``"real"`` nor ``"sign"``.
    """
    U = np.asarray(enhancement.labels, dtype=np.float64)
    turned_over = int(np.count_nonzero((U * signs) < 0.0))
    if target == "real":
        return np.ascontiguousarray(U), turned_over
    if target == "sign":
        return np.where(U > 0.0, 1.0, np.where(U < 0.0, -1.0, signs)), turned_over
    raise ValueError(f"a loss's target must be 'sign' or 'real', got {target!r}")


@attrs.frozen(eq=False)
class EnhancedTargets(Independent):
    """The relation of a problem :meth:`LowRankEnhancement.feed` made: independent labels after enhancement.

    The fed problem's targets already carry the enhancement, so the model step sees Omega = I
    (every per-label solver accepts it); this object keeps the record of how the targets were
    made, and its :attr:`feed_steps` (the enhancement's FPC certificate) count in the fit's
    certificate (:func:`multilabel_core.composition.fed_fit`).

    Parameters
    ----------
    enhancement : LabelEnhancement
        U, rank, stages and certificate of the enhancement.
    target : {"real", "sign"}
        ``"real"``: the targets are U; ``"sign"``: the targets are the signs of U.
    turned_over : int
        The entries whose enhanced label has the other sign than the logical label.
    """

    enhancement: LabelEnhancement
    target: str
    turned_over: int

    @property
    def feed_steps(self) -> tuple:
        """The certificates of the work done before the model step: the enhancement's (T1 by FPC)."""
        return (self.enhancement.certificate,)


@attrs.frozen
class LowRankEnhancement(LabelRelation):
    """Label enhancement on the low-rank stacked matrix [U; X; 1] (LIEML's label relation).

    The labels relate through the low rank of the stacked matrix, not through a covariance:
    :meth:`enhance` turns logical labels into numerical ones (:func:`enhance_labels`), and the
    model step then sees independent outputs (``initial`` and ``update`` are the identity).
    A solver that reads ``enhance`` itself (LIEML's ``lieml_irwls``) runs it; any other solver
    of independent labels gets the problem :meth:`feed` makes, whose targets are the enhanced
    labels (U for a real-target loss, the signs of U for a sign loss).

    Parameters
    ----------
    lam : float, default 1.0
        lambda of Tao, Xu & Geng's eq. 4, the weight of the logistic label term (positive).
    mu_min : float, default 1e-5
        The last continuation stage's mu (positive).
    eta_mu : float, default 0.25
        The continuation's factor, in (0, 1).
    stage_tol : float, default 1e-5
        A stage ends when T1 changes by less than this between steps (positive).
    max_iter : int, default 20000
        Shrinkage steps over all stages.
    svt : {"auto", "gram", "full"}, default "auto"
        The singular value shrinkage (:func:`enhance_labels`).
    accelerate : bool, default True
        Momentum with adaptive restart on the FPC steps.
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
    # The stacked matrix holds the raw rows X: a composing estimator must not hand the solver the
    # kernel matrix in their place.
    needs_rows = True

    def initial(self, n_labels: int) -> np.ndarray:
        return np.eye(check_scalar(n_labels, "n_labels", kind=numbers.Integral, low=1))

    def update(self, gram) -> np.ndarray:
        return np.eye(np.shape(gram)[0])

    def enhance(self, X, Y, *, warn: bool = True) -> LabelEnhancement:
        """Compute the numerical labels of (X, Y) (:func:`enhance_labels` with this relation's settings).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The features.
        Y : array-like or sparse matrix of shape (n, t)
            The logical labels, {0, 1} or {-1, +1}.
        warn : bool, default True
            Issue a ConvergenceWarning when the FPC certificate is not met.

        Returns
        -------
        LabelEnhancement
            U with the enhancement's record and certificate.
        """
        return enhance_labels(
            X, Y, lam=self.lam, mu_min=self.mu_min, eta_mu=self.eta_mu, stage_tol=self.stage_tol,
            max_iter=self.max_iter, svt=self.svt, accelerate=self.accelerate, warn=warn,
        )  # fmt: skip

    def feed(self, problem: Problem) -> Problem:
        """Make the problem a per-label solver solves instead: the same rows, kernel, loss and C, the enhanced targets.

        The labels are enhanced from the problem's rows and logical labels (:meth:`enhance`);
        the targets become :func:`fed_targets` of the loss's convention, and the relation an
        :class:`EnhancedTargets` (independent labels, with the enhancement's record and
        certificate).

        Why these targets.  Tao, Xu & Geng train a regressor on U (T2, eq. 8), so a real-target
        loss gets U.  A sign loss sees only signs: its per-entry information would be the
        magnitudes |u_ij| as per-entry costs, which no registered per-label solver of sign losses
        takes (their duals have one cost per label), so it gets the signs of U.  Where the
        enhancement turns no label over, those signs are the logical labels and the model
        would be the one without the relation: that composition is refused (below) rather than
        fitted as if the relation had acted.

        Parameters
        ----------
        problem : Problem
            The composed problem, with the raw rows X and the logical labels Y.

        Returns
        -------
        Problem
            The problem with the targets of :func:`fed_targets` as ``Y`` and an
            :class:`EnhancedTargets` as its relation.

        Raises
        ------
        CapabilityError
            The problem's rows are a precomputed kernel matrix (the enhancement stacks the raw
            rows X), or the loss is a sign loss and the enhancement turned no label over (the
            message gives the counts and the ways on: a real-target loss, or a larger ``mu_min``).
        """
        name = type(self).__name__
        if problem.kernel.precomputed:
            raise CapabilityError(
                f"{name} enhances the labels from the raw rows X (the stacked matrix [U; X; 1]); "
                "a precomputed kernel matrix hides them"
            )
        signs = _signs(problem.Y, problem.n_samples)
        target = getattr(problem.loss, "target", "sign")
        # The FPC warning (with its relative gap) is the one a user sees; the certificate also counts.
        enhancement = self.enhance(problem.X, signs, warn=True)
        targets, turned_over = fed_targets(enhancement, signs, target)
        if target == "sign" and turned_over == 0:
            raise CapabilityError(
                f"{name} (lam={self.lam:g}, mu_min={self.mu_min:g}) turned none of the {signs.size} labels over, so "
                f"{type(problem.loss).__name__}, a sign loss, would train on the logical labels (the signs of the "
                "enhanced labels are theirs, and the model would be relation='independent''s); the magnitudes reach a "
                "real-target loss (loss='epsilon_insensitive' with solver 'irwls', 'lbfgs' or 'lieml_irwls'), and a "
                "larger mu_min makes the enhancement turn labels over"
            )
        relation = EnhancedTargets(enhancement=enhancement, target=target, turned_over=turned_over)
        return attrs.evolve(problem, Y=targets, relation=relation)
