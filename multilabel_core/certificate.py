"""The optimality certificate every solve returns."""

from __future__ import annotations

import math

import attrs


@attrs.frozen
class Certificate:
    """Evidence that a solve reached its optimum.

    Attributes
    ----------
    primal : float
        Primal objective at the returned point.
    dual : float
        Dual objective at the dual point associated with it (``nan`` when the solver
        has no dual, then ``gap`` is ``nan`` too).
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
        Whether the stopping rule was met before ``max_iter``.
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

    @classmethod
    def from_objectives(cls, primal, dual, **kwargs) -> "Certificate":
        return cls(primal=float(primal), dual=float(dual), gap=float(primal) - float(dual), **kwargs)

    @property
    def relative_gap(self) -> float:
        """``gap / max(1, |primal|)``, the scale-free measure used by the stopping rules."""
        if math.isnan(self.gap):
            return math.nan
        return self.gap / max(1.0, abs(self.primal))

    def as_dict(self) -> dict:
        return attrs.asdict(self) | {"relative_gap": self.relative_gap}
