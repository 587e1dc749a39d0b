"""Property tests of one loss, regulariser or kernel, by what it declares: :func:`check_component`.

A component is tested against the mathematics its interface promises
(:mod:`multilabel_core.base`), on data drawn by hypothesis from the kit's public strategies
(:mod:`multilabel_core.testing.strategies`):

- **convexity** (losses, regularisers): ``f`` lies below its chords at random points of a
  random segment (Jensen on every sub-segment);
- **gradient against finite differences** (losses, regularisers): the directional derivative
  ``<gradient, D>`` lies between the backward and forward differences of ``f`` along ``D``,
  which for a convex ``f`` bracket every directional derivative of every subgradient;
- **smoothness** (``smooth = True``): forward minus backward difference shrinks with the step
  (at a kink it stays at the jump of the derivative);
- **subgradient inequality** (losses, regularisers): ``f(b) >= f(a) + <gradient(a), b - a>``,
  both ways;
- **Fenchel-Young** (``conjugate`` declared): ``f(x) + f*(v) >= <v, x>``, with equality at
  ``v = gradient(x)``;
- **SVM dual form** (a loss with ``dual_box`` and ``dual_diagonal``, see
  :class:`~multilabel_core.base.Loss`): ``C f*(Y, -alpha Y / C) = sum(-alpha + D alpha^2 / 2)``
  on the box, +inf just outside it, and the dual variables ``-C y dl/dt`` of a gradient inside it;
- **prox optimality** (a regulariser with ``prox(W, step)``): ``P = prox(W, s)`` minimises
  ``1/2 ||Z - W||^2 + s f(Z)``, i.e. ``s f(Z) >= s f(P) + <W - P, Z - P>`` at test points Z,
  and Fenchel-Young holds with equality at ``(P, (W - P) / s)`` where a conjugate is declared;
- **kernel matrix** (kernels): ``k(X)`` symmetric, positive semi-definite, its rows equal to
  ``k(X[rows], X)``, and ``diagonal(X)`` equal to its diagonal where declared.

Tolerances are rounding bounds, never tuned constants.  An evaluation of ``f`` at ``x``
that adds ``m`` terms, each computed in at most :data:`ULPS` roundings, is within
``gamma_{m + ULPS}`` of the magnitude of what it adds (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., eq. 3.5); for a convex ``f`` that magnitude is bounded, to
first order, by ``|f(x)| + sum_k |g_k x_k| + sum_k |g_k|`` with ``g`` a subgradient at ``x``
(the value, its linear part, and unit margins such as the hinge's 1): :func:`evaluation_error`.
A difference quotient at step ``h`` inherits ``2 tau / h``; an eigenvalue of a kernel matrix
moves by at most the Frobenius norm of its entries' rounding (Weyl's inequality), which
:func:`~multilabel_core.testing.rounding.kernel_rounding_bound` gives for the stock kernels.
A failure raises AssertionError naming the component, the property, the quantity and the
tolerance, after hypothesis has shrunk the data to a small example.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, reject, settings as hypothesis_settings
from hypothesis import strategies as st

from ..base import Kernel, Loss, Regularizer
from .rounding import SECOND_ORDER_SLACK, U, gamma, kernel_rounding_bound
from .strategies import feature_matrices, psd_kernels, score_matrices, sign_labels

__all__ = ["ULPS", "check_component", "evaluation_error"]

#: Roundings allowed per entry of an evaluation: a few arithmetic operations and one
#: elementary function (exp, log1p, an SVD's rotations) accurate to a few ulps each.
ULPS = 16

#: Magnitude of the drawn scores and weights (entries in [-MAGNITUDE, MAGNITUDE]).
MAGNITUDE = 10.0

#: Points on a convexity segment, end points included.
_SEGMENT_POINTS = 9


def evaluation_error(value: float, point: np.ndarray, subgradient: np.ndarray) -> float:
    """Bound the rounding of one evaluation ``f(point) = value`` of a convex function, to first order.

    Parameters
    ----------
    value : float
        The computed ``f(x)``.
    point : ndarray
        The point x (m entries).
    subgradient : ndarray
        A subgradient g at x, of x's shape.

    Returns
    -------
    float
        ``gamma_{m + ULPS} (|f(x)| + sum |g * x| + sum |g|)`` (see the module docstring),
        times the slack of the first-order bounds for their O(u^2) terms.
    """
    point, subgradient = np.asarray(point, dtype=np.float64), np.asarray(subgradient, dtype=np.float64)
    magnitude = abs(value) + float(np.abs(subgradient * point).sum()) + float(np.abs(subgradient).sum())
    return SECOND_ORDER_SLACK * gamma(point.size + ULPS) * magnitude


class _Failure:
    """Builds the AssertionError of one property of one component."""

    def __init__(self, label: str):
        self.label = label

    def __call__(self, prop: str, quantity: str, value: float, tolerance: float, detail: str = "") -> AssertionError:
        tail = f" ({detail})" if detail else ""
        return AssertionError(
            f"{self.label}: {prop} fails: {quantity} = {value:.6g}, beyond the rounding tolerance "
            f"{tolerance:.3g}{tail}"
        )


class _Convex:
    """A convex function of a matrix: the value, a subgradient and, where declared, the conjugate."""

    def __init__(self, value, gradient, conjugate, fail: _Failure):
        self.value, self.gradient, self.conjugate, self.fail = value, gradient, conjugate, fail

    def evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray, float]:
        """``(f(x), g(x), tau(x))``, checking that both are finite and of the right shape."""
        value = float(self.value(x))
        g = np.asarray(self.gradient(x), dtype=np.float64)
        if not math.isfinite(value):
            raise AssertionError(f"{self.fail.label}: value is not finite ({value!r}) at a point of the test domain")
        if g.shape != x.shape or not np.all(np.isfinite(g)):
            raise AssertionError(
                f"{self.fail.label}: gradient has shape {g.shape} (expected {x.shape}) or non-finite entries"
            )
        return value, g, evaluation_error(value, x, g)


def _check_convexity(f: _Convex, a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> None:
    theta = np.unique(np.concatenate([[0.0, 1.0], rng.uniform(size=_SEGMENT_POINTS - 2)]))
    points = [(1.0 - t) * a + t * b for t in theta]
    evaluations = [f.evaluate(x) for x in points]
    values = np.array([e[0] for e in evaluations])
    # Each point is itself rounded (u per entry of (1 - t) a + t b), which moves f by at most sum |g| u (|a| + |b|).
    tau = np.array([e[2] + 2 * U * float(np.abs(e[1]).ravel() @ (np.abs(a) + np.abs(b)).ravel()) for e in evaluations])
    weight = (theta[1:-1] - theta[:-2]) / (theta[2:] - theta[:-2])
    chord = (1.0 - weight) * values[:-2] + weight * values[2:]
    excess = values[1:-1] - chord
    tolerance = tau[1:-1] + tau[:-2] + tau[2:]
    k = int(np.argmax(excess - tolerance)) if excess.size else 0
    if excess.size and excess[k] > tolerance[k]:
        raise f.fail(
            "convexity along a random segment",
            f"f(x_t) - chord at t = {theta[k + 1]:.3g} (between t = {theta[k]:.3g} and {theta[k + 2]:.3g})",
            excess[k], tolerance[k],
        )


def _difference_bracket(f: _Convex, x, direction, h, value, tau):
    """Backward and forward differences of f at x along direction, step h, and their rounding allowances."""
    plus, _, tau_plus = f.evaluate(x + h * direction)
    minus, _, tau_minus = f.evaluate(x - h * direction)
    return (value - minus) / h, (plus - value) / h, (tau + tau_minus) / h, (tau_plus + tau) / h


def _check_finite_differences(f: _Convex, x, direction, smooth: bool) -> None:
    value, g, tau = f.evaluate(x)
    # sqrt(u) balances the truncation (O(h)) and the rounding (O(u / h)) of a one-sided difference.
    h = math.sqrt(U) * (1.0 + float(np.abs(x).max())) / float(np.abs(direction).max())
    backward, forward, r_back, r_fwd = _difference_bracket(f, x, direction, h, value, tau)
    derivative = float(np.vdot(g, direction))
    r_dot = gamma(g.size) * float(np.abs(g * direction).sum())
    if derivative > forward + r_fwd + r_dot:
        raise f.fail(
            "gradient against finite differences",
            "<gradient, D> - forward difference (f(x + hD) - f(x)) / h",
            derivative - forward, r_fwd + r_dot, f"<gradient, D> = {derivative:.6g}, h = {h:.3g}",
        )
    if derivative < backward - r_back - r_dot:
        raise f.fail(
            "gradient against finite differences",
            "backward difference (f(x) - f(x - hD)) / h - <gradient, D>",
            backward - derivative, r_back + r_dot, f"<gradient, D> = {derivative:.6g}, h = {h:.3g}",
        )
    if not smooth:
        return
    # Differentiable: forward minus backward difference tends to 0 with h (by h times the curvature for a C^2
    # piece); at a kink it stays at the jump of the directional derivative.  Shrinking h 16-fold must halve it.
    small = h / 16.0
    backward_s, forward_s, r_back_s, r_fwd_s = _difference_bracket(f, x, direction, small, value, tau)
    width, width_small = forward - backward, forward_s - backward_s
    tolerance = 0.5 * (width + r_fwd + r_back) + r_fwd_s + r_back_s
    if width_small > tolerance:
        raise f.fail(
            "smoothness (declared smooth = True)",
            f"forward minus backward difference at step h / 16 = {small:.3g}",
            width_small, tolerance, f"it was {width:.6g} at step {h:.3g}: a kink, where no gradient exists",
        )


def _check_subgradient(f: _Convex, a, b) -> None:
    for x, y in ((a, b), (b, a)):
        fx, g, tau_x = f.evaluate(x)
        fy, _, tau_y = f.evaluate(y)
        step = y - x
        deficit = fx + float(np.vdot(g, step)) - fy
        tolerance = tau_x + tau_y + gamma(g.size) * float(np.abs(g * step).sum())
        if deficit > tolerance:
            raise f.fail("subgradient inequality", "f(x) + <gradient(x), y - x> - f(y)", deficit, tolerance)


def _conjugate_error(value: float, dual: np.ndarray, primal: np.ndarray) -> float:
    """Rounding of ``f*(v) = value``: :func:`evaluation_error` with the primal point as the conjugate's gradient."""
    return evaluation_error(value, dual, primal)


