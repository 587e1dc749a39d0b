"""Splitting multi-label data and cross-validating estimators.

Iterative stratification (Sechidis, Tsoumakas & Vlahavas 2011, "On the stratification
of multi-label data", Algorithm 1) keeps every label's share of positives close to the
desired proportion in each fold, which plain random folds fail to do for rare labels.
Notation: k folds with desired proportions r_1..r_k; ``c_m`` is the number of rows
fold m still wants, ``c_m^j`` the number of positives of label j it still wants.

scikit-learn is not needed here: the splitters follow its splitter protocol
(``split(X, y, groups)`` and ``get_n_splits``) so they also work as ``cv=`` in its
model-selection tools, and :func:`cross_validate` clones estimators through
``get_params`` alone.
"""

from __future__ import annotations

import numbers
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from ._progress import progress_bar
from .parallel import WithinBudget, worker_threads

from .validation import check_random_state, check_scalar, check_X, check_Y
from .metrics import check_metric_names, evaluate

__all__ = [
    "IterativeStratifiedKFold",
    "RepeatedIterativeStratifiedKFold",
    "cross_validate",
    "iterative_stratification",
    "rows_of",
    "train_test_split_stratified",
]


# ----------------------------------------------------------------- the algorithm
def most_wanted(primary, secondary, rng):
    """Return the index of the largest ``primary``; ties go to the largest ``secondary``, then to chance.

    The choice iterative stratification makes at every step (Sechidis, Tsoumakas & Vlahavas,
    *On the stratification of multi-label data*, Algorithm 1), shared by the experiment
    protocols' split repair (:mod:`multilabel_core.experiments.protocols`).

    Parameters
    ----------
    primary : ndarray of shape (m,)
        The values to maximise.
    secondary : ndarray of shape (m,) or None
        The tie-breaker among the maxima of ``primary`` (None: none).
    rng : numpy Generator or None
        Breaks the remaining ties at random; None gives them to the lowest index.

    Returns
    -------
    int
        The chosen index.
    """
    candidates = np.flatnonzero(primary == primary.max())
    if candidates.size > 1 and secondary is not None:
        candidates = candidates[secondary[candidates] == secondary[candidates].max()]
    if candidates.size > 1 and rng is not None:
        return candidates[rng.integers(candidates.size)]
    return candidates[0]


def stratified_folds(Y, proportions, rng):
    """Return the fold index of every row of a 0/1 indicator ``Y``, folds of the given proportions.

    Iterative stratification (Sechidis, Tsoumakas & Vlahavas, *On the stratification of
    multi-label data*, Algorithm 1) with unequal fold sizes, the step under
    :func:`iterative_stratification` and the experiment protocols' stratified splits.
    Labels are served one at a time, always the one with the fewest rows still
    unassigned (ties at random), so rare labels are spread before common ones fill the
    folds.  Each of its rows goes to the fold wanting the most positives of that label,
    ties to the fold wanting the most rows, then at random.  Rows without labels go
    last, each to the fold wanting the most rows.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_labels)
        The 0/1 indicator, already validated.
    proportions : ndarray of shape (n_folds,)
        Each fold's share of the rows (summing to 1).
    rng : numpy Generator or None
        Row order and tie-breaking; None processes rows in order and breaks remaining ties
        by the lowest fold index.

    Returns
    -------
    ndarray of shape (n_samples,)
        The fold (0 .. n_folds - 1) of every row.
    """
    n = Y.shape[0]
    order = np.arange(n) if rng is None else rng.permutation(n)
    Y = Y[order].astype(np.int64)
    wanted_rows = n * proportions
    wanted_positives = np.outer(Y.sum(axis=0), proportions)
    unassigned_per_label = Y.sum(axis=0)
    folds = np.full(n, -1)

    def assign(row, fold):  # updates the enclosing arrays in place
        folds[row] = fold
        wanted_rows[fold] -= 1
        wanted_positives[:, fold] -= Y[row]
        unassigned_per_label[:] -= Y[row]

    while unassigned_per_label.any():
        open_labels = np.flatnonzero(unassigned_per_label)
        label = open_labels[most_wanted(-unassigned_per_label[open_labels], None, rng)]
        for row in np.flatnonzero((folds < 0) & (Y[:, label] == 1)):
            assign(row, most_wanted(wanted_positives[label], wanted_rows, rng))
    for row in np.flatnonzero(folds < 0):
        assign(row, most_wanted(wanted_rows, None, rng))

    result = np.empty(n, dtype=np.intp)
    result[order] = folds
    return result


def _check_n_folds(n_folds, n_samples, name="n_folds"):
    check_scalar(n_folds, name, kind=numbers.Integral, low=2)
    if n_folds > n_samples:
        raise ValueError(f"{name}={n_folds} is larger than the number of rows ({n_samples})")
    return int(n_folds)


