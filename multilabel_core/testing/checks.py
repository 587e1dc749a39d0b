"""Checks for solvers and method plugins: optimality, certificates, convexity, conformance.

Plugin authors call them from their own tests::

    from multilabel_core.testing.checks import assert_kkt, check_method

    def test_my_method_conforms():
        check_method("my_method")

Every check returns None when it passes and raises AssertionError saying what failed;
a ValueError means the check itself was called wrongly (mismatched shapes, ...).

Notation of the dual checks (Zhang & Yeung, MLRL, Appendix A): ``alpha`` holds the dual
variables alpha_j^i in the (n, L) layout -- row j an example, column i a label --,
``gradient`` the gradient of the dual objective h(alpha) in the same layout, ``y`` the
signs y_j^i and ``C`` the upper bounds of the box 0 <= alpha_j^i <= C_j^i.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import tempfile
import warnings
from collections.abc import Callable

import attrs
import joblib
import numpy as np

from ..certificate import Certificate
from ..datasets import make_correlated_multilabel
from ..estimator import ConstantLabelWarning
from ..persistence import MODEL_SUFFIX, load_model, save_model
from ..plugins import get_method, list_components
from ..registry import COMPONENT_KINDS, OWN_SOLVER, MethodSpec
from ..thresholds import ZeroThreshold
from .rounding import U, gamma, score_rounding_bound

__all__ = [
    "CLAIM_KKT_RTOL",
    "CLAIM_RTOL",
    "PERSISTENCE_FALLBACK_RTOL",
    "assert_convex",
    "assert_convex_loss",
    "assert_convex_regularizer",
    "assert_dual_ascent",
    "assert_duality_gap",
    "assert_kkt",
    "assert_matches_reference",
    "check_certificate_claims",
    "check_convexity",
    "check_duality_gap",
    "check_kkt",
    "check_method",
    "check_solver",
]

#: Agreement required, relative to the largest |score|, between the scores of a model and
#: of its loaded copy when :func:`~multilabel_core.testing.rounding.score_rounding_bound`
#: cannot bound them: 2 gamma_N for N = 4500 terms of the scores' magnitude.
PERSISTENCE_FALLBACK_RTOL = 1e-12

#: Largest relative gap a ``converged=True`` certificate may carry when it declares no tolerance
#: of its own (``statistics["gap_rtol"]``): the project's stopping rules are KKT or relative-gap
#: rules whose defaults leave relative gaps below 1e-3 on the problems of :func:`check_method`
#: (measured: at most 6.1e-4, PrML), and a certificate 10 times beyond that certifies nothing.
#: It is :data:`multilabel_core.testing.fuzz.DEFAULT_GAP_RTOL`.
CLAIM_RTOL = 1e-2

#: Largest ``kkt_violation / max(1, |primal|)`` a ``converged=True`` certificate may carry when it
#: declares no KKT tolerance of its own (``statistics["kkt_tol"]``).  The kit does not know the
#: units of a solver's KKT measure (a gradient entry, a projected gradient, a complementarity),
#: so this bound is coarse on purpose: a violation as large as the objective itself contradicts
#: any claim of optimality (the registered methods stay below 0.1: LEML's D-step, 2.3 at a
#: primal of 24.7; a solver that lied about convergence claimed 61 at a relative gap of 28.2).  It depends
#: on the data's units: on features scaled by 1e8 an honest certificate exceeds it (PrBR: 1.4e7 at a
#: primal of 86.5, relative gap 2.3e-5), so the fuzz matrix does not apply it.
CLAIM_KKT_RTOL = 1.0


# -- certificates ---------------------------------------------------------------------


def _as_certificate(certificate) -> Certificate:
    if not isinstance(certificate, Certificate):
        raise AssertionError(f"expected a Certificate, got {type(certificate).__name__}")
    return certificate


def assert_duality_gap(certificate, *, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """Weak duality and optimality of a :class:`~multilabel_core.Certificate`.

    Parameters
    ----------
    certificate : Certificate
        What the solve returned.
    rtol : float
        Largest accepted relative gap ``gap / max(1, |primal|)`` (the certificate's
        ``relative_gap``): the solution is optimal to that precision.
    atol : float
        Largest accepted negative gap: ``gap >= -atol``.  By weak duality the primal
        objective is never below the dual one at a feasible dual point, so a clearly
        negative gap means that the dual point is infeasible or that one of the two
        objectives is computed wrongly.

    Examples
    --------
    >>> from multilabel_core import Certificate
    >>> c = Certificate.from_objectives(2.0, 2.0 - 1e-9, kkt_violation=0.0, n_iter=3,
    ...                                 time=0.0, converged=True, solver="demo")
    >>> assert_duality_gap(c, rtol=1e-6, atol=1e-12)
    """
    certificate = _as_certificate(certificate)
    gap, relative = certificate.gap, certificate.relative_gap
    if not (math.isfinite(gap) and math.isfinite(relative)):
        raise AssertionError(f"the duality gap is not finite (gap={gap!r}, primal={certificate.primal!r})")
    if gap < -atol:
        raise AssertionError(
            f"negative duality gap {gap:.3g} < -{atol:g} (relative {relative:.3g}): weak duality "
            "P >= D is violated, so the dual point is infeasible or the primal or the dual objective is computed wrongly"
        )
    if relative > rtol:
        raise AssertionError(f"relative duality gap {relative:.3g} > {rtol:g}: the solution is not optimal")


def assert_dual_ascent(certificate, *, rtol: float = 1e-12) -> None:
    """Assert that the dual objective recorded per epoch (``record_dual=True``) never decreases.

    For coordinate-descent solvers that maximise their dual: each epoch's value may fall
    below the previous one by at most ``rtol * max(1, |value|)`` (round-off), and the last
    recorded value is the certificate's dual.  A problem without variables records no epoch.

    Parameters
    ----------
    certificate : Certificate
        The certificate to check.
        It must carry ``statistics["dual_trace"]``, one value per epoch.
    rtol : float, default=1e-12
        The relative round-off a step may lose.

    Raises
    ------
    AssertionError
        If the trace's length is not ``n_iter``, the dual decreases, or the last value is not
        the certificate's dual.
    """
    certificate = _as_certificate(certificate)
    trace = np.asarray(certificate.statistics["dual_trace"], dtype=np.float64)
    if len(trace) != certificate.n_iter:
        raise AssertionError(f"the dual trace has {len(trace)} values for {certificate.n_iter} epochs")
    drops = np.diff(trace) + rtol * np.maximum(1.0, np.abs(trace[1:]))
    if np.any(drops < 0):
        epoch = int(np.argmin(drops)) + 1
        raise AssertionError(f"the dual objective decreased at epoch {epoch}: {trace[epoch - 1]!r} -> {trace[epoch]!r}")
    if trace.size and abs(trace[-1] - certificate.dual) > 1e-9 * max(1.0, abs(certificate.dual)):
        raise AssertionError(f"the last recorded dual {trace[-1]!r} is not the certificate's {certificate.dual!r}")


def check_duality_gap(certificate, tol: float = 1e-6) -> None:
    """Assert ``-tol <= gap / max(1, |primal|) <= tol``: :func:`assert_duality_gap` with one relative tolerance.

    Parameters
    ----------
    certificate : Certificate
        The certificate to check.
    tol : float, default=1e-6
        The relative tolerance.

    Raises
    ------
    AssertionError
        If the gap is outside the tolerance (or the primal is not finite).
    """
    certificate = _as_certificate(certificate)
    scale = max(1.0, abs(certificate.primal)) if math.isfinite(certificate.primal) else math.nan
    assert_duality_gap(certificate, rtol=tol, atol=tol * scale)


def check_kkt(certificate, tol: float) -> None:
    """Assert that the certificate's largest violation of the optimality conditions is at most ``tol``.

    Parameters
    ----------
    certificate : Certificate
        The certificate to check.
    tol : float
        The largest accepted ``kkt_violation`` (in the solver's own units).

    Raises
    ------
    AssertionError
        If ``kkt_violation`` is not finite or exceeds ``tol``.
    """
    violation = _as_certificate(certificate).kkt_violation
    if not math.isfinite(violation) or violation > tol:
        raise AssertionError(f"KKT violation {violation!r} exceeds {tol:g} (solver {certificate.solver})")


def _claims_failure(certificate: Certificate, *, gap_rtol: float | None, kkt_tol: float | None,
                    rounding_rtol: float) -> str | None:
    """What the certificate's own numbers refute, or None (see :func:`check_certificate_claims`)."""
    c = certificate
    primal, dual, gap = float(c.primal), float(c.dual), float(c.gap)
    scale = max(1.0, abs(primal))
    # gap is primal - dual rounded once: 8 u (|P| + |D|) covers that subtraction with a margin.
    consistency = 8 * U * (abs(primal) + abs(dual))
    if math.isfinite(primal) and math.isfinite(dual) and not abs(gap - (primal - dual)) <= consistency:
        return (f"gap = {gap!r} is not primal - dual = {primal!r} - {dual!r} = {primal - dual!r} "
                f"(tolerance {consistency:.3g}, the rounding of one subtraction)")
    if math.isfinite(primal) and math.isfinite(dual) and dual - primal > rounding_rtol * scale:
        return (f"dual {dual!r} > primal {primal!r} by {dual - primal:.3g} (relative {(dual - primal) / scale:.3g} > "
                f"tolerance {rounding_rtol:g}): weak duality is violated, so the dual point is infeasible or an "
                "objective is computed wrongly")
    if c.converged is not True:
        return None
    declared = c.statistics.get("gap_rtol") if isinstance(c.statistics, dict) else None
    # A converged claim is held to the solver's own declared tolerance even when the caller
    # allows more: meeting a rule it did not apply is not what the certificate says.
    if _is_real(declared) and (gap_rtol is None or float(declared) < gap_rtol):
        gap_rtol, source = float(declared), "the certificate's declared gap_rtol"
    elif gap_rtol is None:
        gap_rtol, source = CLAIM_RTOL, "CLAIM_RTOL"
    else:
        source = "gap_rtol"
    relative = c.relative_gap
    # A declared tolerance is met up to the rounding of the relative gap's own division.
    if not relative <= gap_rtol * (1 + 4 * U) + 4 * U:
        return (f"converged=True with relative gap {relative:.3g} > tolerance {gap_rtol:g} ({source}; "
                f"primal={primal!r}, dual={dual!r}, kkt_violation={c.kkt_violation!r})")
    declared_kkt = c.statistics.get("kkt_tol") if isinstance(c.statistics, dict) else None
    if kkt_tol is not None:
        limit, source = float(kkt_tol), "kkt_tol"
    elif _is_real(declared_kkt):
        limit, source = float(declared_kkt), "the certificate's declared kkt_tol"
    else:
        limit, source = CLAIM_KKT_RTOL * scale, f"CLAIM_KKT_RTOL * max(1, |primal|) = {CLAIM_KKT_RTOL:g} * {scale:.3g}"
    if not c.kkt_violation <= limit:
        return (f"converged=True with KKT violation {c.kkt_violation:.3g} > tolerance {limit:.3g} ({source}; "
                f"relative gap {relative:.3g})")
    return None


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool) and math.isfinite(value)


