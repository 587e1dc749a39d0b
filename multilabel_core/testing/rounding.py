"""How far two evaluations of one model's scores may differ by floating-point rounding alone.

Two evaluations of the same scores from the same numbers (a model and its copy loaded
by :func:`~multilabel_core.load_model`, or one model on another machine) need not agree
bit for bit: BLAS libraries do not fix the order of the additions in a product, which
may change with the operands' memory addresses, with aliasing (numpy computes
``X @ X.T`` by a symmetric rank-k update, ``X @ Z.T`` by a general product), with the
thread count and with the CPU kernel chosen at run time.  What does not change is the
bound on each evaluation's error.  An inner product of N terms computed in any order is
within ``gamma_N * sum_k |x_k| |y_k|`` of the exact one, ``gamma_N = N u / (1 - N u)``
with ``u = eps / 2`` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
section 3.1, eq. 3.5), so two evaluations differ by at most twice that.

:func:`score_rounding_bound` applies this to the two score forms of the core estimators,
checking first that the estimator's scores are of that form:

- linear, ``f = X coef_ + intercept_``: ``2 gamma_{d+1} (|X| |coef_| + |intercept_|)``;
- kernel expansion, ``f = K(X, X_fit_) dual_coef_ + intercept_`` with a linear, RBF,
  polynomial or precomputed :attr:`kernel_`: the same with ``n_train + 1`` terms, plus
  ``|dK| |dual_coef_|`` for the kernel values' own rounding ``dK``
  (:func:`kernel_rounding_bound`).

The bounds are first order in u; :data:`SECOND_ORDER_SLACK` covers the O(u^2) terms.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..base import Kernel
from ..kernels import LinearKernel, PolynomialKernel, PrecomputedKernel, RBFKernel

__all__ = ["SECOND_ORDER_SLACK", "gamma", "kernel_rounding_bound", "score_rounding_bound"]

#: Unit roundoff of float64.
U = np.finfo(np.float64).eps / 2

#: Relative slack on the first-order bounds for the O(u^2) terms they drop (these are
#: below N u times the first-order term, N u < 1e-9 for any N this package handles).
SECOND_ORDER_SLACK = 1.0 + 1e-6

#: ulps of one elementwise exp or pow evaluation: numpy's vectorised exp and the C
#: library's pow are accurate to a few ulps, and two evaluations may take different code
#: paths (SIMD body or scalar tail, another instruction set on another machine).
_ELEMENTWISE_ULPS = 4


def gamma(n: int) -> float:
    """Compute ``gamma_n = n u / (1 - n u)``, the relative error bound of an n-term sum or inner product.

    Higham, *Accuracy and Stability of Numerical Algorithms*, section 3.1.

    Parameters
    ----------
    n : int
        The number of terms.

    Returns
    -------
    float
        gamma_n for the unit roundoff u of float64.
    """
    if n * U >= 1:
        raise ValueError(f"gamma_n is undefined for n u >= 1 (n = {n})")
    return n * U / (1 - n * U)


def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def kernel_rounding_bound(kernel: Kernel, X, Z) -> np.ndarray | None:
    """Bound ``|K - K'|`` entrywise for two evaluations of ``kernel(X, Z)``.

    linear, ``x.z``: ``2 gamma_d |x|.|z|``.  RBF, ``exp(-g D)`` with
    ``D = ||x||^2 + ||z||^2 - 2 x.z`` (clipped at 0, which cannot widen a difference):
    ``dD <= 2 gamma_{d+2} (||x||^2 + ||z||^2 + 2 |x|.|z|)``, the product with g rounds
    once more (``2 u g D``), and ``|d exp(a)| <= exp(a) |da|`` to first order.
    Polynomial, ``h^p`` with ``h = g x.z + c``: ``dh <= g 2 gamma_d |x|.|z| + 2 u (|g x.z| + |h|)``
    and ``|d h^p| <= p |h|^(p-1) dh``.  Precomputed: the values are the input, 0.
    exp and pow themselves add ``2 * _ELEMENTWISE_ULPS`` ulps.

    Parameters
    ----------
    kernel : Kernel
        The resolved kernel.
    X : ndarray or sparse matrix of shape (n, d)
        The first rows.
    Z : ndarray or sparse matrix of shape (m, d)
        The second rows.

    Returns
    -------
    ndarray of shape (n, m) or None
        The entrywise bound; None for a kernel this function does not know.
    """
    if isinstance(kernel, PrecomputedKernel):
        return np.zeros((np.shape(X)[0], np.shape(Z)[0]))
    if not isinstance(kernel, (LinearKernel, RBFKernel, PolynomialKernel)):
        return None
    X, Z = _dense(X), _dense(Z)
    d = X.shape[1]
    absolute = np.abs(X) @ np.abs(Z).T
    if isinstance(kernel, LinearKernel):
        return 2 * gamma(d) * absolute
    elementwise = 2 * _ELEMENTWISE_ULPS * 2 * U
    if isinstance(kernel, RBFKernel):
        g = kernel.effective_gamma
        if g is None:
            return None
        x_sq, z_sq = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Z, Z)
        distances = np.maximum(x_sq[:, None] + z_sq[None, :] - 2 * (X @ Z.T), 0.0)
        K = np.exp(-g * distances)
        d_distance = 2 * gamma(d + 2) * (x_sq[:, None] + z_sq[None, :] + 2 * absolute)
        return K * (g * d_distance + 2 * U * g * distances) + elementwise * K
    g = kernel._gamma(d)
    h = g * (X @ Z.T) + kernel.coef0
    dh = g * 2 * gamma(d) * absolute + 2 * U * (np.abs(h - kernel.coef0) + np.abs(h))
    p = kernel.degree
    return p * np.abs(h) ** (p - 1) * dh + elementwise * np.abs(h) ** p


def _linear_form(estimator, X):
    coef, intercept = getattr(estimator, "coef_", None), getattr(estimator, "intercept_", None)
    if not isinstance(coef, np.ndarray) or coef.ndim != 2 or coef.shape[0] != np.shape(X)[1]:
        return None
    intercept = np.zeros(coef.shape[1]) if intercept is None else np.asarray(intercept, dtype=np.float64)
    if intercept.shape != (coef.shape[1],):
        return None
    X = _dense(X)
    value = X @ coef + intercept
    bound = 2 * gamma(X.shape[1] + 1) * (np.abs(X) @ np.abs(coef) + np.abs(intercept))
    return value, bound


def _kernel_form(estimator, X):
    kernel, X_fit = getattr(estimator, "kernel_", None), getattr(estimator, "X_fit_", None)
    dual_coef, intercept = getattr(estimator, "dual_coef_", None), getattr(estimator, "intercept_", None)
    if not isinstance(kernel, Kernel) or X_fit is None or not isinstance(dual_coef, np.ndarray) or intercept is None:
        return None
    intercept = np.asarray(intercept, dtype=np.float64)
    if dual_coef.ndim != 2 or dual_coef.shape[0] != np.shape(X_fit)[0] or intercept.shape != (dual_coef.shape[1],):
        return None
    d_kernel = kernel_rounding_bound(kernel, X, X_fit)
    if d_kernel is None:
        return None
    K = kernel(X, X_fit)
    value = K @ dual_coef + intercept
    n_terms = dual_coef.shape[0] + 1
    bound = 2 * gamma(n_terms) * (np.abs(K) @ np.abs(dual_coef) + np.abs(intercept))
    # The product with the other evaluation's kernel values adds their difference, itself rounded.
    bound += (1 + gamma(n_terms)) * (d_kernel @ np.abs(dual_coef))
    return value, bound


def score_rounding_bound(estimator, X, scores=None) -> np.ndarray | None:
    """Bound ``|f - f'|`` entrywise for two evaluations of ``estimator.decision_function(X)``.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        A fitted estimator.
    X : array_like or sparse matrix of shape (n, d)
        The rows scored.
    scores : ndarray of shape (n, L) or None, default=None
        The scores to check the form against (None: ``decision_function(X)``).

    Returns
    -------
    ndarray of shape (n, L) or None
        The entrywise bound; None when the estimator's scores are not one of the forms this
        module knows (see the module docstring), or when ``scores`` is not within the form's
        own bound of the form's value: then the estimator computes its scores some other way,
        and no bound is claimed for it.
    """
    if scores is None:
        scores = estimator.decision_function(X)
    for form in (_linear_form, _kernel_form):
        found = form(estimator, X)
        if found is None:
            continue
        value, bound = found
        bound = SECOND_ORDER_SLACK * bound
        if value.shape == np.shape(scores) and np.all(np.abs(scores - value) <= bound):
            return bound
    return None