def _check_fenchel_young(f: _Convex, a, b, rng) -> None:
    fa, ga, tau_a = f.evaluate(a)
    fb, gb, tau_b = f.evaluate(b)
    conjugate_a = float(f.conjugate(ga))
    if not math.isfinite(conjugate_a):
        raise f.fail("Fenchel-Young equality at the gradient", "conjugate(gradient(x))", conjugate_a, 0.0,
                     "the conjugate is infinite at a gradient, which is in its domain")
    gap = fa + conjugate_a - float(np.vdot(ga, a))
    tolerance = tau_a + _conjugate_error(conjugate_a, ga, a) + gamma(a.size) * float(np.abs(ga * a).sum())
    if abs(gap) > tolerance:
        raise f.fail("Fenchel-Young equality at the gradient", "f(x) + f*(gradient(x)) - <gradient(x), x>",
                     gap, tolerance)
    # The inequality at other pairs: a gradient elsewhere and a convex combination of two (the domain is convex).
    t = float(rng.uniform())
    mixed = t * ga + (1.0 - t) * gb
    for v, x, fx, tau_x in ((ga, b, fb, tau_b), (mixed, a, fa, tau_a), (mixed, b, fb, tau_b)):
        conjugate = float(f.conjugate(v))
        if not math.isfinite(conjugate):
            # A conjugate's domain is convex and holds every gradient, so it holds their mixtures.
            raise f.fail("Fenchel-Young inequality", "conjugate at a gradient or a convex combination of two",
                         conjugate, 0.0, "not finite, yet a conjugate is finite on the convex hull of the gradients")
        gap = fx + conjugate - float(np.vdot(v, x))
        tolerance = tau_x + _conjugate_error(conjugate, v, x) + gamma(x.size) * float(np.abs(v * x).sum())
        if gap < -tolerance:
            raise f.fail("Fenchel-Young inequality", "f(x) + f*(v) - <v, x>", gap, tolerance,
                         "negative: the conjugate is below the supremum that defines it")


