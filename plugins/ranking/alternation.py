"""The alternating minimisation of CLaRank SVM and of Algorithm 2's inner problem.

Gu, Li & Han (CIKM 2011), section 3.4.  For a working set of feature subsets
p_1, ..., p_T (rows of a (T, d) boolean matrix P; none means every feature, p = 1) with
weights lambda on the simplex, the kernel of eq. 18 is a re-weighting of the features,
``s = P^T lambda`` (docs/solvers/cd-ranking.md), and the inner problem of Algorithm 2 is
the primal (6) over (W, D, lambda)::

    min  J(W, D, lambda) = 1/2 sum_j w^j R (w^j)^T / s_j + 1/2 b R b^T
                           + C sum_i 1/(|y_i||ybar_i|) sum_{(k,l)} max(0, 1 - (w_k - w_l)^T x_i - b_k + b_l)

with w^j the j-th row of W (raw features; w^j = 0 where s_j = 0), b the biases and
R = I + mu D^-1.  It is minimised block by block, each block exactly:

1. **alpha-step** (W, b): Algorithm 1 for fixed (D, lambda), warm-started from the
   previous alpha (the dual box does not depend on D or lambda);
2. **lambda-step** (eq. 31): W, D fixed, ``h(lambda) = 1/2 sum_j a_j / s_j(lambda)``,
   a_j = w^j R (w^j)^T, is convex on the simplex; minimised from the current lambda by
   spectral projected gradient with the exact simplex projection (:func:`lambda_step`),
   to a Frank-Wolfe gap of LAMBDA_RTOL.  There dh/dlambda_t =
   -1/2 sum_{j in p_t} (V R^-1 V^T)_jj with V = X^T beta, eq. 31's gradient, because
   W = diag(s) V R^-1 (eq. 10);
3. **D-step** (Theorem 3.4): W, lambda fixed, the regulariser's trace term is
   ``mu/2 tr(D^-1 G)`` with ``G = sum_j (w^j)^T w^j / s_j + b^T b`` (W^T W of the
   re-weighted features), minimised over {D > 0, tr D = 1} by
   ``D = G^(1/2) / tr(G^(1/2))`` -- the relation's ``update`` (LearnedCovariance, kept
   positive definite by its epsilon I).

The paper orders the steps alpha, D, lambda; lambda before D lets the lambda-step use the
R^-1 of the alpha-step (a_j = s_j^2 (V R^-1 V^T)_jj), and every block step decreases J in
either order (the alpha- and D-steps minimise it over their block, to the solve's precision
and exactly; the lambda-step's projected-gradient steps each decrease it).  The primal J
after every alpha-step is recorded (the certificate's primal); the iterations stop when
it changes by at most ``tol`` relatively, or when an alpha-step could not improve on the
previous one (progress below the solve's precision: the step is discarded), or after
``max_iter`` alpha-steps.  With nothing learned (fixed
relation, one subset) there is one alpha-step: LaRank SVM and MLFS's first inner problem.
"""

from __future__ import annotations

import numbers
import time
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.validation import check_random_state, check_scalar
from multilabel_core.base import CapabilityError, Problem, Solution, Solver
from multilabel_core.solvers import RankingCDResult
from multilabel_core.solvers._convergence import warn_not_converged

from ._problem import RankingRun, RankingTask, check_ranking_problem
from .cd_solver import FIRST_EPS, RankingCDSolver
from .simplex import project_simplex

__all__ = [
    "Coupling",
    "InnerRun",
    "InnerState",
    "RankingAlternatingSolver",
    "alternate",
    "lambda_step",
    "violation_scores",
]

#: Most projected-gradient steps of one lambda-step (each costs O(T |support|)).
LAMBDA_STEPS = 50
#: A lambda-step stops when its Frank-Wolfe gap ``g^T lambda - min_t g_t`` is below this, relatively to h.
LAMBDA_RTOL = 1e-9
#: Sufficient decrease of the search along a lambda-step's direction (Armijo's constant).
LAMBDA_ARMIJO = 1e-4
#: The shortest fraction of a direction the search tries before the lambda-step gives up.
LAMBDA_SMALLEST_STEP = 1e-12


