"""Dual coordinate descent for per-label SVMs: validated Python entry points over :mod:`._cd`.

Notation: X (n, d) the rows x_i, dense or CSR (never densified); Y (n, L) the signs
y_il in {-1, +1}; C_l > 0 the cost of label l; for each label l independently, the primal

    min_w  1/2 ||w||^2 + C_l sum_i ell(y_il w^T x_i),  e.g. ell(s) = max(0, 1 - s)  or  max(0, 1 - s)^2   (1)

and its dual (Hsieh et al., ICML 2008, eq. 4 -- LIBLINEAR's dual solver)

    min_alpha  f(alpha) = 1/2 alpha^T (Q + D I) alpha - e^T alpha,   Q_ij = y_il y_jl x_i^T x_j,   (2)

over 0 <= alpha_i <= U, with ``(0, U) = loss.dual_box(C_l)`` and ``D = loss.dual_diagonal(C_l)``
-- U = C, D = 0 for the hinge loss and U = inf, D = 1 / (2C) for the squared hinge -- and
w = sum_i alpha_i y_il x_i.  Any loss that provides these two capabilities (an *SVM-dual
loss*: its dual has the linear term -e^T alpha, i.e. margin 1) runs here; the losses are
asked, never named.  With ``fit_intercept`` each x_i gets a constant feature of value
``intercept_scaling`` appended: the bias is regularised (LIBLINEAR's and scikit-learn's
LinearSVC convention, and the L-BFGS solver's), so (2) keeps its plain box and no
equality constraint.

:func:`box_kernel_cd` solves (2) with ``Q_ij = y_il y_jl K_ij`` for a precomputed kernel K:
the label-wise dual of the max-margin concept network (Zhang et al., *Multi-Kernel
Multi-Label Learning with Max-Margin Concept Network*, eq. 8, with C for its lambda), and
the kernel SVM without bias.

Both run the engine of :mod:`._cd` once per label (docs/solvers/cd.md) and return a
:class:`~multilabel_core.base.Fit` whose certificate sums over labels the primal (1) and
the dual -f(alpha) of (2), both evaluated in O(nnz + nL) (O(nL) for the kernel variant)
from the primal vectors the engine maintains -- never by another solve.  :class:`CDSolver`
plugs them into :class:`~multilabel_core.estimator.ComposedEstimator`.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import ClassVar

import attrs
import numpy as np
import scipy.sparse as sp

from ..base import CapabilityError, Fit, Loss, Problem, Solution, Solver, WarmState, warm_state_of
from ..certificate import GAP_RTOL, Certificate, within_gap_rtol
from ..parallel import blas_limited, effective_threads, map_threads, n_jobs_field
from ..losses import Hinge, SquaredHinge
from ..validation import (
    MAX_ITER_LIMIT,
    check_random_state,
    check_scalar,
    check_signs,
    check_X,
    count,
    is_checked,
    positive,
    seed,
)
from . import _cd
from ._convergence import ConvergenceWarning, warn_not_converged

__all__ = ["LOSSES", "SVM_DUAL_CAPABILITIES", "CDSolver", "as_rows", "box_kernel_cd", "linear_svm_cd"]

#: The stock SVM-dual losses, by name (the functions' ``loss`` also takes a loss object).
LOSSES = {"hinge": Hinge(), "squared_hinge": SquaredHinge()}

#: What the dual (2) asks of a loss: its box ``(0, U)`` and its diagonal ``D``, both for a cost C.
SVM_DUAL_CAPABILITIES = ("dual_box", "dual_diagonal")

#: Relative distance outside the box within which a warm start's alpha is put on the bound: a
#: start rescaled to a new cost (C_new / C_old * alpha, alpha = C_old) overshoots by round-off.
WARM_START_ROUND_OFF = 1e-12


# -- validation ------------------------------------------------------------------------


def _check_alpha0(alpha0, shape: tuple[int, int], upper: np.ndarray) -> np.ndarray:
    """The starting duals as (L, n) C-contiguous rows (one per label), inside each label's box [0, upper_l]."""
    if alpha0 is None:
        return np.zeros(shape[::-1])
    alpha0 = np.asarray(alpha0, dtype=np.float64)
    if alpha0.shape != shape:
        raise ValueError(f"alpha0 must have shape {shape}, got {alpha0.shape}")
    if not np.all(np.isfinite(alpha0)):
        raise ValueError("alpha0 contains NaN or infinity")
    outside = np.any((alpha0 < 0.0) | (alpha0 > upper), axis=0)
    if outside.any():
        label = int(np.argmax(outside))
        raise ValueError(f"alpha0 must lie in the dual box: label {label} leaves [0, {upper[label]}]")
    return np.ascontiguousarray(alpha0.T)


