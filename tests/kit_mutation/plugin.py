"""A small third-party plugin written to mutation-test the testing kit: a linear per-label L2-SVM.

The method (registered as ``kit_svm``) fits, for every label j separately,

    min_{w_j, b_j}  1/2 (||w_j||^2 + b_j^2) + C sum_i max(0, 1 - y_ij (x_i^T w_j + b_j))^2,

the L2-loss SVM with the bias penalised as the weight of a constant feature (Hsieh, Chang, Lin,
Keerthi and Sundararajan, "A Dual Coordinate Descent Method for Large-scale Linear SVM", ICML 2008,
eq. 1 with the squared hinge).  It is written as a plugin author would write it from
docs/plugin-guide.md, with the public core API only:

* ``HalfSquaredNorm`` (the regulariser ``kit_half_squared_norm``): ``1/2 ||V||_F^2`` with its
  gradient, its conjugate and its proximal map ``prox(V, s) = V / (1 + s)``;
* ``ProximalGradient`` (the solver ``kit_proximal_gradient``): proximal gradient with a
  backtracking line search (Beck and Teboulle, "A Fast Iterative Shrinkage-Thresholding
  Algorithm for Linear Inverse Problems", SIAM J. Imaging Sciences 2009, the ISTA step of
  eq. 1.4 with backtracking as in their Section 3), for any smooth loss with a conjugate and any
  regulariser with a prox and a conjugate, certified by a Fenchel duality gap;
* ``KitSVM`` (the method ``kit_svm``): the preset composing them with the core's
  ``squared_hinge`` loss, ``independent`` relation and ``linear`` kernel.

tests/test_kit_mutation.py loads this file by path, registers it for its tests, and plants
bugs into copies of these classes (tests/kit_mutation/mutants.py).
"""

from __future__ import annotations

import numbers
import time

import attrs
import numpy as np
import scipy.sparse as sp

import multilabel_core
from multilabel_core import Certificate, ComponentSpec, ComposedEstimator, MethodSpec, make_component
from multilabel_core.base import CapabilityError, Fit, Regularizer, Solution, Solver
from multilabel_core.validation import check_scalar, warn_not_converged

#: Largest number of halvings of the step in one line search: 2^-60 of the first step is below
#: any curvature a float64 problem can have, so more halvings would only loop.
MAX_HALVINGS = 60


@attrs.frozen
class HalfSquaredNorm(Regularizer):
    """``Omega(V) = 1/2 ||V||_F^2``, with its conjugate ``1/2 ||Z||_F^2`` and ``prox(V, s) = V / (1 + s)``.

    The prox is the minimiser of ``1/2 ||Z - V||^2 + s/2 ||Z||^2``, whose gradient
    ``Z - V + s Z`` vanishes at ``Z = V / (1 + s)``.
    """

    smooth = True

    def value(self, W) -> float:
        W = np.asarray(W, dtype=np.float64)
        return 0.5 * float(np.vdot(W, W))

    def gradient(self, W) -> np.ndarray:
        return np.array(W, dtype=np.float64)

    def conjugate(self, V) -> float:
        """``sup_W <V, W> - 1/2 ||W||^2``, reached at ``W = V``."""
        V = np.asarray(V, dtype=np.float64)
        return 0.5 * float(np.vdot(V, V))

    def prox(self, W, step: float) -> np.ndarray:
        """``argmin_Z 1/2 ||Z - W||^2 + step Omega(Z)``."""
        return np.asarray(W, dtype=np.float64) / (1.0 + step)