def _positive(_, attribute, value) -> None:
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)


def _count(_, attribute, value) -> None:
    check_scalar(value, attribute.name, kind=numbers.Integral, low=1)


@attrs.frozen(eq=False)
class Coupling:
    """How D enters the dual: ``R_inv(D)``, and whether D is learned (relation.update) or fixed."""

    regularizer: object
    relation: object
    n_labels: int

    @classmethod
    def from_problem(cls, solver, problem: Problem) -> Coupling:
        if problem.relation.learned and not callable(getattr(problem.regularizer, "with_covariance", None)):
            raise CapabilityError(
                f"{type(solver).__name__} learns the label covariance D through regularizer.with_covariance, which "
                f"{type(problem.regularizer).__name__} does not provide (use FrobeniusLabelCovariance)"
            )
        return cls(problem.regularizer, problem.relation, problem.n_labels)

    @property
    def learned(self) -> bool:
        return bool(self.relation.learned)

    def initial(self) -> np.ndarray | None:
        return self.relation.initial(self.n_labels) if self.learned else None

    def R_inv(self, covariance) -> np.ndarray:
        regularizer = self.regularizer if covariance is None else self.regularizer.with_covariance(covariance)
        return regularizer.label_gram(self.n_labels)


@attrs.frozen(eq=False)
class InnerState:
    """Where an alternating run stands: alpha, D (None when fixed), lambda (None: every feature, p = 1), eps."""

    alpha: np.ndarray | None
    covariance: np.ndarray | None
    subset_weights: np.ndarray | None
    eps: float = FIRST_EPS


@attrs.frozen(eq=False)
class InnerRun:
    """What :func:`alternate` returns.

    Attributes
    ----------
    state : InnerState
        The D, lambda and eps the last accepted alpha-step was solved with, and its alpha.
    step : RankingCDResult
        That alpha-step.
    certificates : list of Certificate
        One per accepted alpha-step.
    converged : bool
    """

    state: InnerState
    step: RankingCDResult
    certificates: list
    converged: bool

    @property
    def objectives(self) -> list:
        """The primal (6) after each accepted alpha-step (never increasing)."""
        return [certificate.primal for certificate in self.certificates]


def violation_scores(task: RankingTask, beta, R_inv) -> tuple[np.ndarray, float]:
    """``(V R^-1 V^T)_jj`` for every feature j, V = X^T beta (eq. 32 with R^-1), and the bias row's.

    These are the per-feature terms of the quadratic part of the dual (7): for a binary p,
    ``f(alpha, D, p) = sum alpha - 1/2 (sum_j p_j q_j + q_bias)`` (docs/methods/ranking.md).
    """
    V = np.asarray(task.X.T @ beta)
    q = np.sum((V @ R_inv) * V, axis=1)
    bias_row = beta.sum(axis=0)
    q_bias = float(bias_row @ R_inv @ bias_row) if task.fit_intercept else 0.0
    return np.maximum(q, 0.0), q_bias


