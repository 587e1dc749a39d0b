"""Algorithm 2: MLFS and CMLFS by a cutting plane over feature subsets, and its stabilised master.

Gu, Li & Han (CIKM 2011), sections 3.3-3.6.  The feature-selection problem (6) over
binary subsets p (p^T 1 = m) is relaxed to the convex hull of the subsets (eq. 18), whose
points are feature re-weightings s = sum_t lambda_t p_t.  That hull is the capped simplex
H = {0 <= s <= 1, sum s = m}, so the relaxed problem is ``theta* = min_{s in H} F(s)``,
F(s) the optimum of the dual (7) at the feature weights s; every alpha of the dual box
gives a cut ``f(alpha, D, s) = sum alpha - 1/2 (s^T q + q_bias) <= F(s)``, affine in s
(:mod:`.bundle`).

The stabilised master (``master="proximal"``, the default).  A proximal bundle method over
s (Kiwiel, Math. Programming 46, 1990; inexact cuts as in de Oliveira, Sagastizabal &
Lemarechal, Math. Programming 148, 2014).  Iteration k:

1. solves the dual (7) at the candidate s_k (one alpha-step, :class:`~.cd_solver.RankingCDSolver`,
   warm-started from the previous alpha and eps) to the relative duality gap
   ``min(cd.tol, INNER_FRACTION * max(gap, tol))``: the inner accuracy follows the bound gap;
2. adds the cut of that alpha.  An inexact alpha still lies in the box, so by weak duality
   its cut stays below F: the lower bound is valid whatever the inner accuracy, which only
   decides how tight the cut is;
3. bounds theta* at the current D: ``l_k`` the best of each cut's minimum over H (eq. 32's
   top-m sum, which is Theorem 3.5's l_t), the cut of the last master's combination of the
   alphas (f is concave in alpha, so combining the alphas beats combining their cuts) and,
   once those leave a gap below LP_WINDOW tol, the LP of Kelley's bound over every cut
   (HiGHS), re-evaluated exactly at its combination; ``u_k`` the primal (6) of the newest
   and of the best W so far, each at its best s in H (a closed form, :func:`.bundle.cheapest_weights`);
   with D fixed (MLFS) both are running bounds;
4. for CMLFS, Theorem 3.4's D for the best point; the relative decrease of (6) it brings
   (the "relation gap", 0 when D is already optimal for the point) must also be below tol;
   the cuts are re-evaluated at the new D (they keep V = X^T beta, not q);
5. stops when the relative gap ``(u_k - l_k) / max(1, |u_k|)`` and the relation gap are at
   most tol and the best point's alpha-step converged, or after ``max_iter`` iterations, or
   when the master predicts no decrease (ConvergenceWarning);
6. else takes the descent test (the candidate becomes the centre when the cut model shows
   at least DESCENT of the decrease the master predicted; t doubles above GOOD_DESCENT and
   halves after a null step) and solves the master
   ``min_{s in H} max_j cut_j(s) + ||s - centre||^2 / (2 t)`` for the next candidate
   (:func:`.bundle.proximal_master`: Newton on the dual's quadratic pieces, each step an
   exact active-set QP on the simplex of the cuts' weights).

Why it converges where Kelley's working set does not: the relaxed optimum is dense (on
scene MLFS 169 of 294 weights are fractional), so a master restricted to the hull of the
subsets found so far needs about as many subsets as the face of H it lies in has
dimensions, one per iteration; the bundle's master ranges over all of H, and the proximal
term keeps its candidates near the best point, where the cuts are accurate, so the points
converge to the optimum and the lower bound (a Frank-Wolfe bound there) closes with them.
For MLFS the bounds are certified (F is convex, every cut valid); for CMLFS each (l_k, u_k)
is a certified pair for the problem with D held at the returned D, which together with the
relation gap certifies a point optimal in each block to tol -- the relaxed CMLFS problem is
not jointly convex (below), so nothing certifies more.

Kelley's master (``master="kelley"``): Algorithm 2 as printed, over a working set
Omega_t = {p_1, ..., p_t} with weights lambda on the simplex.  Each iteration t

1. solves the inner problem over (alpha, D, lambda) restricted to Omega_t by the core's
   alternating driver, :class:`~multilabel_core.solvers.AlternatingSolver`, on the problem
   whose kernel is the working set (:class:`~.kernel.SubsetKernel`): its model steps are
   :class:`~.cd_solver.RankingCDSolver`'s alpha-step followed by the lambda-step of eq. 31,
   its relation steps Theorem 3.4's D; lambda restarted at 1/t (the paper's "Initialize
   lambda = 1/t 1"), alpha, D and the eps of the alpha-steps warm-started from iteration
   t - 1;
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
   fixed at D_j that meets theta* at the saddle point (docs/methods/ranking.md).  (The
   relaxed CMLFS problem is convex in (W, D) for fixed s and in (W, s) for fixed D, but
   not jointly: ``w D^-1 w^T / s`` is not jointly convex, so no single alpha certifies a
   bound there.);
4. stops when the relative bound gap ``(u_t - l_t) / max(1, |u_t|)`` is at most ``tol``,
   or after ``max_iter`` iterations (ConvergenceWarning); otherwise
   Omega_{t+1} = Omega_t + {p_{t+1}} (but see "Inner accuracy" when p_{t+1} is in Omega_t).

Inner accuracy.  The bound gap contains, besides the cutting plane's own progress, the
duality gap of the last alpha-step (u_t is a primal value, l_t a dual one) and the
inaccuracy of the inner alternation, so both must be below ``tol`` for the stopping rule
to be reachable.  Each inner problem is solved to :data:`INNER_FRACTION` of the current
gap -- never looser than the solver's own ``cd.tol`` and ``tol``, so nothing changes
while the gap exceeds ``cd.tol / INNER_FRACTION``, and as it closes the inner problems
tighten to ``INNER_FRACTION * tol``.  When the most violated subset is already in the
working set there is no cut to add: the gap left is the inner problem's inaccuracy, so
the same working set is solved again (lambda kept) at a tenth of that accuracy, and the
cutting plane stops (ConvergenceWarning) if that moved neither bound.

How fast Kelley's gap closes.  Its lower bound l_t is a Frank-Wolfe bound at the
restricted optimum; the relaxed optimum s (the hull is {0 <= s <= 1, sum s = m}) is dense,
with most features fractional, so l_t rises slowly and the gap closes like a power of t,
not within a fixed number of iterations: at the paper's "within 10 outer iterations" the
measured relative gaps are 0.045 to 0.16 on the reproduction's settings
(benchmarks/reproductions/ranking/cutting_plane_gap.py; docs/methods/ranking.md), which is
why the bundle replaced it as the default.

Start.  Algorithm 2 starts from alpha = 0, where every q_j is 0 and eq. 32 has no
preference.  Here the first subset is chosen at alpha on the upper ends of its box,
C / (|y_i| |ybar_i|) -- the dual point of W = 0, where every pair violates its margin --
so p_1 keeps the features along which the loss decreases fastest from W = 0; the first
inner solve is warm-started there.  The selected features are the union of the subsets
of the final working set.

Empty columns.  A column of X without a stored value (all zero) has q_j = 0 for every alpha
(``V = X^T beta`` has a zero row there), so its weight s_j changes no cut and its w^j is 0:
the relaxed problem over H equals the one over the other columns with
m' = min(m, their number) (F is non-increasing in s, so the optimum puts all the mass it can
on columns that hold values).  The solve therefore runs on those columns and the solution is
mapped back, W and s zero on the empty columns, which no subset holds.  Its memory and time
follow the stored entries, not the declared width (a d-vector per cut, up to MAX_CUTS of them,
and a master over all d weights cost a LibSVM file declaring 10^6 features with 450 stored values
its width in time and memory; benchmarks/RESULTS.md, "Timings behind code comments").
"""

