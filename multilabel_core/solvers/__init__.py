"""Solvers: thin Python wrappers beside their Cython kernels."""

from ._convergence import SMALLEST_EPS, ConvergenceWarning, tighten_to_relative_gap
from .alternating import AlternatingSolver
from .cd import CDSolver, box_kernel_cd, linear_svm_cd
from .lbfgs import LBFGSSolver
from .ranking import coupling_inverse, ranking_cd, ranking_pairs
from .smo import KernelSource, SMOSolver, kernel_expansion, relation_statistics, smo_solve
from .svmplus import embedded_hinge_cd, privileged_label_features, svmplus_cd

__all__ = [
    "SMALLEST_EPS",
    "AlternatingSolver",
    "CDSolver",
    "ConvergenceWarning",
    "KernelSource",
    "LBFGSSolver",
    "SMOSolver",
    "box_kernel_cd",
    "coupling_inverse",
    "embedded_hinge_cd",
    "kernel_expansion",
    "linear_svm_cd",
    "privileged_label_features",
    "ranking_cd",
    "ranking_pairs",
    "relation_statistics",
    "smo_solve",
    "svmplus_cd",
    "tighten_to_relative_gap",
]