def _check_costs(C, n_labels: int) -> np.ndarray:
    """C as one cost per label: a number > 0 for all labels, or an (L,) array of them."""
    if np.ndim(C) == 0:
        return np.full(n_labels, float(check_scalar(C, "C", low=0.0, low_inclusive=False)))
    costs = np.asarray(C)
    if costs.shape != (n_labels,) or not (np.issubdtype(costs.dtype, np.number) or costs.dtype == bool):
        raise ValueError(f"C must be a number or one cost per label, shape ({n_labels},), got shape {costs.shape}")
    costs = costs.astype(np.float64)
    if not np.all(np.isfinite(costs) & (costs > 0.0)):
        raise ValueError("the per-label costs C must be finite and > 0")
    return costs


def _check_loss(loss) -> Loss:
    """A name of :data:`LOSSES`, or a loss object providing the SVM-dual capabilities."""
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)} or an SVM-dual loss object, got {loss!r}")
        return LOSSES[loss]
    missing = [name for name in SVM_DUAL_CAPABILITIES if not callable(getattr(loss, name, None))]
    if missing or not callable(getattr(loss, "value", None)):
        raise ValueError(
            f"loss must be one of {sorted(LOSSES)} or a loss providing value, dual_box and dual_diagonal; "
            f"{type(loss).__name__} lacks {', '.join(missing) or 'value'}"
        )
    return loss


def _dual_terms(loss, costs: np.ndarray, solver: str) -> tuple[np.ndarray, np.ndarray]:
    """Per label, the upper bound U and the diagonal D of the dual (2), asked of the loss at C_l.

    Raises :class:`~multilabel_core.base.CapabilityError` naming the values when they do
    not describe a dual (2) the engine solves: the box must be [0, U] with U > 0, the
    diagonal finite and >= 0, and not U = inf with D = 0 (that dual, the hard-margin
    SVM's, is unbounded below unless the data are separable).
    """
    upper, diagonal = np.empty(len(costs)), np.empty(len(costs))
    for label, cost in enumerate(costs):
        low, high = loss.dual_box(float(cost))
        D = loss.dual_diagonal(float(cost))
        low, high, D = float(low), float(high), float(D)
        if not (low == 0.0 and high > 0.0 and np.isfinite(D) and D >= 0.0 and (np.isfinite(high) or D > 0.0)):
            raise CapabilityError(
                f"{solver} solves the SVM dual over a box [0, U] (U > 0) with a diagonal D >= 0 (D > 0 when U = inf), "
                f"but {type(loss).__name__} gives dual_box({cost:g}) = ({low!r}, {high!r}) and "
                f"dual_diagonal({cost:g}) = {D!r}"
            )
        upper[label], diagonal[label] = high, D
    return upper, diagonal


