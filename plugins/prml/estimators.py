"""PrML, PrBR and LEML: presets over the family's parts (You, Xu, Wang, Xu & Tao, *Privileged Multi-label Learning*).

============  ================================  ==========================  ==========================================
method        regulariser                       relation                    solver
============  ================================  ==========================  ==========================================
``prml``      LowRank(k, gamma1)                PrivilegedLabels(gamma2)    AlternatingSolver over PrivilegedCDSolver
``prbr``      Frobenius (W = I)                 PrivilegedLabels(gamma2)    PrivilegedCDSolver (one solve)
``leml``      LowRank(k, gamma1 = 1)            Independent (hinge slacks)  AlternatingSolver over PrivilegedCDSolver
============  ================================  ==========================  ==========================================

Every preset uses the hinge loss's margin constraints, a linear kernel and the bias as a
constant feature of x (the paper absorbs it).  Scores are ``X Z + b`` with Z = D^T W;
``predict`` is their sign (``[scores > 0]``).  LEML (Yu, Jain, Kar & Dhillon, ICML 2014) is
problem (2): the paper does not name its loss; the hinge keeps it the same problem as PrML
without the privileged part.
"""

from __future__ import annotations

import numbers


from multilabel_core.estimator import ComposedEstimator
from multilabel_core.parameter_names import DEPRECATED, renamed_parameter
from multilabel_core.plugins import make_component
from multilabel_core.validation import POSITIVE, Flag, Interval, NoneOr, Options, Rule, Unchecked

from .parts import resolve_rank
from .solver import INITS, SUB_SOLVERS

__all__ = ["LEML", "PARTS", "PrBR", "PrML"]


def _parts(regularizer: str, relation: str, solver: str) -> dict:
    return {"loss": "hinge", "regularizer": regularizer, "relation": relation, "kernel": "linear", "solver": solver}


#: The registered components each method composes (also its MethodSpec's ``parts``).
PARTS = {
    "prml": _parts("low_rank", "privileged_labels", "prml_alternating"),
    "prbr": _parts("frobenius", "privileged_labels", "privileged_cd"),
    "leml": _parts("low_rank", "independent", "prml_alternating"),
}


def _rank(value, name):
    resolve_rank(value, 10**9, name)  # the type and range; the rank against L at fit time


