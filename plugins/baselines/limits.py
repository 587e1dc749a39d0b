"""What LIBSVM and LIBLINEAR can compute with: the ranges the scikit-learn baselines accept.

LIBSVM and LIBLINEAR run in C without looking at the values they produce, and scikit-learn
hands them whatever it is given.  An overflow or an underflow inside them does not raise:
it turns into inf or NaN, every comparison that would end one of their loops is then
false, and the fit never returns (LIBLINEAR's trust-region Newton method spins in its
conjugate-gradient loop, LIBSVM in its working-set selection; neither checks for signals,
so Ctrl-C does not stop them either).  The baselines therefore refuse, before calling
them, the inputs whose intermediate values leave double precision, and give every fit a
finite iteration budget.

Notation: n training rows x_i (for a chain link, x_i with the predecessors' labels
appended), ``R = max_i ||x_i||_2`` the features' scale, ``R~^2 = R^2 + 1`` with
LIBLINEAR's constant bias feature, and ``kappa = max_ij |K(x_i, x_j)|`` the largest
kernel value (1 for the RBF and sigmoid kernels, ``R^2`` for the linear one,
``(gamma R^2 + |coef0|)^degree`` for the polynomial one).  Where the solvers' values come from:

- LIBLINEAR's primal Newton method (Lin, Weng & Keerthi, Trust region Newton method for
  logistic regression, JMLR 9, 2008) starts from w = 0, where the gradient has norm up to
  ``2 C n R~`` and the Hessian ``I + C X~^T D X~`` norm up to ``1 + 2 C n R~^2``; its
  conjugate-gradient steps form ``d^T H d`` with ``||d||`` up to that gradient norm: a
  product of three factors of order ``C n R~^2`` (as ``R~ >= 1``).  Its dual coordinate
  descent (Hsieh et al., A dual coordinate descent method for large-scale linear SVM,
  ICML 2008) forms ``||x_i||^2 + 1 / (2 C)`` and gradients ``y_i w^T x_i - 1`` of order
  ``C n R~^2`` as well.
- LIBSVM's SMO (Chang & Lin 2011, section 4) keeps the gradient ``Q alpha - 1`` with
  ``0 <= alpha_i <= C``: entries up to ``1 + C n kappa``, and products of two of them
  in its step sizes.  It caches the kernel values ``Q_ij = y_i y_j K(x_i, x_j)`` in
  single precision (its ``Qfloat`` is a C float, largest 3.4e38), so kappa itself must
  stay below :data:`KERNEL_LIMIT` = 1e38 (a linear kernel on X * 1e49 fails with
  scikit-learn's "dual coefficients or intercepts are not finite").

So with ``S = C n R~^2`` (LIBLINEAR) or ``S = C n kappa`` (LIBSVM), every value the
solvers form is a product of at most three factors of order S, C or R^2.  float64 holds
normal numbers from 2.2e-308 to 1.8e308, whose cube roots are 2.8e-103 and 5.6e102:
:data:`SCALE_RANGE` keeps S within [1e-100, 1e100], and the features' scale R within
:data:`FEATURE_SCALE_RANGE` = [1e-50, 1e50] so that the squared norms and inner products
of the rows (of order R^2) are within [1e-100, 1e100] too.  (C itself goes through the
estimators' common check of C first; S bounds it for the data at hand.)  An X that is
zero everywhere has nothing to overflow and is accepted.

The stopping tolerances: both solvers compare a difference of gradient entries of order
one (LIBSVM's ``m(alpha) - M(alpha)``, LIBLINEAR's projected gradient, or its gradient
norm relative to the starting one) with ``tol``; those entries carry a rounding error of
at least float64's machine epsilon 2.2e-16, so a smaller ``tol`` can never be met.  A
``tol`` of order 1 accepts the starting point or a step from it: LIBSVM's stopping
quantity is 2 at alpha = 0 (at ``tol >= 2`` it takes no step and the model has no
support vector), and LIBLINEAR's relative rule compares with the gradient at w = 0.
:data:`TOL_RANGE` is [2.2e-16, 1).

Inside these ranges a fit can still stop on its iteration budget or with a duality gap
above its tolerance (ill-conditioned data); the certificate then says ``converged =
False`` and a ConvergenceWarning gives the numbers (:mod:`.binary`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from multilabel_core.validation import (  # LIBSVM and LIBLINEAR count in a C int too
    MAX_ITER_LIMIT,
    check_scalar,
)

__all__ = [
    "FEATURE_SCALE_RANGE",
    "KERNEL_LIMIT",
    "MAX_ITER_LIMIT",
    "SCALE_RANGE",
    "TOL_RANGE",
    "check_liblinear_scale",
    "check_libsvm_scale",
    "check_max_iter",
    "check_tol",
    "feature_scale",
    "libsvm_budget",
]

#: Accepted ``max_i ||x_i||_2`` of the training rows (or exactly 0).
FEATURE_SCALE_RANGE = (1e-50, 1e50)

#: Accepted ``C n R~^2`` (LIBLINEAR) and ``C n kappa`` (LIBSVM).
SCALE_RANGE = (1e-100, 1e100)

#: Largest ``max |K(x_i, x_j)|`` LIBSVM's single-precision kernel cache holds.
KERNEL_LIMIT = 1e38

#: Accepted ``tol``: ``TOL_RANGE[0] <= tol < TOL_RANGE[1]``.
TOL_RANGE = (float(np.finfo(np.float64).eps), 1.0)

_ROWS_PER_BLOCK = 4096


def check_tol(tol, name: str = "tol") -> float:
    """Check a stopping tolerance against :data:`TOL_RANGE`.

    Parameters
    ----------
    tol : float
        The tolerance, ``TOL_RANGE[0] <= tol < TOL_RANGE[1]``.
    name : str, default "tol"
        The parameter's name, used in the error message.

    Returns
    -------
    float
        ``tol`` as a float.

    Raises
    ------
    ValueError
        When ``tol`` is not a real number or is outside the range, naming ``name`` and the range.
    """
    check_scalar(tol, name)
    low, high = TOL_RANGE
    if not low <= tol < high:
        raise ValueError(
            f"{name} = {tol!r} is outside [{low:.3g}, {high:g}), the tolerances LIBSVM and LIBLINEAR can meet: "
            f"their stopping quantities are gradient differences of order 1, rounded to float64's machine epsilon "
            f"{low:.3g} (a smaller tol is never met), and a tol of order 1 accepts the starting point or a step from it"
        )
    return float(tol)


def check_max_iter(max_iter, name: str = "max_iter") -> None:
    """Check an iteration budget: None, or an int in [1, :data:`MAX_ITER_LIMIT`].

    The solvers' iteration counter is a C int.

    Parameters
    ----------
    max_iter : int or None
        The budget; None leaves the solver's default.
    name : str, default "max_iter"
        The parameter's name, used in the error message.

    Raises
    ------
    ValueError
        When ``max_iter`` is not an int or is outside the range, naming ``name``.
    """
    if max_iter is None:
        return
    check_scalar(max_iter, name, kind=numbers.Integral, low=1)
    if max_iter > MAX_ITER_LIMIT:
        raise ValueError(
            f"{name} = {max_iter!r} is above {MAX_ITER_LIMIT}: LIBSVM and LIBLINEAR count iterations in a C int"
        )


def libsvm_budget(n_samples: int, max_iter) -> int:
    """Compute LIBSVM's iteration budget.

    Parameters
    ----------
    n_samples : int
        n, the training rows.
    max_iter : int or None
        The user's budget (already checked by :func:`check_max_iter`), or None.

    Returns
    -------
    int
        ``max_iter``, or for None ``max(10^7, 100 n)`` capped at :data:`MAX_ITER_LIMIT` (the rule
        of LIBSVM's later versions and of the project's SMO; scikit-learn's copy of LIBSVM has
        none, and its max_iter=-1 means no limit).
    """
    if max_iter is not None:
        return int(max_iter)
    return min(MAX_ITER_LIMIT, max(10**7, 100 * int(n_samples)))


def feature_scale(X) -> float:
    """Compute the features' scale ``max_i ||x_i||_2`` without overflow or underflow.

    Outside [1e-100, 1e100] the rows are rescaled by the largest entry before squaring.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
        The rows, read a block of rows at a time.

    Returns
    -------
    float
        R, the largest Euclidean norm of a row; 0 for an X that is zero everywhere.
    """
    data = X.data if sp.issparse(X) else X
    largest = max(float(data.max()), -float(data.min())) if data.size else 0.0
    if largest == 0.0:
        return 0.0
    # Squares of entries up to 1e100 sum without overflow, and the largest row's don't underflow
    # from 1e-100 up: only outside that is the rescaled (slower) computation needed.
    unscaled = 1e-100 <= largest <= 1e100
    factor = 1.0 if unscaled else 1.0 / largest
    worst = 0.0
    for start in range(0, X.shape[0], _ROWS_PER_BLOCK):
        block = X[start : start + _ROWS_PER_BLOCK]
        if sp.issparse(block):
            scaled = block.astype(np.float64) * factor
            squares = np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel()
        else:
            scaled = np.asarray(block, dtype=np.float64) * factor if not unscaled else block
            squares = np.einsum("ij,ij->i", scaled, scaled, dtype=np.float64)
        worst = max(worst, float(squares.max()))
    return math.sqrt(worst) if unscaled else largest * math.sqrt(worst)


def _check_feature_scale(scale: float, method: str, solver: str) -> None:
    low, high = FEATURE_SCALE_RANGE
    if scale != 0.0 and not low <= scale <= high:
        raise ValueError(
            f"the features' scale max_i ||x_i|| = {scale:.3g} is outside [{low:g}, {high:g}], the range {solver} "
            f"({method}) computes with: it forms the rows' squared norms and inner products, of order "
            f"max_i ||x_i||^2, which must stay within [1e-100, 1e100] for their products with C and n to remain "
            f"representable in float64. Rescale the features (e.g. standardize them)"
        )


def _power_of_ten(log10_value: float) -> str:
    """``10^log10_value`` written as m.mme+XX, also where the value itself is not representable."""
    exponent = math.floor(log10_value)
    return f"{10.0 ** (log10_value - exponent):.2f}e{exponent:+d}"


def _check_product(log10_product: float, what: str, C: float, n: int, method: str, solver: str, hint: str) -> None:
    low, high = SCALE_RANGE
    if log10_product == -math.inf:
        return  # every kernel value or row is zero: nothing to overflow or underflow
    if not math.log10(low) <= log10_product <= math.log10(high):
        side = "above" if log10_product > math.log10(high) else "below"
        bound = high if side == "above" else low
        raise ValueError(
            f"{what} = {_power_of_ten(log10_product)} (C = {C:.3g}, n = {n} rows) is {side} {bound:g}: "
            f"{solver} ({method}) "
            f"forms products of three factors of that order, which float64 represents only within [1e-100, "
            f"1e100] for each factor (its normal numbers are 2.2e-308 to 1.8e308). {hint}"
        )


def check_liblinear_scale(X, C: float, method: str, *, extra_squared_norm: float = 0.0) -> None:
    """Check the features' scale and ``C n R~^2`` for LIBLINEAR (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
        The training rows.
    C : float
        The loss weight, already checked positive.
    method : str
        The method's name, used in the error message.
    extra_squared_norm : float, default 0.0
        What a chain link's appended label columns add to ``||x_i||^2`` (at most the number
        of predecessors).

    Raises
    ------
    ValueError
        When R is outside :data:`FEATURE_SCALE_RANGE` or ``C n R~^2`` outside
        :data:`SCALE_RANGE`, with the largest C the data allow.
    """
    scale = feature_scale(X)
    _check_feature_scale(scale, method, "LIBLINEAR")
    n = X.shape[0]
    squared = scale**2 + extra_squared_norm + 1.0  # R~^2, with the constant bias feature
    product = math.log10(C) + math.log10(n) + math.log10(squared)
    largest_C = SCALE_RANGE[1] / (n * squared)
    _check_product(
        product, "C * n * max_i ||x~_i||^2 (x~_i the row with LIBLINEAR's bias feature)", C, n, method, "LIBLINEAR",
        f"Use C <= {largest_C:.3g} for these data, or rescale the features.",
    )  # fmt: skip


def _resolved_gamma(X, gamma) -> float:
    """scikit-learn's rule for SVC's ``gamma`` ("scale": ``1 / (d Var(X))``, 1 when Var(X) = 0; "auto": ``1 / d``)."""
    d = X.shape[1]
    if gamma == "auto":
        return 1.0 / d
    if gamma != "scale":
        return float(gamma)
    if sp.issparse(X):
        mean = float(X.mean())
        variance = float(X.multiply(X).mean()) - mean**2
    else:
        variance = float(np.var(X))
    # E[x^2] - E[x]^2 cancels to a tiny negative number on constant sparse data: that is zero variance.
    return 1.0 / (d * variance) if variance > 0.0 else 1.0


def _log10_kernel_bound(kernel: str, scale: float, gamma: float, degree: int, coef0: float) -> float:
    """log10 of ``kappa`` (module docstring); -inf when every kernel value is 0."""
    if kernel in ("rbf", "sigmoid"):
        return 0.0  # exp(-.) and tanh(.) are at most 1 in magnitude
    log_squared = 2.0 * math.log10(scale) if scale > 0.0 else -math.inf
    if kernel == "linear":
        return log_squared
    # polynomial: (gamma R^2 + |coef0|)^degree, added in log space so neither term overflows
    terms = [math.log10(gamma) + log_squared, math.log10(abs(coef0)) if coef0 else -math.inf]
    top = max(terms)
    if top == -math.inf:
        return -math.inf
    return degree * (top + math.log10(sum(10.0 ** (t - top) for t in terms)))


def check_libsvm_scale(X, C: float, method: str, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                       extra_squared_norm: float = 0.0) -> None:  # fmt: skip
    """Check the features' scale, the kernel bound kappa and ``C n kappa`` for LIBSVM (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
        The training rows.
    C : float
        The loss weight, already checked positive.
    method : str
        The method's name, used in the error message.
    kernel : {"rbf", "linear", "poly", "sigmoid"}, default "rbf"
        The LIBSVM kernel, by scikit-learn's name.
    gamma : float or {"scale", "auto"}, default "scale"
        The kernel width as scikit-learn's ``SVC`` takes it (resolved here only for the
        polynomial kernel, the only bound that depends on it).
    degree : int, default 3
        The polynomial kernel's degree.
    coef0 : float, default 0.0
        The polynomial kernel's constant term.
    extra_squared_norm : float, default 0.0
        What a chain link's appended label columns add to ``||x_i||^2``.

    Raises
    ------
    ValueError
        When R is outside :data:`FEATURE_SCALE_RANGE`, kappa above :data:`KERNEL_LIMIT`, or
        ``C n kappa`` outside :data:`SCALE_RANGE`.
    """
    scale = feature_scale(X)
    _check_feature_scale(scale, method, "LIBSVM")
    scale = math.sqrt(scale**2 + extra_squared_norm)
    n = X.shape[0]
    # Only the polynomial bound depends on gamma; resolving "scale" costs a pass over X.
    resolved = _resolved_gamma(X, gamma) if kernel == "poly" else 1.0
    log_kappa = _log10_kernel_bound(kernel, scale, resolved, int(degree), float(coef0))
    hint = "Use a smaller C, or rescale the features" + (
        ", a smaller gamma or coef0, or a lower degree." if kernel == "poly" else "."
    )
    if log_kappa > math.log10(KERNEL_LIMIT):
        raise ValueError(
            f"the largest {kernel} kernel value max |K(x_i, x_j)| = {_power_of_ten(log_kappa)} (from the features' "
            f"scale max_i ||x_i|| = {scale:.3g}) is above {KERNEL_LIMIT:g}: LIBSVM ({method}) caches kernel values in "
            f"single precision, whose largest is 3.4e38. Rescale the features (e.g. standardize them)"
            + (", or use a smaller gamma or coef0, or a lower degree" if kernel == "poly" else "")
        )
    product = math.log10(C) + math.log10(n) + log_kappa
    _check_product(product, f"C * n * max |K(x_i, x_j)| ({kernel} kernel)", C, n, method, "LIBSVM", hint)