def check_certificate_claims(
    certificate, *, gap_rtol: float | None = None, kkt_tol: float | None = None, rounding_rtol: float = 1e-6,
    where: str = "the certificate",
) -> None:
    """Assert that a certificate's claims agree with its own numbers.

    Fails (AssertionError naming the check ``certificate claims``, the quantity and the
    tolerance) when

    * ``gap`` is not ``primal - dual`` up to the rounding of that subtraction;
    * the dual is above the primal by more than ``rounding_rtol * max(1, |primal|)``: weak
      duality makes ``dual <= primal`` at any feasible dual point, whatever ``converged`` says;
    * ``converged=True`` with a relative gap above the solver's declared tolerance
      (``statistics["gap_rtol"]``) or above ``gap_rtol``, whichever is smaller (a solver that
      declares its rule is held to it), else above :data:`CLAIM_RTOL`;
    * ``converged=True`` with a ``kkt_violation`` above ``kkt_tol``, else above the declared
      ``statistics["kkt_tol"]``, else above :data:`CLAIM_KKT_RTOL` ``* max(1, |primal|)`` (a
      coarse bound: the units of a solver's KKT measure are its own).

    A certificate with ``converged=False`` claims nothing but weak duality.

    Parameters
    ----------
    certificate : Certificate
        The certificate to check.
    gap_rtol : float or None, default=None
        The relative gap a converged claim is held to (the solver's declared one when smaller;
        None: the declared one, else :data:`CLAIM_RTOL`).
    kkt_tol : float or None, default=None
        The KKT violation a converged claim is held to (None: the declared one, else
        :data:`CLAIM_KKT_RTOL` ``* max(1, |primal|)``).
    rounding_rtol : float, default=1e-6
        How far, relative to ``max(1, |primal|)``, the dual may exceed the primal.
    where : str, default="the certificate"
        What the certificate is, for the message.

    Raises
    ------
    AssertionError
        Naming the refuted claim, the quantity and the tolerance.

    Examples
    --------
    >>> from multilabel_core import Certificate
    >>> lying = Certificate.from_objectives(30.0, 1.0, kkt_violation=61.0, n_iter=5, time=0.0,
    ...                                     converged=True, solver="demo")
    >>> try:
    ...     check_certificate_claims(lying)
    ... except AssertionError as error:
    ...     print(str(error)[:95])
    certificate claims: the certificate has converged=True with relative gap 0.967 > tolerance 0.01
    """
    certificate = _as_certificate(certificate)
    failure = _claims_failure(certificate, gap_rtol=gap_rtol, kkt_tol=kkt_tol, rounding_rtol=rounding_rtol)
    if failure is not None:
        raise AssertionError(f"certificate claims: {where} has {failure} ({_describe_certificate(certificate)})")


def _assert_sane_certificate(certificate, where: str, *, gap_tol: float, converged: bool) -> None:
    """Finite fields, a relative gap >= -gap_tol, counts that are counts; ``converged`` when asked."""
    if not isinstance(certificate, Certificate):
        raise AssertionError(f"certificates: {where} is a {type(certificate).__name__}, not a Certificate")
    fields = {"primal": certificate.primal, "gap": certificate.gap, "kkt_violation": certificate.kkt_violation,
              "time": certificate.time}
    for name, value in fields.items():
        if not math.isfinite(value):
            raise AssertionError(f"certificates: {where} has {name}={value!r}: it must be finite")
    if certificate.relative_gap < -gap_tol:
        raise AssertionError(f"certificates: {where} has gap {certificate.gap!r}: it must be >= -{gap_tol:g} (relative)")
    if certificate.kkt_violation < 0.0 or certificate.time < 0.0:
        raise AssertionError(f"certificates: {where} has a negative kkt_violation or time")
    if isinstance(certificate.n_iter, bool) or not isinstance(certificate.n_iter, (int, np.integer)) or certificate.n_iter < 0:
        raise AssertionError(f"certificates: {where} has n_iter={certificate.n_iter!r}: it must be a non-negative integer")
    if converged and certificate.converged is not True:
        raise AssertionError(
            f"certificates: {where} did not converge: relative gap {certificate.relative_gap:.3g}, kkt_violation "
            f"{certificate.kkt_violation:.3g} after n_iter={certificate.n_iter} ({_declared_tolerances(certificate)}; "
            f"solver {certificate.solver}; converged=True is required of the last certificate)"
        )


def _declared_tolerances(certificate: Certificate) -> str:
    """The tolerances a certificate declares in its statistics, for a message."""
    statistics = certificate.statistics if isinstance(certificate.statistics, dict) else {}
    declared = [f"{name}={statistics[name]:g}" for name in ("gap_rtol", "kkt_tol") if _is_real(statistics.get(name))]
    return "declared tolerance " + ", ".join(declared) if declared else "no tolerance declared"


# -- optimality of a dual solution (Appendix A) -----------------------------------------------


def _where(index: tuple) -> str:
    """Name of one variable: its label and example in the (n, L) layout, else its index."""
    index = tuple(int(i) for i in index)
    if len(index) == 2:
        return f"label {index[1]}, example {index[0]}"
    return f"variable {index[0] if len(index) == 1 else index}"


def _bound_tolerance(alpha: np.ndarray, C: np.ndarray, feasibility_tol: float) -> np.ndarray:
    """How close to a bound counts as on it: relative to each C, or to the largest |alpha| where C = inf."""
    unbounded_scale = float(np.max(np.abs(alpha), initial=0.0))
    return feasibility_tol * np.where(np.isfinite(C), C, unbounded_scale)


def _case(at_lower: bool, at_upper: bool) -> str:
    if at_lower:
        return "case 1 (alpha = 0)"
    if at_upper:
        return "case 3 (alpha = C)"
    return "case 2 (0 < alpha < C)"


