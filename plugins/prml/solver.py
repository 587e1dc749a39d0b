"""The family's model step: one round of Algorithm 2 (a W-step, then a D-step).

You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*, Algorithm 2.  With the problem's
regulariser the core's :class:`~multilabel_core.regularizers.LowRank` (Z = D^T W, rank k, its
``gamma`` the paper's gamma_1), one :meth:`PrivilegedCDSolver.solve`
is one round of the alternation:

1. **W-step** (section 3.1): D fixed, L independent problems on the rows ``D x_j`` (x with
   its constant 1 appended when the scores have a bias): SVM+ (6) with ``C / gamma_1`` and
   ``gamma_2 / gamma_1`` (dual 7, recovery 8-9) under :class:`~.parts.PrivilegedLabels`,
   the hinge SVM under :class:`~multilabel_core.relations.Independent` (LEML, problem 2);
2. **D-step** (section 3.2): W fixed, one problem over the L n pairs, margins
   ``w_i^T D x_j``: SVM+ (10) (dual 11, recovery 12-13; Algorithm 1) or the hinge.

Each sub-problem is solved by this family's primal interior-point method
(:func:`~multilabel_core_plugins.prml.svmplus.svmplus_ipm`, :func:`~multilabel_core_plugins.prml.svmplus.embedded_hinge_ipm`:
Mehrotra's predictor-corrector, a few dozen Newton steps on the k dim(x) primal unknowns) when
its Newton system is small (``sub_solver="auto"``, ``IPM_MAX_UNKNOWNS``, ``IPM_MAX_FLOPS``; for
sparse rows the Gram products cost by their nonzeros), otherwise by this family's SVM+ duals on the core's coordinate-descent engine
(:func:`~multilabel_core_plugins.prml.svmplus.svmplus_cd`,
:func:`~multilabel_core_plugins.prml.svmplus.embedded_hinge_cd`): a random permutation per epoch that
keeps each example's coordinates together (the paper samples with replacement and gives no
stopping rule), each call stopping when every projected gradient lies in [-eps, eps] (the
KKT conditions of the dual) or after ``max_iter`` epochs (a ConvergenceWarning), eps
tightened until the sub-solve's relative duality gap meets ``tol``.  The gap is a true one:
the hinge's slacks make every point feasible, and SVM+'s correcting functions are raised
through their bias until the point is (``svmplus_cd``); without that bias it is the
complementarity residual.  The interior-point method's certificate is the same true gap.
Under ``sub_solver="auto"`` the hinge D-step (LEML) beyond those limits is solved by cuts on its
``k dim(x_a)`` primal instead (:func:`~multilabel_core_plugins.prml.bundle.embedded_hinge_bundle`:
Teo et al.'s bundle method with OCAS's line search, from the incoming D; its gap is the SVM dual
at the cuts' convex combination, again a true one): on dense standardised rows dual CD over the
L n pairs stalls far from its gap (corel16k001, n = 1000: relative gap 0.96 after 200 epochs),
while the cuts lower the D-step's objective from the start on.  ``max_iter`` bounds the cuts.  The
SVM+ dual has no upper bound and a low-rank Hessian, and CD on it can spend its epoch caps
(docs/solvers/ipm.md).  The solver
``learns_state`` (D), so the core's :class:`~multilabel_core.solvers.AlternatingSolver`
repeats the rounds until objective (5) stops decreasing -- every certified block step
decreases it, W~ is optimised in both; a round whose D-step stopped at its epoch cap above its start
returns the incoming point and the alternation goes on from the D-step's D
(:meth:`PrivilegedCDSolver._no_worse_than_incoming`).

With a Frobenius regulariser the scores are ``W = I`` times D (PrBR, the paper's Remark:
k = L, the D-step splits into L SVM+ problems): one solve, nothing to alternate.

D = 0 is a fixed point of the alternation (K_D = 0 gives w = 0 in eq. 8, then D = 0 in
eq. 12), so the first round starts elsewhere: by default (``init="svd"``) from the k leading
left singular vectors of ``X_a^T Y`` (the directions of x most correlated with the labels; no
randomness), or (``init="random"``) from entries N(0, 1/d) drawn from ``random_state``.

The paper-literal correcting functions (``PrivilegedLabels(bias=False)``) can make problem
(6) infeasible, and then its dual is unbounded and CD would only stop at the epoch cap.
Feasibility is then checked first, per label, by a linear program
(:func:`~.feasibility.infeasible_labels`), and an infeasible label is a ValueError naming
it.  A feasible first W-step makes every later step feasible: each step's solution is a
feasible point of the next one.
"""

from __future__ import annotations

import time
from typing import ClassVar, NamedTuple

import attrs
import numpy as np
import scipy.sparse as sp

from multilabel_core.base import CapabilityError, Fit, Problem, Solution, Solver, WarmState, warm_state_of
from multilabel_core.certificate import Certificate
from multilabel_core.parallel import map_threads, n_jobs_field
from multilabel_core.solvers import AlternatingSolver, tighten_to_relative_gap
from multilabel_core.validation import check_random_state, check_scalar, count, flag, seed, warn_not_converged

from .feasibility import infeasible_labels
from .interior_point import check_feature_scale
from .bundle import embedded_hinge_bundle
from .svmplus import embedded_hinge_cd, embedded_hinge_ipm, embedded_solution, svmplus_cd, svmplus_ipm

__all__ = [
    "FIRST_EPS", "IPM_MAX_FLOPS", "IPM_MAX_NEWTON", "IPM_MAX_UNKNOWNS", "PrivilegedCDSolver", "newton_cost",
    "prml_alternating", "regularizer_form", "slack_kind", "slack_weight",
]

#: The projected-gradient bound a sub-solve starts at (LIBLINEAR's default eps).
FIRST_EPS = 0.1

#: ``sub_solver="auto"`` solves a sub-problem by the interior-point method when its Newton system has at
#: most this many unknowns (k dim(x_a) for a D-step, k for a W-step label, dim(x_a) for a PrBR label): a
#: factorisation of 3000 unknowns takes about a second, and dual CD is the method beyond ...
IPM_MAX_UNKNOWNS = 3000

#: ... and when one Newton step of the whole step costs at most this many flops: per label
#: ``n w^2 + n q (q + w) + dim(x_a)^2 q`` (w = dim(x_a) for dense rows, the mean nonzeros of x_a for sparse
#: ones; q = dim(x~_a)) for the blocks, plus ``(k dim(x_a))^3 / 3`` per factorisation.  The limit
#: bounds the time of a step and of a whole solve on one thread (the Newton steps' flop rate and those times:
#: benchmarks/RESULTS.md, "Timings behind code comments").  Every step of the reproductions' data is in:
#: enron's PrBR step (2.1e10), bibtex's W-step (4.1e10, where dual CD's epoch cap left a relative gap of 1,
#: its dual still negative) and PrBR step (4.4e11), corel5k's W-step (3.8e11) and PrBR step (1.9e11).  Only
#: the D-steps of text rows go to CD, by the unknowns' limit.
IPM_MAX_FLOPS = 5e11
#: Largest cut of the bundle route for the hinge D-step, in entries (k dim(x_a); 8 MiB of float64): the
#: cuts are dense, so wider problems (a sparse X declaring 10^6 columns) stay on dual CD.
BUNDLE_MAX_CUT_ENTRIES = 2**20

