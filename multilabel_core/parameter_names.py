"""One name, one meaning: the glossary of the registered methods' parameters.

Every parameter of every registered method (:func:`multilabel_core.list_methods`, the
estimators' ``get_params``) has exactly one entry in :data:`GLOSSARY`: its meaning, and a
pattern that the method's own numpydoc description of the parameter must match.  The
pattern is what makes a second meaning visible: a method that documents ``gamma`` as
anything but a kernel width, or ``k`` as anything but a neighbour count, fails
``tests/test_parameter_names.py``.  :func:`parameter_table` renders the glossary with the
methods that take each name; docs/estimators.md holds its output between markers, and the
same test regenerates and compares it.

A public name that had to change keeps its old spelling for one release: the old parameter
stays in ``__init__`` with the default :data:`DEPRECATED` (so ``get_params`` and
``clone`` keep working, scikit-learn's convention) and :func:`renamed_parameter` maps it in
``fit`` with a :class:`FutureWarning` naming the new one.  :data:`RENAMED` lists them.
"""

from __future__ import annotations

import inspect
import warnings
from typing import NamedTuple

__all__ = [
    "DEPRECATED",
    "GLOSSARY",
    "RENAMED",
    "RENAMED_ARGUMENTS",
    "Meaning",
    "Renamed",
    "parameter_table",
    "renamed_argument",
    "renamed_parameter",
]

#: Default of a renamed parameter's old spelling: "not given".
DEPRECATED = "deprecated"


class Meaning(NamedTuple):
    """The one meaning of a parameter name.

    Parameters
    ----------
    text : str
        What the name means, for the table (markdown).
    pattern : str
        A regular expression (case-insensitive) that every method's numpydoc description of
        the parameter must match: the words any description of this meaning uses.
    """

    text: str
    pattern: str