class _Privileged(ComposedEstimator):
    """What the presets share: building the parts and the fitted attributes.

    Fitted attributes (beside ComposedEstimator's ``coef_`` Z (d, L), ``intercept_``,
    ``objective_history_``, ``n_iter_``): ``dictionary_`` D (k, d) and
    ``dictionary_intercept_`` (k,) (the bias column of D), ``label_weights_`` W (k, L) (I for
    PrBR), ``privileged_weights_`` W~ (L, L) (column i is w~_i over the labels; zero on
    the labels outside label i's pool) and ``privileged_intercept_`` (L,) (None for LEML),
    ``privileged_pool_`` (L, L) bool, ``certificate_`` the list of the rounds' certificates
    (each with the W-step's and D-step's in ``statistics``), ``w_step_certificates_`` and
    ``d_step_certificates_``, ``block_objective_history_`` objective (5) after every block
    step (W-step, D-step, W-step, ...).
    """

    PARTS: dict = {}
    CERTIFICATE_PER_STEP = True
    # Names a preset lacks are never read.  The outer settings (tol, max_iter) are the
    # alternation's and required; the block solver's are cd_tol and cd_max_iter.
    _parameter_constraints = {
        "gamma1": POSITIVE,
        "gamma2": POSITIVE,
        # A relative duality gap of 1 or more is met by any point: it would certify nothing.
        "cd_tol": Interval(numbers.Real, 0.0, 1.0, low_inclusive=False, high_inclusive=False),
        "cd_max_iter": Interval(numbers.Integral, 1, None),
        "privileged_bias": Flag(),
        "n_privileged": NoneOr(Interval(numbers.Integral, 1, None)),
        "rank": Rule(_rank, "an int >= 1 or a fraction of the labels in (0, 1]"),
        "k": Unchecked("the deprecated spelling of rank, checked as it by _check_parameter_rules"),
        "sub_solver": Options(SUB_SOLVERS),
        "init": Options(INITS),
    }

    def _parts(self) -> dict:
        # The low-rank regulariser is built in _problem, once L is known.
        settings = {"relation": self._relation_settings(), "solver": self._solver_settings()}
        return {
            role: None if (role, name) == ("regularizer", "low_rank") else make_component(
                role, name, **settings.get(role, {}))
            for role, name in self.PARTS.items()
        }

    def _check_parameter_rules(self) -> None:
        if "rank" in self.get_params(deep=False):
            # The deprecated spelling is checked as what it stands for (the FutureWarning, once per fit).
            _rank(renamed_parameter(self, "k", "rank"), "rank")

    def _problem(self, X, Y, parts: dict, kernel):
        # The rank is a fraction of L (the paper's ceil(0.9 L)) until the labels are known.
        if self.PARTS["regularizer"] == "low_rank":
            parts["regularizer"] = make_component(
                "regularizer", "low_rank", rank=resolve_rank(renamed_parameter(self, "k", "rank", warn=False), Y.shape[1], "rank"),
                gamma=float(getattr(self, "gamma1", 1.0)),
            )
        return super()._problem(X, Y, parts, kernel)

    def _relation_settings(self) -> dict:
        if self.PARTS["relation"] != "privileged_labels":
            return {}
        return {"gamma": float(self.gamma2), "n_privileged": self.n_privileged, "bias": bool(self.privileged_bias)}

    def _solver_settings(self) -> dict:
        common = {"random_state": self.random_state, "n_jobs": self.n_jobs}
        common.update({name: getattr(self, name) for name in ("sub_solver", "init") if hasattr(self, name)})
        if self.PARTS["solver"] == "privileged_cd":
            return {"tol": self.cd_tol, "max_iter": self.cd_max_iter, **common}
        return {"tol": self.tol, "max_iter": self.max_iter, "cd_tol": self.cd_tol, "cd_max_iter": self.cd_max_iter,
                **common}


