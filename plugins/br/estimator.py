"""Binary relevance: one L2-regularised squared-hinge linear classifier per label.

For every label j independently (y_ij in {-1, +1}, x_i augmented with a constant 1)::

    min_{w_j, b_j}  1/2 (||w_j||^2 + b_j^2) + C sum_i max(0, 1 - y_ij (w_j^T x_i + b_j))^2

the L2-SVM of LIBLINEAR (scikit-learn's ``LinearSVC(loss="squared_hinge")``), bias
regularised included.  Labels share nothing, so binary relevance ignores how they relate:
it is the baseline the label-relation methods are measured against.  The L problems are
solved label by label in the dual by :class:`~multilabel_core.solvers.CDSolver` (the
default), or side by side in the primal by :class:`~multilabel_core.solvers.LBFGSSolver`;
both reach the same minimiser, on dense or sparse X.  The dual is the default because it
certifies as small a duality gap in a fraction of the time, and converges at a large C where
L-BFGS stops short (benchmarks/bench_cd.py; the times are in benchmarks/RESULTS.md).  Where the rows
outnumber the features and many sit inside the margin (400 standardised rows of cal500 at C = 1),
the coordinate steps alone converge slowly, and the solver interleaves Newton steps on the current
face, a system of the feature dimension (docs/solvers/cd.md, "Hard problems"; benchmarks/bench_cd_hard.py).
"""

from __future__ import annotations

from multilabel_core.estimator import ComposedEstimator
from multilabel_core.validation import Options

__all__ = ["PARTS", "SOLVERS", "BinaryRelevance"]

#: The parts binary relevance composes (also its MethodSpec's ``parts``).
PARTS = {
    "loss": "squared_hinge",
    "regularizer": "frobenius",
    "relation": "independent",
    "kernel": "linear",
    "solver": "cd",
}


#: The solvers binary relevance offers, by the name its ``solver`` parameter takes.
SOLVERS = ("cd", "lbfgs")


class BinaryRelevance(ComposedEstimator):
    """Binary relevance with L2-regularised squared-hinge linear models (registered as ``br``).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the squared hinge losses against the regulariser.
    tol : float or None, default None
        The solver's stopping tolerance; None is its default.  For ``"cd"`` the bound on
        every projected gradient of the dual (default 1e-3); for ``"lbfgs"`` the primal
        gradient relative to its value at 0 (default 1e-6).
    max_iter : int or None, default None
        Epochs per label (``"cd"``, default 10000) or quasi-Newton iterations
        (``"lbfgs"``, default 1000); None is the solver's default.
    fit_intercept : bool, default True
        Whether each label has a bias (regularised, as in LIBLINEAR).
    solver : {"cd", "lbfgs"}, default "cd"
        ``"cd"``: dual coordinate descent per label (LIBLINEAR's dual solver,
        :class:`~multilabel_core.solvers.CDSolver`); ``"lbfgs"``: L-BFGS-B on the primal
        of all labels at once (:class:`~multilabel_core.solvers.LBFGSSolver`).
    n_jobs : int or None, default None
        Threads the labels are solved on with ``"cd"`` (the GIL-free engine, one label per
        task; BLAS held to one thread meanwhile).  None is the thread budget the caller leaves:
        every core in a plain fit, ``cores // workers`` inside the experiment runner or
        ``cross_validate``; -1 every core.  The model does not depend on it.  ``"lbfgs"``
        solves all labels in one problem and ignores it.

    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``coef_`` (d, L), ``intercept_`` (L,), ``certificate_`` (with the
    duality gap of the per-label L2-SVMs), ``n_iter_``, ``n_features_in_``, ``n_labels_``.
    """

    PARTS = PARTS
    _parameter_constraints = {"solver": Options(SOLVERS)}

    def __init__(
        self, C=1.0, tol=None, max_iter=None, fit_intercept=True, solver="cd", n_jobs=None, thresholding="zero"
    ):
        parts = dict(PARTS, solver=solver)
        super().__init__(**parts, C=C, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, n_jobs=n_jobs)
        self.thresholding = thresholding
