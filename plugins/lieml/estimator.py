"""LIEML: label enhancement with a low-rank subspace, then a multi-output SVR (registered as ``lieml``).

Tao, Xu & Geng, *Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace*.
Training (Algorithm 1): the numerical labels U minimise T1 (eq. 6) over the stacked matrix
[U; X^; 1^T] (:mod:`.enhancement`, FPC with singular value shrinkage); the predictor
f_j(x) = sum_i beta_ij k(x_i, x) + m_j minimises T2 (eq. 8), the epsilon-insensitive loss on
the residual norm plus the sign hinge, by IRWLS (:func:`multilabel_core.solvers.irwls_msvr`).
Prediction: label j is relevant iff f_j(x) > 0; ranking by f.
"""

from __future__ import annotations

import numbers

from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import make_kernel
from multilabel_core.parallel import blas_limited
from multilabel_core.plugins import make_component
from multilabel_core.solvers import SVT_METHODS
from multilabel_core.validation import COUNT, MAX_ITER_LIMIT, POSITIVE, Cost, Flag, Interval, Options

__all__ = ["LIEML", "LIEMLRawLabels"]

#: The parts LIEML composes (also its MethodSpec's ``parts``): the tube loss Omega1 of T2, the norm
#: 1/2 sum ||theta_j||^2, label enhancement as the label relation, the RBF kernel, and the solver.
PARTS = {
    "loss": "epsilon_insensitive",
    "regularizer": "frobenius",
    "relation": "label_enhancement",
    "kernel": "rbf",
    "solver": "lieml_irwls",
}

#: The same regressor on the logical labels (no enhancement): the ablation of the reproduction.
RAW_PARTS = PARTS | {"relation": "independent"}


class _Regressor(ComposedEstimator):
    """The parts shared by LIEML and its raw-label ablation: T2 by IRWLS on an RBF kernel."""

    #: T2 has the bias m (eq. 8); not a parameter.
    fit_intercept = True

    # IRWLS's settings are required here (no None: the family's defaults are its own).
    _parameter_constraints = {
        "gamma1": Cost(),
        "gamma2": Interval(numbers.Real, 0.0, 1e100),
        "epsilon": Interval(numbers.Real, 0.0, 1e100),
        "tol": POSITIVE,
        "max_iter": COUNT,
    }

    def _regressor_parts(self) -> dict:
        return {
            "loss": make_component("loss", "epsilon_insensitive", epsilon=float(self.epsilon)),
            "regularizer": make_component("regularizer", "frobenius"),
            "kernel": make_kernel(self.kernel, self.gamma),
            "solver": make_component(
                "solver", "lieml_irwls", gamma2=float(self.gamma2), tol=float(self.tol), max_iter=int(self.max_iter)
            ),
        }

    def _cost(self, n_samples: int) -> float:
        return float(self.gamma1)

    def _cost_name(self, n_samples: int) -> str:
        return "gamma1"

    def _fit(self, X, Y, **data):
        # BLAS held to one thread for the fit (threadpoolctl; the caller's setting is restored
        # after it): label enhancement (which pins it itself) and the IRWLS steps are many small
        # BLAS-3 and LAPACK calls, which OpenBLAS's threads slow down on few cores (measured:
        # benchmarks/RESULTS.md, "Timings behind code comments").
        with blas_limited(1):
            super()._fit(X, Y, **data)

    def _kernel_data(self, X, kernel):
        # The solver needs the raw rows (label enhancement stacks them); it computes the kernel matrix itself.
        return X, kernel

    def _decision_function(self, X):
        # On explicit features the model is the primal one the certificate is about: phi(x)^T Theta + m, in
        # O(p t) a row (the expansion in the training rows would cost O(n p) a row and equal it to round-off).
        Theta = getattr(self, "feature_coef_", None)
        if Theta is not None and getattr(self.kernel_, "explicit_features", False):
            return self.kernel_.features(X) @ Theta + self.intercept_
        return super()._decision_function(X)