class PrML(_Privileged):
    """Privileged multi-label learning, problem (5) by Algorithm 2 (registered as ``prml``).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the summed slacks (the correcting functions' values).
    gamma1 : float, default 1.0
        Weight gamma_1 of ``||W||^2`` (the paper fixes it to 1).
    gamma2 : float, default 1.0
        Weight gamma_2 of ``||W~||^2`` (the paper's range: 0.1 .. 2).
    rank : int or float, default 0.9
        Rank of the label embedding D (the paper's k): an int, or a fraction of the labels
        (``ceil(rank L)``; the paper's 0.9).
    n_privileged : int or None, default None
        Pool size K: each label sees the K labels nearest in Hamming distance (section 4.2);
        None for all other labels (eq. 3).
    privileged_bias : bool, default True
        Append a constant 1 to the privileged features (the correcting functions' bias).
        False is the paper-literal form, which can be infeasible: the fit then raises a
        ValueError naming the labels (an LP certificate) instead of running CD forever.
    fit_intercept : bool, default True
        Append a constant 1 to x (the scores' bias, in D's last column).
    tol : float, default 1e-3
        What "converged" certifies (PrML and LEML; the rounds learn D, so no joint duality gap
        exists): objective (5) changed by at most ``tol`` relatively (``max(1, |J|)``) between
        rounds *and* the last round's own relative duality gap is at most ``tol``.  A change
        within ``tol`` from rounds coarser than ``tol`` (``cd_tol > tol``) certifies nothing: the
        alternation stops, not converged, with a ConvergenceWarning naming the rounds' gap.  An
        objective increase between rounds is discarded, counted
        (``statistics["objective_increases"]``) and warned beyond ``tol``; it is never taken for
        convergence.  At least ``TOL_FLOOR`` (8 float64 epsilons).
    max_iter : int, default 30
        Most rounds (W-step + D-step).
    cd_tol : float, default 1e-3
        Largest relative duality gap of every sub-solve (W-step, D-step).
    cd_max_iter : int, default 10000
        Most epochs of one engine call of a sub-solve.
    random_state : None, int or numpy Generator, default 0
        Seeds the coordinate orders (and the first D when ``init="random"``).
    n_jobs : int or None, default None
        Threads for the L independent problems of a W-step (PrBR: of its one step); None is
        the thread budget the caller leaves (every core in a plain fit, ``cores // workers``
        inside the experiment runner or ``cross_validate``), -1 every core.  The result does not
        depend on it.
    sub_solver : {"auto", "cd", "ipm"}, default "auto"
        How the SVM+ sub-problems are solved: "ipm" by the primal interior-point method
        (:func:`multilabel_core_plugins.prml.svmplus.svmplus_ipm`), "cd" by Algorithm 1's dual coordinate
        descent, "auto" the interior-point method when its Newton system has at most
        ``IPM_MAX_UNKNOWNS`` = 3000 unknowns (k for a W-step label, ``k dim(x)`` for the D-step,
        ``dim(x)`` for a PrBR label) and a Newton step of the whole step costs at most
        ``IPM_MAX_FLOPS`` = 5e11 (the Gram products by the rows' nonzeros when X is sparse; the
        correcting functions' blocks ``L n (L + 1)^2``), CD otherwise (the D-step of sparse text
        rows, whose ``k dim(x)`` is in the tens of thousands).
        "ipm" needs ``privileged_bias=True``.  LEML's D-step beyond those limits goes, under
        "auto", to cuts on its primal (:func:`multilabel_core_plugins.prml.bundle.embedded_hinge_bundle`).
    init : {"svd", "random"}, default "svd"
        The first D: the k leading left singular vectors of ``X_a^T Y`` (deterministic), or
        entries N(0, 1/d) drawn from ``random_state``.  From a random D the first W-step's
        exact solution is W = 0 on the reproductions' data (docs/methods/prml.md, *Initial D*),
        a fixed point of the alternation.

    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.
    k : int or float, default "deprecated"
        Deprecated name of ``rank`` (``k`` is the neighbour count of the k-NN methods); accepted
        with a FutureWarning for this release.

    Notes
    -----
    There is no ``warm_start``: problem (5) is not convex, so a fit started from another grid
    point's D may end at another local solution than a cold fit; a grid search fits every
    point from the seeded start.  PrBR, which is convex, has one.
    """

    PARTS = PARTS["prml"]

    def __init__(self, C=1.0, gamma1=1.0, gamma2=1.0, rank=0.9, n_privileged=None, privileged_bias=True,
                 fit_intercept=True, tol=1e-3, max_iter=30, cd_tol=1e-3, cd_max_iter=10000, random_state=0,
                 n_jobs=None, sub_solver="auto", init="svd", thresholding="zero", k=DEPRECATED):
        self.C = C
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.rank = rank
        self.k = k
        self.n_privileged = n_privileged
        self.privileged_bias = privileged_bias
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.cd_tol = cd_tol
        self.cd_max_iter = cd_max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.sub_solver = sub_solver
        self.init = init
        self.thresholding = thresholding


