"""The binary problems LIBSVM and LIBLINEAR solve, and their duality certificates.

The scikit-learn baselines fit one binary model per label (one-vs-rest) or per link of
a chain.  scikit-learn does not say how close to optimal a model is, so each one is
certified here from the model alone, as every method of the project is
(:class:`~multilabel_core.Certificate`): the primal objective at the returned weights,
the dual objective at a feasible dual point, their gap (>= 0 by weak duality, 0 at the
optimum) and the violation of the optimality conditions.

Notation: ``n`` training rows x_i with signs y_i in {-1, +1}, scores f_i = f(x_i), the
hinge xi_i = max(0, 1 - y_i f_i).

**LIBSVM's C-SVC** (``sklearn.svm.SVC``; Chang & Lin 2011, eq. 1-2), the bias b free::

    P = 1/2 ||w||^2 + C sum_i xi_i,          D(alpha) = sum_i alpha_i - 1/2 ||w||^2,
    w = sum_i alpha_i y_i phi(x_i),          0 <= alpha_i <= C,  sum_i alpha_i y_i = 0.

The model holds beta_s = y_s alpha_s for its support vectors s, and
``||w||^2 = beta^T K beta = sum_s beta_s (f_s - b)``, so the scores on the training rows
are all the certificate needs.  Models fitted on the same rows (one per label) get them
together, K(X, X_sv) B + b for the matrix B of every label's beta, a block of rows at a
time (:func:`svc_training_scores`).  The optimality measure is
LIBSVM's own stopping quantity ``max_{I_up} -y_i g_i - min_{I_low} -y_i g_i`` with the
dual gradient g_i = y_i (f_i - b) - 1 (its ``eps``, scikit-learn's ``tol``).

**LIBLINEAR's primal problems** (``LinearSVC`` and ``LogisticRegression(solver=
"liblinear")``; Fan et al. 2008), the bias regularised as the weight of a constant
feature (``intercept_scaling = s``: x~_i = [x_i, s], w~ = [w, b / s])::

    L2-loss SVM:  P = 1/2 ||w~||^2 + C sum_i xi_i^2
    logistic:     P = 1/2 ||w~||^2 + C sum_i log(1 + exp(-y_i f_i))

Both duals are over the box alone (no equality: the bias is a weight), so the dual point
read off the primal residuals is feasible::

    L2-loss SVM:  alpha_i = 2 C xi_i,
                  D = sum_i alpha_i - 1/2 ||X~^T (alpha y)||^2 - sum_i alpha_i^2 / (4 C)
    logistic:     alpha_i = C sigma(-y_i f_i) in (0, C),
                  D = -1/2 ||X~^T (alpha y)||^2 - sum_i [alpha_i log alpha_i + (C - alpha_i) log(C - alpha_i) - C log C]

(Hsieh et al. 2008, eq. 4; Yu, Huang & Lin 2011, eq. 3).  At the optimum
``w~ = X~^T (alpha y)``, where both gaps vanish; the optimality measure is the largest
entry of the primal gradient ``w~ - X~^T (alpha y)``.  With this dual point the gap is
exactly ``1/2 ||w~ - X~^T (alpha y)||^2``, half the squared primal gradient.

**Converged** means, for every binary problem, that the solver stopped on its own rule
within its iteration budget *and* that the certified relative gap meets the
certificate's tolerance::

    (P - D) / max(1, |P|) <= GAP_RTOL = 1e-3,

so the objective is certified within 0.1% of the optimum (P - P* <= P - D).  The
solvers' own rules promise nothing of the kind.  LIBSVM's ``m(alpha) - M(alpha) <= tol``
bounds each of the n terms ``alpha_i (y_i f_i - 1) + C xi_i`` of the C-SVC gap by
``C tol`` (b lies between m and M), so the gap by ``n C tol``: a bound relative to P(0) =
C n, the objective of the zero model, which at a large C is far above P (at C = 1e97 the
gap measured P itself, a vacuous dual point).  LIBLINEAR's rules (the projected gradient
of the dual, or the primal gradient relative to the one at w = 0) stop on badly scaled
features with gaps many orders above P.  The relative gap of LIBSVM's solutions falls in
proportion to ``tol``, so a fit reported not converged is certified by a smaller ``tol``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy

from multilabel_core.certificate import GAP_RTOL, Certificate
from multilabel_core.validation import ConvergenceWarning

__all__ = [
    "GAP_RTOL",
    "Objectives",
    "certificate",
    "liblinear_objectives",
    "libsvm_objectives",
    "objectives",
    "svc_training_scores",
]

# LIBSVM clips a variable exactly to its bound; this margin only guards the comparison.
_AT_BOUND = 1e-12

#: Kernel entries computed at once by :func:`svc_training_scores` (32 MB of float64).
BLOCK_ENTRIES = 2**22


class Objectives(NamedTuple):
    """Hold what one binary model's certificate is made of.

    Parameters
    ----------
    primal : float
        The primal objective P at the fitted model (module docstring).
    dual : float
        The dual objective D at the feasible dual point read off the model; P - D >= 0.
    kkt_violation : float
        The optimality measure: LIBSVM's ``max_{I_up} - min_{I_low}`` of ``-y_i g_i`` for a
        C-SVC, the largest entry of the primal gradient for LIBLINEAR's problems.
    n_iter : int
        The solver's iterations.
    budget_hit : bool
        The solver stopped on its iteration limit, not on its own rule.
    """

    primal: float
    dual: float
    kkt_violation: float
    n_iter: int
    budget_hit: bool

    @property
    def gap(self) -> float:
        """The duality gap, primal minus dual."""
        return self.primal - self.dual

    @property
    def gap_tol(self) -> float:
        """The largest gap that certifies the model: ``GAP_RTOL * max(1, |P|)``."""
        return GAP_RTOL * max(1.0, abs(self.primal))

    @property
    def converged(self) -> bool:
        """Stopped on the solver's own rule and certified: the gap (finite) within ``gap_tol``."""
        return not self.budget_hit and bool(self.gap <= self.gap_tol)


