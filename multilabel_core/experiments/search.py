"""Hyper-parameter selection by inner cross-validation on a training part.

For one training part T (row indices) and a grid G (parameter -> list of values):

1. T is cut into K inner folds by iterative stratification (seeded);
2. every grid point g is fitted on each inner training part and scored on its held-out
   fold with the selection metric m: ``score(g) = mean_k m(fold k)`` (folds where m is
   undefined, NaN, are left out of the mean);
3. the chosen point is the best score in m's direction
   (:data:`multilabel_core.metrics.METRICS`), ties going to the first point in grid
   order.  A point whose fit raised on any fold is "failed" and never chosen.

Grid points are enumerated with the parameter names sorted and, for each name, the
values in the order given (the last name varies fastest).  A grid of one point needs no
search: it is used directly and the search record is empty.

Warm starts.  An estimator with a ``warm_start`` parameter continues each fit from the
previous solution.  For such an estimator one inner fold is one task: a single estimator
object is made with ``warm_start=True`` and fitted along the grid in order, so list the
values in the order that helps (e.g. increasing ``C``: the solution for a small C is a
good start for the next larger one).  Any other estimator is refitted from scratch for
every grid point, each (fold, point) pair being its own task.

Preprocessing (:mod:`.preprocessing`) is fitted inside each fold on the inner training
rows only, like the model, and the held-out fold is scaled with those statistics.

Transductive training parts (the semi-supervised protocol) keep their meaning inside:
an inner fit also receives, as unlabelled rows, its held-out fold together with the
outer unlabelled rows, when the estimator's ``fit`` accepts ``X_unlabeled``.

Labels constant in an inner training part (a rare label whose relevant rows all fall in
the held-out fold) follow the experiment's ``constant_labels`` option, as the outer fit
does (:mod:`.constant_labels`): under ``"refuse"`` the method raises and that fold fails the
grid point; under ``"predict_constant"`` the fold's model is fitted on the other labels and
the constant ones are predicted at their inner training value.

Grid extension.  With ``grid_extensions = N > 0``, a chosen value at an edge of its grid
(the lowest or highest of a numeric grid of at least three distinct values, as
:func:`~.diagnostics.grid_edges` reads it) extends that grid one step beyond the edge
(:func:`next_grid_value`) and the new points are fitted on the same inner folds; the choice
is then made again over every point, old and new, and so on, at most N times per
parameter.  Each extension is recorded (:meth:`InnerSearch.extension_summary`), and so is
a chosen value still at an edge when the search ends: the limit was reached, no valid value
lies beyond the edge, or extension was off.  Non-numeric grids are never extended.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import numbers
import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..exceptions import SearchError
from ..validation import check_scalar

from ..parallel import WithinBudget, worker_threads
from ..validation import check_X, check_Y
from ..metrics import METRICS, check_metric_names
from ..model_selection import IterativeStratifiedKFold, uses_precomputed_kernel, rows_of
from .constant_labels import DEFAULT_CONSTANT_LABELS, check_constant_labels, constant_columns, fit_labels
from .diagnostics import MIN_EDGE_GRID, is_number
from .preprocessing import check_preprocess, preprocessed

__all__ = [
    "DEFAULT_GRID_EXTENSIONS",
    "InnerSearch",
    "SearchError",
    "accepts_unlabeled",
    "describe_warnings",
    "edge_of",
    "expand_grid",
    "fit_model",
    "fit_on_rows",
    "inner_folds",
    "next_grid_value",
    "prepared",
    "recording_warnings",
    "rows_of",
    "score_points",
    "search_params",
    "select",
    "supports_warm_start",
    "valid_value",
]

#: How many times one parameter's grid may be extended at its edges in one inner search
#: (the runner's default for a new store; module docstring).
DEFAULT_GRID_EXTENSIONS = 3


def expand_grid(grid) -> list[dict]:
    """List every point of ``grid``, in the order of the module docstring.

    Parameters
    ----------
    grid : mapping of str to sequence
        Parameter -> values.

    Returns
    -------
    list of dict
        One dict per point: the parameter names sorted and, for each, the values in the order
        given (the last name varies fastest).
    """
    names = sorted(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[name] for name in names))]


def supports_warm_start(estimator) -> bool:
    """Tell whether the estimator has a ``warm_start`` parameter (fits along a grid continue).

    Parameters
    ----------
    estimator : object
        An estimator with ``get_params``.

    Returns
    -------
    bool
        True when ``warm_start`` is among its parameters.
    """
    return "warm_start" in estimator.get_params(deep=False)


def accepts_unlabeled(estimator) -> bool:
    """Tell whether ``estimator.fit`` takes the keyword ``X_unlabeled`` (semi-supervised methods).

    Parameters
    ----------
    estimator : object
        An estimator.

    Returns
    -------
    bool
        True when its ``fit`` has an ``X_unlabeled`` parameter.
    """
    return "X_unlabeled" in inspect.signature(estimator.fit).parameters


def inner_folds(Y, train, unlabeled, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Cut a training part into inner folds by iterative stratification.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_labels)
        All rows' labels.
    train : ndarray of int
        The training part's rows.
    unlabeled : ndarray of int or None
        The outer unlabelled rows of a transductive part; None for a supervised one.
    n_folds : int
        The number of inner folds.
    seed : int
        The seed of the folds.

    Returns
    -------
    list of (ndarray, ndarray, ndarray or None)
        ``(fit_rows, score_rows, unlabeled_rows)`` of each inner fold, as rows of the full data;
        ``unlabeled_rows`` is None for a supervised part, otherwise the held-out fold joined with
        the outer unlabelled rows (module docstring).
    """
    Y_train = Y[train]
    splitter = IterativeStratifiedKFold(n_folds, shuffle=True, random_state=seed)
    folds = []
    for inner_train, inner_test in splitter.split(Y_train, Y_train):
        fit_rows, score_rows = train[inner_train], train[inner_test]
        pool = None if unlabeled is None else np.concatenate([score_rows, unlabeled])
        folds.append((fit_rows, score_rows, pool))
    return folds