class LIEML(_Regressor):
    """Labeling information enhancement for multi-label learning (registered as ``lieml``).

    Parameters
    ----------
    lam : float, default 1.0
        lambda of T1 (eq. 4, 6), the weight of the logistic label term; the paper chooses it in
        {0.1, 1, 10, 100} (the registered grid).
    gamma1, gamma2 : float, default 1.0 and 0.1
        The weights of Omega1 and Omega2 in T2 (eq. 8), the paper's values.
    epsilon : float >= 0, default 0.1
        The radius of the insensitive tube of Omega1 (eq. 9).  The paper never gives it (it uses
        the same letter for its 1e-5 tolerance); 0.1 is the usual MSVR default, and the grid adds 1.
    kernel : str or Kernel, default "rbf"
        The kernel of the regressor, a registered name or a Kernel object.  With the exact RBF
        kernel each IRWLS iteration solves an (n + 1)-square system (O(n^3)); a kernel of explicit
        features, ``"nystroem"`` (landmarks of the RBF kernel) or ``"rff"`` (random Fourier
        features), or a :class:`~multilabel_core.kernel_approximation.NystroemKernel` object for
        another number of landmarks, is solved in the primal over its p features, a (p + 1)-square
        system per iteration (O(n p^2); :mod:`.primal`).
    gamma : float or None, default None
        The RBF kernel's gamma (also the one a Nystroem or Fourier approximation approximates);
        None: width = mean pairwise distance of the training rows (the
        core's convention; the paper gives no width).
    mu_min, eta_mu, stage_tol : float, default 1e-5, 0.25, 1e-5
        The continuation of FPC (paper values): mu_1 = eta_mu sigma_max(Z0), mu <- max(eta_mu mu,
        mu_min), a stage ends when |dT1| < stage_tol (the last also needs its certificate).
    fpc_max_iter : int, default 20000
        Shrinkage steps of label enhancement, over all stages.
    svt : {"auto", "gram", "full"}, default "auto"
        The shrinkage route (:func:`multilabel_core.solvers.singular_value_threshold`).
    accelerate : bool, default True
        Momentum with adaptive restart on the FPC steps (same fixed point; False: the paper's
        plain iteration).
    tol : float, default 1e-5
        IRWLS stops when T2 decreases by less than tol (the paper's rule).
    max_iter : int, default 500
        IRWLS iterations.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: enhanced_labels_ (n, t), the numerical labels U; enhancement_, the
    :class:`~.enhancement.LabelEnhancement` (``rank``, ``singular_values``, per-stage
    ``stages`` with mu, iterations and the T1 history, ``certificate``); rank_ : rank of Z;
    dual_coef_ (beta, (n, t)), intercept_ (m), X_fit_, kernel_; feature_coef_ (Theta, (p, t)) with
    a kernel of explicit features; certificate_ (T2's, converged only if enhancement's is too) and
    step_certificates_ (enhancement, regressor).
    """

    PARTS = PARTS
    _parameter_constraints = {
        "lam": Interval(numbers.Real, 0.0, 1e100, low_inclusive=False),
        # mu_min is a floor under the continuation's mu_1 = 0.25 sigma_max(Z0); 1e100 bounds it far above any data.
        "mu_min": Interval(numbers.Real, 0.0, 1e100, low_inclusive=False),
        "eta_mu": Interval(numbers.Real, 0.0, 1.0, low_inclusive=False, high_inclusive=False),
        "stage_tol": POSITIVE,
        "fpc_max_iter": Interval(numbers.Integral, 1, MAX_ITER_LIMIT),
        "svt": Options(SVT_METHODS),
        "accelerate": Flag(),
    }

    def __init__(
        self,
        lam=1.0,
        gamma1=1.0,
        gamma2=0.1,
        epsilon=0.1,
        kernel="rbf",
        gamma=None,
        mu_min=1e-5,
        eta_mu=0.25,
        stage_tol=1e-5,
        fpc_max_iter=20000,
        svt="auto",
        accelerate=True,
        tol=1e-5,
        max_iter=500,
        thresholding="zero",
    ):
        self.lam = lam
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.mu_min = mu_min
        self.eta_mu = eta_mu
        self.stage_tol = stage_tol
        self.fpc_max_iter = fpc_max_iter
        self.svt = svt
        self.accelerate = accelerate
        self.tol = tol
        self.max_iter = max_iter
        self.thresholding = thresholding

    def _parts(self) -> dict:
        relation = make_component(
            "relation", "label_enhancement", lam=self.lam, mu_min=self.mu_min, eta_mu=self.eta_mu,
            stage_tol=self.stage_tol, max_iter=self.fpc_max_iter, svt=self.svt, accelerate=self.accelerate,
        )  # fmt: skip
        parts = self._regressor_parts()
        if parts["kernel"].precomputed:
            # Refused at the boundary, as a parameter error: the solver's CapabilityError would come later.
            raise ValueError(
                "kernel='precomputed' cannot be used by LIEML: label enhancement stacks the raw rows X into "
                "[U; X; 1] (T1, eq. 6), which a kernel matrix hides; lieml_raw (no enhancement) takes one"
            )
        return parts | {"relation": relation}



class LIEMLRawLabels(_Regressor):
    """LIEML's regressor T2 on the logical labels, without enhancement (registered as ``lieml_raw``).

    The ablation that measures what label enhancement adds: the same IRWLS solve with the targets
    U = y in {-1, +1}.  The parameters are those of :class:`LIEML`'s regressor part.

    Parameters
    ----------
    gamma1, gamma2 : float, default 1.0 and 0.1
        The weights of Omega1 and Omega2 in T2 (eq. 8), as for :class:`LIEML`.
    epsilon : float >= 0, default 0.1
        The radius of the insensitive tube of Omega1 (eq. 9), as for :class:`LIEML`.
    kernel : str or Kernel, default "rbf"
        The kernel of the regressor, a registered name or a Kernel object.  With the exact RBF
        kernel each IRWLS iteration solves an (n + 1)-square system (O(n^3)); a kernel of explicit
        features, ``"nystroem"`` (landmarks of the RBF kernel) or ``"rff"`` (random Fourier
        features), or a :class:`~multilabel_core.kernel_approximation.NystroemKernel` object for
        another number of landmarks, is solved in the primal over its p features, a (p + 1)-square
        system per iteration (O(n p^2); :mod:`.primal`).
    gamma : float or None, default None
        The RBF kernel's gamma (also the one a Nystroem or Fourier approximation approximates);
        None: width = mean pairwise distance of the training rows.
    tol : float, default 1e-5
        IRWLS stops when T2 decreases by less than tol (the paper's rule).
    max_iter : int, default 500
        IRWLS iterations.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.
    """

    PARTS = RAW_PARTS

    def __init__(
        self, gamma1=1.0, gamma2=0.1, epsilon=0.1, kernel="rbf", gamma=None, tol=1e-5, max_iter=500, thresholding="zero"
    ):
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.thresholding = thresholding

    def _parts(self) -> dict:
        return self._regressor_parts() | {"relation": make_component("relation", "independent")}