#: Most Newton steps of one interior-point sub-solve (they take 5 to 30 on the reproductions' data).
IPM_MAX_NEWTON = 200

SUB_SOLVERS = ("auto", "cd", "ipm")
INITS = ("svd", "random")


def _relative_gap(instance, attribute, value) -> None:
    """attrs validator: a relative duality gap in (0, 1); any point meets 1 or more, which certifies nothing."""
    check_scalar(value, attribute.name, low=0.0, low_inclusive=False, high=1.0, high_inclusive=False)


@attrs.frozen
class PrivilegedCDSolver(Solver):
    """PrML, PrBR and LEML's solver: Algorithm 2's rounds by Algorithm 1 (module docstring).

    What it needs of each part, by capability (:meth:`check` refuses anything else, before any
    work, with a CapabilityError naming the part):

    * loss: a margin loss with an SVM dual (``dual_box``, ``dual_diagonal``, sign targets) whose
      slack is paid linearly -- the hinge, SVM+ as in the paper -- or squared -- the squared
      hinge, ``C sum phi^2`` in place of ``C sum phi`` (:func:`slack_kind`; squared slacks go to
      the interior-point sub-solvers).  A loss without slacks (the logistic) is refused: with a
      label pool there is no slack for the correcting functions to replace (You et al., eq. 4);
    * regulariser: the low-rank factor form (``rank``, ``gamma``, ``factor_value`` = ``1/2 ||D||^2
      + gamma_1/2 ||W||^2``: :class:`~multilabel_core.regularizers.LowRank`; PrML, LEML) or
      ``1/2 ||W||_F^2`` (``label_gram`` = I: PrBR, W = I) (:func:`regularizer_form`);
    * relation: one with a label pool (``state`` ``("pool",)``, ``pool(Y)``, ``gamma``, ``bias``:
      :class:`~.parts.PrivilegedLabels`, SVM+), or one without state whose ``initial`` is the
      identity (:class:`~multilabel_core.relations.Independent`: the slacks are the loss's own);
    * kernel: linear.

    The data: rows of norm at most :data:`~multilabel_core_plugins.prml.interior_point.MAX_FEATURE_SCALE`
    (1e50); a larger scale is a ValueError before any work, since the interior-point Newton
    systems would overflow float64 (:func:`~multilabel_core_plugins.prml.interior_point.check_feature_scale`).

    One call is one round of Algorithm 2 on a low-rank problem, which is not a solution of
    problem (5): there the solver must be the model step of an alternating driver, and says so
    with ``as_round=True`` (:func:`prml_alternating` does); without it the low-rank problem is
    refused.

    Parameters
    ----------
    tol : float, default 1e-3
        Largest relative duality gap ``gap / max(1, |primal|)`` of each sub-solve.  The engine
        stops on a projected-gradient bound eps (LIBLINEAR's rule), whose meaning in
        objective terms depends on C and the data: a sub-solve runs at eps = 0.1, then
        eps / 10, ... warm-started, until its certificate meets ``tol``
        (:func:`~multilabel_core.solvers.tighten_to_relative_gap`).
    max_iter : int, default 10000
        Most epochs of one engine call (ConvergenceWarning beyond).
    shrinking : bool, default True
        Whether the dual CD engine drops the coordinates stuck at a bound from its sweeps
        (LIBLINEAR's shrinking; they are restored before the final check, so the solution
        meets the same stopping rule either way).
    random_state : None, int or numpy Generator, default 0
        Seeds the first D and the engine's permutations (an int: reproducible fits).
    n_jobs : int or None, default None
        Threads for the per-label problems of a W-step (and PrBR's): None is the thread budget
        the caller leaves (:mod:`multilabel_core.parallel`), -1 every core.
    sub_solver : {"auto", "cd", "ipm"}, default "auto"
        The interior-point method, dual CD, or the former when its Newton step is small (sparse
        rows priced by their nonzeros; module docstring).  ``tol`` applies to both; ``max_iter`` and
        ``shrinking`` to CD.
    init : {"svd", "random"}, default "svd"
        The first D (module docstring).
    as_round : bool, default False
        True when an alternating driver calls :meth:`solve` once per round (low-rank problems);
        False refuses the low-rank problem, which one call would not solve.

    Notes
    -----
    ``solve`` returns a :class:`~multilabel_core.base.Fit` whose solution has ``coef`` Z =
    D^T W (d, L), ``intercept`` (L,) (the bias row of Z), ``dual`` None (the duals are in
    the warm state, see below), and ``model_state`` (:attr:`model_state_names`): ``"dictionary"``
    D (k, d), ``"dictionary_intercept"`` (k,), ``"label_weights"`` W (k, L),
    ``"privileged_weights"`` W~ (L, L) as columns per label and ``"privileged_intercept"`` (L,)
    (None without privileged labels), ``"pool"`` the (L, L) mask (the presets' fitted
    attributes, :attr:`fitted_attributes`).  Its ``warm_state`` holds the sub-solves' dual
    variables with the C they were solved at and the D the next round goes on from: this
    solver rescales the duals itself, by the ratio of the new C to that C (the duals of eqs. 7
    and 11 scale with C), so they are ``fixed`` for :meth:`~multilabel_core.base.WarmState.rescaled`.
    The fit's ``history`` holds per round the ``"w_step_certificates"`` and
    ``"d_step_certificates"`` (the sub-solves' certificates; None for PrBR's W-step) and the
    ``"block_objectives"``, objective (5) after the W-step and after the D-step
    (:attr:`history_attributes`).  The certificate's primal is objective (5), its dual the
    D-step's dual plus ``gamma_1/2 ||W||^2`` (constant in that step), its gap and KKT
    violation the D-step's; converged when both sub-solves are; its ``statistics`` hold the
    sub-solves' certificates (``"w_step"``, None for PrBR, and ``"d_step"``) and the
    ``"block_objectives"``.
    """

    tol: float = attrs.field(default=1e-3, validator=_relative_gap)
    max_iter: int = attrs.field(default=10000, validator=count)
    shrinking: bool = attrs.field(default=True, validator=flag)
    random_state: object = attrs.field(default=0, validator=seed)
    n_jobs: int | None = n_jobs_field()
    sub_solver: str = attrs.field(default="auto", validator=attrs.validators.in_(SUB_SOLVERS))
    init: str = attrs.field(default="svd", validator=attrs.validators.in_(INITS))

    as_round: bool = attrs.field(default=False, validator=flag)

    requires: ClassVar[dict[str, tuple[str, ...]]] = {"kernel": ("linear",)}
    consumes: ClassVar[dict[str, tuple[str, ...]]] = {"relation": ("pool",)}
    warm_state_names: ClassVar[dict[str, str]] = {
        "C": "fixed: the C the duals were solved at (the solver rescales them to a new C itself)",
        "duals": "fixed: the sub-solves' dual variables, {'w_step': {...}, 'd_step': {'alpha': ..., 'beta': ...}}",
        "dictionary": "fixed: (D, intercept), the D the next round goes on from (the D-step's, even when kept)",
    }
    model_state_names: ClassVar[dict[str, str]] = {
        "dictionary": "D (k, d)",
        "dictionary_intercept": "the bias column of D (k,)",
        "label_weights": "W (k, L) (I for PrBR)",
        "privileged_weights": "W~ (L, L), column i the correcting function of label i (None without a pool)",
        "privileged_intercept": "the correcting functions' biases (L,) (None without a pool)",
        "pool": "the (L, L) bool mask of the labels each label sees (None without a pool)",
    }
    fitted_attributes: ClassVar[dict[str, str]] = {
        "dictionary": "dictionary_",
        "dictionary_intercept": "dictionary_intercept_",
        "label_weights": "label_weights_",
        "privileged_weights": "privileged_weights_",
        "privileged_intercept": "privileged_intercept_",
        "pool": "privileged_pool_",
    }
    history_attributes: ClassVar[dict[str, str]] = {
        "w_step_certificates": "w_step_certificates_",
        "d_step_certificates": "d_step_certificates_",
        "block_objectives": "block_objective_history_",
    }

    def check(self, problem: Problem) -> None:
        """Refuse, before any work, the parts this solver cannot honour (class docstring: what each must provide).

        Parameters
        ----------
        problem : Problem
            The problem to be solved.

        Raises
        ------
        CapabilityError
            If the loss has no slack this solver can pay (:func:`slack_kind`), the regulariser
            is neither of its two forms (:func:`regularizer_form`), the low-rank form comes
            without ``as_round=True``, the relation lacks what a label pool needs or couples
            the labels without one, the kernel is not linear, or squared slacks meet
            ``sub_solver="cd"`` or a Newton system beyond ``IPM_MAX_UNKNOWNS`` /
            ``IPM_MAX_FLOPS``.
        ValueError
            If the rank exceeds the number of labels, the relation's gamma_2 is not a finite
            positive number, ``sub_solver="ipm"`` or squared slacks meet correcting functions
            without their bias, or a row's scale exceeds what the interior-point Newton
            systems hold in float64 (``check_feature_scale``).
        """
        pooled = "pool" in tuple(getattr(problem.relation, "state", ()))
        slack_kind(problem.loss, privileged=pooled, solver=type(self).__name__)
        super().check(problem)
        form = regularizer_form(problem, type(self).__name__)
        if form == "low_rank" and not self.as_round:
            raise CapabilityError(
                f"{type(self).__name__} solves one round of You et al.'s Algorithm 2 (a W-step, then a D-step) per "
                f"call; under the low-rank regulariser {type(problem.regularizer).__name__} one round is not a "
                "solution of problem (5): use solver='prml_alternating' (solver='auto' finds it), which repeats the "
                "rounds, or AlternatingSolver(inner=PrivilegedCDSolver(as_round=True))"
            )
        if form == "low_rank" and problem.regularizer.rank > problem.n_labels:
            raise ValueError(
                f"the rank k = {problem.regularizer.rank} exceeds the number of labels L = {problem.n_labels}: "
                "Z = D^T W has rank <= L"
            )
        correcting = _correcting(problem.relation, type(self).__name__)
        if correcting is None:
            _require_apart(problem, type(self).__name__)
        else:
            problem.relation.pool(problem.Y)
        if self.sub_solver == "ipm" and correcting is not None and not correcting.bias:
            raise ValueError(
                "sub_solver='ipm' solves the SVM+ problems with the correcting functions' bias "
                "(PrivilegedLabels(bias=True), privileged_bias=True): the paper-literal, possibly infeasible "
                "form is solved by dual CD (sub_solver='cd' or 'auto')"
            )
        if slack_kind(problem.loss) == "squared":
            self._check_squared(problem, form, correcting)
        # Last, once every part is accepted (solver="auto" moves on past a CapabilityError only).  One
        # rule for every sub-solver: the interior-point method's, whose Newton systems hold X^T Theta X.
        check_feature_scale(problem.X, type(self).__name__)

    def _check_squared(self, problem: Problem, form: str, correcting) -> None:
        """Squared slacks are solved by the interior-point method only: refuse what it cannot take.

        Dual CD's engine has no curvature term for a correcting function's value (its SVM+ dual
        is the linear-slack one, eq. 7), so the squared-slack sub-problems go to
        :func:`~multilabel_core_plugins.prml.svmplus.svmplus_ipm` / :func:`~multilabel_core_plugins.prml.svmplus.embedded_hinge_ipm`,
        which need the correcting functions' bias and a Newton system within the limits
        ``IPM_MAX_UNKNOWNS`` and ``IPM_MAX_FLOPS``.
        """
        name = type(problem.loss).__name__
        if self.sub_solver == "cd":
            raise CapabilityError(
                f"{type(self).__name__}(sub_solver='cd') cannot solve the squared slacks of {name}: the dual CD "
                "engine solves the linear-slack duals (You et al., eqs. 7 and 11); use sub_solver='auto' or 'ipm'"
            )
        if correcting is not None and not correcting.bias:
            raise ValueError(
                f"the squared slacks of {name} are solved by the interior-point method, which needs the correcting "
                "functions' bias (PrivilegedLabels(bias=True), privileged_bias=True)"
            )
        X, n, L = problem.X, problem.n_samples, problem.n_labels
        q = 1 if correcting is None else L + 1
        width = X.nnz / n + bool(problem.fit_intercept) if sp.issparse(X) else X.shape[1] + bool(problem.fit_intercept)
        p = X.shape[1] + bool(problem.fit_intercept)
        if form == "low_rank":
            k = problem.regularizer.rank
            steps = {"W-step": newton_cost(n, k, k, 1, q, L, L), "D-step": newton_cost(n, width, p, k, q, L, 1)}
        else:
            steps = {"per-label step": newton_cost(n, width, p, 1, q, L, L)}
        for step, (unknowns, flops) in steps.items():
            if unknowns > IPM_MAX_UNKNOWNS or flops > IPM_MAX_FLOPS:
                raise CapabilityError(
                    f"{type(self).__name__} solves the squared slacks of {name} by the interior-point method only, "
                    f"and the {step}'s Newton system ({unknowns} unknowns, {flops:.2g} flops a step) exceeds its "
                    f"limits ({IPM_MAX_UNKNOWNS} unknowns, {IPM_MAX_FLOPS:.2g} flops): use the hinge (dual CD) "
                    "or a smaller rank"
                )

    def learns_state(self, problem: Problem) -> bool:
        """Tell whether a solve carries state of its own from round to round: D, for the low-rank problems.

        Parameters
        ----------
        problem : Problem
            The problem to be solved.

        Returns
        -------
        bool
            True when the regulariser has the low-rank factor form (PrML, LEML): each solve is
            one round of Algorithm 2 and the next goes on from its D, so the core's alternating
            driver repeats the rounds; False for PrBR (W = I), solved in one call.

        Raises
        ------
        CapabilityError
            If the regulariser is of neither form (:func:`regularizer_form`).
        """
        return regularizer_form(problem, type(self).__name__) == "low_rank"

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        self.check(problem)
        start = time.perf_counter()
        rng = check_random_state(self.random_state)
        Y = np.asarray(problem.Y, dtype=np.float64)
        X = problem.X
        privileged = _correcting(problem.relation, type(self).__name__)
        pool = problem.relation.pool(Y) if privileged is not None else None
        warm = _Warm.read(warm_state_of(warm_start), problem.C)
        if regularizer_form(problem, type(self).__name__) == "identity":
            return self._identity(problem, X, Y, privileged, pool, warm, rng, start)
        return self._round(problem, X, Y, privileged, pool, warm, rng, start)

    # -- the two kinds of solve ---------------------------------------------------------------

    def _identity(self, problem, X, Y, privileged, pool, warm, rng, start) -> Fit:
        """PrBR (W = I): the L problems of the D-step at once, no alternation."""
        if privileged is not None and not privileged.bias:
            _refuse_infeasible(X, Y, pool, problem.fit_intercept, "PrBR")
        fit = self._per_label(X, Y, problem.C, privileged, pool, problem.fit_intercept, warm.d_step, rng, problem.loss)
        solution = fit.solution
        model = {
            "dictionary": solution.coef.T.copy(), "dictionary_intercept": solution.intercept.copy(),
            "label_weights": np.eye(Y.shape[1]), "pool": pool, **_privileged_state(fit, privileged),
        }
        state = WarmState(type(self).__name__, fixed={"C": problem.C, "duals": {"d_step": _duals(fit)}})
        certificate = attrs.evolve(
            fit.certificate, time=time.perf_counter() - start, solver=f"{type(self).__name__}(W = I)",
            statistics={"w_step": None, "d_step": fit.certificate, "block_objectives": [fit.certificate.primal]},
        )
        history = _round_history(certificate)
        solution = Solution(coef=solution.coef, intercept=solution.intercept, dual=None, model_state=model, warm_state=state)
        return Fit(solution, certificate, history=history)

    def _round(self, problem, X, Y, privileged, pool, warm, rng, start) -> Fit:
        """One round of Algorithm 2: the W-step at the current D, then the D-step at the new W."""
        regularizer = problem.regularizer
        k = regularizer.rank
        dimension = X.shape[1] + bool(problem.fit_intercept)
        D = warm.dictionary(k, dimension)
        first_round = D is None
        if first_round:
            D = _first_dictionary(X, Y, k, problem.fit_intercept, self.init, rng)
        g1 = regularizer.gamma
        projected = _projected(X, D, problem.fit_intercept)
        if privileged is not None and not privileged.bias and first_round:
            _refuse_infeasible(projected, Y, pool, False, "the first W-step (6)")
        scaled = privileged._replace(gamma=privileged.gamma / g1) if privileged is not None else None
        w_fit = self._per_label(projected, Y, problem.C / g1, scaled, pool, False, warm.w_step, rng, problem.loss)
        W = np.ascontiguousarray(w_fit.solution.coef)  # (k, L): the w_i as columns
        w_objective = 0.5 * float(np.sum(D * D)) + g1 * w_fit.certificate.primal

        d_fit = self._sub_solve(X, Y, problem.C, privileged, pool, W, problem.fit_intercept, warm.d_step, rng,
                                loss=problem.loss, primal_start=D)
        half_w = 0.5 * g1 * float(np.sum(W * W))
        d_fit, kept = self._no_worse_than_incoming(d_fit, D, W, w_fit, w_objective - half_w, problem.fit_intercept)
        model_d = d_fit.solution.model_state
        dictionary = model_d["D"]
        dictionary_intercept = model_d["D_intercept"] if problem.fit_intercept else np.zeros(k)
        objective = d_fit.certificate.primal + half_w
        converged = bool(w_fit.certificate.converged and d_fit.certificate.converged)
        certificate = Certificate(
            primal=objective, dual=d_fit.certificate.dual + half_w, gap=d_fit.certificate.gap,
            kkt_violation=max(w_fit.certificate.kkt_violation, d_fit.certificate.kkt_violation),
            n_iter=w_fit.certificate.n_iter + d_fit.certificate.n_iter, time=time.perf_counter() - start,
            converged=converged, solver=type(self).__name__,
            statistics={"w_step": w_fit.certificate, "d_step": d_fit.certificate,
                        "block_objectives": [w_objective, objective], "d_step_kept_incoming": kept},
        )
        model = {
            "dictionary": dictionary, "dictionary_intercept": dictionary_intercept, "label_weights": W,
            "pool": pool, **_privileged_state(d_fit, privileged),
        }
        # A round that returned its incoming D goes on from its D-step's (_no_worse_than_incoming).
        continue_from = model_d.get("continue_from") or (dictionary, dictionary_intercept)
        state = WarmState(type(self).__name__, fixed={
            "C": problem.C, "duals": {"w_step": _duals(w_fit), "d_step": _duals(d_fit)}, "dictionary": continue_from,
        })  # fmt: skip
        solution = Solution(
            coef=d_fit.solution.coef, intercept=d_fit.solution.intercept, dual=None, model_state=model, warm_state=state
        )
        return Fit(solution, certificate, history=_round_history(certificate))

    def _no_worse_than_incoming(self, d_fit, D, W, w_fit, incoming, fit_intercept) -> tuple[Fit, bool]:
        """The round's point: the D-step's, or the incoming one when an unconverged D-step ended above it.

        The incoming D with the W-step's correcting functions is a feasible point of the D-step
        (the W-step's constraints are the same inequalities), and its D-step objective
        ``incoming`` is known: (5) after the W-step less ``gamma_1/2 ||W||^2``.  Dual CD stopped
        at its epoch cap can return a D far above it (bibtex: 8.2e5 against 3.1e4 before the
        step; enron: 17 of 20 D-steps above).  The round then returns the incoming point, so the
        objective a round reports (and the model a fit exposes) is the lower of its two block
        points, and (5) never increases from round to round; its certificate is the D-step's
        re-evaluated there (primal ``incoming``, the same dual: a true gap).  The alternation
        itself goes on from the D-step's D (the warm state's ``"dictionary"``) and duals, as
        Algorithm 2 does: the next W-step at that D can reach a lower value than any so far
        (enron: 10 212 after 16 495 and 17 565).  A converged D-step is returned as it is.
        Reported by a ConvergenceWarning and ``d_step_kept_incoming``.
        """
        certificate = d_fit.certificate
        if certificate.converged or certificate.primal <= incoming:
            return d_fit, False
        warn_not_converged(
            type(self).__name__,
            f"the D-step's point (objective {certificate.primal:.6g}, relative gap {certificate.relative_gap:.3g}) "
            f"is above the incoming D's ({incoming:.6g}); the round returns the incoming D, the next round goes on "
            f"from the D-step's",
        )
        model_d = d_fit.solution.model_state
        model = {key: value for key, value in model_d.items() if key not in ("D", "D_intercept")}
        model["continue_from"] = (model_d["D"], model_d["D_intercept"])
        if "W_tilde" in model:
            model.update(W_tilde=w_fit.solution.model_state["W_tilde"], intercept_tilde=w_fit.solution.model_state["intercept_tilde"])
        d = D.shape[1] - bool(fit_intercept)
        solution = embedded_solution(D, W, d, fit_intercept, d_fit.solution.dual, model)
        gap = incoming - certificate.dual
        kept = attrs.evolve(
            certificate, primal=incoming, gap=gap, converged=bool(gap <= self.tol * max(1.0, abs(incoming))),
            statistics=certificate.statistics | {"kept_incoming": True, "d_step_primal": certificate.primal},
        )
        return Fit(solution, kept), True

    def _per_label(self, X, Y, C, privileged, pool, fit_intercept, start, rng, loss=None) -> Fit:
        """The L independent problems of a W-step (or PrBR), each its own solve with its own stopping test.

        One engine run over all of them would sweep every label until the slowest had converged
        (on enron 5.9 times the label-epochs per-label solves need).  The solves release the
        GIL, so ``n_jobs`` threads run them side by side, BLAS held to one thread meanwhile;
        each label's seed is drawn before any runs, so the result does not depend on the
        scheduling.  The combined certificate sums the primals, duals and gaps, and is converged
        when their relative gap meets ``tol`` (one ConvergenceWarning otherwise).  Each label is
        solved to ``tol / L``: a label's relative gap is taken against ``max(1, |primal_i|)``, so
        labels whose objectives are below 1 meet ``tol`` only as an absolute gap, and L such gaps
        could sum past the step's own ``tol`` (LEML at C = 0.001 on yeast: each of 14 labels
        certified, their sum 1.2e-3 relative).
        """
        n_labels = Y.shape[1]
        seeds = rng.integers(2**63, size=n_labels)

        def one(i):
            label_start = None if start is None else {key: value[:, [i]] for key, value in start.items()}
            return self._sub_solve(
                X, Y[:, [i]], C, privileged, None if pool is None else pool[[i]], None, fit_intercept, label_start,
                np.random.default_rng(seeds[i]), privileged_rows=Y, warn=False, tol=self.tol / n_labels, loss=loss,
            )

        start_time = time.perf_counter()
        fits = map_threads(one, range(n_labels), self.n_jobs)
        certificates = [fit.certificate for fit in fits]
        primal, dual = sum(c.primal for c in certificates), sum(c.dual for c in certificates)
        gap = sum(c.gap for c in certificates)
        # The step's certificate is the sum's: a label short of its own relative gap (a small
        # primal makes that a tight target) is fine when the step as a whole meets tol.
        reached = gap <= self.tol * max(1.0, abs(primal))
        if not reached:
            short = sum(not c.converged for c in certificates)
            warn_not_converged(
                type(self).__name__,
                f"relative duality gap {gap / max(1.0, abs(primal)):.3g} > tol={self.tol:g} over the {n_labels} "
                f"per-label problems ({short} of them short of their own gap within max_iter={self.max_iter} epochs)",
            )
        certificate = Certificate(
            primal=primal, dual=dual, gap=gap, kkt_violation=max(c.kkt_violation for c in certificates),
            n_iter=max(c.n_iter for c in certificates), time=time.perf_counter() - start_time,
            converged=bool(reached), solver=type(self).__name__ + " (per label)",
            statistics={"labels": certificates},
        )

        def columns(get):
            return np.column_stack([np.asarray(get(fit)).reshape(-1) for fit in fits])

        model = {}
        if privileged is not None:
            model = {
                "beta": columns(lambda fit: fit.solution.model_state["beta"]),
                "W_tilde": columns(lambda fit: fit.solution.model_state["W_tilde"]),
                "intercept_tilde": columns(lambda fit: fit.solution.model_state["intercept_tilde"]).reshape(-1),
            }
        solution = Solution(
            coef=columns(lambda fit: fit.solution.coef), intercept=columns(lambda fit: fit.solution.intercept).reshape(-1),
            dual=columns(lambda fit: fit.solution.dual), model_state=model,
        )
        return Fit(solution, certificate)

    def _sub_solve(self, X, Y, C, privileged, pool, embedding, fit_intercept, start, rng, privileged_rows=None,
                   warn=True, tol=None, loss=None, primal_start=None) -> Fit:
        """One SVM+ (privileged) or hinge problem to the relative gap ``tol`` (the solver's by default),
        warm-started from ``start``.

        ``privileged_rows`` are the rows of the privileged features (the signs of every label;
        ``Y`` itself by default, when Y holds every label).  ``loss`` says how a slack is paid
        (:func:`slack_kind`; the hinge's linear slack when None): the weight passed to the
        engines is :func:`slack_weight` at ``C``."""
        privileged_rows = Y if privileged_rows is None else privileged_rows
        tol = self.tol if tol is None else tol
        squared = loss is not None and slack_kind(loss) == "squared"
        C = C if loss is None else slack_weight(loss, C)
        settings = {
            "embedding": embedding, "fit_intercept": bool(fit_intercept), "max_iter": self.max_iter,
            "shrinking": self.shrinking,
        }

        if squared or self._interior_point(privileged, X, embedding, fit_intercept, privileged_rows.shape[1]):
            if privileged is None:
                return embedded_hinge_ipm(X, Y, C, embedding=embedding, fit_intercept=bool(fit_intercept), tol=tol,
                                          max_iter=IPM_MAX_NEWTON, warn=warn, squared_slack=squared)
            return svmplus_ipm(
                X, privileged_rows, Y, C, privileged.gamma, embedding=embedding, privileged_mask=pool,
                fit_intercept=bool(fit_intercept), tol=tol, max_iter=IPM_MAX_NEWTON, warn=warn, squared_slack=squared,
            )
        cut_entries = np.shape(embedding)[0] * (X.shape[1] + 1) if embedding is not None else 0
        if privileged is None and embedding is not None and self.sub_solver == "auto" and cut_entries <= BUNDLE_MAX_CUT_ENTRIES:
            # The hinge D-step beyond the interior-point limits: dual CD over its L n coordinates stalls on
            # dense rows (corel16k001, n = 1000: relative gap 0.96 after 200 epochs), cuts on the k dim(x_a)
            # primal certify it (bundle.py; benchmarks/RESULTS.md, "PrML's family on corel16k001").  Each cut
            # is a dense k x dim(x_a) matrix, so a declared width of 10^6 columns stays on CD, whose memory
            # follows the stored entries.
            alpha0 = None if start is None else np.minimum(start["alpha"], C)
            return embedded_hinge_bundle(X, Y, C, embedding=embedding, fit_intercept=bool(fit_intercept), tol=tol,
                                         max_iter=self.max_iter, M0=primal_start, alpha0=alpha0, warn=warn)

        def solve(eps, previous):
            duals = start if previous is None else _duals(previous)
            seed = int(rng.integers(2**63))
            if privileged is None:
                # A warm start from another C keeps its place in the box (scaled by the ratio); min() is round-off.
                alpha0 = None if duals is None else np.minimum(duals["alpha"], C)
                return embedded_hinge_cd(X, Y, C, alpha0=alpha0, tol=eps, random_state=seed, warn=False, **settings)
            return svmplus_cd(
                X, privileged_rows, Y, C, privileged.gamma, privileged_mask=pool, privileged_intercept=privileged.bias,
                alpha0=None if duals is None else duals["alpha"], beta0=None if duals is None else duals["beta"],
                tol=eps, random_state=seed, warn=False, **settings,
            )

        fit, _ = tighten_to_relative_gap(solve, FIRST_EPS, tol, name=type(self).__name__, warn=warn)
        return fit

    def _interior_point(self, privileged, X, embedding, fit_intercept, n_labels) -> bool:
        """Whether a sub-problem goes to the interior-point method (:func:`~multilabel_core_plugins.prml.svmplus.svmplus_ipm`,
        :func:`~multilabel_core_plugins.prml.svmplus.embedded_hinge_ipm`).  ``n_labels``: the labels of the whole step (a
        W-step is solved one label per call, and its cost is the step's)."""
        if self.sub_solver == "cd" or (privileged is not None and not privileged.bias):
            return False
        if self.sub_solver == "ipm":
            return True
        n = X.shape[0]
        k = 1 if embedding is None else embedding.shape[0]
        p = X.shape[1] + bool(fit_intercept)
        q = 1 if privileged is None else n_labels + 1  # the hinge's slack blocks are scalars
        systems = n_labels if embedding is None else 1
        width = X.nnz / n + bool(fit_intercept) if sp.issparse(X) else p
        unknowns, flops = newton_cost(n, width, p, k, q, n_labels, systems)
        return unknowns <= IPM_MAX_UNKNOWNS and flops <= IPM_MAX_FLOPS


