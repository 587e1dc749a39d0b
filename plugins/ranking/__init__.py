"""The label-ranking family: LaRank SVM, CLaRank SVM, MLFS and CMLFS (Gu, Li & Han, CIKM 2011).

Registered through the ``multilabel_core.plugins`` entry point ``ranking``: the methods
``larank``, ``clarank``, ``mlfs``, ``cmlfs``, and the solvers they compose --
``ranking_cd`` (Algorithm 1), ``ranking_alternating`` (CLaRank's alternation: the core's
AlternatingSolver over Algorithm 1) and ``cutting_plane`` (Algorithm 2), and the threshold
``learned_linear`` (section 3.8's set-size threshold t(x), :class:`LearnedLinearThreshold`).  Their regulariser
``frobenius_label_covariance`` is the core's (re-exported here).
docs/methods/ranking.md describes the formulation, the algorithms and the grids.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import ComponentSpec, MethodSpec

from multilabel_core.regularizers import FrobeniusLabelCovariance

from .cd_solver import RankingCDSolver, ranking_alternating
from .cutting_plane import CuttingPlaneSolver
from .estimators import CMLFS, MLFS, PARTS, CLaRankSVM, LaRankSVM
from .kernel import SubsetKernel
from .simplex import project_simplex
from .threshold import LearnedLinearThreshold, LinearThreshold

__all__ = [
    "CITATION",
    "CMLFS",
    "DEFAULT_GRIDS",
    "MLFS",
    "PAPER_GRIDS",
    "CLaRankSVM",
    "CuttingPlaneSolver",
    "FrobeniusLabelCovariance",
    "LaRankSVM",
    "LearnedLinearThreshold",
    "RankingCDSolver",
    "SubsetKernel",
    "project_simplex",
    "ranking_alternating",
    "register_components",
    "register_methods",
    "register_trusted_types",
]

CITATION = "Gu, Li & Han, Correlated Multi-Label Feature Selection, CIKM 2011, pp. 1087-1096"

_C = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]
_MU = [1e-2, 1e-1, 1.0, 1e1, 1e2]
_M = list(range(10, 21))

#: The grids of section 4.3 (scene and yeast), searched by 5-fold cross-validation in the paper.
PAPER_GRIDS = {
    "larank": {"C": _C},
    "clarank": {"C": _C, "mu": _MU},
    "mlfs": {"C": _C, "n_features": _M},
    "cmlfs": {"C": _C, "mu": _MU, "n_features": _M},
}

#: The registered grids (docs/methods/ranking.md gives the timings behind them).  LaRank's reaches
#: one decade below the paper's: on yeast the reproduction's search chose C = 1e-3 in every split.
DEFAULT_GRIDS = {
    "larank": {"C": [1e-4, *_C]},
    "clarank": {"C": _C[1:6], "mu": _MU},
    "mlfs": {"C": _C[1:5], "n_features": [10, 20]},
    "cmlfs": {"C": _C[1:5], "mu": _MU[::2], "n_features": [10, 20]},
}

_METHODS = {
    "larank": (LaRankSVM, "LaRank SVM: Elisseeff & Weston's pairwise label-ranking SVM (eq. 1) by dual CD"),
    "clarank": (CLaRankSVM, "CLaRank SVM: label ranking with a learned label covariance D (problem 6, p = 1)"),
    "mlfs": (MLFS, "MLFS: label ranking on m selected features, cutting plane over feature subsets (Algorithm 2)"),
    "cmlfs": (CMLFS, "CMLFS: feature selection and a learned label covariance (problem 6, Algorithm 2)"),
}


@multilabel_core.hookimpl
def register_methods(register):
    """Register the label-ranking family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    for name, (estimator, description) in _METHODS.items():
        register(
            MethodSpec(
                name=name,
                estimator=estimator,
                citation=CITATION,
                parts=PARTS[name],
                param_grid=DEFAULT_GRIDS[name],
                description=description,
            )
        )


#: Where ``solver="auto"`` tries this family's solvers (the core's: cd 10, smo 20, irwls 30, lbfgs 40,
#: alternating 50; multilabel_core.composition).
AUTO_ORDER = {'ranking_cd': 25, 'ranking_alternating': 56, 'cutting_plane': 60}


@multilabel_core.hookimpl
def register_components(register):
    """Register the label-ranking family's components (the hook :func:`~multilabel_core.hookspecs.register_components`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's parts, a
        :class:`~multilabel_core.registry.ComponentSpec`.
    """
    components = {
        ("solver", "ranking_cd"): RankingCDSolver,
        ("solver", "ranking_alternating"): ranking_alternating,
        ("solver", "cutting_plane"): CuttingPlaneSolver,
        # Section 3.8's set-size threshold, the presets' default thresholding and usable by every method.
        ("threshold", "learned_linear"): LearnedLinearThreshold,
    }
    for (kind, name), factory in components.items():
        register(
            ComponentSpec(
                kind, name, factory, description=factory.__doc__.strip().splitlines()[0],
                auto_order=AUTO_ORDER.get(name),
            )
        )


@multilabel_core.hookimpl
def register_trusted_types(register):
    """Register the label-ranking family's types a saved model of its methods may hold (the hook :func:`~multilabel_core.hookspecs.register_trusted_types`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each class a saved model may hold
        beyond the registered estimators and components.
    """
    # LinearThreshold, the t(x) of section 3.8 before it became the registered LearnedLinearThreshold
    # (which is trusted as a component): still a public class, so models that hold one load.
    register(LinearThreshold)
