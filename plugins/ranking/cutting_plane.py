"""Algorithm 2: MLFS and CMLFS by a cutting plane over feature subsets.

Gu, Li & Han (CIKM 2011), sections 3.3-3.6.  The feature-selection problem (6) over
binary subsets p (p^T 1 = m) is relaxed to the convex hull of the subsets (eq. 18):
weights lambda on the simplex over a working set Omega_t = {p_1, ..., p_t}, whose kernel
is the feature re-weighting s = sum_t lambda_t p_t.  Each iteration t

1. solves the inner problem over (alpha, D, lambda) restricted to Omega_t by the
   alternating minimisation of :mod:`.alternation`, lambda restarted at 1/t (the paper's
   "Initialize lambda = 1/t 1"), alpha and D warm-started from iteration t - 1;
2. finds the most violated subset (eq. 32): with V = X^T beta (eq. 8) and R^-1 of the
   current D, the dual (7) at a binary p is
   ``f(alpha, D, p) = sum alpha - 1/2 (sum_j p_j q_j + q_bias)``, ``q_j = (V R^-1 V^T)_jj``,
   so the p minimising it keeps the m largest q_j.  (The paper prints eq. 32 with R; the
   dual (7) has R^-1, which is what is implemented.)
3. updates the bounds of Theorem 3.5 on the optimum theta* of the relaxed problem
   (here in minimisation form: theta* = min over D and the hull of the primal (6)):
   ``u_t = min_{j <= t} J_j``, J_j the primal at iteration j's inner solution (a feasible
   point, so always an upper bound), and ``l_t = max_{j <= t} f(alpha_j, D_j, p_{j+1})``,
   the dual at iteration j's alpha and D minimised over every subset.  For mu = 0 (MLFS)
   l_t is a certified lower bound: f is linear in s, so its minimum over the hull is
   attained at a subset, and any alpha's dual value lower-bounds the optimum.  For
   mu > 0 (CMLFS) the bound also needs the minimum over D, which has no closed form
   jointly with p; D_j is used, as in the paper -- a lower bound of the problem with D
   fixed at D_j that meets theta* at the saddle point (docs/methods/ranking.md);
4. stops when ``u_t - l_t <= tol max(1, |u_t|)``, when the most violated subset is
   already in Omega_t (no cut left to add), or after ``max_iter`` iterations
   (ConvergenceWarning); otherwise Omega_{t+1} = Omega_t + {p_{t+1}}.

Start.  Algorithm 2 starts from alpha = 0, where every q_j is 0 and eq. 32 has no
preference.  Here the first subset is chosen at alpha on the upper ends of its box,
C / (|y_i| |ybar_i|) -- the dual point of W = 0, where every pair violates its margin --
so p_1 keeps the features along which the loss decreases fastest from W = 0; the first
inner solve is warm-started there.  The selected features are the union of the subsets
of the final working set.
"""

from __future__ import annotations

import numbers
import time

import attrs
import numpy as np

from multilabel_core._validation import check_random_state, check_scalar
from multilabel_core.base import Problem, Solution
from multilabel_core.solvers import ranking_pairs
from multilabel_core.solvers._convergence import warn_not_converged

from ._problem import RankingRun, RankingTask
from .alternation import CoupledRankingSolver, Coupling, InnerState, alternate, violation_scores
from .cd_solver import RankingCDSolver

__all__ = ["CuttingPlaneSolver", "most_violated_subset", "upper_box_start"]


def _positive(_, attribute, value) -> None:
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)


def _count(_, attribute, value) -> None:
    check_scalar(value, attribute.name, kind=numbers.Integral, low=1)


def most_violated_subset(q, n_features: int) -> np.ndarray:
    """The boolean subset p keeping the ``n_features`` largest scores q_j (eq. 32); ties by lower index."""
    p = np.zeros(len(q), dtype=bool)
    p[np.argsort(-np.asarray(q), kind="stable")[:n_features]] = True
    return p


def upper_box_start(task: RankingTask) -> tuple[np.ndarray, np.ndarray]:
    """alpha_ikl = C / (|y_i| |ybar_i|) for every pair, and its beta (eq. 8) in closed form.

    Summing the pairs of row i: beta_ik = C / |y_i| for a relevant k and -C / |ybar_i| for
    an irrelevant l (0 for a row without pairs).
    """
    Y = task.Y.astype(bool)
    relevant, irrelevant = Y.sum(axis=1), (~Y).sum(axis=1)
    has_pairs = (relevant > 0) & (irrelevant > 0)
    pair_row, _, _ = ranking_pairs(task.Y)
    alpha = (task.C / np.maximum(relevant * irrelevant, 1))[pair_row].astype(np.float64)
    beta = np.where(Y, 1.0 / np.maximum(relevant, 1)[:, None], -1.0 / np.maximum(irrelevant, 1)[:, None])
    return alpha, task.C * beta * has_pairs[:, None]


