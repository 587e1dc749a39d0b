"""Label-space partitioning: communities of the label co-occurrence graph, one model per part.

The labels are the nodes of a weighted graph in which the weight of the edge {i, j} is the
number of training rows that carry both labels (or 1 for any co-occurrence, ``weighted=False``);
a label has no edge to itself.  Its communities cut the label space into parts of labels that
go together, a base multi-label method is fitted on each part's columns, and the parts' outputs
are put back together, voting where parts overlap (Szymanski, Kajdanowicz & Kersting, *How Is a
Data-Driven Approach Better than Random Choice in Label Space Division for Multi-Label
Classification?*, Entropy 18(8), 2016: scikit-multilearn's ``LabelSpaceNetworkClusterer`` with
a ``MajorityVotingClassifier``).  With label powerset as the base (the default) each part's
label combinations are learned jointly, and the partition keeps the number of combinations of a
part far below that of the whole label set.

*Modularity.*  With W the symmetric weight matrix, 2w = sum_ij W_ij its total, d_i = sum_j W_ij
and c(i) the part of label i, the modularity of a partition (Newman & Girvan, *Finding and
evaluating community structure in networks*, Physical Review E 69, 026113, 2004, in the
weighted form of Newman, *Analysis of weighted networks*, Physical Review E 70, 056131, 2004) is

    Q = sum_ij [W_ij / (2w) - d_i d_j / (2w)^2] [c(i) = c(j)].

A graph without edges has no community structure; its Q is taken as 0 and every label is its
own part.

*Communities* (``communities=``):

* ``"modularity"`` (default): greedy agglomeration (Clauset, Newman & Moore, *Finding community
  structure in very large networks*, Physical Review E 70, 066111, 2004, without their
  heaps, which pay off only for far more nodes than labels).  Starting from one label per part,
  with e_ab = sum_{i in a, j in b} W_ij / (2w) and a_a = sum_b e_ab, merging parts a and b
  changes Q by dQ_ab = 2 (e_ab - a_a a_b); the pair of largest dQ is merged while it is
  positive.  Deterministic: of equal dQ the pair (a, b), a < b, that comes first in row order
  of the parts (numbered by their smallest label) is merged.  The result is a partition that no
  merge of two parts improves.
* ``"label_propagation"``: asynchronous label propagation (Raghavan, Albert & Kumara, *Near
  linear time algorithm to detect community structures in large-scale networks*, Physical
  Review E 76, 036106, 2007): each label starts in its own community; in sweeps
  over the labels in a random order each label joins the community of largest total edge weight
  among its neighbours (keeping its own when that is among the largest, else choosing at random
  among the largest), until a sweep changes nothing.  Seeded by ``random_state``; at most
  :data:`MAX_SWEEPS` sweeps (then a ConvergenceWarning says how many labels could still move).
* a sequence of parts (sequences of label indices): used as given; parts may overlap, and
  together they must cover every label.

*Voting.*  Each part's model votes 0/1 (its ``predict``) on each of its labels and gives a score
(its ``decision_function``, mapped into (-1, 1) by u = t / (1 + |t|)).  With M_l the parts that
hold label l, v_l the share of their votes that say relevant and ū_l the mean of their u,

    score_l = (v_l - 1/2) + ū_l / (2 (M_l + 1)).

The second term is below half a vote (|ū_l| < 1), so ``score_l > 0`` is the majority of the
parts, ties broken by the mean score; with disjoint parts (the detected communities) M_l = 1
and the prediction is the part model's own.  Scores of labels from different parts come from
different models, so a ranking across parts is only as comparable as those models' scores.

*Certificates.*  The ensemble as a whole solves no single problem (``certified = False``).
Each part's model keeps its own: :attr:`LabelSpacePartitioning.part_certificates_` lists them
(None for a base without one, such as label powerset).
"""

from __future__ import annotations

import copy
import numbers
import warnings

import numpy as np

from multilabel_core import ConvergenceWarning, make_method
from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.validation import Flag, NoneOr, Rule, check_random_state

