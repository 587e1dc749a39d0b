"""The papers' evaluation protocols: how a dataset is cut into training and test parts.

Every protocol is a function ``protocol(Y, *, seed=0, **params)`` of the (n, L) label
matrix, returning a list of splits of row indices (sorted int arrays):

* ``(train, test)`` for the supervised protocols;
* ``(train, test, unlabeled)`` for the semi-supervised one, where the model also sees
  the unlabelled rows' features while it is fitted (transductive setting) and is
  evaluated on those same rows, so ``test`` and ``unlabeled`` are the same rows.

An int ``seed`` makes the splits reproducible: the same seed gives the same splits on
every machine, whatever the method, so methods are compared on matched splits (the
paired t-tests of the reports need that).  A protocol whose function also takes the
keyword ``parts`` receives the row counts of the files a joined dataset was read from
(``Dataset.parts``, e.g. ``(391, 202)`` for ``emotions-train+emotions-test``; empty for
a dataset of one file): the runner supplies it, it is not a protocol parameter.

=====================  =========================================================  ==========
name                   protocol                                                   paper
=====================  =========================================================  ==========
kfold                  K-fold cross-validation, folds by iterative stratification MLRL
repeated_fixed_train   ``n_train`` random training rows, every label in both      CMLFS
                       parts, repeated
fixed_ratio            a fraction of the rows for training, repeated              PrML, LIEML
semi_supervised        a fraction labelled, the rest unlabelled and evaluated     SSMLRL
given                  the split the data come with: a joined dataset's first     MKML
                       part for training, the second for testing, or the first
                       ``n_train`` rows for training and the rest for testing
=====================  =========================================================  ==========

:data:`PROTOCOLS` maps each name to its :class:`Protocol` (its defaults are the papers'
settings).  docs/experiments.md describes them with the papers' wording.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable

import attrs
import numpy as np

from ..validation import check_random_state, check_scalar, check_Y
from ..model_selection import IterativeStratifiedKFold, most_wanted, stratified_folds

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "fixed_ratio",
    "get_protocol",
    "given",
    "kfold",
    "repeated_fixed_train",
    "semi_supervised",
]


# ------------------------------------------------------------------- the protocols
def kfold(Y, *, n_splits: int = 10, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split by K-fold cross-validation whose test folds are drawn by iterative stratification.

    Zhang & Yeung, "Multi-Label Relationship Learning", section 5 ("ten-fold cross-validation is performed on each data set").  Each
    row is tested exactly once; every fold holds about 1/K of the rows and of every
    label's positives (:class:`~multilabel_core.model_selection.IterativeStratifiedKFold`).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    n_splits : int, default=10
        K, the number of folds (>= 2).
    seed : int, default=0
        The seed of the row order.

    Returns
    -------
    list of (ndarray, ndarray)
        The ``(train, test)`` row-index pairs, one per split.
    """
    Y = check_Y(Y)
    splitter = IterativeStratifiedKFold(n_splits, shuffle=True, random_state=seed)
    return list(splitter.split(Y, Y))


