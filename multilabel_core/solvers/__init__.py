"""Solvers: thin Python wrappers beside their Cython kernels."""

from ._convergence import SMALLEST_EPS, ConvergenceWarning, tighten_to_relative_gap
from .alternating import AlternatingSolver
from .cd import CDSolver, box_kernel_cd, linear_svm_cd
from ..proximal import SVT_METHODS, Shrinkage, singular_value_threshold
from .fpc import FPCStage, fixed_point_continuation
from .irwls import IRWLSSolver, irwls_msvr, msvr_objective
from .lbfgs import LBFGSSolver
from .proximal import ProximalGradientSolver
from .ranking import coupling_inverse, ranking_cd, ranking_pairs
from .smo import SMO_TOL_FLOOR, KernelSource, SMOSolver, check_smo_tol, kernel_expansion, relation_statistics, smo_solve
from .svmplus import (
    embedded_hinge_cd,
    embedded_hinge_ipm,
    embedded_solution,
    privileged_label_features,
    svmplus_cd,
    svmplus_ipm,
)

__all__ = [
    "SMALLEST_EPS",
    "SVT_METHODS",
    "AlternatingSolver",
    "CDSolver",
    "ConvergenceWarning",
    "FPCStage",
    "IRWLSSolver",
    "KernelSource",
    "LBFGSSolver",
    "ProximalGradientSolver",
    "SMOSolver",
    "SMO_TOL_FLOOR",
    "Shrinkage",
    "box_kernel_cd",
    "check_smo_tol",
    "coupling_inverse",
    "embedded_hinge_cd",
    "embedded_hinge_ipm",
    "embedded_solution",
    "fixed_point_continuation",
    "irwls_msvr",
    "kernel_expansion",
    "linear_svm_cd",
    "msvr_objective",
    "privileged_label_features",
    "ranking_cd",
    "ranking_pairs",
    "relation_statistics",
    "singular_value_threshold",
    "smo_solve",
    "svmplus_cd",
    "svmplus_ipm",
    "tighten_to_relative_gap",
]
