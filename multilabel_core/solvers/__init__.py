"""Solvers: thin Python wrappers beside their Cython kernels."""

from ._convergence import ConvergenceWarning
from .lbfgs import LBFGSSolver

__all__ = ["ConvergenceWarning", "LBFGSSolver"]