def _check_dual_form(loss: Loss, fail: _Failure, Y, T, C: float, rng) -> None:
    """The SVM-dual loss form of :class:`~multilabel_core.base.Loss` (``dual_box`` with ``dual_diagonal``)."""
    lower, upper = (float(v) for v in loss.dual_box(C))
    D = float(loss.dual_diagonal(C))
    if not (D >= 0.0 and lower <= upper):
        raise AssertionError(f"{fail.label}: dual_box({C!r}) = ({lower}, {upper}) or dual_diagonal = {D} is not a "
                             f"box with a diagonal D >= 0")
    top = upper if math.isfinite(upper) else lower + 10.0 * C + 10.0
    alpha = rng.uniform(lower, top, size=Y.shape)
    alpha.flat[: min(2, alpha.size)] = [lower, top][: min(2, alpha.size)]
    value = C * float(loss.conjugate(Y, -alpha * Y / C))
    if not math.isfinite(value):
        raise fail("SVM dual box", "C conjugate(Y, -alpha Y / C) at dual variables in the box", value, 0.0,
                   f"infinite, so the box ({lower:.3g}, {upper:.3g}) for C = {C:.3g} exceeds the conjugate's domain")
    expected = float(np.sum(-alpha + 0.5 * D * alpha**2))
    magnitude = abs(value) + float(np.abs(alpha).sum() + 0.5 * D * (alpha**2).sum())
    tolerance = 2 * SECOND_ORDER_SLACK * gamma(alpha.size + ULPS) * magnitude
    if not abs(value - expected) <= tolerance:
        raise fail("SVM dual form on the box", "C conjugate(Y, -alpha Y / C) - sum(-alpha + D alpha^2 / 2)",
                   value - expected, tolerance, f"C = {C:.3g}, box ({lower:.3g}, {upper:.3g}), D = {D:.3g}")
    # Just outside the box (beyond the conjugates' domain round-off) the conjugate is +inf.
    for outside, where in ((lower - 1e-6 * C, "below"), (upper + 1e-6 * C, "above")):
        if not math.isfinite(outside):
            continue
        beyond = alpha.copy()
        beyond.flat[0] = outside
        value = float(loss.conjugate(Y, -beyond * Y / C))
        if math.isfinite(value):
            raise fail("SVM dual box", f"C conjugate at a dual variable 1e-6 C {where} the box", C * value, 0.0,
                       f"finite, so the box ({lower:.3g}, {upper:.3g}) for C = {C:.3g} is not the conjugate's domain")
    # The dual variables of a gradient, alpha = -C y dl/dt, lie in the box.
    alpha = -C * Y * np.asarray(loss.gradient(Y, T))
    slack = 4 * U * (np.abs(alpha) + C)
    out = np.maximum(lower - slack - alpha, alpha - upper - slack)
    if out.size and float(out.max()) > 0.0:
        k = int(np.argmax(out))
        raise fail("SVM dual box", "distance outside the box of the gradient's dual variable -C y dl/dt",
                   float(out.flat[k] + slack.flat[k]), float(slack.flat[k]),
                   f"alpha = {alpha.flat[k]:.6g}, box ({lower:.3g}, {upper:.3g}), C = {C:.3g}")