def lambda_step(subsets, weights, a) -> np.ndarray:
    """Minimise ``h(lambda) = 1/2 sum_j a_j / (P^T lambda)_j`` on the simplex, from ``weights`` (eq. 31).

    ``a_j >= 0``; a term with a_j = 0 is 0 (its feature carries no weight), one with
    a_j > 0 and s_j = 0 is +inf: h is the inner objective J with W fixed, an upper bound
    of the inner problem's value that touches it at the current lambda, so its gradient
    there is eq. 31's.  Spectral projected gradient (Birgin, Martinez & Raydan 2000): the
    direction ``d = proj(lambda - eta g) - lambda`` with the exact simplex projection, then
    a backtracking search along d, ``h(lambda + tau d) <= h(lambda) + LAMBDA_ARMIJO tau g^T d``
    (tau = 1, 1/2, ...).  Searching along d rather than shrinking eta keeps every weight
    the projection sends to 0 positive for tau < 1, so a subset whose features still carry
    a tiny a_j (h is +inf where its weight is 0) does not stop the others from moving.  The
    first eta moves lambda by about 1 (1 / the spread of g: the projection ignores a shift
    along 1); the next ones are Barzilai-Borwein's ``m^T m / m^T y`` (m the last move, y the
    change of the gradient).  Stops when the Frank-Wolfe gap ``g^T lambda - min_t g_t``,
    which bounds h(lambda) - min h, is at most LAMBDA_RTOL h(lambda), or at a stationary
    point (``g^T d >= 0``).
    """
    used = a > 0.0
    P, a = subsets[:, used].astype(np.float64), a[used]
    lam = np.asarray(weights, dtype=np.float64)
    if a.size == 0:
        return lam

    def h(point) -> float:
        s = point @ P
        return np.inf if np.any(s <= 0.0) else 0.5 * float(np.sum(a / s))

    def gradient(point) -> np.ndarray:  # dh/dlambda_t = -1/2 sum_{j in p_t} a_j / s_j^2
        return -0.5 * P @ (a / (point @ P) ** 2)

    value, g = h(lam), gradient(lam)
    eta = 1.0 / np.ptp(g) if np.ptp(g) > 0.0 else 1.0
    for _ in range(LAMBDA_STEPS):
        if g @ lam - g.min() <= LAMBDA_RTOL * value:  # h(lambda) - min h is at most this (convexity)
            break
        direction = project_simplex(lam - eta * g) - lam
        slope = float(g @ direction)
        if slope >= 0.0:
            break
        tau = 1.0
        while h(lam + tau * direction) > value + LAMBDA_ARMIJO * tau * slope:
            tau /= 2.0
            if tau < LAMBDA_SMALLEST_STEP:
                return lam
        candidate = np.maximum(lam + tau * direction, 0.0)  # on the simplex up to round-off, zeros kept exact
        candidate /= candidate.sum()
        move = candidate - lam
        new_g = gradient(candidate)
        curvature = move @ (new_g - g)
        lam, value, g = candidate, h(candidate), new_g
        eta = (move @ move) / curvature if curvature > 0.0 else 2.0 * eta
    return lam


def alternate(
    cd: RankingCDSolver,
    task: RankingTask,
    coupling: Coupling,
    subsets,
    state: InnerState,
    rng,
    *,
    tol: float,
    max_iter: int,
) -> InnerRun:
    """Alternate the alpha-, lambda- and D-steps (module docstring) from ``state``.

    ``subsets`` is the (T, d) boolean working set, or None for every feature.
    """
    learns_lambda = subsets is not None and subsets.shape[0] > 1
    steps: list = []
    converged = False
    while len(steps) < max_iter:
        weights = None if subsets is None else state.subset_weights @ subsets
        R_inv = coupling.R_inv(state.covariance)
        step, eps = cd.solve_alpha(task, R_inv, weights, state.alpha, rng, state.eps)
        if steps and step.certificate.primal > steps[-1][1].certificate.primal:
            converged = True  # no progress the alpha-step can resolve: keep the previous step
            break
        steps.append((state, step))
        if not (coupling.learned or learns_lambda) or _relative_change(steps) <= tol:
            converged = True
            break
        state = _next_state(task, coupling, subsets, state, step, R_inv, eps, learns_lambda)
    if not converged:
        warn_not_converged(
            "the alternating minimisation (CLaRank / CMLFS inner problem)",
            f"max_iter={max_iter} alpha-steps reached; relative change {_relative_change(steps):.3g} > tol={tol:g}",
        )
    state, step = steps[-1]
    return InnerRun(attrs.evolve(state, alpha=step.alpha), step, [s.certificate for _, s in steps], converged)


def _next_state(task, coupling, subsets, state, step, R_inv, eps, learns_lambda) -> InnerState:
    """The lambda-step, then the D-step, after the alpha-step ``step`` (module docstring)."""
    weights = np.ones(task.X.shape[1]) if subsets is None else state.subset_weights @ subsets
    subset_weights = state.subset_weights
    if learns_lambda:
        q, _ = violation_scores(task, step.beta, R_inv)
        subset_weights = lambda_step(subsets, subset_weights, weights**2 * q)
        weights = subset_weights @ subsets
    covariance = state.covariance
    if coupling.learned:
        covariance = coupling.relation.update(_weight_gram(step, weights))
    return InnerState(alpha=step.alpha, covariance=covariance, subset_weights=subset_weights, eps=eps)


