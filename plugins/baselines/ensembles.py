"""Label powerset, RAkEL and ensembles of classifier chains, over any scikit-learn classifier.

The baselines the multi-label papers compare against (PrML and LIEML among them) and that
scikit-multilearn users reach for first:

* **Label powerset (LP)**: every distinct label set of the training rows is one class of a
  multi-class problem (Tsoumakas & Katakis, Multi-label classification: an overview, 2007).
* **RAkEL** (Tsoumakas, Katakis & Vlahavas, Random k-labelsets for multilabel
  classification, IEEE TKDE 23(7), 2011): an LP on each of several random k-label subsets;
  RAkEL-d cuts the labels into disjoint subsets, RAkEL-o draws ``n_subsets`` distinct,
  overlapping ones (2L by default, the paper's recommendation) and every label votes in
  each subset that holds it.
* **ECC** (Read, Pfahringer, Holmes & Frank, Classifier chains for multi-label
  classification, Machine Learning 85(3), 2011): ``n_chains`` chains, each in a random
  label order and fitted on a bootstrap sample of the rows, voting.

Each model is a clone of ``classifier`` (scikit-learn's ``LogisticRegression`` at ``C`` by
default, as in those papers).

*Scores.*  Each member votes 0/1 for each of its labels (the labels of the LP's most
probable class; a chain's prediction) and gives a probability (the LP's marginal
``P(j in Y | x)``, the sum of its classes' probabilities that contain j; a chain link's
probability).  With v_j the share of label j's M_j votes that say relevant and p_j the
mean probability,

    score_j = (v_j - 1/2) + (p_j - 1/2) / (M_j + 1).

The second term is smaller than half a vote (|.| < 1 / (2 M_j)), so ``score_j > 0`` is the
members' majority (ties broken by the probability), which is what LP, RAkEL and ECC
predict; within equal votes the probability orders the labels, so the scores serve the
ranking measures.  A classifier without ``predict_proba`` gives its 0/1 votes as its
probabilities.  ``scores="probability"`` scores by the mean probability alone, ``p_j - 1/2``:
the order scikit-multilearn's ``predict_proba`` gives (on emotions a little better for the
ranking measures, benchmarks/RESULTS.md), at the price of predicting the probability's
majority instead of the members' vote.

These methods solve no problem of their own with a certificate (a multi-class base's
optimality is not checked here): ``certified = False``.  Convergence warnings of the base
classifier pass through to the runner, which counts them.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import scipy.sparse as sp

from multilabel_core.estimator import MultiLabelEstimator
from multilabel_core.parameter_names import DEPRECATED, renamed_parameter
from multilabel_core.validation import COUNT, Flag, NoneOr, Options, Rule, Unchecked, check_random_state

from ._sklearn import import_sklearn, seeds

__all__ = [
    "EnsembleClassifierChains", "LabelPowerset", "Powerset", "RAkEL", "bootstrap_rows", "held_columns", "label_subsets",
    "vote_scores",
]

#: How the members' outputs become scores (module docstring).
SCORES = ("vote", "probability")

#: Tries at drawing a bootstrap sample in which every label has both values, per chain.
BOOTSTRAP_TRIES = 100


def vote_scores(votes, probabilities, counts) -> np.ndarray:
    """Compute ``(v - 1/2) + (p - 1/2) / (M + 1)`` from the summed votes and probabilities (module docstring).

    Parameters
    ----------
    votes : ndarray of shape (n, L)
        Each label's 0/1 votes summed over the members voting on it.
    probabilities : ndarray of shape (n, L)
        Each label's probabilities summed over the same members.
    counts : array-like of shape (L,)
        M, the number of members voting on each label; every count must be positive.

    Returns
    -------
    ndarray of shape (n, L)
        The scores: the vote share v = votes / M minus 1/2, tie-broken by the mean probability
        p = probabilities / M, whose term stays below 1 / (2 (M + 1)) in size so it never
        outweighs one vote.
    """
    counts = np.asarray(counts, dtype=np.float64)
    share, mean = votes / counts, probabilities / counts
    return (share - 0.5) + (mean - 0.5) / (counts + 1.0)


def held_columns(X) -> np.ndarray:
    """Find the columns of X holding a non-zero value.

    O(stored entries) for a sparse X: no array of X's declared width is made.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, n_features)
        The rows.

    Returns
    -------
    ndarray of shape (n_held,), int
        The sorted indices of the columns with a non-zero entry; ``[0]`` when X has none
        (a classifier needs a feature).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        held = np.unique(X.indices[X.data != 0])
    else:
        held = np.flatnonzero(np.any(np.asarray(X) != 0, axis=0))
    # A classifier needs a feature: an all-zero column stands for none (its weight is 0 too).
    return held if held.size else np.zeros(1, dtype=held.dtype)