def _check_prox(reg: Regularizer, f: _Convex, W, others, step: float) -> None:
    P = np.asarray(reg.prox(W, step), dtype=np.float64)
    if P.shape != W.shape or not np.all(np.isfinite(P)):
        raise AssertionError(f"{f.fail.label}: prox(W, {step!r}) has shape {P.shape} (expected {W.shape}) "
                             f"or non-finite entries")
    fP, gP, tau_P = f.evaluate(P)
    # The prox's own rounding (an SVD, a shrinkage) moves P by about gamma ||W||_F, which moves each quantity below
    # by that times its sensitivity to P.
    moved = SECOND_ORDER_SLACK * gamma(W.size + ULPS) * float(_norm(W))
    residual = W - P
    # P minimises 1/2 ||Z - W||^2 + step f(Z) iff (W - P) / step is a subgradient at P: the variational inequality.
    for Z in [np.zeros_like(W), W, *others]:
        fZ, _, tau_Z = f.evaluate(Z)
        deficit = step * fP + float(np.vdot(residual, Z - P)) - step * fZ
        tolerance = (step * (tau_P + tau_Z) + gamma(W.size) * float(np.abs(residual * (Z - P)).sum())
                     + moved * (step * float(_norm(gP)) + float(_norm(Z - P) + _norm(residual))))
        if deficit > tolerance:
            raise f.fail("prox optimality", "step f(P) + <W - P, Z - P> - step f(Z), P = prox(W, step)",
                         deficit, tolerance, f"step = {step:.3g}: (W - P) / step is not a subgradient at P")
    if f.conjugate is None:
        return
    V = residual / step
    conjugate = float(f.conjugate(V))
    gap = fP + conjugate - float(np.vdot(V, P))
    tolerance = (tau_P + (_conjugate_error(conjugate, V, P) if math.isfinite(conjugate) else 0.0)
                 + gamma(P.size) * float(np.abs(V * P).sum())
                 + moved * float(_norm(gP) + _norm(V) + _norm(P) / step))
    if not abs(gap) <= tolerance:
        raise f.fail("prox optimality (Fenchel-Young certificate)",
                     "f(P) + f*((W - P) / step) - <(W - P) / step, P>", gap, tolerance, f"step = {step:.3g}")


