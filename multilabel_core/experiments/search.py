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
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..parallel import WithinBudget, worker_threads
from ..validation import check_X, check_Y
from ..metrics import METRICS, check_metric_names
from ..model_selection import IterativeStratifiedKFold, _take_rows, _uses_precomputed_kernel
from .constant_labels import DEFAULT_CONSTANT_LABELS, check_constant_labels, constant_columns, fit_labels
from .preprocessing import check_preprocess, preprocessed

__all__ = [
    "InnerSearch",
    "SearchError",
    "accepts_unlabeled",
    "describe_warnings",
    "expand_grid",
    "fit_model",
    "fit_on_rows",
    "inner_folds",
    "prepared",
    "recording_warnings",
    "rows_of",
    "score_points",
    "search_params",
    "select",
    "supports_warm_start",
]


class SearchError(RuntimeError):
    """No grid point could be fitted and scored in the inner search.

    ``entries`` is the search record (every point with its error), kept for the results.
    """

    def __init__(self, message: str, entries: list[dict]):
        super().__init__(message)
        self.entries = entries


def expand_grid(grid) -> list[dict]:
    """Every point of ``grid`` (parameter -> values), in the order of the module docstring."""
    names = sorted(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[name] for name in names))]


def supports_warm_start(estimator) -> bool:
    """Whether the estimator has a ``warm_start`` parameter (fits along a grid continue)."""
    return "warm_start" in estimator.get_params(deep=False)


def accepts_unlabeled(estimator) -> bool:
    """Whether ``estimator.fit`` takes the keyword ``X_unlabeled`` (semi-supervised methods)."""
    return "X_unlabeled" in inspect.signature(estimator.fit).parameters


def inner_folds(Y, train, unlabeled, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """``(fit_rows, score_rows, unlabeled_rows)`` of each inner fold, as rows of the full data.

    ``unlabeled_rows`` is None for a supervised part; otherwise the held-out fold joined
    with the outer unlabelled rows (module docstring).
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

    The unlabelled rows' features go to ``fit(..., X_unlabeled=...)`` when given and the
    estimator accepts them.  Returns the number of unlabelled rows passed.
    """
    return _fit_rows(model, X, Y[fit_rows], fit_rows, unlabeled_rows)


def _fit_rows(model, X, Y_fit, fit_rows, unlabeled_rows):
    """:func:`fit_on_rows` with the training rows' labels ``Y_fit`` given (some columns of them, maybe)."""
    precomputed = _uses_precomputed_kernel(model)
    X_fit = rows_of(X, fit_rows, fit_rows, precomputed)
    if unlabeled_rows is not None and accepts_unlabeled(model):
        model.fit(X_fit, Y_fit, X_unlabeled=rows_of(X, unlabeled_rows, fit_rows, precomputed))
        return len(unlabeled_rows)
    model.fit(X_fit, Y_fit)
    return 0


def fit_model(model, X, Y, fit_rows, unlabeled_rows=None, constant_labels=DEFAULT_CONSTANT_LABELS):
    """Fit ``model`` on rows ``fit_rows`` as :func:`fit_on_rows`, labels constant there handled by
    ``constant_labels`` (:func:`~.constant_labels.fit_labels`).

    Returns ``(predictor, n_unlabeled)``: the fitted model itself, or a
    :class:`~.constant_labels.PartialModel` around it that predicts the constant labels.
    """
    passed = []

    def fit(Y_fit):
        passed.append(_fit_rows(model, X, Y_fit, fit_rows, unlabeled_rows))
        return model

    predictor = fit_labels(fit, Y[fit_rows], constant_labels)
    return predictor, passed[0]


def rows_of(X, rows, fit_rows, precomputed: bool):
    """Rows of X; for a precomputed kernel, only the columns of the training rows."""
    block = _take_rows(X, rows)
    return block[:, fit_rows] if precomputed else block


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
    """Distinct ``"Category: message"`` lines, in order of first occurrence."""
    return list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))


