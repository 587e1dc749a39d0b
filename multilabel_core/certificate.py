"""The optimality certificate every solve returns."""

from __future__ import annotations

import math
import sys
import warnings

import attrs

from .exceptions import ConvergenceWarning

#: The largest relative duality gap ``(P - D) / max(1, |P|)`` a solver whose own stopping rule
#: is not the gap (a projected-gradient or KKT rule) may still call converged.  Those rules
#: promise a small gap only for well-scaled problems; at extreme scales (a loss weight C of
#: 1e21, features 1e-8 beside 1e8) they stop with gaps the size of the objective.
GAP_RTOL = 1e-3

#: The largest ``|primal|`` or ``|dual|`` a certificate can certify: the square root of the largest
#: float64, 1.34e154.  An objective beyond it comes from quantities whose squares -- the gradients,
#: the dual's quadratic forms, the regulariser itself -- overflow on the way (PrML with
#: ``gamma1 = 1e300``: a primal of 3.7e294 after 62 overflows, its sub-problem's gap 0.05 on top),
#: so its gap measures nothing: :func:`relative_gap` is infinite there.
CERTIFIABLE_MAGNITUDE = math.sqrt(sys.float_info.max)

_EPS = sys.float_info.epsilon


def relative_gap(gap: float, primal: float, dual: float | None = None) -> float:
    """Return the duality gap on the scale of the objective: ``max(gap, resolution) / max(1, |primal|)``.

    The scale-free measure of :attr:`Certificate.relative_gap`, the stopping rules and
    :data:`GAP_RTOL`, for a gap, a primal and (optionally) a dual given apart (a certificate's
    dict in a record).  The floor ``resolution = eps * max(|primal|, |dual|)`` is the rounding
    of ``primal - dual``: a gap below it is not measured by the two objectives (a primal of 1e295
    cannot certify a gap of 0.1), so the relative gap is never smaller than the precision the
    objectives carry.

    Parameters
    ----------
    gap : float
        The absolute duality gap ``primal - dual``.
    primal : float
        The primal objective at the returned point; its magnitude sets the scale.
    dual : float or None, default=None
        The dual objective.  When given, it enters the rounding floor and the
        :data:`CERTIFIABLE_MAGNITUDE` check beside the primal.

    Returns
    -------
    float
        ``max(gap, resolution) / max(1, |primal|)``.  A gap below ``-resolution`` (a dual above its
        primal) stays negative, so that a broken certificate shows.  NaN when any value is NaN;
        ``inf`` -- certifies nothing -- when the primal, the dual or the gap is infinite (an
        objective that overflowed) or when ``|primal|`` or ``|dual|`` exceeds
        :data:`CERTIFIABLE_MAGNITUDE`.
    """
    values = [float(gap), float(primal)] + ([] if dual is None else [float(dual)])
    if any(math.isnan(value) for value in values):
        return math.nan
    if not all(math.isfinite(value) for value in values):
        return math.inf
    gap, primal = values[0], values[1]
    magnitude = max(abs(value) for value in values[1:])
    if magnitude > CERTIFIABLE_MAGNITUDE:
        return math.inf
    resolution = _EPS * magnitude
    scale = max(1.0, abs(primal))
    return gap / scale if gap < -resolution else max(gap, resolution) / scale


def within_gap_rtol(primal: float, dual: float, rtol: float = GAP_RTOL) -> bool:
    """Tell whether ``primal - dual`` is finite and its :func:`relative_gap` is at most ``rtol``.

    Parameters
    ----------
    primal : float
        The primal objective.
    dual : float
        The dual objective of a feasible dual point of the same problem.
    rtol : float, default=GAP_RTOL
        The largest relative gap accepted (:data:`GAP_RTOL`, 1e-3, by default).

    Returns
    -------
    bool
        True when the relative gap of ``primal - dual`` is at most ``rtol``; False when it is
        larger, infinite or NaN.
    """
    return relative_gap(float(primal) - float(dual), primal, dual) <= rtol


def _uncertifiable(certificate) -> str | None:
    """Why a certificate's numbers certify nothing (non-finite, or beyond :data:`CERTIFIABLE_MAGNITUDE`), or None."""
    named = {"gap": certificate.gap, "primal": certificate.primal, "dual": certificate.dual}
    for name, value in named.items():
        if not math.isfinite(float(value)):
            return f"{name}={float(value)!r}"
    largest = max(abs(float(certificate.primal)), abs(float(certificate.dual)))
    if largest > CERTIFIABLE_MAGNITUDE:
        return (
            f"|primal| or |dual| = {largest:.3g} above {CERTIFIABLE_MAGNITUDE:.3g} (CERTIFIABLE_MAGNITUDE: the squares "
            "computed on the way overflow)"
        )
    return None


