"""Algorithm 1 as a solver component: the label-ranking dual (7) for a fixed coupling R.

Gu, Li & Han (CIKM 2011).  For fixed D (through R^-1 = D (D + mu I)^-1, the regulariser's
``label_gram``) and fixed feature weights s, the dual (7) is solved by dual coordinate
descent over the alpha_ikl (Algorithm 1 with eq. 23's gradient; the engine is
:func:`multilabel_core.solvers.ranking_cd`, see docs/solvers/cd-ranking.md).

Precision.  ``ranking_cd`` stops on LIBLINEAR's rule -- every projected gradient (eq. 25)
within [-eps, eps] -- whose meaning in objective terms depends on C and the data
(scene, C = 100: eps = 0.1 leaves a relative duality gap of 7e-2, eps = 0.01 one of 5e-3).
The solvers of this family are asked for a relative duality gap instead: an alpha-step
runs ranking_cd at eps = 0.1 (LIBLINEAR's default) and, while the certificate's relative
gap ``gap / max(1, |primal|)`` exceeds ``tol``, again at eps / 10 warm-started from the
alpha it reached.  The next alpha-step of an alternating run starts at the eps the
previous one ended with.
"""

from __future__ import annotations

import numbers
import time
from typing import ClassVar

import attrs
import numpy as np

from multilabel_core.validation import check_random_state, check_scalar
from multilabel_core.base import CapabilityError, Problem, Solution, Solver
from multilabel_core.certificate import Certificate
from multilabel_core.solvers import RankingCDResult, ranking_cd
from multilabel_core.solvers._convergence import warn_not_converged
from multilabel_core.solvers.ranking import ENGINE_COUNTS

from ._problem import RankingRun, RankingTask, check_ranking_problem

__all__ = ["FIRST_EPS", "SMALLEST_EPS", "RankingCDSolver"]

#: LIBLINEAR's default eps, where every alpha-step of a fit starts.
FIRST_EPS = 0.1
#: The tightest eps an alpha-step tries: below it the gap is round-off, not progress.
SMALLEST_EPS = 1e-9


def _positive(_, attribute, value) -> None:
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False)


def _count(_, attribute, value) -> None:
    check_scalar(value, attribute.name, kind=numbers.Integral, low=1)


def _seed(_, attribute, value) -> None:
    if value is not None:
        check_scalar(value, attribute.name, kind=numbers.Integral, low=0)