def repeated_fixed_train(
    Y, *, n_train: int = 1000, n_repeats: int = 10, seed: int = 0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Draw ``n_repeats`` random splits with ``n_train`` training rows, every label in both parts.

    Gu, Li & Han, "Correlated Multi-Label Feature Selection", section 5: "we randomly sample 1000 data points from each data set for
    training, and the rest for testing ... each label is guaranteed to appear in at
    least one data point of the training set and in at least one data point of the
    testing set.  The process was repeated 10 times".

    The guarantee is built in, not obtained by redrawing (a redraw may almost never
    succeed on data with rare labels).  Each repetition draws a random order of the
    rows and then

    1. *reserves* carriers: labels are served rarest first; a label not yet carried by a
       row reserved for the training part gets its first free relevant row (in the
       random order) reserved for training, and likewise for the test part;
    2. *fills* the training part with the reserved training rows followed by the free
       rows in the random order, up to ``n_train`` rows; every other row is a test row.

    Rows not needed as carriers are thus drawn uniformly at random.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    n_train : int, default=1000
        Training rows, between 1 and n - 1.
    n_repeats : int, default=10
        The number of splits (>= 1).
    seed : int, default=0
        The seed of the random stream.

    Returns
    -------
    list of (ndarray, ndarray)
        The ``(train, test)`` row-index pairs, one per split.

    Raises
    ------
    ValueError
        When no such split exists: a label with fewer than two relevant rows, more carriers
        needed than a part can hold, or (rarely, for a given seed) carriers claimed by rarer
        labels.
    """
    Y = check_Y(Y)
    n = Y.shape[0]
    check_scalar(n_train, "n_train", kind=numbers.Integral, low=1, high=n - 1)
    check_scalar(n_repeats, "n_repeats", kind=numbers.Integral, low=1)
    _check_label_counts(Y)
    rng = check_random_state(seed)
    return [_fixed_train_split(Y, n_train, rng.permutation(n)) for _ in range(n_repeats)]


def fixed_ratio(
    Y,
    *,
    train_fraction: float = 0.5,
    n_repeats: int = 10,
    stratify: bool = True,
    require_labels_in: str | None = None,
    seed: int = 0,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Draw ``n_repeats`` splits with ``round(train_fraction * n)`` training rows, the rest for testing.

    You et al., "Privileged Multi-label Learning", section 5, and Tao, Xu & Geng, "Labeling Information Enhancement for Multi-label Learning with Low-Rank Subspace", section 5: "50% examples are randomly sampled without
    replacement to form the training set, and the rest 50% examples are used to form
    the test set.  The sampling process is repeated for ten times".

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    train_fraction : float, default=0.5
        The training share of the rows, in (0, 1).
    n_repeats : int, default=10
        The number of splits (>= 1).
    stratify : bool, default=True
        Draw each split by iterative stratification, so both parts hold about their share of
        every label's positives, then bring it to the exact size (see :func:`_resize`);
        ``False`` is the papers' plain random split.
    require_labels_in : {None, "train"}, default=None
        ``"train"`` guarantees every label a relevant row in the training part, for estimators
        that refuse a label with no positive example (data with labels of one or two positives,
        such as rcv1subset1): one relevant row per label is reserved for training first
        (:func:`_reserve_train_carriers`), then the other rows are split as above to fill both
        parts to their exact sizes.  None gives no guarantee.
    seed : int, default=0
        The seed of the random stream.

    Returns
    -------
    list of (ndarray, ndarray)
        The ``(train, test)`` row-index pairs, one per split.

    Raises
    ------
    ValueError
        For a parameter out of range, or a part that would be empty.
    """
    Y = check_Y(Y)
    check_scalar(train_fraction, "train_fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    check_scalar(n_repeats, "n_repeats", kind=numbers.Integral, low=1)
    if not isinstance(stratify, (bool, np.bool_)):
        raise ValueError(f"stratify must be True or False, got {stratify!r}")
    if require_labels_in not in (None, "train"):
        raise ValueError(f"require_labels_in must be None or 'train', got {require_labels_in!r}")
    n_first = _part_size(Y.shape[0], train_fraction, "train_fraction")
    rng = check_random_state(seed)
    if require_labels_in is None:
        return [_two_part_split(Y, n_first, train_fraction, stratify, rng) for _ in range(n_repeats)]
    return [_split_with_train_carriers(Y, n_first, stratify, rng) for _ in range(n_repeats)]


def semi_supervised(
    Y, *, labeled_fraction: float = 0.2, n_repeats: int = 10, stratify: bool = True, seed: int = 0
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Draw ``n_repeats`` transductive splits: ``labeled_fraction`` of the rows labelled, the rest unlabelled.

    SSMLRL (Zhang & Yeung, "Multi-Label Relationship Learning", section 6): "we conduct experiments under the transductive setting ...
    We randomly choose 20% of each data set as the labeled data and the rest as
    unlabeled data.  We make random splits for 10 trials".  The parts are drawn as in
    :func:`fixed_ratio`.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    labeled_fraction : float, default=0.2
        The labelled share of the rows, in (0, 1).
    n_repeats : int, default=10
        The number of splits (>= 1).
    stratify : bool, default=True
        Draw the parts by iterative stratification (as :func:`fixed_ratio`).
    seed : int, default=0
        The seed of the random stream.

    Returns
    -------
    list of (ndarray, ndarray, ndarray)
        ``(labeled, unlabeled, unlabeled)`` per split: the model is fitted on the labelled rows
        (and sees the features of the unlabelled ones when its ``fit`` takes ``X_unlabeled``) and
        evaluated on the unlabelled rows.
    """
    Y = check_Y(Y)
    check_scalar(labeled_fraction, "labeled_fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    splits = fixed_ratio(Y, train_fraction=labeled_fraction, n_repeats=n_repeats, stratify=stratify, seed=seed)
    return [(labeled, unlabeled, unlabeled) for labeled, unlabeled in splits]


def given(
    Y, *, n_train: int | None = None, parts: tuple = (), seed: int = 0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the one split the data come with: the first rows for training, the rest for testing.

    Zhang et al., "Multi-Kernel Multi-Label Learning with Max-Margin Concept Network"
    (IJCAI 2011), section 5: the standard Mulan train/test files ("593 songs (391 for
    training and 202 for test)"; scene 1211/1196, yeast 1500/917), and on the Yahoo
    sets "5000 documents (2,000 for training and 3,000 for testing)", taken here as the
    first 2000 rows (the paper does not say which).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    n_train : int or None, default=None
        The first ``n_train`` rows train and the others test, on any dataset; on a joined one it
        must fall at the boundary between two files.  None: the dataset must be joined from two
        files (``emotions-train+emotions-test``): the first file's rows train, the second's test.
    parts : tuple of int, default=()
        A joined dataset's part row counts, summing to the rows of ``Y``.
    seed : int, default=0
        Ignored: the split is fixed by the data (the runner still derives each split's
        inner-fold and estimator seeds from it, as for every protocol).

    Returns
    -------
    list of (ndarray, ndarray)
        The one ``(train, test)`` pair: ``arange(n_train)`` and the rows after it.

    Raises
    ------
    ValueError
        When no split is given (neither two parts nor ``n_train``), or ``n_train`` disagrees with
        the parts.
    """
    Y = check_Y(Y)
    n = Y.shape[0]
    parts = tuple(int(size) for size in parts)
    if parts and (any(size < 1 for size in parts) or sum(parts) != n):
        raise ValueError(f"parts {parts} must be positive row counts summing to the {n} rows of Y")
    boundaries = np.cumsum(parts)[:-1].tolist()
    if n_train is None:
        if len(parts) != 2:
            how = (
                "name the dataset as its training and test files joined by '+' (emotions-train+emotions-test), "
                "or give n_train=N (the first N rows train, the rest test)"
            )
            if parts:
                how = f"the dataset joins {len(parts)} files; give n_train at one of their boundaries {boundaries}"
            raise ValueError(f"no split given: {how}")
        n_train = parts[0]
    check_scalar(n_train, "n_train", kind=numbers.Integral, low=1, high=n - 1)
    if parts and n_train not in boundaries:
        fix = "leave n_train out to split there" if len(parts) == 2 else "give one of them"
        raise ValueError(
            f"n_train={n_train} disagrees with the joined dataset's parts {' + '.join(map(str, parts))}: "
            f"the training part ends at row {' or '.join(map(str, boundaries))}; {fix}"
        )
    return [(np.arange(n_train), np.arange(n_train, n))]


# ------------------------------------------------------------ fixed training size
def _check_label_counts(Y) -> None:
    counts = Y.sum(axis=0)
    rare = np.flatnonzero(counts < 2)
    if rare.size:
        raise ValueError(
            f"label(s) {rare.tolist()} have fewer than 2 relevant rows ({counts[rare].tolist()}), so they "
            "cannot appear in both the training and the test part"
        )


_TRAIN, _TEST, _FREE = 0, 1, -1


def _reserve_carriers(Y, order) -> np.ndarray:
    """Per row: ``_TRAIN``/``_TEST`` when reserved as a label's carrier for that part, else ``_FREE``."""
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    reserved = np.full(order.size, _FREE)
    for label in np.argsort(Y.sum(axis=0), kind="stable"):  # rarest first: they have the fewest choices
        carriers = np.flatnonzero(Y[:, label])
        carriers = carriers[np.argsort(position[carriers])]
        for part, name in ((_TRAIN, "training"), (_TEST, "test")):
            if np.any(reserved[carriers] == part):
                continue
            free = carriers[reserved[carriers] == _FREE]
            if free.size == 0:
                raise ValueError(
                    f"label {label}: its {carriers.size} relevant rows are all reserved as carriers of rarer "
                    f"labels, none is left for the {name} part; try another seed"
                )
            reserved[free[0]] = part
    return reserved


def _fixed_train_split(Y, n_train: int, order) -> tuple[np.ndarray, np.ndarray]:
    """One split of :func:`repeated_fixed_train` from one random row order (reserve, then fill)."""
    reserved = _reserve_carriers(Y, order)
    for part, name, room in ((_TRAIN, "training", n_train), (_TEST, "test", order.size - n_train)):
        needed = int(np.sum(reserved == part))
        if needed > room:
            raise ValueError(
                f"n_train={n_train} leaves {room} row(s) for the {name} part, but {needed} are needed "
                f"to give every label a relevant row there"
            )
    free_in_order = order[reserved[order] == _FREE]
    train = np.concatenate([np.flatnonzero(reserved == _TRAIN), free_in_order[: n_train - np.sum(reserved == _TRAIN)]])
    in_train = np.zeros(order.size, dtype=bool)
    in_train[train] = True
    return np.flatnonzero(in_train), np.flatnonzero(~in_train)


# ------------------------------------------------------------------- fixed ratio
def _part_size(n: int, fraction: float, name: str) -> int:
    size = int(round(fraction * n))
    if not 1 <= size <= n - 1:
        raise ValueError(f"{name}={fraction} leaves one part empty with {n} rows")
    return size


def _two_part_split(Y, n_first: int, fraction: float, stratify: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the first part (``n_first`` of them) and of the second, random or stratified."""
    n = Y.shape[0]
    if stratify:
        in_first = stratified_folds(Y, np.array([fraction, 1.0 - fraction]), rng) == 0
        _resize(Y, in_first, n_first, fraction, rng)
    else:
        in_first = np.zeros(n, dtype=bool)
        in_first[rng.permutation(n)[:n_first]] = True
    return np.flatnonzero(in_first), np.flatnonzero(~in_first)


def _resize(Y, in_first, n_first: int, fraction: float, rng) -> None:
    """Move rows between the two parts (in place) until the first holds exactly ``n_first``.

    Iterative stratification balances labels at the price of sizes off by about 1% of
    the rows.  Each move takes, from the part with too many rows, the row whose labels
    that part holds most in excess of its share (the sum over the row's labels of
    ``count in part - share * count``; ties at random), so a move restores label
    balance where it can rather than disturbing it.
    """
    Y = Y.astype(np.float64)
    totals = Y.sum(axis=0)
    while (surplus := int(in_first.sum()) - n_first) != 0:
        source, share = (in_first, fraction) if surplus > 0 else (~in_first, 1.0 - fraction)
        excess = Y[source].sum(axis=0) - share * totals
        candidates = np.flatnonzero(source)
        row = candidates[most_wanted(Y[candidates] @ excess, None, rng)]
        in_first[row] = not in_first[row]


def _reserve_train_carriers(Y, rng) -> np.ndarray:
    """Rows reserved for training so that every label has a relevant row there.

    Labels are served rarest first; a label not yet carried by a reserved row gets one
    of its relevant rows at random.  ValueError naming the labels that have no relevant
    row at all.
    """
    counts = Y.sum(axis=0)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(f"label(s) {empty.tolist()} have no relevant row, so no training part can hold one")
    carried = np.zeros(Y.shape[1], dtype=bool)
    reserved = []
    for label in np.argsort(counts, kind="stable"):
        if not carried[label]:
            row = rng.choice(np.flatnonzero(Y[:, label]))
            reserved.append(row)
            carried |= Y[row].astype(bool)
    return np.array(reserved, dtype=np.intp)


def _split_with_train_carriers(Y, n_first: int, stratify: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """A :func:`fixed_ratio` split whose training part holds a relevant row of every label."""
    carriers = _reserve_train_carriers(Y, rng)
    if carriers.size > n_first:
        raise ValueError(
            f"the training part has {n_first} rows, but {carriers.size} are needed to give every label "
            "a relevant row there"
        )
    rest = np.setdiff1d(np.arange(Y.shape[0]), carriers)
    n_rest_train = n_first - carriers.size
    train_rest = rest[:0]
    if n_rest_train:
        first, _ = _two_part_split(Y[rest], n_rest_train, n_rest_train / rest.size, stratify, rng)
        train_rest = rest[first]
    in_train = np.zeros(Y.shape[0], dtype=bool)
    in_train[carriers] = True
    in_train[train_rest] = True
    return np.flatnonzero(in_train), np.flatnonzero(~in_train)


# ---------------------------------------------------------------------- registry
@attrs.frozen
class Protocol:
    """Describe a named protocol: its split function, the paper it comes from and its defaults.

    ``split(Y, seed=0, parts=(), **params)`` returns the splits; ``defaults`` are the
    keyword parameters of the split function (the papers' settings), read from its
    signature.  ``parts`` (a joined dataset's part sizes) reaches only a function that
    takes it (:attr:`uses_parts`).

    Parameters
    ----------
    name : str
        The protocol's name, as experiment files and the CLI give it.
    function : callable
        ``function(Y, seed=..., **params)`` returns the list of splits.
    citation : str
        The paper (and section) whose protocol it is.
    transductive : bool, default=False
        Whether each split is ``(labeled, unlabeled, test)``: the model sees the unlabelled rows'
        features at fit time.
    extensible : bool, default=False
        Whether its first k splits are the same for every ``n_repeats >= k`` (the repetitions
        are drawn one after another from one seeded generator), so a finished run can be given
        more repetitions and keep its records (``mlcore compare --extend``).
    """

    name: str
    function: Callable[..., list]
    citation: str
    transductive: bool = False
    extensible: bool = False

    @property
    def defaults(self) -> dict:
        """The protocol's keyword parameters and their default values."""
        parameters = inspect.signature(self.function).parameters.values()
        return {
            p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY and p.name not in ("seed", "parts")
        }

    @property
    def uses_parts(self) -> bool:
        """Whether the protocol reads a dataset's given parts (a standard train/test split)."""
        return "parts" in inspect.signature(self.function).parameters

    def params(self, given=None) -> dict:
        """Complete ``given`` with the defaults.

        Parameters
        ----------
        given : mapping, optional
            Parameter name -> value, overriding the defaults.

        Returns
        -------
        dict
            Every parameter of the split function, the given values over the defaults.

        Raises
        ------
        ValueError
            For an unknown name, listing the valid ones.
        """
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"protocol {self.name!r} has no parameter {', '.join(map(repr, unknown))}; "
                f"valid: {', '.join(self.defaults)}"
            )
        return {**self.defaults, **given}

    def split(self, Y, seed: int = 0, *, parts=(), **params) -> list[tuple]:
        """Return the ``(train, test)`` index pairs for label matrix ``Y`` at ``seed``, with ``params`` over the defaults.

        Parameters
        ----------
        Y : array-like of shape (n_samples, n_labels)
            Binary label matrix.
        seed : int, default=0
            The non-negative seed of the split's random stream.
        parts : tuple of int, default=()
            A joined dataset's part sizes, passed only to a function that takes them.
        **params
            The split function's parameters, over :attr:`defaults`.

        Returns
        -------
        list of tuple
            The splits: ``(train, test)`` index arrays, or ``(labeled, unlabeled, test)`` for a
            transductive protocol.

        Raises
        ------
        ValueError
            For a negative seed or an unknown parameter.
        """
        check_scalar(seed, "seed", kind=numbers.Integral, low=0)
        extra = {"parts": tuple(parts)} if self.uses_parts else {}
        return self.function(Y, seed=seed, **extra, **self.params(params))


PROTOCOLS: dict[str, Protocol] = {
    protocol.name: protocol
    for protocol in (
        Protocol("kfold", kfold, "Zhang & Yeung, Multi-Label Relationship Learning (MLRL), TKDD: 10-fold CV"),
        Protocol(
            "repeated_fixed_train",
            repeated_fixed_train,
            "Gu, Li & Han, Correlated Multi-Label Feature Selection (CMLFS), CIKM 2011: 1000 training rows, 10 times",
            extensible=True,
        ),
        Protocol(
            "fixed_ratio",
            fixed_ratio,
            "You et al., Privileged Multi-label Learning (PrML); Tao, Xu & Geng (LIEML): 50/50 splits, 10 times",
            extensible=True,
        ),
        Protocol(
            "semi_supervised",
            semi_supervised,
            "Zhang & Yeung, MLRL section 6 (SSMLRL): 20% labelled, 80% unlabelled and evaluated, 10 times",
            transductive=True,
            extensible=True,
        ),
        Protocol(
            "given",
            given,
            "Zhang et al., Multi-Kernel Multi-Label Learning with Max-Margin Concept Network (MKML), IJCAI 2011: "
            "the standard Mulan train/test splits, and the first 2000 rows of a Yahoo set for training",
        ),
    )
}


def get_protocol(name: str) -> Protocol:
    """Return the protocol registered as ``name``.

    Parameters
    ----------
    name : str
        One of :data:`PROTOCOLS`.

    Returns
    -------
    Protocol
        The protocol.

    Raises
    ------
    ValueError
        Listing the known names, when ``name`` is not one.
    """
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]