def _norm(A) -> float:
    """Frobenius norm, scaled first so that the squares of tiny entries do not underflow to 0."""
    A = np.asarray(A, dtype=np.float64)
    scale = float(np.abs(A).max()) if A.size else 0.0
    return 0.0 if scale == 0.0 else scale * float(np.linalg.norm(A / scale))


def _directions(rng, shape) -> np.ndarray:
    direction = rng.standard_normal(shape)
    return direction if np.any(direction) else np.ones(shape)


def _check_convex_function(f: _Convex, a, b, rng, smooth: bool) -> None:
    _check_convexity(f, a, b, rng)
    _check_finite_differences(f, a, _directions(rng, a.shape), smooth)
    _check_finite_differences(f, b, _directions(rng, b.shape), smooth)
    _check_subgradient(f, a, b)
    if f.conjugate is not None:
        _check_fenchel_young(f, a, b, rng)


def _sizes(data, rows: int):
    return data.draw(st.integers(1, rows), label="rows"), data.draw(st.integers(1, 5), label="labels")


def _loss_case(loss: Loss, fail: _Failure, data) -> None:
    n, L = _sizes(data, 8)
    if loss.target == "sign":
        Y = data.draw(sign_labels(n_samples=n, n_labels=L, both_signs=False), label="Y")
    else:
        Y = data.draw(score_matrices(n, L, magnitude=MAGNITUDE), label="Y")
    # The special points put every margin on a kink (T = Y: margins 1, residuals 0) or at the origin.
    start = data.draw(st.sampled_from(["random", "zero", "targets"]), label="first point")
    a = {"zero": np.zeros((n, L)), "targets": Y.copy()}.get(start)
    if a is None:
        a = data.draw(score_matrices(n, L, magnitude=MAGNITUDE), label="T1")
    b = data.draw(score_matrices(n, L, magnitude=MAGNITUDE), label="T2")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    conjugate = getattr(loss, "conjugate", None)
    f = _Convex(lambda T: loss.value(Y, T), lambda T: loss.gradient(Y, T),
                None if conjugate is None else (lambda A: conjugate(Y, A)), fail)
    _check_convex_function(f, a, b, rng, bool(loss.smooth))
    if conjugate is not None and hasattr(loss, "dual_box") and hasattr(loss, "dual_diagonal") and loss.target == "sign":
        C = 10.0 ** data.draw(st.floats(-3.0, 3.0), label="log10 C")
        _check_dual_form(loss, fail, Y, a, C, rng)