@attrs.frozen
class RankingCDSolver(Solver):
    """LaRank SVM's solver: Algorithm 1 (dual CD over the ranking pairs) to a relative duality gap.

    Solves a :class:`~multilabel_core.base.Problem` with the
    :class:`~multilabel_core.losses.PairwiseRankingHinge` loss, a linear kernel, a fixed
    relation and a regulariser of the form ``1/2 tr(W M^-1 W^T)`` (``label_gram``: M is
    R^-1; ``Frobenius`` gives LaRank SVM, eq. 1).  The bias (``fit_intercept``) is the
    weight of a constant feature, as in eq. 1.  The other ranking solvers of the family
    call :meth:`solve_alpha` for their alpha-steps.

    Parameters
    ----------
    tol : float, default 1e-3
        Largest relative duality gap ``gap / max(1, |primal|)`` of a solve.
    max_iter : int, default 10000
        Most epochs of one ranking_cd call (ConvergenceWarning beyond).
    shrinking : bool, default True
    random_state : int or None, default 0
        Seed of the coordinate permutations (fixed by default: fits are reproducible).

    The solution's ``dual`` is alpha, one entry per pair in the order of
    :func:`~multilabel_core.solvers.ranking_pairs`; a ``warm_start`` carrying it (for the
    same Y, e.g. the previous point of a C path) starts Algorithm 1 there.
    """

    tol: float = attrs.field(default=1e-3, validator=_positive)
    max_iter: int = attrs.field(default=10000, validator=_count)
    shrinking: bool = attrs.field(default=True, validator=attrs.validators.instance_of((bool, np.bool_)))
    random_state: int | None = attrs.field(default=0, validator=_seed)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"regularizer": ("label_gram",)}

    def check(self, problem: Problem) -> None:
        super().check(problem)
        check_ranking_problem(self, problem)
        if problem.relation.learned:
            raise CapabilityError(
                f"{type(self).__name__} solves for a fixed label coupling; {type(problem.relation).__name__} is learned "
                "(use RankingAlternatingSolver or CuttingPlaneSolver)"
            )

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple:
        run = self.run(problem, warm_start)
        return run.solution, run.certificate

    def run(self, problem: Problem, warm_start: Solution | None = None) -> RankingRun:
        """One alpha-step with R^-1 = ``regularizer.label_gram(c)`` and every feature weight 1.

        It starts from ``warm_start.dual`` when given, else from alpha = 0.
        """
        self.check(problem)
        start = time.perf_counter()
        task = RankingTask.from_problem(problem)
        R_inv = problem.regularizer.label_gram(task.n_labels)
        alpha0 = None if warm_start is None else warm_start.dual
        step, _ = self.solve_alpha(task, R_inv, None, alpha0, check_random_state(self.random_state), FIRST_EPS)
        return RankingRun(
            step=step,
            covariance=None,
            certificates=[step.certificate],
            objectives=[step.certificate.primal],
            n_iter=step.certificate.n_iter,
            converged=step.certificate.converged,
            time=time.perf_counter() - start,
            solver=type(self).__name__,
        )

    def solve_alpha(
        self, task: RankingTask, R_inv, feature_weights, alpha0, rng, eps: float
    ) -> tuple[RankingCDResult, float]:
        """Algorithm 1 at eps, eps / 10, ... (warm-started) until the relative gap is at most ``tol``.

        Returns the result, whose certificate counts the epochs, the engine's counts
        (updates, visits, ...) and the time of all the calls (``statistics["eps"]`` the
        last eps), and that eps, where the caller's next alpha-step should start.
        """
        start = time.perf_counter()
        if task.n_labels == 1:
            return _single_label_solution(task, eps, time.perf_counter() - start), eps
        epochs, counts = 0, dict.fromkeys(ENGINE_COUNTS, 0)
        while True:
            result = ranking_cd(
                task.X,
                task.Y,
                task.C,
                R_inv,
                feature_weights,
                fit_intercept=task.fit_intercept,
                tol=eps,
                max_iter=self.max_iter,
                shrinking=bool(self.shrinking),
                random_state=rng,
                alpha0=alpha0,
            )
            epochs += result.certificate.n_iter
            counts = {key: total + result.certificate.statistics[key] for key, total in counts.items()}
            reached = result.certificate.relative_gap <= self.tol
            if reached or not result.certificate.converged or eps / 10.0 < SMALLEST_EPS:
                break
            eps, alpha0 = eps / 10.0, result.alpha
        if result.certificate.converged and not reached:
            # ranking_cd warns for its own max_iter; this is the other way to stop short.
            warn_not_converged(
                type(self).__name__,
                f"relative duality gap {result.certificate.relative_gap:.3g} > tol={self.tol:g} at the smallest "
                f"eps={eps:g} (below it the gap is round-off)",
            )
        certificate = attrs.evolve(
            result.certificate,
            n_iter=epochs,
            time=time.perf_counter() - start,
            converged=bool(result.certificate.converged and reached),
            statistics=result.certificate.statistics | counts | {"eps": eps},
        )
        return attrs.evolve(result, certificate=certificate), eps


def _single_label_solution(task: RankingTask, eps: float, elapsed: float) -> RankingCDResult:
    """The solution when Y has one label column: no pair (k, l) exists, so the dual (7) has no variable.

    Problem (1) is then its regulariser alone, minimised by W = 0, b = 0 with primal and
    dual objectives 0 -- what :func:`ranking_cd` returns for c >= 2 labels when every row's
    label set is empty or full; it refuses c = 1, which a one-column Y (a binary task
    given to a ranking method) still is.  One epoch: the pass that finds nothing to update.
    """
    n, d = task.X.shape
    no_pairs = np.zeros(0, dtype=np.intp)
    certificate = Certificate(
        primal=0.0,
        dual=0.0,
        gap=0.0,
        kkt_violation=0.0,
        n_iter=1,
        time=elapsed,
        converged=True,
        solver="ranking_cd",
        statistics={"n_pairs": 0, "rows_without_pairs": n, "eps": eps},
    )
    return RankingCDResult(
        W=np.zeros((d, 1)),
        intercept=np.zeros(1),
        pair_row=no_pairs,
        pair_k=no_pairs,
        pair_l=no_pairs,
        alpha=np.zeros(0),
        beta=np.zeros((n, 1)),
        weight_gram=np.zeros((1, 1)),
        certificate=certificate,
    )
