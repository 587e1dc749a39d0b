"""Threads inside one fit: how many, and a map over independent labels that uses them.

Many of the methods solve one problem per label that shares nothing with the others once the
current state is fixed: binary relevance and BSVM, the W-step of PrML, the concept network's
local models.  The kernels of those problems (:mod:`multilabel_core.solvers._cd`,
:mod:`multilabel_core.solvers._smo`) release the GIL, so a pool of threads runs them side by
side in one process, sharing X and the kernel matrix instead of copying them to worker
processes.  Two rules keep this honest:

* **Results do not depend on the thread count.**  Each task is a whole label's solve, its random
  stream drawn before any task runs, and the results are gathered in label order; nothing is
  summed across threads in an order that depends on the schedule.  ``n_jobs=1`` and
  ``n_jobs=4`` give bitwise the same model (tests/test_parallel.py checks each threaded path).
* **Never more busy threads than cores.**  While the label threads run, BLAS is held to one
  thread (threadpoolctl), since the engines' own BLAS calls are small; and the default thread
  count is the *budget* the caller leaves: inside a task of the experiment runner or of
  :func:`~multilabel_core.model_selection.cross_validate`, ``cores // workers``
  (:func:`thread_budget`); elsewhere ``OMP_NUM_THREADS`` when it is set (the usual way to say how
  many threads a process may start, and what joblib sets in its worker processes), else every
  core this process may run on.

``n_jobs`` means the same on every estimator that has it: None is the budget above, a positive
int that many threads, -1 every core (-2 all but one, ...).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import attrs
import joblib
from threadpoolctl import ThreadpoolController

__all__ = ["WithinBudget", "n_jobs_field", "available_cores", "blas_controller", "blas_limited", "blas_threads", "cancelled", "effective_threads", "map_threads", "raise_if_cancelled", "thread_budget",
           "worker_threads"]

T = TypeVar("T")
R = TypeVar("R")

#: Seconds between the checks for Ctrl-C of a thread waiting for its label threads.
WAKE_SECONDS = 0.05

#: The cancellation event of the map_threads pool whose task this thread is running, if any.
_TASK = threading.local()

#: Threads a task may use when its estimator's ``n_jobs`` is None; None when no caller set one.
_BUDGET: contextvars.ContextVar[int | None] = contextvars.ContextVar("multilabel_core_thread_budget", default=None)


_CONTROLLER: ThreadpoolController | None = None


def blas_controller() -> ThreadpoolController:
    """Return one threadpoolctl controller for the process.

    Finding the loaded libraries scans the process's memory maps (milliseconds), too slow to
    repeat around every solve of a small problem.  Made on first use, once numpy's and scipy's
    BLAS are loaded (scipy.linalg is imported first); a BLAS library some other package loads
    later is not seen by it.

    Returns
    -------
    threadpoolctl.ThreadpoolController
        The process-wide controller, the same object at every call.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        import scipy.linalg  # noqa: F401  (loads scipy's own BLAS, which the solvers call)

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def blas_limited(threads: int):
    """Hold BLAS to ``threads`` threads within a ``with`` block (threadpoolctl; restored on exit).

    Parameters
    ----------
    threads : int
        The BLAS thread limit inside the block.

    Returns
    -------
    context manager
        threadpoolctl's limiter; entering it applies the limit, leaving it restores the previous
        thread counts.
    """
    return blas_controller().limit(limits=threads, user_api="blas")


def blas_threads() -> int:
    """Return the largest thread count of the BLAS libraries loaded in this process.

    Returns
    -------
    int
        The largest ``num_threads`` over the loaded BLAS libraries, 0 without one.
    """
    return max((lib.num_threads for lib in blas_controller().select(user_api="blas").lib_controllers), default=0)


def available_cores() -> int:
    """Count the cores this process may run on (CPU affinity and cgroup quotas counted, as joblib counts them).

    Returns
    -------
    int
        The number of usable cores, at least 1.
    """
    return max(1, int(joblib.cpu_count()))


@contextlib.contextmanager
def thread_budget(threads: int) -> Iterator[None]:
    """Make ``n_jobs=None`` mean ``threads`` threads within the block (a runner's worker: cores // workers).

    Budgets nest: the innermost applies.  The budget is a context variable, so it holds in the
    thread (and process) that set it, which is where the task's fit runs.

    Parameters
    ----------
    threads : int
        The budget, an int of at least 1.

    Yields
    ------
    None
        Control to the block, with the budget in force.

    Raises
    ------
    ValueError
        If ``threads`` is not an int of at least 1.
    """
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"a thread budget must be an int >= 1, got {threads!r}")
    token = _BUDGET.set(threads)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _environment_threads() -> int | None:
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    try:
        threads = int(value)
    except ValueError:
        return None
    return threads if threads >= 1 else None


