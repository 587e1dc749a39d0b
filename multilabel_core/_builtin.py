"""The core's own plugin: the stock components and the known dataset sources.

The plugin manager registers this module first, under the name ``multilabel_core``,
through the same hooks every other plugin implements.  The component modules are
imported inside the hooks, so that ``import multilabel_core.plugins`` stays cheap and
a lookup only pays for what it asks.
"""

from __future__ import annotations

from .hookspecs import hookimpl
from .registry import ComponentSpec


#: Where ``solver="auto"`` tries the core's solvers (lower first): the per-label dual CD is the
#: fastest where it applies (a diagonal label coupling and an SVM-type dual), SMO next (coupled
#: hinge duals, kernels), IRWLS for the epsilon-insensitive MSVR, L-BFGS for any smooth linear
#: primal, FISTA for a smooth loss plus a regulariser with a prox (what L-BFGS refuses: L1, L2,1,
#: the nuclear norm, the label-similarity quadratic), and the alternating driver last (a learned
#: relation, its model steps by the same rule).
AUTO_ORDER = {"cd": 10, "smo": 20, "irwls": 30, "lbfgs": 40, "fista": 42, "alternating": 50}


@hookimpl
def register_components(register):
    from . import kernel_approximation, kernels, losses, regularizers, relations, solvers, thresholds

    # The kernel names are the values of the estimators' ``kernel`` parameter.
    stock = {
        "loss": {
            "hinge": losses.Hinge,
            "squared_hinge": losses.SquaredHinge,
            "pairwise_ranking_hinge": losses.PairwiseRankingHinge,
            "logistic": losses.Logistic,
            "epsilon_insensitive": losses.EpsilonInsensitive,
            "least_squares": losses.LeastSquares,
        },
        "regularizer": {
            "frobenius": regularizers.Frobenius,
            "label_covariance": regularizers.LabelCovariance,
            "frobenius_label_covariance": regularizers.FrobeniusLabelCovariance,
            "low_rank": regularizers.LowRank,
            "nuclear_norm": regularizers.NuclearNorm,
            "l1": regularizers.L1,
            "l21": regularizers.L21,
            "elastic_net": regularizers.ElasticNet,
            "label_similarity": regularizers.LabelSimilarity,
            "sum": regularizers.Sum,
        },
        "relation": {
            "independent": relations.Independent,
            "learned_covariance": relations.LearnedCovariance,
        },
        "kernel": {
            "linear": kernels.LinearKernel,
            "rbf": kernels.RBFKernel,
            "poly": kernels.PolynomialKernel,
            "precomputed": kernels.PrecomputedKernel,
            "nystroem": kernel_approximation.NystroemKernel,
            "rff": kernel_approximation.RandomFourierKernel,
        },
        "solver": {
            "lbfgs": solvers.LBFGSSolver,
            "cd": solvers.CDSolver,
            "smo": solvers.SMOSolver,
            "alternating": solvers.AlternatingSolver,
            "irwls": solvers.IRWLSSolver,
            "fista": solvers.ProximalGradientSolver,
        },
        # The values of every method's ``thresholding`` parameter.
        "threshold": dict(thresholds.STOCK),
    }
    for kind, factories in stock.items():
        for name, factory in factories.items():
            register(
                ComponentSpec(kind, name, factory, description=_summary(factory), auto_order=AUTO_ORDER.get(name))
            )


@hookimpl
def register_trusted_types(register):
    # What fitted estimators hold besides their parts: the solver's result records, the
    # certificates, the generic composed estimator (which no method registers) and the scaling
    # wrapper with its scalers.
    from .base import Fit, RelationState, Solution, WarmState
    from .certificate import Certificate
    from .estimator import ComposedEstimator
    from .experiments.preprocessing import PREPROCESSORS
    from .preprocessed import Preprocessed

    for cls in (Certificate, Fit, Solution, WarmState, RelationState, ComposedEstimator, Preprocessed,
                *PREPROCESSORS.values()):
        register(cls)


@hookimpl
def register_datasets(register):
    from .datasets.sources import SOURCES

    for spec in SOURCES:
        register(spec)


def _summary(obj) -> str:
    """The first line of ``obj``'s docstring."""
    doc = (obj.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""
