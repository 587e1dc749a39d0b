"""MLRL, SSMLRL and BSVM (Zhang & Yeung, Multi-Label Relationship Learning, ACM TKDD).

Notation (seed 000).  n training rows x_i, m labels, y_i^j in {-1, +1}, K the kernel
matrix of the training rows, Omega the (m, m) label covariance, lambda > 0.

- **MLRL** (section 2), problem (6)::

      min_{W, b, Omega}  1/n sum_ij [1 - y_i^j (w_j^T phi(x_i) + b_j)]_+  +  lambda/2 tr(W Omega^-1 W^T)
      s.t.  Omega > 0,  tr(Omega) = 1,

  solved by alternating SMO on the dual (10) for W, b (Omega fixed; warm-started from
  the previous alphas) and the closed form ``Omega = (W^T W)^(1/2) / tr(.)`` of
  problem (11), from Omega = I/m
  (:class:`~multilabel_core.solvers.AlternatingSolver`).
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

from multilabel_core.validation import check_flag, check_scalar, check_X, to_signs
from multilabel_core.base import Problem, Solution
from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.kernels import PrecomputedKernel, make_kernel
from multilabel_core.losses import Hinge
from multilabel_core.regularizers import Frobenius, LabelCovariance
from multilabel_core.relations import Independent, LearnedCovariance, correlation_from_covariance
from multilabel_core.solvers import AlternatingSolver, SMOSolver, kernel_expansion

from .kernel import DataDependentKernel, stack_rows

__all__ = ["BSVM", "MLRL", "SSMLRL"]

_MEGABYTE = 2**20


class _KernelDualEstimator(MultiLabelEstimator):
    """What the three methods share: the training kernel, the SMO problem, warm starts, prediction.

    Fitted attributes common to all: ``kernel_`` (the resolved kernel), ``X_fit_``,
    ``dual_coef_`` (rows of X_fit_, m), ``intercept_`` (m,), ``alpha_`` (n, m), the dual
    variables of (10) in the paper's scaling (0 <= alpha <= 1/n).
    """

    def _validate_params(self) -> None:
        super()._validate_params()
        check_scalar(self.cache_size, "cache_size", low=0.0, low_inclusive=False)
        check_flag(self.warm_start, "warm_start")

    def _problem(self, X, signs, kernel, lam, regularizer, relation) -> Problem:
        """The SMO primal of problem (6) / lambda: C = 1/(n lambda).

        The kernel matrix is computed once here (it does not change between the W-steps)
        when its n^2 float64 values fit ``cache_size`` MB; otherwise SMO computes columns
        on demand into an LRU cache of that size at every W-step.
        """
        n = X.shape[0]
        if not kernel.precomputed and 8.0 * n * n <= self.cache_size * _MEGABYTE:
            X, kernel = kernel(X), PrecomputedKernel()
        return Problem(X, signs, Hinge(), regularizer, relation, kernel, C=1.0 / (n * lam), fit_intercept=True)

    def _smo(self, tol, max_iter=None) -> SMOSolver:
        return SMOSolver(tol=tol, max_iter=max_iter, cache_size_mb=float(self.cache_size))

    def _warm_start(self, signs, lam) -> Solution | None:
        """The previous fit's alphas (rescaled to the box 1/(n lambda)) and Omega, when ``warm_start`` applies.

        The rescaled alphas are a start only: they satisfy the new box and the equality
        constraints up to rounding (``alpha_ / lam`` can exceed ``1/(n lam)`` by an ulp),
        and the SMO solver moves them into the feasible set before it starts
        (``multilabel_core.solvers.smo._feasible``); the fit then goes on to the new
        problem's own optimum, so it ends where a cold fit does, to the solver's tolerance.
        """
        if not self.warm_start or getattr(self, "alpha_", None) is None or self.alpha_.shape != signs.shape:
            return None
        omega = getattr(self, "label_covariance_", np.eye(signs.shape[1]))
        alpha = self.alpha_ / lam
        return Solution(
            coef=None, intercept=self.intercept_, dual_coef=(alpha * signs) @ omega, relation=omega, dual=alpha
        )

    def _store(self, kernel, X_fit, solution, lam) -> None:
        """Prediction attributes, and ``alpha_`` = lambda * SMO's alpha (the paper's scaling)."""
        self.alpha_ = lam * solution.dual
        # A copy: the caller's array may change after fit, and predicting on the very array
        # the model holds would take another BLAS path (numpy's X @ X.T is a rank-k update).
        self.kernel_, self.X_fit_ = kernel, X_fit.copy()
        self.dual_coef_, self.intercept_ = solution.dual_coef, solution.intercept

    def _decision_function(self, X) -> np.ndarray:
        return kernel_expansion(self.kernel_, X, self.X_fit_, self.dual_coef_, self.intercept_)


class _RelationLearner(_KernelDualEstimator):
    """MLRL's alternating fit (shared with SSMLRL, which changes the kernel)."""

    def _validate_params(self) -> None:
        super()._validate_params()
        check_scalar(self.smo_tol, "smo_tol", low=0.0, low_inclusive=False)

    def _fit_relation(self, X, Y, kernel, lam) -> None:
        signs = to_signs(Y)
        relation = LearnedCovariance()
        problem = self._problem(X, signs, kernel, lam, LabelCovariance(relation.initial(Y.shape[1])), relation)
        solver = AlternatingSolver(inner=self._smo(self.smo_tol), max_iter=self.max_iter, tol=self.tol)
        result = solver.run(problem, warm_start=self._warm_start(signs, lam))
        self._store(kernel, X, result.solution, lam)
        self.label_covariance_ = result.solution.relation
        self.label_correlation_ = correlation_from_covariance(self.label_covariance_)
        self.certificate_ = result.certificates
        self.objective_history_ = [lam * objective for objective in result.objectives]
        self.joint_gap_history_ = result.joint_gap_history
        self.n_iter_ = len(result.certificates)