#: name -> its one meaning, for every parameter of every registered method.
GLOSSARY: dict[str, Meaning] = {
    "C": Meaning("weight of the loss (the slacks) against the regulariser; of the base classifier in the baselines",
                 r"weight|\bC\b|slack"),
    "accelerate": Meaning("momentum with adaptive restart on fixed-point steps (same fixed point)", r"momentum"),
    "alpha": Meaning("the paper's alpha: weight of the label-correlation term", r"weight"),
    "base": Meaning("the base learner, named (a classifier of each link, or a method fitted on each part)",
                    r"classifier|method|model"),
    "base_params": Meaning("parameters of the base learner given by name", r"parameter"),
    "beta": Meaning("the paper's beta: weight of the sparsity term", r"weight"),
    "bootstrap": Meaning("fit each ensemble member on a bootstrap sample of the rows", r"bootstrap"),
    "cache_size": Meaning("memory for the kernel matrix or its cached columns, in MB", r"\bMB\b"),
    "cd_max_iter": Meaning("iteration limit (epochs) of the dual coordinate-descent sub-solves",
                           r"epoch|iteration"),
    "cd_tol": Meaning("tolerance (relative duality gap) of the dual coordinate-descent sub-solves", r"gap|tolerance"),
    "classifier": Meaning("the base learner as a scikit-learn classifier object (None: the default one)",
                          r"classifier|model"),
    "coef0": Meaning("constant term of the polynomial and sigmoid kernels", r"constant"),
    "communities": Meaning("how labels are partitioned into communities, or the parts themselves",
                           r"modularity|part"),
    "degree": Meaning("degree of the polynomial kernel", r"degree"),
    "edge_threshold": Meaning("P0: the statistic above which two labels are joined by an edge of the concept network",
                              r"P0|edge"),
    "edge_tradeoff": Meaning("Upsilon: weight of an edge's label term in its learned kernel, in relative units",
                             r"upsilon|tradeoff|edge"),
    "eig_rtol": Meaning("relative cut below which eigenpairs of the base kernel are dropped", r"eigen"),
    "eps": Meaning("epsilon of the concept network's potentials: the weight of a negative label", r"weight|pi"),
    "eps_edge": Meaning("epsilon' of the concept network's potentials: the weight of a disagreeing pair",
                        r"weight|pi"),
    "epsilon": Meaning("radius of the epsilon-insensitive tube of a regression loss", r"insensitive|tube"),
    "eta_mu": Meaning("ratio by which the continuation parameter mu shrinks at each stage", r"continuation|mu"),
    "fit_intercept": Meaning("a per-label bias", r"bias"),
    "form": Meaning("the form of the label-correlation matrix R", r"\bR\b"),
    "fpc_max_iter": Meaning("iteration limit of fixed-point continuation (shrinkage steps)", r"shrinkage|steps"),
    "gamma": Meaning("kernel width: the RBF (polynomial, sigmoid) kernel's gamma; None: the kernel's default "
                     "(RBF: from the mean pairwise distance of the training rows)", r"kernel|RBF|width"),
    "gamma1": Meaning("the paper's gamma_1: weight of the first penalty of the objective (not a kernel width)",
                      r"weight"),
    "gamma2": Meaning("the paper's gamma_2: weight of the second penalty of the objective (not a kernel width)",
                      r"weight"),
    "inference": Meaning("how labels are inferred jointly from the learned potentials", r"ICM|infer"),
    "init": Meaning("how the first iterate of an alternation is chosen", r"first|start|init"),
    "k": Meaning("number of nearest neighbours per row", r"neighbou?r"),
    "kernel": Meaning("the kernel, by name (a registered kernel; `ovr_svc`: scikit-learn SVC's kernel names) or as "
                      "a Kernel object", r"kernel"),
    "lam": Meaning("the paper's lambda: weight of a regularisation term (in MLRL, BSVM and trace_ls the "
                   "inverse role of C)", r"lambda|weight"),
    "lam1": Meaning("the paper's lambda_1: weight of the first regularisation term", r"lambda|weight"),
    "lam2": Meaning("the paper's lambda_2: weight of the second regularisation term", r"lambda|weight"),
    "labelset_size": Meaning("labels per random subset (RAkEL's k)", r"labels per subset|subset"),
    "max_iter": Meaning("iteration limit of the method's solver or outer loop (the method's docstring says which); "
                        "None: its default", r"iteration|epoch|step|round|most|limit|cap"),
    "max_sweeps": Meaning("cap on the inference sweeps per row", r"sweep"),
    "model": Meaning("which scikit-learn linear model each label is fitted with", r"LinearSVC|logistic"),
    "mu": Meaning("strength of the label-covariance prior (0: no coupling of the labels)", r"covariance|prior"),
    "mu_min": Meaning("the smallest value of the continuation parameter mu", r"continuation|mu"),
    "n_chains": Meaning("number of classifier chains in the ensemble", r"chain"),
    "n_components": Meaning("number of eigenpairs (components) of a kernel approximation", r"eigen|component"),
    "n_features": Meaning("m: features in each subset of the feature-selecting cutting plane", r"feature"),
    "n_jobs": Meaning("threads inside one fit (-1: every core; None: the thread budget the caller leaves)",
                      r"thread|core"),
    "n_privileged": Meaning("how many other labels each label sees as privileged information", r"label"),
    "n_subsets": Meaning("number of overlapping label subsets (RAkEL-o)", r"subset"),
    "order": Meaning("order of the labels along a classifier chain", r"order"),
    "overlap": Meaning("whether the label subsets may overlap (RAkEL-o) or are disjoint (RAkEL-d)", r"overlap|disjoint"),
    "privileged_bias": Meaning("a constant feature appended to the privileged information", r"constant|bias"),
    "random_state": Meaning("seed (None, int, numpy Generator, SeedSequence or RandomState)", r"seed"),
    "rank": Meaning("rank of the low-rank label embedding: an int, or a fraction of the labels", r"embedding|rank"),
    "s": Meaning("smoothing of the prior and likelihood estimates", r"smoothing"),
    "scores": Meaning("what an ensemble's label scores are made of (votes, probabilities or decision values)",
                      r"score|vote|probabilit"),
    "sigma": Meaning("weight of the edge potentials of the concept network", r"weight"),
    "site_tradeoff": Meaning("gamma_l: weight of a label's term in its learned kernel, in relative units",
                             r"tradeoff|gamma_l|label term"),
    "smo_tol": Meaning("SMO's stopping tolerance (LIBSVM's eps) in each outer step", r"SMO|tolerance"),
    "solver": Meaning("the registered solver a method solves its problem with", r"solver|descent|L-BFGS"),
    "stage_tol": Meaning("tolerance that ends a stage of the continuation", r"stage"),
    "sub_solver": Meaning("how the sub-problems of an alternation are solved", r"sub-problem|sub-solve|solved"),
    "svt": Meaning("how singular value thresholding is computed", r"shrinkage|singular"),
    "threshold": Meaning("the regressors of the learned set-size threshold t(x) (the ranking family's "
                         "``learned_linear``)", r"regressor|t\(x\)"),
    "threshold_cv": Meaning("folds of the out-of-fold scores the set-size threshold t(x) is fitted on",
                            r"fold"),
    "thresholding": Meaning("the threshold part: how scores become labels (a registered threshold name or a "
                            "Threshold object)", r"threshold"),
    "tol": Meaning("stopping tolerance of the method's solver or outer loop (the method's docstring says what it "
                   "bounds); None: its default", r"tol|gap|stop|converge"),
    "warm_start": Meaning("start from the previous fit's solution (the model does not depend on it)", r"previous"),
    "weighted": Meaning("whether label co-occurrence edges carry counts", r"weight|count"),
}