def _settings(tol, max_iter, shrinking, random_state, n_labels, n_jobs=None, check_input=True) -> dict:
    if check_input:  # else validated by the caller (CDSolver's fields, when it was built)
        check_scalar(tol, "tol", low=0.0, low_inclusive=False)
        effective_threads(n_jobs)  # validates it
        check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1, high=MAX_ITER_LIMIT)
        if not isinstance(shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be True or False, got {shrinking!r}")
    # One seed per label, drawn in label order: a run is reproducible label by label.
    seeds = check_random_state(random_state).integers(0, 2**63, size=n_labels, dtype=np.uint64)
    return {"tol": float(tol), "max_iter": int(max_iter), "shrinking": bool(shrinking), "seeds": seeds, "n_jobs": n_jobs}


def as_rows(X, bias: float):
    """Return X as the engine's row access, ``DenseRows`` or ``SparseRows`` (canonical CSR).

    The public form of the engine kit's row access (:mod:`multilabel_core.solvers.kit`): a
    variant's Cython ``__init__`` takes the result as its ``Rows``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The rows, already validated (:func:`multilabel_core.validation.check_X`); a sparse
        matrix is read as CSR with its duplicates summed, never densified.
    bias : float
        Value of LIBLINEAR's appended constant feature (0: none), whose weight is then the
        last entry of a weight vector of length ``rows.dimension``.

    Returns
    -------
    Rows
        The engine's row access to X, holding X's data without a copy where it already is
        C-contiguous float64 (dense) or canonical float64 CSR.  An X the estimator validated in
        this call (:func:`multilabel_core.validation.checked_inputs`) is not scanned for
        finiteness again.
    """
    checked = is_checked(X)
    if sp.issparse(X):
        given = X
        X = X.tocsr().astype(np.float64, copy=False)
        # check_X decided the canonical form from the index arrays; scipy's cached flag can be
        # stale (False on a canonical matrix), and summing again would copy X for nothing.
        if not X.has_canonical_format and not (checked and X is given):
            X = X.copy()
            X.sum_duplicates()
        return _cd.SparseRows(np.ascontiguousarray(X.data), X.indices, X.indptr, X.shape[1], bias, checked=checked)
    return _cd.DenseRows(np.ascontiguousarray(X, dtype=np.float64), bias, checked=checked)


# -- the per-label loop and the certificate -------------------------------------------


def _solve_labels(make_problem, n_labels: int, settings: dict, record_dual: bool, face_steps: bool = True) -> list[dict]:
    """Run the engine on ``make_problem(l)`` for every label l; the engine's report per label.

    The labels run on ``settings["n_jobs"]`` threads (:func:`~multilabel_core.parallel.map_threads`):
    the engine releases the GIL, each label owns its alpha, its row of primal vectors and its
    seed (drawn before any label runs), and reads X only, so the result is the same for every
    thread count.  BLAS is held to one thread meanwhile (threadpoolctl; the caller's setting is
    restored): the engine's calls are small (dot products of a row, the face step's Gram matrix
    and Cholesky factor of the weight dimension), and OpenBLAS's threads handing them over and
    spinning between them made the face steps many times slower (benchmarks/RESULTS.md, "Timings behind code comments").
    """

    def solve(label: int) -> dict:
        return _cd.solve_dual(
            make_problem(label),
            tol=settings["tol"],
            max_iter=settings["max_iter"],
            shrinking=settings["shrinking"],
            seed=int(settings["seeds"][label]),
            record_dual=record_dual,
            face_steps=face_steps,
        )

    with blas_limited(1):
        return map_threads(solve, range(n_labels), settings["n_jobs"])


def _certificate(
    name: str, primal: np.ndarray, reports: list[dict], settings: dict, start: float, warn: bool = True
) -> Certificate:
    """Sum the per-label primals (1) and duals -f(alpha) of (2); warn for labels that hit max_iter (``warn``).

    ``kkt_violation`` is the largest |projected gradient| over all labels and coordinates;
    ``n_iter`` the most epochs any label took; ``statistics`` holds one list entry per label.
    """
    dual = np.array([-report["objective"] for report in reports])
    stopped = np.array([report["converged"] for report in reports])
    # The projected-gradient rule promises a small gap only on well-scaled problems.
    certified = np.array([within_gap_rtol(p, d) for p, d in zip(primal, dual)])
    converged = stopped & certified
    # Plain lists, not arrays: certificates compare with == and serialise to JSON.
    statistics = {
        key: [report[key] for report in reports]
        for key in ("n_epochs", "n_updates", "n_shrunk", "n_resets", "min_active", "spread", "n_face_steps", "converged")
    }
    statistics |= {"primal": primal.tolist(), "dual": dual.tolist()}
    if reports[0]["dual_trace"] is not None:
        statistics["dual_trace"] = [[-value for value in report["dual_trace"]] for report in reports]
    statistics["within_gap_rtol"] = certified.tolist()
    above = int(np.count_nonzero(stopped & ~certified))
    if warn and not stopped.all():
        warn_not_converged(
            name,
            f"{np.count_nonzero(~stopped)} of {len(reports)} labels reached max_iter={settings['max_iter']} epochs "
            f"(largest projected-gradient spread {max(statistics['spread']):.3g} > tol={settings['tol']:g})",
        )
    if warn and above:
        # Not warn_not_converged: loosening tol, its advice, widens the gap further.
        warnings.warn(
            f"{name} did not converge: {above} of {len(reports)} labels met the stopping "
            f"rule (tol={settings['tol']:g}) with a relative duality gap above GAP_RTOL={GAP_RTOL:g}; the problem "
            f"is badly scaled: standardise the features, use a smaller C, or tighten tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    return Certificate.from_objectives(
        primal.sum(),
        dual.sum(),
        kkt_violation=max(report["kkt_violation"] for report in reports),
        n_iter=max(statistics["n_epochs"]),
        time=time.perf_counter() - start,
        converged=bool(converged.all()),
        solver=name,
        statistics=statistics,
    )


def _per_label_loss(loss: Loss, Y: np.ndarray, T: np.ndarray) -> np.ndarray:
    return np.array([loss.value(Y[:, [label]], T[:, [label]]) for label in range(Y.shape[1])])


# -- public entry points --------------------------------------------------------------


def linear_svm_cd(
    X,
    Y,
    C=1.0,
    *,
    loss="hinge",
    fit_intercept: bool = False,
    intercept_scaling: float = 1.0,
    tol: float = 0.1,
    max_iter: int = 1000,
    shrinking: bool = True,
    random_state=None,
    alpha0=None,
    record_dual: bool = False,
    face_steps: bool = True,
    n_jobs: int | None = None,
    check_input: bool = True,
    warn: bool = True,
) -> Fit:
    """One linear SVM (1) per label by dual coordinate descent on (2).

    Parameters
    ----------
    X : array or sparse matrix (n, d)
        Training rows; CSR/CSC stay sparse.
    Y : array (n, L)
        Signs -1/+1.
    C : float or array (L,)
        Cost of the losses (> 0): one for all labels, or one per label.
    loss : {"hinge", "squared_hinge"} or Loss, default "hinge"
        A name of :data:`LOSSES`, or any loss object providing ``value``, ``dual_box(C)``
        and ``dual_diagonal(C)`` (an SVM-dual loss, see the module docstring).
    fit_intercept : bool, default False
        Append a constant feature of value ``intercept_scaling`` (> 0): a regularised
        bias, ``intercept = intercept_scaling * w_{d+1}`` (LinearSVC's convention).
    intercept_scaling : float, default 1.0
        The value of that constant feature, positive; read only with ``fit_intercept``.
    tol : float, default 0.1
        LIBLINEAR's eps: stop when, over a full pass, every projected gradient lies in
        [-tol, tol] (scikit-learn's LinearSVC ``tol`` means the same for ``dual=True``).
    max_iter : int, default 1000
        Most epochs per label; reaching it issues a ConvergenceWarning.
    shrinking : bool, default True
        LIBLINEAR's shrinking (same solution either way).
    random_state : None, int or numpy Generator
        Seeds the per-epoch permutations (one stream per label).
    alpha0 : array (n, L), optional
        Warm start inside the box (e.g. a previous ``solution.dual``).
    record_dual : bool, default False
        Record the dual objective -f(alpha) after every epoch in
        ``certificate.statistics["dual_trace"]`` (one list per label; non-decreasing).
    face_steps : bool, default True
        Interleave face steps with the epochs where the loss's dual has a diagonal D > 0 (the
        squared hinge) and the weights have at most 2048 entries: a projected Newton step on
        the current face (Bertsekas, *Projected Newton methods for optimization problems with
        simple constraints*, 1982), solved in the weight dimension -- the primal's generalised
        Newton step on that face (Keerthi & DeCoste, *A modified finite Newton method for fast
        solution of large scale linear SVMs*, JMLR 2005).  A step is taken once the epochs
        since the last have cost about as much as it does, so a problem the epochs solve
        quickly sees none.  Same optimum either way; False runs the epochs alone
        (docs/solvers/cd.md, "Hard problems").
    n_jobs : int or None, default None
        Threads the labels are solved on (:mod:`multilabel_core.parallel`: None is the thread
        budget the caller leaves, -1 every core).  The result does not depend on it.
    check_input : bool, default True
        False skips the checks of the settings ``tol``, ``max_iter``, ``shrinking``, ``n_jobs``
        and ``intercept_scaling``, which the caller has validated (:class:`CDSolver` passes
        False: its fields are checked when it is built), so that each is validated once.  X is
        checked unless the estimator validated it in this call
        (:func:`multilabel_core.validation.checked_inputs`); Y, C, the loss, the flags and alpha0
        always.
    warn : bool, default True
        False issues no ConvergenceWarning: for a caller that judges the outcome by another
        certificate (SMO's explicit-feature route uses these duals as a start for the free-bias
        problem and reports its own outcome); the certificate says the same either way.

    Returns
    -------
    Fit
        ``solution.coef`` (d, L) the weights w (without the bias feature),
        ``solution.intercept`` (L,), ``solution.dual`` the duals alpha (n, L) of (2) and
        ``solution.dual_coef = alpha * Y``; ``certificate``: primal (1) and dual summed
        over labels, their gap, ``kkt_violation`` = max |PG|, ``n_iter`` = most epochs of
        a label, and ``statistics``, lists with one entry per label: ``n_epochs``,
        ``n_updates`` (steps taken), ``n_shrunk`` (shrinking events), ``n_resets``
        (active-set restorations), ``min_active``, ``spread`` (PGmax - PGmin of the last
        epoch), ``n_face_steps``, ``converged``, ``primal`` and ``dual``.

    Raises
    ------
    ValueError
        For malformed input (named).
    CapabilityError
        When a loss object's ``dual_box`` and ``dual_diagonal`` describe no dual (2).
    """
    start = time.perf_counter()
    X = check_X(X)
    n, d = X.shape
    Y = check_signs(Y, n)
    costs = _check_costs(C, Y.shape[1])
    loss = _check_loss(loss)
    settings = _settings(tol, max_iter, shrinking, random_state, Y.shape[1], n_jobs, check_input)
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False, got {fit_intercept!r}")
    if not isinstance(face_steps, (bool, np.bool_)):
        raise ValueError(f"face_steps must be True or False, got {face_steps!r}")
    if check_input:
        check_scalar(intercept_scaling, "intercept_scaling", low=0.0, low_inclusive=False)
    upper, diagonal = _dual_terms(loss, costs, "linear_svm_cd")
    alpha = _check_alpha0(alpha0, Y.shape, upper)
    signs = np.ascontiguousarray(Y.T)
    rows = as_rows(X, float(intercept_scaling) if fit_intercept else 0.0)
    V = np.zeros((Y.shape[1], rows.dimension))  # row l: w_l, with the bias feature's weight last
    reports = _solve_labels(
        lambda l: _cd.LinearSVMDual(rows, signs[l], alpha[l], V[l], upper[l], diagonal[l]),
        Y.shape[1],
        settings,
        record_dual,
        face_steps,
    )
    coef = np.ascontiguousarray(V[:, :d].T)
    intercept = intercept_scaling * V[:, d] if fit_intercept else np.zeros(Y.shape[1])
    T = np.asarray(X @ coef) + intercept
    primal = 0.5 * np.einsum("ij,ij->i", V, V) + costs * _per_label_loss(loss, Y, T)
    certificate = _certificate("linear_svm_cd", primal, reports, settings, start, warn=bool(warn))
    alpha = np.ascontiguousarray(alpha.T)
    return Fit(Solution(coef=coef, intercept=intercept, dual_coef=alpha * Y, dual=alpha), certificate)


def box_kernel_cd(
    K,
    Y,
    C=1.0,
    *,
    loss="hinge",
    tol: float = 0.1,
    max_iter: int = 1000,
    shrinking: bool = True,
    random_state=None,
    alpha0=None,
    record_dual: bool = False,
    n_jobs: int | None = None,
    check_input: bool = True,
) -> Fit:
    """The box-constrained kernel dual (2), ``Q_ij = y_il y_jl K_ij``, per label.

    The label-wise dual of Zhang et al., *Multi-Kernel Multi-Label Learning with Max-Margin
    Concept Network*, eq. 8.  ``K`` is one precomputed symmetric kernel (n, n) shared by
    the labels, or one per label (L, n, n) (the paper learns label-specific kernels,
    eq. 10).  The decision values are ``t_l(x) = sum_i alpha_il y_il k(x_i, x)``:
    ``alpha * Y`` are the dual coefficients.  The certificate's primal is (1) in the
    feature space of K, ``1/2 alpha^T Q alpha + C_l sum_i ell(y_il s_il)`` with the
    training scores ``s = K (alpha o y)`` the engine maintains.

    Parameters
    ----------
    K : ndarray of shape (n, n) or (L, n, n)
        The precomputed symmetric kernel, shared by the labels, or one per label.
    Y : array (n, L)
        Signs -1/+1.
    C : float or array (L,)
        Cost of the losses (> 0): one for all labels, or one per label.
    loss : {"hinge", "squared_hinge"} or Loss, default "hinge"
        As for :func:`linear_svm_cd`: a name of :data:`LOSSES` or an SVM-dual loss object.
    tol : float, default 0.1
        Stop when, over a full pass, every projected gradient lies in [-tol, tol].
    max_iter : int, default 1000
        Most epochs per label; reaching it issues a ConvergenceWarning.
    shrinking : bool, default True
        LIBLINEAR's shrinking (same solution either way).
    random_state : None, int or numpy Generator
        Seeds the per-epoch permutations (one stream per label).
    alpha0 : array (n, L), optional
        Warm start inside the box (e.g. a previous ``solution.dual``).
    record_dual : bool, default False
        Record the dual objective after every epoch in ``certificate.statistics["dual_trace"]``.
    n_jobs : int or None, default None
        Threads the labels are solved on (they share K read-only); the result does not
        depend on it.
    check_input : bool, default True
        False skips the checks of ``tol``, ``max_iter``, ``shrinking`` and ``n_jobs``, which the
        caller has validated (:class:`CDSolver`'s fields); K, Y, C, the loss and alpha0 are
        checked always.

    Returns
    -------
    Fit
        ``solution.coef`` None, ``solution.intercept`` zeros (L,), ``solution.dual`` the
        duals alpha (n, L), ``solution.dual_coef = alpha * Y``; the certificate as for
        :func:`linear_svm_cd`.

    Raises
    ------
    ValueError
        For malformed input (named): K not a real square matrix (or stack of them), Y not
        signs of K's size, or a kernel count other than the label count.
    CapabilityError
        When a loss object's ``dual_box`` and ``dual_diagonal`` describe no dual (2).
    """
    start = time.perf_counter()
    K = np.asarray(K)
    if K.ndim not in (2, 3) or K.shape[-1] != K.shape[-2] or K.shape[-1] == 0:
        raise ValueError(f"K must be a square (n, n) kernel or a stack (L, n, n) of them, got shape {K.shape}")
    if not np.issubdtype(K.dtype, np.number) or np.issubdtype(K.dtype, np.complexfloating):
        raise ValueError(f"K must be a real matrix, got dtype {K.dtype}")
    n = K.shape[-1]
    Y = check_signs(Y, n)
    if K.ndim == 3 and K.shape[0] != Y.shape[1]:
        raise ValueError(f"K holds {K.shape[0]} kernels but Y has {Y.shape[1]} labels")
    costs = _check_costs(C, Y.shape[1])
    loss = _check_loss(loss)
    settings = _settings(tol, max_iter, shrinking, random_state, Y.shape[1], n_jobs, check_input)
    upper, diagonal = _dual_terms(loss, costs, "box_kernel_cd")
    alpha = _check_alpha0(alpha0, Y.shape, upper)
    K = np.ascontiguousarray(K, dtype=np.float64)
    signs = np.ascontiguousarray(Y.T)
    scores = np.zeros((Y.shape[1], n))
    kernel = (lambda l: K) if K.ndim == 2 else (lambda l: K[l])
    reports = _solve_labels(
        lambda l: _cd.BoxKernelDual(kernel(l), signs[l], alpha[l], scores[l], upper[l], diagonal[l]),
        Y.shape[1],
        settings,
        record_dual,
    )
    quadratic = np.einsum("li,li,li->l", alpha, signs, scores)
    primal = 0.5 * quadratic + costs * _per_label_loss(loss, Y, scores.T)
    certificate = _certificate("box_kernel_cd", primal, reports, settings, start)
    alpha = np.ascontiguousarray(alpha.T)
    return Fit(Solution(coef=None, intercept=np.zeros(Y.shape[1]), dual_coef=alpha * Y, dual=alpha), certificate)


# -- the solver component ---------------------------------------------------------------


@attrs.frozen
class CDSolver(Solver):
    """Per-label SVMs by dual coordinate descent (binary relevance / BSVM without bias constraint).

    Solves the :class:`~multilabel_core.base.Problem` label by label: (1) by
    :func:`linear_svm_cd` for a linear kernel (X never densified), or (2) on the
    precomputed kernel matrix by :func:`box_kernel_cd` otherwise.  ``fit_intercept``
    regularises the bias as the weight of a constant feature of value
    ``intercept_scaling`` (LIBLINEAR's convention; for a kernel, K + intercept_scaling^2).

    What it asks of the parts (capabilities, never classes):

    * the loss: ``dual_box(C) -> (0, U)`` and ``dual_diagonal(C) -> D``, the box and
      diagonal of the SVM dual (2) (an SVM-dual loss: :class:`~multilabel_core.losses.Hinge`,
      :class:`~multilabel_core.losses.SquaredHinge`, or a third party's);
    * the regulariser: ``label_gram(L) -> M`` of the form ``1/2 tr(W M^-1 W^T)``, with M
      **diagonal** (independent per-label duals), M = diag(m), m > 0.  Label l then has
      the primal ``1/(2 m_l) ||w_l||^2 + C loss_l = (1/m_l) (1/2 ||w_l||^2 + C m_l loss_l)``:
      it is solved as (1) with the cost C_l = C m_l, and its primal and dual are scaled by
      1/m_l in the certificate (Frobenius: m = 1; the default label covariance I / L:
      C_l = C / L).  A non-diagonal M couples the labels' duals and is refused;
    * the relation: not learned (the labels' duals are solved once, for a fixed M).

    Anything else is refused by :meth:`check` with a
    :class:`~multilabel_core.base.CapabilityError` naming the part.

    Parameters
    ----------
    tol : float, default 1e-3
        LIBLINEAR's eps on the projected gradients (see :func:`linear_svm_cd`).  Tighter
        than LIBLINEAR's 0.1 because estimators report certificates: on rcv1subset1
        (squared hinge, C = 1) 0.1 leaves a relative duality gap of about 1e-4, 1e-3 one of
        about 1e-8, for some 20% more time.
    max_iter : int, default 10000
        Most epochs per label (ConvergenceWarning beyond).  Ten times LIBLINEAR's 1000:
        large C needs thousands of epochs (rcv1subset1 at C = 100: about 3300 a label with
        the epochs alone, 1500 with the face steps, on its first 20 labels), and an epoch
        over a shrunk active set is cheap.
    shrinking : bool, default True
    intercept_scaling : float, default 1.0
    random_state : None, int or numpy Generator, default 0
        Seed of the permutations (fixed by default: fits are reproducible; a Generator's
        stream goes on from solve to solve).
    n_jobs : int or None, default None
        Threads the labels are solved on (:mod:`multilabel_core.parallel`; None: the budget
        the caller leaves).  The result does not depend on it.

    Notes
    -----
    :meth:`solve` returns a :class:`~multilabel_core.base.Fit` whose solution holds
    ``coef`` (linear kernel; None otherwise), ``intercept``, ``dual_coef`` (n, L) =
    ``(dual * Y) M`` -- the engine's alpha times Y, so decision values on new rows are
    ``kernel(X_new, X) @ dual_coef + intercept`` -- and ``dual`` (n, L), the duals of the
    problem in ``loss.dual_box(C)`` (the engine's alpha_l / m_l; SMO's convention).  A warm
    start continues from a previous solution's warm state, its ``dual_coef`` (declared in
    ``warm_state_names``; proportional to C, so it rescales to another C).
    """

    tol: float = attrs.field(
        default=1e-3, validator=positive
    )
    max_iter: int = attrs.field(
        default=10000, validator=count
    )
    shrinking: bool = attrs.field(default=True, validator=attrs.validators.instance_of((bool, np.bool_)))
    intercept_scaling: float = attrs.field(
        default=1.0, validator=positive
    )
    random_state: object = attrs.field(default=0, validator=seed)
    n_jobs: int | None = n_jobs_field()

    requires: ClassVar[dict[str, tuple[str, ...]]] = {
        "loss": SVM_DUAL_CAPABILITIES,
        "regularizer": ("label_gram",),
    }
    warm_state_names: ClassVar[dict[str, str]] = {
        "dual_coef": "scaled: (n, L), the engine's alpha times Y, to start from",
    }

    def check(self, problem: Problem) -> None:
        self._checked_terms(problem)

    def _checked_terms(self, problem: Problem) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`check`'s work, and what it finds: m (the label_gram's diagonal) and each label's bound U_l."""
        super().check(problem)
        name = type(self).__name__
        scales = self._label_scales(problem)
        upper, _ = _dual_terms(problem.loss, problem.C * scales, name)
        if problem.relation.learned:
            raise CapabilityError(f"{name} solves for independent labels; {type(problem.relation).__name__} is learned")
        return scales, upper

    def _label_scales(self, problem: Problem) -> np.ndarray:
        """m, the diagonal of the regulariser's ``label_gram(L)`` (:meth:`~multilabel_core.base.Solver.require_diagonal_label_gram`)."""
        return self.require_diagonal_label_gram(problem, "one SVM dual per label")

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> Fit:
        scales, upper = self._checked_terms(problem)
        Y = problem.Y
        settings = {
            "C": problem.C * scales,
            "loss": problem.loss,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "shrinking": self.shrinking,
            "random_state": self.random_state,
            "alpha0": self._alpha0(warm_start, Y, upper),
            "n_jobs": self.n_jobs,
            # The settings above are this solver's fields, checked when it was built: not again.
            "check_input": False,
        }
        if problem.kernel.linear:
            fit = linear_svm_cd(
                problem.X, Y, fit_intercept=problem.fit_intercept, intercept_scaling=self.intercept_scaling, **settings
            )
            intercept = fit.solution.intercept
        else:
            K = problem.kernel(problem.X)
            if problem.fit_intercept:
                K = K + self.intercept_scaling**2
            fit = box_kernel_cd(K, Y, **settings)
            intercept = (
                self.intercept_scaling**2 * fit.solution.dual_coef.sum(axis=0)
                if problem.fit_intercept
                else fit.solution.intercept
            )
        alpha = fit.solution.dual
        solution = Solution(
            coef=fit.solution.coef,
            intercept=intercept,
            dual_coef=fit.solution.dual_coef,
            dual=alpha / scales,
            warm_state=WarmState(type(self).__name__, scaled={"dual_coef": fit.solution.dual_coef}),
        )
        return Fit(solution, self._rescaled(fit.certificate, 1.0 / scales))

    def _rescaled(self, certificate: Certificate, factors: np.ndarray) -> Certificate:
        """The certificate with label l's primal and dual times ``factors[l]`` (1 / m_l), under this solver's name.

        The projected gradients need no scaling: the problem's dual in alpha / m_l is the
        engine's divided by m_l, and its gradient in alpha / m_l is the engine's gradient.
        """
        name = type(self).__name__
        if np.all(factors == 1.0):
            return attrs.evolve(certificate, solver=name)
        statistics = dict(certificate.statistics)
        primal, dual = np.array(statistics["primal"]) * factors, np.array(statistics["dual"]) * factors
        statistics |= {"primal": primal.tolist(), "dual": dual.tolist()}
        if "dual_trace" in statistics:
            statistics["dual_trace"] = [
                [value * factor for value in trace] for trace, factor in zip(statistics["dual_trace"], factors)
            ]
        return Certificate.from_objectives(
            primal.sum(),
            dual.sum(),
            kkt_violation=certificate.kkt_violation,
            n_iter=certificate.n_iter,
            time=certificate.time,
            converged=certificate.converged,
            solver=name,
            statistics=statistics,
        )

    @staticmethod
    def _alpha0(warm_start: Solution | None, Y: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
        """The engine's alpha = dual_coef * Y (as y_i^2 = 1) from a warm start, or None.

        Entries outside label l's box [0, upper_l] by at most :data:`WARM_START_ROUND_OFF`
        relative to the box (or, without a bound, to the label's largest alpha) are put on
        the bound; farther out the warm start belongs to another problem: ValueError.
        """
        state = warm_state_of(warm_start)
        if state is None:
            return None
        if state.get("dual_coef") is None:
            raise ValueError("CDSolver warm-starts from dual coefficients, and this warm start has none")
        dual_coef = np.asarray(state.get("dual_coef"), dtype=np.float64)
        if dual_coef.shape != Y.shape:
            raise ValueError(f"warm start dual_coef has shape {dual_coef.shape}, expected {Y.shape}")
        if not np.all(np.isfinite(dual_coef)):
            raise ValueError("warm start dual_coef contains NaN or infinity")
        alpha = dual_coef * Y
        scale = np.where(np.isfinite(upper), upper, np.maximum(1.0, np.abs(alpha).max(axis=0, initial=0.0)))
        slack = WARM_START_ROUND_OFF * scale
        outside = np.any((alpha < -slack) | (alpha > upper + slack), axis=0)
        if outside.any():
            label = int(np.argmax(outside))
            raise ValueError(
                f"the warm start's alpha = dual_coef * Y leaves label {label}'s dual box [0, {upper[label]:g}] "
                "by more than round-off: it is not a point of this problem (rescale it to this C)"
            )
        return np.clip(alpha, 0.0, upper)
