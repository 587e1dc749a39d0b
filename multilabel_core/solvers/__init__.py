"""Solvers: thin Python wrappers beside their Cython kernels."""

from .lbfgs import LBFGSSolver

__all__ = ["LBFGSSolver"]
