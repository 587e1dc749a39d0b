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
import importlib.machinery
import os

__version__ = "0.1.0"

#: The compiled (Cython) modules, by dotted name under the package.
COMPILED_EXTENSIONS = (
    "_ranking",
    "_sparse_gram",
    "solvers._cd",
    "solvers._kernel_cache",
    "solvers._smo",
)


def _missing_extensions(package_dir: str) -> list[str]:
    """The compiled modules with no file for this interpreter under ``package_dir``.

    Looks at file names only (a directory listing per folder), so that ``import
    multilabel_core`` stays cheap and imports none of them.
    """
    listings: dict[str, set[str]] = {}
    missing = []
    for name in COMPILED_EXTENSIONS:
        *folders, module = name.split(".")
        folder = os.path.join(package_dir, *folders)
        if folder not in listings:
            try:
                listings[folder] = set(os.listdir(folder))
            except OSError:
                listings[folder] = set()
        if not any(module + suffix in listings[folder] for suffix in importlib.machinery.EXTENSION_SUFFIXES):
            missing.append(name)
    return missing


def _check_build(package_dir: str) -> None:
    """ImportError when the compiled modules are missing: say why and how to fix it, once.

    The usual cause is Python started at the root of a checkout after ``pip install .``:
    the checkout's unbuilt ``multilabel_core/`` shadows the installed one.
    """
    missing = _missing_extensions(package_dir)
    if not missing:
        return
    names = ", ".join(f"multilabel_core.{name}" for name in missing)
    root = os.path.dirname(package_dir)
    if os.path.isfile(os.path.join(root, "pyproject.toml")):
        raise ImportError(
            f"multilabel_core is being imported from a source tree that has not been built ({package_dir}): "
            f"the compiled extensions ({names}) are missing for this Python. Either build in place: "
            f"`pip install -e .` (or `python setup.py build_ext --inplace`) in {root}, or run Python from "
            f"another directory so that the installed package is imported."
        )
    raise ImportError(
        f"multilabel_core at {package_dir} has no compiled extensions for this Python ({names}): "
        f"the installation is incomplete or was built for another Python; reinstall it "
        f"(`pip install --force-reinstall multilabel-core`)."
    )


_check_build(os.path.dirname(os.path.abspath(__file__)))

from .hookspecs import hookimpl  # noqa: E402  (after the build check, which must come first)

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
    "Fit": "base",
    "CapabilityError": "base",
    "Threshold": "base",
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
    "ZeroThreshold": "thresholds",
    "FixedThreshold": "thresholds",
    "TunedF1": "thresholds",
    "TunedMicroF1": "thresholds",
    "TunedMacroF1": "thresholds",
    "RankCut": "thresholds",
    "ProportionalCut": "thresholds",
    "LBFGSSolver": "solvers",
    "CDSolver": "solvers",
    "AlternatingSolver": "solvers",
    "SMOSolver": "solvers",
    "smo_solve": "solvers",
    "linear_svm_cd": "solvers",
    "box_kernel_cd": "solvers",
    "ConvergenceWarning": "exceptions",
    # estimators
    "MultiLabelEstimator": "estimator",
    "ComposedEstimator": "estimator",
    "Preprocessed": "preprocessed",
    "CalibratedMultiLabel": "calibration",
    "NotFittedError": "exceptions",
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