def fit_on_rows(model, X, Y, fit_rows, unlabeled_rows=None):
    """Fit ``model`` on rows ``fit_rows`` (kernel columns too for a precomputed kernel).

    Parameters
    ----------
    model : MultiLabelEstimator
        The estimator to fit (fitted in place).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features (or a precomputed kernel).
    Y : ndarray of shape (n_samples, n_labels)
        All rows' labels.
    fit_rows : ndarray of int
        The training rows.
    unlabeled_rows : ndarray of int, optional
        Rows whose features go to ``fit(..., X_unlabeled=...)`` when given and the estimator
        accepts them.

    Returns
    -------
    int
        The number of unlabelled rows passed.
    """
    return _fit_rows(model, X, Y[fit_rows], fit_rows, unlabeled_rows)


def _fit_rows(model, X, Y_fit, fit_rows, unlabeled_rows):
    """:func:`fit_on_rows` with the training rows' labels ``Y_fit`` given (some columns of them, maybe)."""
    precomputed = uses_precomputed_kernel(model)
    X_fit = rows_of(X, fit_rows, fit_rows, precomputed)
    if unlabeled_rows is not None and accepts_unlabeled(model):
        model.fit(X_fit, Y_fit, X_unlabeled=rows_of(X, unlabeled_rows, fit_rows, precomputed))
        return len(unlabeled_rows)
    model.fit(X_fit, Y_fit)
    return 0


