"""Solvers: thin Python wrappers beside their Cython kernels."""

from ._convergence import ConvergenceWarning
from .alternating import AlternatingResult, AlternatingSolver
from .cd import CDResult, CDSolver, box_kernel_cd, linear_svm_cd
from .lbfgs import LBFGSSolver
from .ranking import RankingCDResult, coupling_inverse, ranking_cd, ranking_pairs
from .smo import KernelSource, SMOResult, SMOSolver, kernel_expansion, smo_solve
from .svmplus import SVMPlusCDResult, privileged_label_features, svmplus_cd

__all__ = [
    "AlternatingResult",
    "AlternatingSolver",
    "CDResult",
    "CDSolver",
    "ConvergenceWarning",
    "KernelSource",
    "LBFGSSolver",
    "RankingCDResult",
    "SMOResult",
    "SMOSolver",
    "SVMPlusCDResult",
    "box_kernel_cd",
    "coupling_inverse",
    "kernel_expansion",
    "linear_svm_cd",
    "privileged_label_features",
    "ranking_cd",
    "ranking_pairs",
    "smo_solve",
    "svmplus_cd",
]
