"""MTRL: multi-task relationship learning as a pure composition of core parts.

Zhang & Yeung, *A Convex Formulation for Learning Task Relationships in Multi-Task
Learning* (UAI 2010), problem (4), with the labels as the tasks and the loss averaged over
the n rows as in MLRL's problem (6)::

    min_{W, b, Omega}  1/n sum_ij [1 - y_i^j (w_j^T phi(x_i) + b_j)]_+
                       + lam1/2 ||W||_F^2 + lam2/2 tr(W Omega^-1 W^T)
    s.t.  Omega > 0,  tr(Omega) = 1.

Divided by lam1 it is the core's Problem with the hinge loss, C = 1/(n lam1) and
``FrobeniusLabelCovariance(mu = lam2 / lam1)``, ``1/2 tr(W (I + mu Omega^-1) W^T)``, whose
kernel dual sees the labels through ``(I + mu Omega^-1)^-1`` -- in the paper's scaling
``(lam1 I + lam2 Omega^-1)^-1`` where MLRL has ``Omega / lam``.  The learned covariance and
the alternating driver over SMO do the rest: nothing here but the parts and the scaling.
It contains BSVM at lam2 = 0 (mu = 0: the regulariser is ``1/2 ||W||_F^2``, the labels decouple,
and the fit is BSVM's with lambda = lam1) and MLRL with lam = lam2 as the limit lam1 -> 0 (lam1 = 0
itself is refused: C = 1/(n lam1) would be infinite).
"""

from __future__ import annotations

import multilabel_core
from multilabel_core import make_component
from multilabel_core.estimator import ComposedEstimator
from multilabel_core.kernels import make_kernel
from multilabel_core.registry import MethodSpec
from multilabel_core.solvers import check_smo_tol
from multilabel_core.validation import NON_NEGATIVE, POSITIVE, Rule

__all__ = ["MTRL", "register_methods"]


class MTRL(ComposedEstimator):
    """Multi-task relationship learning over the labels (registered as ``mtrl``; module docstring).

    Parameters
    ----------
    lam1 : float, default 1e-4
        Weight of ``1/2 ||W||_F^2``.  The defaults are on MLRL's scale (the loss is averaged
        over n rows): at the former 0.01 and 0.1 the fit predicted no label relevant on the
        Mulan emotions training file.
    lam2 : float >= 0, default 1e-4
        Weight of ``1/2 tr(W Omega^-1 W^T)``; 0 is BSVM with lambda = lam1 (module docstring),
        the lowest value of the registered grid.
    kernel, gamma, tol, max_iter, smo_tol, cache_size, warm_start
        As for MLRL (``mlrl``).
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: those of :class:`~multilabel_core.ComposedEstimator`, with
    ``certificate_`` one SMO certificate per outer step and ``objective_history_`` in the
    units of the problem above.
    """

    PARTS = {
        "loss": "hinge",
        "regularizer": "frobenius_label_covariance",
        "relation": "learned_covariance",
        "kernel": "rbf",
        "solver": "alternating",
    }
    CERTIFICATE_PER_STEP = True
    _parameter_constraints = {
        "lam1": POSITIVE,
        "lam2": NON_NEGATIVE,
        "cache_size": POSITIVE,
        "smo_tol": Rule(check_smo_tol, "SMO's tolerance, at least its floor SMO_TOL_FLOOR"),
    }

    def __init__(
        self, lam1=1e-4, lam2=1e-4, kernel="rbf", gamma=None, tol=1e-4, max_iter=100, smo_tol=1e-3, cache_size=1024.0,
        warm_start=False, thresholding="zero",
    ):  # fmt: skip
        self.lam1 = lam1
        self.lam2 = lam2
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.smo_tol = smo_tol
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.thresholding = thresholding

    def _parts(self) -> dict:
        smo = make_component("solver", "smo", tol=self.smo_tol, cache_size=float(self.cache_size))
        return {
            "loss": make_component("loss", "hinge"),
            "regularizer": make_component("regularizer", "frobenius_label_covariance", mu=self.lam2 / self.lam1),
            "relation": make_component("relation", "learned_covariance"),
            "kernel": make_kernel(self.kernel, self.gamma),
            "solver": make_component("solver", "alternating", inner=smo, tol=self.tol, max_iter=self.max_iter),
        }

    def _cost(self, n_samples: int) -> float:
        return 1.0 / (n_samples * self.lam1)

    def _objective_scale(self) -> float:
        return float(self.lam1)


@multilabel_core.hookimpl
def register_methods(register):
    """Register the MTRL family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="mtrl",
            estimator=MTRL,
            citation="Zhang & Yeung, A convex formulation for learning task relationships in multi-task learning, UAI 2010",
            parts=MTRL.PARTS,
            # lam2 = 0 is the BSVM end the docs claim the method contains (docs/methods/mtrl.md, Grid).
            param_grid={"lam1": [1e-5, 1e-4, 1e-3, 0.01], "lam2": [0.0, 1e-5, 1e-4, 1e-3, 0.01]},
            description="hinge + lam1/2 ||W||^2 + lam2/2 tr(W Omega^-1 W^T), Omega learned (alternating SMO / closed form)",
        )
    )