def _check_classifier(value, name):
    if not (hasattr(value, "fit") and hasattr(value, "predict")):
        raise ValueError(f"{name} must be a scikit-learn classifier (with fit and predict), got {value!r}")


class _Ensemble(MultiLabelEstimator):
    """What the three share: the base classifier, its validation and the probabilities."""

    certified = False
    _parameter_constraints = {
        "scores": Options(SCORES),
        "classifier": NoneOr(Rule(_check_classifier, "a scikit-learn classifier (with fit and predict)")),
    }
    #: What ``load_model`` checks of a fitted model (:func:`multilabel_core.persistence.declared_state`);
    #: a model saved before ``columns_`` existed has none and uses every column.
    fitted_state = {"?columns_": "int[*] in [0, d) | None"}

    def _held_columns(self, X):
        """X on the columns the classifiers are fitted on, setting ``columns_`` (None: every column).

        The default logistic regression is L2-penalised: on a column that is 0 in every training
        row the loss has no gradient, so the column's weight is 0 at the optimum (and at every
        lbfgs iterate from 0), and the model fitted on the held columns is the full model, its
        scores the same on any rows.  Its cost then follows the stored entries, not the declared
        width (on 30 rows x 10^6 sparse columns holding 450 values the label powerset held a
        (10^6, classes) model and its lbfgs history; benchmarks/RESULTS.md, "Timings behind code comments").  A
        classifier of the user's may use a column that is 0 in training (a kernel's distance to
        a new row does), so it is given every column.
        """
        self.columns_ = None
        if self.classifier is None:
            held = held_columns(X)
            if held.size < X.shape[1]:
                self.columns_ = held
        return self._on_columns(X)

    def _on_columns(self, X):
        columns = getattr(self, "columns_", None)
        if columns is None:
            return X
        return sp.csr_matrix(X)[:, columns] if sp.issparse(X) else np.asarray(X)[:, columns]

    def _check_parameter_rules(self) -> None:
        if self.classifier is not None and self.C != 1.0:
            raise ValueError("C sets the default LogisticRegression; with your own classifier, set C on it")

    def _scores(self, votes, probabilities, counts) -> np.ndarray:
        if self.scores == "probability":
            return probabilities / np.asarray(counts, dtype=np.float64) - 0.5
        return vote_scores(votes, probabilities, counts)

    def _new_classifier(self, seed: int):
        if self.classifier is None:
            linear_model = import_sklearn("linear_model", self.method)
            return linear_model.LogisticRegression(C=self.C, max_iter=self.max_iter or 1000, random_state=seed)
        model = import_sklearn("base", self.method).clone(self.classifier)
        if "random_state" in model.get_params():
            model.set_params(random_state=seed)
        return model


def largest_n_iter(models) -> int:
    """The largest ``n_iter_`` of fitted scikit-learn models (0 for models without one)."""
    counts = [int(np.max(getattr(m, "n_iter_", 0))) for m in models if m is not None]
    return max(counts, default=0)


def _powerset_classes(Y):
    """The distinct rows of Y (the classes, C x k) and each row's class index."""
    classes, index = np.unique(Y, axis=0, return_inverse=True)
    return classes, index.reshape(-1)


class Powerset:
    """Fit one label powerset: a multi-class model over the label sets of its labels, or the one set seen.

    Parameters
    ----------
    model : scikit-learn classifier
        An unfitted multi-class classifier; fitted here on the label-set classes (kept as None
        when the rows carry a single label set, which is then always predicted).
    labels : ndarray of shape (k,), int
        The label indices (columns of Y) this powerset covers.
    X : array-like or sparse matrix of shape (n, n_features)
        The training rows.
    Y : ndarray of shape (n, L), 0/1
        The training labels.

    Attributes
    ----------
    labels : ndarray of shape (k,), int
        As given.
    sets : ndarray of shape (C, k)
        The distinct label sets seen, one per class.
    model : scikit-learn classifier or None
        The fitted classifier, None when only one set was seen.
    """

    def __init__(self, model, labels, X, Y):
        self.labels = labels
        self.sets, classes = _powerset_classes(Y[:, labels])
        # A subset whose rows all carry one label set has nothing to learn: that set, with probability 1.
        self.model = model.fit(X, classes) if len(self.sets) > 1 else None

    def votes_and_probabilities(self, X):
        """Compute each row's vote (the predicted label set) and each label's probability over the sets.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            The rows, on the columns the model was fitted on.

        Returns
        -------
        votes : ndarray of shape (n, k), float64
            The most probable label set of each row, 0/1 per label.
        probabilities : ndarray of shape (n, k), float64
            Each label's probability: the class probabilities summed over the sets holding it
            (equal to ``votes`` for a classifier without ``predict_proba`` or a single set).
        """
        n = X.shape[0]
        if self.model is None:
            mode = np.broadcast_to(self.sets[0], (n, len(self.labels))).astype(np.float64)
            return mode, mode
        if hasattr(self.model, "predict_proba"):
            proba = self.model.predict_proba(X)
            # The model's classes are the indices of the sets it saw, in its own order.
            sets = self.sets[self.model.classes_.astype(np.intp)].astype(np.float64)
            return sets[np.argmax(proba, axis=1)], proba @ sets
        mode = self.sets[self.model.predict(X).astype(np.intp)].astype(np.float64)
        return mode, mode