def _regularizer_case(reg: Regularizer, fail: _Failure, data) -> None:
    d, L = _sizes(data, 6)
    start = data.draw(st.sampled_from(["random", "zero", "rank one"]), label="first point")
    if start == "zero":
        a = np.zeros((d, L))
    elif start == "rank one":
        # A rank-deficient point: the kink of spectral penalties.
        left = data.draw(score_matrices(d, 1, magnitude=3.0), label="left factor")
        right = data.draw(score_matrices(1, L, magnitude=3.0), label="right factor")
        a = left @ right
    else:
        a = data.draw(score_matrices(d, L, magnitude=MAGNITUDE), label="W1")
    b = data.draw(score_matrices(d, L, magnitude=MAGNITUDE), label="W2")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    f = _Convex(reg.value, reg.gradient, getattr(reg, "conjugate", None), fail)
    _check_convex_function(f, a, b, rng, bool(reg.smooth))
    if hasattr(reg, "prox"):
        step = 10.0 ** data.draw(st.floats(-2.0, 1.0), label="log10 step")
        W = data.draw(st.sampled_from([a, b]), label="prox point")
        others = [b if W is a else a, W + 1e-3 * _directions(rng, W.shape)]
        _check_prox(reg, f, W, others, step)


def _kernel_case(kernel: Kernel, fail: _Failure, data, sparse_rows: bool) -> None:
    if kernel.precomputed:
        X = data.draw(psd_kernels(n=st.integers(1, 8)), label="K")
    else:
        sparse = None if sparse_rows else False
        X = data.draw(feature_matrices(st.integers(1, 8), st.integers(1, 6), sparse=sparse, magnitude=MAGNITUDE),
                      label="X")
    try:
        kernel = kernel.resolve(X)
    except ValueError:
        # Data the kernel refuses to fit its parameters on (e.g. the RBF width of coinciding rows): not a case.
        # A kernel that refuses every draw makes hypothesis fail the check as unsatisfiable.
        reject()
    n = X.shape[0]
    K = np.asarray(kernel(X), dtype=np.float64)
    if K.shape != (n, n) or not np.all(np.isfinite(K)):
        raise AssertionError(f"{fail.label}: k(X) has shape {K.shape} (expected {(n, n)}) or non-finite entries")
    bound = kernel_rounding_bound(kernel, X, X)
    if bound is None:
        # A kernel the rounding module does not know: its values are assumed computed from inner products of the
        # d features and a few elementwise functions, so within 2 gamma_{d + ULPS} of |X| |X|^T and of max |K|.
        dense = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
        bound = 2 * gamma(dense.shape[1] + ULPS) * (np.abs(dense) @ np.abs(dense).T + float(np.abs(K).max()))
    bound = SECOND_ORDER_SLACK * bound
    asymmetry = np.abs(K - K.T) - bound
    k = np.unravel_index(int(np.argmax(asymmetry)), K.shape)
    if asymmetry[k] > 0.0:
        raise fail("symmetry", f"|K_ij - K_ji| at (i, j) = {tuple(int(i) for i in k)}", float(abs(K - K.T)[k]),
                   float(bound[k]))
    rows = np.sort(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n), label="rows"))
    block = np.asarray(kernel(X[rows], X), dtype=np.float64)
    if block.shape != (len(rows), n):
        raise AssertionError(f"{fail.label}: k(X[rows], X) has shape {block.shape}, expected {(len(rows), n)}")
    excess = np.abs(block - K[rows]) - bound[rows]
    k = np.unravel_index(int(np.argmax(excess)), excess.shape)
    if excess[k] > 0.0:
        raise fail("consistency of k(Z, X) with k(X)", "|k(X[rows], X) - k(X)[rows]|",
                   float(abs(block - K[rows])[k]), float(bound[rows][k]))
    # Weyl: the rounding E of the entries moves every eigenvalue by at most ||E||_2 <= ||E||_F; the symmetric
    # eigensolver adds a backward error of order n u ||K||.
    smallest = float(np.linalg.eigvalsh((K + K.T) / 2.0)[0])
    tolerance = float(_norm(bound)) + gamma(ULPS * n) * float(_norm(K))
    if smallest < -tolerance:
        raise fail("positive semi-definiteness", "most negative eigenvalue of k(X)", smallest, tolerance,
                   f"n = {n}: a kernel matrix of points is PSD for every kernel")
    if hasattr(kernel, "diagonal"):
        diagonal = np.asarray(kernel.diagonal(X), dtype=np.float64)
        if diagonal.shape != (n,):
            raise AssertionError(f"{fail.label}: diagonal(X) has shape {diagonal.shape}, expected {(n,)}")
        allowance = np.diag(bound) + gamma(ULPS) * np.abs(diagonal)
        excess = np.abs(diagonal - np.diag(K)) - allowance
        i = int(np.argmax(excess))
        if excess[i] > 0.0:
            raise fail("diagonal", f"|diagonal(X)_i - k(X)_ii| at i = {i}", float(abs(diagonal - np.diag(K))[i]),
                       float(allowance[i]))