def assert_kkt(
    alpha, gradient, y, C, *, bias=None, tol: float, equality: bool = True, feasibility_tol: float = 1e-9
) -> None:
    """The dual variables ``alpha`` satisfy the optimality (KKT) conditions within ``tol``.

    With ``equality=True`` (the SMO family: one equality constraint
    ``sum_j alpha_j^i y_j^i = 0`` per label i and the box ``0 <= alpha <= C``) it checks
    the three KKT cases of Appendix A per label.  With f_j^i = y_j^i grad_j^i and the
    multiplier gamma_i of the equality constraint:

    * case 1, alpha_j^i = 0: (f_j^i - gamma_i) y_j^i >= 0;
    * case 2, 0 < alpha_j^i < C: f_j^i = gamma_i;
    * case 3, alpha_j^i = C: (f_j^i - gamma_i) y_j^i <= 0.

    Without ``bias`` the unknown gamma_i is eliminated: with A_i the variables that may
    still increase y alpha and B_i those that may decrease it, ``F_up^i = min_{A_i} f``
    and ``F_low^i = max_{B_i} f``, the check is ``max_i F_low^i - F_up^i <= tol`` (the
    stopping rule of Appendix A).  With ``bias`` (b_i of the decision function
    ``w_i^T phi(x) + b_i``, so gamma_i = -b_i) every variable is checked against its
    own case.

    With ``equality=False`` (the CD family: box only, no equality constraint) it checks
    the projected gradient: grad where 0 < alpha < C, min(grad, 0) at alpha = 0 and
    max(grad, 0) at alpha = C, all within ``tol`` in absolute value.  ``y`` is not used
    then (pass None) and ``alpha`` may have any shape.

    Parameters
    ----------
    alpha, gradient : ndarray
        The dual solution and the gradient of the dual objective there, (n, L) for
        ``equality=True``.
    y : ndarray of {-1, +1} or None
        The signs y_j^i, (n, L); required when ``equality=True``.
    C : float or ndarray
        Upper bounds, broadcastable to ``alpha``; ``inf`` for an unbounded variable.
    bias : ndarray (L,), optional
        Per-label biases b_i the solver reports (``equality=True`` only).
    tol : float
        Accepted violation, in the units of the gradient (LIBSVM's eps).
    equality : bool, default True
        Whether the dual has the per-label equality constraint.
    feasibility_tol : float, default 1e-9
        Relative tolerance of the box and the equality constraints; a variable within
        ``feasibility_tol * C`` of a bound counts as on it.

    Raises
    ------
    AssertionError
        Naming the label and the worst variable (with its KKT case).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[1.0], [-1.0]])
    >>> alpha = np.array([[0.5], [0.5]])         # both free, sum_j alpha_j y_j = 0
    >>> gradient = y * np.array([[0.2], [0.2]])  # f = y * gradient = 0.2 for both
    >>> assert_kkt(alpha, gradient, y, 1.0, tol=1e-9)
    >>> assert_kkt(alpha, gradient, y, 1.0, bias=np.array([-0.2]), tol=1e-9)
    """
    gradient = np.asarray(gradient, dtype=np.float64)
    if gradient.shape != np.shape(alpha):
        raise ValueError(f"gradient has shape {gradient.shape}, alpha {np.shape(alpha)}: they must be equal")
    alpha, y, C, slack = _assert_feasible(alpha, y, C, equality=equality, feasibility_tol=feasibility_tol)
    if not np.all(np.isfinite(gradient)):
        raise AssertionError(f"gradient is not finite at {_where(tuple(np.argwhere(~np.isfinite(gradient))[0]))}")
    at_lower = alpha <= slack
    at_upper = alpha >= C - slack
    if equality:
        f = y * gradient
        # A: y alpha may still increase; B: it may still decrease (Appendix A, A_i and B_i).
        in_A = np.where(y > 0, ~at_upper, ~at_lower)
        in_B = np.where(y > 0, ~at_lower, ~at_upper)
        if bias is None:
            _assert_f_up_above_f_low(f, in_A, in_B, at_lower, at_upper, tol)
        else:
            _assert_cases_against_bias(f, in_A, in_B, at_lower, at_upper, y, bias, tol)
    else:
        _assert_projected_gradient(gradient, at_lower, at_upper, tol)


