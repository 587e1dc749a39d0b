"""MLRL, SSMLRL and BSVM (Zhang & Yeung, Multi-Label Relationship Learning, ACM TKDD).

Notation of the paper.  n training rows x_i, m labels, y_i^j in {-1, +1}, K the kernel
matrix of the training rows, Omega the (m, m) label covariance, lambda > 0.

Each method is a preset of :class:`~multilabel_core.ComposedEstimator`: its parts by
name in ``PARTS`` (what the registry's MethodSpec shows), built from the method's own
hyper-parameters; the fit, the warm start, prediction and the certificates are the core's.

- **MLRL** (section 2), problem (6)::

      min_{W, b, Omega}  1/n sum_ij [1 - y_i^j (w_j^T phi(x_i) + b_j)]_+  +  lambda/2 tr(W Omega^-1 W^T)
      s.t.  Omega > 0,  tr(Omega) = 1,

  solved by alternating SMO on the dual (10) for W, b (Omega fixed; warm-started from
  the previous alphas) and the closed form ``Omega = (W^T W)^(1/2) / tr(.)`` of
  problem (11), from Omega = I/m
  (the core's :class:`~multilabel_core.solvers.AlternatingSolver` over
  :class:`~multilabel_core.solvers.SMOSolver`).
- **BSVM** (section 3): Omega fixed to I, i.e. m binary SVMs, eq. (12); solved jointly in
  one SMO call on the shared kernel.
- **SSMLRL** (section 4), problem (14): MLRL on the labelled rows with the data-dependent
  kernel k' of eq. (22) (:class:`~.kernel.DataDependentKernel`), lambda = lambda_1.

Scaling.  Problem (6) divided by lambda is the SMO primal with ``Omega~ = Omega`` and the
box ``C = 1/(n lambda)`` (multilabel_core.solvers.smo); the paper's dual variables (box
1/n) are lambda times the solver's.  The certificates are in the solver's units (their
primal is objective (6) / lambda); ``objective_history_`` is in the paper's units.

Prediction (section 2.3): ``t_* = Omega~ (M * Y)^T k_*^T + b`` with Omega~ = Omega /
lambda and M the paper's alphas, i.e. ``t = K(X_new, X_fit_) dual_coef_ + intercept_``
with ``dual_coef_ = (alpha_ * Y) Omega / lambda``, computed in row blocks.
"""

from __future__ import annotations

import numpy as np

from multilabel_core import make_component
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import PrecomputedKernel, make_kernel
from multilabel_core.parallel import blas_limited
from multilabel_core.solvers import check_smo_tol
from multilabel_core.validation import POSITIVE, Rule, check_X

from .kernel import DataDependentKernel, stack_rows

__all__ = ["BSVM", "MLRL", "SSMLRL"]

#: MLRL's parts (SSMLRL's too: its kernel is the data-dependent k' built on this one).
MLRL_PARTS = {
    "loss": "hinge",
    "regularizer": "label_covariance",
    "relation": "learned_covariance",
    "kernel": "rbf",
    "solver": "alternating",
}
#: BSVM's parts: MLRL with Omega = I, one SMO solve.
BSVM_PARTS = dict(MLRL_PARTS, regularizer="frobenius", relation="independent", solver="smo")


class _PaperScaled(ComposedEstimator):
    """What the family shares: the loss averaged over the n rows, lambda, SMO, and alpha_ in the paper's scaling.

    Problem (6) divided by lambda is the core's Problem with C = 1/(n lambda); the paper's
    dual variables (box 1/n) are lambda times the solver's, and its objective lambda times
    the Problem's.  Fitted attributes beside the core's: ``alpha_`` (n, m), the dual
    variables of (10) in the paper's scaling (0 <= alpha <= 1/n): SMO declares its duals a
    fitted attribute in the objective's units, which the core stores times :meth:`_objective_scale`.
    """

    _parameter_constraints = {"cache_size": POSITIVE}

    def _lam(self) -> float:
        return float(self.lam)

    def _cost(self, n_samples: int) -> float:
        return 1.0 / (n_samples * self._lam())

    def _objective_scale(self) -> float:
        return self._lam()

    def _cost_name(self, n_samples: int) -> str:
        lam = "lam1" if "lam1" in self.get_params(deep=False) else "lam"
        return f"C = 1/(n {lam}) (n = {n_samples} rows, {lam} = {self._lam()!r})"

    def _smo(self, tol, max_iter=None):
        return make_component(
            "solver", "smo", tol=tol, max_iter=max_iter, cache_size=float(self.cache_size),
            n_jobs=getattr(self, "n_jobs", None),
        )

    def _build(self, **solver) -> dict:
        """The PARTS by name, the kernel from the ``kernel``/``gamma`` parameters, the given solver."""
        parts = {role: make_component(role, name) for role, name in self.PARTS.items() if role not in ("kernel", "solver")}
        return parts | {"kernel": make_kernel(self.kernel, self.gamma), **solver}

    def _kernel_data(self, X, kernel):
        """The kernel matrix once per fit when it fits ``cache_size`` (SMO needs it, even for a linear kernel).

        Never for a kernel with explicit features: SMO takes its columns from the features, in O(n m) memory.
        """
        if kernel.precomputed or getattr(kernel, "explicit_features", False):
            return X, kernel
        if 8.0 * X.shape[0] ** 2 > float(self.cache_size) * 2**20:
            return X, kernel
        return kernel(X), PrecomputedKernel()


