"""multilabel_core: max-margin multi-label learning that learns how labels relate.

Methods are composed of a Loss, a Regularizer, a LabelRelation, a Kernel and a Solver
(:mod:`multilabel_core.base`); the papers' methods are plugins (``plugins/``) found
through the ``multilabel_core.plugins`` entry-point group, like third-party ones.

>>> import multilabel_core as mlc
>>> mlc.list_methods()                         # doctest: +SKIP
>>> model = mlc.make_method("br", C=1.0).fit(X, Y)  # doctest: +SKIP

Public names are imported lazily so that ``import multilabel_core`` (and the CLI)
starts fast; ``__all__`` lists them all.
"""

from __future__ import annotations

import importlib

from .hookspecs import hookimpl

__version__ = "0.1.0"

_LAZY = {
    # plugin system
    "list_methods": "plugins",
    "make_method": "plugins",
    "get_method": "plugins",
    "list_components": "plugins",
    "make_component": "plugins",
    "list_datasets": "plugins",
    "get_plugin_manager": "plugins",
    "reset_plugin_manager": "plugins",
    "PluginError": "plugins",
    "PluginWarning": "plugins",
    "MethodSpec": "registry",
    "ComponentSpec": "registry",
    "DatasetSpec": "registry",
    # interfaces
    "Loss": "base",
    "Regularizer": "base",
    "LabelRelation": "base",
    "Kernel": "base",
    "Solver": "base",
    "Problem": "base",
    "Solution": "base",
    "CapabilityError": "base",
    "Certificate": "certificate",
    # stock components
    "Hinge": "losses",
    "SquaredHinge": "losses",
    "PairwiseRankingHinge": "losses",
    "Logistic": "losses",
    "EpsilonInsensitive": "losses",
    "Frobenius": "regularizers",
    "LabelCovariance": "regularizers",
    "LowRank": "regularizers",
    "NuclearNorm": "regularizers",
    "Independent": "relations",
    "LearnedCovariance": "relations",
    "LinearKernel": "kernels",
    "RBFKernel": "kernels",
    "PolynomialKernel": "kernels",
    "PrecomputedKernel": "kernels",
    "make_kernel": "kernels",
    "LBFGSSolver": "solvers",
    "CDSolver": "solvers",
    "AlternatingSolver": "solvers",
    "SMOSolver": "solvers",
    "smo_solve": "solvers",
    "linear_svm_cd": "solvers",
    "box_kernel_cd": "solvers",
    "ranking_cd": "solvers",
    "svmplus_cd": "solvers",
    "ConvergenceWarning": "solvers",
    # estimators
    "MultiLabelEstimator": "estimator",
    "ComposedEstimator": "estimator",
    "NotFittedError": "estimator",
    "save_model": "persistence",
    "load_model": "persistence",
}

__all__ = sorted([*_LAZY, "hookimpl", "__version__"])


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'multilabel_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