def fit_model(model, X, Y, fit_rows, unlabeled_rows=None, constant_labels=DEFAULT_CONSTANT_LABELS):
    """Fit ``model`` on rows ``fit_rows`` as :func:`fit_on_rows`, labels constant there handled by ``constant_labels``.

    Parameters
    ----------
    model : MultiLabelEstimator
        The estimator to fit (fitted in place).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features (or a precomputed kernel).
    Y : ndarray of shape (n_samples, n_labels)
        All rows' labels.
    fit_rows : ndarray of int
        The training rows.
    unlabeled_rows : ndarray of int, optional
        Rows whose features go to ``fit(..., X_unlabeled=...)`` when the estimator accepts them.
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        How labels constant in ``fit_rows`` are handled (:func:`~.constant_labels.fit_labels`).

    Returns
    -------
    predictor : object
        The fitted model itself, or a :class:`~.constant_labels.PartialModel` around it that
        predicts the constant labels.
    n_unlabeled : int
        The number of unlabelled rows passed to ``fit``.
    """
    passed = []

    def fit(Y_fit):
        passed.append(_fit_rows(model, X, Y_fit, fit_rows, unlabeled_rows))
        return model

    predictor = fit_labels(fit, Y[fit_rows], constant_labels)
    return predictor, passed[0]