from __future__ import annotations

import time
from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from multilabel_core.base import CapabilityError, Fit, Problem, Solution, Solver, WarmState
from multilabel_core.certificate import Certificate
from multilabel_core.solvers import AlternatingSolver
from multilabel_core.solvers.alternating import TOL_FLOOR
from multilabel_core.validation import count, positive, warn_not_converged

from .bundle import CutModel, cheapest_weights, decompose, lp_lower_bound, model_value, proximal_master, top_sum
from .cd_solver import FIRST_EPS, RankingCDSolver, check_two_labels, reweighted_factor
from .kernel import SubsetKernel
from .subsets import violation_scores

__all__ = [
    "DESCENT",
    "GOOD_DESCENT",
    "INNER_FRACTION",
    "LP_WINDOW",
    "MASTERS",
    "MAX_CUTS",
    "STALL_RTOL",
    "CuttingPlaneSolver",
    "most_violated_subset",
    "relative_gap",
    "upper_box_start",
    "used_columns",
]

#: The inner problems are solved to this fraction of the current relative bound gap (module docstring).
INNER_FRACTION = 0.1
#: The master problems: the proximal bundle over s (the default) and Kelley's working set of subsets (Algorithm 2).
MASTERS = ("proximal", "kelley")
#: A candidate becomes the centre when it achieves this fraction of the decrease the master predicted.
DESCENT = 0.1
#: ... and the proximal parameter t doubles when it achieves this fraction.
GOOD_DESCENT = 0.5
#: The bundle has stalled when the master predicts a decrease below this, relatively to max(1, |u_t|).
STALL_RTOL = 1e-13
#: The LP of Kelley's bound is solved once the cheaper bounds leave a relative gap below this many tol.
LP_WINDOW = 2.0
#: Most cuts kept: beyond, the oldest without weight in the master are dropped.
MAX_CUTS = 100