@attrs.frozen
class CuttingPlaneSolver(CoupledRankingSolver):
    """MLFS / CMLFS: Algorithm 2, the cutting plane over feature subsets (module docstring).

    Solves a :class:`~multilabel_core.base.Problem` with the pairwise ranking hinge on a
    linear kernel.  With ``Frobenius`` and ``Independent`` it is MLFS (mu = 0); with
    :class:`~.regularizer.FrobeniusLabelCovariance` and ``LearnedCovariance`` it is CMLFS
    (problem 6).  The bias feature of ``fit_intercept`` is never a candidate: it is kept.

    Parameters
    ----------
    n_features : int, default 10
        m, the features per subset (p^T 1 = m); m >= d keeps every feature (then the
        method is LaRank SVM, or CLaRank SVM).
    cd : RankingCDSolver
        The alpha-steps' solver.
    tol : float, default 1e-3
        Relative tolerance of the bound gap u_t - l_t, and of the inner alternation.
    max_iter : int, default 10
        Most cutting-plane iterations (the paper reports convergence within 10; the
        bound gap may still be open then, see docs/methods/ranking.md).
    inner_max_iter : int, default 100
        Most alpha-steps of one inner problem.
    """

    n_features: int = attrs.field(default=10, validator=_count)
    cd: RankingCDSolver = attrs.field(factory=RankingCDSolver, validator=attrs.validators.instance_of(RankingCDSolver))
    tol: float = attrs.field(default=1e-3, validator=_positive)
    max_iter: int = attrs.field(default=10, validator=_count)
    inner_max_iter: int = attrs.field(default=100, validator=_count)

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple:
        """``warm_start`` is not used: Algorithm 2 starts at its own alpha (module docstring)."""
        run = self.run(problem)
        return run.solution, run.certificate

    def run(self, problem: Problem) -> RankingRun:
        self.check(problem)
        start = time.perf_counter()
        task, coupling = RankingTask.from_problem(problem), Coupling.from_problem(self, problem)
        rng = check_random_state(self.cd.random_state)
        m = min(self.n_features, task.X.shape[1])
        alpha, beta = upper_box_start(task)
        state = InnerState(alpha=alpha, covariance=coupling.initial(), subset_weights=None)
        q, _ = violation_scores(task, beta, coupling.R_inv(state.covariance))
        subsets = most_violated_subset(q, m)[None, :]
        certificates, objectives, bounds = [], [], []
        lower, upper = -np.inf, np.inf
        while True:
            T = subsets.shape[0]
            state = attrs.evolve(state, subset_weights=np.full(T, 1.0 / T))
            inner = alternate(self.cd, task, coupling, subsets, state, rng, tol=self.tol, max_iter=self.inner_max_iter)
            state, step = inner.state, inner.step
            certificates += inner.certificates
            objectives += inner.objectives
            q, q_bias = violation_scores(task, step.beta, coupling.R_inv(state.covariance))
            candidate = most_violated_subset(q, m)
            lower = max(lower, float(step.alpha.sum()) - 0.5 * (float(q[candidate].sum()) + q_bias))
            upper = min(upper, float(step.certificate.primal))
            bounds.append((lower, upper))
            converged = bool(
                upper - lower <= self.tol * max(1.0, abs(upper)) or np.all(subsets == candidate, axis=1).any()
            )
            if converged or len(bounds) == self.max_iter:
                break
            subsets = np.vstack([subsets, candidate])
        if not converged:
            warn_not_converged(
                "CuttingPlaneSolver",
                f"max_iter={self.max_iter} cutting-plane iterations; bound gap {upper - lower:.3g}",
            )
        return RankingRun(
            step=step,
            covariance=state.covariance,
            certificates=certificates,
            objectives=objectives,
            n_iter=len(bounds),
            converged=converged,
            time=time.perf_counter() - start,
            solver=type(self).__name__,
            subsets=subsets,
            subset_weights=state.subset_weights,
            bound_history=bounds,
        )