def newton_cost(n: int, width: float, p: int, k: int, q: int, n_labels: int, systems: int) -> tuple[int, float]:
    """Price an interior-point sub-solve: the unknowns of its Newton system and the flops of one Newton step.

    ``n`` rows of ``p`` entries (``width`` of them stored: the mean nonzeros of a sparse row),
    ``k`` the embedding's rows (1 without one), ``q`` a correcting function's length (1 for the
    hinge's scalar slacks), ``systems`` the factorisations (L for per-label problems, 1 for a
    D-step).  Per label and step: ``X_a^T diag X_a`` (sparse rows: ``n nnz(x_a)^2``), the
    correcting function's block and its coupling to M; then the factorisations.

    Parameters
    ----------
    n : int
        The rows (examples) of the sub-problem.
    width : float
        The stored entries of a row: p for dense rows, the mean nonzeros (plus the bias)
        for sparse ones.
    p : int
        The entries of a row, dim(x_a) (the bias included).
    k : int
        The embedding's rows (the rank, for a D-step), 1 without an embedding.
    q : int
        A correcting function's length (L + 1 with a label pool), 1 for the hinge's scalar
        slacks.
    n_labels : int
        The labels of the whole step.
    systems : int
        The factorisations per Newton step: L for per-label problems, 1 for a D-step.

    Returns
    -------
    unknowns : int
        ``k p``, the size of the Newton system.
    flops : float
        ``n_labels (n width^2 + n q (q + width) + p^2 q) + systems (k p)^3 / 3``.
    """
    flops = n_labels * (n * width ** 2 + n * q * (q + width) + p * p * q) + systems * (k * p) ** 3 / 3
    return int(k * p), float(flops)