def most_violated_subset(q, n_features: int) -> np.ndarray:
    """Return the most violated subset of eq. 32: the ``n_features`` largest scores q_j.

    With the dual (7) at a binary p equal to ``sum alpha - 1/2 (sum_j p_j q_j + q_bias)``,
    the p of m features minimising it keeps the m largest q_j (Gu, Li & Han, "Correlated
    Multi-Label Feature Selection", CIKM 2011, eq. 32, read with R^-1).

    Parameters
    ----------
    q : array-like of shape (d,)
        The per-feature scores ``(V R^-1 V^T)_jj`` (:func:`~.subsets.violation_scores`).
    n_features : int
        m, the features to keep; every feature when it is at least d.

    Returns
    -------
    ndarray of shape (d,), bool
        p, True at the ``min(n_features, d)`` largest scores, ties going to the lower index.
    """
    p = np.zeros(len(q), dtype=bool)
    p[np.argsort(-np.asarray(q), kind="stable")[:n_features]] = True
    return p


def used_columns(X) -> np.ndarray:
    """Return the sorted indices of the columns of X that hold a nonzero value.

    O(stored entries) for a sparse X: its stored indices alone, never a dense d-vector of counts.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, d)
        The training rows (a stored zero does not count as a value).

    Returns
    -------
    ndarray of shape (n_used,), int
        The columns with a nonzero value, increasing; ``[0]`` when X is all zero, so that a
        solve keeps one column.
    """
    if sp.issparse(X):
        X = X.tocsr()
        used = np.unique(X.indices[X.data != 0])
    else:
        used = np.flatnonzero(np.any(np.asarray(X) != 0, axis=0))
    return used if used.size else np.zeros(1, dtype=np.intp)


def _widened(fit: Fit, used: np.ndarray, width: int) -> Fit:
    """A fit of the columns ``used`` mapped back to all ``width`` columns: W, s and the subsets zero elsewhere."""
    solution = fit.solution
    coef = np.zeros((width, solution.coef.shape[1]), dtype=solution.coef.dtype)
    coef[used] = solution.coef
    model = dict(solution.model_state)
    weights = np.zeros(width, dtype=np.float64)
    weights[used] = model["feature_weights"]
    subsets = np.zeros((model["subsets"].shape[0], width), dtype=bool)
    subsets[:, used] = model["subsets"]
    model |= {"feature_weights": weights, "subsets": subsets}
    return attrs.evolve(fit, solution=attrs.evolve(solution, coef=coef, model_state=model))


def _last_eps(fit: Fit) -> float:
    """The eps the last accepted alpha-step of an alternation reached (its certificate's statistics)."""
    return float(fit.steps[-1].statistics["eps"])


def relative_gap(lower: float, upper: float) -> float:
    """Return the relative bound gap ``(u_t - l_t) / max(1, |u_t|)`` the cutting plane stops on.

    Parameters
    ----------
    lower : float
        l_t, the lower bound of theta*.
    upper : float
        u_t, the upper bound of theta* (a primal value).

    Returns
    -------
    float
        ``(upper - lower) / max(1, |upper|)``: absolute for objectives below 1, relative above.
    """
    return (upper - lower) / max(1.0, abs(upper))


