"""LIEML: labeling information enhancement with a low-rank subspace, then a multi-output SVR (Tao, Xu & Geng).

Registered through the ``multilabel_core.plugins`` entry point ``lieml``: the methods ``lieml``
(:class:`~.estimator.LIEML`) and ``lieml_raw`` (the same regressor on the logical labels), the
label relation ``label_enhancement`` (:class:`~.enhancement.LowRankEnhancement`) and the solver
``lieml_irwls`` (:class:`~.solver.LIEMLSolver`).  Label enhancement is usable on its own:
:func:`~.enhancement.enhance_labels`.  docs/methods/lieml.md describes the model, the solvers,
the corrections to the text and the reproduction.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import ComponentSpec, MethodSpec

from .enhancement import EnhancedTargets, LabelEnhancement, LowRankEnhancement, enhance_labels, fed_targets, stacked_objective
from .estimator import LIEML, PARTS, RAW_PARTS, LIEMLRawLabels
from .fpc import FPCStage
from .solver import LIEMLSolver

__all__ = [
    "CITATION",
    "DEFAULT_GRID",
    "EnhancedTargets",
    "LIEML",
    "PARTS",
    "RAW_GRID",
    "RAW_PARTS",
    "LIEMLRawLabels",
    "LIEMLSolver",
    "LabelEnhancement",
    "LowRankEnhancement",
    "enhance_labels",
    "fed_targets",
    "register_components",
    "register_methods",
    "register_trusted_types",
    "stacked_objective",
]

CITATION = "Tao, Xu & Geng, Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace"

#: lambda as in the paper's experiments ({0.1, 1, 10, 100}, chosen by inner cross-validation) and the
#: tube radius the paper leaves out, at the MSVR default 0.1 and at 1 (a tube that leaves rows whose
#: residual norm over all t labels is below 1 out of the loss).
DEFAULT_GRID = {"lam": [0.1, 1.0, 10.0, 100.0], "epsilon": [0.1, 1.0]}

#: The ablation searches the same tube radii (it has no lambda).
RAW_GRID = {"epsilon": [0.1, 1.0]}


@multilabel_core.hookimpl
def register_methods(register):
    """Register the LIEML family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="lieml",
            estimator=LIEML,
            citation=CITATION,
            parts=PARTS,
            param_grid=DEFAULT_GRID,
            description=(
                "LIEML: logical labels enhanced to numerical ones on a low-rank stacked matrix (FPC), "
                "then a multi-output SVR with a sign term (IRWLS)"
            ),
        )
    )
    register(
        MethodSpec(
            name="lieml_raw",
            estimator=LIEMLRawLabels,
            citation=CITATION,
            parts=RAW_PARTS,
            param_grid=RAW_GRID,
            description="LIEML's regressor on the logical labels, without label enhancement (the ablation)",
        )
    )


#: Where ``solver="auto"`` tries this family's solvers (the core's: cd 10, smo 20, irwls 30, lbfgs 40,
#: alternating 50; multilabel_core.composition).
AUTO_ORDER = {'lieml_irwls': 31}


@multilabel_core.hookimpl
def register_components(register):
    """Register the LIEML family's components (the hook :func:`~multilabel_core.hookspecs.register_components`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's parts, a
        :class:`~multilabel_core.registry.ComponentSpec`.
    """
    for kind, name, factory in (
        ("relation", "label_enhancement", LowRankEnhancement),
        ("solver", "lieml_irwls", LIEMLSolver),
    ):
        register(
            ComponentSpec(
                kind, name, factory, description=factory.__doc__.strip().splitlines()[0],
                auto_order=AUTO_ORDER.get(name),
            )
        )


@multilabel_core.hookimpl
def register_trusted_types(register):
    """Register the LIEML family's types a saved model of its methods may hold (the hook :func:`~multilabel_core.hookspecs.register_trusted_types`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each class a saved model may hold
        beyond the registered estimators and components.
    """
    # A fitted LIEML keeps the record of its label enhancement (not a registered component), and a
    # per-label model fed by the enhancement keeps the fed relation that holds it.
    register(LabelEnhancement)
    register(EnhancedTargets)
    # Its record keeps the stages of fixed-point continuation, this family's engine.
    register(FPCStage)