class Renamed(NamedTuple):
    """A public parameter renamed with a deprecation alias.

    Parameters
    ----------
    estimator : str
        The estimator class's name.
    old : str
        The deprecated name, accepted with a FutureWarning for one release.
    new : str
        The name that replaced it.
    reason : str
        Why the old name had to go (the other meaning it collided with), for the table.
    """

    estimator: str
    old: str
    new: str
    reason: str


#: The renamed parameters: the old spelling is accepted, with a FutureWarning, for one release.
RENAMED: tuple[Renamed, ...] = (
    Renamed("RAkEL", "k", "labelset_size", "``k`` is the neighbour count of the k-NN methods"),
    Renamed("PrML", "k", "rank", "``k`` is the neighbour count of the k-NN methods"),
    Renamed("LEML", "k", "rank", "``k`` is the neighbour count of the k-NN methods"),
    Renamed("ConceptNetwork", "threshold", "edge_threshold",
            "``threshold`` is the ranking family's set-size threshold regressors"),
)

#: Renamed arguments of solver functions and components (not estimators): old -> new, by owner.
RENAMED_ARGUMENTS: tuple[Renamed, ...] = (
    Renamed("smo_solve", "cache_size_mb", "cache_size", "the methods' ``cache_size`` is the same memory, in MB"),
    Renamed("SMOSolver", "cache_size_mb", "cache_size", "the methods' ``cache_size`` is the same memory, in MB"),
)


def renamed_parameter(estimator, old: str, new: str, *, warn: bool = True):
    """Return the value of parameter ``new``, or of its deprecated old spelling ``old`` when that was given.

    Parameters
    ----------
    estimator : object
        The estimator whose parameters are read (``getattr``).
    old : str
        The deprecated name; :data:`DEPRECATED` is its "not given" default.
    new : str
        The name that replaced it.
    warn : bool, default True
        Issue the FutureWarning (once per fit: at validation; the fit's later reads pass False).

    Returns
    -------
    object
        ``estimator.old`` when it was given (a :class:`FutureWarning` names ``new``), else
        ``estimator.new``.

    Raises
    ------
    ValueError
        When both are given and ``new`` differs from its default: the two would disagree.
    """
    value = getattr(estimator, old)
    if isinstance(value, str) and value == DEPRECATED:
        return getattr(estimator, new)
    name = type(estimator).__name__
    default = inspect.signature(type(estimator).__init__).parameters[new].default
    current = getattr(estimator, new)
    if not (current is default or (type(current) is type(default) and current == default)):
        raise ValueError(
            f"{name}: {old}={value!r} and {new}={current!r} were both given; {old!r} is the deprecated "
            f"name of {new!r}: pass only {new}"
        )
    if warn:
        warnings.warn(
            f"{name}: the parameter {old!r} was renamed {new!r}; pass {new}={value!r} ({old!r} is accepted for "
            f"this release only)",
            FutureWarning,
            stacklevel=2,
        )
    return value