from ._sklearn import seeds

__all__ = [
    "COMMUNITY_METHODS",
    "LabelSpacePartitioning",
    "cooccurrence_graph",
    "greedy_modularity",
    "label_propagation",
    "modularity",
]

#: The community detections ``communities=`` names (module docstring).
COMMUNITY_METHODS = ("modularity", "label_propagation")

#: Sweeps of label propagation at most (on label graphs it settles in a handful).
MAX_SWEEPS = 1000


def cooccurrence_graph(Y, weighted: bool = True) -> np.ndarray:
    """Build the label co-occurrence graph W of the module docstring.

    Parameters
    ----------
    Y : array-like of shape (n, L), 0/1
        The training labels.
    weighted : bool, default True
        True: an edge weighs the number of rows carrying both labels; False: 1 for any
        co-occurrence.

    Returns
    -------
    ndarray of shape (L, L), float64
        The symmetric weight matrix W, with a zero diagonal (no label is its own neighbour).
    """
    Y = np.asarray(Y, dtype=np.float64)
    W = Y.T @ Y  # integer counts, exact in float64 below 2^53 rows
    np.fill_diagonal(W, 0.0)
    return W if weighted else (W > 0).astype(np.float64)


def _membership(parts, n_labels: int) -> np.ndarray:
    """(n_parts, L) 0/1 matrix: label i in part a."""
    member = np.zeros((len(parts), n_labels))
    for a, part in enumerate(parts):
        member[a, np.asarray(part, dtype=np.intp)] = 1.0
    return member


def modularity(W, parts) -> float:
    """Compute the modularity Q of a partition of the graph W (module docstring).

    Parameters
    ----------
    W : array-like of shape (L, L)
        The symmetric, non-negative weight matrix of the label graph.
    parts : sequence of sequences of int
        The parts, each a sequence of label indices.

    Returns
    -------
    float
        Newman's weighted modularity Q; 0 for a graph without edges.
    """
    W = np.asarray(W, dtype=np.float64)
    total = W.sum()
    if total == 0.0:
        return 0.0
    member = _membership(parts, len(W))
    inside = np.einsum("ai,ij,aj->", member, W, member)
    degree = member @ W.sum(axis=1)
    return float(inside / total - np.sum((degree / total) ** 2))


def greedy_modularity(W) -> list[np.ndarray]:
    """Partition the labels by greedy modularity agglomeration of W (module docstring).

    Parameters
    ----------
    W : array-like of shape (L, L)
        The symmetric, non-negative weight matrix of the label graph.

    Returns
    -------
    list of ndarray
        The parts, each a sorted array of label indices, ordered by their first label: a
        partition no merge of two parts improves (one label per part for a graph without edges).
    """
    W = np.asarray(W, dtype=np.float64)
    n = len(W)
    total = W.sum()
    members = [[i] for i in range(n)]
    if total == 0.0:
        return [np.array(m, dtype=np.intp) for m in members]
    e = W / total
    a = e.sum(axis=1)
    active = np.ones(n, dtype=bool)
    pairs = np.triu(np.ones((n, n), dtype=bool), 1)
    while True:
        candidate = pairs & active[:, None] & active[None, :] & (e > 0.0)
        if not candidate.any():
            break
        gain = np.where(candidate, 2.0 * (e - np.outer(a, a)), -np.inf)
        best = int(np.argmax(gain))  # the first maximum in row order: the deterministic tie-break
        i, j = divmod(best, n)
        if not gain[i, j] > 0.0:
            break
        # Part j joins part i (i < j, so a part is always named by its smallest label).
        e[i, :] += e[j, :]
        e[:, i] += e[:, j]
        e[j, :] = 0.0
        e[:, j] = 0.0
        a[i] += a[j]
        a[j] = 0.0
        active[j] = False
        members[i] += members[j]
    return [np.sort(np.array(members[i], dtype=np.intp)) for i in np.flatnonzero(active)]