class LabelPowerset(_Ensemble):
    """Label powerset over a scikit-learn classifier (registered as ``label_powerset``).

    Parameters
    ----------
    classifier : scikit-learn classifier or None, default None
        The multi-class model (cloned); None is ``LogisticRegression(C=C)``.
    C : float, default 1.0
        C of the default logistic regression (leave at 1 with your own classifier).
    max_iter : int or None, default None
        Iterations of the default logistic regression's lbfgs (None: 1000).
    scores : {"vote", "probability"}, default "vote"
        The members' vote share with the probability breaking ties, or the probability
        alone (module docstring).
    random_state : None, int or numpy Generator, default None
        Seeds the classifier.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``powerset_`` (the fitted LP), ``n_classes_`` (distinct label sets),
    ``n_iter_`` (the classifier's, when it reports one).
    Scores: module docstring (the most probable set's labels first, each group by its
    marginal probability).
    """

    method = "label_powerset"

    def __init__(self, classifier=None, C=1.0, max_iter=None, scores="vote", random_state=None, thresholding="zero"):
        self.classifier = classifier
        self.scores = scores
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state
        self.thresholding = thresholding

    def _fit(self, X, Y):
        (seed,) = seeds(self.random_state, 1)
        X = self._held_columns(X)
        self.powerset_ = Powerset(self._new_classifier(seed), np.arange(Y.shape[1]), X, Y)
        self.n_classes_ = len(self.powerset_.sets)
        self.n_iter_ = largest_n_iter([self.powerset_.model])

    def _decision_function(self, X):
        votes, probabilities = self.powerset_.votes_and_probabilities(self._on_columns(X))
        return self._scores(votes, probabilities, np.ones(votes.shape[1]))


def label_subsets(n_labels: int, k: int, overlap: bool, n_subsets, rng) -> list[np.ndarray]:
    """Draw RAkEL's label subsets.

    A random partition into subsets of k (the last may be smaller), and for RAkEL-o further
    distinct random k-subsets up to ``n_subsets``.  RAkEL-o as published draws its subsets at
    random and may leave a label out (it is then never predicted); starting from a partition
    guarantees every label at least one vote (a deviation).

    Parameters
    ----------
    n_labels : int
        L, the number of labels.
    k : int
        The labels per subset, 1 <= k <= L.
    overlap : bool
        False: RAkEL-d (the partition only); True: RAkEL-o.
    n_subsets : int or None
        RAkEL-o's number of subsets (read only when ``overlap``); fewer when there are fewer
        distinct k-subsets, never fewer than the partition's.
    rng : numpy.random.Generator
        The random generator that draws the subsets.

    Returns
    -------
    list of ndarray
        The subsets, each the sorted label indices it holds.
    """
    order = rng.permutation(n_labels)
    subsets = [np.sort(order[i : i + k]) for i in range(0, n_labels, k)]
    if not overlap:
        return subsets
    available = sum(1 for _ in itertools.islice(itertools.combinations(range(n_labels), k), n_subsets + 1))
    target = max(len(subsets), min(n_subsets, available))
    seen = {tuple(s) for s in subsets}
    while len(subsets) < target:
        candidate = tuple(np.sort(rng.choice(n_labels, size=k, replace=False)))
        if candidate not in seen:
            seen.add(candidate)
            subsets.append(np.asarray(candidate))
    return subsets