class _RelationLearner(_PaperScaled):
    """MLRL's alternating fit (shared with SSMLRL, which changes the kernel)."""

    PARTS = MLRL_PARTS
    CERTIFICATE_PER_STEP = True
    _parameter_constraints = {"smo_tol": Rule(check_smo_tol, "SMO's tolerance, at least its floor SMO_TOL_FLOOR")}

    def _parts(self) -> dict:
        alternating = make_component(
            "solver", "alternating", inner=self._smo(self.smo_tol), tol=self.tol, max_iter=self.max_iter
        )
        return self._build(solver=alternating)

    def _fit(self, X, Y, **data) -> None:
        # BLAS held to one thread for the fit (restored after it).  Each relation step factorises a few
        # (L, L) matrices, outside SMO's own one-thread region; with OpenBLAS's threads on shared cores
        # those small calls cost far more than the fit on one thread (benchmarks/RESULTS.md, "No n^3
        # per step").
        with blas_limited(1):
            super()._fit(X, Y, **data)


class MLRL(_RelationLearner):
    """Multi-label relationship learning (registered as ``mlrl``; section 2, problem 6).

    Parameters
    ----------
    lam : float, default 1e-4
        lambda, the weight of ``1/2 tr(W Omega^-1 W^T)`` against the mean hinge loss.  The
        paper's candidate set starts at 0.01, which with the loss averaged over n rows
        over-regularises: at lambda = 0.1 MLRL predicted no label relevant on the Mulan
        emotions training file.  1e-4 was the best of {1e-4, 1e-3, 0.01} in micro-F1 in
        3-fold CV on the standardised training files of emotions, yeast and scene
        (docs/methods/mlrl.md, "Defaults").
    kernel : str or Kernel, default "rbf"
        Any registered kernel name ("rbf", "linear", "poly", "precomputed", or one a
        plugin registers) or a Kernel object.  With "precomputed", X is the kernel matrix
        (rows: these examples, columns: the training examples).
    gamma : float or None, default None
        RBF/polynomial gamma; None for the RBF means the paper's width (section 5.2):
        width = mean pairwise Euclidean distance of the training rows and
        ``k(x, z) = exp(-||x - z||^2 / (2 width^2))``.
    tol : float, default 1e-4
        What "converged" certifies: the relative joint duality gap of (W, b, Omega) for
        problem (6), ``(min_k U_k - max_k g_k) / max(1, |min_k U_k|)`` over the outer steps
        (``history["joint_gap"]``; the bounds are derived in
        :mod:`multilabel_core.solvers.alternating`), is at most ``tol``, and the alternation stops
        there.  The change of the objective decides nothing.  An objective increase between
        outer steps is discarded, counted (``statistics["objective_increases"]``) and, beyond
        ``tol``, warned (ConvergenceWarning); it is never taken for convergence.  SMO is
        tightened (to ``0.1 tol``, not below 1e-9) when a step's gap is coarser than the rule
        needs.  The alternation stops not converged, with a ConvergenceWarning naming the joint
        gap, when the objective stalls without the gap shrinking or after ``max_iter`` steps.
        At least ``TOL_FLOOR`` (8 float64 epsilons).
    max_iter : int, default 100
        Largest number of outer steps (SMO + Omega update).
    smo_tol : float, default 1e-3
        SMO's stopping tolerance (LIBSVM's eps) in each outer step; at least 1e-15 (``SMO_TOL_FLOOR``).
    cache_size : float, default 1024
        MB for the kernel matrix: computed once per fit when it fits, else columns are
        cached (LRU) by SMO.
    warm_start : bool, default False
        Start from the previous fit's alphas and Omega (same n and m; alphas rescaled to
        the new lambda's box and made feasible): a grid of lambdas fitted in order
        continues each fit.  A warm start changes the time only: the fit stops at the new
        problem's optimum to the same certificate as a cold fit (docs/methods/mlrl.md).
    n_jobs : int or None, default None
        Threads for the labels of an outer step whose Omega is diagonal (the first, Omega = I / m:
        its m SVMs are solved apart, side by side); the coupled steps are one joint SMO solve.
        None is the thread budget the caller leaves, -1 every core.  The model does not depend on it.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Attributes
    ----------
    label_covariance_ : (m, m) Omega, symmetric positive definite, trace 1 (the one the
        final W was solved with).
    label_correlation_ : (m, m) Omega normalised to unit diagonal.
    certificate_ : list of Certificate, one SMO certificate per outer step.
    objective_history_ : list of float, objective (6) after each outer step
        (non-increasing).
    joint_gap_history_ : list of float, after each outer step the relative gap between
        the best upper and lower bounds on the optimum of (6) itself (the dual of the
        joint problem, :mod:`multilabel_core.solvers.alternating`): how far the fit can
        be from the global optimum, whatever the path.
    n_iter_ : int, outer steps.
    alpha_, dual_coef_, intercept_, kernel_, X_fit_ : the model (see the module docstring).
    """

    def __init__(
        self, lam=1e-4, kernel="rbf", gamma=None, tol=1e-4, max_iter=100, smo_tol=1e-3, cache_size=1024.0,
        warm_start=False, n_jobs=None, thresholding="zero",
    ):  # fmt: skip
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.smo_tol = smo_tol
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.thresholding = thresholding