class _Correcting(NamedTuple):
    """What the sub-solves read of a relation with a label pool: gamma_2 (rescaled in a W-step) and the bias."""

    gamma: float
    bias: bool


def _correcting(relation, solver: str) -> _Correcting | None:
    """The correcting functions' settings of a relation that provides ``pool``; None for a relation without one.

    A relation whose ``state`` names ``pool`` must provide ``pool(Y)`` (the (L, L) mask of which
    labels each label sees), ``gamma`` (gamma_2 > 0) and ``bias`` (the correcting functions' bias).
    """
    if "pool" not in tuple(getattr(relation, "state", ())):
        return None
    missing = [name for name in ("gamma", "bias") if getattr(relation, name, None) is None]
    if not callable(getattr(relation, "pool", None)):
        missing.insert(0, "pool")
    if missing:
        raise CapabilityError(
            f"{solver} requires relation.{', relation.'.join(missing)}, which {type(relation).__name__} does not "
            "provide (a relation with a label pool gives pool(Y), gamma and bias: You et al.'s eq. 3 and problem 5)"
        )
    gamma = float(relation.gamma)
    if not gamma > 0.0 or not np.isfinite(gamma):
        raise ValueError(f"relation.gamma (gamma_2) must be a finite number > 0, got {relation.gamma!r}")
    return _Correcting(gamma, bool(relation.bias))