class RAkEL(_Ensemble):
    """RAkEL-d or RAkEL-o over a scikit-learn classifier (registered as ``rakel``).

    Parameters
    ----------
    labelset_size : int, default 3
        Labels per subset, Tsoumakas, Katakis & Vlahavas's k (*Random k-labelsets for multilabel
        classification*, section 3; their default); at least L is one label powerset.
    overlap : bool, default False
        False: RAkEL-d (disjoint subsets); True: RAkEL-o (``n_subsets`` overlapping ones).
    n_subsets : int or None, default None
        RAkEL-o's number of subsets; None is 2L (Tsoumakas et al.'s recommendation), at most
        the number of distinct subsets of ``labelset_size`` labels.  Must stay None for RAkEL-d.
    classifier, C, max_iter, scores, random_state
        As :class:`LabelPowerset`; ``random_state`` (default 0: the same subsets at every fit) also
        draws the subsets.
    thresholding : str or Threshold, default "zero"
        The threshold part on the voted scores.
    k : int, default "deprecated"
        Deprecated name of ``labelset_size`` (``k`` is the neighbour count of the k-NN methods);
        accepted with a FutureWarning for this release.

    Notes
    -----
    Fitted attributes: ``subsets_`` (label indices of each LP), ``powersets_``, ``votes_per_label_``
    (how many subsets hold each label), ``n_iter_`` (the largest of the classifiers').
    """

    method = "rakel"
    _parameter_constraints = {
        "labelset_size": COUNT,
        "k": Unchecked("the deprecated spelling of labelset_size, checked as it by _check_parameter_rules"),
        "overlap": Flag(),
        "n_subsets": NoneOr(COUNT),
    }

    def __init__(
        self, labelset_size=3, overlap=False, n_subsets=None, classifier=None, C=1.0, max_iter=None, scores="vote",
        random_state=0, thresholding="zero", k=DEPRECATED,
    ):
        self.scores = scores
        self.labelset_size = labelset_size
        self.k = k
        self.overlap = overlap
        self.n_subsets = n_subsets
        self.classifier = classifier
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state
        self.thresholding = thresholding

    def _check_parameter_rules(self) -> None:
        super()._check_parameter_rules()
        # The deprecated spelling is checked as what it stands for (the FutureWarning, once per fit).
        COUNT.check(renamed_parameter(self, "k", "labelset_size"), "labelset_size")
        if self.n_subsets is not None and not self.overlap:
            raise ValueError("n_subsets applies to RAkEL-o (overlap=True); RAkEL-d's subsets partition the labels")

    def _fit(self, X, Y):
        n_labels = Y.shape[1]
        rng = check_random_state(self.random_state)
        k = min(renamed_parameter(self, "k", "labelset_size", warn=False), n_labels)
        n_subsets = (2 * n_labels if self.n_subsets is None else self.n_subsets) if self.overlap else None
        self.subsets_ = label_subsets(n_labels, k, bool(self.overlap), n_subsets, rng)
        model_seeds = seeds(rng, len(self.subsets_))
        X = self._held_columns(X)
        self.powersets_ = [Powerset(self._new_classifier(s), labels, X, Y) for s, labels in zip(model_seeds, self.subsets_)]
        self.votes_per_label_ = np.bincount(np.concatenate(self.subsets_), minlength=n_labels)
        self.n_iter_ = largest_n_iter([powerset.model for powerset in self.powersets_])

    def _decision_function(self, X):
        X = self._on_columns(X)
        votes = np.zeros((X.shape[0], len(self.votes_per_label_)))
        probabilities = np.zeros_like(votes)
        for powerset in self.powersets_:
            v, p = powerset.votes_and_probabilities(X)
            votes[:, powerset.labels] += v
            probabilities[:, powerset.labels] += p
        return self._scores(votes, probabilities, self.votes_per_label_)


def bootstrap_rows(Y, rng) -> tuple[np.ndarray, bool]:
    """Draw a bootstrap sample of the rows in which every label has both values.

    A plain bootstrap sample is redrawn up to :data:`BOOTSTRAP_TRIES` times.  A label with few
    rows of its rarer value (real many-label data always has some) misses that value in almost
    every draw, so the last draw is then repaired: for each label missing a value, a row holding
    it (drawn uniformly among those rows) replaces a drawn row whose removal leaves every label
    both values.

    Parameters
    ----------
    Y : ndarray of shape (n, L), 0/1
        The training labels; every label must take both values in Y.
    rng : numpy.random.Generator
        The random generator that draws the sample.

    Returns
    -------
    rows : ndarray of shape (n,), int
        The sampled row indices (with repetition).
    repaired : bool
        Whether the sample was repaired rather than drawn plainly.

    Raises
    ------
    ValueError
        When no row can be replaced without losing another label's value (fewer rows than
        twice the labels, for instance).
    """
    n = Y.shape[0]
    for _ in range(BOOTSTRAP_TRIES):
        rows = rng.integers(0, n, size=n)
        positives = Y[rows].sum(axis=0)
        if np.all((positives > 0) & (positives < n)):
            return rows, False
    for label in range(Y.shape[1]):
        column = Y[rows, label]
        missing = 1 if not column.any() else 0 if column.all() else None
        if missing is None:
            continue
        sample = Y[rows].astype(bool)
        ones = sample.sum(axis=0)
        # A position may be replaced when its row is not the sample's only holder of any value.
        removable = np.flatnonzero(np.all(np.where(sample, ones > 1, (n - ones) > 1), axis=1))
        if removable.size == 0:
            raise ValueError(
                f"no bootstrap sample of {n} rows keeps both values of every one of {Y.shape[1]} labels (label "
                f"{label} is missing its value {missing}, and every drawn row is another label's only holder of a "
                "value): use bootstrap=False"
            )
        rows[rng.choice(removable)] = rng.choice(np.flatnonzero(Y[:, label] == missing))
    return rows, True