class MLRL(_RelationLearner):
    """Multi-label relationship learning (registered as ``mlrl``; section 2, problem 6).

    Parameters
    ----------
    lam : float, default 0.1
        lambda, the weight of ``1/2 tr(W Omega^-1 W^T)`` against the mean hinge loss.
    kernel : {"rbf", "linear", "poly", "precomputed"} or Kernel, default "rbf"
        With "precomputed", X is the kernel matrix (rows: these examples, columns: the
        training examples).
    gamma : float or None, default None
        RBF/polynomial gamma; None for the RBF means the paper's width (section 5.2):
        width = mean pairwise Euclidean distance of the training rows and
        ``k(x, z) = exp(-||x - z||^2 / (2 width^2))``.
    tol : float, default 1e-4
        Stop when objective (6) changes by at most ``tol`` relatively between outer steps.
    max_iter : int, default 100
        Largest number of outer steps (SMO + Omega update).
    smo_tol : float, default 1e-3
        SMO's stopping tolerance (LIBSVM's eps) in each outer step.
    cache_size : float, default 1024
        MB for the kernel matrix: computed once per fit when it fits, else columns are
        cached (LRU) by SMO.
    warm_start : bool, default False
        Start from the previous fit's alphas and Omega (same n and m; alphas rescaled to
        the new lambda's box and made feasible): a grid of lambdas fitted in order
        continues each fit.  A warm start changes the time only: the fit stops at the new
        problem's optimum to the same certificate as a cold fit (docs/methods/mlrl.md).

    Fitted attributes
    -----------------
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
        self, lam=0.1, kernel="rbf", gamma=None, tol=1e-4, max_iter=100, smo_tol=1e-3, cache_size=1024.0,
        warm_start=False,
    ):  # fmt: skip
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.smo_tol = smo_tol
        self.cache_size = cache_size
        self.warm_start = warm_start

    def _fit(self, X, Y) -> None:
        self._fit_relation(X, Y, make_kernel(self.kernel, self.gamma).resolve(X), float(self.lam))


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
    lam1, lam2 : float, default 0.1 and 1.0
        lambda_1 (weight of ``tr(W Omega^-1 W^T)``) and lambda_2 (weight of
        ``tr(F Omega^-1 F^T)``, F the outputs on the unlabelled rows).
    kernel, gamma, tol, max_iter, smo_tol, cache_size, warm_start
        As :class:`MLRL`; a precomputed kernel cannot be combined with unlabelled rows
        (k' needs the kernel among them).

    Fitted attributes: those of :class:`MLRL` (``alpha_`` over the labelled rows;
    ``X_fit_`` holds the labelled then the unlabelled rows), and ``n_unlabeled_``.
    """

    def __init__(
        self, lam1=0.1, lam2=1.0, kernel="rbf", gamma=None, tol=1e-4, max_iter=100, smo_tol=1e-3, cache_size=1024.0,
        warm_start=False,
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

    def fit(self, X, Y, X_unlabeled=None):
        """Fit on the labelled rows (X, Y) and the unlabelled rows ``X_unlabeled`` (u, d); return ``self``."""
        return self._validated_fit(X, Y, X_unlabeled=X_unlabeled)

    def _validate_params(self) -> None:
        super()._validate_params()
        for name in ("lam1", "lam2"):
            check_scalar(getattr(self, name), name, low=0.0, low_inclusive=False)

    def _fit(self, X, Y, X_unlabeled=None) -> None:
        X_unlabeled = _unlabeled_rows(X_unlabeled, X.shape[1])
        base = make_kernel(self.kernel, self.gamma)
        if X_unlabeled is None:
            self._fit_relation(X, Y, base.resolve(X), float(self.lam1))
            self.n_unlabeled_ = 0
            return
        if base.precomputed:
            raise ValueError(
                "SSMLRL cannot use a precomputed kernel with unlabelled rows: the data-dependent kernel (eq. 22) "
                "needs the kernel among the unlabelled rows; pass features"
            )
        base = base.resolve(stack_rows(X, X_unlabeled))
        kernel = DataDependentKernel(base, X_unlabeled, float(self.lam1) / float(self.lam2))
        self._fit_relation(X, Y, kernel, float(self.lam1))
        # Predictions k'(x, X) D + b as an expansion in the base kernel: no solve at predict time.
        self.kernel_ = base
        self.X_fit_, self.dual_coef_ = kernel.expansion(X, self.dual_coef_)
        self.n_unlabeled_ = X_unlabeled.shape[0]


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


class BSVM(_KernelDualEstimator):
    """Binary SVMs for multi-label learning (registered as ``bsvm``; section 3, eq. 12).

    MLRL with Omega fixed to I: m independent SVMs ``1/n sum_i hinge + lambda/2 ||w_j||^2``,
    solved jointly in one SMO call on the shared kernel (label by label SVC with
    ``C = 1/(n lambda)``).

    Parameters
    ----------
    lam : float, default 0.1
        lambda, as in :class:`MLRL`.
    kernel, gamma, cache_size, warm_start
        As :class:`MLRL`.
    tol : float, default 1e-3
        SMO's stopping tolerance (LIBSVM's eps).
    max_iter : int or None, default None
        Largest number of SMO steps (None: ``max(10^7, 100 n m)``).

    Fitted attributes: ``certificate_`` (the SMO certificate), ``n_iter_`` (SMO steps),
    ``alpha_``, ``dual_coef_`` (= ``alpha_ * Y / lambda``), ``intercept_``, ``kernel_``,
    ``X_fit_``.
    """

    def __init__(self, lam=0.1, kernel="rbf", gamma=None, tol=1e-3, max_iter=None, cache_size=1024.0, warm_start=False):
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.warm_start = warm_start

    def _fit(self, X, Y) -> None:
        lam = float(self.lam)
        signs = to_signs(Y)
        kernel = make_kernel(self.kernel, self.gamma).resolve(X)
        problem = self._problem(X, signs, kernel, lam, Frobenius(), Independent())
        solution, self.certificate_ = self._smo(self.tol, self.max_iter).solve(
            problem, warm_start=self._warm_start(signs, lam)
        )
        self._store(kernel, X, solution, lam)
        self.n_iter_ = self.certificate_.n_iter