def _require_apart(problem: Problem, solver: str) -> None:
    """A relation without a label pool is solved with the hinge's own slacks, each label apart: refuse any
    other coupling its ``initial`` would carry (this solver never reads it)."""
    relation = problem.relation
    initial = np.asarray(relation.initial(problem.n_labels), dtype=np.float64)
    if initial.shape != (problem.n_labels,) * 2 or not np.array_equal(initial, np.eye(problem.n_labels)):
        raise CapabilityError(
            f"{solver} would ignore the relation {type(relation).__name__}: without a label pool (relation.pool) it "
            "solves every label with its own slacks, and this relation's initial coupling is not the identity"
        )


def slack_kind(loss, *, privileged: bool = False, solver: str = "PrivilegedCDSolver") -> str:
    """How ``loss`` pays a margin constraint's slack: ``"linear"`` (the hinge) or ``"squared"`` (the squared hinge).

    Read from the loss's SVM-dual capabilities (:meth:`~multilabel_core.base.Loss.dual_box`,
    :meth:`~multilabel_core.base.Loss.dual_diagonal`): a multiplier box ``[0, U]`` with no
    diagonal term is the slack paid linearly at U (the hinge, ``C xi``); an unbounded box
    ``[0, inf)`` with the diagonal ``D > 0`` is the slack paid ``xi^2 / (2 D)`` (the squared
    hinge: D = 1/(2C), ``C xi^2``; Hsieh et al., *A dual coordinate descent method for
    large-scale linear SVM*, ICML 2008, eq. 4).  Anything else is a CapabilityError whose
    message gives the reason; with ``privileged`` (a label pool) that a loss without slacks
    (no ``dual_box``: the logistic loss) leaves SVM+'s correcting functions nothing to
    correct (You et al., eq. 4).

    Parameters
    ----------
    loss : Loss
        The problem's loss.
    privileged : bool, default False
        Whether the relation carries a label pool (SVM+'s correcting functions), which
        changes the refusal's reason for a loss without slacks.
    solver : str, default "PrivilegedCDSolver"
        The solver named in the refusal.

    Returns
    -------
    {"linear", "squared"}
        ``"linear"`` for a box ``[0, U]`` without a diagonal term, ``"squared"`` for an
        unbounded box with a positive diagonal.

    Raises
    ------
    CapabilityError
        If the loss provides no SVM dual (``dual_box``, ``dual_diagonal``) on sign targets,
        or its dual is of neither form.
    """
    name = type(loss).__name__
    has_dual = callable(getattr(loss, "dual_box", None)) and callable(getattr(loss, "dual_diagonal", None))
    if not has_dual or getattr(loss, "target", None) != "sign":
        if privileged:
            raise CapabilityError(
                f"{solver} cannot give {name} privileged labels: SVM+ (You et al., eq. 4) replaces the slack xi_j of "
                f"a margin constraint y_j t_j >= 1 - xi_j by a correcting function phi(y~_j) >= 0 of the privileged "
                f"labels, and {name} has no such constraint or slack (it does not provide loss.dual_box and "
                f"loss.dual_diagonal on sign targets), so there is nothing for the privileged labels to correct; "
                "they compose with the hinge (SVM+) and the squared hinge (squared-slack SVM+)"
            )
        raise CapabilityError(
            f"{solver} solves margin constraints with slacks (You et al.'s problems 2 and 5), which {name} does not "
            "have (it does not provide loss.dual_box and loss.dual_diagonal on sign targets)"
        )
    upper = float(loss.dual_box(1.0)[1])
    diagonal = float(loss.dual_diagonal(1.0))
    if np.isfinite(upper) and diagonal == 0.0:
        return "linear"
    if not np.isfinite(upper) and diagonal > 0.0:
        return "squared"
    raise CapabilityError(
        f"{solver} pays a slack linearly (box [0, U], no diagonal: the hinge) or squared (box [0, inf), a diagonal "
        f"D > 0: the squared hinge); {name}'s dual box [0, {upper:g}] with diagonal {diagonal:g} at C = 1 is neither"
    )


