"""The experiment runner: every method on every dataset under one protocol, nothing lost.

For each dataset the protocol's splits are drawn once (all methods share them); then for
each method and each split not yet in the store:

1. the hyper-parameters are chosen by inner cross-validation on the training part
   (:mod:`.search`; skipped for a grid of one point), by the experiment's ``selection_metric``
   (``--select``); a choice at a grid edge extends the grid beyond it and searches again, up to
   ``grid_extensions`` times per parameter, the new points' tasks going with the next batch;
2. the method is refitted on the whole training part with the chosen values and
   evaluated on the test part with every metric of :mod:`multilabel_core.metrics`, and with
   how many test rows it predicts no label for (a model predicting no label at all is flagged
   by the report and the command line like a failed fit);
   with ``preprocess`` the features are first scaled by a scaler fitted on the
   training part only (:mod:`.preprocessing`; in the search, on each inner training
   part only);
3. the record (docs/experiments.md) is appended to the store, durably, at once.

One run at a time per store: the run holds the folder's lock (:class:`~.store.StoreLock`)
from before its data are loaded (when the folder exists) to the end of its report, and a
second run on the folder is refused at once with :class:`~.store.StoreLockedError` naming the
holder (pid, host, start time, command).  The OS lets the lock go when a run is killed.

Work is done one dataset at a time, its methods in order, their pending splits in batches
of as many searched splits as there are workers.  The batches are pipelined: each parallel
call runs the final fits of the previous batch (whose searches are done), then the
inner-search tasks (folds x grid points) of the next one, so that no worker waits for the
slowest search task of a batch before the final fits start; the final fits' records are
written in split order as they arrive.  Tasks run through joblib (``n_jobs``), or on a
dask.distributed cluster with ``scheduler``, and give the same records as a serial
run: every random choice is seeded from ``(seed, split)`` (:func:`split_seeds`) and
results are collected in task order.  Each task runs with BLAS and the estimators' label threads held to at most
:func:`blas_threads_per_worker` threads (threadpoolctl, in the process that runs it), so
that workers x threads stay within the cores (docs/experiments.md, "Threads and cores").

Labels that take one value in a training part follow the experiment's ``constant_labels``
option (:mod:`.constant_labels`): refused (the split fails before the method is fitted) or
predicted at that value; every record names them, with the inner folds' ones.

Failures never stop the run, and none is lost: an exception in any inner fold of any grid
point is kept in the split's ``search`` (that point's ``status``, ``error`` and, per fold,
``fold_errors``) and the point is never chosen; a search where every point failed, or an
exception in the final fit, makes the split's record ``status: "failed"`` with its
``error`` and ``failed_stage`` (``"search"`` or ``"fit"``).  :mod:`.diagnostics` counts
them for the report and the command line.  Warnings raised while
fitting and predicting are recorded, and a :class:`~multilabel_core.solvers.ConvergenceWarning`
sets ``converged`` to false.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from pathlib import Path
from time import perf_counter, sleep

import attrs
import joblib
import numpy as np
import scipy.sparse as sp

from .._progress import fit_cost, progress_bar

from ..metrics import check_metric_names, evaluate
from ..parallel import WithinBudget, worker_threads
from ..model_selection import uses_precomputed_kernel
from ..solvers import ConvergenceWarning
from .config import Experiment
from .constant_labels import DEFAULT_CONSTANT_LABELS, PartialModel, constant_columns, embed_square
from .protocols import PROTOCOLS, get_protocol
from .report import write_report
from .search import (
    DEFAULT_GRID_EXTENSIONS,
    InnerSearch,
    SearchError,
    describe_warnings,
    expand_grid,
    fit_model,
    prepared,
    recording_warnings,
    rows_of,
)
from .store import CONFIG_FILE, ResultStore, StoreLock, jsonable, read_config, record_key

__all__ = ["ExperimentResult", "blas_threads_per_worker", "evaluate_split", "run", "run_experiment", "split_seeds"]


@attrs.frozen
class ExperimentResult:
    """Hold what a run leaves: the store folder, its records, and what this call did.

    Parameters
    ----------
    out_dir : pathlib.Path
        The store folder (a sibling of the one asked for after ``new_run``).
    records : list of dict
        All the run's records (resumed and new) in run order: datasets, then methods, then
        splits.
    computed : int
        The records this call wrote.
    resumed : int
        The records found in the store.
    report : dict or None
        What :func:`~multilabel_core.experiments.report.write_report` returned (paths).
    missing : int, default=0
        The evaluations of the configuration that are in neither (none after a full run; after
        ``report_only=True``, the work left).
    grid_extensions : int, default=0
        The limit the searches ran with (the experiment's, or the resumed store's).
    duplicates : int, default=0
        The records removed from a store that two runs had written at once (the first record
        of each evaluation is kept; :mod:`.store`).
    """

    out_dir: Path
    records: list
    computed: int
    resumed: int
    report: dict | None
    missing: int = 0
    grid_extensions: int = 0
    duplicates: int = 0


def run_experiment(
    methods,
    datasets,
    protocol,
    out_dir,
    *,
    protocol_params=None,
    grids=None,
    selection_metric="average_precision",
    inner_cv=3,
    seed=0,
    data_home=None,
    preprocess=None,
    select=None,
    grid_extensions=None,
    n_jobs=None,
    scheduler=None,
    progress=True,
    reference=None,
    reference_method=None,
    alpha=0.05,
    new_run=False,
    extend=False,
    report_only=False,
    plots=None,
    constant_labels=DEFAULT_CONSTANT_LABELS,
) -> ExperimentResult:
    """Run ``methods`` on ``datasets`` under ``protocol``; store and report in ``out_dir``.

    The configuration arguments are those of :class:`~.config.Experiment`.

    Parameters
    ----------
    methods : iterable of str, or mapping of str to estimator
        Registered method names, or name -> unfitted estimator (used as it is, its parameters the
        starting point of the grid).
    datasets : iterable of str or Dataset
        Dataset names, file paths (``"A+B"`` joins two files), ``"synthetic"``, or
        :class:`~multilabel_core.datasets.Dataset` objects.
    protocol : str
        A name in :data:`~multilabel_core.experiments.protocols.PROTOCOLS`.
    out_dir : str or path-like
        The results store folder (created, resumed or extended: :mod:`.store`).
    protocol_params : mapping, optional
        The protocol's parameters; missing ones take its defaults.
    grids : mapping of str to dict, optional
        Method -> {parameter: [values]}, replacing that method's registered ``param_grid``.
    selection_metric : str, default="average_precision"
        What the inner search optimises, a name of :data:`multilabel_core.metrics.METRICS`.
    inner_cv : int, default=3
        Folds of the inner cross-validation on each training part (>= 2).
    seed : int, default=0
        Seed of the splits, the inner folds and the estimators' ``random_state``.
    data_home : str or path-like, optional
        A folder searched first for dataset names.
    preprocess : str or None, default=None
        Feature scaling for every method (:data:`~.preprocessing.PREPROCESSORS`), fitted on
        each training part only.
    select : str or None, default=None
        The selection metric under its command-line and file name: the same as
        ``selection_metric``, which it replaces when given.
    grid_extensions : int or None, default=None
        How many times the search may extend one parameter's grid beyond an edge (None: the
        default for a new store, the stored run's value when resumed).
    n_jobs : int or None, default=None
        joblib workers for the folds x grid points (None: serial, or the ambient
        ``joblib.parallel_config``).
    scheduler : str or None, default=None
        Address of a dask.distributed scheduler (``"tcp://host:8786"``); the same tasks
        then run on its workers through joblib's dask backend (the ``dask`` extra).
    progress : bool or "lines", default=True
        True: a tqdm bar over the fits, with the time left; ``"lines"``: a line every
        ten seconds on stderr (fits done / total, elapsed, the method and dataset running),
        for a redirected run; False: nothing.
    reference : str, path-like, mapping or None, default=None
        The papers' values for the report: a file for :func:`~.stats.read_reference`, or a
        mapping like its result.
    reference_method : str or None, default=None
        The method the report's t-tests compare every other one with.
    alpha : float, default=0.05
        The level of the report's paired t-tests.
    new_run : bool, default=False
        When ``out_dir`` holds another configuration, write to a new sibling folder
        instead of refusing (:mod:`.store`).
    extend : bool, default=False
        When ``out_dir`` holds this configuration with fewer ``n_repeats``, add the new
        splits to it and keep its records (an extensible protocol only: ValueError
        otherwise; :mod:`.store`).
    report_only : bool, default=False
        Compute nothing: write the report of the records already in the store of ``out_dir``
        (which must exist and hold this configuration, or one it extends with ``extend``), e.g.
        of a long run stopped before its end; ``ExperimentResult.missing`` counts the
        evaluations it leaves out.
    plots : bool or None, default=None
        Passed to ``write_report`` (None: PNG figures when matplotlib is importable).
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        What a label that takes one value in a training part does (:mod:`.constant_labels`).

    Returns
    -------
    ExperimentResult
        The store folder, every record of the run, and what this call computed, resumed and
        left missing.

    Raises
    ------
    StoreLockedError
        Another run (or ``report_only`` call) holds ``out_dir``: the message names it.
    ValueError
        For an invalid configuration, a dataset the protocol refuses, a store of another
        configuration (without ``new_run``), ``report_only`` without a store or with
        ``new_run``, or ``extend`` with a protocol that is not extensible.
    """
    if select is not None and selection_metric not in ("average_precision", select):
        raise ValueError(f"select and selection_metric name the same setting; got {select!r} and {selection_metric!r}")
    experiment = Experiment(
        methods=methods,
        datasets=datasets,
        protocol=protocol,
        protocol_params=protocol_params,
        grids=grids,
        selection_metric=selection_metric if select is None else select,
        inner_cv=inner_cv,
        seed=seed,
        grid_extensions=grid_extensions,
        data_home=data_home,
        preprocess=preprocess,
        reference=reference,
        reference_method=reference_method,
        alpha=alpha,
        constant_labels=constant_labels,
    )
    return run(
        experiment, out_dir, n_jobs=n_jobs, scheduler=scheduler, progress=progress, new_run=new_run, extend=extend,
        report_only=report_only, plots=plots,
    )  # fmt: skip


def run(experiment: Experiment, out_dir, *, n_jobs=None, scheduler=None, progress=True, new_run=False, extend=False,
        report_only=False, plots=None):  # fmt: skip
    """Run an :class:`~.config.Experiment` (see :func:`run_experiment`).

    Parameters
    ----------
    experiment : Experiment
        The configuration.
    out_dir : str or path-like
        The results store folder.
    n_jobs : int or None, default=None
        joblib workers for the folds x grid points (None: serial, or the ambient
        ``joblib.parallel_config``).
    scheduler : str or None, default=None
        Address of a dask.distributed scheduler (``"tcp://host:8786"``); the same tasks
        then run on its workers through joblib's dask backend (the ``dask`` extra).
    progress : bool or "lines", default=True
        True: a tqdm bar over the fits, with the time left; ``"lines"``: a line every
        ten seconds on stderr (fits done / total, elapsed, the method and dataset running),
        for a redirected run; False: nothing.
    new_run : bool, default=False
        When ``out_dir`` holds another configuration, write to a new sibling folder
        instead of refusing (:mod:`.store`).
    extend : bool, default=False
        When ``out_dir`` holds this configuration with fewer ``n_repeats``, add the new
        splits to it and keep its records (an extensible protocol only: ValueError
        otherwise; :mod:`.store`).
    report_only : bool, default=False
        Compute nothing: write the report of the records already in the store of ``out_dir``
        (which must exist and hold this configuration, or one it extends with ``extend``), e.g.
        of a long run stopped before its end; ``ExperimentResult.missing`` counts the
        evaluations it leaves out.
    plots : bool or None, default=None
        Passed to ``write_report`` (None: PNG figures when matplotlib is importable).

    Returns
    -------
    ExperimentResult
        The store folder, every record of the run, and what this call computed, resumed and
        left missing.

    Raises
    ------
    StoreLockedError
        Another run (or ``report_only`` call) holds ``out_dir``: the message names it.
    ValueError
        For an invalid configuration, a dataset the protocol refuses, a store of another
        configuration (without ``new_run``), ``report_only`` without a store or with
        ``new_run``, or ``extend`` with a protocol that is not extensible.
    """
    if report_only and new_run:
        raise ValueError("report_only and new_run exclude each other: a report is written of an existing run")
    if report_only and not (Path(out_dir) / CONFIG_FILE).exists():
        raise ValueError(f"nothing to report: {out_dir} holds no results store ({CONFIG_FILE} is missing)")
    protocol = get_protocol(experiment.protocol)
    if extend and not protocol.extensible:
        raise ValueError(
            f"protocol {protocol.name!r} cannot be extended: its first splits change with their number "
            f"(extensible: {', '.join(name for name, p in PROTOCOLS.items() if p.extensible)})"
        )
    # A second run on a store in use is refused before the data are loaded.  A folder that does not exist yet
    # is locked when the store creates it, so that a protocol refusing a dataset leaves no folder behind;
    # a new run may go elsewhere, so it locks the folder it ends up in (ResultStore.open).
    lock = StoreLock.acquire(out_dir) if Path(out_dir).is_dir() and not new_run else None
    try:
        datasets = experiment.load_datasets()
        # Split before the store is opened: a protocol that refuses a dataset leaves no results folder behind.
        splits = {}
        for name, dataset in datasets.items():
            try:
                parts = getattr(dataset, "parts", ())  # a Dataset look-alike given from Python may have none
                splits[name] = protocol.split(dataset.Y, experiment.seed, parts=parts, **experiment.protocol_params)
            except ValueError as exc:
                raise ValueError(f"dataset {name!r}, protocol {protocol.name!r}: {exc}") from None
        experiment = _with_grid_extensions(experiment, out_dir, new_run)
        store = ResultStore.open(out_dir, experiment.canonical(datasets), new_run=new_run, extend=extend, lock=lock)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    with store:  # the lock is held until the report is written
        return _run_locked(experiment, store, datasets, splits, n_jobs, scheduler, progress, report_only, plots)


def _run_locked(experiment, store, datasets, splits, n_jobs, scheduler, progress, report_only, plots):
    """The rest of :func:`run`, with the store open and locked: compute what is missing, then report."""
    resumed = len(store.records)
    groups = {
        name: [_Group(experiment, name, dataset, method, splits[name], store.finished) for method in experiment.methods]
        for name, dataset in datasets.items()
    }
    if not report_only:
        total = sum(group.n_tasks for per_dataset in groups.values() for group in per_dataset)
        with _cluster(scheduler) as client, progress_bar(progress, total, "compare", "fit") as bar:
            # The estimate of the time left weighs each fit by its dataset's cost (a yeast fit is ~35 emotions ones).
            bar.work.plan({name: (sum(group.n_tasks for group in per_dataset), _dataset_cost(datasets[name]))
                           for name, per_dataset in groups.items()})  # fmt: skip
            for name, per_dataset in groups.items():
                bar.work.start(name)
                with _parallel(n_jobs, client, datasets[name]) as parallel:
                    # As many searched splits per batch as workers: every worker has a final fit to do, and
                    # a kill loses at most one parallel call's work (one split in a serial run).
                    _run_dataset(per_dataset, parallel, store, bar, joblib.effective_n_jobs(n_jobs))
    order = {key: i for i, key in enumerate(_run_order(experiment, splits))}
    records = sorted(store.records, key=lambda record: order[record_key(record)])
    missing = len(order) - len(records)
    report = write_report(
        records,
        store.folder,
        reference=experiment.reference,
        reference_method=experiment.reference_method,
        alpha=experiment.alpha,
        plots=plots,
        # Said where the reader looks: a report of an unfinished run is not one of the whole configuration.
        title=f"Experiment report (partial: {len(records)} of {len(order)} evaluations)" if missing else None,
    )
    return ExperimentResult(
        store.folder, records, len(store.records) - resumed, resumed, report, missing, experiment.grid_extensions,
        store.duplicates,
    )  # fmt: skip


def _with_grid_extensions(experiment, out_dir, new_run: bool):
    """The experiment with ``grid_extensions`` decided: given, else the stored run's, else the default.

    A store is resumed with the search it was started with: its ``config.json`` holds
    ``grid_extensions`` when it is not 0, so a stored configuration without the key ran without
    extensions (every store written before they existed).  A new store, or ``new_run``, gets
    :data:`~.search.DEFAULT_GRID_EXTENSIONS`.
    """
    if experiment.grid_extensions is not None:
        return experiment
    stored = None if new_run else read_config(out_dir)
    value = DEFAULT_GRID_EXTENSIONS if stored is None else int(stored["config"].get("grid_extensions", 0))
    return attrs.evolve(experiment, grid_extensions=value)


def _run_order(experiment, splits):
    return [(method, name, s) for name in splits for method in experiment.methods for s in range(len(splits[name]))]


@contextlib.contextmanager
def _cluster(scheduler):
    """A dask.distributed client of the scheduler at ``scheduler``; None without one."""
    if scheduler is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("a scheduler needs dask.distributed: pip install 'multilabel-core[dask]'") from None
    with Client(scheduler) as client:
        yield client


def blas_threads_per_worker(n_workers: int, cores: int | None = None) -> int:
    """Return the threads (BLAS, and an estimator's ``n_jobs=None``) each of ``n_workers`` concurrent tasks may use.

    ``max(1, cores // n_workers)`` (:func:`multilabel_core.parallel.worker_threads`).

    Parameters
    ----------
    n_workers : int
        The tasks running at once.
    cores : int or None, default=None
        The cores to share; None: the cores this process may run on (``joblib.cpu_count()``,
        which counts CPU affinity and cgroup quotas), so that ``n_workers`` x the result is at
        most the cores whenever ``n_workers`` is.

    Returns
    -------
    int
        Threads per task, at least 1.
    """
    return worker_threads(n_workers, cores)


@contextlib.contextmanager
def _parallel(n_jobs, client, dataset):
    """A callable running joblib ``delayed`` tasks for one dataset in parallel (results as a generator).

    On a cluster, joblib's dask backend with the dataset's X and Y broadcast to every
    worker once: tasks name them by object identity and receive the workers' copies,
    instead of shipping them with each batch.  Without a client, the ambient backend
    (loky processes by default, or the caller's ``joblib.parallel_config``); loky workers
    are given :func:`_exit_with_parent`, so that they end with the run even when it is killed.

    Every task runs with at most :func:`blas_threads_per_worker` threads, BLAS and the estimators'
    label threads (:class:`~multilabel_core.parallel.WithinBudget`):
    here cores // workers; on a cluster one, the thread count dask's nanny starts its worker
    processes with, for one worker process per core (docs/experiments.md).
    """
    if client is not None:
        config = joblib.parallel_config(backend="dask", client=client, scatter=[dataset.X, dataset.Y])
    else:
        config = _loky_exiting_with_parent()
    with config, joblib.Parallel(n_jobs=n_jobs, return_as="generator") as parallel:
        threads = 1 if client is not None else blas_threads_per_worker(joblib.effective_n_jobs(n_jobs))
        yield lambda tasks: parallel((WithinBudget(function, threads), args, kwargs) for function, args, kwargs in tasks)


#: Seconds between a loky worker's checks that the process that started it is alive.
PARENT_POLL_SECONDS = 1.0


def _exit_with_parent(parent: int) -> None:
    """Loky worker initializer: end this worker within PARENT_POLL_SECONDS of its parent's death.

    ``parent`` is the run's process id, taken when the executor is made: a worker may reach
    its initializer only after the run was killed (importing the methods takes a while), and
    then ``os.getppid()`` is already its new parent's, which would never change again.

    loky workers block on their task queue and exit only when the executor shuts them
    down or after joblib's idle timeout (300 s); the queue does not signal the parent's
    death, because every worker holds the queue's write end as well.  So after the parent
    is killed (SIGKILL: no cleanup runs) they, and the resource trackers that wait for
    them, live on for minutes, and a worker in the middle of a long fit for as long as
    the fit.  A daemon thread here checks ``os.getppid()``: on POSIX a process whose
    parent dies is re-parented (to init or a subreaper), so a changed parent id means the
    run is gone, and the worker exits at once (``os._exit``: nothing of the run is left
    to flush; its records are written by the parent).  The thread needs the GIL, which
    the solvers' Cython loops release (``nogil``), as does BLAS.

    Not ``prctl(PR_SET_PDEATHSIG)``: it is Linux only, and it fires when the *thread*
    that started the worker exits, and loky starts replacement workers from its
    executor-manager thread.  On Windows the parent id does not change when the parent
    dies, so there the workers still end at joblib's idle timeout.
    """
    def watch() -> None:
        while os.getppid() == parent:
            sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="mlcore-exit-with-parent", daemon=True).start()


def _loky_exiting_with_parent():
    """The ambient joblib backend, with :func:`_exit_with_parent` as its workers' initializer when it is loky.

    Another backend (threads, a dask client, a custom one), or a loky backend the caller
    gave its own initializer, is left as it is.
    """
    from joblib._parallel_backends import LokyBackend

    backend, _ = joblib.parallel.get_active_backend()
    if type(backend) is not LokyBackend or "initializer" in backend.backend_kwargs:
        return contextlib.nullcontext()
    exiting = LokyBackend(
        nesting_level=backend.nesting_level,
        inner_max_num_threads=backend.inner_max_num_threads,
        **backend.backend_kwargs,
        initializer=_exit_with_parent,
        initargs=(os.getpid(),),
    )
    return joblib.parallel_config(backend=exiting)


def split_seeds(seed: int, split: int) -> tuple[int, int]:
    """Derive the ``(inner-fold seed, estimator random_state)`` of one split from the run's seed.

    Derived with :class:`numpy.random.SeedSequence` from ``(seed, split)`` only, so the same
    split gets the same seeds in every process and for every method.

    Parameters
    ----------
    seed : int
        The run's seed.
    split : int
        The split's index.

    Returns
    -------
    tuple of (int, int)
        The inner-fold seed and the estimator's ``random_state``.
    """
    inner, estimator = np.random.SeedSequence([seed, split]).generate_state(2)
    return int(inner), int(estimator)


def _seeded(estimator, random_state: int):
    """The estimator with ``random_state`` set when it has one left to chance (None)."""
    params = estimator.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None:
        return type(estimator)(**{**params, "random_state": random_state})
    return estimator


class _Group:
    """The pending splits of one method on one dataset, and how to run them."""

    def __init__(self, experiment, dataset_name, dataset, method, splits, finished):
        self.experiment = experiment
        self.dataset_name = dataset_name
        self.dataset = dataset
        self.method = method
        self.splits = splits
        self.pending = [s for s in range(len(splits)) if (method, dataset_name, s) not in finished]
        self.grid = experiment.grid(method)
        self.points = expand_grid(self.grid)
        self.estimators = {}
        self.searches = {}
        self.failures = {}
        for s in self.pending:
            inner_seed, random_state = split_seeds(experiment.seed, s)
            self.estimators[s] = _seeded(experiment.estimator(method), random_state)
            if len(self.points) > 1:
                self._plan_search(s, inner_seed)

    def _plan_search(self, s, inner_seed):
        train, _, unlabeled = _parts(self.splits[s])
        try:
            self.searches[s] = InnerSearch(
                self.estimators[s],
                self.grid,
                self.dataset.Y,
                train,
                unlabeled,
                inner_cv=self.experiment.inner_cv,
                metric=self.experiment.selection_metric,
                seed=inner_seed,
                preprocess=self.experiment.preprocess,
                constant_labels=self.experiment.constant_labels,
                grid_extensions=self.experiment.resolved_grid_extensions,
            )
        except Exception as exc:  # e.g. fewer training rows than inner folds
            self.failures[s] = f"{type(exc).__name__}: inner search: {exc}"

    @property
    def n_tasks(self) -> int:
        return sum(search.n_tasks for search in self.searches.values()) + len(self.pending)

    def final_task(self, s, params):
        """The joblib ``delayed`` final fit of split ``s`` with ``params`` (:func:`evaluate_split`)."""
        return joblib.delayed(evaluate_split)(
            self.estimators[s], params, self.dataset.X, self.dataset.Y, *_parts(self.splits[s]),
            preprocess=self.experiment.preprocess, constant_labels=self.experiment.constant_labels,
        )

    def unsearched(self, s) -> tuple[dict, list]:
        """``(params, search record)`` of a split that needs no search: the grid's one point."""
        return (self.points[0] if self.points else {}), []

    def failed_record(self, s, chosen=({}, [])) -> dict:
        """The record of split ``s`` whose search failed (``self.failures[s]``)."""
        return self._record(s, *chosen, {**_outcome(self.failures[s]), "failed_stage": "search"})

    def _constant_labels(self, train, s) -> dict:
        """The record's ``constant_labels``: the option, and the labels constant in the training part
        and in each inner fold's training part."""
        indices, values = constant_columns(self.dataset.Y[train])
        inner = self.searches.get(s)
        return {
            "option": self.experiment.constant_labels,
            "indices": indices.tolist(),
            "values": values.tolist(),
            "count": int(indices.size),
            "inner_folds": [] if inner is None else inner.fold_constants,
        }

    def _record(self, s, params, search, outcome) -> dict:
        train, test, _ = _parts(self.splits[s])
        return {
            "method": self.method,
            "dataset": self.dataset_name,
            "protocol": self.experiment.protocol,
            "split": s,
            "preprocess": self.experiment.preprocess,
            "status": outcome["status"],
            "error": outcome["error"],
            "failed_stage": outcome["failed_stage"],
            "params": params,
            "search": search,
            "grid_extension": self.searches[s].extension_summary() if s in self.searches else None,
            "selection_metric": self.experiment.selection_metric,
            "metrics": outcome["metrics"],
            "fit_time": outcome["fit_time"],
            "predict_time": outcome["predict_time"],
            "n_train": len(train),
            "n_test": len(test),
            "n_unlabeled": outcome["n_unlabeled"],
            "n_no_label_rows": outcome["n_no_label_rows"],
            "n_predicted_labels": outcome["n_predicted_labels"],
            "n_labels": int(self.dataset.Y.shape[1]),
            "label_names": list(self.dataset.label_names),
            "certificates": outcome["certificates"],
            "converged": outcome["converged"],
            "label_correlation": outcome["label_correlation"],
            "concept_graph": outcome["concept_graph"],
            "threshold": outcome["threshold"],
            "constant_labels": self._constant_labels(train, s),
            "warnings": outcome["warnings"],
        }


def _batches(groups, batch_size: int) -> list[list]:
    """The pending ``(group, split)`` of one dataset's groups, in run order, cut into batches.

    A batch closes at ``batch_size`` splits that need an inner search; the splits that need
    none (a grid of one point, or a search that could not be planned) go with the batch they
    fall in, so a group without searches is one batch.
    """
    batches, batch, searched = [], [], 0
    for group in groups:
        for s in group.pending:
            batch.append((group, s))
            searched += s in group.searches
            if searched == batch_size:
                batches.append(batch)
                batch, searched = [], 0
    if batch:
        batches.append(batch)
    return batches


def _run_dataset(groups, parallel, store, bar, batch_size: int) -> None:
    """Run the pending splits of one dataset's groups (methods), pipelined batch by batch.

    Each parallel call (one stage) holds the final fits of the previous batch's searched
    splits, then the final fits of this batch's splits that need no search, then this batch's
    search tasks: while the slowest search task of a batch runs, the other workers are already
    fitting, instead of waiting for it before the final fits start (and the same between the
    methods of a dataset).  A search whose choice lies at a grid edge it may extend plans new
    points (:meth:`~.search.InnerSearch.extend`); their tasks go with the next stage, and its
    final fit waits until a stage leaves it nothing to extend.  Records are appended in task
    order as the final fits arrive; a split whose search could not be planned, or failed at
    every grid point, is recorded at once.  A kill loses at most the call in flight: the final
    fits of one batch whose records were not yet written, and the searches of the next (in a
    serial run, one split: its final fit or its search).
    """
    searched = []  # (group, split, (params, search record)) of the previous stage, awaiting their final fits
    extending = []  # (group, split, search) whose extended grid's tasks go with the next stage
    batches = iter(_batches(groups, batch_size))
    while True:
        batch = next(batches, None)
        if batch is None:
            if not searched and not extending:
                break
            batch = []  # no split left to start: stages that finish the searches and final fits in flight
        for group, s in batch:
            if s in group.failures:  # the search could not be planned: a failure known before any fit
                store.append(group.failed_record(s))
                bar.update(1)
        direct = [(group, s, group.unsearched(s)) for group, s in batch
                  if s not in group.searches and s not in group.failures]
        finals = searched + direct
        searches = extending + [(group, s, group.searches[s]) for group, s in batch if s in group.searches]
        if not finals and not searches:
            continue
        running = (batch or [(group, s) for group, s, _ in finals + searches])[0][0]
        bar.set_postfix_str(f"{running.method} on {running.dataset_name}")
        tasks = [group.final_task(s, chosen[0]) for group, s, chosen in finals]
        tasks += [task for group, _, search in searches for task in search.tasks(group.dataset.X, group.dataset.Y)]
        results = parallel(tasks)
        for (group, s, chosen), outcome in zip(finals, results):
            store.append(group._record(s, *chosen, outcome))
            bar.update(1)
        searched, extending = [], []
        for group, s, search in searches:
            outcomes = []
            for result in itertools.islice(results, search.n_tasks):
                outcomes.append(result)
                bar.update(1)
            try:
                search.absorb(outcomes)
                if search.extend():
                    _count_more(bar, search.n_tasks)
                    extending.append((group, s, search))
                else:
                    searched.append((group, s, search.result()))
            except SearchError as exc:  # every grid point failed: the record keeps their errors
                group.failures[s] = f"{type(exc).__name__}: {exc}"
                store.append(group.failed_record(s, ({}, exc.entries)))
                bar.update(1)
        for _ in results:  # nothing is left; the generator ends, and the next stage may start
            pass


def _dataset_cost(dataset) -> float:
    """The cost of one fit on ``dataset`` for the progress estimate (:func:`~multilabel_core._progress.fit_cost`)."""
    X = dataset.X
    stored = X.nnz if sp.issparse(X) else X.shape[0] * X.shape[1]
    return fit_cost(X.shape[0], dataset.Y.shape[1], stored)


def _count_more(bar, n: int) -> None:
    """Tell the progress bar of ``n`` fits more than planned (an extended grid's)."""
    if getattr(bar, "total", None) is not None:
        bar.work.grow(n)
        bar.total += n
        refresh = getattr(bar, "refresh", None)
        if refresh is not None:
            refresh()


def _parts(split):
    """``(train, test, unlabeled or None)`` of a protocol's split."""
    return (*split, None) if len(split) == 2 else tuple(split)


def _outcome(error: str | None = None) -> dict:
    """The outcome part of a record before anything is measured: ok, or failed with ``error``."""
    return {
        "status": "ok" if error is None else "failed",
        "error": error,
        "failed_stage": None if error is None else "fit",
        "metrics": {},
        "fit_time": None,
        "predict_time": None,
        "n_unlabeled": 0,
        "n_no_label_rows": None,
        "n_predicted_labels": None,
        "certificates": [],
        "converged": None,
        "label_correlation": None,
        "concept_graph": None,
        "threshold": None,
        "warnings": [],
    }


def evaluate_split(estimator, params, X, Y, train, test, unlabeled=None, *, preprocess=None,
                   constant_labels=DEFAULT_CONSTANT_LABELS) -> dict:
    """Fit a copy of ``estimator`` with ``params`` on rows ``train``; measure it on rows ``test``.

    One task of the runner.  Never raises for a failing method: the failure is recorded.

    Parameters
    ----------
    estimator : MultiLabelEstimator
        The method, unfitted.
    params : dict
        The hyper-parameters chosen for this split, over the estimator's own.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows' features (or a precomputed kernel).
    Y : ndarray of shape (n_samples, n_labels)
        All rows' labels.
    train : ndarray of int
        The training rows.
    test : ndarray of int
        The test rows.
    unlabeled : ndarray of int, optional
        Rows passed as ``X_unlabeled`` to an estimator that takes them.
    preprocess : str or None, default=None
        A scaler fitted on the rows ``train`` alone (:mod:`.preprocessing`).
    constant_labels : {"refuse", "predict_constant"}, default="refuse"
        How the labels that take one value in the rows ``train`` are handled
        (:mod:`.constant_labels`).

    Returns
    -------
    dict
        The outcome part of a record: ``status``, ``error``, ``failed_stage``, ``metrics``
        (every metric), ``fit_time``, ``predict_time``, ``n_unlabeled``, ``n_no_label_rows`` (test
        rows with no label predicted), ``n_predicted_labels`` (labels predicted over the test
        part), ``certificates``, ``converged``, ``label_correlation``, ``concept_graph``,
        ``threshold`` (the fitted threshold's name, :mod:`multilabel_core.thresholds`),
        ``warnings``.
    """
    outcome = _outcome()
    model = predictor = None
    with recording_warnings() as caught:
        try:
            model = type(estimator)(**{**estimator.get_params(deep=False), **params})
            X = prepared(model, X, train, preprocess)
            start = perf_counter()
            predictor, outcome["n_unlabeled"] = fit_model(model, X, Y, train, unlabeled, constant_labels)
            outcome["fit_time"] = perf_counter() - start
            start = perf_counter()
            X_test = rows_of(X, test, train, uses_precomputed_kernel(model))
            scores, predictions = predictor.decision_function(X_test), predictor.predict(X_test)
            outcome["predict_time"] = perf_counter() - start
            outcome["metrics"] = evaluate(Y[test], scores, predictions, check_metric_names(None))
            # A model that predicts no label scores 0 in every F-measure while its ranking measures
            # may look fine: counted here, so the report can say it.
            predicted = np.asarray(predictions) != 0
            outcome["n_no_label_rows"] = int(np.count_nonzero(~predicted.any(axis=1)))
            outcome["n_predicted_labels"] = int(np.count_nonzero(predicted))
        except Exception as exc:  # a failing method is recorded, the run goes on
            outcome.update(status="failed", error=f"{type(exc).__name__}: {exc}", failed_stage="fit", metrics={})
    outcome["warnings"] = describe_warnings(caught)
    outcome["certificates"] = _certificates(model)
    not_converged = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if outcome["certificates"] or not_converged:
        outcome["converged"] = not not_converged and all(c["converged"] for c in outcome["certificates"])
    outcome["label_correlation"] = _label_correlation(model, predictor)
    outcome["concept_graph"] = _concept_graph(model, predictor)
    outcome["threshold"] = _threshold(model, predictor)
    return outcome


def _threshold(model, predictor):
    """How the fitted model turned scores into labels: its threshold's ``describe()`` (e.g. ``"tuned_f1"``), or None."""
    threshold = getattr(model, "threshold_", None) if predictor is not None else None
    return None if threshold is None else threshold.describe()


def _in_data_labels(matrix, predictor, fill):
    """An L' x L' matrix of a model fitted on some labels, placed among all the data's labels
    (``fill`` for the labels predicted constant, which the model never saw)."""
    if not isinstance(predictor, PartialModel):
        return np.asarray(matrix)
    return embed_square(matrix, predictor.fitted, predictor.n_labels, fill)


def _label_correlation(model, predictor):
    """The fitted ``label_correlation_`` (JSON lists; null rows and columns for constant labels), or None."""
    correlation = getattr(model, "label_correlation_", None) if predictor is not None else None
    if correlation is None:
        return None
    return jsonable(_in_data_labels(np.asarray(correlation, dtype=np.float64), predictor, np.nan))


def _concept_graph(model, predictor):
    """``concept_graph_.as_dict()`` of a model that learns a concept network (duck-typed), JSON-safe, or None.

    For a model fitted on some labels only, ``statistic`` is null and ``adjacency`` 0 in the
    rows and columns of the labels predicted constant.
    """
    graph = getattr(model, "concept_graph_", None) if predictor is not None else None
    if graph is None:
        return None
    described = dict(graph.as_dict())
    described["statistic"] = _in_data_labels(np.asarray(described["statistic"], dtype=np.float64), predictor, np.nan)
    described["adjacency"] = _in_data_labels(np.asarray(described["adjacency"], dtype=np.int64), predictor, 0)
    return jsonable(described)


def _certificates(model) -> list[dict]:
    """``Certificate.as_dict()`` of each solve of the fitted model (one, or one per outer step)."""
    certificate = getattr(model, "certificate_", None) if model is not None else None
    if certificate is None:
        return []
    certificates = certificate if isinstance(certificate, (list, tuple)) else [certificate]
    return [jsonable(c.as_dict()) for c in certificates]