def renamed_argument(owner: str, old: str, new: str, old_value, new_value, new_default):
    """Return the value of argument ``new`` of a function or component, or of its deprecated spelling ``old``.

    :func:`renamed_parameter` for what is not an estimator: a solver function's keyword or an
    attrs component's field, whose values the caller holds.

    Parameters
    ----------
    owner : str
        The function or class the argument belongs to, for the messages.
    old, new : str
        The deprecated name and the name that replaced it.
    old_value : object
        The value given under ``old``; :data:`DEPRECATED` when it was not given.
    new_value : object
        The value given under ``new``.
    new_default : object
        ``new``'s default: a value other than it, given beside ``old``, is a conflict.

    Returns
    -------
    object
        ``old_value`` when it was given (a :class:`FutureWarning` names ``new``), else ``new_value``.

    Raises
    ------
    ValueError
        When both are given with ``new`` away from its default.
    """
    if isinstance(old_value, str) and old_value == DEPRECATED:
        return new_value
    if not (new_value is new_default or (type(new_value) is type(new_default) and new_value == new_default)):
        raise ValueError(
            f"{owner}: {old}={old_value!r} and {new}={new_value!r} were both given; {old!r} is the deprecated "
            f"name of {new!r}: pass only {new}"
        )
    warnings.warn(
        f"{owner}: the argument {old!r} was renamed {new!r}; pass {new}={old_value!r} ({old!r} is accepted for "
        f"this release only)",
        FutureWarning,
        stacklevel=3,
    )
    return old_value


def _own_methods() -> list:
    """The registered methods of this distribution (core and bundled plugins), not a third party's."""
    from multilabel_core.plugins import list_methods

    return [spec for spec in list_methods() if spec.estimator.__module__.split(".")[0].startswith("multilabel_core")]


def _method_parameters() -> dict[str, list[str]]:
    """Parameter name -> the registered methods that take it (deprecated spellings left out)."""
    takers: dict[str, list[str]] = {}
    for spec in _own_methods():
        for name, value in spec.estimator().get_params(deep=False).items():
            if isinstance(value, str) and value == DEPRECATED:
                continue
            takers.setdefault(name, []).append(spec.name)
    return takers


def parameter_table() -> str:
    """Build the markdown table of every registered method's parameters: name, meaning, methods.

    The methods are this distribution's (the core's and the bundled plugins'); a third-party
    plugin's are its author's to document.

    Returns
    -------
    str
        The table (names sorted case-insensitively, methods in registry order), then a
        table of the renamed parameters; docs/estimators.md holds it between the markers
        ``<!-- parameter-table -->`` and ``<!-- /parameter-table -->``.

    Raises
    ------
    KeyError
        Naming the parameters of registered methods that :data:`GLOSSARY` does not define.
    """
    takers = _method_parameters()
    missing = sorted(set(takers) - set(GLOSSARY))
    if missing:
        raise KeyError(f"parameters with no meaning in multilabel_core.parameter_names.GLOSSARY: {missing}")
    lines = ["| name | meaning | methods |", "| --- | --- | --- |"]
    for name in sorted(takers, key=lambda n: (n.lower(), n)):
        methods = takers[name]
        shown = f"all {len(methods)} methods" if len(methods) == len(_all_methods()) else ", ".join(
            f"`{m}`" for m in methods)
        lines.append(f"| `{name}` | {GLOSSARY[name].text} | {shown} |")
    lines += ["", "Renamed, the old name accepted with a `FutureWarning` for one release:", "",
              "| where | old name | new name | why |", "| --- | --- | --- | --- |"]
    lines += [f"| `{r.estimator}` | `{r.old}` | `{r.new}` | {r.reason} |" for r in RENAMED + RENAMED_ARGUMENTS]
    return "\n".join(lines) + "\n"


def _all_methods() -> list[str]:
    return [spec.name for spec in _own_methods()]