def _assert_feasible(alpha, y, C, *, equality: bool, feasibility_tol: float):
    """``alpha`` finite, in its box and (``equality``) on the equality constraints.

    Returns ``(alpha, y, C, slack)`` as float arrays (``y`` None without ``equality``),
    ``slack`` the distance within which a variable counts as on a bound.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), alpha.shape)
    if np.isnan(C).any() or (C < 0.0).any():
        raise ValueError("C must hold upper bounds >= 0 (inf for an unbounded variable)")
    if not np.all(np.isfinite(alpha)):
        raise AssertionError(f"alpha is not finite at {_where(tuple(np.argwhere(~np.isfinite(alpha))[0]))}")
    slack = _bound_tolerance(alpha, C, feasibility_tol)
    outside = np.maximum(-alpha - slack, alpha - C - slack)
    if (outside > 0.0).any():
        worst = np.unravel_index(np.argmax(outside), alpha.shape)
        raise AssertionError(
            f"infeasible: {_where(worst)} has alpha = {float(alpha[worst])!r} outside its box [0, {float(C[worst])!r}]"
        )
    if equality:
        y = _signs(y, alpha.shape)
        _assert_equality_constraints(alpha, y, C, feasibility_tol)
    return alpha, (y if equality else None), C, slack


def _signs(y, shape) -> np.ndarray:
    if y is None:
        raise ValueError("y (the signs) is required when equality=True")
    y = np.asarray(y, dtype=np.float64)
    if len(shape) != 2 or y.shape != shape:
        raise ValueError(f"with equality=True alpha and y must be (n, L) arrays of one shape, got {shape} and {y.shape}")
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("y must hold signs in {-1, +1}")
    return y


def _assert_equality_constraints(alpha, y, C, feasibility_tol) -> None:
    residual = np.abs((alpha * y).sum(axis=0))
    # The largest the sum could be: C for a bounded variable, |alpha| for an unbounded one.
    scale = np.where(np.isfinite(C), C, np.abs(alpha)).sum(axis=0)
    violated = residual > feasibility_tol * scale
    if violated.any():
        label = int(np.argmax(np.where(violated, residual / np.where(scale > 0, scale, 1.0), -np.inf)))
        raise AssertionError(
            f"infeasible: label {label} has sum_j alpha_j y_j = {(alpha * y).sum(axis=0)[label]:.6g}, not 0 "
            f"(relative to sum_j C_j = {scale[label]:.3g})"
        )


def _assert_f_up_above_f_low(f, in_A, in_B, at_lower, at_upper, tol) -> None:
    f_up = np.where(in_A, f, np.inf).min(axis=0)
    f_low = np.where(in_B, f, -np.inf).max(axis=0)
    violation = f_low - f_up  # -inf for a label whose variables cannot move: nothing to violate
    label = int(np.argmax(violation))
    if violation[label] > tol:
        j_low = int(np.argmax(np.where(in_B[:, label], f[:, label], -np.inf)))
        j_up = int(np.argmin(np.where(in_A[:, label], f[:, label], np.inf)))
        raise AssertionError(
            f"KKT violated at label {label}: F_low - F_up = {violation[label]:.3g} > tol={tol:g}; worst variable: "
            f"example {j_low} ({_case(at_lower[j_low, label], at_upper[j_low, label])}) has f = {f[j_low, label]:.6g} "
            f"above f = {f[j_up, label]:.6g} of example {j_up} "
            f"({_case(at_lower[j_up, label], at_upper[j_up, label])})"
        )


def _assert_cases_against_bias(f, in_A, in_B, at_lower, at_upper, y, bias, tol) -> None:
    bias = np.asarray(bias, dtype=np.float64)
    if bias.shape != (f.shape[1],):
        raise ValueError(f"bias must have shape ({f.shape[1]},), got {bias.shape}")
    gamma = -bias
    # Members of A need f >= gamma, members of B need f <= gamma: the three cases at once.
    violation = np.maximum(np.where(in_A, gamma - f, -np.inf), np.where(in_B, f - gamma, -np.inf))
    worst = np.unravel_index(np.argmax(violation), f.shape)
    if violation[worst] > tol:
        j, label = worst
        raise AssertionError(
            f"KKT violated at label {label}: example {j} ({_case(at_lower[worst], at_upper[worst])}, "
            f"y = {y[worst]:+.0f}) has f = {f[worst]:.6g} against gamma = -b = {gamma[label]:.6g}, "
            f"a violation of {violation[worst]:.3g} > tol={tol:g}"
        )


def _assert_projected_gradient(gradient, at_lower, at_upper, tol) -> None:
    projected = np.where(at_lower, np.minimum(gradient, 0.0), gradient)
    projected = np.where(at_upper, np.maximum(projected, 0.0), projected)
    projected = np.where(at_lower & at_upper, 0.0, projected)
    if projected.size == 0:
        return
    worst = np.unravel_index(np.argmax(np.abs(projected)), projected.shape)
    if abs(projected[worst]) > tol:
        raise AssertionError(
            f"KKT violated: {_where(worst)} ({_case(at_lower[worst], at_upper[worst])}) has projected gradient "
            f"{projected[worst]:.3g}, |.| > tol={tol:g}"
        )


# -- agreement with a reference solution -----------------------------------------------------


def assert_matches_reference(
    alpha, objective, reference_alpha, reference_objective, *, rtol_objective: float = 1e-6,
    atol_objective: float = 1e-12, atol_alpha: float | None,
) -> None:
    """A solution agrees with a reference one (e.g. from :mod:`multilabel_core.testing.reference`).

    Parameters
    ----------
    alpha, objective : ndarray, float
        The solution under test and its objective value.
    reference_alpha, reference_objective : ndarray, float
        The reference solution and objective.
    rtol_objective, atol_objective : float
        ``|objective - reference_objective| <= atol_objective + rtol_objective * |reference_objective|``.
    atol_alpha : float or None
        Largest accepted ``|alpha - reference_alpha|``.  None compares the objectives
        only: the minimiser is unique only when the objective is strictly convex on the
        feasible set, which a rank-deficient kernel or duplicate rows break.

    Examples
    --------
    >>> import numpy as np
    >>> assert_matches_reference(np.array([0.5, 0.25]), -0.75, np.array([0.5, 0.25 + 1e-9]),
    ...                          -0.75 - 1e-9, atol_alpha=1e-6)
    """
    objective, reference_objective = float(objective), float(reference_objective)
    if not math.isfinite(objective):
        raise AssertionError(f"the objective {objective!r} is not finite")
    difference = abs(objective - reference_objective)
    if difference > atol_objective + rtol_objective * abs(reference_objective):
        raise AssertionError(
            f"objective {objective!r} differs from the reference {reference_objective!r} by {difference:.3g} "
            f"(relative {difference / max(abs(reference_objective), 1e-300):.3g} > {rtol_objective:g})"
        )
    if atol_alpha is None:
        return
    alpha = np.asarray(alpha, dtype=np.float64)
    reference_alpha = np.asarray(reference_alpha, dtype=np.float64)
    if alpha.shape != reference_alpha.shape:
        raise ValueError(f"alpha has shape {alpha.shape}, the reference {reference_alpha.shape}")
    error = np.abs(alpha - reference_alpha)
    if error.size and not error.max() <= atol_alpha:  # NaN fails too
        worst = np.unravel_index(np.nanargmax(np.where(np.isnan(error), np.inf, error)), error.shape)
        raise AssertionError(
            f"alpha differs from the reference at {_where(worst)}: {alpha[worst]!r} against "
            f"{reference_alpha[worst]!r} (|difference| {error[worst]:.3g} > {atol_alpha:g})"
        )


# -- convexity --------------------------------------------------------------------------


def assert_convex(
    f: Callable, a, b, *, n_points: int = 11, rtol: float = 1e-9, atol: float = 1e-12, random_state=0
) -> None:
    """Assert Jensen's inequality for ``f`` on the segment [a, b], at random points of it.

    Draws ``n_points - 2`` points theta in (0, 1) (seeded by ``random_state``), adds the
    end points, and checks at every point that ``f`` lies below the chord between its
    two neighbours, up to ``atol + rtol * max |f|`` of round-off.  This is convexity of
    the sampled restriction of ``f`` to the segment, so every chord between two of the
    points lies above ``f`` (Jensen on all the sub-segments), not only the chord of [a, b].

    Parameters
    ----------
    f : callable
        Maps an array shaped like ``a`` to a float.
    a, b : array-like
        End points, of one shape.
    n_points : int, default 11
        Number of points on the segment, end points included (>= 3).
    rtol, atol : float
        Round-off allowance.
    random_state : int or None
        Seed of the interior points.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` differ in shape or ``n_points < 3``.
    AssertionError
        If ``f`` is not finite on the segment or lies above a chord.

    Examples
    --------
    >>> import numpy as np
    >>> assert_convex(lambda v: float(v @ v), np.array([-1.0, 2.0]), np.array([3.0, 0.0]))
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
    if n_points < 3:
        raise ValueError(f"n_points must be at least 3, got {n_points}")
    interior = np.random.default_rng(random_state).uniform(size=n_points - 2)
    theta = np.unique(np.concatenate([[0.0, 1.0], interior]))
    values = np.array([float(f((1.0 - t) * a + t * b)) for t in theta])
    if not np.all(np.isfinite(values)):
        raise AssertionError(f"f is not finite on the segment (at theta={theta[~np.isfinite(values)][0]:.3g})")
    slack = atol + rtol * float(np.abs(values).max())
    weight = (theta[1:-1] - theta[:-2]) / (theta[2:] - theta[:-2])
    chord = (1.0 - weight) * values[:-2] + weight * values[2:]
    excess = values[1:-1] - chord
    k = int(np.argmax(excess)) if excess.size else 0
    if excess.size and excess[k] > slack:
        raise AssertionError(
            f"not convex along the segment: at theta={theta[k + 1]:.3g}, f = {values[k + 1]!r} exceeds the chord "
            f"{chord[k]!r} between theta={theta[k]:.3g} and theta={theta[k + 2]:.3g}"
        )


#: The name the first version of the kit gave :func:`assert_convex`.
check_convexity = assert_convex


def assert_convex_loss(loss, Y, T1, T2, **options) -> None:
    """Assert that a :class:`~multilabel_core.base.Loss` is convex in its scores, targets ``Y`` fixed.

    Parameters
    ----------
    loss : Loss
        The loss.
    Y : ndarray of shape (n, L)
        The targets, held fixed.
    T1 : ndarray of shape (n, L)
        One end of the segment of scores.
    T2 : ndarray of shape (n, L)
        The other end.
    **options
        Passed to :func:`assert_convex` (``n_points``, ``rtol``, ``atol``, ``random_state``).

    Raises
    ------
    AssertionError
        If the loss lies above a chord on the segment.

    Examples
    --------
    >>> import numpy as np
    >>> from multilabel_core import Hinge
    >>> Y = np.array([[1.0, -1.0]])
    >>> assert_convex_loss(Hinge(), Y, np.array([[-2.0, 0.5]]), np.array([[3.0, -1.0]]))
    """
    assert_convex(functools.partial(loss.value, np.asarray(Y)), T1, T2, **options)


def assert_convex_regularizer(regularizer, W1, W2, **options) -> None:
    """Assert that a :class:`~multilabel_core.base.Regularizer` is convex in its weights.

    Parameters
    ----------
    regularizer : Regularizer
        The regulariser.
    W1 : ndarray of shape (d, L)
        One end of the segment of weights.
    W2 : ndarray of shape (d, L)
        The other end.
    **options
        Passed to :func:`assert_convex` (``n_points``, ``rtol``, ``atol``, ``random_state``).

    Raises
    ------
    AssertionError
        If the regulariser lies above a chord on the segment.

    Examples
    --------
    >>> import numpy as np
    >>> from multilabel_core import Frobenius
    >>> assert_convex_regularizer(Frobenius(), np.ones((3, 2)), -np.eye(3, 2))
    """
    assert_convex(regularizer.value, W1, W2, **options)


# -- solver conformance ----------------------------------------------------------------------


def check_solver(
    solve: Callable, problems, *, gradient: Callable, upper: Callable, signs: Callable | None = None,
    equality: bool = True, kkt_tol: float = 1e-6, gap_tol: float = 1e-6, random_state: int = 0,
    warm_start_passes: int = 1,
) -> None:
    """Check the conformance of a dual solver on many problems.

    For every problem: the certificate is ``converged``; the returned alpha is feasible
    (in its box and, with ``equality``, on the equality constraints); the certificate is
    sane (a :class:`~multilabel_core.Certificate` with finite fields and a relative gap
    in [-gap_tol, gap_tol]); alpha satisfies :func:`assert_kkt` within ``kkt_tol``; a second solve with
    the same ``random_state`` returns the same alpha and iteration count; a solve warm
    started from the returned alpha stops within ``warm_start_passes`` iterations
    (passes for CD, steps for SMO), converged, still satisfying the KKT conditions.

    Parameters
    ----------
    solve : callable
        ``solve(problem, *, random_state, warm_start=None) -> (alpha, certificate)``;
        ``warm_start`` is an alpha to start from.
    problems : hypothesis strategy or iterable
        The problems to solve: with a strategy the check runs under ``hypothesis.given``
        with the active settings profile (so do not call it from inside a ``@given``
        test), otherwise on each problem of the iterable.
    gradient : callable
        ``gradient(problem, alpha) -> ndarray``, the gradient of the dual objective.
    upper : callable
        ``upper(problem) -> C``, the upper bounds of the box.
    signs : callable, optional
        ``signs(problem) -> y``, required when ``equality=True``.
    equality, kkt_tol : bool, float
        Passed to :func:`assert_kkt` (as ``equality`` and ``tol``).
    gap_tol : float
        Relative duality-gap tolerance of :func:`check_duality_gap`.
    random_state : int
        Seed passed to every solve.
    warm_start_passes : int, default 1
        Most iterations a solve warm started at the optimum may take.

    Raises
    ------
    AssertionError
        Naming the first property a problem's solve breaks.

    Notes
    -----
    The first solve that returns ``converged=False`` ends the check at once, with its
    certificate and the problem's shapes in the message: under hypothesis, no further
    example is solved (shrinking one would rerun the solver to ``max_iter`` each time).

    Examples
    --------
    See docs/testing.md for a complete example with a dual coordinate-descent solver.
    """
    if equality and signs is None:
        raise ValueError("check_solver with equality=True needs signs(problem) -> y")
    settings = {"gradient": gradient, "upper": upper, "signs": signs, "equality": equality, "kkt_tol": kkt_tol,
                "gap_tol": gap_tol, "random_state": random_state, "warm_start_passes": warm_start_passes}
    # hypothesis is a test extra: the other checks work without it.
    from hypothesis import given
    from hypothesis.strategies import SearchStrategy

    if isinstance(problems, SearchStrategy):
        unconverged = None

        @given(problems)
        def check_drawn(problem):
            # After an unconverged solve every later example (hypothesis's shrinking replays
            # many) fails at once without solving: each solve would run to max_iter.
            nonlocal unconverged
            if unconverged is None:
                try:
                    _check_solver_on(solve, problem, **settings)
                except _NotConverged as error:
                    unconverged = str(error)
            if unconverged is not None:
                raise _NotConverged(unconverged)

        try:
            check_drawn()
        except _NotConverged:
            # hypothesis reports the shrunk example, which was never solved: report the one that was.
            raise AssertionError(unconverged) from None
    else:
        for problem in problems:
            _check_solver_on(solve, problem, **settings)


class _NotConverged(AssertionError):
    """A solve of :func:`check_solver` returned ``converged=False``."""


def _describe_certificate(certificate: Certificate) -> str:
    c = certificate
    return (
        f"solver {c.solver}: converged={c.converged}, n_iter={c.n_iter}, primal={c.primal!r}, dual={c.dual!r}, "
        f"gap={c.gap!r}, relative_gap={c.relative_gap!r}, kkt_violation={c.kkt_violation!r}, time={c.time:.3g}s"
    )


def _describe_problem(problem) -> str:
    parts = problem if isinstance(problem, (tuple, list)) else (problem,)
    return "(" + ", ".join(
        f"{type(part).__name__} {tuple(part.shape)}" if hasattr(part, "shape") else repr(part)[:40] for part in parts
    ) + ")"


def _check_solver_on(solve, problem, *, gradient, upper, signs, equality, kkt_tol, gap_tol, random_state,
                     warm_start_passes) -> None:
    def assert_optimal(alpha, certificate, what):
        certificate = _as_certificate(certificate)
        if certificate.converged is not True:
            raise _NotConverged(
                f"{what} did not converge: relative gap {certificate.relative_gap:.3g} (gap_tol={gap_tol:g}), "
                f"{_declared_tolerances(certificate)} ({_describe_certificate(certificate)}) on the problem "
                f"{_describe_problem(problem)}; check_solver stops at the first unconverged solve"
            )
        # Feasibility before the gap: weak duality holds only at a feasible dual point, so an
        # infeasible alpha would otherwise be reported as a wrongly computed objective.
        _assert_feasible(alpha, signs(problem) if equality else None, upper(problem), equality=equality,
                         feasibility_tol=1e-9)
        check_duality_gap(certificate, tol=gap_tol)
        _assert_sane_certificate(certificate, f"the certificate of {what}", gap_tol=gap_tol, converged=True)
        check_certificate_claims(certificate, gap_rtol=gap_tol, rounding_rtol=gap_tol, where=f"the certificate of {what}")
        assert_kkt(alpha, gradient(problem, alpha), signs(problem) if equality else None, upper(problem),
                   tol=kkt_tol, equality=equality)

    alpha, certificate = solve(problem, random_state=random_state)
    assert_optimal(alpha, certificate, "the solve")
    again, repeated = solve(problem, random_state=random_state)
    # Exact: the same code on identical inputs and seed in one process.
    if not np.array_equal(np.asarray(alpha), np.asarray(again)) or repeated.n_iter != certificate.n_iter:
        raise AssertionError(
            f"not deterministic: two solves with random_state={random_state} differ "
            f"(n_iter {certificate.n_iter} and {repeated.n_iter}, largest |alpha difference| "
            f"{float(np.max(np.abs(np.asarray(alpha) - np.asarray(again)), initial=0.0)):.3g})"
        )
    warm, warm_certificate = solve(problem, random_state=random_state, warm_start=np.array(alpha, copy=True))
    assert_optimal(warm, warm_certificate, "the solve warm started at the optimum")
    if warm_certificate.n_iter > warm_start_passes:
        raise AssertionError(
            f"a solve warm started at the optimum took {warm_certificate.n_iter} iterations, "
            f"more than {warm_start_passes}: the warm start is ignored or the stopping rule is not met at the optimum"
        )


# -- method conformance -------------------------------------------------------------------


def check_method(method, *, random_state: int = 0, gap_tol: float = 1e-6, warm_start_passes: int = 1) -> None:
    """Check the conformance of a registered method.

    Checks, in order: the registration fields; that the estimator is constructible with
    its defaults, stores its parameters unchanged and round-trips get_params/set_params;
    fitting a small problem from :func:`~multilabel_core.datasets.make_correlated_multilabel`
    (``fit`` returns self, ``n_features_in_`` and ``n_labels_`` set); ``predict`` (int
    {0, 1}, (n, L)) and ``decision_function`` (float64, (n, L)) and
    ``predict == [decision_function > 0]`` (or ``[decision_function > decision_threshold[:, None]]``
    for an estimator that predicts against a learned per-row threshold and says so by a
    ``decision_threshold(X)`` method, such as the label-ranking family); that a clone (scikit-learn's ``clone`` when
    installed) is unfitted and, fitted on the same data, predicts the same; determinism:
    refitting the same estimator (``random_state`` set when it has one) gives the same
    scores; a persistence round trip through :func:`~multilabel_core.save_model` and
    :func:`~multilabel_core.load_model` keeps the state bit for bit and the scores up to their
    rounding bound (:func:`~multilabel_core.testing.rounding.score_rounding_bound`); ``certificate_`` (one
    Certificate or a sequence of them, one per outer step), each with finite fields and
    a gap >= -gap_tol relative to the primal, the last one converged (unless the class
    sets ``certified = False``: a method that solves no optimisation problem, such as
    ML-kNN, has nothing to certify); ValueError for
    NaN or inf in X, non-binary Y, mismatched or 1-D shapes, an empty X and a wrong
    number of features at predict time; an error before ``fit``; a label constant on the
    training rows accepted (one all-0 and one all-1 column added: one ConstantLabelWarning naming
    both, ``constant_labels_``, predictions of their values, scores of their sign, and the other
    labels' scores those of the fit without them, exactly: the same computation).

    Parameters
    ----------
    method : str or MethodSpec
        The registered method's name or its :class:`MethodSpec`.
    random_state : int, default=0
        Seed of the data and of the estimator (when it has a ``random_state``).
    gap_tol : float, default=1e-6
        The relative duality-gap tolerance of the certificate checks: how far below zero a
        relative gap may fall, and how closely refits (permuted, warm-started) must agree.
    warm_start_passes : int, default=1
        Most iterations a warm-started refit may take (for a method with ``warm_start``).

    Raises
    ------
    ValueError
        If ``method`` is neither a registered name nor a MethodSpec.
    AssertionError
        Naming the first check the method fails.
    """
    spec = get_method(method) if isinstance(method, str) else method
    if not isinstance(spec, MethodSpec):
        raise ValueError(f"method must be a registered name or a MethodSpec, got {method!r}")
    _check_registration(spec)
    estimator = _check_construction(spec, random_state)
    data = make_correlated_multilabel(n_samples=60, n_features=5, n_labels=3, random_state=random_state)
    X, Y = data.X, data.Y
    _check_unfitted(estimator, X)
    fitted = _fit(estimator, X, Y)
    _check_outputs(fitted, X, Y)
    _check_clone(estimator, fitted, X, Y)
    _check_determinism(fitted, X, Y)
    _check_persistence(fitted, X)
    if getattr(type(fitted), "certified", True):
        _check_certificates(fitted, gap_tol)
        check_certified_model(fitted, X, Y)
        _check_permuted_refit(estimator, fitted, X, Y, gap_tol, random_state)
        _check_warm_start(estimator, X, Y, gap_tol, warm_start_passes)
    _check_input_validation(estimator, fitted, X, Y)
    _check_constant_labels(estimator, fitted, X, Y)


def _check_registration(spec: MethodSpec) -> None:
    where = f"method {spec.name!r}"
    if not spec.citation.strip():
        raise AssertionError(f"{where}: the citation is empty")
    for name in ("fit", "predict", "decision_function", "get_params", "set_params"):
        if not callable(getattr(spec.estimator, name, None)):
            raise AssertionError(f"{where}: estimator {spec.estimator.__name__} has no method {name}")
    for kind, name in spec.parts.items():
        if kind not in COMPONENT_KINDS:
            raise AssertionError(f"{where}: parts has role {kind!r}, not one of {COMPONENT_KINDS}")
        if kind == "solver" and name == OWN_SOLVER:
            continue
        known = {component.name for component in list_components(kind)}
        if name not in known:
            raise AssertionError(f"{where}: part {kind}={name!r} is not a registered {kind} ({sorted(known)})")
    valid = set(spec.estimator().get_params(deep=False))
    for name, values in spec.param_grid.items():
        if name not in valid:
            raise AssertionError(f"{where}: param_grid names {name!r}, which is not a parameter of the estimator")
        if isinstance(values, str) or not hasattr(values, "__len__") or len(values) == 0:
            raise AssertionError(f"{where}: param_grid[{name!r}] must be a non-empty list, got {values!r}")


def _check_construction(spec: MethodSpec, random_state: int):
    estimator = spec.estimator()
    params = estimator.get_params(deep=False)
    if "random_state" in params:
        estimator.set_params(random_state=random_state)
        params = estimator.get_params(deep=False)
    rebuilt = spec.estimator(**params)
    for name, value in params.items():
        if getattr(rebuilt, name) is not value:
            raise AssertionError(f"__init__ of {spec.estimator.__name__} does not store parameter {name!r} unchanged")
    if rebuilt.get_params(deep=False).keys() != params.keys():
        raise AssertionError(f"{spec.estimator.__name__}: get_params differs between two equal estimators")
    if rebuilt.set_params(**params) is not rebuilt:
        raise AssertionError(f"{spec.estimator.__name__}.set_params does not return self")
    return estimator


def _clone(estimator):
    """scikit-learn's ``clone`` when installed (it also checks that ``__init__`` stores its arguments)."""
    try:
        from sklearn.base import clone
    except ImportError:
        return type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))
    try:
        return clone(estimator)
    except Exception as exc:
        raise AssertionError(f"sklearn.base.clone fails on {type(estimator).__name__}: {exc}") from exc


def _fit(estimator, X, Y):
    fitted = _clone(estimator)
    if fitted.fit(X, Y) is not fitted:
        raise AssertionError(f"{type(fitted).__name__}.fit does not return self")
    if getattr(fitted, "n_features_in_", None) != X.shape[1] or getattr(fitted, "n_labels_", None) != Y.shape[1]:
        raise AssertionError(f"{type(fitted).__name__}.fit does not set n_features_in_ and n_labels_")
    return fitted


def _check_unfitted(estimator, X) -> None:
    for method in ("predict", "decision_function"):
        try:
            getattr(_clone(estimator), method)(X)
        except (ValueError, AttributeError):
            continue
        raise AssertionError(f"{type(estimator).__name__}.{method} before fit does not raise NotFittedError")


def _check_outputs(fitted, X, Y) -> None:
    name = type(fitted).__name__
    scores = fitted.decision_function(X)
    predictions = fitted.predict(X)
    for what, value in (("decision_function", scores), ("predict", predictions)):
        shape = getattr(value, "shape", None)
        if not isinstance(value, np.ndarray) or shape != Y.shape:
            raise AssertionError(f"{name}.{what} must return an ndarray of shape {Y.shape}, got {type(value).__name__} {shape}")
    if scores.dtype != np.float64:
        raise AssertionError(f"{name}.decision_function must return float64, got {scores.dtype}")
    if predictions.dtype.kind != "i" or not np.isin(predictions, (0, 1)).all():
        raise AssertionError(f"{name}.predict must return integers in {{0, 1}}, got dtype {predictions.dtype}")
    threshold = getattr(fitted, "decision_threshold", None)
    part = getattr(fitted, "threshold_", None)
    if threshold is not None:
        expected, rule = scores > np.asarray(threshold(X))[:, None], "[decision_function > decision_threshold[:, None]]"
    elif part is not None and not isinstance(part, ZeroThreshold) and callable(getattr(part, "predict", None)):
        # The fitted threshold part (docs/components.md): predict is its rule on the scores.
        expected, rule = np.asarray(part.predict(scores)) > 0, f"threshold_.predict(decision_function) ({type(part).__name__})"
    else:
        expected, rule = scores > 0, "[decision_function > 0]"
    # Exact: predict is this rule on decision_function(X), the same computation on the same X.
    if not np.array_equal(predictions, expected.astype(predictions.dtype)):
        raise AssertionError(
            f"predictions: {name}.predict is not {rule} at {int((predictions != expected).sum())} of "
            f"{predictions.size} entries (tolerance 0: the same computation on the same X)"
        )


def _check_clone(estimator, fitted, X, Y) -> None:
    name = type(estimator).__name__
    unfitted = _clone(fitted)
    if hasattr(unfitted, "n_labels_") or hasattr(unfitted, "certificate_"):
        raise AssertionError(f"{name}: a clone of a fitted estimator carries fitted attributes")
    again = _fit(estimator, X, Y)
    first, second = fitted.decision_function(X), again.decision_function(X)
    if not np.allclose(second, first, rtol=1e-7, atol=1e-9):
        worst = float(np.max(np.abs(second - first) - 1e-7 * np.abs(first)))
        raise AssertionError(
            f"clone: {name}: a clone fitted on the same data gives other scores: largest |difference| beyond "
            f"rtol=1e-7 is {worst:.3g} > atol=1e-9"
        )


def _check_determinism(fitted, X, Y) -> None:
    """Refitting the very same estimator reproduces its scores: no state leaks from one fit to the next.

    Twice: a copy of the fitted estimator refitted on (X, Y), and (unless ``warm_start=True``,
    which promises to carry the previous solution over) a copy first fitted on other data of the
    same shape -- the rows reversed, the labels cyclically permuted -- and then on (X, Y).
    scikit-learn's contract: ``fit`` forgets what earlier fits learned.  A refit from the
    previous optimum lands within the certificate's bound, so only bitwise equality exposes it.
    """
    name = type(fitted).__name__
    scores = fitted.decision_function(X)
    refitted = copy.deepcopy(fitted).fit(X, Y)
    # Exact: the same fit on the same arrays in one process (a copy, not a clone: any state the fit
    # reads is the same too).
    if not np.array_equal(refitted.decision_function(X), scores):
        raise AssertionError(
            f"determinism: {name} is not deterministic: refitting it on the same data with the same random_state "
            "gives other scores (tolerance 0: the same computation on the same arrays)"
        )
    params = fitted.get_params(deep=False)
    if params.get("warm_start", False) is True:
        return
    other = copy.deepcopy(fitted)
    other.fit(np.ascontiguousarray(X[::-1]), np.ascontiguousarray(Y[::-1][:, np.roll(np.arange(Y.shape[1]), 1)]))
    difference = np.abs(other.fit(X, Y).decision_function(X) - scores)
    if difference.max() > 0:
        raise AssertionError(
            f"determinism: {name} refitted on (X, Y) after a fit on other data (rows reversed, labels permuted) "
            f"gives other scores than its first fit on (X, Y): largest |difference| {difference.max():.3g} > tolerance "
            "0 (warm_start is not set, so nothing may carry from one fit into the next)"
        )


def _check_persistence(fitted, X) -> None:
    """load_model's promise (docs/estimators.md, Saving models): the same state, bit for bit,
    and scores equal up to the rounding of their floating-point sums.

    The round trip is in the default format, which rebuilds only trusted classes.  The
    estimator's own class is trusted here, so that a MethodSpec can be checked before it is
    registered; every other class it holds must be on the list (a registered method or
    component, or declared through the ``register_trusted_types`` hook), as it must be for
    users to load it."""
    name = type(fitted).__name__
    with tempfile.TemporaryDirectory() as directory:
        try:
            path = save_model(fitted, os.path.join(directory, "model" + MODEL_SUFFIX), trusted_types=[type(fitted)])
            loaded = load_model(path, trusted_types=[type(fitted)])
        except ValueError as exc:
            raise AssertionError(f"{name} does not survive save_model/load_model: {exc}") from exc
    if type(loaded) is not type(fitted):
        raise AssertionError(f"load_model returned a {type(loaded).__name__}, {name} was saved")
    # Exact: loading copies bytes, no arithmetic is involved.
    difference = _state_difference(fitted, loaded, name)
    if difference is not None:
        raise AssertionError(f"a save_model/load_model round trip changes {difference}")
    outputs = {}
    for which, model in (("fitted", fitted), ("loaded", loaded)):
        try:
            scores = model.decision_function(X)
            threshold = getattr(model, "decision_threshold", None)
            outputs[which] = (scores, model.predict(X), 0.0 if threshold is None else np.asarray(threshold(X))[:, None])
        except Exception as exc:
            raise AssertionError(f"{name} fails after a save_model/load_model round trip: {exc!r}") from exc
    (before, labels_before, threshold_before), (after, labels_after, threshold_after) = outputs["fitted"], outputs["loaded"]
    bound = score_rounding_bound(fitted, X, before)
    if bound is None:
        # Scores this kit cannot bound (other libraries' models, neighbour counts): sums of
        # up to a few thousand terms of the scores' magnitude round below this.
        bound = np.full(before.shape, PERSISTENCE_FALLBACK_RTOL * np.abs(before).max())
    excess = np.abs(after - before) - bound
    if excess.max() > 0:
        i, j = np.unravel_index(np.argmax(excess), excess.shape)
        raise AssertionError(
            f"{name}.decision_function differs after a save_model/load_model round trip by more than rounding: "
            f"score [{i}, {j}] {before[i, j]!r} became {after[i, j]!r} (rounding bound {bound[i, j]:.3g})"
        )
    # A label may flip only where its score is within rounding of the threshold.
    margin = np.abs(before - threshold_before)
    allowed = margin <= bound + np.abs(np.asarray(threshold_after) - threshold_before)
    flipped = (labels_after != labels_before) & ~allowed
    if flipped.any():
        raise AssertionError(
            f"{name}.predict differs after a save_model/load_model round trip at {int(flipped.sum())} "
            f"entries whose scores are farther than rounding from the threshold"
        )


def _state_difference(fitted, loaded, where: str, seen: set | None = None) -> str | None:
    """The first attribute whose value differs between two estimators (arrays: dtype, shape,
    memory order when contiguous, bytes), or None when they hold the same state."""
    seen = set() if seen is None else seen
    if isinstance(fitted, np.ndarray) or isinstance(loaded, np.ndarray):
        if not (isinstance(fitted, np.ndarray) and isinstance(loaded, np.ndarray)):
            return f"{where} (an array on one side only)"
        if fitted.dtype != loaded.dtype or fitted.shape != loaded.shape:
            return f"{where} ({fitted.dtype} {fitted.shape} became {loaded.dtype} {loaded.shape})"
        # A non-contiguous view is pickled as a contiguous copy; a contiguous array keeps its order.
        for order in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
            if (fitted.flags.c_contiguous or fitted.flags.f_contiguous) and fitted.flags[order] != loaded.flags[order]:
                return f"{where} (memory order: {order} {fitted.flags[order]} became {loaded.flags[order]})"
        if fitted.dtype.hasobject:
            return next(
                (d for a, b, k in zip(fitted.flat, loaded.flat, range(fitted.size))
                 if (d := _state_difference(a, b, f"{where}.flat[{k}]", seen)) is not None),
                None,
            )  # fmt: skip
        return None if fitted.tobytes() == loaded.tobytes() else f"{where} (its values)"
    if type(fitted) is not type(loaded):
        return f"{where} ({type(fitted).__name__} became {type(loaded).__name__})"
    if id(fitted) in seen:
        return None
    if isinstance(fitted, (list, tuple)):
        if len(fitted) != len(loaded):
            return f"{where} (length {len(fitted)} became {len(loaded)})"
        pairs = [(f"{where}[{k}]", a, b) for k, (a, b) in enumerate(zip(fitted, loaded))]
    elif isinstance(fitted, dict):
        if list(fitted) != list(loaded):
            return f"{where} (keys {list(fitted)} became {list(loaded)})"
        pairs = [(f"{where}[{k!r}]", fitted[k], loaded[k]) for k in fitted]
    elif attrs.has(type(fitted)):
        pairs = [(f"{where}.{f.name}", getattr(fitted, f.name), getattr(loaded, f.name)) for f in attrs.fields(type(fitted))]
    elif hasattr(fitted, "__dict__") and not isinstance(fitted, type):
        if list(vars(fitted)) != list(vars(loaded)):
            return f"{where} (attributes {sorted(vars(fitted))} became {sorted(vars(loaded))})"
        pairs = [(f"{where}.{k}", v, getattr(loaded, k)) for k, v in vars(fitted).items()]
    else:
        # A leaf (number, string, function, ...): pickled bytes are equal for equal values,
        # and floats compare by bits (so a NaN equals itself and -0.0 differs from 0.0).
        return None if joblib.hash(fitted) == joblib.hash(loaded) else f"{where} ({fitted!r} became {loaded!r})"
    seen.add(id(fitted))
    return next((d for path, a, b in pairs if (d := _state_difference(a, b, path, seen)) is not None), None)


def _check_certificates(fitted, gap_tol: float) -> None:
    name = type(fitted).__name__
    certificates = getattr(fitted, "certificate_", None)
    if certificates is None:
        raise AssertionError(f"{name} has no certificate_ after fit")
    if isinstance(certificates, Certificate):
        certificates = [certificates]
    if len(certificates) == 0:
        raise AssertionError(f"{name}.certificate_ is an empty sequence")
    for step, certificate in enumerate(certificates):
        last = step == len(certificates) - 1
        where = f"{name}.certificate_" if len(certificates) == 1 else f"{name}.certificate_[{step}]"
        _assert_sane_certificate(certificate, where, gap_tol=gap_tol, converged=last)
        check_certificate_claims(certificate, rounding_rtol=gap_tol, where=where)
    for step, certificate in enumerate(getattr(fitted, "step_certificates_", None) or ()):
        check_certificate_claims(certificate, rounding_rtol=gap_tol, where=f"{name}.step_certificates_[{step}]")


# -- the exposed model is the certified one ------------------------------------------------


def _primal_from_parts(fitted, X, Y):
    """The Problem's primal recomputed from the fitted attributes, with its rounding bound, or None.

    Applies where the objective is known from the parts: a fit with ``parts_`` holding a loss
    and a regulariser, primal weights ``coef_`` (d, L) and ``intercept_`` (L,), one
    :class:`~multilabel_core.Certificate` in ``certificate_`` (an alternating method certifies
    each step's subproblem, not this objective), a relation that is not learned and a problem
    that was not fed through the relation (``fed_``).  Returns ``(values, bound, C)``: the
    primal ``regularizer(W) + C loss(Y, X W + 1 b^T)`` under the two intercept conventions of
    the core's solvers, ``{"free": b not penalised, "penalised": b a weight of an appended
    constant feature}`` (LIBLINEAR's, the CD and L-BFGS solvers'), and one bound on the rounding
    of either.
    """
    parts = getattr(fitted, "parts_", None)
    certificate = getattr(fitted, "certificate_", None)
    coef, intercept = getattr(fitted, "coef_", None), getattr(fitted, "intercept_", None)
    C = getattr(fitted, "_problem_C_", None)
    if not isinstance(parts, dict) or not isinstance(certificate, Certificate) or not _is_real(C):
        return None
    loss, regularizer, relation = parts.get("loss"), parts.get("regularizer"), parts.get("relation")
    if not (callable(getattr(loss, "value", None)) and callable(getattr(regularizer, "value", None))):
        return None
    if getattr(relation, "learned", False) or getattr(fitted, "fed_", False):
        return None
    if not isinstance(coef, np.ndarray) or coef.ndim != 2 or intercept is None:
        return None
    intercept = np.asarray(intercept, dtype=np.float64)
    if coef.shape != (X.shape[1], Y.shape[1]) or intercept.shape != (Y.shape[1],):
        return None
    # The certificate is about the labels the method learned (a label constant on the training rows is not).
    scores = fitted.decision_function(X)
    if hasattr(fitted, "_fitted_columns"):
        scores = fitted._fitted_columns(scores)
    targets = np.where(Y > 0, 1.0, -1.0) if getattr(loss, "target", "sign") == "sign" else Y.astype(np.float64)
    data_term = float(C) * float(loss.value(targets, scores))
    values = {"free": float(regularizer.value(coef)) + data_term,
              "penalised": float(regularizer.value(np.vstack([coef, intercept[None, :]]))) + data_term}
    # Rounding: the scores of the certificate's evaluation and of this one differ by at most
    # score_rounding_bound (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5); the
    # loss moves by at most its largest |slope| over that interval times the difference (convex:
    # the slope is largest at an end); each sum of m terms rounds within gamma_m of the sum of
    # their magnitudes, twice over (this evaluation and the solver's).
    d_scores = score_rounding_bound(fitted, X, scores)
    if d_scores is None:
        d_scores = np.full(scores.shape, PERSISTENCE_FALLBACK_RTOL * max(1.0, float(np.abs(scores).max())))
    slopes = np.maximum.reduce([np.abs(loss.gradient(targets, scores + sign * d_scores)) for sign in (-1.0, 0.0, 1.0)])
    terms = targets.size + coef.size + intercept.size + 2
    magnitude = max(abs(v) for v in values.values()) + abs(data_term)
    bound = float(C) * float(np.sum(slopes * d_scores)) + 2 * gamma(terms) * magnitude
    return values, (1 + 1e-6) * bound + 8 * U * abs(float(certificate.primal)), float(C)


def check_certified_model(fitted, X, Y) -> None:
    """Assert that the exposed model is the one the certificate certifies (see docs/testing.md).

    The primal objective recomputed from the fitted ``coef_``/``intercept_`` and the method's
    parts must equal ``certificate_.primal`` within a rounding bound, under a free or a
    penalised intercept; a method whose objective the parts do not give is left to the
    prediction checks.  :func:`check_method` runs it, and the fuzz matrix
    (:mod:`multilabel_core.testing.fuzz`) on every fitted case.

    Parameters
    ----------
    fitted : MultiLabelEstimator
        A fitted estimator with a ``certificate_``.
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training rows it was fitted on.
    Y : ndarray of shape (n_samples, n_labels)
        The training labels (0/1).

    Raises
    ------
    AssertionError
        When the recomputed primal differs from the certificate's by more than the bound.
    """
    name = type(fitted).__name__
    learned = getattr(fitted, "fitted_labels_", None)
    if learned is not None and learned.size < Y.shape[1]:
        if learned.size == 0:
            return  # every label constant: nothing was fitted, no certificate
        Y = Y[:, learned]
    found = _primal_from_parts(fitted, X, Y)
    if found is None:
        # The objective is not known from the parts: predict against decision_function was
        # checked in _check_outputs, which is all the kit can hold such a method to.
        return
    values, bound, C = found
    primal = float(fitted.certificate_.primal)
    differences = {convention: abs(value - primal) for convention, value in values.items()}
    if min(differences.values()) > bound:
        raise AssertionError(
            f"certified model: {name}.certificate_.primal = {primal!r}, but the primal recomputed from the fitted "
            f"coef_ and intercept_ (regularizer(W) + C loss(Y, decision_function(X_train)), C = {C:g}) is "
            f"{values['free']!r} with a free intercept and {values['penalised']!r} with a penalised one: "
            f"|difference| {min(differences.values()):.3g} > rounding bound {bound:.3g}; the model predict uses "
            "is not the model the certificate certifies"
        )


# -- refits: permuted data, warm start from the optimum ---------------------------------------


def _interval_overlap(first: Certificate, second: Certificate, rtol: float) -> float:
    """How far apart the certified intervals [dual, primal] of two solves of one problem are (<= 0: they meet)."""
    scale = max(1.0, abs(first.primal), abs(second.primal))
    return (max(first.dual, second.dual) - min(first.primal, second.primal)) / scale - rtol


def _check_permuted_refit(estimator, fitted, X, Y, gap_tol: float, random_state: int) -> None:
    """A refit on permuted rows and permuted labels is certified for the same optimal value.

    Both certificates bracket the optimum, ``dual <= P* <= primal``, so their intervals meet
    (within ``gap_tol`` relative, the rounding allowed elsewhere).  Only for a method with one
    certificate: an alternating method certifies its last step's subproblem, whose data
    depends on the path.  For an estimator with an ``order`` parameter (classifier chains, whose
    problem depends on the label order) only the rows are permuted.
    """
    name = type(fitted).__name__
    if not isinstance(getattr(fitted, "certificate_", None), Certificate):
        return
    rng = np.random.default_rng(random_state)
    rows, labels = rng.permutation(X.shape[0]), np.roll(np.arange(Y.shape[1]), 1)
    permuted = _clone(estimator)
    if "order" in permuted.get_params(deep=False):
        # A label order is part of the problem (classifier chains): only the rows are permuted.
        labels = np.arange(Y.shape[1])
    permuted.fit(X[rows], Y[rows][:, labels])
    first, second = fitted.certificate_, permuted.certificate_
    if not isinstance(second, Certificate) or second.converged is not True:
        raise AssertionError(f"permuted refit: {name} refitted on permuted rows and labels did not converge "
                             f"({_describe_certificate(second) if isinstance(second, Certificate) else second!r})")
    _require_overlap("permuted refit", f"{name} fitted on permuted rows and labels", "on the original order",
                     first, second, gap_tol)


def _require_overlap(check: str, refit: str, original: str, first, second, gap_tol: float) -> None:
    """AssertionError unless two certificates of one optimum certify overlapping [dual, primal] intervals."""
    apart = _interval_overlap(first, second, gap_tol)
    if apart > 0:
        raise AssertionError(
            f"{check}: {refit} certifies [dual, primal] = [{second.dual!r}, {second.primal!r}], disjoint from "
            f"[{first.dual!r}, {first.primal!r}] {original} by {apart + gap_tol:.3g} relative (tolerance "
            f"{gap_tol:g}): one of the two certificates is wrong"
        )


def _step_iterations(fitted) -> list[int]:
    steps = getattr(fitted, "step_certificates_", None)
    if not steps:
        certificates = fitted.certificate_
        steps = certificates if isinstance(certificates, (list, tuple)) else [certificates]
    return [int(c.n_iter) for c in steps]


def _check_warm_start(estimator, X, Y, gap_tol: float, warm_start_passes: int) -> None:
    """A fit warm started from its own optimum (``warm_start=True``, the same data) stops at once.

    Each solve of the refit takes at most ``warm_start_passes`` iterations (a class that sets
    ``warm_start_stops_at_once = False``, because its solver cannot start from a given point,
    is held only to converging to the same certified value), and the refit is certified for
    the same optimal value as the first fit.
    """
    if "warm_start" not in estimator.get_params(deep=False):
        return
    name = type(estimator).__name__
    warm = _clone(estimator).set_params(warm_start=True)
    warm.fit(X, Y)
    first = warm.certificate_[-1] if isinstance(warm.certificate_, list) else warm.certificate_
    warm.fit(X, Y)
    second = warm.certificate_[-1] if isinstance(warm.certificate_, list) else warm.certificate_
    if second.converged is not True:
        raise AssertionError(f"warm start: {name} warm started at its optimum did not converge ({_describe_certificate(second)})")
    _require_overlap("warm start", f"{name} warm started at its optimum", "of the first fit", first, second, gap_tol)
    iterations = _step_iterations(warm)
    if getattr(type(warm), "warm_start_stops_at_once", True) and max(iterations) > warm_start_passes:
        raise AssertionError(
            f"warm start: {name} warm started at its optimum took {max(iterations)} iterations in a solve "
            f"(per solve: {iterations}), more than warm_start_passes={warm_start_passes}: the warm start is ignored "
            "or the stopping rule is not met at the optimum"
        )


def _check_constant_labels(estimator, fitted, X, Y) -> None:
    """A label constant on the training rows is data: the method learns the others, exactly as without it."""
    name = type(estimator).__name__
    n, n_labels = Y.shape
    # One never-relevant column first and one always-relevant last: the learned labels keep their order.
    Y_constant = np.column_stack([np.zeros(n, dtype=Y.dtype), Y, np.ones(n, dtype=Y.dtype)])
    model = _clone(estimator)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, Y_constant)
        except ValueError as exc:
            raise AssertionError(f"constant labels: {name} refuses a label column constant on the training rows ({exc})") from exc
    counted = [w for w in caught if issubclass(w.category, ConstantLabelWarning)]
    if len(counted) != 1 or "2 of" not in str(counted[0].message):
        raise AssertionError(f"constant labels: {name}'s fit gave {len(counted)} ConstantLabelWarning(s), not one counting 2 labels")
    if getattr(model, "constant_labels_", None) != {0: 0, n_labels + 1: 1}:
        raise AssertionError(f"constant labels: {name}.constant_labels_ is {getattr(model, 'constant_labels_', None)!r}")
    scores, labels = model.decision_function(X), model.predict(X)
    if scores.shape != (n, n_labels + 2) or labels.shape != (n, n_labels + 2):
        raise AssertionError(f"constant labels: {name} gives outputs of shapes {scores.shape} and {labels.shape}")
    if not (np.all(labels[:, 0] == 0) and np.all(labels[:, -1] == 1) and np.all(scores[:, 0] < 0) and np.all(scores[:, -1] > 0)):
        raise AssertionError(f"constant labels: {name} does not predict the constant labels at their values and signs")
    if fitted.get_params(deep=False).get("warm_start", False) is not True and not np.array_equal(
        scores[:, 1:-1], fitted.decision_function(X)
    ):
        raise AssertionError(
            f"constant labels: {name}'s scores of the other labels differ from those of the fit without the constant "
            "columns (tolerance 0: the same computation on the same arrays)"
        )


def _check_input_validation(estimator, fitted, X, Y) -> None:
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    X_inf = X.copy()
    X_inf[-1, -1] = np.inf
    Y_bad = Y.astype(np.int64)
    Y_bad[0, 0] = 2
    cases = {
        "NaN in X": lambda: _clone(estimator).fit(X_nan, Y),
        "inf in X": lambda: _clone(estimator).fit(X_inf, Y),
        "a non-binary Y": lambda: _clone(estimator).fit(X, Y_bad),
        "Y with fewer rows than X": lambda: _clone(estimator).fit(X, Y[:-1]),
        "a 1-D Y": lambda: _clone(estimator).fit(X, Y[:, 0]),
        "an X without rows": lambda: _clone(estimator).fit(X[:0], Y[:0]),
        "NaN in X at predict time": lambda: fitted.predict(X_nan),
        "X with an extra feature at predict time": lambda: fitted.predict(np.hstack([X, X[:, :1]])),
    }
    for case, call in cases.items():
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(f"{type(estimator).__name__} does not raise ValueError for {case}")
