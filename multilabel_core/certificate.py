"""The optimality certificate every solve returns."""

from __future__ import annotations

import math
import warnings

import attrs

#: The largest relative duality gap ``(P - D) / max(1, |P|)`` a solver whose own stopping rule
#: is not the gap (a projected-gradient or KKT rule) may still call converged.  Those rules
#: promise a small gap only for well-scaled problems; at extreme scales (a loss weight C of
#: 1e21, features 1e-8 beside 1e8) they stop with gaps the size of the objective.
GAP_RTOL = 1e-3


def relative_gap(gap: float, primal: float) -> float:
    """``gap / max(1, |primal|)``: the duality gap on the scale of the objective (NaN for a NaN gap).

    The scale-free measure of :attr:`Certificate.relative_gap`, the stopping rules and
    :data:`GAP_RTOL`, for a gap and a primal given apart (a certificate's dict in a record).
    """
    gap, primal = float(gap), float(primal)
    if math.isnan(gap):
        return math.nan
    return gap / max(1.0, abs(primal))


def within_gap_rtol(primal: float, dual: float, rtol: float = GAP_RTOL) -> bool:
    """Whether ``primal - dual`` (finite) is at most ``rtol * max(1, |primal|)``."""
    gap = primal - dual
    return math.isfinite(gap) and gap <= rtol * max(1.0, abs(primal))


@attrs.frozen
class Certificate:
    """Evidence that a solve reached its optimum.

    Attributes
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
        Whether the stopping rule was met before ``max_iter`` *and* the gap is finite.
        A certificate built with ``converged=True`` but an infinite or NaN gap (a dual
        that could not be evaluated, or a conjugate that is +inf at the returned point)
        certifies nothing: the constructor stores ``converged=False`` and issues a
        :class:`~multilabel_core.solvers.ConvergenceWarning` naming the solver and the
        gap.  The project's solvers set the flag this way themselves (with their own
        warning); the constructor is the backstop for every other path (plugins,
        ``attrs.evolve``).
    solver : str
        Name of the solver that produced it.
    statistics : dict
        Solver-specific counts, e.g. shrinking statistics (variables shrunk, gradient
        reconstructions), kernel-cache hits, or the dual objective per iteration in debug mode.
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
        if self.converged and not math.isfinite(self.gap):
            # A lazy import: the solvers package imports this module.
            from .solvers._convergence import ConvergenceWarning

            object.__setattr__(self, "converged", False)
            warnings.warn(
                f"{self.solver} reported convergence, but its certificate has gap={self.gap!r} "
                f"(primal={self.primal!r}, dual={self.dual!r}), which certifies nothing: stored as converged=False",
                ConvergenceWarning,
                stacklevel=3,
            )

    @classmethod
    def from_objectives(cls, primal, dual, **kwargs) -> Certificate:
        """A certificate from a primal and a dual objective: ``gap = primal - dual``.

        Every other field of :class:`Certificate` is passed by keyword: ``kkt_violation``,
        ``n_iter``, ``time``, ``converged``, ``solver`` and, optionally, ``statistics``.  ``dual`` must be the
        value of a feasible dual point of the *same* problem, so that weak duality makes the
        gap non-negative; see the plugin guide for a model with an unpenalised intercept.
        """
        return cls(primal=float(primal), dual=float(dual), gap=float(primal) - float(dual), **kwargs)

    @property
    def relative_gap(self) -> float:
        """``gap / max(1, |primal|)``, the scale-free measure used by the stopping rules (:func:`relative_gap`)."""
        return relative_gap(self.gap, self.primal)

    def as_dict(self) -> dict:
        """The fields as a plain dict, plus ``relative_gap`` (for JSON reports)."""
        return attrs.asdict(self) | {"relative_gap": self.relative_gap}
