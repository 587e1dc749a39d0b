"""The ``br`` family: binary relevance, the independent-labels baseline.

Registered through the ``multilabel_core.plugins`` entry point ``br``, exactly like a
third-party plugin.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import MethodSpec

from .estimator import PARTS, SOLVERS, BinaryRelevance

__all__ = ["PARTS", "SOLVERS", "BinaryRelevance", "register_methods"]


@multilabel_core.hookimpl
def register_methods(register):
    register(
        MethodSpec(
            name="br",
            estimator=BinaryRelevance,
            citation=(
                "Binary relevance: Boutell, Luo, Shen & Brown, Learning multi-label scene classification, "
                "Pattern Recognition 37(9), 2004; Tsoumakas & Katakis, Multi-label classification: an overview, "
                "IJDWM 3(3), 2007"
            ),
            parts=PARTS,
            param_grid={"C": [0.01, 0.1, 1, 10, 100]},
            description="One L2-regularised squared-hinge linear SVM per label (LIBLINEAR's L2-SVM), labels independent",
        )
    )