def iterative_stratification(Y, n_folds, random_state=None):
    """Assign every row of ``Y`` to a fold by iterative stratification.

    Each fold receives about 1/n_folds of the rows and of every label's positives (Sechidis,
    Tsoumakas & Vlahavas, "On the stratification of multi-label data", Algorithm 1).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    n_folds : int
        Number of folds, at least 2 and at most the number of rows.
    random_state : None, int or numpy Generator, default=None
        Seed of the row order and the tie-breaking; an int makes the result deterministic.

    Returns
    -------
    ndarray of shape (n_samples,)
        The fold index (0..n_folds-1) of every row.
    """
    Y = check_Y(Y)
    n_folds = _check_n_folds(n_folds, Y.shape[0])
    return stratified_folds(Y, np.full(n_folds, 1.0 / n_folds), check_random_state(random_state))


# ----------------------------------------------------------------------- splitters
def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def take_rows(A, rows):
    """Return rows of a dense array or sparse matrix, never densifying (COO etc. become CSR).

    Parameters
    ----------
    A : array-like or sparse matrix of shape (n_samples, ...)
        The rows to take from.
    rows : array-like of int or bool
        Which rows.

    Returns
    -------
    ndarray or sparse matrix
        The selected rows, sparse (CSR or CSC) when A is sparse.
    """
    if sp.issparse(A):
        return (A if A.format in ("csr", "csc") else A.tocsr())[rows]
    return np.asarray(A)[rows]


def rows_of(X, rows, fit_rows, precomputed: bool):
    """Take rows of X; for a precomputed kernel, only the columns of the training rows ``fit_rows``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features) or (n_samples, n_samples)
        Features, or a precomputed kernel between all rows.
    rows : array-like of int
        The rows to take.
    fit_rows : array-like of int
        The training rows of the model the block is for (its kernel columns).
    precomputed : bool
        Whether ``X`` is a precomputed kernel.

    Returns
    -------
    array-like or sparse matrix
        ``X[rows]``, or ``X[rows][:, fit_rows]`` for a precomputed kernel; sparse stays sparse.
    """
    block = take_rows(X, rows)
    return block[:, fit_rows] if precomputed else block


class IterativeStratifiedKFold:
    """K-fold splitter whose test folds are drawn by iterative stratification.

    Parameters
    ----------
    n_splits : int, default 10
        Number of folds (>= 2).
    shuffle : bool, default True
        Visit rows in a random order and break ties at random.  With ``False`` the
        folds depend only on ``Y`` (rows in order, ties to the lowest fold).
    random_state : None, int or numpy Generator
        Seed of the shuffling; an int gives the same folds on every ``split`` call.
        Must be None when ``shuffle`` is False.
    """

    def __init__(self, n_splits=10, shuffle=True, random_state=None):
        check_scalar(n_splits, "n_splits", kind=numbers.Integral, low=2)
        if not shuffle and random_state is not None:
            raise ValueError("random_state has no effect when shuffle=False; leave it None")
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_splits={self.n_splits}, shuffle={self.shuffle}, "
            f"random_state={self.random_state!r})"
        )

    def get_n_splits(self, X=None, y=None, groups=None):
        """Return the number of ``(train, test)`` pairs :meth:`split` yields.

        Parameters
        ----------
        X : object, optional
            Ignored; accepted for scikit-learn's splitter interface.
        y : object, optional
            Ignored.
        groups : object, optional
            Ignored.

        Returns
        -------
        int
            ``n_splits``.
        """
        return self.n_splits

    def split(self, X, Y=None, groups=None):
        """Yield ``(train_indices, test_indices)`` for each fold.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to split; only their number is read.
        Y : array-like of shape (n_samples, n_labels)
            The binary label matrix the folds are stratified on (required; scikit-learn passes it as
            ``y``).
        groups : object, optional
            Ignored; accepted for scikit-learn's splitter interface.

        Yields
        ------
        train : ndarray of int
            The indices of the rows outside the fold.
        test : ndarray of int
            The indices of the fold's rows.

        Raises
        ------
        ValueError
            If ``Y`` is None or not a binary matrix with one row per row of ``X``, or has fewer rows
            than ``n_splits``.
        """
        if Y is None:
            raise ValueError("iterative stratification needs the label matrix Y (pass it as y)")
        Y = check_Y(Y, n_samples=_n_rows(X))
        n_splits = _check_n_folds(self.n_splits, Y.shape[0], "n_splits")
        rng = check_random_state(self.random_state) if self.shuffle else None
        folds = stratified_folds(Y, np.full(n_splits, 1.0 / n_splits), rng)
        for fold in range(n_splits):
            yield np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)


