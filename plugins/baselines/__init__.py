"""The ``baselines`` family: what users would run instead of the papers' methods.

The papers compared their methods with weak baselines; a user compares them with what
the ecosystem offers.  This family registers those methods like any plugin (through the
``multilabel_core.plugins`` entry point ``baselines``), so every comparison can include
them under the same splits, and the reports test every method against the best of them
(docs/reports.md):

- ``ovr_svc``: one scikit-learn ``SVC`` per label (LIBSVM's kernel SVM);
- ``ovr_linear``: one ``LinearSVC`` or liblinear ``LogisticRegression`` per label;
- ``classifier_chain``: scikit-learn's ``ClassifierChain``, or an ensemble of chains;
- ``mlknn``: ML-kNN (Zhang & Zhou 2007), written here on scipy's neighbour search;
- ``brknn_a``, ``brknn_b``: BRkNN-a and BRkNN-b (Spyromitros, Tsoumakas & Vlahavas 2008),
  binary relevance over one shared neighbour search (:mod:`.brknn`);
- ``label_partition``: communities of the label co-occurrence graph, one base method per
  part (label powerset by default), voting (:mod:`.label_partition`);
- ``label_powerset``, ``rakel`` (RAkEL-d and RAkEL-o) and ``ecc`` (bagged chains in random
  orders): the papers' own baselines, over any scikit-learn classifier (:mod:`.ensembles`).

All but ``mlknn``, ``brknn_a`` and ``brknn_b`` need scikit-learn (``pip install 'multilabel-core[baselines]'``); it is
imported when they are fitted, never by this module, so the family registers (and
``mlcore methods`` lists it) without it.  docs/methods/baselines.md describes them.
"""

from __future__ import annotations

import multilabel_core
from multilabel_core.registry import MethodSpec

# ovr_linear is LIBLINEAR's L2-SVM per label, the model of br, and its inner-CV scores match br's
# on emotions, yeast and scene: it searches br's grid (docs/methods/br.md, "Default grid").
from ..br import C_GRID as _LINEAR_C_GRID
from .brknn import BRkNN, BRkNNa, BRkNNb
from .chain import ClassifierChains
from .ensembles import EnsembleClassifierChains, LabelPowerset, Powerset, RAkEL
from .label_partition import LabelSpacePartitioning
from .mlknn import MLkNN
from .ovr import OneVsRestLinear, OneVsRestSVC

__all__ = [
    "PLUGIN",
    "BRkNN",
    "BRkNNa",
    "BRkNNb",
    "ClassifierChains",
    "EnsembleClassifierChains",
    "LabelPowerset",
    "LabelSpacePartitioning",
    "MLkNN",
    "OneVsRestLinear",
    "OneVsRestSVC",
    "RAkEL",
    "register_methods",
]

#: The plugin name the family registers under (its entry-point name): the reports know
#: a method as an ecosystem baseline by it.
PLUGIN = "baselines"

_C_GRID = [0.01, 0.1, 1, 10, 100]
# Neighbours searched for BRkNN: a fit only stores the rows (a lazy learner) and one prediction
# costs about one neighbour search, so the grid can be wider than mlknn's, down to k = 3.
_KNN_GRID = [3, 5, 10, 15, 20, 30]
_BRKNN_CITATION = (
    "Spyromitros, Tsoumakas & Vlahavas, An empirical study of lazy multilabel classification algorithms, "
    "Proc. 5th Hellenic Conference on Artificial Intelligence (SETN 2008)"
)

