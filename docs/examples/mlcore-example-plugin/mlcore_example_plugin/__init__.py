"""An out-of-tree multilabel_core plugin: registers the method ``ridge_br``.

multilabel_core finds this module through the entry point declared in this
distribution's pyproject.toml and calls its hook implementations.
"""

import multilabel_core
from multilabel_core import MethodSpec

from .ridge import RidgeBR

__all__ = ["RidgeBR"]


@multilabel_core.hookimpl
def register_methods(register):
    register(
        MethodSpec(
            name="ridge_br",
            estimator=RidgeBR,
            citation=(
                "Hoerl & Kennard (1970), Ridge regression: biased estimation for nonorthogonal "
                "problems, Technometrics 12(1):55-67; applied per label (binary relevance)"
            ),
            parts={"regularizer": "frobenius", "relation": "independent", "kernel": "linear", "solver": "own"},
            param_grid={"alpha": [0.01, 0.1, 1.0, 10.0, 100.0]},
            description="per-label ridge regression on {-1,+1} targets, closed form",
        )
    )