class SSMLRL(_RelationLearner):
    """Semi-supervised MLRL (registered as ``ssmlrl``; section 4, problem 14).

    ``fit(X, Y, X_unlabeled=None)``: X, Y the labelled rows, X_unlabeled the unlabelled
    ones (the experiment runner's ``semi_supervised`` protocol passes them).  The RBF width
    is the mean pairwise distance of the labelled and unlabelled rows together (section
    5.2).  The W-step is SMO on the dual (21), i.e. MLRL's dual with the data-dependent
    kernel ``K~_ll = K_ll - K_lu (lambda_1/lambda_2 I + K_uu)^-1 K_lu^T`` (eq. 22, a
    Cholesky solve); the Omega-step is the closed form with
    ``A = lambda_1 W^T W + lambda_2 F^T F``, which in the dual variables is
    ``A = lambda_1 D^T K~_ll D`` (D = dual coefficients of the labelled rows, see
    docs/methods/mlrl.md), so it is MLRL's update on K~.  New rows are predicted with k'
    (inductive), expanded as ``K(x, [X; X_unlabeled]) [D; Gamma-part]``.  Without
    unlabelled rows SSMLRL is MLRL with lambda = lambda_1.

    Parameters
    ----------
    lam1, lam2 : float, default 1e-4 and 1e-4
        (the scale of MLRL's default; rho = lambda_1 / lambda_2 = 1)
        lambda_1 (weight of ``tr(W Omega^-1 W^T)``) and lambda_2 (weight of
        ``tr(F Omega^-1 F^T)``, F the outputs on the unlabelled rows).
    kernel, gamma, tol, max_iter, smo_tol, cache_size, warm_start, n_jobs
        As :class:`MLRL`; a precomputed kernel cannot be combined with unlabelled rows
        (k' needs the kernel among them).
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: those of :class:`MLRL` (``alpha_`` over the labelled rows;
    ``X_fit_`` holds the labelled then the unlabelled rows), and ``n_unlabeled_``.
    """

    _parameter_constraints = {"lam1": POSITIVE, "lam2": POSITIVE}

    def __init__(
        self, lam1=1e-4, lam2=1e-4, kernel="rbf", gamma=None, tol=1e-4, max_iter=100, smo_tol=1e-3, cache_size=1024.0,
        warm_start=False, n_jobs=None, thresholding="zero",
    ):  # fmt: skip
        self.lam1 = lam1
        self.lam2 = lam2
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.smo_tol = smo_tol
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.thresholding = thresholding

    def fit(self, X, Y, X_unlabeled=None):
        """Fit on the labelled rows (X, Y) and the unlabelled rows ``X_unlabeled``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The labelled training rows.
        Y : array-like or sparse matrix of shape (n, L), 0/1
            Their labels.
        X_unlabeled : array-like or sparse matrix of shape (u, d), default None
            The unlabelled rows of the data-dependent kernel (eq. 22); None or zero rows fit
            MLRL with the base kernel alone.

        Returns
        -------
        SSMLRL
            The fitted estimator, ``self``.
        """
        return self._validated_fit(X, Y, X_unlabeled=X_unlabeled)

    def _lam(self) -> float:
        return float(self.lam1)

    def _training_kernel(self, kernel, X, X_unlabeled=None):
        """k' of eq. (22) on the base kernel resolved from all rows; the base kernel alone without unlabelled rows."""
        X_unlabeled = _unlabeled_rows(X_unlabeled, X.shape[1])
        if X_unlabeled is None:
            return kernel.resolve(X)
        if kernel.precomputed:
            raise ValueError(
                "SSMLRL cannot use a precomputed kernel with unlabelled rows: the data-dependent kernel (eq. 22) "
                "needs the kernel among the unlabelled rows; pass features"
            )
        base = kernel.resolve(stack_rows(X, X_unlabeled))
        return DataDependentKernel(base, X_unlabeled, float(self.lam1) / float(self.lam2))

    def _fit(self, X, Y, X_unlabeled=None) -> None:
        super()._fit(X, Y, X_unlabeled=X_unlabeled)
        self.n_unlabeled_ = 0
        if isinstance(self.kernel_, DataDependentKernel):
            # Predictions k'(x, X) D + b as an expansion in the base kernel: no solve at predict time.
            kernel = self.kernel_
            self.kernel_ = kernel.base
            self.X_fit_, self.dual_coef_ = kernel.expansion(X, self.dual_coef_)
            self.n_unlabeled_ = kernel.X_unlabeled.shape[0]