def score_points(estimator, X, Y, fit_rows, score_rows, unlabeled_rows, points, metric, warm_start, preprocess=None,
                 constant_labels=DEFAULT_CONSTANT_LABELS):
    """Fit and score each grid point of ``points`` on one inner fold (one task).

    Returns one ``(score, error, warnings)`` per point: the selection metric on the
    held-out rows (None when fitting or scoring raised), ``"ExceptionType: message"``
    or None, and the warnings raised.  With ``warm_start`` one estimator object goes
    along the points in order.  ``preprocess`` names the scaler fitted on ``fit_rows``
    (:func:`~.preprocessing.preprocessed`); a failure to apply it, or to make the
    estimator, fails every point.  ``constant_labels`` handles the labels constant in
    ``fit_rows`` (module docstring).  Never raises: every exception is a failed point.
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
                X_score = rows_of(X, score_rows, fit_rows, _uses_precomputed_kernel(model))
                score = _metric_value(metric, Y[score_rows], predictor, X_score)
            except Exception as exc:  # a failing grid point is recorded, the search goes on
                error = f"{type(exc).__name__}: {exc}"
        results.append((score, error, describe_warnings(caught)))
    return results


def prepared(estimator, X, fit_rows, preprocess):
    """X scaled by ``preprocess`` fitted on ``fit_rows``; ValueError for a precomputed kernel.

    A precomputed kernel's entries are inner products of features that are already
    fixed: scaling them as features would be meaningless.
    """
    if preprocess is not None and _uses_precomputed_kernel(estimator):
        raise ValueError(f"preprocess={preprocess!r} cannot rescale a precomputed kernel; rescale the features first")
    return preprocessed(X, fit_rows, preprocess)


def _metric_value(metric, Y_true, model, X) -> float:
    function, needs, _ = METRICS[metric]
    return float(function(Y_true, model.decision_function(X) if needs == "scores" else model.predict(X)))


class InnerSearch:
    """The inner search of one training part: its tasks, and the choice from their results.

    The runner gathers the tasks of several training parts into one parallel batch,
    then hands each search its slice of the results (:meth:`choose`).
    """

    def __init__(self, estimator, grid, Y, train, unlabeled=None, *, inner_cv=3, metric="average_precision", seed=0,
                 preprocess=None, constant_labels=DEFAULT_CONSTANT_LABELS):
        check_preprocess(preprocess)
        self.estimator = estimator
        self.points = expand_grid(grid)
        self.metric = metric
        self.preprocess = preprocess
        self.constant_labels = check_constant_labels(constant_labels)
        self.warm_start = supports_warm_start(estimator)
        self.folds = inner_folds(Y, np.asarray(train), unlabeled, inner_cv, seed)
        #: The labels constant in each inner training part, fold by fold (for the record).
        self.fold_constants = [constant_columns(Y[fit_rows])[0].tolist() for fit_rows, _, _ in self.folds]
        # Warm starts go along the whole grid in one task; otherwise each point is a task.
        self.chunks = [self.points] if self.warm_start else [[point] for point in self.points]

    @property
    def n_tasks(self) -> int:
        return len(self.folds) * len(self.chunks)

    def tasks(self, X, Y) -> list:
        """joblib ``delayed`` calls, fold by fold; X and Y are passed whole (see docs/experiments.md)."""
        return [
            delayed(score_points)(
                self.estimator, X, Y, fit_rows, score_rows, pool, chunk, self.metric, self.warm_start, self.preprocess,
                self.constant_labels,
            )
            for fit_rows, score_rows, pool in self.folds
            for chunk in self.chunks
        ]

    def choose(self, results) -> tuple[dict, list[dict]]:
        """``(chosen params, search record)`` from the results of :meth:`tasks`, in order."""
        per_fold = [
            list(itertools.chain.from_iterable(results[k * len(self.chunks) : (k + 1) * len(self.chunks)]))
            for k in range(len(self.folds))
        ]
        return select(self.points, per_fold, self.metric)


def select(points, fold_results, metric) -> tuple[dict, list[dict]]:
    """The chosen point and the search record, from per-fold results of every point.

    ``fold_results[k][p]`` is the ``(score, error, warnings)`` of point p on fold k.
    Each entry of the record keeps, per inner fold, the score and the error
    (``fold_scores``, ``fold_errors``: None where that fold's fit succeeded), so a
    failure names its fold and its point.  Raises :class:`SearchError` when no point
    has a score.
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
                  seed=0, n_jobs=None, preprocess=None,
                  constant_labels=DEFAULT_CONSTANT_LABELS) -> tuple[dict, list[dict]]:
    """Choose the grid point of ``grid`` for ``estimator`` by inner cross-validation.

    ``train`` are the rows to search on (default: all rows); ``unlabeled`` the outer
    unlabelled rows of a transductive part; ``preprocess`` a scaler name fitted in each
    inner fold on its training rows; ``constant_labels`` how labels constant in an inner
    training part are handled (module docstring).  Returns ``(chosen params, search record)``,
    the record holding for each point its ``params``, mean ``score``, ``status``,
    ``error`` (the first), ``fold_scores`` and ``fold_errors``.  Tasks run through joblib with ``n_jobs``.
    """
    X = check_X(X)
    Y = check_Y(Y, n_samples=X.shape[0])
    check_metric_names([metric])
    train = np.arange(X.shape[0]) if train is None else train
    search = InnerSearch(estimator, grid, Y, train, unlabeled, inner_cv=inner_cv, metric=metric, seed=seed,
                         preprocess=preprocess, constant_labels=constant_labels)
    threads = worker_threads(effective_n_jobs(n_jobs))
    tasks = ((WithinBudget(function, threads), args, kwargs) for function, args, kwargs in search.tasks(X, Y))
    return search.choose(Parallel(n_jobs=n_jobs)(tasks))