@contextlib.contextmanager
def recording_warnings():
    """Catch every warning raised inside; yields the list of :class:`warnings.WarningMessage`.

    Each occurrence is kept ("always"): the once-per-location default would hide a
    warning in a worker process that has already shown it, and results must not depend
    on which worker ran a task.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def describe_warnings(caught) -> list[str]:
    """Describe caught warnings as distinct ``"Category: message"`` lines, in order of first occurrence.

    Parameters
    ----------
    caught : iterable of warnings.WarningMessage
        The warnings recorded.

    Returns
    -------
    list of str
        The distinct lines.
    """
    return list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))


def score_points(estimator, X, Y, fit_rows, score_rows, unlabeled_rows, points, metric, warm_start, preprocess=None,
                 constant_labels=DEFAULT_CONSTANT_LABELS):
    """Fit and score each grid point of ``points`` on one inner fold (one task).

    With ``warm_start`` one estimator object goes along the points in order.  A failure to apply
    the scaling, or to make the estimator, fails every point.  Never raises: every exception is a
    failed point.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features (or a precomputed kernel).
    Y : ndarray of shape (n_samples, n_labels)
        All rows' labels.
    fit_rows : ndarray of int
        The fold's training rows.
    score_rows : ndarray of int
        The held-out rows scored.
    unlabeled_rows : ndarray of int or None
        Rows passed as ``X_unlabeled`` to an estimator that takes them.
    points : list of dict
        The grid points, in order.
    metric : str
        The selection metric.
    warm_start : bool
        Fit one estimator along the points with ``warm_start=True``.
    preprocess : str or None, default=None
        The scaler fitted on ``fit_rows`` (:func:`~.preprocessing.preprocessed`).
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        How labels constant in ``fit_rows`` are handled (module docstring).

    Returns
    -------
    list of tuple
        One ``(score, error, warnings)`` per point: the selection metric on the held-out rows
        (None when fitting or scoring raised), ``"ExceptionType: message"`` or None, and the
        warnings raised (:func:`describe_warnings`).
    """
    # Any exception, not only ValueError: a task that raised would end the whole run.
    try:
        X = prepared(estimator, X, fit_rows, preprocess)
        base = estimator.get_params(deep=False)
        model = type(estimator)(**{**base, "warm_start": True}) if warm_start else None
    except Exception as exc:
        return [(None, f"{type(exc).__name__}: {exc}", []) for _ in points]
    results = []
    for point in points:
        score, error = None, None
        with recording_warnings() as caught:
            try:
                if warm_start:
                    model.set_params(**point)
                else:
                    model = type(estimator)(**{**base, **point})
                predictor, _ = fit_model(model, X, Y, fit_rows, unlabeled_rows, constant_labels)
                X_score = rows_of(X, score_rows, fit_rows, uses_precomputed_kernel(model))
                score = _metric_value(metric, Y[score_rows], predictor, X_score)
            except Exception as exc:  # a failing grid point is recorded, the search goes on
                error = f"{type(exc).__name__}: {exc}"
        results.append((score, error, describe_warnings(caught)))
    return results


def prepared(estimator, X, fit_rows, preprocess):
    """Scale X by ``preprocess`` fitted on ``fit_rows``.

    A precomputed kernel's entries are inner products of features that are already fixed:
    scaling them as features would be meaningless, so it is refused.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method (to tell whether X is a precomputed kernel).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features.
    fit_rows : ndarray of int
        The rows the scaler is fitted on.
    preprocess : str or None
        A scaler name, or None for X as it is.

    Returns
    -------
    array-like or sparse matrix
        X scaled (every row, with the statistics of ``fit_rows``), or X itself for None.

    Raises
    ------
    ValueError
        For a scaler on a precomputed kernel.
    """
    if preprocess is not None and uses_precomputed_kernel(estimator):
        raise ValueError(f"preprocess={preprocess!r} cannot rescale a precomputed kernel; rescale the features first")
    return preprocessed(X, fit_rows, preprocess)


def _metric_value(metric, Y_true, model, X) -> float:
    function, needs, _ = METRICS[metric]
    return float(function(Y_true, model.decision_function(X) if needs == "scores" else model.predict(X)))


def edge_of(values, chosen) -> str | None:
    """Tell whether ``chosen`` is the lowest or the highest value of the numeric grid ``values``.

    Only a grid of numbers (bools are not) with at least :data:`~.diagnostics.MIN_EDGE_GRID`
    distinct values has edges: a grid of two values has no interior, every choice in it is an end.

    Parameters
    ----------
    values : sequence
        The grid's values.
    chosen : object
        The chosen value.

    Returns
    -------
    {"lowest", "highest"} or None
        The edge ``chosen`` lies at, else None.
    """
    if not is_number(chosen) or not all(map(is_number, values)):
        return None
    distinct = sorted(set(values))
    if len(distinct) < MIN_EDGE_GRID:
        return None
    return "lowest" if chosen == distinct[0] else "highest" if chosen == distinct[-1] else None


def valid_value(estimator, name: str, value) -> bool:
    """Tell whether ``estimator`` accepts ``value`` for its parameter ``name``, by its own validation.

    The estimator is rebuilt with the value and its ``_validate_params`` (the check every
    :class:`~multilabel_core.MultiLabelEstimator` runs at the start of ``fit``, before any data
    are read) is called; an estimator without one accepts every value, and a value it cannot
    fit is then a failed grid point like any other.

    Parameters
    ----------
    estimator : object
        An estimator with ``get_params``.
    name : str
        The parameter.
    value : object
        The value to try.

    Returns
    -------
    bool
        False when rebuilding or validating raised, else True.
    """
    try:
        probe = type(estimator)(**{**estimator.get_params(deep=False), name: value})
        check = getattr(probe, "_validate_params", None)
        if check is not None:
            check()
    except Exception:  # whatever the estimator raises for a value is its refusal of it
        return False
    return True


#: Where a step beyond a grid's edge is clipped when it leaves the parameter's valid range
#: (a weight >= 0, a fraction or probability <= 1), tried nearest to the edge's step first.
NATURAL_BOUNDS = (0, 1, -1)


def next_grid_value(values, edge: str, estimator=None, name: str | None = None):
    """Return the value one step beyond the ``edge`` of the numeric grid ``values``.

    * A grid of values of one strict sign that is not evenly spaced is log-spaced: the step
      repeats the ratio of the two values at that edge (1e-5, 1e-4, ..., 0.01 -> 1e-6 or 0.1).
    * Any other grid (evenly spaced, or holding 0 or both signs) steps by the difference of
      the two values at that edge (5, 10, 15, 20 -> 0 or 25).
    * A grid of integers stays integer (the step rounded, at least 1).

    Parameters
    ----------
    values : sequence of numbers
        The grid's values (at least two distinct).
    edge : {"lowest", "highest"}
        The edge to step beyond.
    estimator : MultiLabelEstimator, optional
        With ``name``: the value must pass :func:`valid_value`; when it does not, the nearest of
        :data:`NATURAL_BOUNDS` strictly between the edge and the step is tried (lam2 grid 0.001,
        0.01, 0.1 stepping to -0.089 is clipped at 0; a probability 0.5, 0.7, 0.9 stepping to 1.1
        is clipped at 1), and a grid whose edge is already that bound is not extended.
    name : str, optional
        The parameter the grid is for.

    Returns
    -------
    tuple of (number, str) or None
        ``(value, step)`` with ``step`` ``"geometric"`` or ``"arithmetic"`` (``", clipped at B"``
        added when the step left the valid range and was clipped at the bound B), or None when
        no valid value lies beyond the edge.
    """
    grid = sorted(set(values))
    if len(grid) < 2 or not all(map(is_number, grid)):
        return None
    edge_value, inner = (grid[0], grid[1]) if edge == "lowest" else (grid[-1], grid[-2])
    differences = np.diff(np.asarray(grid, dtype=np.float64))
    evenly = bool(np.allclose(differences, differences[0], rtol=1e-6, atol=0.0))
    one_sign = all(v > 0 for v in grid) or all(v < 0 for v in grid)
    integer = all(isinstance(v, numbers.Integral) for v in grid)
    if one_sign and not evenly:
        value, step = edge_value * (edge_value / inner), "geometric"
    else:
        value, step = edge_value + (edge_value - inner), "arithmetic"
    if integer:
        rounded = int(round(value))
        value = rounded if rounded != edge_value else edge_value + (1 if value > edge_value else -1)
    else:
        # 12 significant digits: 1e-5 * (1e-5 / 1e-4) is 1e-06, not 1.0000000000000002e-06.
        value = float(f"{value:.12g}")
    if estimator is None or name is None or valid_value(estimator, name, value):
        return value, step
    between = [b for b in NATURAL_BOUNDS if min(edge_value, value) < b < max(edge_value, value)]
    for bound in sorted(between, key=lambda b: abs(b - value)):
        bound = bound if integer else float(bound)
        if valid_value(estimator, name, bound):
            return bound, f"{step}, clipped at {bound:g}"
    return None


class InnerSearch:
    """Run the inner search of one training part: its tasks, and the choice from their results.

    The runner gathers the tasks of several training parts into one parallel batch, then
    hands each search its slice of the results (:meth:`absorb`).  With ``grid_extensions``
    (module docstring) :meth:`extend` may then plan new points, whose tasks go with a later
    batch; :meth:`result` gives the choice once it plans none.  :meth:`choose` is
    :meth:`absorb` then :meth:`result`, for a search without extensions.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted (copied for each fit).
    grid : mapping of str to list
        Parameter -> values to search.
    Y : ndarray of shape (n_samples, n_labels)
        All rows' binary labels.
    train : ndarray of int
        The training part's rows.
    unlabeled : ndarray of int, optional
        The outer unlabelled rows of a transductive part.
    inner_cv : int, default=3
        The number of inner folds.
    metric : str, default="average_precision"
        The selection metric.
    seed : int, default=0
        The seed of the inner folds.
    preprocess : str or None, default=None
        A scaler name (:data:`~.preprocessing.PREPROCESSORS`) fitted in each inner fold on its
        training rows; None: no scaling.
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        How labels constant in an inner training part are handled
        (:func:`~.constant_labels.fit_labels`).
    grid_extensions : int, default=0
        How many times a parameter's grid may be extended beyond an edge (>= 0).
    """

    def __init__(self, estimator, grid, Y, train, unlabeled=None, *, inner_cv=3, metric="average_precision", seed=0,
                 preprocess=None, constant_labels=DEFAULT_CONSTANT_LABELS, grid_extensions=0):
        check_preprocess(preprocess)
        check_scalar(grid_extensions, "grid_extensions", kind=numbers.Integral, low=0)
        self.estimator = estimator
        #: The grid searched so far: the given one, with the values its extensions added.
        self.grid = {name: list(values) for name, values in grid.items()}
        #: Every point scored so far, in the order scored (the given grid's, then each extension's).
        self.points = []
        #: Points awaiting their tasks (:meth:`tasks`).
        self.pending = expand_grid(self.grid)
        self.metric = metric
        self.preprocess = preprocess
        self.constant_labels = check_constant_labels(constant_labels)
        self.grid_extensions = int(grid_extensions)
        #: One entry per extension: ``round``, ``param``, ``edge``, ``from`` (the edge value), ``value``, ``step``.
        self.extensions = []
        self._rounds = []  # the extension round of each point of ``points``
        self._round = 0
        self.warm_start = supports_warm_start(estimator)
        self.folds = inner_folds(Y, np.asarray(train), unlabeled, inner_cv, seed)
        self.fold_results = [[] for _ in self.folds]
        #: The labels constant in each inner training part, fold by fold (for the record).
        self.fold_constants = [constant_columns(Y[fit_rows])[0].tolist() for fit_rows, _, _ in self.folds]

    @property
    def chunks(self) -> list[list[dict]]:
        """The pending points cut into tasks: a warm-started estimator goes along them in one task."""
        return [self.pending] if self.warm_start else [[point] for point in self.pending]

    @property
    def n_tasks(self) -> int:
        """The number of tasks the pending points make: folds times chunks (0 when none is pending)."""
        return len(self.folds) * len(self.chunks) if self.pending else 0

    def tasks(self, X, Y) -> list:
        """Make the joblib ``delayed`` calls for the pending points, fold by fold.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            All rows' features, passed whole (see docs/experiments.md).
        Y : ndarray of shape (n_samples, n_labels)
            All rows' labels, passed whole.

        Returns
        -------
        list
            ``delayed(score_points)(...)`` calls, one per (fold, chunk of points); empty when no
            point is pending.
        """
        chunks = self.chunks if self.pending else []
        return [
            delayed(score_points)(
                self.estimator, X, Y, fit_rows, score_rows, pool, chunk, self.metric, self.warm_start, self.preprocess,
                self.constant_labels,
            )
            for fit_rows, score_rows, pool in self.folds
            for chunk in chunks
        ]

    def absorb(self, results) -> None:
        """Take the results of :meth:`tasks`, in order: the pending points become scored points.

        Parameters
        ----------
        results : iterable of list
            The tasks' results (:func:`score_points`), in the order of :meth:`tasks`.
        """
        results = list(results)
        n_chunks = len(self.chunks)
        for k in range(len(self.folds)):
            self.fold_results[k] += itertools.chain.from_iterable(results[k * n_chunks : (k + 1) * n_chunks])
        self.points += self.pending
        self._rounds += [self._round] * len(self.pending)
        self.pending = []

    def result(self) -> tuple[dict, list[dict]]:
        """Return the choice over every point scored (:func:`select`).

        Returns
        -------
        tuple of (dict, list of dict)
            ``(chosen params, search record)``, the record holding for each point its ``params``, mean
            ``score``, ``status``, ``error`` (the first), ``fold_scores``, ``fold_errors``,
            ``warnings`` and ``extension`` (which extension added the point; 0: the grid as given).

        Raises
        ------
        SearchError
            When no point could be scored.
        """
        chosen, entries = select(self.points, self.fold_results, self.metric)
        for entry, round_ in zip(entries, self._rounds):
            entry["extension"] = round_
        return chosen, entries

    def choose(self, results) -> tuple[dict, list[dict]]:
        """Choose from the results of :meth:`tasks`, in order: :meth:`absorb` then :meth:`result`.

        Parameters
        ----------
        results : iterable of list
            The tasks' results, in the order of :meth:`tasks`.

        Returns
        -------
        tuple of (dict, list of dict)
            ``(chosen params, search record)``, the record holding for each point its ``params``, mean
            ``score``, ``status``, ``error`` (the first), ``fold_scores``, ``fold_errors``,
            ``warnings`` and ``extension`` (which extension added the point; 0: the grid as given).
        """
        self.absorb(results)
        return self.result()

    def _edges(self, chosen) -> list[tuple[str, str]]:
        return [
            (name, edge) for name in sorted(self.grid)
            if (edge := edge_of(self.grid[name], chosen.get(name))) is not None
        ]  # fmt: skip

    def _extended(self, name: str) -> int:
        return sum(e["param"] == name for e in self.extensions)

    def extend(self) -> bool:
        """Extend the grid at the edges of the current choice.

        Returns
        -------
        bool
            True when new points await their tasks.

        Raises
        ------
        SearchError
            When no point could be scored (as :meth:`result`).
        """
        chosen, _ = select(self.points, self.fold_results, self.metric)
        added = []
        for name, edge in self._edges(chosen):
            if self._extended(name) >= self.grid_extensions:
                continue
            found = next_grid_value(self.grid[name], edge, self.estimator, name)
            if found is None:
                continue
            value, step = found
            values = self.grid[name]
            # Warm starts walk the grid in its order: the new value goes beside the edge it extends.
            at_front = values.index(chosen[name]) == 0
            self.grid[name] = [value, *values] if at_front else [*values, value]
            added.append({"param": name, "edge": edge, "from": chosen[name], "value": value, "step": step})
        if not added:
            return False
        self._round += 1
        self.extensions += [{"round": self._round, **entry} for entry in added]
        self.pending = [point for point in expand_grid(self.grid) if point not in self.points]
        return bool(self.pending)

    def extension_summary(self) -> dict:
        """Summarise the grid extensions for the record.

        Returns
        -------
        dict
            ``limit`` (per parameter), ``extensions`` (each one) and ``at_edge``: each chosen value
            still at an edge of the searched grid, with ``param``, ``value``, ``edge``, ``extensions``
            (how many that parameter had) and ``reason``: ``"limit"`` (extended ``limit`` times),
            ``"valid range"`` (no valid value beyond the edge) or ``"off"`` (``limit`` 0).  Empty
            ``at_edge`` when no point could be scored.
        """
        try:
            chosen, _ = select(self.points, self.fold_results, self.metric)
        except SearchError:
            chosen = None
        at_edge = []
        for name, edge in self._edges(chosen) if chosen is not None else ():
            n = self._extended(name)
            if self.grid_extensions == 0:
                reason = "off"
            elif n >= self.grid_extensions:
                reason = "limit"
            else:
                reason = "valid range"
            at_edge.append({"param": name, "value": chosen[name], "edge": edge, "extensions": n, "reason": reason})
        return {"limit": self.grid_extensions, "extensions": list(self.extensions), "at_edge": at_edge}


def select(points, fold_results, metric) -> tuple[dict, list[dict]]:
    """Choose the point and build the search record, from per-fold results of every point.

    Each entry of the record keeps, per inner fold, the score and the error (``fold_scores``,
    ``fold_errors``: None where that fold's fit succeeded), so a failure names its fold and its
    point.

    Parameters
    ----------
    points : list of dict
        The grid points.
    fold_results : list of list of tuple
        ``fold_results[k][p]`` is the ``(score, error, warnings)`` of point p on fold k.
    metric : str
        The selection metric; its direction decides, ties going to the first point.

    Returns
    -------
    tuple of (dict, list of dict)
        The chosen point and the record: per point its ``params``, mean ``score``, ``status``,
        ``error``, ``fold_scores``, ``fold_errors`` and ``warnings``.

    Raises
    ------
    SearchError
        When no point has a score.
    """
    greater = METRICS[metric].greater_is_better
    entries, best = [], None
    for p, point in enumerate(points):
        outcomes = [fold[p] for fold in fold_results]
        fold_errors = [error for _, error, _ in outcomes]
        errors = [error for error in fold_errors if error is not None]
        fold_scores = [score for score, _, _ in outcomes]
        defined = [s for s in fold_scores if s is not None and not math.isnan(s)]
        score = float(np.mean(defined)) if defined and not errors else None
        entries.append({
            "params": point,
            "score": score,
            "status": "failed" if errors else "ok",
            "error": errors[0] if errors else None,
            "fold_scores": fold_scores,
            "fold_errors": fold_errors,
            "warnings": list(dict.fromkeys(w for _, _, caught in outcomes for w in caught)),
        })
        if score is not None and (best is None or _better(score, entries[best]["score"], greater)):
            best = p
    if best is None:
        first_error = next((e["error"] for e in entries if e["error"]), f"{metric} is undefined on every inner fold")
        message = f"no grid point could be scored in the inner search ({len(points)} tried); first error: {first_error}"
        raise SearchError(message, entries)
    return points[best], entries


def _better(score: float, incumbent: float, greater: bool) -> bool:
    return score > incumbent if greater else score < incumbent


def search_params(estimator, X, Y, grid, *, train=None, unlabeled=None, inner_cv=3, metric="average_precision",
                  seed=0, n_jobs=None, preprocess=None, constant_labels=DEFAULT_CONSTANT_LABELS,
                  grid_extensions=0) -> tuple[dict, list[dict]]:
    """Choose the grid point of ``grid`` for ``estimator`` by inner cross-validation.

    Tasks run through joblib with ``n_jobs``, each within its share of the cores.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted (copied for each fit).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features (or a precomputed kernel between all rows).
    Y : ndarray of shape (n_samples, n_labels)
        All rows' binary labels.
    grid : mapping of str to list
        Parameter -> values to search.
    train : array-like of int, optional
        The rows to search on; None: all rows.
    unlabeled : array-like of int, optional
        The outer unlabelled rows of a transductive part.
    inner_cv : int, default=3
        The number of inner folds.
    metric : str, default="average_precision"
        The selection metric, a name of :data:`~multilabel_core.metrics.METRICS`.
    seed : int, default=0
        The seed of the inner folds.
    n_jobs : int or None, default=None
        joblib's number of parallel tasks.
    preprocess : str or None, default=None
        A scaler name (:data:`~.preprocessing.PREPROCESSORS`) fitted in each inner fold on its
        training rows; None: no scaling.
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        How labels constant in an inner training part are handled
        (:func:`~.constant_labels.fit_labels`).
    grid_extensions : int, default=0
        How many times a parameter's grid may be extended beyond an edge its choice lies at
        (module docstring; 0: never).

    Returns
    -------
    tuple of (dict, list of dict)
        ``(chosen params, search record)``, the record holding for each point its ``params``, mean
        ``score``, ``status``, ``error`` (the first), ``fold_scores``, ``fold_errors``,
        ``warnings`` and ``extension`` (which extension added the point; 0: the grid as given).

    Raises
    ------
    SearchError
        When no grid point could be scored.
    ValueError
        For invalid data, an unknown metric or an invalid option.
    """
    X = check_X(X)
    Y = check_Y(Y, n_samples=X.shape[0])
    check_metric_names([metric])
    train = np.arange(X.shape[0]) if train is None else train
    search = InnerSearch(estimator, grid, Y, train, unlabeled, inner_cv=inner_cv, metric=metric, seed=seed,
                         preprocess=preprocess, constant_labels=constant_labels, grid_extensions=grid_extensions)
    threads = worker_threads(effective_n_jobs(n_jobs))
    with Parallel(n_jobs=n_jobs) as parallel:
        while True:
            tasks = ((WithinBudget(function, threads), args, kwargs) for function, args, kwargs in search.tasks(X, Y))
            search.absorb(parallel(tasks))
            if not search.extend():
                return search.result()