def label_propagation(W, random_state=None, max_sweeps: int = MAX_SWEEPS) -> tuple[list[np.ndarray], int]:
    """Find communities of W by asynchronous label propagation (module docstring).

    Parameters
    ----------
    W : array-like of shape (L, L)
        The symmetric, non-negative weight matrix of the label graph.
    random_state : int, numpy.random.Generator or None, default None
        Seeds the sweep orders and the choice among equally heavy communities.
    max_sweeps : int, default MAX_SWEEPS
        The sweeps over the labels at most.

    Returns
    -------
    parts : list of ndarray
        The communities, each a sorted array of label indices, ordered by their first label.
    sweeps : int
        The sweeps taken (the last one changed nothing, unless the budget ran out).

    Warns
    -----
    ConvergenceWarning
        When ``max_sweeps`` sweeps do not settle it, with the number of labels that could
        still move (the last partition is returned).
    """
    W = np.asarray(W, dtype=np.float64)
    n = len(W)
    rng = check_random_state(random_state)
    community = np.arange(n)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        changed = False
        for i in rng.permutation(n):
            best = _best_communities(W[i], community, n)
            if best.size == 0 or community[i] in best:
                continue
            community[i] = best[0] if best.size == 1 else rng.choice(best)
            changed = True
        if not changed:
            break
    else:
        movable = sum(
            1 for i in range(n) if (best := _best_communities(W[i], community, n)).size and community[i] not in best
        )
        if movable:
            warnings.warn(
                f"label propagation did not settle in {max_sweeps} sweeps: {movable} of {n} labels could still "
                "change community; the last partition is used",
                ConvergenceWarning,
                stacklevel=3,
            )
    parts = [np.flatnonzero(community == c) for c in np.unique(community)]
    parts.sort(key=lambda part: part[0])
    return parts, sweeps


def _best_communities(weights, community, n) -> np.ndarray:
    """The communities of largest total edge weight among a label's neighbours (empty for an isolated label)."""
    if not (weights > 0).any():
        return np.empty(0, dtype=np.intp)
    total = np.bincount(community, weights=weights, minlength=n)
    total[np.bincount(community[weights > 0], minlength=n) == 0] = -np.inf
    return np.flatnonzero(total == total.max())


def _check_parts(parts, n_labels: int) -> list[np.ndarray]:
    """Parts given by the user, as sorted index arrays; ValueError naming ``communities`` otherwise."""
    checked = []
    for a, part in enumerate(parts):
        if isinstance(part, (str, bytes)) or not hasattr(part, "__len__") or len(part) == 0:
            raise ValueError(f"communities: part {a} must be a non-empty sequence of label indices, got {part!r}")
        values = list(part)
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in values):
            raise ValueError(f"communities: part {a} must hold label indices (integers), got {part!r}")
        index = np.asarray(values, dtype=np.int64)
        if index.min() < 0 or index.max() >= n_labels:
            raise ValueError(f"communities: part {a} holds a label index outside [0, {n_labels - 1}]: {values}")
        if len(np.unique(index)) != len(index):
            raise ValueError(f"communities: part {a} names a label more than once: {values}")
        checked.append(np.sort(index).astype(np.intp))
    missing = np.setdiff1d(np.arange(n_labels), np.concatenate(checked))
    if missing.size:
        raise ValueError(f"communities: the parts leave out labels {missing.tolist()}: every label needs a part")
    return checked


def _is_estimator(value) -> bool:
    return all(callable(getattr(value, name, None)) for name in ("fit", "predict", "decision_function", "get_params"))


def _check_communities(value, name) -> None:
    """A community detection's name, or a non-empty sequence of parts (checked against L at fit)."""
    if isinstance(value, str):
        if value not in COMMUNITY_METHODS:
            raise ValueError(
                f"{name} must be one of {COMMUNITY_METHODS} or a sequence of parts (label index sequences), got {value!r}"
            )
        return
    sized = hasattr(value, "__len__") and hasattr(value, "__iter__")
    if isinstance(value, bytes) or not sized or len(value) == 0:
        raise ValueError(
            f"{name} must be one of {COMMUNITY_METHODS} or a non-empty sequence of parts (label index "
            f"sequences), got {value!r}"
        )