def upper_box_start(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Return the dual point on the upper ends of the box, ``alpha_ikl = C / (|y_i| |ybar_i|)``, and its beta.

    This is the dual point of W = 0, where every pair violates its margin: the cutting plane's
    start (module docstring, "Start").  The pairs are the loss's (``pairs``).  Summing the pairs
    of row i: beta_ik = C / |y_i| for a relevant k and -C / |ybar_i| for an irrelevant l (0 for
    a row without pairs).

    Parameters
    ----------
    problem : Problem
        The ranking problem: its ``Y``, ``C`` and its loss's ``pairs``.

    Returns
    -------
    alpha : ndarray of shape (n_pairs,)
        ``C / (|y_i| |ybar_i|)`` for every pair, in the order of the loss's ``pairs``.
    beta : ndarray of shape (n_samples, n_labels)
        beta of eq. 8 at that alpha.
    """
    Y = np.asarray(problem.Y) > 0
    C = float(problem.C)
    relevant, irrelevant = Y.sum(axis=1), (~Y).sum(axis=1)
    has_pairs = (relevant > 0) & (irrelevant > 0)
    pair_row, _, _ = problem.loss.pairs(problem.Y)
    alpha = (C / np.maximum(relevant * irrelevant, 1))[pair_row].astype(np.float64)
    beta = np.where(Y, 1.0 / np.maximum(relevant, 1)[:, None], -1.0 / np.maximum(irrelevant, 1)[:, None])
    return alpha, C * beta * has_pairs[:, None]


@attrs.frozen
class CuttingPlaneSolver(Solver):
    """MLFS / CMLFS: Algorithm 2's cutting plane, stabilised by a proximal bundle (module docstring).

    Solves a :class:`~multilabel_core.base.Problem` with the parts of
    :class:`~.cd_solver.RankingCDSolver` (the pairwise ranking hinge on the plain linear
    kernel) and a relation with ``initial`` / ``update``.  With ``Frobenius`` and
    ``Independent`` it is MLFS (mu = 0); with
    :class:`~multilabel_core.regularizers.FrobeniusLabelCovariance` and ``LearnedCovariance``
    it is CMLFS (problem 6).  The bias feature of ``fit_intercept`` is never a candidate:
    it is kept.

    Parameters
    ----------
    n_features : int, default 10
        m, the features per subset (p^T 1 = m); m >= d keeps every feature (then the
        method is LaRank SVM, or CLaRank SVM).
    cd : RankingCDSolver, default RankingCDSolver()
        The model steps' solver; its ``tol`` is the loosest accuracy of an alpha-step (they
        are solved to ``INNER_FRACTION`` of the current bound gap below it).
    tol : float, default 1e-3
        Stop when the relative bound gap ``(u_t - l_t) / max(1, |u_t|)`` is at most ``tol``
        (and, with D learned, when Theorem 3.4's step gains at most ``tol`` relatively).
    max_iter : int, default 100
        Most iterations (one alpha-step each for the bundle): a safeguard, with a
        ConvergenceWarning.  The bundle meets tol = 1e-3 in 10 to 40 iterations on scene
        and yeast (docs/methods/ranking.md); Kelley's master needs 80 to more than 150.
    inner_max_iter : int, default 100
        Most model steps of one inner problem of Kelley's master.
    master : {"proximal", "kelley"}, default "proximal"
        The proximal bundle over s (module docstring, "The stabilised master"), or
        Algorithm 2 as printed: Kelley's working set of subsets (kept for comparison).

    Notes
    -----
    ``solve`` returns a :class:`~multilabel_core.base.Fit`: the solution of the point that
    gives u_t (W, b, the relation the bounds were computed at -- D when learned -- and alpha
    as ``dual``) with ``model_state`` ``"subsets"`` and ``"subset_weights"`` (the working set and
    lambda; for the bundle, s decomposed into m-subsets), ``"feature_weights"`` s,
    ``"beta"`` and ``"eps"`` (the alpha-step's last eps); the certificate is the cutting
    plane's own: primal u_t, dual l_t, gap u_t - l_t, ``n_iter`` the iterations,
    ``converged`` only when the bound gap is within tol and the returned point's alpha-step
    converged, ``statistics`` the history and that alpha-step's certificate (``"inner"``);
    ``steps`` every alpha-step's certificate; ``history`` the ``"objective"`` after each
    alpha-step, their epochs (``"inner_iterations"``), the ``"bounds"`` (l_t, u_t), the
    ``"relative_gap"`` and the seconds since the start (``"elapsed"``) per iteration, and
    for the bundle its ``"proximal_parameter"`` t, ``"inner_accuracy"`` and, with D learned,
    ``"relation_gap"``.  A ``warm_start`` is not used (the solution carries no warm state).
    The ranking presets expose ``subsets_``, ``subset_weights_`` and ``feature_weights_``
    (:attr:`fitted_attributes`).
    """

    n_features: int = attrs.field(default=10, validator=count)
    cd: RankingCDSolver = attrs.field(factory=RankingCDSolver, validator=attrs.validators.instance_of(RankingCDSolver))
    tol: float = attrs.field(default=1e-3, validator=positive)
    max_iter: int = attrs.field(default=100, validator=count)
    inner_max_iter: int = attrs.field(default=100, validator=count)
    master: str = attrs.field(default="proximal", validator=attrs.validators.in_(MASTERS))

    # The features it selects are X's columns: a kernel matrix has none (its columns are training rows).
    requires: ClassVar[dict[str, tuple[str, ...]]] = {"relation": ("initial", "update"), "kernel": ("linear",)}
    model_state_names: ClassVar[dict[str, str]] = {
        "subsets": "the working set of feature subsets (t, d), bool (for the bundle, s decomposed into m-subsets)",
        "subset_weights": "lambda (t,), the subsets' weights",
        "feature_weights": "s (d,), the feature weights of the returned point",
        "beta": "beta (n, c) of eq. 8 at the returned point",
        "eps": "the eps of the stopping rule the returned point's alpha-step reached",
        "selected_features": "the union of the subsets' features (sorted column indices)",
        "bound_history": "(l_t, u_t) per iteration, (t, 2): the lower and upper bounds",
    }
    fitted_attributes: ClassVar[dict[str, str]] = {
        "subsets": "subsets_",
        "subset_weights": "subset_weights_",
        "feature_weights": "feature_weights_",
        "selected_features": "selected_features_",
        "bound_history": "bound_history_",
    }
    outer_certificate: ClassVar[bool] = True

    def check(self, problem: Problem) -> None:
        super().check(problem)
        check_two_labels(problem.n_labels)
        if getattr(problem.kernel, "subsets", None) is not None:
            raise CapabilityError(
                f"{type(self).__name__} chooses the feature subsets itself: give it the plain linear kernel, "
                f"not a kernel with its own subsets ({type(problem.kernel).__name__})"
            )
        AlternatingSolver(inner=self.cd).check(problem)

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        if sp.issparse(problem.X):  # CSR once for every alpha-step of the run
            problem = attrs.evolve(problem, X=problem.X.tocsr())
        # The solve runs on the columns that hold a value (module docstring, "Empty columns"): its
        # cuts, master and subsets then cost what X stores, not what its width declares.
        width = problem.X.shape[1]
        used = used_columns(problem.X)
        if used.size < width:
            problem = attrs.evolve(problem, X=problem.X[:, used])
        fit = self._solve_proximal(problem, start) if self.master == "proximal" else self._solve_kelley(problem, start)
        fit = fit if used.size == width else _widened(fit, used, width)
        model = dict(fit.solution.model_state)
        model["selected_features"] = np.flatnonzero(model["subsets"].any(axis=0))
        model["bound_history"] = np.array(fit.history["bounds"])
        return attrs.evolve(fit, solution=attrs.evolve(fit.solution, model_state=model))

    def _solve_kelley(self, problem: Problem, start: float) -> Fit:
        """Algorithm 2 as printed: Kelley's cutting plane over a working set of subsets (module docstring)."""
        X, c = problem.X, problem.n_labels
        m = min(self.n_features, X.shape[1])
        relation = problem.relation.initial(c) if problem.relation.learned else None
        alpha, beta = upper_box_start(problem)
        q, _ = violation_scores(X, beta, self._label_gram(problem, relation), problem.fit_intercept)
        subsets = most_violated_subset(q, m)[None, :]
        warm = self._warm(np.zeros(c), alpha, relation, FIRST_EPS, {})
        steps, bounds, clock = [], [], []
        lower, upper, gap, accuracy, repeated = -np.inf, np.inf, np.inf, np.inf, False
        while True:
            accuracy = self._inner_accuracy(accuracy, gap, repeated)
            cd = self.cd if accuracy >= self.cd.tol else attrs.evolve(self.cd, tol=accuracy)
            # The alternation can certify no finer than its model steps (the core's driver reports a step that
            # rises by more than its tol as coarser than it): its tol follows the steps' while they are coarser.
            # Nor finer than float64 objectives can be told apart (TOL_FLOOR, which the driver refuses below).
            inner_tol = max(min(self.tol, accuracy), cd.tol, TOL_FLOOR)
            inner = AlternatingSolver(inner=cd, tol=inner_tol, max_iter=self.inner_max_iter)
            fit = inner.solve(attrs.evolve(problem, kernel=SubsetKernel(subsets)), warm_start=warm)
            steps += fit.steps
            solution = fit.solution
            q, q_bias = violation_scores(
                X, solution.model_state["beta"], self._label_gram(problem, solution.relation), problem.fit_intercept
            )
            candidate = most_violated_subset(q, m)
            lower = max(lower, float(solution.dual.sum()) - 0.5 * (float(q[candidate].sum()) + q_bias))
            upper = min(upper, float(fit.steps[-1].primal))
            bounds.append((lower, upper))
            clock.append(time.perf_counter() - start)
            gap = relative_gap(lower, upper)
            converged = gap <= self.tol
            stalled = repeated and bounds[-1] == bounds[-2]  # solving again at a tighter accuracy moved nothing
            if converged or stalled or len(bounds) == self.max_iter:
                break
            repeated = bool(np.all(subsets == candidate, axis=1).any())
            if not repeated:
                subsets = np.vstack([subsets, candidate])
            # A new working set restarts lambda at 1/t (Algorithm 2): no subset weights in the warm start;
            # a repeated one goes on from the lambda the last accepted model step used.
            kept = {"subset_weights": solution.model_state["subset_weights"]} if repeated else {}
            warm = self._warm(solution.intercept, solution.dual, solution.relation, _last_eps(fit), kept)
        if not converged:
            reason = (
                "the most violated subset is already in the working set and solving it again did not move the "
                "bounds (the inner problem's precision limits the gap)"
                if stalled
                else f"max_iter={self.max_iter} cutting-plane iterations reached (Kelley's lower bound closes slowly; "
                "docs/methods/ranking.md)"
            )
            warn_not_converged(
                "CuttingPlaneSolver", f"relative bound gap (u_t - l_t) / max(1, |u_t|) = {gap:.3g} > tol={self.tol:g}; {reason}"
            )
        return self._fit(fit, steps, bounds, subsets, converged, time.perf_counter() - start, clock)

    def _solve_proximal(self, problem: Problem, start: float) -> Fit:
        """The proximal bundle over the feature weights s (module docstring, "The stabilised master")."""
        X, c = problem.X, problem.n_labels
        d = X.shape[1]
        m = min(self.n_features, d)
        Y = (np.asarray(problem.Y) > 0).astype(np.int8)
        relation = problem.relation.initial(c) if problem.relation.learned else None
        s = np.full(d, m / d)  # the centre of H: no feature preferred
        cuts, points, steps, bounds, records = CutModel(), [], [], [], []
        alpha, eps, accuracy = None, FIRST_EPS, self.cd.tol
        lower, upper, gap, relation_gap = -np.inf, np.inf, np.inf, 0.0
        centre, t, nu, predicted, best = None, None, None, np.inf, 0
        converged = stalled = False
        while True:
            step_problem = AlternatingSolver.step_problem(problem, relation)
            R_inv = step_problem.regularizer.label_gram(c)
            fit, eps = attrs.evolve(self.cd, tol=accuracy)._alpha_step(X, Y, step_problem, R_inv, s, alpha, eps)
            steps.append(fit.certificate)
            alpha, beta = fit.solution.dual, fit.solution.model_state["beta"]
            cuts.add(np.asarray(X.T @ beta), beta.sum(axis=0) if problem.fit_intercept else np.zeros(c), alpha.sum())
            R = np.linalg.inv(R_inv)
            loss = float(fit.certificate.primal) - _regulariser(fit.solution, R, s, problem.fit_intercept)
            points.append({"fit": fit, "eps": eps, "loss": loss})
            # The bounds at the current coupling: each cut re-evaluated at R^-1, each iterate's W at its best s.
            c_cut, Q = cuts.coefficients(R_inv)
            # Any evaluated point bounds from above; the newest and the last best are the candidates worth it.
            candidates = sorted({len(points) - 1, best})
            fixed = relation is None
            values = {i: self._best_primal(points[i], R, m, problem.fit_intercept, fixed) for i in candidates}
            best = min(candidates, key=lambda i: values[i][0])
            upper_now, best_s = values[best]
            points, best = [points[best]], 0  # no other point is a candidate again: free their alphas
            lower_now = float(np.max(c_cut - 0.5 * np.array([top_sum(q, m) for q in Q])))  # each cut's own (eq. 32)
            if nu is not None:  # the last master's combination of the cuts
                lower_now = max(lower_now, cuts.aggregate_bound(np.append(nu, 0.0), R_inv, m))
            if self.tol < relative_gap(max(lower, lower_now), min(upper, upper_now)) <= LP_WINDOW * self.tol:
                # Near the end the best combination of the cuts is worth its LP: Kelley's bound, recomputed exactly.
                _, lp_weights = lp_lower_bound(c_cut, Q, m)
                lower_now = max(lower_now, cuts.aggregate_bound(lp_weights, R_inv, m))
            if relation is None:  # a fixed coupling: the bounds of every iteration hold together
                lower, upper = max(lower, lower_now), min(upper, upper_now)
            else:
                lower, upper = lower_now, upper_now
            gap = relative_gap(lower, upper)
            if relation is not None:  # Theorem 3.4's D for the best point, and what it would still gain
                relation_next, relation_gap = self._relation_step(problem, points[best], best_s, upper)
            bounds.append((lower, upper))
            records.append(
                {"t": t, "accuracy": accuracy, "relation_gap": relation_gap, "elapsed": time.perf_counter() - start}
            )
            inner_converged = bool(points[best]["fit"].certificate.converged)
            converged = gap <= self.tol and relation_gap <= self.tol and inner_converged
            if converged or stalled or len(bounds) == self.max_iter:
                break
            if relation is not None:
                relation = relation_next
                R_inv = AlternatingSolver.step_problem(problem, relation).regularizer.label_gram(c)
                c_cut, Q = cuts.coefficients(R_inv)
            # The descent test: the candidate just evaluated against the decrease the master predicted for it.
            if centre is None:
                centre, t = s, 2.0 / max(float(Q[-1].max()), 1e-300)
            else:
                achieved = model_value(c_cut, Q, centre) - model_value(c_cut, Q, s)
                if achieved >= DESCENT * predicted:  # a serious step: the centre moves
                    centre = s
                    t *= 2.0 if achieved >= GOOD_DESCENT * predicted else 1.0
                else:  # a null step: the new cut refines the model; a shorter step trusts it less far
                    t /= 2.0
            nu = None if nu is None else np.append(nu, 0.0)
            s, nu, model, _, _ = proximal_master(c_cut, Q, centre, t, m, nu)
            predicted = model_value(c_cut, Q, centre) - model
            # With D learned, the same s is worth solving again at the new D while the D-step still gains.
            stalled = predicted <= STALL_RTOL * max(1.0, abs(upper)) and relation_gap <= self.tol
            nu = _prune(cuts, nu)
            accuracy = min(self.cd.tol, INNER_FRACTION * max(gap, self.tol))
        return self._proximal_fit(
            points[best], best_s, relation, steps, bounds, records, (converged, stalled, relation_gap), m,
            time.perf_counter() - start,
        )

    @staticmethod
    def _best_primal(point, R, m: int, fit_intercept: bool, fixed: bool) -> tuple[float, np.ndarray]:
        """The primal (6) of the point's W and b at their best s in H (cached when the coupling is fixed)."""
        if fixed and "best" in point:
            return point["best"]
        s = cheapest_weights(_row_costs(point["fit"].solution.coef, R), m)
        result = (point["loss"] + _regulariser(point["fit"].solution, R, s, fit_intercept), s)
        if fixed:
            point["best"] = result
        return result

    @staticmethod
    def _relation_step(problem: Problem, point, s, value: float) -> tuple[np.ndarray, float]:
        """Theorem 3.4's D for the point's (W, b) at the feature weights s, and the relative decrease of (6).

        The D-step is exact (a closed form), so that decrease is how far the current D is from
        the best D for the point: 0 exactly when it already is.
        """
        solution = point["fit"].solution
        factor = reweighted_factor(solution.coef, solution.intercept, s, problem.fit_intercept)
        relation = problem.relation.update(factor.T @ factor)
        R_inv = AlternatingSolver.step_problem(problem, relation).regularizer.label_gram(problem.n_labels)
        after = point["loss"] + _regulariser(solution, np.linalg.inv(R_inv), s, problem.fit_intercept)
        return relation, max(0.0, relative_gap(after, value))

    def _proximal_fit(self, point, s, relation, steps, bounds, records, outcome, m: int, elapsed: float) -> Fit:
        converged, stalled, relation_gap = outcome
        lower, upper = bounds[-1]
        gap = relative_gap(lower, upper)
        if not converged:
            if gap > self.tol or relation_gap > self.tol:
                reason = (
                    "the master predicts no further decrease (the bundle stalled)"
                    if stalled
                    else f"max_iter={self.max_iter} iterations reached"
                )
                relation_part = (
                    f", Theorem 3.4's D-step still gains {relation_gap:.3g}" if relation_gap > self.tol else ""
                )
                message = (
                    f"relative bound gap (u_t - l_t) / max(1, |u_t|) = {gap:.3g} > tol={self.tol:g}{relation_part}; "
                    f"{reason}"
                )
            else:
                message = "the bounds closed but the best point's alpha-step did not reach its duality gap"
            warn_not_converged("CuttingPlaneSolver", message)
        solution = point["fit"].solution
        subsets, weights = decompose(s, m)
        model = {
            "subsets": subsets,
            "subset_weights": weights,
            "feature_weights": s,
            "beta": solution.model_state["beta"],
            "eps": point["eps"],
        }
        history = {
            "objective": [float(certificate.primal) for certificate in steps],
            "inner_iterations": [int(certificate.n_iter) for certificate in steps],
            "bounds": list(bounds),
            "relative_gap": [relative_gap(*pair) for pair in bounds],
            "proximal_parameter": [record["t"] for record in records],
            "inner_accuracy": [record["accuracy"] for record in records],
            "elapsed": [record["elapsed"] for record in records],
        }
        if relation is not None:
            history["relation_gap"] = [record["relation_gap"] for record in records]
        certificate = self._outer_certificate(point["fit"].certificate, bounds, converged, elapsed, history)
        solution = Solution(
            coef=solution.coef, intercept=solution.intercept, relation=relation, dual=solution.dual, model_state=model
        )
        return Fit(solution, certificate, steps=steps, history=history)

    def _outer_certificate(self, inner, bounds, converged: bool, elapsed: float, history) -> Certificate:
        """The cutting plane's own certificate: primal u_t, dual l_t, their gap, the outer verdict.

        ``converged`` holds only when the outer relative bound gap is at most ``tol`` (and, for a
        learned D, Theorem 3.4's step gains at most ``tol``) *and* the returned point's alpha-step
        reached its duality gap.  ``statistics`` keeps the bounds per iteration and the returned
        point's alpha-step certificate as ``"inner"``.
        """
        lower, upper = bounds[-1]
        return Certificate.from_objectives(
            upper,
            lower,
            kkt_violation=float(inner.kkt_violation),
            n_iter=len(bounds),
            time=elapsed,
            converged=bool(converged),
            solver=type(self).__name__,
            statistics=dict(history) | {"master": self.master, "inner": inner.as_dict()},
        )

    @staticmethod
    def _label_gram(problem: Problem, relation) -> np.ndarray:
        """R^-1 of the dual (7) at the relation D (the problem's own regulariser when D is not learned)."""
        return AlternatingSolver.step_problem(problem, relation).regularizer.label_gram(problem.n_labels)

    def _fit(self, last: Fit, steps, bounds, subsets, converged: bool, elapsed: float, clock) -> Fit:
        solution = last.solution
        model = {
            "subsets": subsets,
            "subset_weights": solution.model_state["subset_weights"],
            "feature_weights": solution.model_state["feature_weights"],
            "beta": solution.model_state["beta"],
            "eps": _last_eps(last),
        }
        history = {
            "objective": [float(c.primal) for c in steps],
            "inner_iterations": [int(c.n_iter) for c in steps],
            "bounds": list(bounds),
            "relative_gap": [relative_gap(*pair) for pair in bounds],
            "elapsed": list(clock),
        }
        verdict = bool(steps[-1].converged and converged)
        certificate = self._outer_certificate(steps[-1], bounds, verdict, elapsed, history)
        solution = Solution(
            coef=solution.coef, intercept=solution.intercept, relation=solution.relation, dual=solution.dual,
            model_state=model,
        )
        return Fit(solution, certificate, steps=steps, history=history)

    def _warm(self, intercept, alpha, relation, eps: float, kept: dict) -> Solution:
        """The start of Kelley's next inner alternation: alpha (scales with C), the relation, eps and ``kept`` weights."""
        fixed = {"eps": eps} | kept | ({} if relation is None else {"relation": relation})
        state = WarmState(type(self).__name__, scaled={"dual": alpha}, fixed=fixed)
        return Solution(coef=None, intercept=intercept, dual=alpha, relation=relation, warm_state=state)

    def _inner_accuracy(self, previous: float, gap: float, repeated: bool) -> float:
        """The inner problem's relative accuracy: INNER_FRACTION of the bound gap, never loosened.

        The alpha-steps use ``min(cd.tol, accuracy)`` and the alternation ``min(tol, accuracy)``.
        A repeated working set (its most violated subset was already in it) is solved again
        at INNER_FRACTION of the tightest of these.
        """
        if repeated:
            return INNER_FRACTION * min(previous, self.cd.tol, self.tol)
        return min(previous, INNER_FRACTION * max(self.tol, gap))


def _row_costs(W, R) -> np.ndarray:
    """``a_j = w^j R (w^j)^T`` per feature: the relaxed regulariser is ``1/2 sum_j a_j / s_j`` (+ the bias's)."""
    return np.maximum(np.sum((W @ R) * W, axis=1), 0.0)


def _bias_cost(intercept, R, fit_intercept: bool) -> float:
    return float(intercept @ R @ intercept) if fit_intercept else 0.0


def _regulariser(solution: Solution, R, s, fit_intercept: bool) -> float:
    """``1/2 sum_j w^j R (w^j)^T / s_j + 1/2 b R b^T``: the regulariser of (6) at the feature weights s.

    A feature with w^j = 0 costs nothing wherever s_j is; W carries weight only where s_j > 0.
    """
    spread = _row_costs(solution.coef, R)
    held = spread > 0.0
    return 0.5 * float(np.sum(spread[held] / s[held])) + 0.5 * _bias_cost(solution.intercept, R, fit_intercept)


def _prune(cuts: CutModel, weights) -> np.ndarray:
    """Keep at most MAX_CUTS cuts: every one with weight in the master and the newest, then the most recent."""
    if len(cuts) <= MAX_CUTS:
        return weights
    newest = len(cuts) - 1
    active = [i for i in range(len(cuts)) if weights[i] > 0.0 or i == newest]
    idle = [i for i in range(len(cuts)) if i not in set(active)]
    kept = sorted(active[-MAX_CUTS:] + idle[len(idle) - max(0, MAX_CUTS - len(active)) :])
    cuts.keep(kept)
    return weights[kept]