def _weight_gram(step, weights) -> np.ndarray:
    """G = sum_j (w^j)^T w^j / s_j + b^T b: W^T W of the features re-weighted by s (Theorem 3.4's C)."""
    support = weights > 0.0
    W = step.W[support]
    gram = W.T @ (W / weights[support, None]) + np.outer(step.intercept, step.intercept)
    return (gram + gram.T) / 2.0


def _relative_change(steps) -> float:
    """|J_{k-1} - J_k| / max(1, |J_{k-1}|) of the last two alpha-steps (inf after the first)."""
    if len(steps) < 2:
        return np.inf
    previous, current = steps[-2][1].certificate.primal, steps[-1][1].certificate.primal
    return abs(previous - current) / max(1.0, abs(previous))


class CoupledRankingSolver(Solver):
    """What the solvers built on Algorithm 1 with a label coupling R share: their parts' check.

    The problem must carry the pairwise ranking hinge on linear features, a regulariser with
    ``label_gram`` and a relation with ``initial`` / ``update``, and the pair must define a
    valid coupling (:class:`Coupling`).
    """

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"regularizer": ("label_gram",), "relation": ("initial", "update")}

    def check(self, problem: Problem) -> None:
        super().check(problem)
        check_ranking_problem(self, problem)
        Coupling.from_problem(self, problem)


@attrs.frozen
class RankingAlternatingSolver(CoupledRankingSolver):
    """CLaRank SVM's solver: alternate Algorithm 1 and the D-step of Theorem 3.4 (module docstring).

    Solves a :class:`~multilabel_core.base.Problem` with the pairwise ranking hinge, a
    linear kernel, a relation providing ``initial`` / ``update`` (``LearnedCovariance``:
    D starts at I / c) and a regulariser providing ``label_gram`` and, when the relation
    is learned, ``with_covariance`` (:class:`~.regularizer.FrobeniusLabelCovariance`:
    R = I + mu D^-1).  A fixed relation gives a single alpha-step.

    Parameters
    ----------
    cd : RankingCDSolver
        The alpha-steps' solver (its ``tol`` is their relative duality gap).
    tol : float, default 1e-3
        Stop when the primal (6) changes by at most ``tol`` relatively between alpha-steps.
    max_iter : int, default 100
        Most alpha-steps (ConvergenceWarning beyond).

    The solution's ``relation`` is D and its ``dual`` alpha; a ``warm_start`` carrying
    them (for the same Y) starts the alternation there.
    """

    cd: RankingCDSolver = attrs.field(factory=RankingCDSolver, validator=attrs.validators.instance_of(RankingCDSolver))
    tol: float = attrs.field(default=1e-3, validator=_positive)
    max_iter: int = attrs.field(default=100, validator=_count)

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple:
        run = self.run(problem, warm_start)
        return run.solution, run.certificate

    def run(self, problem: Problem, warm_start: Solution | None = None) -> RankingRun:
        """Alternate from ``warm_start`` (its ``dual`` alpha and ``relation`` D) or from alpha = 0, D = I / c."""
        self.check(problem)
        start = time.perf_counter()
        coupling = Coupling.from_problem(self, problem)
        alpha, covariance = None, coupling.initial()
        if warm_start is not None:
            alpha = warm_start.dual
            if coupling.learned and warm_start.relation is not None:
                covariance = warm_start.relation
        state = InnerState(alpha=alpha, covariance=covariance, subset_weights=None)
        inner = alternate(
            self.cd,
            RankingTask.from_problem(problem),
            coupling,
            None,
            state,
            check_random_state(self.cd.random_state),
            tol=self.tol,
            max_iter=self.max_iter,
        )
        return RankingRun(
            step=inner.step,
            covariance=inner.state.covariance,
            certificates=inner.certificates,
            objectives=inner.objectives,
            n_iter=len(inner.certificates),
            converged=inner.converged,
            time=time.perf_counter() - start,
            solver=type(self).__name__,
        )