def slack_weight(loss, C: float) -> float:
    """Return the weight the engines put on the slacks at cost ``C``.

    Parameters
    ----------
    loss : Loss
        The problem's loss, whose slacks are linear or squared (:func:`slack_kind`).
    C : float
        The cost of the sub-problem (``C / gamma_1`` in a W-step).

    Returns
    -------
    float
        U, the upper end of the loss's dual box at C, for linear slacks (the hinge: C);
        ``1 / (2 D)`` with D the loss's dual diagonal at C for squared ones (the squared
        hinge: C).

    Raises
    ------
    CapabilityError
        If the loss pays its slacks neither way (:func:`slack_kind`).
    """
    if slack_kind(loss) == "linear":
        return float(loss.dual_box(C)[1])
    return 1.0 / (2.0 * float(loss.dual_diagonal(C)))


def regularizer_form(problem: Problem, solver: str = "PrivilegedCDSolver") -> str:
    """Classify the problem's regulariser: the low-rank factor form, or ``1/2 ||W||_F^2`` (W = I).

    The low-rank form (You et al., eq. 5): ``rank`` k, ``gamma`` gamma_1 and ``factor_value(D, V) =
    1/2 ||D||^2 + gamma_1/2 ||V||^2`` on the factors of ``W = D^T V`` (checked on a probe pair of
    factors, so a regulariser with another factor penalty is refused rather than solved as this
    one).  The identity form: ``label_gram(L) = I`` (the per-label problems of PrBR).  Anything
    else is a CapabilityError.

    Parameters
    ----------
    problem : Problem
        The problem whose ``regularizer`` is classified (its ``n_labels`` sizes the probe).
    solver : str, default "PrivilegedCDSolver"
        The solver named in the refusal.

    Returns
    -------
    {"low_rank", "identity"}
        ``"low_rank"`` for PrML and LEML's factor penalty, ``"identity"`` for PrBR's.

    Raises
    ------
    CapabilityError
        If the regulariser is of neither form, or has a ``factor_value`` and ``rank`` but a
        factor penalty other than You et al.'s (or no ``gamma``).
    """
    regularizer = problem.regularizer
    name = type(regularizer).__name__
    if callable(getattr(regularizer, "factor_value", None)) and getattr(regularizer, "rank", None) is not None:
        gamma = getattr(regularizer, "gamma", None)
        k = regularizer.rank
        D = np.linspace(-1.0, 1.0, 2 * k).reshape(k, 2)
        V = np.linspace(0.5, 1.5, k * problem.n_labels).reshape(k, problem.n_labels)
        if gamma is not None:
            expected = 0.5 * float(np.sum(D * D)) + 0.5 * float(gamma) * float(np.sum(V * V))
            value = float(regularizer.factor_value(D, V))
            if abs(value - expected) <= 1e-12 * max(1.0, abs(expected)):
                return "low_rank"
        raise CapabilityError(
            f"{solver} solves the factor penalty 1/2 ||D||^2 + gamma_1/2 ||W||^2 of You et al.'s problem (5); "
            f"{name}.factor_value is not of that form (or {name} has no gamma)"
        )
    if callable(getattr(regularizer, "label_gram", None)):
        gram = np.asarray(regularizer.label_gram(problem.n_labels), dtype=np.float64)
        if gram.shape == (problem.n_labels,) * 2 and np.array_equal(gram, np.eye(problem.n_labels)):
            return "identity"
    raise CapabilityError(
        f"{solver} needs a regulariser of the low-rank factor form (rank, gamma, factor_value: You et al.'s "
        f"problems 2 and 5) or 1/2 ||W||_F^2 (label_gram = I: PrBR's W = I); {name} is neither"
    )