class EnsembleClassifierChains(_Ensemble):
    """An ensemble of classifier chains with bagging and random orders (registered as ``ecc``).

    Parameters
    ----------
    n_chains : int, default 10
        Chains in the ensemble (Read et al.'s default).
    bootstrap : bool, default True
        Fit each chain on a bootstrap sample of the rows (Read et al.'s bagging); False fits
        every chain on all rows (then only the orders differ).  A sample must hold both values
        of every label; where no plain draw does (rare labels), :func:`bootstrap_rows` repairs
        one and a warning counts the repaired samples.
    classifier, C, max_iter, scores, random_state
        As :class:`LabelPowerset` (the classifier of every link); ``random_state`` (default 0: the
        same ensemble at every fit) also draws the orders and samples.
    thresholding : str or Threshold, default "zero"
        How scores become labels: a registered threshold name (``"zero"``: a label is predicted
        where its score is positive) or a Threshold object.

    Notes
    -----
    Fitted attributes: ``chains_`` (fitted scikit-learn ``ClassifierChain`` objects),
    ``samples_`` (each chain's training rows), ``n_iter_`` (the largest of the links').
    """

    method = "ecc"
    _parameter_constraints = {"n_chains": COUNT, "bootstrap": Flag()}

    def __init__(
        self, n_chains=10, bootstrap=True, classifier=None, C=1.0, max_iter=None, scores="vote", random_state=0,
        thresholding="zero",
    ):
        self.scores = scores
        self.n_chains = n_chains
        self.bootstrap = bootstrap
        self.classifier = classifier
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state
        self.thresholding = thresholding

    def _fit(self, X, Y):
        multioutput = import_sklearn("multioutput", self.method)
        rng = check_random_state(self.random_state)
        # The columns held by any row, not by a chain's sample: a column 0 in a sample has weight 0 there too.
        X = self._held_columns(X)
        self.chains_, self.samples_ = [], []
        repaired = 0
        for model_seed, order_seed in zip(*[iter(seeds(rng, 2 * self.n_chains))] * 2):
            rows, fixed = bootstrap_rows(Y, rng) if self.bootstrap else (np.arange(Y.shape[0]), False)
            repaired += fixed
            chain = multioutput.ClassifierChain(self._new_classifier(model_seed), order="random", random_state=order_seed)
            self.chains_.append(chain.fit(X[rows], Y[rows]))
            self.samples_.append(rows)
        if repaired:
            counts = Y.sum(axis=0)
            rarest = int(np.min(np.minimum(counts, Y.shape[0] - counts)))
            warnings.warn(
                f"{repaired} of {self.n_chains} bootstrap samples were repaired so that every label keeps both values "
                f"(no plain draw in {BOOTSTRAP_TRIES} did: the rarest label value is held by {rarest} of "
                f"{Y.shape[0]} rows); bootstrap=False fits every chain on all rows",
                UserWarning, stacklevel=3,
            )
        self.n_iter_ = largest_n_iter([link for chain in self.chains_ for link in chain.estimators_])

    def _decision_function(self, X):
        X = self._on_columns(X)
        if sp.issparse(X):
            X = X.tocsr()
        votes = sum(chain.predict(X).astype(np.float64) for chain in self.chains_)
        if all(hasattr(chain, "predict_proba") and hasattr(chain.estimators_[0], "predict_proba") for chain in self.chains_):
            probabilities = sum(chain.predict_proba(X) for chain in self.chains_)
        else:
            probabilities = votes
        return self._scores(votes, probabilities, np.full(votes.shape[1], float(len(self.chains_))))
