"""Binary relevance: one L2-regularised squared-hinge linear classifier per label.

For every label j independently (y_ij in {-1, +1}, x_i augmented with a constant 1)::

    min_{w_j, b_j}  1/2 (||w_j||^2 + b_j^2) + C sum_i max(0, 1 - y_ij (w_j^T x_i + b_j))^2

the L2-SVM of LIBLINEAR (scikit-learn's ``LinearSVC(loss="squared_hinge")``), bias
regularised included.  Labels share nothing, so binary relevance ignores how they relate:
it is the baseline the label-relation methods are measured against.  The L problems are
solved side by side in the primal by :class:`~multilabel_core.solvers.LBFGSSolver`, on
dense or sparse X.
"""

from __future__ import annotations

from multilabel_core.estimator import ComposedEstimator

__all__ = ["PARTS", "BinaryRelevance"]

#: The parts binary relevance composes (also its MethodSpec's ``parts``).
PARTS = {
    "loss": "squared_hinge",
    "regularizer": "frobenius",
    "relation": "independent",
    "kernel": "linear",
    "solver": "lbfgs",
}


class BinaryRelevance(ComposedEstimator):
    """Binary relevance with L2-regularised squared-hinge linear models (registered as ``br``).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the squared hinge losses against the regulariser.
    tol : float, default 1e-6
        Relative gradient tolerance of the L-BFGS-B solver.
    max_iter : int, default 1000
        Largest number of L-BFGS-B iterations.
    fit_intercept : bool, default True
        Whether each label has a bias (regularised, as in LIBLINEAR).

    Fitted attributes: ``coef_`` (d, L), ``intercept_`` (L,), ``certificate_`` (with the
    duality gap of the per-label L2-SVMs), ``n_iter_``, ``n_features_in_``, ``n_labels_``.
    """

    def __init__(self, C=1.0, tol=1e-6, max_iter=1000, fit_intercept=True):
        super().__init__(**PARTS, C=C, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter)
