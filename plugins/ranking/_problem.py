"""What the three ranking solvers share: the problem they accept and the run they return.

Notation of Gu, Li & Han (CIKM 2011): rows x_i (d features), c labels, Y the {0, 1}
relevance matrix (the :class:`~multilabel_core.base.Problem` carries it as signs), the
label covariance D and R = I + mu D^-1, feature subsets p_t with weights lambda_t, and
the alpha_ikl of the pairs (k, l) in y_i x ybar_i.
"""

from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

from multilabel_core.base import CapabilityError, Problem, Solution
from multilabel_core.certificate import Certificate
from multilabel_core.losses import PairwiseRankingHinge
from multilabel_core.solvers import RankingCDResult

__all__ = ["RankingRun", "RankingTask", "check_ranking_problem"]


def check_ranking_problem(solver, problem: Problem) -> None:
    """The parts every ranking solver needs: the pairwise ranking hinge (eq. 1) on linear features."""
    name = type(solver).__name__
    if not isinstance(problem.loss, PairwiseRankingHinge):
        raise CapabilityError(
            f"{name} solves the label-ranking dual (7) of PairwiseRankingHinge, not {type(problem.loss).__name__}"
        )
    if not problem.kernel.linear:
        raise CapabilityError(
            f"{name} works on linear features (feature re-weighting), not {type(problem.kernel).__name__}"
        )


@attrs.frozen(eq=False)
class RankingTask:
    """The data of one ranking fit: X as given (dense or CSR), Y in {0, 1}, C and the bias switch."""

    X: object
    Y: np.ndarray
    C: float
    fit_intercept: bool

    @classmethod
    def from_problem(cls, problem: Problem) -> RankingTask:
        # The loss's targets are signs; the ranking solver reads relevance as {0, 1}.  CSR once
        # for all the alpha-steps of a run (ranking_cd would convert CSC at every call).
        X = problem.X.tocsr() if sp.issparse(problem.X) else problem.X
        return cls(X, (np.asarray(problem.Y) > 0).astype(np.int8), float(problem.C), bool(problem.fit_intercept))

    @property
    def n_labels(self) -> int:
        return self.Y.shape[1]


@attrs.frozen(eq=False)
class RankingRun:
    """What the ranking solvers' ``run`` returns.

    Attributes
    ----------
    step : RankingCDResult
        The last alpha-step (Algorithm 1): W on the raw features, the intercept, the pairs
        and alpha, beta (eq. 8) and its certificate.
    covariance : ndarray (c, c) or None
        The label covariance D the last alpha-step was solved with (None when the relation
        is not learned).
    subsets, subset_weights : ndarray (T, d) of bool and (T,), or None
        The working set of feature subsets p_t and their weights lambda_t (cutting plane only).
    certificates : list of Certificate
        One per alpha-step, in order.
    objectives : list of float
        The primal (6) after each accepted alpha-step (never increasing).
    bound_history : list of (float, float)
        (l_t, u_t) per cutting-plane iteration (Theorem 3.5); empty for the other solvers.
    n_iter : int
        Iterations of the solver's own loop: epochs (ranking_cd), alternations, or
        cutting-plane iterations.
    converged : bool
    time : float
    solver : str
    """

    step: RankingCDResult
    covariance: np.ndarray | None
    certificates: list
    objectives: list
    n_iter: int
    converged: bool
    time: float
    solver: str
    subsets: np.ndarray | None = None
    subset_weights: np.ndarray | None = None
    bound_history: list = attrs.field(factory=list)

    @property
    def solution(self) -> Solution:
        """The :class:`~multilabel_core.base.Solution`: W, b, D as ``relation`` and alpha as ``dual``."""
        return Solution(coef=self.step.W, intercept=self.step.intercept, relation=self.covariance, dual=self.step.alpha)

    @property
    def feature_weights(self) -> np.ndarray | None:
        """s = sum_t lambda_t p_t, the re-weighting of the features (None: every weight 1)."""
        return None if self.subsets is None else self.subset_weights @ self.subsets

    @property
    def certificate(self) -> Certificate:
        """One certificate for the run: the last alpha-step's, with the solver's own counts.

        ``n_iter`` and ``converged`` are the run's; ``statistics`` holds the
        ``objective_history``, the ``bound_history`` (cutting plane), the epochs of every
        alpha-step (``inner_iterations``) and the last alpha-step's statistics (``inner``).
        """
        last = self.certificates[-1]
        return attrs.evolve(
            last,
            n_iter=int(self.n_iter),
            time=self.time,
            converged=bool(last.converged and self.converged),
            solver=self.solver,
            statistics={
                "objective_history": list(self.objectives),
                "bound_history": [tuple(bounds) for bounds in self.bound_history],
                "inner_iterations": [int(c.n_iter) for c in self.certificates],
                "inner": last.statistics,
            },
        )
