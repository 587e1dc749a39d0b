"""LLSF: label-specific features as a pure composition of core parts.

Huang, Li, Huang & Wu, *Learning Label Specific Features for Multi-Label Classification*
(ICDM 2015), whose objective (as the authors' public code states it; the equation numbers of the
paper were not available to us) is::

    min_W  1/2 ||X W - Y||_F^2 + alpha/2 tr(W R W^T) + beta ||W||_1,     R = 1 - S,

with Y the {0, 1} label matrix, S the cosine similarity of its columns (labels that co-occur
should share features: the penalty charges w_j^T w_k by their dissimilarity) and the L1 term
picking each label's own features; solved by accelerated proximal gradient, predicting
``X W > 0.5``.  In the core's parts: the ``least_squares`` loss on the indicators
(``target="real"``), C = 1, the ``sum`` of ``label_similarity`` (R from the training labels) and
``l1``, ``fista``, and the ``fixed`` threshold at 0.5.  The ICDM code's scores are ``X W`` with no
intercept, and its rows are scaled to unit norm; its TKDE extension's code (LLSF-DL) appends a
constant feature.  Without one, features centred around 0 (yeast's) leave a {0, 1} regression no way
to reach the labels' mean: on yeast with unit-norm rows the scores average -0.01 against a label
rate of 0.30, and under 1 % of the entries pass 0.5.  The preset therefore fits a free, unpenalised
intercept by default (``fit_intercept=False`` is the ICDM form).

**R as the paper gives it makes the problem unbounded below.**  R = 1 - S has a zero diagonal and
trace 0, so it is indefinite, and the Hessian of the smooth part has the eigenvalues
``lambda_i(X^T X) + alpha mu_j(R)`` (a Kronecker sum): wherever ``alpha |mu_min(R)| >
lambda_min(X^T X)`` -- for every alpha > 0 when d >= n, and on emotions with unit-norm rows for
alpha > 1e-8 -- the objective tends to -infinity along a direction of negative curvature (the L1
term grows only linearly), so it has no minimiser; the authors' code stops after 50-100 steps from
a ridge start, an early stop rather than a solution.  The preset therefore defaults to the convex
reading ``form="laplacian"``, R = D - S (``tr(W R W^T) = 1/2 sum_jk S_jk ||w_j - w_k||^2``: labels
that co-occur are pulled towards the same features), certified by the solver; ``form="distance"``
is the paper's R, fitted and certified where it is convex and refused with the measured curvature
where it is not.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core import ComposedEstimator, MethodSpec, make_component
from multilabel_core.validation import NON_NEGATIVE, Options

__all__ = ["LLSF", "register_methods"]


class LLSF(ComposedEstimator):
    """Learning label-specific features (registered as ``llsf``; module docstring).

    Parameters
    ----------
    alpha : float >= 0, default 0.1
        Weight of the label-correlation term ``1/2 tr(W R W^T)``.
    beta : float >= 0, default 0.1
        Weight of the sparsity term ``||W||_1``.
    form : {"laplacian", "distance"}, default "laplacian"
        R = D - S (convex) or the paper's R = 1 - S (module docstring).
    fit_intercept : bool, default True
        A free per-label bias (module docstring); False is the ICDM code's ``X W``.
    tol, max_iter : float, int or None
        The FISTA solver's stopping tolerance and iteration limit (None: its defaults).
    thresholding : default ``"fixed"``
        ``FixedThreshold()``: the midpoint 0.5 of the {0, 1} targets, as the paper; any registered threshold.
    """

    PARTS = {"loss": "least_squares", "regularizer": "sum", "relation": "independent", "kernel": "linear",
             "solver": "fista"}  # fmt: skip
    _parameter_constraints = {"alpha": NON_NEGATIVE, "beta": NON_NEGATIVE, "form": Options(("laplacian", "distance"))}

    def __init__(self, alpha=0.1, beta=0.1, form="laplacian", fit_intercept=True, tol=None, max_iter=None,
                 thresholding="fixed"):  # fmt: skip
        self.alpha, self.beta, self.form, self.fit_intercept = alpha, beta, form, fit_intercept
        self.tol, self.max_iter, self.thresholding = tol, max_iter, thresholding

    def _parts(self) -> dict:
        similarity = {"alpha": float(self.alpha), "form": self.form}
        terms = (("label_similarity", similarity), ("l1", {"weight": float(self.beta)}))
        settings = {k: v for k, v in (("tol", self.tol), ("max_iter", self.max_iter)) if v is not None}
        return {
            "loss": make_component("loss", "least_squares", target="real"),
            "regularizer": make_component("regularizer", "sum", terms=terms),
            "relation": make_component("relation", "independent"),
            "kernel": make_component("kernel", "linear"),
            "solver": make_component("solver", "fista", **settings),
        }

    def _cost(self, n_samples: int) -> float:
        return 1.0


@multilabel_core.hookimpl
def register_methods(register):
    """Register the LLSF family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="llsf",
            estimator=LLSF,
            citation="Huang, Li, Huang & Wu, Learning Label Specific Features for Multi-Label Classification, ICDM 2015",
            parts=LLSF.PARTS,
            param_grid={"alpha": [4.0**k for k in (-4, -2, 0, 2)], "beta": [4.0**k for k in (-4, -2, 0, 2)]},
            description="least squares + alpha/2 tr(W R W^T) (R = 1 - cosine of the labels) + beta ||W||_1, by FISTA",
        )
    )