@attrs.frozen
class Certificate:
    """Evidence that a solve reached its optimum.

    Parameters
    ----------
    primal : float
        Primal objective at the returned point.
    dual : float
        Dual objective at the dual point associated with it (``nan`` when the solver
        has no dual, then ``gap`` is ``nan`` too and the solve is not ``converged``).
    gap : float
        ``primal - dual`` (>= 0 up to rounding by weak duality).
    kkt_violation : float
        Largest violation of the optimality conditions the solver checks (e.g. the
        projected-gradient norm, or max_i F_low^i - F_up^i for SMO).
    n_iter : int
        Iterations (epochs, SMO steps or quasi-Newton iterations: see the solver).
    time : float
        Wall-clock seconds of the solve.
    converged : bool
        Whether the stopping rule was met before ``max_iter`` *and* the certificate's numbers
        certify something: a finite gap, primal and dual, each at most
        :data:`CERTIFIABLE_MAGNITUDE` in size.  A certificate built with ``converged=True``
        but an infinite or NaN gap (a dual that could not be evaluated, or a conjugate that is
        +inf at the returned point), an objective that overflowed to infinity, or one beyond
        :data:`CERTIFIABLE_MAGNITUDE` (its squares overflowed on the way) certifies nothing:
        the constructor stores ``converged=False`` and issues a
        :class:`~multilabel_core.solvers.ConvergenceWarning` naming the solver and the
        value.  The project's solvers set the flag this way themselves (with their own
        warning); the constructor is the backstop for every other path (plugins,
        ``attrs.evolve``).
    solver : str
        Name of the solver that produced it.
    statistics : dict, optional
        Solver-specific counts, e.g. shrinking statistics (variables shrunk, gradient
        reconstructions), kernel-cache hits, or the dual objective per iteration in debug mode.
        Empty by default.

    Warns
    -----
    ConvergenceWarning
        When ``converged=True`` is given with numbers that certify nothing (see ``converged``).
    """

    primal: float
    dual: float
    gap: float
    kkt_violation: float
    n_iter: int
    time: float
    converged: bool
    solver: str
    statistics: dict = attrs.field(factory=dict)

    def __attrs_post_init__(self):
        reason = _uncertifiable(self) if self.converged else None
        if reason is not None:
            object.__setattr__(self, "converged", False)
            warnings.warn(
                f"{self.solver} reported convergence, but its certificate has {reason} "
                f"(primal={self.primal!r}, dual={self.dual!r}, gap={self.gap!r}), which certifies nothing: stored as "
                "converged=False",
                ConvergenceWarning,
                stacklevel=3,
            )

    @classmethod
    def from_objectives(cls, primal, dual, **kwargs) -> Certificate:
        """Build a certificate from a primal and a dual objective: ``gap = primal - dual``.

        Parameters
        ----------
        primal : float
            The primal objective at the returned point.
        dual : float
            The value of a feasible dual point of the *same* problem, so that weak duality makes the
            gap non-negative; see the plugin guide for a model with an unpenalised intercept.
        **kwargs
            Every other field of :class:`Certificate`, by keyword: ``kkt_violation``, ``n_iter``,
            ``time``, ``converged``, ``solver`` and, optionally, ``statistics``.

        Returns
        -------
        Certificate
            The certificate, with ``gap`` computed from the two objectives.
        """
        return cls(primal=float(primal), dual=float(dual), gap=float(primal) - float(dual), **kwargs)

    @property
    def relative_gap(self) -> float:
        """``max(gap, resolution) / max(1, |primal|)``, the scale-free measure of the stopping rules.

        :func:`relative_gap` of the gap, the primal and the dual: never below the rounding of
        ``primal - dual``, infinite for an overflowed or uncertifiably large objective.
        """
        return relative_gap(self.gap, self.primal, self.dual)

    def as_dict(self) -> dict:
        """Return the fields as a plain dict, plus ``relative_gap`` (for JSON reports).

        Returns
        -------
        dict
            Field name -> value for every field, and ``"relative_gap"`` -> :attr:`relative_gap`.
        """
        return attrs.asdict(self) | {"relative_gap": self.relative_gap}