class ProximalGradient(Solver):
    """Proximal gradient on ``Omega(V) + C loss(Y, A V)``, ``A = [X 1]`` (the bias a weight of a constant feature).

    Each step is ``V+ = prox(V - eta C A^T grad loss(A V), eta)``, its step ``eta`` halved until
    the smooth part lies below its quadratic model at ``V+`` (Beck and Teboulle 2009, Section 3),
    and doubled before the next step so that it can grow back.

    The certificate is the Fenchel duality gap at the dual point the gradient gives
    (Rockafellar, *Convex Analysis*, Theorem 31.1): with ``f(T) = C loss(Y, T)`` and
    ``U = -grad f(A V)`` (its sign-multiplied entries ``alpha = Y * U`` kept in the loss's
    ``dual_box(C)``),

        D(U) = -C loss*(Y, -U / C) - Omega*(A^T U)  <=  min P  <=  P(V),

    equal to ``P(V)`` exactly at the optimum.  The stopping rule is ``(P - D) / max(1, |P|) <=
    tol``, declared in the certificate's statistics as ``gap_rtol``; the KKT violation is the
    largest entry of the gradient mapping ``(V - prox(V - eta grad f, eta)) / eta``.
    """

    requires = {"loss": ("gradient", "conjugate", "dual_box", "smooth"),
                "regularizer": ("prox", "conjugate"), "kernel": ("linear",)}

    def __init__(self, tol=None, max_iter=None):
        # None reaches a plugin from an estimator's tol=None / max_iter=None: the defaults.
        self.tol = 1e-6 if tol is None else check_scalar(tol, "tol", low=0.0, low_inclusive=False)
        self.max_iter = 2_000 if max_iter is None else check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1)

    def check(self, problem) -> None:
        super().check(problem)
        if problem.relation.learned:
            raise CapabilityError(f"{type(self).__name__} solves per-label problems; a learned relation is refused")

    # -- the pieces a planted bug may replace ------------------------------------------------------

    def design(self, problem):
        """``A``: the training rows with a constant column when the scores carry a bias."""
        X = problem.X
        if not problem.fit_intercept:
            return X
        ones = np.ones((X.shape[0], 1))
        return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([np.asarray(X), ones])

    def start(self, problem, warm_start, shape) -> np.ndarray:
        """The first iterate: the warm start's weights (and bias), else zero."""
        if warm_start is None or warm_start.coef is None:
            return np.zeros(shape)
        V = np.asarray(warm_start.coef, dtype=np.float64)
        if problem.fit_intercept:
            V = np.vstack([V, np.asarray(warm_start.intercept, dtype=np.float64)[None, :]])
        return V.copy() if V.shape == shape else np.zeros(shape)

    def smooth_gradient(self, problem, A, V) -> np.ndarray:
        """The gradient of ``C loss(Y, A V)`` with respect to V."""
        return problem.C * np.asarray(A.T @ problem.loss.gradient(problem.Y, np.asarray(A @ V)))

    def dual_point(self, problem, T) -> np.ndarray:
        """``U = -C grad loss(Y, T)``, its entries ``Y * U`` kept in the loss's dual box."""
        lower, upper = problem.loss.dual_box(problem.C)
        alpha = np.clip(-problem.C * problem.Y * problem.loss.gradient(problem.Y, T), lower, upper)
        return alpha * problem.Y

    def objectives(self, problem, A, V) -> tuple[float, float]:
        """The primal ``P(V)`` and the dual ``D(U)`` at the dual point of ``V``."""
        T = np.asarray(A @ V)
        primal = problem.regularizer.value(V) + problem.C * problem.loss.value(problem.Y, T)
        U = self.dual_point(problem, T)
        dual = -problem.C * problem.loss.conjugate(problem.Y, -U / problem.C) - problem.regularizer.conjugate(
            np.asarray(A.T @ U))
        return float(primal), float(dual)

    def converged(self, primal, dual, decrease) -> bool:
        """The stopping rule: the relative duality gap within ``tol`` (``decrease``, the last step's, is not read)."""
        return (primal - dual) / max(1.0, abs(primal)) <= self.tol

    # -- the solve ---------------------------------------------------------------------------------

    def solve(self, problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        started = time.perf_counter()
        A = self.design(problem)
        V = self.start(problem, warm_start, (A.shape[1], problem.n_labels))
        regularizer, C, Y, loss = problem.regularizer, problem.C, problem.Y, problem.loss

        def smooth(V):
            return C * loss.value(Y, np.asarray(A @ V))

        eta, n_iter, decrease = 1.0, 0, np.inf
        primal, dual = self.objectives(problem, A, V)
        while not self.converged(primal, dual, decrease) and n_iter < self.max_iter:
            G, value = self.smooth_gradient(problem, A, V), smooth(V)
            for _ in range(MAX_HALVINGS):
                candidate = regularizer.prox(V - eta * G, eta)
                D = candidate - V
                if smooth(candidate) <= value + float(np.vdot(G, D)) + float(np.vdot(D, D)) / (2 * eta):
                    break
                eta /= 2
            V, eta, previous = candidate, 2 * eta, primal
            n_iter += 1
            primal, dual = self.objectives(problem, A, V)
            decrease = previous - primal
        G = self.smooth_gradient(problem, A, V)
        kkt = float(np.abs(V - regularizer.prox(V - eta * G, eta)).max()) / eta
        converged = self.converged(primal, dual, decrease)
        if not converged:
            warn_not_converged("kit_proximal_gradient", f"max_iter={self.max_iter} steps, relative gap "
                               f"{(primal - dual) / max(1.0, abs(primal)):.3g} > tol={self.tol:g}")
        certificate = Certificate.from_objectives(
            primal, dual, kkt_violation=kkt, n_iter=n_iter, time=time.perf_counter() - started, converged=converged,
            solver="kit_proximal_gradient", statistics={"gap_rtol": self.tol})
        coef, intercept = (V[:-1], V[-1]) if problem.fit_intercept else (V, np.zeros(problem.n_labels))
        return Fit(Solution(coef=np.ascontiguousarray(coef), intercept=intercept.copy()), certificate)


class KitSVM(ComposedEstimator):
    """Per-label L2-SVM (squared hinge, penalised bias) by the plugin's proximal gradient (``kit_svm``)."""

    PARTS = {"loss": "squared_hinge", "regularizer": "kit_half_squared_norm", "relation": "independent",
             "kernel": "linear", "solver": "kit_proximal_gradient"}

    def __init__(self, C=1.0, tol=None, max_iter=None, warm_start=False, thresholding="zero"):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.thresholding = thresholding

    def _parts(self) -> dict:
        parts = {role: make_component(role, self.PARTS[role]) for role in ("loss", "regularizer", "relation", "kernel")}
        return parts | {"solver": make_component("solver", self.PARTS["solver"], tol=self.tol, max_iter=self.max_iter)}


CITATION = ("Hsieh, Chang, Lin, Keerthi and Sundararajan, A Dual Coordinate Descent Method for Large-scale Linear "
            "SVM, ICML 2008 (the L2-loss SVM, eq. 1), solved by proximal gradient (Beck and Teboulle, SIAM J. "
            "Imaging Sciences 2009): a test plugin of the testing kit")


@multilabel_core.hookimpl
def register_components(register):
    register(ComponentSpec("regularizer", "kit_half_squared_norm", HalfSquaredNorm, description="1/2 ||V||_F^2"))
    register(ComponentSpec("solver", "kit_proximal_gradient", ProximalGradient,
                           description="proximal gradient with a Fenchel duality gap (testing-kit plugin)"))


@multilabel_core.hookimpl
def register_methods(register):
    register(MethodSpec(name="kit_svm", estimator=KitSVM, citation=CITATION, parts=KitSVM.PARTS,
                        param_grid={"C": [0.1, 1.0, 10.0]}))