def _unlabeled_rows(X_unlabeled, n_features: int):
    """The validated unlabelled rows, or None when there are none (None or zero rows)."""
    if X_unlabeled is None:
        return None
    if np.ndim(X_unlabeled) == 2 and np.shape(X_unlabeled)[0] == 0:
        if np.shape(X_unlabeled)[1] != n_features:
            raise ValueError(f"X_unlabeled has {np.shape(X_unlabeled)[1]} features, X has {n_features}")
        return None
    X_unlabeled = check_X(X_unlabeled, name="X_unlabeled")
    if X_unlabeled.shape[1] != n_features:
        raise ValueError(f"X_unlabeled has {X_unlabeled.shape[1]} features, X has {n_features}")
    return X_unlabeled


class BSVM(_PaperScaled):
    """Binary SVMs for multi-label learning (registered as ``bsvm``; section 3, eq. 12).

    MLRL with Omega fixed to I: m independent SVMs ``1/n sum_i hinge + lambda/2 ||w_j||^2``,
    each solved by SMO on the shared kernel (label by label SVC with ``C = 1/(n lambda)``),
    side by side on ``n_jobs`` threads.

    Parameters
    ----------
    lam : float, default 1e-4
        lambda, as in :class:`MLRL` (the same default, for the same reason).
    kernel, gamma, cache_size, warm_start
        As :class:`MLRL`.
    tol : float, default 1e-3
        SMO's stopping tolerance (LIBSVM's eps).
    max_iter : int or None, default None
        Largest number of SMO steps, shared equally by the labels (None: ``max(10^7, 100 n m)``).
    n_jobs : int or None, default None
        Threads the m SVMs are solved on (each label's SMO apart, sharing the kernel matrix;
        a kernel too large for ``cache_size`` is cached by columns and its labels run one
        after the other).  None is the thread budget the caller leaves: every core in a
        plain fit, ``cores // workers`` inside the experiment runner or ``cross_validate``;
        -1 every core.  The model does not depend on it.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``certificate_`` (the SMO certificate), ``n_iter_`` (SMO steps),
    ``alpha_``, ``dual_coef_`` (= ``alpha_ * Y / lambda``), ``intercept_``, ``kernel_``,
    ``X_fit_``.
    """

    PARTS = BSVM_PARTS

    def __init__(
        self, lam=1e-4, kernel="rbf", gamma=None, tol=1e-3, max_iter=None, cache_size=1024.0, warm_start=False,
        n_jobs=None, thresholding="zero",
    ):
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.thresholding = thresholding

    def _parts(self) -> dict:
        return self._build(solver=self._smo(self.tol, self.max_iter))