class PrBR(_Privileged):
    """Privileged binary relevance: problem (5) with W = I (the paper's Remark; registered as ``prbr``).

    L independent SVM+ problems on x, each label's slacks modelled by the other labels: PrML's
    parameters without ``gamma1``, ``rank``, ``tol``, ``max_iter`` and ``init`` (nothing
    alternates), and ``warm_start``.  The problem is strictly convex in the scores' weights
    (Theorem 1), so a warm fit ends where a cold one does, within the certificates' gaps.

    Parameters
    ----------
    C : float, default 1.0
        Weight of the summed slacks (the correcting functions' values), as for :class:`PrML`.
    gamma2 : float, default 1.0
        Weight gamma_2 of ``||W~||^2``, the correcting functions' norm (the paper's range: 0.1 .. 2).
    n_privileged : int or None, default None
        Pool size K: each label sees the K labels nearest in Hamming distance, as for :class:`PrML`.
    privileged_bias : bool, default True
        Append a constant 1 to the privileged features, as for :class:`PrML`.
    fit_intercept : bool, default True
        Append a constant 1 to x (each label's bias).
    cd_tol : float, default 1e-3
        Largest relative duality gap of every label's SVM+ solve.
    cd_max_iter : int, default 10000
        Most epochs of one engine call of a label's solve.
    random_state : None, int or numpy Generator, default 0
        Seeds the coordinate orders.
    n_jobs : int or None, default None
        Threads for the L independent problems, as for :class:`PrML`.
    warm_start : bool, default False
        Start from the previous fit's dual variables, rescaled to the new C.
    sub_solver : {"auto", "cd", "ipm"}, default "auto"
        How the SVM+ problems are solved, as for :class:`PrML`.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.
    """

    PARTS = PARTS["prbr"]
    #: For check_method's warm-start check: ``sub_solver="auto"`` solves small problems with the
    #: interior-point method, which follows its own central path from its own start, so a warm
    #: start from the optimum saves no iteration there (measured: 7 IPM steps cold and warm on
    #: 60 x 5); the CD sub-solver does start from it (0 passes).
    warm_start_stops_at_once = False

    def __init__(self, C=1.0, gamma2=1.0, n_privileged=None, privileged_bias=True, fit_intercept=True, cd_tol=1e-3,
                 cd_max_iter=10000, random_state=0, n_jobs=None, warm_start=False, sub_solver="auto",
                 thresholding="zero"):
        self.C = C
        self.gamma2 = gamma2
        self.n_privileged = n_privileged
        self.privileged_bias = privileged_bias
        self.fit_intercept = fit_intercept
        self.cd_tol = cd_tol
        self.cd_max_iter = cd_max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.sub_solver = sub_solver
        self.thresholding = thresholding


class LEML(_Privileged):
    """Low-rank empirical risk minimisation with the hinge, problem (2) (registered as ``leml``).

    Yu, Jain, Kar & Dhillon, *Large-scale multi-label learning with missing labels* (ICML
    2014), as PrML's baseline: ``1/2 (||D||^2 + ||W||^2) + C sum hinge``, the same
    alternation as :class:`PrML` without the privileged part: PrML's parameters without
    ``gamma1`` (1), ``gamma2``, ``n_privileged`` and ``privileged_bias`` (and, as PrML, without
    ``warm_start``: the problem is not convex).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the summed hinge losses.
    rank : int or float, default 0.9
        Rank of the label embedding D: an int, or a fraction of the labels (``ceil(rank L)``).
    fit_intercept : bool, default True
        Append a constant 1 to x (the scores' bias, in D's last column).
    tol : float, default 1e-3
        What "converged" certifies, as for :class:`PrML`: the objective's relative change
        between rounds and the last round's own relative duality gap.
    max_iter : int, default 30
        Most rounds (W-step + D-step).
    cd_tol : float, default 1e-3
        Largest relative duality gap of every sub-solve (W-step, D-step).
    cd_max_iter : int, default 10000
        Most epochs of one engine call of a sub-solve.
    random_state : None, int or numpy Generator, default 0
        Seeds the coordinate orders (and the first D when ``init="random"``).
    n_jobs : int or None, default None
        Threads for the L independent problems of a W-step, as for :class:`PrML`.
    sub_solver : {"auto", "cd", "ipm"}, default "auto"
        How the hinge sub-problems are solved: :func:`multilabel_core_plugins.prml.svmplus.embedded_hinge_ipm`,
        dual coordinate descent, or by size, as for :class:`PrML`.
    init : {"svd", "random"}, default "svd"
        The first D, as for :class:`PrML`.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.
    k : int or float, default "deprecated"
        Deprecated name of ``rank`` (``k`` is the neighbour count of the k-NN methods); accepted
        with a FutureWarning for this release.
    """

    PARTS = PARTS["leml"]

    def __init__(self, C=1.0, rank=0.9, fit_intercept=True, tol=1e-3, max_iter=30, cd_tol=1e-3, cd_max_iter=10000,
                 random_state=0, n_jobs=None, sub_solver="auto", init="svd", thresholding="zero", k=DEPRECATED):
        self.C = C
        self.rank = rank
        self.k = k
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.cd_tol = cd_tol
        self.cd_max_iter = cd_max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.sub_solver = sub_solver
        self.init = init
        self.thresholding = thresholding