#: Every method of the family, as registered.
METHODS = (
    MethodSpec(
        name="ovr_svc",
        estimator=OneVsRestSVC,
        citation=(
            "One-vs-rest LIBSVM C-SVC per label: Chang & Lin, LIBSVM: a library for support vector machines, "
            "ACM TIST 2(3), 2011; through scikit-learn (Pedregosa et al., JMLR 12, 2011)"
        ),
        param_grid={"C": [0.1, 1, 10, 100], "gamma": ["scale", 0.001, 0.01, 0.1]},
        description="one scikit-learn SVC (RBF, gamma='scale' by default) per label; needs scikit-learn",
    ),
    MethodSpec(
        name="ovr_linear",
        estimator=OneVsRestLinear,
        citation=(
            "One-vs-rest LIBLINEAR per label: Fan, Chang, Hsieh, Wang & Lin, LIBLINEAR: a library for large "
            "linear classification, JMLR 9, 2008; through scikit-learn"
        ),
        param_grid={"C": _LINEAR_C_GRID},
        description="one LinearSVC or liblinear LogisticRegression per label; needs scikit-learn",
    ),
    MethodSpec(
        name="classifier_chain",
        estimator=ClassifierChains,
        citation=(
            "Read, Pfahringer, Holmes & Frank, Classifier chains for multi-label classification, "
            "Machine Learning 85(3), 2011; scikit-learn's ClassifierChain"
        ),
        param_grid={"C": _C_GRID},
        description="scikit-learn ClassifierChain of logistic regressions (an ensemble optional); needs scikit-learn",
    ),
    MethodSpec(
        name="mlknn",
        estimator=MLkNN,
        citation=(
            "Zhang & Zhou, ML-KNN: a lazy learning approach to multi-label learning, Pattern Recognition 40(7), 2007"
        ),
        param_grid={"k": [5, 10, 15, 20]},
        description="multi-label k nearest neighbours with Bayesian label counts (smoothing s = 1)",
    ),
    MethodSpec(
        name="brknn_a",
        estimator=BRkNNa,
        citation=_BRKNN_CITATION,
        param_grid={"k": _KNN_GRID},
        description="binary relevance k-NN; the most confident label when no label reaches half of the neighbours",
    ),
    MethodSpec(
        name="brknn_b",
        estimator=BRkNNb,
        citation=_BRKNN_CITATION,
        param_grid={"k": _KNN_GRID},
        description="binary relevance k-NN; the s most confident labels, s the neighbours' mean label-set size",
    ),
    MethodSpec(
        name="label_partition",
        estimator=LabelSpacePartitioning,
        citation=(
            "Szymanski, Kajdanowicz & Kersting, How is a data-driven approach better than random choice in label "
            "space division for multi-label classification?, Entropy 18(8), 2016"
        ),
        param_grid={"communities": ["modularity", "label_propagation"]},
        description="label powerset (or any method) per community of the label co-occurrence graph, voting; "
        "needs scikit-learn for the default base",
    ),
    MethodSpec(
        name="label_powerset",
        estimator=LabelPowerset,
        citation=(
            "Tsoumakas & Katakis, Multi-label classification: an overview, International Journal of Data "
            "Warehousing and Mining 3(3), 2007"
        ),
        param_grid={"C": _C_GRID},
        description="each distinct label set one class of a scikit-learn classifier (logistic regression); needs scikit-learn",
    ),
    MethodSpec(
        name="rakel",
        estimator=RAkEL,
        citation=(
            "Tsoumakas, Katakis & Vlahavas, Random k-labelsets for multilabel classification, IEEE TKDE 23(7), 2011"
        ),
        param_grid={"C": _C_GRID},
        description="label powersets on random k-label subsets (RAkEL-d; overlap=True for RAkEL-o), k = 3; needs scikit-learn",
    ),
    MethodSpec(
        name="ecc",
        estimator=EnsembleClassifierChains,
        citation=(
            "Read, Pfahringer, Holmes & Frank, Classifier chains for multi-label classification, "
            "Machine Learning 85(3), 2011 (ensembles of classifier chains)"
        ),
        param_grid={"C": _C_GRID},
        description="10 classifier chains on bootstrap samples in random orders, voting; needs scikit-learn",
    ),
)


@multilabel_core.hookimpl
def register_methods(register):
    """Register the baseline family's methods (the hook :func:`~multilabel_core.hookspecs.register_methods`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each of the family's methods, a
        :class:`~multilabel_core.registry.MethodSpec`.
    """
    for spec in METHODS:
        register(spec)


@multilabel_core.hookimpl
def register_trusted_types(register):
    """Register the baseline family's types a saved model of its methods may hold (the hook :func:`~multilabel_core.hookspecs.register_trusted_types`).

    Parameters
    ----------
    register : callable
        The registry's callback: called once with each class a saved model may hold
        beyond the registered estimators and components.
    """
    # A fitted label powerset (of LP and of each RAkEL subset) keeps its label sets in one.
    register(Powerset)
