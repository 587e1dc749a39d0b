"""Solvers: the generic ones, thin Python wrappers beside their Cython kernels, and the engine kit.

A solver lives here when it is generic: it declares what it asks of the parts and serves any
composition that meets it.  An engine that only one family can use lives in that family's
plugin package (PrML's SVM+ duals and interior-point method in ``multilabel_core_plugins.prml``,
the ranking dual in ``multilabel_core_plugins.ranking``, LIEML's fixed-point continuation in
``multilabel_core_plugins.lieml``), built on the public engine kit :mod:`multilabel_core.solvers.kit`
(its Cython declarations in ``multilabel_core/solvers/kit.pxd``).
"""

from ._convergence import SMALLEST_EPS, ConvergenceWarning, tighten_to_relative_gap
from .alternating import AlternatingSolver
from .cd import CDSolver, box_kernel_cd, linear_svm_cd
from ..proximal import SVT_METHODS, Shrinkage, singular_value_threshold
from .irwls import IRWLSSolver, irwls_msvr, msvr_objective
from .lbfgs import LBFGSSolver
from .proximal import ProximalGradientSolver
from .smo import SMO_TOL_FLOOR, KernelSource, SMOSolver, check_smo_tol, kernel_expansion, relation_statistics, smo_solve

__all__ = [
    "SMALLEST_EPS",
    "SVT_METHODS",
    "AlternatingSolver",
    "CDSolver",
    "ConvergenceWarning",
    "IRWLSSolver",
    "KernelSource",
    "LBFGSSolver",
    "ProximalGradientSolver",
    "SMOSolver",
    "SMO_TOL_FLOOR",
    "Shrinkage",
    "box_kernel_cd",
    "check_smo_tol",
    "irwls_msvr",
    "kernel_expansion",
    "linear_svm_cd",
    "msvr_objective",
    "relation_statistics",
    "singular_value_threshold",
    "smo_solve",
    "tighten_to_relative_gap",
]