def check_component(
    component,
    *,
    name: str | None = None,
    max_examples: int | None = None,
    settings: hypothesis_settings | None = None,
    sparse_rows: bool = True,
) -> None:
    """Property-test one loss, regulariser or kernel by what it declares.

    Draws data with hypothesis (the active profile: ``dev`` or ``ci`` of the kit's pytest plugin,
    or the caller's settings) and checks the properties of the module's table: convexity along
    random segments, the gradient against finite differences (and that the differences close up
    where ``smooth``), the subgradient inequality, Fenchel-Young where ``conjugate`` is declared,
    the SVM dual form where ``dual_box`` and ``dual_diagonal`` are, the prox's optimality where
    ``prox`` is, and for kernels symmetry, positive semi-definiteness, ``k(Z, X)`` against
    ``k(X)`` and ``diagonal``.

    Parameters
    ----------
    component : Loss, Regularizer or Kernel
        The component, built with the parameters to test (``make_component(kind, name, ...)``
        for a registered one).
    name : str, optional
        How failures name it; by default its repr.
    max_examples : int, optional
        Hypothesis examples; by default the active profile's.
    settings : hypothesis.settings, optional
        Settings to run under instead of the active profile's (e.g. without the shrink phase,
        to only learn whether a property fails).
    sparse_rows : bool, default True
        Kernels: draw scipy.sparse rows as well as dense ones (the estimators pass sparse X
        through); False for a kernel documented to take dense rows only.

    Raises
    ------
    AssertionError
        A property fails: the message names the component, the property, the quantity and the
        rounding tolerance it exceeds, and hypothesis reports the (shrunk) data.
    TypeError
        ``component`` is none of the three kinds.

    Examples
    --------
    >>> from multilabel_core import Hinge
    >>> check_component(Hinge(), max_examples=5)
    """
    if isinstance(component, Loss):
        case = _loss_case
    elif isinstance(component, Regularizer):
        case = _regularizer_case
    elif isinstance(component, Kernel):
        def case(kernel, fail, data):
            _kernel_case(kernel, fail, data, sparse_rows)

    else:
        raise TypeError(
            f"check_component tests a multilabel_core.base Loss, Regularizer or Kernel, got {type(component).__name__}"
        )
    fail = _Failure(name if name is not None else repr(component))

    @given(data=st.data())
    def properties(data):
        case(component, fail, data)

    # One failure, the first property found broken on the shrunk data, raised as itself (not an
    # ExceptionGroup of every distinct failure hypothesis met on the way).
    # No deadline: the properties are mathematical, and a loaded machine must not fail them (outside pytest
    # the kit's profiles are not loaded, and hypothesis's default deadline is 200 ms per example).
    options = {"report_multiple_bugs": False, "deadline": None}
    if max_examples is not None:
        options["max_examples"] = max_examples
    hypothesis_settings(settings, **options)(properties)()
