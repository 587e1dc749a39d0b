"""Dual coordinate descent for per-label SVMs: validated Python entry points over :mod:`._cd`.

Notation: X (n, d) the rows x_i, dense or CSR (never densified); Y (n, L) the signs
y_il in {-1, +1}; C > 0 the cost; for each label l independently, the primal

    min_w  1/2 ||w||^2 + C sum_i ell(y_il w^T x_i),  ell(s) = max(0, 1 - s)  or  max(0, 1 - s)^2   (1)

and its dual (Hsieh et al., ICML 2008, eq. 4 -- LIBLINEAR's dual solver)

    min_alpha  f(alpha) = 1/2 alpha^T (Q + D) alpha - e^T alpha,   Q_ij = y_il y_jl x_i^T x_j,   (2)

over 0 <= alpha_i <= U, with U = C, D = 0 for the hinge loss and U = inf, D = I / (2C)
for the squared hinge, and w = sum_i alpha_i y_il x_i.  With ``fit_intercept`` each x_i
gets a constant feature of value ``intercept_scaling`` appended: the bias is regularised
(LIBLINEAR's and scikit-learn's LinearSVC convention, and the L-BFGS solver's), so (2)
keeps its plain box and no equality constraint.

:func:`box_kernel_cd` solves (2) with ``Q_ij = y_il y_jl K_ij`` for a precomputed kernel K:
the label-wise dual of the max-margin concept network (seed 003 eq. 8, with C for its
lambda), and the kernel SVM without bias.

Both run the engine of :mod:`._cd` once per label (docs/solvers/cd.md) and return a
:class:`CDResult` whose certificate sums over labels the primal (1) and the dual -f(alpha)
of (2), both evaluated in O(nnz + nL) (O(nL) for the kernel variant) from the primal
vectors the engine maintains -- never by another solve.  :class:`CDSolver` plugs them into
:class:`~multilabel_core.estimator.ComposedEstimator`.
"""

from __future__ import annotations

import numbers
import time

import attrs
import numpy as np
import scipy.sparse as sp

from ..validation import check_random_state, check_scalar, check_X
from ..base import CapabilityError, Problem, Solution, Solver
from ..certificate import Certificate
from ..losses import Hinge, SquaredHinge
from ..regularizers import Frobenius
from . import _cd
from ._convergence import warn_not_converged

__all__ = ["LOSSES", "CDResult", "CDSolver", "box_kernel_cd", "linear_svm_cd"]

#: The losses the SVM duals (2) cover, by name.
LOSSES = {"hinge": Hinge(), "squared_hinge": SquaredHinge()}


@attrs.frozen(eq=False)
class CDResult:
    """What a per-label CD solve returns.

    Attributes
    ----------
    alpha : ndarray (n, L)
        The dual variables of (2), one column per label.
    coef : ndarray (d, L) or None
        The primal weights w (without the bias feature); None for :func:`box_kernel_cd`.
    intercept : ndarray (L,)
        ``intercept_scaling`` times the bias feature's weight (zeros without it).
    certificate : Certificate
        Summed over labels; ``statistics`` holds the per-label counts (see the functions).
    """

    alpha: np.ndarray
    coef: np.ndarray | None
    intercept: np.ndarray
    certificate: Certificate


# -- validation ------------------------------------------------------------------------


def _check_signs(Y, n_samples: int) -> np.ndarray:
    """(n, L) float64 matrix of signs -1/+1."""
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[0] != n_samples or Y.shape[1] == 0:
        raise ValueError(f"Y must be an (n_samples={n_samples}, n_labels >= 1) matrix of signs, got shape {Y.shape}")
    if Y.dtype == object or not (np.issubdtype(Y.dtype, np.number) or Y.dtype == bool):
        raise ValueError(f"Y must hold the signs -1 and +1, got dtype {Y.dtype}")
    Y = Y.astype(np.float64)
    if not np.all((Y == 1.0) | (Y == -1.0)):
        raise ValueError("Y must hold the signs -1 and +1 only (multilabel_core.validation.to_signs converts 0/1)")
    return Y


