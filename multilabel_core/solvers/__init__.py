"""Solvers: thin Python wrappers beside their Cython kernels."""

from ._convergence import ConvergenceWarning
from .cd import CDSolver, box_kernel_cd, linear_svm_cd
from .lbfgs import LBFGSSolver
from .smo import KernelSource, SMOResult, SMOSolver, kernel_expansion, smo_solve

__all__ = [
    "CDSolver",
    "ConvergenceWarning",
    "KernelSource",
    "LBFGSSolver",
    "SMOResult",
    "SMOSolver",
    "box_kernel_cd",
    "kernel_expansion",
    "linear_svm_cd",
    "smo_solve",
]