def _check_base(value, name) -> None:
    """A method's name (resolved with base_params by the estimator's rules) or an unfitted estimator."""
    if isinstance(value, str):
        if value == "label_partition":
            raise ValueError(f"{name}: label_partition cannot be its own base; name the method fitted on each part")
    elif not _is_estimator(value) or isinstance(value, type):
        raise ValueError(
            f"{name} must be a registered method name (e.g. 'label_powerset') or an unfitted multi-label estimator "
            f"(with fit, predict, decision_function and get_params), got {value!r}"
        )
    elif isinstance(value, LabelSpacePartitioning):
        raise ValueError(f"{name}: label_partition cannot be its own base; name the method fitted on each part")


def _check_base_params(value, name) -> None:
    if not (isinstance(value, dict) and all(isinstance(k, str) for k in value)):
        raise ValueError(f"{name} must be a dict of parameter names to values or None, got {value!r}")


def _clone(estimator):
    try:
        from sklearn.base import clone
    except ImportError:
        return type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))
    return clone(estimator)


class LabelSpacePartitioning(MultiLabelEstimator):
    """Label-space partitioning by co-occurrence communities, one base model per part
    (registered as ``label_partition``).

    Parameters
    ----------
    base : str or estimator, default "label_powerset"
        The method fitted on each part: a registered method name (built with
        ``make_method(base, **base_params)``) or an unfitted multi-label estimator (cloned for
        every part).
    base_params : dict or None, default None
        Parameters of the base, when it is given by name.
    communities : str or sequence of sequences of int, default "modularity"
        ``"modularity"`` (greedy modularity agglomeration), ``"label_propagation"`` (seeded),
        or the parts themselves (label indices; they may overlap and must cover every label).
    weighted : bool, default True
        Edge weights are co-occurrence counts (True) or 1 for any co-occurrence (False); only
        for detected communities.
    random_state : None, int or numpy Generator, default 0
        Seeds label propagation and the base models that take a ``random_state`` left at None.
    thresholding : str or Threshold, default "zero"
        The threshold part on the voted scores.

    Attributes
    ----------
    cooccurrence_ : (L, L) ndarray
        The graph W: rows carrying both labels (1 for any when not ``weighted``), zero diagonal.
    partition_ : list of int arrays
        The label indices of each part.
    modularity_ : float
        Q of ``partition_`` on W (module docstring; for overlapping given parts it counts a pair
        once per part holding both).
    n_sweeps_ : int
        Sweeps label propagation took (0 for the other choices).
    estimators_ : list
        The fitted base model of each part (its labels in the order of ``partition_[a]``).
    votes_per_label_ : (L,) int
        M_l, the parts that hold each label.
    part_certificates_ : list
        Each part model's ``certificate_``, or None for a base without one.

    Notes
    -----
    The module docstring (:mod:`.label_partition`) gives the graph, the community detections,
    the vote and the scores.  ``certified = False``: the ensemble solves no single problem.
    """

    certified = False
    _parameter_constraints = {
        "base": Rule(_check_base, "a registered method name or an unfitted multi-label estimator"),
        "base_params": NoneOr(Rule(_check_base_params, "a dict of parameter names to values, for a base given by name")),
        "communities": Rule(_check_communities, f"one of {COMMUNITY_METHODS} or a non-empty sequence of parts"),
        "weighted": Flag(),
    }
    #: What ``load_model`` checks of a fitted model (:func:`multilabel_core.persistence.declared_state`).
    fitted_state = {
        "cooccurrence_": "float[L, L]",
        "partition_": "list[int[*] in [0, L), parts]",
        "modularity_": "float",
        "n_sweeps_": "int>=0",
        "estimators_": "list[any, parts]",
        "votes_per_label_": "int[L]",
    }

    def __init__(
        self, base="label_powerset", base_params=None, communities="modularity", weighted=True, random_state=0,
        thresholding="zero",
    ):  # fmt: skip
        self.base = base
        self.base_params = base_params
        self.communities = communities
        self.weighted = weighted
        self.random_state = random_state
        self.thresholding = thresholding

    # -- parameters ----------------------------------------------------------------------

    def _check_parameter_rules(self) -> None:
        if not isinstance(self.communities, str) and not self.weighted:
            raise ValueError("weighted=False applies to detected communities; with given parts leave it at True")
        self._new_base(None)  # the base built with base_params: a bad combination fails here, before any fit

    def _new_base(self, seed):
        """An unfitted base model (seeded with ``seed`` when it takes a random_state left at None)."""
        base, params = self.base, self.base_params
        if params is not None and not (isinstance(params, dict) and all(isinstance(k, str) for k in params)):
            raise ValueError(f"base_params must be a dict of parameter names to values or None, got {params!r}")
        if isinstance(base, str):
            if base == "label_partition":
                raise ValueError("base: label_partition cannot be its own base; name the method fitted on each part")
            try:
                model = make_method(base, **(params or {}))
            except ValueError as exc:
                raise ValueError(f"base: {exc}") from None
        elif _is_estimator(base) and not isinstance(base, type):
            if isinstance(base, LabelSpacePartitioning):
                raise ValueError("base: label_partition cannot be its own base; name the method fitted on each part")
            if params is not None:
                raise ValueError("base_params apply to a base given by name; set the parameters on your estimator")
            model = _clone(base)
        else:
            raise ValueError(
                "base must be a registered method name (e.g. 'label_powerset') or an unfitted multi-label estimator "
                f"(with fit, predict, decision_function and get_params), got {base!r}"
            )
        if seed is not None and "random_state" in model.get_params(deep=False) and model.random_state is None:
            model.set_params(random_state=seed)
        return model

    # -- fit and predict -------------------------------------------------------------------

    def _fit(self, X, Y):
        n_labels = Y.shape[1]
        rng = check_random_state(self.random_state)
        self.cooccurrence_ = cooccurrence_graph(Y, bool(self.weighted))
        self.n_sweeps_ = 0
        if isinstance(self.communities, str) and self.communities == "modularity":
            parts = greedy_modularity(self.cooccurrence_)
        elif isinstance(self.communities, str):
            parts, self.n_sweeps_ = label_propagation(self.cooccurrence_, rng)
        else:
            parts = _check_parts(self.communities, n_labels)
        self.partition_ = parts
        self.modularity_ = modularity(self.cooccurrence_, parts)
        self.votes_per_label_ = np.bincount(np.concatenate(parts), minlength=n_labels)
        self.estimators_ = []
        for a, (part, seed) in enumerate(zip(parts, seeds(rng, len(parts)))):
            model = self._new_base(seed)
            try:
                model.fit(X, Y[:, part])
            except ImportError as exc:
                # What a user must install is the base's need, but the method they asked for is this one.
                raise ImportError(f"the label_partition baseline's base {self.base!r} cannot be fitted: {exc}") from exc
            except Exception as exc:
                exc.add_note(f"label_partition: while fitting part {a} of {len(parts)} (labels {part.tolist()})")
                raise
            self.estimators_.append(model)

    @property
    def part_certificates_(self) -> list:
        """Each part model's ``certificate_`` (None where the base has none)."""
        return [getattr(model, "certificate_", None) for model in self.estimators_]

    def _decision_function(self, X):
        votes = np.zeros((X.shape[0], len(self.votes_per_label_)))
        squashed = np.zeros_like(votes)
        for part, model in zip(self.partition_, self.estimators_):
            scores = model.decision_function(X)
            votes[:, part] += model.predict(X)
            squashed[:, part] += scores / (1.0 + np.abs(scores))
        counts = self.votes_per_label_.astype(np.float64)
        return (votes / counts - 0.5) + (squashed / counts) / (2.0 * (counts + 1.0))