def _check_alpha0(alpha0, shape: tuple[int, int], upper: float) -> np.ndarray:
    """The starting duals as (L, n) C-contiguous rows (one per label), inside the box."""
    if alpha0 is None:
        return np.zeros(shape[::-1])
    alpha0 = np.asarray(alpha0, dtype=np.float64)
    if alpha0.shape != shape:
        raise ValueError(f"alpha0 must have shape {shape}, got {alpha0.shape}")
    if not np.all(np.isfinite(alpha0)):
        raise ValueError("alpha0 contains NaN or infinity")
    if np.any(alpha0 < 0.0) or np.any(alpha0 > upper):
        raise ValueError(f"alpha0 must lie in the dual box [0, {upper}]")
    return np.ascontiguousarray(alpha0.T)


def _settings(C, loss, tol, max_iter, shrinking, random_state, n_labels) -> dict:
    check_scalar(C, "C", low=0.0, low_inclusive=False)
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
    check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    check_scalar(max_iter, "max_iter", kind=numbers.Integral, low=1)
    if not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False, got {shrinking!r}")
    # One seed per label, drawn in label order: a run is reproducible label by label.
    seeds = check_random_state(random_state).integers(0, 2**63, size=n_labels, dtype=np.uint64)
    return {"tol": float(tol), "max_iter": int(max_iter), "shrinking": bool(shrinking), "seeds": seeds}


def _rows(X, bias: float):
    """X as :class:`~._cd.DenseRows` or :class:`~._cd.SparseRows` (canonical CSR)."""
    if sp.issparse(X):
        X = X.tocsr().astype(np.float64, copy=False)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return _cd.SparseRows(np.ascontiguousarray(X.data), X.indices, X.indptr, X.shape[1], bias)
    return _cd.DenseRows(np.ascontiguousarray(X, dtype=np.float64), bias)


# -- the per-label loop and the certificate -------------------------------------------


def _solve_labels(make_problem, n_labels: int, settings: dict, record_dual: bool) -> list[dict]:
    """Run the engine on ``make_problem(l)`` for every label l; the engine's report per label."""
    reports = []
    for label in range(n_labels):
        reports.append(
            _cd.solve_dual(
                make_problem(label),
                tol=settings["tol"],
                max_iter=settings["max_iter"],
                shrinking=settings["shrinking"],
                seed=int(settings["seeds"][label]),
                record_dual=record_dual,
            )
        )
    return reports


