"""The privileged multi-label family: PrML, PrBR and the LEML baseline (You, Xu, Wang, Xu & Tao).

Registered through the ``multilabel_core.plugins`` entry point ``prml``: the methods
``prml``, ``prbr`` and ``leml``, and the components they compose beside the core's
(the regulariser ``low_rank``) -- the relation ``privileged_labels``
(:class:`~.parts.PrivilegedLabels`) and the solvers ``privileged_cd`` (one round of
Algorithm 2, :class:`~.solver.PrivilegedCDSolver`) and ``prml_alternating`` (the core's
AlternatingSolver over it).  docs/methods/prml.md describes the formulation, the algorithm,
the feasibility finding and the reproduction.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import ComponentSpec, MethodSpec

from .estimators import LEML, PARTS, PrBR, PrML
from .feasibility import infeasible_labels
from .parts import PrivilegedLabels, resolve_rank
from .solver import PrivilegedCDSolver, prml_alternating

__all__ = [
    "CITATION",
    "DEFAULT_GRIDS",
    "LEML",
    "PAPER_GRIDS",
    "PrBR",
    "PrML",
    "PrivilegedCDSolver",
    "PrivilegedLabels",
    "infeasible_labels",
    "prml_alternating",
    "register_components",
    "register_methods",
    "resolve_rank",
]

CITATION = "You, Xu, Wang, Xu & Tao, Privileged Multi-label Learning, IJCAI 2017"

_C = [1e-3, 1e-2, 0.1, 1.0, 10.0, 20.0]
_GAMMA2 = [0.1, 0.5, 1.0, 2.0]
_K = [0.8, 0.85, 0.9, 0.95]

#: Grids spanning the paper's ranges (section 4.2: gamma1 = 1, gamma2 in 0.1 .. 2, C in 1e-3 .. 20, and
#: k (``rank``) in {0.8, 0.85, 0.9, 0.95} L for the reproduction); the paper gives ranges, not grids.
PAPER_GRIDS = {
    "prml": {"C": _C, "gamma2": _GAMMA2, "rank": _K},
    "prbr": {"C": _C, "gamma2": _GAMMA2},
    "leml": {"C": _C, "rank": _K},
}

#: The registered grids: three decades of C (and two gamma2), rank at the paper's 0.9 L.  The paper's 96
#: points cost a PrML fit each per fold (seconds to minutes); docs/methods/prml.md gives the timings.  The
#: SVM+ methods stop at C = 1: their dual has no upper bound, and at C = 10 coordinate descent needs about
#: ten times the epochs of C = 1 (9000 against 900 per step on the 500-row demo data).
DEFAULT_GRIDS = {
    "prml": {"C": [0.01, 0.1, 1.0], "gamma2": [0.5, 1.0]},
    "prbr": {"C": [0.01, 0.1, 1.0], "gamma2": [0.5, 1.0]},
    "leml": {"C": [0.1, 1.0, 10.0]},
}

_METHODS = {
    "prml": (PrML, "PrML: low-rank Z = D^T W with privileged label features correcting the slacks (problem 5)"),
    "prbr": (PrBR, "PrBR: one SVM+ per label, the other labels as privileged features (problem 5, W = I)"),
    "leml": (LEML, "LEML: low-rank Z = D^T W with the hinge (problem 2), PrML's baseline without privileged labels"),
}


@multilabel_core.hookimpl
def register_methods(register):
    """Register the PrML family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    for name, (estimator, description) in _METHODS.items():
        citation = CITATION if name != "leml" else (
            CITATION + "; Yu, Jain, Kar & Dhillon, Large-scale Multi-label Learning with Missing Labels, ICML 2014"
        )
        register(
            MethodSpec(
                name=name, estimator=estimator, citation=citation, parts=PARTS[name],
                param_grid=DEFAULT_GRIDS[name], description=description,
            )
        )


#: Where ``solver="auto"`` tries this family's solvers (the core's: cd 10, smo 20, irwls 30, lbfgs 40,
#: alternating 50; multilabel_core.composition).  ``prml_alternating`` comes before the core's generic
#: driver: it accepts only what its rounds' solver accepts (the low-rank problems, which ``privileged_cd``
#: alone refuses), and after the driver it would be taken as the driver's model step, one alternation
#: wrapped in another that does a single step of it.
AUTO_ORDER = {"privileged_cd": 12, "prml_alternating": 45}


@multilabel_core.hookimpl
def register_components(register):
    """Register the PrML family's components (the hook :func:`~multilabel_core.hookspecs.register_components`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's parts, a
        :class:`~multilabel_core.registry.ComponentSpec`.
    """
    components = {
        ("relation", "privileged_labels"): PrivilegedLabels,
        ("solver", "privileged_cd"): PrivilegedCDSolver,
        ("solver", "prml_alternating"): prml_alternating,
    }
    for (kind, name), factory in components.items():
        register(
            ComponentSpec(
                kind, name, factory, description=factory.__doc__.strip().splitlines()[0],
                auto_order=AUTO_ORDER.get(name),
            )
        )