class RepeatedIterativeStratifiedKFold:
    """Run ``n_repeats`` rounds of :class:`IterativeStratifiedKFold`, each with fresh randomness.

    Parameters
    ----------
    n_splits : int, default=10
        Number of folds of each round (>= 2).
    n_repeats : int, default=10
        Number of rounds (>= 1).
    random_state : None, int or numpy Generator, default=None
        Seed of the shuffling; an int makes the splits deterministic.  The splitter yields
        ``n_splits * n_repeats`` splits.

    Raises
    ------
    ValueError
        If ``n_splits`` < 2 or ``n_repeats`` < 1.
    """

    def __init__(self, n_splits=10, n_repeats=10, random_state=None):
        check_scalar(n_splits, "n_splits", kind=numbers.Integral, low=2)
        check_scalar(n_repeats, "n_repeats", kind=numbers.Integral, low=1)
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.random_state = random_state

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_splits={self.n_splits}, n_repeats={self.n_repeats}, "
            f"random_state={self.random_state!r})"
        )

    def get_n_splits(self, X=None, y=None, groups=None):
        """Return the number of ``(train, test)`` pairs :meth:`split` yields.

        Parameters
        ----------
        X : object, optional
            Ignored; accepted for scikit-learn's splitter interface.
        y : object, optional
            Ignored.
        groups : object, optional
            Ignored.

        Returns
        -------
        int
            ``n_splits * n_repeats``.
        """
        return self.n_splits * self.n_repeats

    def split(self, X, Y=None, groups=None):
        """Yield ``(train_indices, test_indices)`` for every fold of every repeat.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to split; only their number is read.
        Y : array-like of shape (n_samples, n_labels)
            The binary label matrix the folds are stratified on (required; scikit-learn passes it as
            ``y``).
        groups : object, optional
            Ignored; accepted for scikit-learn's splitter interface.

        Yields
        ------
        train : ndarray of int
            The indices of the rows outside the fold.
        test : ndarray of int
            The indices of the fold's rows.
        """
        rng = check_random_state(self.random_state)
        for _ in range(self.n_repeats):
            yield from IterativeStratifiedKFold(self.n_splits, shuffle=True, random_state=rng).split(X, Y)


def train_test_split_stratified(X, Y, test_size=0.25, random_state=None):
    """Split the rows once by iterative stratification: ``(X_train, X_test, Y_train, Y_test)``.

    The test part gets about ``test_size`` of the rows and of every label's positives
    (stratification trades exact sizes for label balance).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features.
    Y : array-like of shape (n_samples, n_labels)
        Binary label matrix.
    test_size : float or int, default=0.25
        A fraction in (0, 1), or a number of rows between 1 and ``n_samples - 1``.
    random_state : None, int or numpy Generator, default=None
        Seed of the row order; an int makes the split deterministic.

    Returns
    -------
    X_train, X_test : array-like or sparse matrix
        Rows of ``X`` as given (sparse stays sparse).
    Y_train, Y_test : array-like
        The same rows of ``Y``.

    Raises
    ------
    ValueError
        For a ``test_size`` out of range, or one that leaves a part empty.
    """
    labels = check_Y(Y, n_samples=_n_rows(X))
    n = labels.shape[0]
    if isinstance(test_size, numbers.Integral):
        check_scalar(test_size, "test_size", kind=numbers.Integral, low=1, high=n - 1)
        test_size = test_size / n
    check_scalar(test_size, "test_size", low=0, high=1, low_inclusive=False, high_inclusive=False)
    folds = stratified_folds(labels, np.array([1.0 - test_size, test_size]), check_random_state(random_state))
    train, test = np.flatnonzero(folds == 0), np.flatnonzero(folds == 1)
    if train.size == 0 or test.size == 0:
        raise ValueError(f"test_size={test_size} leaves one part empty with {n} rows")
    return take_rows(X, train), take_rows(X, test), take_rows(Y, train), take_rows(Y, test)


# ------------------------------------------------------------------ cross-validation
def uses_precomputed_kernel(estimator) -> bool:
    """Return whether an estimator takes a precomputed kernel, whose columns are split with its rows.

    Parameters
    ----------
    estimator : object
        An estimator, fitted or not; its ``kernel`` is read.

    Returns
    -------
    bool
        True for ``kernel="precomputed"`` or a kernel object whose ``precomputed`` is true.
    """
    kernel = getattr(estimator, "kernel", None)
    return (isinstance(kernel, str) and kernel == "precomputed") or bool(getattr(kernel, "precomputed", False))