def objectives(model, X, signs) -> Objectives:
    """Compute the :class:`Objectives` of a fitted ``SVC``, ``LinearSVC`` or liblinear ``LogisticRegression``.

    Parameters
    ----------
    model : sklearn.svm.SVC, sklearn.svm.LinearSVC or sklearn.linear_model.LogisticRegression
        A binary model fitted on ``X`` and ``signs`` (a logistic regression by liblinear).
    X : ndarray or sparse matrix of shape (n, n_features)
        Its training rows.
    signs : ndarray of shape (n,)
        Its training targets y_i in {-1, +1}.

    Returns
    -------
    Objectives
        The primal, dual and optimality measure of the model's problem: C-SVC's
        (:func:`libsvm_objectives`) for a model with ``dual_coef_``, else LIBLINEAR's
        (:func:`liblinear_objectives`) with the model's loss.
    """
    if hasattr(model, "dual_coef_"):
        return libsvm_objectives(model, model.decision_function(X), signs)
    # LinearSVC names its loss; LogisticRegression's is the logistic loss.
    return liblinear_objectives(model, X, signs, loss=getattr(model, "loss", "logistic"))


def _beta(svc) -> np.ndarray:
    """beta_s = y_s alpha_s of the support vectors (fitted on sparse X, scikit-learn keeps them sparse)."""
    return svc.dual_coef_.toarray().ravel() if sp.issparse(svc.dual_coef_) else svc.dual_coef_.ravel()