def effective_threads(n_jobs: int | None, n_tasks: int | None = None) -> int:
    """Return the threads to run ``n_tasks`` independent tasks on, for an estimator's ``n_jobs``.

    Parameters
    ----------
    n_jobs : int or None
        None: the budget of the enclosing :func:`thread_budget`, else ``OMP_NUM_THREADS``, else
        :func:`available_cores` (capped at the available cores); a positive int: itself; a
        negative int: ``cores + 1 + n_jobs`` (-1 every core).  Zero, a bool or a non-integer is
        refused.
    n_tasks : int or None, default=None
        The number of tasks; the result is never more than it.  None: no such cap.

    Returns
    -------
    int
        The thread count, never more than ``n_tasks`` and never fewer than 1.

    Raises
    ------
    ValueError
        If ``n_jobs`` is not a nonzero int or None.
    """
    if n_jobs is None:
        budget = _BUDGET.get()
        if budget is None:
            budget = _environment_threads() or available_cores()
        threads = min(budget, available_cores())
    elif isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a nonzero int (-1 for all cores) or None, got {n_jobs!r}")
    elif n_jobs > 0:
        threads = n_jobs
    else:
        threads = available_cores() + 1 + n_jobs
    if n_tasks is not None:
        threads = min(threads, n_tasks)
    return max(1, threads)


def n_jobs_field():
    """Make an attrs field ``n_jobs`` (default None) checked by :func:`effective_threads`.

    What a solver with label threads declares.

    Returns
    -------
    attrs field
        The field definition, to assign to a class attribute ``n_jobs`` of an attrs class; a value
        :func:`effective_threads` refuses is a ValueError when the instance is made.
    """
    return attrs.field(default=None, validator=lambda instance, attribute, value: effective_threads(value))


#: The label-thread pools, one per thread count, made on first use and kept: starting threads for
#: every map costs about as much as the labels' own solves on small data (a new thread waits for the
#: GIL to announce itself; measured: benchmarks/RESULTS.md, "Timings behind code comments").
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="multilabel_core")
        return pool


def _forget_pools() -> None:
    # A forked child has the pools' objects but not their threads: it makes its own.
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def map_threads(function: Callable[[T], R], items: Iterable[T], n_jobs: int | None) -> list[R]:
    """Compute ``[function(item) for item in items]`` on up to :func:`effective_threads` threads.

    ``function`` should spend its time without the GIL (a Cython engine's ``nogil`` loop), or
    the threads only take turns.  The first exception raised (or Ctrl-C) is re-raised once the
    running tasks have stopped (:func:`cancelled`) and the queued ones are dropped.  BLAS is held
    to one thread while more than one thread runs (the caller's setting is restored after).

    The threads are a pool kept for the process (one per thread count), so a map costs no
    thread starts.  A map called from inside a task of another map (a label's solve that
    itself maps over something) runs in that task's thread: the outer map already uses the
    thread budget, and waiting on the same pool from its own workers could deadlock.

    Parameters
    ----------
    function : callable
        Called once per item, ``function(item)``.
    items : iterable
        The inputs; consumed into a list first.
    n_jobs : int or None
        The estimator's ``n_jobs``, turned into a thread count by :func:`effective_threads`
        (capped at the number of items).

    Returns
    -------
    list
        The results, in the order of ``items`` whatever the schedule.
    """
    items = list(items)
    threads = effective_threads(n_jobs, len(items))
    if threads == 1 or getattr(_TASK, "cancel", None) is not None:
        return [function(item) for item in items]
    cancel = threading.Event()
    results: list = [None] * len(items)
    failures: list[BaseException] = []
    begun, finished = [False] * len(items), [False] * len(items)
    reports: queue.SimpleQueue = queue.SimpleQueue()

    def task(index: int) -> None:
        # The map's state lives in these lists, which each task updates before it reports on
        # ``reports``: a Ctrl-C anywhere in the waiting below loses nothing (see _wait_until).
        begun[index] = True  # before the check: a task that begins after cancel.set() sees it
        try:
            if cancel.is_set():
                return  # queued when the map was cancelled: nobody reads its result
            _TASK.cancel = cancel
            try:
                results[index] = function(items[index])
            finally:
                _TASK.cancel = None
        except BaseException as error:
            failures.append(error)
        finally:
            finished[index] = True
            reports.put(index)

    futures = []
    with blas_limited(1):
        try:
            pool = _pool(threads)
            for index in range(len(items)):
                futures.append(pool.submit(task, index))
            _wait_until(lambda: bool(failures) or all(finished), reports)
            if failures:
                raise failures[0]
            return results
        except BaseException:
            # Ctrl-C reaches the main thread only: the running labels stop at their next
            # cancelled() check, and the queued ones never start.  The pool outlives this map,
            # so the tasks that began are waited for here, as a pool's shutdown would.
            cancel.set()
            for future in futures:
                future.cancel()
            _wait_until(lambda: all(done or not started for started, done in zip(begun, finished)), reports)
            raise


