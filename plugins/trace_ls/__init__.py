"""Trace-norm regularised least squares: labels that share a low-dimensional subspace, as a composition.

Ji & Ye, *An Accelerated Gradient Method for Trace Norm Minimization* (ICML 2009), problem (1)
with the squared loss of their multi-task experiments, the labels as the tasks::

    min_{W, b}  1/2 ||X W + 1 b^T - Y||_F^2 + lam ||W||_*,

where ``||W||_* = sum_k sigma_k(W)`` is the convex envelope of rank(W) on the spectral-norm ball:
the predictors of all labels are pushed into a common low-dimensional subspace of the features
(the shared structure a low-rank multi-label method learns), and lam sets its dimension.  The
paper's solver is the accelerated gradient method with backtracking and singular value
thresholding as the proximal step (its Algorithm 2); the core's ``fista`` is that method (plus
restarts), with the ``nuclear_norm`` prox shared with LIEML's fixed point continuation.

In the core's parts: the ``least_squares`` loss on the {-1, +1} signs (``target="sign"``), C =
1 / lam, the ``nuclear_norm`` regulariser, a free intercept, ``fista``, the zero threshold.
Certified by the smaller of two bounds: the duality gap (the conjugate of the nuclear norm is the
indicator of the spectral-norm ball) and, where X has full column rank, strong convexity.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core import ComposedEstimator, MethodSpec, make_component

__all__ = ["TraceNormLeastSquares", "register_methods"]


class TraceNormLeastSquares(ComposedEstimator):
    """Least squares with a trace-norm penalty on W (registered as ``trace_ls``; module docstring).

    Parameters
    ----------
    lam : float > 0, default 1.0
        Weight of ``||W||_*`` against ``1/2 ||X W + 1 b^T - Y||_F^2`` (the loss summed over the rows).
    fit_intercept : bool, default True
        Whether the scores carry an unpenalised per-label bias b.
    tol, max_iter : float, int or None
        The FISTA solver's stopping tolerance and iteration limit (None: its defaults).
    thresholding : default "zero"
        The midpoint of the {-1, +1} targets; any registered threshold.
    """

    PARTS = {"loss": "least_squares", "regularizer": "nuclear_norm", "relation": "independent", "kernel": "linear",
             "solver": "fista"}  # fmt: skip

    def __init__(self, lam=1.0, fit_intercept=True, tol=None, max_iter=None, thresholding="zero"):
        self.lam, self.fit_intercept, self.tol, self.max_iter, self.thresholding = lam, fit_intercept, tol, max_iter, thresholding

    def _parts(self) -> dict:
        settings = {k: v for k, v in (("tol", self.tol), ("max_iter", self.max_iter)) if v is not None}
        parts = {role: make_component(role, self.PARTS[role]) for role in ("loss", "regularizer", "relation", "kernel")}
        return parts | {"solver": make_component("solver", "fista", **settings)}

    def _cost(self, n_samples: int) -> float:
        return 1.0 / float(self.lam)

    def _objective_scale(self) -> float:
        return float(self.lam)


@multilabel_core.hookimpl
def register_methods(register):
    """Register the trace-norm family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="trace_ls",
            estimator=TraceNormLeastSquares,
            citation="Ji & Ye, An Accelerated Gradient Method for Trace Norm Minimization, ICML 2009",
            parts=TraceNormLeastSquares.PARTS,
            param_grid={"lam": [0.01, 0.1, 1.0, 10.0, 100.0]},
            description="least squares + lam ||W||_* (labels in a shared low-rank subspace), by FISTA",
        )
    )