def svc_training_scores(models, X) -> np.ndarray:
    """Compute the scores on their training rows X of SVCs fitted on X with one kernel (one per label).

    Parameters
    ----------
    models : sequence of sklearn.svm.SVC
        L fitted binary SVCs, all on the rows ``X`` with the same kernel and kernel settings
        (those of ``models[0]`` are used).
    X : ndarray or sparse matrix of shape (n, n_features)
        The training rows every model was fitted on.

    Returns
    -------
    ndarray of shape (n, L)
        ``K(X, X_sv) B + b``: X_sv the rows that are a support vector of some model, B
        (n_sv, L) their beta's and b the models' intercepts; the kernel of scikit-learn's
        ``pairwise_kernels`` with the models' own settings (``_gamma`` is the width LIBSVM
        was given, after scikit-learn resolved "scale" or "auto"), computed
        :data:`BLOCK_ENTRIES` kernel entries at a time.
    """
    from sklearn.metrics.pairwise import pairwise_kernels

    first = models[0]
    B = np.zeros((X.shape[0], len(models)))
    for j, svc in enumerate(models):
        B[svc.support_, j] = _beta(svc)
    support = np.flatnonzero(B.any(axis=1))
    X_support, B = X[support], B[support]
    settings = {"gamma": first._gamma, "degree": first.degree, "coef0": first.coef0}
    settings = {name: value for name, value in settings.items() if name in _KERNEL_SETTINGS[first.kernel]}
    scores = np.empty((X.shape[0], len(models)))
    block = max(1, BLOCK_ENTRIES // max(1, len(support)))
    for start in range(0, X.shape[0], block):
        rows = slice(start, start + block)
        scores[rows] = pairwise_kernels(X[rows], X_support, metric=first.kernel, **settings) @ B
    return scores + np.array([svc.intercept_[0] for svc in models])


#: The settings each LIBSVM kernel takes, by scikit-learn's name.
_KERNEL_SETTINGS = {
    "linear": (),
    "rbf": ("gamma",),
    "poly": ("gamma", "degree", "coef0"),
    "sigmoid": ("gamma", "coef0"),
}


def libsvm_objectives(svc, scores, signs) -> Objectives:
    """Compute C-SVC's primal and dual (module docstring) at a fitted ``sklearn.svm.SVC`` from its training scores.

    Parameters
    ----------
    svc : sklearn.svm.SVC
        A binary C-SVC fitted on the rows the scores are of.
    scores : ndarray of shape (n,)
        Its decision function f_i on its n training rows (:func:`svc_training_scores`).
    signs : ndarray of shape (n,)
        The training targets y_i in {-1, +1}.

    Returns
    -------
    Objectives
        P and D of the C-SVC (module docstring), LIBSVM's stopping quantity as the
        optimality measure (clipped at 0), the iterations, and whether LIBSVM hit its budget
        (``fit_status_ != 0``).
    """
    C = float(svc.C)
    bias = float(svc.intercept_[0])
    beta = _beta(svc)
    alpha = np.zeros(len(signs))
    alpha[svc.support_] = np.abs(beta)
    w_squared = float(beta @ (scores[svc.support_] - bias))
    primal = 0.5 * w_squared + C * np.maximum(0.0, 1.0 - signs * scores).sum()
    dual = alpha.sum() - 0.5 * w_squared
    descent = signs - (scores - bias)  # -y_i g_i
    below_C, above_0 = alpha < C * (1.0 - _AT_BOUND), alpha > C * _AT_BOUND
    up = np.where(signs > 0, below_C, above_0)
    low = np.where(signs > 0, above_0, below_C)
    violation = descent[up].max(initial=-np.inf) - descent[low].min(initial=np.inf)
    return Objectives(
        primal=float(primal),
        dual=float(dual),
        kkt_violation=max(0.0, float(violation)),
        n_iter=int(np.sum(svc.n_iter_)),
        budget_hit=svc.fit_status_ != 0,
    )


def liblinear_objectives(model, X, signs, loss: str) -> Objectives:
    """Compute the L2-loss SVM's or logistic regression's primal and dual (module docstring).

    Parameters
    ----------
    model : sklearn.svm.LinearSVC or sklearn.linear_model.LogisticRegression
        A binary model fitted by LIBLINEAR on ``X`` and ``signs``; its ``intercept_scaling``
        gives the bias's constant feature when it fits an intercept.
    X : ndarray or sparse matrix of shape (n, n_features)
        Its training rows.
    signs : ndarray of shape (n,)
        Its training targets y_i in {-1, +1}.
    loss : {"squared_hinge", "logistic"}
        The L2-loss SVM's squared hinge or the logistic loss.

    Returns
    -------
    Objectives
        P and D at the dual point read off the primal residuals, the largest entry of the
        primal gradient as the optimality measure, the iterations, and whether they reached
        ``max_iter``.

    Raises
    ------
    ValueError
        If ``loss`` is neither ``"squared_hinge"`` nor ``"logistic"``.
    """
    if loss not in ("squared_hinge", "logistic"):
        raise ValueError(f"loss must be 'squared_hinge' or 'logistic', got {loss!r}")
    C = float(model.C)
    scale = float(model.intercept_scaling) if model.fit_intercept else 0.0
    w = np.append(model.coef_.ravel(), model.intercept_[0] / scale if scale else 0.0)
    scores = np.asarray(X @ w[:-1]).ravel() + w[-1] * scale
    margins = signs * scores
    if loss == "squared_hinge":
        slack = np.maximum(0.0, 1.0 - margins)
        alpha = 2.0 * C * slack
        primal_loss = C * np.sum(slack**2)
        dual_terms = alpha.sum() - np.sum(alpha**2) / (4.0 * C)
    else:
        alpha = C * expit(-margins)
        primal_loss = C * np.logaddexp(0.0, -margins).sum()
        dual_terms = -np.sum(xlogy(alpha, alpha) + xlogy(C - alpha, C - alpha) - xlogy(C, C))
    weighted = alpha * signs
    expansion = np.append(
        np.asarray(X.T @ weighted).ravel() if sp.issparse(X) else X.T @ weighted, scale * weighted.sum()
    )
    primal = 0.5 * (w @ w) + primal_loss
    dual = dual_terms - 0.5 * (expansion @ expansion)
    return Objectives(
        primal=float(primal),
        dual=float(dual),
        kkt_violation=float(np.abs(w - expansion).max()),
        n_iter=int(np.max(model.n_iter_)),
        budget_hit=bool(np.max(model.n_iter_) >= model.max_iter),
    )


def certificate(parts, solver: str, time: float, method: str) -> Certificate:
    """Build one certificate for a model made of independent binary problems (their sum).

    The problems share no variable, so the model's objective is the sum of theirs, and
    so is its dual; the optimality measure is the worst one.

    Parameters
    ----------
    parts : iterable of Objectives
        The binary problems' objectives (at least one).
    solver : str
        The solver's name the certificate reports (e.g. ``"libsvm"``).
    time : float
        The fit's wall time in seconds.
    method : str
        The method's name, used in the warning.

    Returns
    -------
    Certificate
        The summed primal and dual, the worst optimality measure, the summed iterations;
        ``converged`` needs every problem converged (:attr:`Objectives.converged`).
        ``statistics``: ``n_problems``, the largest relative gap of a single one
        (``max_relative_gap``), the tolerance it is held to (``gap_rtol``,
        :data:`GAP_RTOL`), ``n_above_gap_tol`` (problems above it) and ``n_budget_hit``
        (problems that stopped on max_iter).

    Warns
    -----
    ConvergenceWarning
        When a problem has not converged, with the number above the gap tolerance and the
        number that stopped on max_iter, of how many, naming ``method``.
    """
    parts = list(parts)
    relative = [p.gap / max(1.0, abs(p.primal)) for p in parts]
    above = sum(1 for p in parts if not p.gap <= p.gap_tol)
    budget_hits = sum(1 for p in parts if p.budget_hit)
    converged = all(p.converged for p in parts)
    if not converged:
        # Not warn_not_converged: its advice to loosen tol is the opposite of what a gap above GAP_RTOL needs.
        warnings.warn(
            f"{method} ({solver}) did not converge: {above} of {len(parts)} binary problems have a relative duality "
            f"gap above {GAP_RTOL:g} (the largest {max(relative):.3g}) and {budget_hits} of {len(parts)} stopped "
            f"on max_iter. Standardize the features, use a smaller tol (the gap falls with it) or a larger max_iter.",
            ConvergenceWarning,
            stacklevel=5,  # the caller of fit: certificate <- _fit <- _validated_fit <- fit
        )
    return Certificate.from_objectives(
        sum(p.primal for p in parts),
        sum(p.dual for p in parts),
        kkt_violation=max(p.kkt_violation for p in parts),
        n_iter=sum(p.n_iter for p in parts),
        time=time,
        converged=converged,
        solver=solver,
        statistics={
            "n_problems": len(parts),
            "max_relative_gap": max(relative),
            "gap_rtol": GAP_RTOL,
            "n_above_gap_tol": above,
            "n_budget_hit": budget_hits,
        },
    )