def _wait_until(condition: Callable[[], bool], reports: queue.SimpleQueue) -> None:
    """Wait until ``condition()`` holds, re-checking at every task's report and every ``WAKE_SECONDS``.

    Timed waits, not a blocking one: a signal sent to another thread than this one (a
    timer's, or the terminal's to any thread) is only handled once this thread runs Python
    again, so it must not sleep until a whole label is solved.  Only a SimpleQueue (its wait is
    one C lock) stands between the two sides, and nothing is counted here.  Waiting with
    ``concurrent.futures.wait`` hung: a Ctrl-C landing inside it left a lock of its waiter
    held, a finishing label thread blocked on it in ``Event.set``, and the map's clean-up
    waited for that thread for ever (a stress test, SIGINT at random moments into repeated
    maps: a hang after 270 interrupts; a CI run of tests/test_method_interrupt.py: PrBR did not
    stop within 120 s).  Counting the reports taken hung too, when Ctrl-C landed between a take
    and its count (after 45-80 interrupts).  This version: no hang in 3000.
    """
    while not condition():
        try:
            reports.get(timeout=WAKE_SECONDS)
        except queue.Empty:
            pass


def cancelled() -> bool:
    """Tell whether the :func:`map_threads` pool running this thread's task was cancelled.

    The Cython engines ask it where they check for Ctrl-C, so a label solving on a worker
    thread stops soon after the main thread is interrupted or another label fails.

    Returns
    -------
    bool
        True in a task of a cancelled map; False in a running map's task and outside any map.
    """
    event = getattr(_TASK, "cancel", None)
    return event is not None and event.is_set()


def raise_if_cancelled() -> None:
    """Stop a label's task whose map was cancelled (:func:`cancelled`) with KeyboardInterrupt.

    What an engine calls where it checks for Ctrl-C: the Cython engines every few thousand
    steps, the interior-point method at every Newton step.

    Raises
    ------
    KeyboardInterrupt
        When the map running this thread's task was cancelled.
    """
    if cancelled():
        raise KeyboardInterrupt("stopped: another label's solve failed or was interrupted")


def worker_threads(n_workers: int, cores: int | None = None) -> int:
    """Return the threads each of ``n_workers`` concurrent tasks may use: ``max(1, cores // n_workers)``.

    Parameters
    ----------
    n_workers : int
        The number of tasks running at once (values below 1 count as 1).
    cores : int or None, default=None
        The cores to share; None: :func:`available_cores`, so that ``n_workers`` x the result is
        at most the cores whenever ``n_workers`` is.

    Returns
    -------
    int
        Threads per task, at least 1.
    """
    cores = available_cores() if cores is None else cores
    return max(1, int(cores) // max(1, int(n_workers)))


class WithinBudget:
    """Run a task with at most ``threads`` threads, in whichever process runs it.

    Inside it, BLAS is held to ``threads`` (threadpoolctl; lowered only: a process already at
    fewer threads, by the caller's own limit or joblib's start-up setting of its workers, keeps
    them) and an estimator's ``n_jobs=None`` means ``threads`` (:func:`thread_budget`).  What the
    experiment runner and :func:`~multilabel_core.model_selection.cross_validate` wrap each task
    in, with ``threads = cores // workers``, so that workers x threads stays within the cores.
    The class is at module level so that the wrapped task pickles for loky and dask.

    Parameters
    ----------
    function : callable
        The task; calling the instance calls ``function(*args, **kwargs)`` within the budget and
        returns its result.
    threads : int
        The thread budget, at least 1.
    """

    def __init__(self, function: Callable[..., R], threads: int):
        self.function, self.threads = function, threads

    def __call__(self, *args, **kwargs) -> R:
        with thread_budget(self.threads):
            if blas_threads() <= self.threads:
                return self.function(*args, **kwargs)
            with blas_limited(self.threads):
                return self.function(*args, **kwargs)