def _first_dictionary(X, Y, k: int, fit_intercept: bool, init: str, rng) -> np.ndarray:
    """The first round's D (k, dim(x_a)): the SVD start or the random one (module docstring)."""
    dimension = X.shape[1] + bool(fit_intercept)
    if init == "random":
        return rng.standard_normal((k, dimension)) / np.sqrt(dimension)
    # The k leading left singular vectors of X_a^T Y: the directions of x most correlated
    # with the labels, so the first W-step sees informative rows D x_j.
    correlation = np.asarray(X.T @ Y)
    if fit_intercept:
        correlation = np.vstack([correlation, Y.sum(axis=0)])
    U, _, _ = np.linalg.svd(correlation, full_matrices=False)
    D = np.zeros((k, dimension))
    D[: min(k, U.shape[1])] = U[:, :k].T
    if k > U.shape[1]:  # fewer directions than k (d < k): the rest random, as the random start
        D[U.shape[1]:] = rng.standard_normal((k - U.shape[1], dimension)) / np.sqrt(dimension)
    return D


@attrs.frozen
class _Warm:
    """What a round continues from: D and the sub-solves' duals, rescaled to the new C."""

    state: WarmState | None
    ratio: float

    @classmethod
    def read(cls, state: WarmState | None, C: float) -> _Warm:
        if state is None or state.get("duals") is None or state.get("C") is None:
            return cls(None, 1.0)
        return cls(state, C / state.get("C"))

    def dictionary(self, k: int, dimension: int):
        if self.state is None or self.state.get("dictionary") is None:
            return None
        D, intercept = self.state.get("dictionary")
        D = np.column_stack([D, intercept]) if dimension > D.shape[1] else D
        return D if D.shape == (k, dimension) else None

    def _step(self, name: str):
        if self.state is None:
            return None
        step = self.state.get("duals").get(name)
        # The dual variables keep their place in the box when C is rescaled (eq. 7's alpha scale with C).
        return None if step is None else {key: self.ratio * value for key, value in step.items()}

    @property
    def w_step(self):
        return self._step("w_step")

    @property
    def d_step(self):
        return self._step("d_step")