def _certificate(name: str, primal: np.ndarray, reports: list[dict], settings: dict, start: float) -> Certificate:
    """Sum the per-label primals (1) and duals -f(alpha) of (2); warn for labels that hit max_iter.

    ``kkt_violation`` is the largest |projected gradient| over all labels and coordinates;
    ``n_iter`` the most epochs any label took; ``statistics`` holds one list entry per label.
    """
    dual = np.array([-report["objective"] for report in reports])
    converged = np.array([report["converged"] for report in reports])
    # Plain lists, not arrays: certificates compare with == and serialise to JSON.
    statistics = {
        key: [report[key] for report in reports]
        for key in ("n_epochs", "n_updates", "n_shrunk", "n_resets", "min_active", "spread", "converged")
    }
    statistics |= {"primal": primal.tolist(), "dual": dual.tolist()}
    if reports[0]["dual_trace"] is not None:
        statistics["dual_trace"] = [[-value for value in report["dual_trace"]] for report in reports]
    if not converged.all():
        warn_not_converged(
            name,
            f"{np.count_nonzero(~converged)} of {len(reports)} labels reached max_iter={settings['max_iter']} epochs "
            f"(largest projected-gradient spread {max(statistics['spread']):.3g} > tol={settings['tol']:g})",
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


def _per_label_loss(loss: str, Y: np.ndarray, T: np.ndarray) -> np.ndarray:
    return np.array([LOSSES[loss].value(Y[:, [label]], T[:, [label]]) for label in range(Y.shape[1])])


# -- public entry points --------------------------------------------------------------


def linear_svm_cd(
    X,
    Y,
    C: float = 1.0,
    *,
    loss: str = "hinge",
    fit_intercept: bool = False,
    intercept_scaling: float = 1.0,
    tol: float = 0.1,
    max_iter: int = 1000,
    shrinking: bool = True,
    random_state=None,
    alpha0=None,
    record_dual: bool = False,
) -> CDResult:
    """One linear SVM (1) per label by dual coordinate descent on (2).

    Parameters
    ----------
    X : array or sparse matrix (n, d)
        Training rows; CSR/CSC stay sparse.
    Y : array (n, L)
        Signs -1/+1.
    C : float
        Cost of the losses (> 0).
    loss : {"hinge", "squared_hinge"}
    fit_intercept : bool, default False
        Append a constant feature of value ``intercept_scaling`` (> 0): a regularised
        bias, ``intercept = intercept_scaling * w_{d+1}`` (LinearSVC's convention).
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
        Warm start inside the box (e.g. a previous ``alpha``).
    record_dual : bool, default False
        Record the dual objective -f(alpha) after every epoch in
        ``certificate.statistics["dual_trace"]`` (one list per label; non-decreasing).

    Returns
    -------
    CDResult
        ``coef`` (d, L), ``intercept`` (L,), ``alpha`` (n, L) and a certificate: primal
        (1) and dual summed over labels, their gap, ``kkt_violation`` = max |PG|,
        ``n_iter`` = most epochs of a label, and ``statistics``, lists with one entry
        per label: ``n_epochs``, ``n_updates`` (steps taken), ``n_shrunk`` (shrinking
        events), ``n_resets`` (active-set restorations), ``min_active``, ``spread``
        (PGmax - PGmin of the last epoch), ``converged``, ``primal`` and ``dual``.
    """
    start = time.perf_counter()
    X = check_X(X)
    n, d = X.shape
    Y = _check_signs(Y, n)
    settings = _settings(C, loss, tol, max_iter, shrinking, random_state, Y.shape[1])
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False, got {fit_intercept!r}")
    check_scalar(intercept_scaling, "intercept_scaling", low=0.0, low_inclusive=False)
    squared = loss == "squared_hinge"
    alpha = _check_alpha0(alpha0, Y.shape, np.inf if squared else C)
    signs = np.ascontiguousarray(Y.T)
    rows = _rows(X, float(intercept_scaling) if fit_intercept else 0.0)
    V = np.zeros((Y.shape[1], rows.dimension))  # row l: w_l, with the bias feature's weight last
    reports = _solve_labels(
        lambda l: _cd.LinearSVMDual(rows, signs[l], alpha[l], V[l], float(C), squared),
        Y.shape[1],
        settings,
        record_dual,
    )
    coef = np.ascontiguousarray(V[:, :d].T)
    intercept = intercept_scaling * V[:, d] if fit_intercept else np.zeros(Y.shape[1])
    T = np.asarray(X @ coef) + intercept
    primal = 0.5 * np.einsum("ij,ij->i", V, V) + C * _per_label_loss(loss, Y, T)
    certificate = _certificate("linear_svm_cd", primal, reports, settings, start)
    return CDResult(alpha=np.ascontiguousarray(alpha.T), coef=coef, intercept=intercept, certificate=certificate)


def box_kernel_cd(
    K,
    Y,
    C: float = 1.0,
    *,
    loss: str = "hinge",
    tol: float = 0.1,
    max_iter: int = 1000,
    shrinking: bool = True,
    random_state=None,
    alpha0=None,
    record_dual: bool = False,
) -> CDResult:
    """The box-constrained kernel dual (2), ``Q_ij = y_il y_jl K_ij``, per label (seed 003 eq. 8).

    ``K`` is one precomputed symmetric kernel (n, n) shared by the labels, or one per
    label (L, n, n) (seed 003 learns label-specific kernels, eq. 10).  The decision
    values are ``t_l(x) = sum_i alpha_il y_il k(x_i, x)``: ``alpha * Y`` are the dual
    coefficients.  The certificate's primal is (1) in the feature space of K,
    ``1/2 alpha^T Q alpha + C sum_i ell(y_il s_il)`` with the training scores
    ``s = K (alpha o y)`` the engine maintains.  Other parameters and the result as
    :func:`linear_svm_cd` (``coef`` is None, ``intercept`` zeros).
    """
    start = time.perf_counter()
    K = np.asarray(K)
    if K.ndim not in (2, 3) or K.shape[-1] != K.shape[-2] or K.shape[-1] == 0:
        raise ValueError(f"K must be a square (n, n) kernel or a stack (L, n, n) of them, got shape {K.shape}")
    if not np.issubdtype(K.dtype, np.number) or np.issubdtype(K.dtype, np.complexfloating):
        raise ValueError(f"K must be a real matrix, got dtype {K.dtype}")
    n = K.shape[-1]
    Y = _check_signs(Y, n)
    if K.ndim == 3 and K.shape[0] != Y.shape[1]:
        raise ValueError(f"K holds {K.shape[0]} kernels but Y has {Y.shape[1]} labels")
    settings = _settings(C, loss, tol, max_iter, shrinking, random_state, Y.shape[1])
    squared = loss == "squared_hinge"
    alpha = _check_alpha0(alpha0, Y.shape, np.inf if squared else C)
    K = np.ascontiguousarray(K, dtype=np.float64)
    signs = np.ascontiguousarray(Y.T)
    scores = np.zeros((Y.shape[1], n))
    kernel = (lambda l: K) if K.ndim == 2 else (lambda l: K[l])
    reports = _solve_labels(
        lambda l: _cd.BoxKernelDual(kernel(l), signs[l], alpha[l], scores[l], float(C), squared),
        Y.shape[1],
        settings,
        record_dual,
    )
    quadratic = np.einsum("li,li,li->l", alpha, signs, scores)
    primal = 0.5 * quadratic + C * _per_label_loss(loss, Y, scores.T)
    certificate = _certificate("box_kernel_cd", primal, reports, settings, start)
    return CDResult(
        alpha=np.ascontiguousarray(alpha.T), coef=None, intercept=np.zeros(Y.shape[1]), certificate=certificate
    )


# -- the solver component ---------------------------------------------------------------


@attrs.frozen
class CDSolver(Solver):
    """Per-label SVMs by dual coordinate descent (binary relevance / BSVM without bias constraint).

    Solves the :class:`~multilabel_core.base.Problem` with a hinge or squared-hinge loss,
    the Frobenius regulariser and independent labels: label by label, (1) by
    :func:`linear_svm_cd` for a linear kernel (X never densified), or (2) on the
    precomputed kernel matrix by :func:`box_kernel_cd` otherwise.  ``fit_intercept``
    regularises the bias as the weight of a constant feature of value
    ``intercept_scaling`` (LIBLINEAR's convention; for a kernel, K + intercept_scaling^2).

    Parameters
    ----------
    tol : float, default 1e-3
        LIBLINEAR's eps on the projected gradients (see :func:`linear_svm_cd`).  Tighter
        than LIBLINEAR's 0.1 because estimators report certificates: on rcv1subset1
        (squared hinge, C = 1) 0.1 leaves a relative duality gap of about 1e-4, 1e-3 one of
        about 1e-8, for some 20% more time.
    max_iter : int, default 10000
        Most epochs per label (ConvergenceWarning beyond).  Ten times LIBLINEAR's 1000:
        large C needs thousands of epochs (rcv1subset1 at C = 100: about 4000), and an
        epoch over a shrunk active set is cheap.
    shrinking : bool, default True
    intercept_scaling : float, default 1.0
    random_state : int, default 0
        Seed of the permutations (fixed by default: fits are reproducible).

    A warm start needs the previous solution's ``dual_coef`` (``alpha * Y``), which this
    solver returns beside ``coef``.
    """

    tol: float = attrs.field(
        default=1e-3, validator=lambda _, a, v: check_scalar(v, a.name, low=0.0, low_inclusive=False)
    )
    max_iter: int = attrs.field(
        default=10000, validator=lambda _, a, v: check_scalar(v, a.name, kind=numbers.Integral, low=1)
    )
    shrinking: bool = attrs.field(default=True, validator=attrs.validators.instance_of((bool, np.bool_)))
    intercept_scaling: float = attrs.field(
        default=1.0, validator=lambda _, a, v: check_scalar(v, a.name, low=0.0, low_inclusive=False)
    )
    random_state: int = attrs.field(
        default=0, validator=lambda _, a, v: check_scalar(v, a.name, kind=numbers.Integral, low=0)
    )

    def check(self, problem: Problem) -> None:
        super().check(problem)
        name = type(self).__name__
        if self._loss_name(problem.loss) is None:
            raise CapabilityError(
                f"{name} solves the SVM duals of the hinge and squared hinge losses, not {type(problem.loss).__name__}"
            )
        if type(problem.regularizer) is not Frobenius:
            raise CapabilityError(
                f"{name} needs the Frobenius regulariser 1/2 ||W||^2 (independent per-label duals), "
                f"not {type(problem.regularizer).__name__}"
            )
        if problem.relation.learned:
            raise CapabilityError(f"{name} solves for independent labels; {type(problem.relation).__name__} is learned")

    @staticmethod
    def _loss_name(loss) -> str | None:
        return next((name for name, known in LOSSES.items() if type(loss) is type(known)), None)

    def solve(self, problem: Problem, warm_start: Solution | None = None) -> tuple[Solution, Certificate]:
        self.check(problem)
        Y = problem.Y
        settings = {
            "C": problem.C,
            "loss": self._loss_name(problem.loss),
            "tol": self.tol,
            "max_iter": self.max_iter,
            "shrinking": self.shrinking,
            "random_state": self.random_state,
            "alpha0": self._alpha0(warm_start, Y),
        }
        if problem.kernel.linear:
            result = linear_svm_cd(
                problem.X, Y, fit_intercept=problem.fit_intercept, intercept_scaling=self.intercept_scaling, **settings
            )
            intercept = result.intercept
        else:
            K = problem.kernel(problem.X)
            if problem.fit_intercept:
                K = K + self.intercept_scaling**2
            result = box_kernel_cd(K, Y, **settings)
            intercept = (
                self.intercept_scaling**2 * (result.alpha * Y).sum(axis=0)
                if problem.fit_intercept
                else result.intercept
            )
        certificate = attrs.evolve(result.certificate, solver=type(self).__name__)
        solution = Solution(coef=result.coef, intercept=intercept, dual_coef=result.alpha * Y)
        return solution, certificate

    @staticmethod
    def _alpha0(warm_start: Solution | None, Y: np.ndarray) -> np.ndarray | None:
        """alpha = dual_coef * Y (as y_i^2 = 1) from a warm start, or None."""
        if warm_start is None:
            return None
        if warm_start.dual_coef is None:
            raise ValueError("CDSolver warm-starts from dual coefficients, and this warm start has none")
        dual_coef = np.asarray(warm_start.dual_coef, dtype=np.float64)
        if dual_coef.shape != Y.shape:
            raise ValueError(f"warm start dual_coef has shape {dual_coef.shape}, expected {Y.shape}")
        return dual_coef * Y
