"""The max-margin concept network with label- and pair-specific kernels (Zhang, Xue, Fan, Huang, Wu & Liu).

Registered through the ``multilabel_core.plugins`` entry point ``concept_network``: the method
``concept_network`` (:class:`~.estimator.ConceptNetwork`) and the label relation of the same name
(:class:`~.graph.ConceptNetworkRelation`, the co-occurrence graph).  docs/methods/concept-network.md
describes the model, the derived dual, the kernel learning, Nystrom, inference and the reproduction.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import ComponentSpec, MethodSpec

from .estimator import PARTS, ConceptNetwork, InferenceWarning, concept_inference
from .graph import ConceptGraph, ConceptNetworkRelation, concept_graph, edge_statistic
from .inference import InferenceResult, global_score, infer
from .kernels import EigenBasis, LearnedKernels, learn_kernels, top_eigenpairs
from .solver import ClippingWarning, ConceptNetworkSolver, local_features, site_dual_coef

__all__ = [
    "CITATION",
    "DEFAULT_GRID",
    "PARTS",
    "ClippingWarning",
    "ConceptGraph",
    "ConceptNetwork",
    "ConceptNetworkRelation",
    "ConceptNetworkSolver",
    "EigenBasis",
    "InferenceResult",
    "InferenceWarning",
    "LearnedKernels",
    "concept_graph",
    "concept_inference",
    "edge_statistic",
    "global_score",
    "infer",
    "learn_kernels",
    "local_features",
    "register_components",
    "register_methods",
    "register_trusted_types",
    "site_dual_coef",
    "top_eigenpairs",
]

CITATION = (
    "Zhang, Xue, Fan, Huang, Wu & Liu, Multi-Kernel Multi-Label Learning with Max-Margin Concept Network, IJCAI 2011"
)

#: The registered grid (the runner searches it by inner cross-validation on the training part): lambda over
#: two decades, sigma from "no network" (0) to equal weight, and three thresholds P0 (on the scene training
#: split the statistic never exceeds 0.057, so only P0 = 0.02 and 0.05 give it edges).  Why these values:
#: docs/methods/concept-network.md, "Defaults and grid".
DEFAULT_GRID = {
    "C": [0.1, 1.0, 10.0],
    "sigma": [0.0, 0.1, 0.5, 1.0],
    "edge_threshold": [0.02, 0.05, 0.1],
}


@multilabel_core.hookimpl
def register_methods(register):
    """Register the concept network family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="concept_network",
            estimator=ConceptNetwork,
            citation=CITATION,
            parts=PARTS,
            param_grid=DEFAULT_GRID,
            description=(
                "Max-margin concept network: per-label SVMs on learned label and label-pair kernels, "
                "labels inferred jointly by ICM"
            ),
        )
    )


#: Where ``solver="auto"`` tries this family's solvers (the core's: cd 10, smo 20, irwls 30, lbfgs 40,
#: alternating 50; multilabel_core.composition).
AUTO_ORDER = {'concept_network_cd': 15}


@multilabel_core.hookimpl
def register_components(register):
    """Register the concept network family's components (the hook :func:`~multilabel_core.hookspecs.register_components`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's parts, a
        :class:`~multilabel_core.registry.ComponentSpec`.
    """
    for kind, name, factory in (
        ("relation", "concept_network", ConceptNetworkRelation),
        ("solver", "concept_network_cd", ConceptNetworkSolver),
    ):
        register(
            ComponentSpec(
                kind, name, factory, description=factory.__doc__.strip().splitlines()[0],
                auto_order=AUTO_ORDER.get(name),
            )
        )


@multilabel_core.hookimpl
def register_trusted_types(register):
    """Register the concept network family's types a saved model of its methods may hold (the hook :func:`~multilabel_core.hookspecs.register_trusted_types`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each class a saved model may hold
        beyond the registered estimators and components.
    """
    # A fitted ConceptNetwork keeps these records of its fit (none is a registered component).
    for cls in (ConceptGraph, EigenBasis, LearnedKernels):
        register(cls)