def _certificate_summary(model):
    """``{"converged", "gap"}`` of the fitted model's last certificate, or None without one."""
    certificate = getattr(model, "certificate_", None)
    if isinstance(certificate, (list, tuple)):  # alternating methods keep one per outer step
        certificate = certificate[-1] if certificate else None
    if certificate is None:
        return None
    return {"converged": getattr(certificate, "converged", None), "gap": getattr(certificate, "gap", None)}


def _fit_and_score(estimator, X, Y, train, test, names, precomputed, keep_estimator):
    model = type(estimator)(**estimator.get_params(deep=False))
    X_train, X_test = take_rows(X, train), take_rows(X, test)
    if precomputed:
        X_train, X_test = X_train[:, train], X_test[:, train]
    start = perf_counter()
    model.fit(X_train, Y[train])
    fit_time = perf_counter() - start
    start = perf_counter()
    scores, Y_pred = model.decision_function(X_test), model.predict(X_test)
    predict_time = perf_counter() - start
    return {
        "metrics": evaluate(Y[test], scores, Y_pred, names),
        "fit_time": fit_time,
        "predict_time": predict_time,
        "certificate": _certificate_summary(model),
        "estimator": model if keep_estimator else None,
    }


def _splits(cv, X, Y, random_state):
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return list(IterativeStratifiedKFold(cv, shuffle=True, random_state=random_state).split(X, Y))
    if random_state is not None:
        raise ValueError("random_state only seeds the default splitter (cv an int); seed your splitter instead")
    if hasattr(cv, "split"):
        return list(cv.split(X, Y))
    try:
        return [(np.asarray(train), np.asarray(test)) for train, test in cv]
    except TypeError:
        raise ValueError(
            f"cv must be an int, a splitter with split(X, Y) or an iterable of (train, test), got {cv!r}"
        ) from None


def cross_validate(
    estimator,
    X,
    Y,
    cv=10,
    metrics=None,
    n_jobs=None,
    random_state=None,
    progress=False,
    return_estimators=False,
):
    """Fit a fresh copy of ``estimator`` on each training part and measure it on the test part.

    Parameters
    ----------
    estimator : estimator
        Anything with ``get_params(deep=False)``, ``fit(X, Y)``, ``decision_function`` and
        ``predict``; each fold gets ``type(estimator)(**estimator.get_params(deep=False))``.
    X : array or sparse matrix (n, d)
        Sparse X is split by rows without densifying.  For a precomputed-kernel
        estimator X is the (n, n) kernel and the test part gets K[test, train].
    Y : array-like or sparse matrix of shape (n, L)
        The {0, 1} indicator matrix, dense or sparse.
    cv : int, splitter or iterable of (train, test), default 10
        An int means :class:`IterativeStratifiedKFold` with that many folds.
    metrics : iterable of str, optional
        Names from :data:`multilabel_core.metrics.METRICS`; None: all of them.
    n_jobs : int or None
        Folds run in parallel through joblib; the results equal the serial ones.
    random_state : None or int
        Seed of the default splitter (only when ``cv`` is an int).
    progress : bool or "lines"
        A tqdm progress bar over the folds (True), a line every ten seconds on stderr
        (``"lines"``, for a redirected run), or nothing (False).
    return_estimators : bool
        Also return the fitted estimators.

    Returns
    -------
    dict
        For each metric name, the list of its per-fold values; ``fit_time`` and
        ``predict_time`` (seconds per fold); ``certificate`` (per fold, the fitted
        model's ``{"converged", "gap"}`` or None); ``mean`` and ``std`` (population
        standard deviation over folds) dicts over the metric names; and ``estimators``
        when asked.
    """
    X = check_X(X)
    Y = check_Y(Y, n_samples=X.shape[0])
    names = check_metric_names(metrics)
    splits = _splits(cv, X, Y, random_state)
    precomputed = uses_precomputed_kernel(estimator)
    # Each fold's fit may start cores // workers threads (BLAS, and its n_jobs=None label threads).
    task = WithinBudget(_fit_and_score, worker_threads(effective_n_jobs(n_jobs)))
    jobs = (delayed(task)(estimator, X, Y, train, test, names, precomputed, return_estimators) for train, test in splits)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    folds = []
    with progress_bar(progress, len(splits), "cross-validation", "fold") as bar:
        for fold in results:
            folds.append(fold)
            bar.update(1)

    summary = {name: [fold["metrics"][name] for fold in folds] for name in names}
    for key in ("fit_time", "predict_time", "certificate"):
        summary[key] = [fold[key] for fold in folds]
    summary["mean"] = {name: float(np.mean(summary[name])) for name in names}
    summary["std"] = {name: float(np.std(summary[name])) for name in names}
    if return_estimators:
        summary["estimators"] = [fold["estimator"] for fold in folds]
    return summary
