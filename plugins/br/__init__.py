"""The ``br`` family: binary relevance, the independent-labels baseline.

Registered through the ``multilabel_core.plugins`` entry point ``br``, exactly like a
third-party plugin.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import MethodSpec

from .estimator import PARTS, SOLVERS, BinaryRelevance

__all__ = ["C_GRID", "PARTS", "SOLVERS", "BinaryRelevance", "register_methods"]

#: The registered grid for C.  With standardised features and 5-fold runs searched by 3-fold inner
#: cross-validation on average precision, the best C was 0.01 on emotions, 1e-3 on yeast and 1e-4 on
#: scene (docs/methods/br.md, "Default grid"): the grid reaches one decade below the lowest of them so
#: that each is an interior point, and stops at 10, since C = 100 scored below C = 10 on all three
#: datasets and is the slowest fit.
C_GRID = [1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10]


@multilabel_core.hookimpl
def register_methods(register):
    """Register the binary relevance family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    register(
        MethodSpec(
            name="br",
            estimator=BinaryRelevance,
            citation=(
                "Binary relevance: Boutell, Luo, Shen & Brown, Learning multi-label scene classification, "
                "Pattern Recognition 37(9), 2004; Tsoumakas & Katakis, Multi-label classification: an overview, "
                "IJDWM 3(3), 2007"
            ),
            parts=BinaryRelevance.PARTS,
            param_grid={"C": C_GRID},
            description="One L2-regularised squared-hinge linear SVM per label (LIBLINEAR's L2-SVM), labels independent",
        )
    )