def _duals(fit: Fit) -> dict:
    duals = {"alpha": fit.solution.dual}
    if "beta" in fit.solution.model_state:
        duals["beta"] = fit.solution.model_state["beta"]
    return duals


def _privileged_state(fit: Fit, privileged) -> dict:
    if privileged is None:
        return {"privileged_weights": None, "privileged_intercept": None}
    return {
        "privileged_weights": fit.solution.model_state["W_tilde"],
        "privileged_intercept": fit.solution.model_state["intercept_tilde"],
    }


def _round_history(certificate: Certificate) -> dict:
    """The round's per-step series (:attr:`PrivilegedCDSolver.history_attributes`), from its certificate's statistics."""
    statistics = certificate.statistics
    return {
        "objective": [float(certificate.primal)],
        "w_step_certificates": [statistics["w_step"]],
        "d_step_certificates": [statistics["d_step"]],
        "block_objectives": [float(value) for value in statistics["block_objectives"]],
    }


def _projected(X, D, fit_intercept: bool) -> np.ndarray:
    """The W-step's rows ``D x_j`` (n, k), x with its constant 1 when the scores have a bias."""
    d = X.shape[1]
    rows = X @ D[:, :d].T
    rows = np.asarray(rows.toarray() if sp.issparse(rows) else rows)
    if fit_intercept:
        rows = rows + D[:, d]
    return np.ascontiguousarray(rows, dtype=np.float64)


def _refuse_infeasible(X, Y, pool, fit_intercept: bool, where: str) -> None:
    labels = infeasible_labels(X, Y, pool, fit_intercept=fit_intercept)
    if labels:
        raise ValueError(
            f"{where} is infeasible for label(s) {labels} with the paper-literal correcting functions "
            f"(PrivilegedLabels(bias=False), privileged_bias=False): no (w, w~) meets the margin and slack "
            f"constraints (a linear-programming certificate), so the SVM+ dual is unbounded and coordinate "
            f"descent would never converge; use privileged_bias=True, the default"
        )


def prml_alternating(tol: float = 1e-3, max_iter: int = 30, **settings) -> AlternatingSolver:
    """PrML and LEML's solver: the core's AlternatingSolver over :class:`PrivilegedCDSolver` rounds.

    Converged when objective (5) changes by at most ``tol`` relatively between rounds and the
    last round's own relative duality gap is at most ``tol`` (the core driver's rule without a
    joint gap: an objective increase is discarded, counted and warned, never taken for
    convergence); stops after ``max_iter`` rounds otherwise; ``settings`` (``cd_tol``, ``cd_max_iter``, ``shrinking``,
    ``random_state``, ``n_jobs``, ``sub_solver``, ``init``) go to the rounds' solver.

    Parameters
    ----------
    tol : float, default 1e-3
        The alternation's tolerance: the relative change of objective (5) between rounds and
        the last round's relative duality gap must both be at most ``tol``.
    max_iter : int, default 30
        Most rounds (ConvergenceWarning beyond).
    **settings
        Settings of the rounds' :class:`PrivilegedCDSolver`: ``cd_tol`` (its ``tol``),
        ``cd_max_iter`` (its ``max_iter``), ``shrinking``, ``random_state``, ``n_jobs``,
        ``sub_solver`` and ``init``.

    Returns
    -------
    AlternatingSolver
        ``AlternatingSolver(inner=PrivilegedCDSolver(as_round=True, ...), tol=tol,
        max_iter=max_iter)``.

    Raises
    ------
    ValueError
        If a setting is not one of the seven above, or if PrivilegedCDSolver's validators
        refuse a setting's value.
    """
    renamed = {"cd_tol": "tol", "cd_max_iter": "max_iter"}
    unknown = set(settings) - set(renamed) - {"shrinking", "random_state", "n_jobs", "sub_solver", "init"}
    if unknown:
        raise ValueError(
            f"unknown settings {sorted(unknown)}; expected cd_tol, cd_max_iter, shrinking, random_state, n_jobs, "
            "sub_solver, init"
        )
    inner = PrivilegedCDSolver(as_round=True, **{renamed.get(key, key): value for key, value in settings.items()})
    return AlternatingSolver(inner=inner, tol=tol, max_iter=max_iter)
