"""scikit-learn, imported only when a baseline that needs it is fitted.

scikit-learn is an optional dependency (the ``baselines`` extra): the family registers
its methods without importing it, so ``mlcore methods`` and everything else work
without it, and only fitting ``ovr_svc``, ``ovr_linear`` or ``classifier_chain``
needs it.
"""

from __future__ import annotations

import importlib

import numpy as np

from multilabel_core.validation import check_random_state

__all__ = ["EXTRA", "import_sklearn", "seeds"]

#: How to install what the scikit-learn baselines need.
EXTRA = "pip install 'multilabel-core[baselines]'"


def import_sklearn(module: str, method: str):
    """``sklearn.<module>``, or an ImportError naming the extra that provides it."""
    try:
        return importlib.import_module(f"sklearn.{module}")
    except ImportError:
        raise ImportError(f"the {method} baseline needs scikit-learn: {EXTRA}") from None


def seeds(random_state, n: int) -> list[int]:
    """``n`` integer seeds for scikit-learn models, drawn from our ``random_state``."""
    return [int(seed) for seed in check_random_state(random_state).integers(0, 2**31 - 1, size=n, dtype=np.int64)]
